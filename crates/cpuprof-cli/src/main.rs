//! `cpuprof`: the command line. Holds the clap types and the I/O; everything else lives in
//! the library crates.
#![allow(clippy::print_stderr)]

mod args;
mod convert;
mod diff;
mod fold;
mod io;
mod run;
mod units;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match run::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A closed pipe (`cpuprof top … | head`) is not a failure.
            if err
                .chain()
                .any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
            {
                return ExitCode::SUCCESS;
            }
            if let Some(gate) = err.downcast_ref::<diff::GateTripped>() {
                eprintln!("cpuprof: {gate}");
                return ExitCode::from(3);
            }
            if let Some(usage) = err.downcast_ref::<run::UsageError>() {
                eprintln!("cpuprof: error: {usage}");
                return ExitCode::from(2);
            }
            eprintln!("cpuprof: error: {err:#}");
            ExitCode::from(1)
        }
    }
}

/// A warning about the input: on stderr, the run goes on.
pub(crate) fn warn(message: &str) {
    eprintln!("cpuprof: warning: {message}");
}
