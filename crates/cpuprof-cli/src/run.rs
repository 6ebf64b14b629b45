//! Dispatch: clap arguments → a request (`cpuprof_app`) → its answer, rendered → output.

use anyhow::Result;
use cpuprof_app::top::TopRequest;
use cpuprof_render::render_top;

use crate::args::{Command, OutputArgs, ReportFormatArg, TopArgs};
use crate::io::Output;
use cpuprof_app::UsageError;
use std::path::{Path, PathBuf};

/// Runs an analysis command (`record` and `mcp` run these; `main` runs them).
pub(crate) fn run(command: Command) -> Result<()> {
    match command {
        Command::Top(args) => run_top(&args),
        Command::Tree(args) => crate::calls::run_tree(&args),
        Command::Callers(args) => crate::calls::run_calls(&args, cpuprof_app::calls::Lists::Callers),
        Command::Callees(args) => crate::calls::run_calls(&args, cpuprof_app::calls::Lists::Callees),
        Command::Explain(args) => crate::calls::run_calls(&args, cpuprof_app::calls::Lists::Both),
        Command::Annotate(args) => crate::calls::run_annotate(&args),
        Command::Jit(args) => crate::calls::run_jit(&args),
        Command::Collapse(args) => crate::fold::run_collapse(&args),
        Command::Flamegraph(args) => crate::fold::run_flamegraph(&args),
        Command::Diff(args) => crate::diff::run_diff(&args),
        Command::Convert(args) => crate::convert::run_convert(&args),
        Command::Merge(args) => crate::convert::run_merge(&args),
        Command::Timeline(args) => crate::timeline::run_timeline(&args),
        Command::Blocks(args) => crate::timeline::run_blocks(&args),
        Command::Report(args) => crate::report::run_report(&args),
        Command::Record(_) | Command::Mcp(_) => {
            Err(UsageError("record and mcp run commands; they are not run by one".to_owned()).into())
        }
    }
}

/// The request `top`'s flags make.
pub(crate) fn top_request(args: &TopArgs) -> TopRequest {
    TopRequest {
        inputs: args.inputs.clone(),
        rows: args.rows.options(),
        by: args.by.into(),
        sort: args.sort.into(),
        weight: args.weight.into(),
        filter: args.filter.options(),
        window: args.window.options(),
        reading: args.reading.options(),
    }
}

pub(crate) fn run_top(args: &TopArgs) -> Result<()> {
    show_top(&top_request(args), &args.output)
}

/// Answers a `top` request and writes it as `shown` asks.
pub(crate) fn show_top(request: &TopRequest, shown: &OutputArgs) -> Result<()> {
    let inputs: Vec<&Path> = request.inputs.iter().map(PathBuf::as_path).collect();
    let to = shown.output.as_deref();
    if shown.format == ReportFormatArg::Brief {
        request.check(true)?;
        let output = Output::new(to, &inputs)?;
        let answer = request.brief()?;
        let terminal = crate::terminal::terminal(to, true, None);
        return output.write(cpuprof_render::render_brief(&answer.document(terminal)).as_bytes());
    }
    request.check(false)?;
    let format = shown.report_format()?;
    let output = Output::new(to, &inputs)?;
    let answer = request.execute()?;
    let cwd = crate::terminal::current_dir();
    let terminal = crate::terminal::terminal(to, shown.wide, cwd.as_deref());
    output.write(render_top(&answer.document(terminal), format).as_bytes())
}
