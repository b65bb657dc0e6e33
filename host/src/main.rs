//! The `toolhost` binary: parse the command line, run it, map the result to
//! an exit code. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser as _;
use toolhost::cli::{self, Cli};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let error = anyhow::Error::from(e).context("cannot start the async runtime");
            return ExitCode::from(cli::fail(&error));
        }
    };
    match runtime.block_on(cli::run(cli)) {
        Ok(ended) => ExitCode::from(ended.code()),
        Err(error) => ExitCode::from(cli::fail(&error)),
    }
}
