//! `cpuprof report`: the HTML page to explore a profile.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cpuprof_analysis::{blocks_only, report_data, ReportDataOptions, Weight};
use cpuprof_report::{render_report, ReportPage};

use crate::args::{ReportArgs, WeightArg};
use crate::input::{load_read, source_name, stack_filter, Loaded};
use crate::io::{is_dash, Output};
use crate::usage::UsageError;

/// Where a report of `input` goes by default: beside it, `NAME.report.html` (the input's name
/// without its profile extensions), never over it (the output refuses an input anyway).
pub(crate) fn default_report_path(input: &Path) -> Option<PathBuf> {
    if is_dash(input) {
        return None;
    }
    let name = input.file_name()?.to_string_lossy().into_owned();
    let mut stem = name.as_str();
    for ext in [".gz", ".cpuprofile", ".json", ".log", ".pb", ".prof", ".pprof", ".folded", ".txt"] {
        stem = stem.strip_suffix(ext).unwrap_or(stem);
    }
    let stem = if stem.is_empty() { "profile" } else { stem };
    Some(input.with_file_name(format!("{stem}.report.html")))
}

pub(crate) fn run_report(args: &ReportArgs) -> Result<()> {
    let path = match (&args.output, default_report_path(&args.input)) {
        (Some(path), _) => path.clone(),
        (None, Some(path)) => path,
        (None, None) if is_dash(&args.input) => {
            return Err(UsageError("a report of standard input needs -o FILE (or -o - for stdout)".to_owned()).into())
        }
        (None, None) => {
            return Err(UsageError(format!(
                "{}: no file name to name the report after: give -o FILE",
                args.input.display()
            ))
            .into())
        }
    };
    let filter = stack_filter(&args.filter)?;
    let min_ns = crate::units::nanoseconds(&args.min_block, true)
        .filter(|ns| *ns > 0)
        .ok_or_else(|| UsageError(format!("--min-block {}: expected a length of time such as 50ms", args.min_block)))?;
    let output = Output::new(Some(&path), &[args.input.as_path()])?;
    let loaded = load_read(&args.input, &args.reading, &args.filter, &args.window, false, true)?;
    let mut options = ReportDataOptions::default();
    options.weight = match args.weight {
        WeightArg::Time => Weight::Time,
        WeightArg::Samples => Weight::Samples,
    };
    options.filter = filter;
    write_report(loaded, &source_name(&args.input), &options, min_ns, output, &path)
}

/// The page of a profile read (`source` names it) with `options`, blocks from `min_ns`, written
/// to `output` (at `path`).
pub(crate) fn write_report(
    loaded: Loaded,
    source: &str,
    options: &ReportDataOptions,
    min_ns: i64,
    output: Output,
    path: &Path,
) -> Result<()> {
    let Loaded { profile, window } = loaded;
    // Two walks over the samples, side by side. Blocks need sample times: a profile without
    // them has none to show.
    let (data, blocks) = rayon::join(
        || report_data(&profile, options),
        || blocks_only(&profile, min_ns, Some(cpuprof_analysis::defaults::REPORT_BLOCKS)).ok(),
    );
    let data = data.map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    // Nothing counted: an empty profile, window, or filters that matched nothing (as `top` says).
    if data.buckets.iter().all(|b| b.weights.is_empty()) {
        crate::warn_empty(source, &profile, window.is_some());
    }
    let blocks = blocks.filter(|_| data.timed);
    let meta = crate::warnings::settled(&profile.meta);
    let page = ReportPage {
        source,
        meta: &meta,
        data: &data,
        blocks: blocks.as_ref(),
        window_from_ns: window.map(|w| w.from_ns),
    };
    let html = render_report(&page)?;
    output.write(html.as_bytes())?;
    if !is_dash(path) {
        crate::say(&format!("wrote {}", path.display()));
    }
    Ok(())
}
