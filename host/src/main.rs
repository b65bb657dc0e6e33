//! The `toolhost` binary: parse the command line, run it, map the result to
//! an exit code. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser as _;
use toolhost::cli::{self, Cli, exit};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(exit::ERROR);
        }
    };
    match runtime.block_on(cli::run(cli)) {
        Ok(ended) => ExitCode::from(ended.code()),
        Err(error) => {
            let code = exit::code_of_error(&error);
            if code != exit::OK {
                eprintln!("error: {error:#}");
            }
            ExitCode::from(code)
        }
    }
}
