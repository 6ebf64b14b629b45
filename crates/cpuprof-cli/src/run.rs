//! Dispatch: clap arguments → library options → pipeline → output.

use anyhow::Result;
use cpuprof_analysis::{top, GroupBy, TopOptions, Weight};
use cpuprof_render::{render_top, InputTotal, TopDocument};

use crate::args::{By, Command, ReportFormatArg, TopArgs, WeightArg};
use crate::input::{load, source_name, stack_filter, Loaded};
use crate::io::Output;
use crate::usage::UsageError;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Several inputs for `top`, each read (and cut to its window) on its own as `merge` reads
/// them, merged; with what it names them and each one's part.
fn load_merged(inputs: &[&Path], args: &TopArgs, options: &TopOptions) -> Result<(Loaded, String, Vec<InputTotal>)> {
    // The lowest index whose read failed: no input after it is read (none is needed), every one
    // before it is, so the error reported is the first bad input's in the inputs' order, as
    // `merge` reports it (a parallel collect into a Result keeps whichever failed first in time).
    let first_failed = AtomicUsize::new(usize::MAX);
    let said = crate::warnings::Said::current();
    // What each input's reading says is held, and said in the inputs' order once all are read.
    let read: Vec<Option<(Result<Loaded>, Vec<String>)>> = inputs
        .par_iter()
        .enumerate()
        .map(|(i, input)| {
            (i < first_failed.load(Ordering::Relaxed)).then(|| {
                let (read, held) = crate::warnings::within(&said, || {
                    crate::warnings::held(|| load(input, &args.reading, &args.filter, &args.window, false))
                });
                if read.is_err() {
                    first_failed.fetch_min(i, Ordering::Relaxed);
                }
                (read, held)
            })
        })
        .collect();
    // Up to the first that failed: which inputs after it were read depends on timing.
    let failed = first_failed.load(Ordering::Relaxed);
    let read: Vec<Option<Result<Loaded>>> = read
        .into_iter()
        .enumerate()
        .map(|(i, read)| {
            read.map(|(read, held)| {
                if i <= failed {
                    for message in held {
                        said.warn_now(&message);
                    }
                }
                read
            })
        })
        .collect();
    // An input left unread comes after a failed one, where the collect stops.
    let loaded: Vec<Loaded> = read.into_iter().flatten().collect::<Result<_>>()?;
    let totals: Vec<InputTotal> = inputs
        .iter()
        .zip(&loaded)
        .map(|(input, l)| {
            let report = top(&l.profile, options);
            InputTotal {
                source: source_name(input),
                total: report.total,
                samples: report.samples,
                duration_ns: l.profile.meta.duration_ns,
            }
        })
        .collect();
    let refs: Vec<&cpuprof_model::Profile> = loaded.iter().map(|l| &l.profile).collect();
    let merged = cpuprof_model::merge(&refs).map_err(|e| anyhow::anyhow!("cannot merge: {e}"))?;
    let window = loaded.iter().find_map(|l| l.window);
    Ok((Loaded { profile: merged, window }, format!("{} profiles, merged", inputs.len()), totals))
}

/// Runs an analysis command (`record` and `mcp` run these; `main` runs them).
pub(crate) fn run(command: Command) -> Result<()> {
    match command {
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
        Command::Report(args) => crate::report::run_report(&args),
        Command::Record(_) | Command::Mcp(_) => {
            Err(UsageError("record and mcp run commands; they are not run by one".to_owned()).into())
        }
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

pub(crate) fn run_top(args: &TopArgs) -> Result<()> {
    let options = top_options(args)?;
    let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    if inputs.iter().filter(|p| crate::io::is_dash(p)).count() > 1 {
        return Err(UsageError("stdin (-) can be read only once".to_owned()).into());
    }
    if inputs.len() > 1 && options.by == GroupBy::Line {
        return Err(UsageError(
            "--by line reads the lines one profile recorded, which a merge does not keep: give one input".to_owned(),
        )
        .into());
    }
    if args.output.format == ReportFormatArg::Brief {
        return run_brief(args, &options, &inputs);
    }
    let format = args.output.report_format()?;
    let output = Output::new(args.output.output.as_deref(), &inputs)?;
    let (Loaded { profile, window }, source, totals) = if let [input] = inputs.as_slice() {
        (load(input, &args.reading, &args.filter, &args.window, false)?, source_name(input), Vec::new())
    } else {
        load_merged(&inputs, args, &options)?
    };
    let report = top(&profile, &options);
    // Empty profiles: a warning and a valid, empty report (docs/conventions.md, "Empty profiles").
    if report.rows.is_empty() {
        crate::warn_empty(&source, &profile, window.is_some());
    }
    let mut profile = profile;
    crate::warnings::settle(&mut profile.meta);
    let cwd = crate::terminal::current_dir();
    let doc = TopDocument {
        source: &source,
        meta: &profile.meta,
        report: &report,
        by: options.by,
        limit: args.rows.limit(),
        window,
        inputs: &totals,
        terminal: crate::terminal::terminal(args.output.output.as_deref(), args.output.wide, cwd.as_deref()),
    };
    output.write(render_top(&doc, format).as_bytes())
}

/// `top --format brief`: one profile in at most 40 lines (see `render_brief`).
fn run_brief(args: &TopArgs, options: &TopOptions, inputs: &[&Path]) -> Result<()> {
    use cpuprof_analysis::defaults::{BRIEF_BLOCK_MIN_NS, BRIEF_FUNCTIONS, BRIEF_PATHS};
    let [input] = inputs else {
        return Err(UsageError("--format brief sums up one profile: give one input".to_owned()).into());
    };
    if options.by != GroupBy::Function {
        return Err(UsageError("--format brief lists functions: leave --by out".to_owned()).into());
    }
    let output = Output::new(args.output.output.as_deref(), inputs)?;
    let Loaded { mut profile, window } =
        crate::input::load_read(input, &args.reading, &args.filter, &args.window, false, true)?;
    let mut by_self = options.clone();
    by_self.sort = cpuprof_analysis::Metric::SelfTime;
    let (report, (paths, blocks)) = rayon::join(
        || top(&profile, &by_self),
        || {
            let paths = cpuprof_analysis::heaviest_paths(&profile, by_self.weight, &by_self.filter, BRIEF_PATHS);
            let timed = profile.samples.timeline().is_some();
            (paths, timed.then(|| cpuprof_analysis::blocks_only(&profile, BRIEF_BLOCK_MIN_NS, Some(1)).ok()).flatten())
        },
    );
    let source = source_name(input);
    if report.rows.is_empty() {
        crate::warn_empty(&source, &profile, window.is_some());
    }
    crate::warnings::settle(&mut profile.meta);
    let top_doc = TopDocument {
        source: &source,
        meta: &profile.meta,
        report: &report,
        by: GroupBy::Function,
        limit: Some(BRIEF_FUNCTIONS),
        window,
        inputs: &[],
        terminal: crate::terminal::terminal(args.output.output.as_deref(), true, None),
    };
    let doc = cpuprof_render::BriefDocument { top: top_doc, paths: &paths, blocks: blocks.as_ref() };
    output.write(cpuprof_render::render_brief(&doc).as_bytes())
}
