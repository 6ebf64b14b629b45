//! Dispatch: clap arguments → library options → pipeline → output.

use anyhow::Result;
use cpuprof_analysis::{top, GroupBy, TopOptions, Weight};
use cpuprof_render::{render_top, TopDocument};

use crate::args::{By, Cli, Command, TopArgs, WeightArg};
use crate::input::{load, source_name, stack_filter, Loaded};
use crate::io::Output;

pub(crate) fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Top(args) => run_top(&args),
        Command::Tree(args) => crate::calls::run_tree(&args),
        Command::Callers(args) => crate::calls::run_calls(&args, crate::calls::Lists::Callers),
        Command::Callees(args) => crate::calls::run_calls(&args, crate::calls::Lists::Callees),
        Command::Explain(args) => crate::calls::run_calls(&args, crate::calls::Lists::Both),
        Command::Collapse(args) => crate::fold::run_collapse(&args),
        Command::Flamegraph(args) => crate::fold::run_flamegraph(&args),
        Command::Diff(args) => crate::diff::run_diff(&args),
        Command::Convert(args) => crate::convert::run_convert(&args),
        Command::Merge(args) => crate::convert::run_merge(&args),
        Command::Timeline(args) => crate::timeline::run_timeline(&args),
        Command::Blocks(args) => crate::timeline::run_blocks(&args),
    }
}

fn top_options(args: &TopArgs) -> Result<TopOptions> {
    let by = match args.by {
        By::Function => GroupBy::Function,
        By::File => GroupBy::File,
        By::Package => GroupBy::Package,
        By::Line => GroupBy::Line,
        By::Category => GroupBy::Category,
    };
    let weight = match args.weight {
        WeightArg::Time => Weight::Time,
        WeightArg::Samples => Weight::Samples,
    };
    Ok(TopOptions::new(by, weight, args.sort.into(), stack_filter(&args.filter)?))
}

fn run_top(args: &TopArgs) -> Result<()> {
    let options = top_options(args)?;
    let output = Output::new(args.output.output.as_deref(), &[args.input.as_path()])?;
    let Loaded { profile, window } = load(&args.input, &args.reading, &args.filter, &args.window, false)?;
    let report = top(&profile, &options);
    let source = source_name(&args.input);
    // Empty profiles: a warning and a valid, empty report (README, "Empty profiles").
    if report.rows.is_empty() {
        crate::warn_empty(&source, &profile, window.is_some());
    }
    let cwd = crate::calls::current_dir();
    let doc = TopDocument {
        source: &source,
        meta: &profile.meta,
        report: &report,
        by: options.by,
        limit: args.rows.limit(),
        window,
        terminal: crate::calls::terminal(args.output.output.as_deref(), args.output.wide, cwd.as_deref()),
    };
    output.write(render_top(&doc, args.output.format.into()).as_bytes())
}
