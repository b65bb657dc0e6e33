//! The `toolhost` binary: parse the command line, run it, map the result to
//! an exit code. Everything else lives in the library.

use std::process::ExitCode;

use clap::Parser as _;
use toolhost::cli::{self, Cli};

fn main() -> ExitCode {
    // The helper that builds a native command's walls: first, before any
    // thread starts (a process with threads cannot enter a user namespace).
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == toolhost::sandbox::exec_helper::ARGUMENT)
    {
        let code = toolhost::sandbox::exec_helper::main();
        return ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX));
    }
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
