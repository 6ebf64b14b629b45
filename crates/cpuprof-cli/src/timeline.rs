//! `cpuprof timeline` and `cpuprof blocks`: the profile over time.

use anyhow::Result;
use cpuprof_analysis::{blocks_only, timeline, TimelineOptions, Weight};
use cpuprof_render::{render_blocks, render_timeline, BlocksDocument, Format, TimelineDocument};

use crate::args::{BlocksArgs, TimelineArgs, TimelineFormatArg, WeightArg};
use crate::input::{load_timed, source_name, Loaded};
use crate::io::Output;
use crate::usage::UsageError;

/// A duration option (`100ms`, `1s`; a bare number is seconds), or a usage error naming `flag`.
fn duration(flag: &str, text: &str) -> Result<i64> {
    crate::units::nanoseconds(text, true)
        .filter(|ns| *ns > 0)
        .ok_or_else(|| UsageError(format!("{flag} {text}: expected a length of time such as 100ms or 1.5s")).into())
}

pub(crate) fn run_timeline(args: &TimelineArgs) -> Result<()> {
    let bucket_ns = args.bucket.as_deref().map(|b| duration("--bucket", b)).transpose()?;
    let output = Output::new(args.output.as_deref(), &[args.input.as_path()])?;
    let Loaded { mut profile, window } = load_timed(&args.input, &args.reading, &args.window, "timeline")?;
    let mut options = TimelineOptions::default();
    options.bucket_ns = bucket_ns;
    options.buckets = args.buckets;
    options.weight = match args.weight {
        WeightArg::Time => Weight::Time,
        WeightArg::Samples => Weight::Samples,
    };
    let line = timeline(&profile, &options).map_err(|e| anyhow::anyhow!("{}: {e}", source_name(&args.input)))?;
    let source = source_name(&args.input);
    if profile.samples.is_empty() {
        crate::warn_empty(&source, &profile, window.is_some());
    }
    crate::warnings::settle(&mut profile.meta);
    let format = match args.format {
        TimelineFormatArg::Chart | TimelineFormatArg::Table => Format::Table,
        TimelineFormatArg::Json => crate::session::json_format(),
        TimelineFormatArg::Csv => Format::Csv,
        TimelineFormatArg::Markdown => Format::Markdown,
    };
    let doc = TimelineDocument {
        source: &source,
        meta: &profile.meta,
        timeline: &line,
        window,
        width: crate::terminal::terminal_width(args.output.as_deref()),
        bucket_table: args.format == TimelineFormatArg::Table,
    };
    output.write(render_timeline(&doc, format).as_bytes())
}

pub(crate) fn run_blocks(args: &BlocksArgs) -> Result<()> {
    let min_ns = crate::units::nanoseconds(&args.min, true)
        .ok_or_else(|| UsageError(format!("--min {}: expected a length of time such as 50ms or 0.2s", args.min)))?;
    let format = args.output.report_format()?;
    let output = Output::new(args.output.output.as_deref(), &[args.input.as_path()])?;
    let Loaded { mut profile, window } = load_timed(&args.input, &args.reading, &args.window, "event-loop blocks")?;
    let source = source_name(&args.input);
    // Nothing below reads the samples' values: the walk need not sum them.
    let found = blocks_only(&profile, min_ns, args.rows.limit()).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    if profile.samples.is_empty() {
        crate::warn_empty(&source, &profile, window.is_some());
    } else if found.idle_samples == 0 {
        crate::warn(&format!(
            "{source}: no idle samples: the event loop never waited in this {} (a batch job?), so each stretch of it is one block, not a stall",
            if window.is_some() { "window" } else { "recording" }
        ));
    }
    crate::warnings::settle(&mut profile.meta);
    let doc = BlocksDocument {
        source: &source,
        meta: &profile.meta,
        blocks: &found,
        window,
        limit: args.rows.limit(),
        width: crate::terminal::terminal_width(args.output.output.as_deref()),
    };
    output.write(render_blocks(&doc, format).as_bytes())
}
