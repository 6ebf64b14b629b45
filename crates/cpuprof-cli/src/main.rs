//! `cpuprof`: the command line. Holds the clap types and the I/O; everything else lives in
//! the library crates.
#![allow(clippy::print_stderr)]

mod args;
mod calls;
mod convert;
mod diff;
mod fold;
mod io;
mod mcp;
mod mcp_requests;
mod mcp_wire;
mod record;
mod report;
mod run;
mod session;
mod signals;
mod terminal;
mod timeline;
mod usage;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            // --help, --version, or no command: clap's help as it prints it.
            let _ = err.print();
            return ExitCode::from(err.exit_code() as u8);
        }
        Err(err) => {
            say(&format!("error: {}", usage::clap_message(&err)));
            return ExitCode::from(2);
        }
    };
    // Warnings go to stderr as they come (and into the run's report).
    cpuprof_app::said::on_warning(|message| say(&format!("warning: {message}")));
    // Messages name options by their flags (`-o` by its short one, as the commands say it).
    cpuprof_app::spell_options(|field| match field {
        "output" => "-o".to_owned(),
        field => cpuprof_app::flag(field),
    });
    // The recorder and the MCP server run the analysis commands; they are not among them.
    let result = match cli.command {
        args::Command::Record(args) => record::run_record(&args),
        args::Command::Mcp(args) => mcp::run_mcp(&args),
        command => run::run(command),
    };
    if let Some(status) = signals::exit_status() {
        return ExitCode::from(status);
    }
    match result {
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
                say(&gate.to_string());
                return ExitCode::from(3);
            }
            if let Some(record::CommandExit(status)) = err.downcast_ref::<record::CommandExit>() {
                return ExitCode::from(*status);
            }
            if let Some(usage) = err.downcast_ref::<cpuprof_app::UsageChoices>() {
                // One line per choice, each a `cpuprof: ` line of its own.
                say(&format!("error: {}", usage.head));
                for choice in &usage.choices {
                    say(choice);
                }
                return ExitCode::from(2);
            }
            if let Some(usage) = err.downcast_ref::<cpuprof_app::UsageError>() {
                say(&format!("error: {usage}"));
                return ExitCode::from(2);
            }
            say(&format!("error: {err:#}"));
            ExitCode::from(1)
        }
    }
}

/// Every line cpuprof writes to stderr: `cpuprof: ` and the message on one line, with what it
/// quotes from the input escaped as the table shows names (newlines, other control characters,
/// bidi and invisible characters), so that no name can start a line of its own (a CI log's
/// `::error` command) or act on the terminal.
pub(crate) fn say(message: &str) {
    eprintln!("cpuprof: {}", cpuprof_render::text::visible(message));
}
