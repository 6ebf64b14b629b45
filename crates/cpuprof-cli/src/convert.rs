//! `cpuprof convert` and `cpuprof merge`: the flags mapped to a `ConvertRequest` or a
//! `MergeRequest` (`cpuprof_app::convert`), the profile written.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cpuprof_app::convert::{ConvertRequest, MergeRequest, Target, TargetFormat as Format};

use crate::args::{ConvertArgs, MergeArgs, TargetArgs, TargetFormat};
use crate::io::Output;

/// The target the flags name.
fn target(args: &TargetArgs) -> Target {
    Target {
        output: args.output.clone(),
        output_format: args.output_format.map(|f| match f {
            TargetFormat::Pprof => Format::Pprof,
            TargetFormat::Cpuprofile => Format::Cpuprofile,
            TargetFormat::Folded => Format::Folded,
        }),
        uncompressed: args.uncompressed,
    }
}

pub(crate) fn run_convert(args: &ConvertArgs) -> Result<()> {
    let request = ConvertRequest {
        input: args.input.clone(),
        target: target(&args.target),
        window: args.window.options(),
        reading: args.reading.options(),
    };
    request.check()?;
    let output = Output::new(Some(&args.target.output), &[args.input.as_path()])?;
    output.write(&request.execute()?)
}

pub(crate) fn run_merge(args: &MergeArgs) -> Result<()> {
    let request = MergeRequest {
        inputs: args.inputs.clone(),
        target: target(&args.target),
        window: args.window.options(),
        reading: args.reading.options(),
    };
    request.check()?;
    let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    let output = Output::new(Some(&args.target.output), &inputs)?;
    output.write(&request.execute()?)
}
