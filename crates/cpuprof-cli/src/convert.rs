//! `cpuprof convert` and `cpuprof merge`: profiles rewritten in another format.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cpuprof_analysis::{fold, FoldOptions, GroupBy, StackFilter, Weight};
use cpuprof_model::Profile;
use cpuprof_render::{gzip, render_collapsed, render_cpuprofile, render_pprof};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::args::{ConvertArgs, MergeArgs, TargetArgs, TargetFormat};
use crate::input::{cut_to_window, window_bounds, Reader};
use crate::io::{is_dash, Output};
use crate::usage::UsageError;

pub(crate) fn run_convert(args: &ConvertArgs) -> Result<()> {
    let target = target_format(&args.target)?;
    let output = Output::new(Some(&args.target.output), &[args.input.as_path()])?;
    let bounds = window_bounds(&args.window)?;
    // A .cpuprofile keeps the sample order, for DevTools' timeline.
    let timeline = target == TargetFormat::Cpuprofile;
    let mut profile = Reader::new(&args.reading)?.load(&args.input, timeline, bounds.as_ref())?;
    cut_to_window(&mut profile, bounds.as_ref(), &args.input)?;
    // Empty profiles: a warning and a valid profile without samples (README, "Empty profiles").
    if profile.samples.is_empty() {
        crate::warn(&format!("{}: no samples: the output holds none", crate::input::source_name(&args.input)));
    }
    output.write(&encode(&profile, target, &args.target)?)
}

pub(crate) fn run_merge(args: &MergeArgs) -> Result<()> {
    let target = target_format(&args.target)?;
    let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    if inputs.iter().filter(|p| is_dash(p)).count() > 1 {
        return Err(UsageError("stdin (-) can be read only once".to_owned()).into());
    }
    let output = Output::new(Some(&args.target.output), &inputs)?;
    // A bar on a terminal when there is enough to wait for.
    let bar = (inputs.len() >= 8 && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
        crate::io::progress(
            ProgressBar::new(inputs.len() as u64).with_style(
                ProgressStyle::with_template("merging {wide_bar} {pos}/{len} profiles")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
        )
    });
    let reader = Reader::new(&args.reading)?;
    let bounds = window_bounds(&args.window)?;
    let bounds = bounds.as_ref();
    let profiles: Vec<Profile> = inputs
        .par_iter()
        .map(|path| {
            // Each input's window is taken on its own recording.
            let profile = reader.load(path, false, bounds).and_then(|mut profile| {
                cut_to_window(&mut profile, bounds, path)?;
                Ok(profile)
            });
            if let Some(bar) = &bar {
                bar.inc(1);
            }
            profile
        })
        .collect::<Result<_>>()?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let formats: std::collections::BTreeSet<&str> = profiles.iter().map(|p| p.meta.format.as_str()).collect();
    if formats.len() > 1 {
        let list = formats.into_iter().collect::<Vec<_>>().join(", ");
        crate::warn(&format!("merging profiles of different formats ({list}): their weights are added as they are"));
    }
    let refs: Vec<&Profile> = profiles.iter().collect();
    let merged = cpuprof_model::merge(&refs).map_err(|e| anyhow::anyhow!("cannot merge: {e}"))?;
    output.write(&encode(&merged, target, &args.target)?)
}

/// The format from `--output-format` or the output's extension.
fn target_format(target: &TargetArgs) -> Result<TargetFormat> {
    if let Some(format) = target.output_format {
        return Ok(format);
    }
    let name = target.output.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let by_extension = match Path::new(name).extension().and_then(|e| e.to_str()) {
        Some("pb" | "pprof" | "prof" | "proto") => Some(TargetFormat::Pprof),
        Some("cpuprofile") => Some(TargetFormat::Cpuprofile),
        Some("folded" | "collapsed" | "txt") => Some(TargetFormat::Folded),
        _ => None,
    };
    by_extension.ok_or_else(|| {
        let message = if is_dash(&target.output) {
            "-o -: say which format to write with --output-format pprof|cpuprofile|folded".to_owned()
        } else {
            format!(
                "-o {}: cannot tell the format from the name (.pb.gz, .pb, .pprof: pprof; .cpuprofile; .folded, .txt: folded stacks); use --output-format",
                target.output.display()
            )
        };
        UsageError(message).into()
    })
}

fn encode(profile: &Profile, target: TargetFormat, args: &TargetArgs) -> Result<Vec<u8>> {
    let text = match target {
        TargetFormat::Pprof => return Ok(render_pprof(profile, !args.uncompressed)),
        TargetFormat::Cpuprofile => {
            let written = render_cpuprofile(profile).map_err(|e| anyhow::anyhow!("cannot write a .cpuprofile: {e}"))?;
            for note in &written.notes {
                crate::warn(note);
            }
            written.json
        }
        TargetFormat::Folded => {
            // Everything, idle included, as sample counts: what readers of folded stacks take
            // the numbers for (`cpuprof collapse` writes time by default).
            let filter = StackFilter { include_idle: true, ..StackFilter::default() };
            let mut options = FoldOptions::new(GroupBy::Function, Weight::Samples, filter);
            options.read_back = true;
            let folded = fold(profile, &options);
            render_collapsed(&folded).into_bytes()
        }
    };
    Ok(if args.output.to_string_lossy().ends_with(".gz") && !args.uncompressed { gzip(&text) } else { text })
}
