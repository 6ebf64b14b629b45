//! `cpuprof timeline` and `cpuprof blocks`: the profile over time.

use anyhow::Result;
use cpuprof_app::timeline::{BlocksRequest, TimelineRequest};
use cpuprof_render::{render_blocks, render_timeline, Format};

use crate::args::{BlocksArgs, TimelineArgs, TimelineFormatArg};
use crate::io::Output;

/// The request `timeline`'s flags make.
pub(crate) fn timeline_request(args: &TimelineArgs) -> TimelineRequest {
    TimelineRequest {
        input: args.input.clone(),
        bucket: args.bucket.clone(),
        buckets: args.buckets,
        weight: args.weight.into(),
        window: args.window.options(),
        reading: args.reading.options(),
    }
}

/// The request `blocks`' flags make.
pub(crate) fn blocks_request(args: &BlocksArgs) -> BlocksRequest {
    BlocksRequest {
        input: args.input.clone(),
        min: args.min.clone(),
        rows: args.rows.options(),
        window: args.window.options(),
        reading: args.reading.options(),
    }
}

pub(crate) fn run_timeline(args: &TimelineArgs) -> Result<()> {
    let request = timeline_request(args);
    request.check()?;
    let format = match args.format {
        TimelineFormatArg::Chart | TimelineFormatArg::Table => Format::Table,
        TimelineFormatArg::Json => Format::Json,
        TimelineFormatArg::Csv => Format::Csv,
        TimelineFormatArg::Markdown => Format::Markdown,
    };
    let output = Output::new(args.output.as_deref(), &[args.input.as_path()])?;
    let answer = request.execute()?;
    let width = crate::terminal::terminal_width(args.output.as_deref());
    let doc = answer.document(width, args.format == TimelineFormatArg::Table);
    output.write(render_timeline(&doc, format).as_bytes())
}

pub(crate) fn run_blocks(args: &BlocksArgs) -> Result<()> {
    let request = blocks_request(args);
    request.check()?;
    let format = args.output.report_format()?;
    let output = Output::new(args.output.output.as_deref(), &[args.input.as_path()])?;
    let answer = request.execute()?;
    let width = crate::terminal::terminal_width(args.output.output.as_deref());
    output.write(render_blocks(&answer.document(width), format).as_bytes())
}
