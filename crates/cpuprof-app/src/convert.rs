//! `convert` and `merge`: profiles rewritten in another format.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::Result;
use cpuprof_analysis::{fold, FoldOptions, GroupBy, StackFilter, Weight};
use cpuprof_model::{MergeColumns, Merger, Meta, Profile};
use cpuprof_render::{gzip, render_collapsed, render_cpuprofile, render_pprof};
use indicatif::{ProgressBar, ProgressStyle};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::input::{cut_to_window, window_bounds, Reader};
use crate::read::is_dash;
use crate::{spelled, ReadOptions, UsageError, WindowOptions};

/// What `convert` and `merge` write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetFormat {
    /// pprof profile.proto.
    Pprof,
    /// V8 .cpuprofile JSON (DevTools, speedscope).
    Cpuprofile,
    /// Folded stacks, as `collapse` writes them.
    Folded,
}

/// Where a rewritten profile goes and in what format.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct Target {
    /// Where to write (its extension names the format unless output_format does)
    pub output: PathBuf,
    /// The format to write (default: from the output's extension)
    #[serde(default)]
    pub output_format: Option<TargetFormat>,
    /// Write plain bytes even where the format or name would be gzipped
    #[serde(default)]
    pub uncompressed: bool,
}

impl Target {
    /// The format from `output_format` or the output's extension.
    pub fn format(&self) -> Result<TargetFormat> {
        if let Some(format) = self.output_format {
            return Ok(format);
        }
        let name = self.output.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        let by_extension = match Path::new(name).extension().and_then(|e| e.to_str()) {
            Some("pb" | "pprof" | "prof" | "proto") => Some(TargetFormat::Pprof),
            Some("cpuprofile") => Some(TargetFormat::Cpuprofile),
            Some("folded" | "collapsed" | "txt") => Some(TargetFormat::Folded),
            _ => None,
        };
        by_extension.ok_or_else(|| {
            let (output, format) = (spelled("output"), spelled("output_format"));
            let message = if is_dash(&self.output) {
                format!("{output} -: say which format to write with {format} pprof|cpuprofile|folded")
            } else {
                format!(
                    "{output} {}: cannot tell the format from the name (.pb.gz, .pb, .pprof: pprof; .cpuprofile; .folded, .txt: folded stacks); use {format}",
                    self.output.display()
                )
            };
            UsageError(message).into()
        })
    }
}

/// `convert`: one profile rewritten.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ConvertRequest {
    /// The profile to read
    pub input: PathBuf,
    #[serde(flatten)]
    pub target: Target,
    #[serde(flatten)]
    pub window: WindowOptions,
    #[serde(flatten)]
    pub reading: ReadOptions,
}

impl ConvertRequest {
    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        self.target.format()?;
        self.window.check()?;
        self.reading.check()
    }

    /// The profile, rewritten as the target says.
    pub fn execute(&self) -> Result<Vec<u8>> {
        self.check()?;
        let target = self.target.format()?;
        let bounds = window_bounds(&self.window)?;
        // A .cpuprofile keeps the sample order, for DevTools' timeline.
        let timeline = target == TargetFormat::Cpuprofile;
        let mut profile = Reader::new(&self.reading)?.load(&self.input, timeline, bounds.as_ref())?;
        cut_to_window(&mut profile, bounds.as_ref(), &self.input)?;
        // Empty profiles: a warning and a valid profile without samples (docs/conventions.md, "Empty profiles").
        if profile.samples.is_empty() {
            crate::warn(&format!("{}: no samples: the output holds none", crate::input::source_name(&self.input)));
        }
        encode(&profile, target, &self.target)
    }
}

/// `merge`: several profiles rewritten as one.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct MergeRequest {
    /// The profiles to read
    #[schemars(length(min = 1))]
    pub inputs: Vec<PathBuf>,
    #[serde(flatten)]
    pub target: Target,
    #[serde(flatten)]
    pub window: WindowOptions,
    #[serde(flatten)]
    pub reading: ReadOptions,
}

impl MergeRequest {
    /// Checks the request (usage errors, before anything is read).
    pub fn check(&self) -> Result<()> {
        self.target.format()?;
        if self.inputs.iter().filter(|p| is_dash(p)).count() > 1 {
            return Err(UsageError("stdin (-) can be read only once".to_owned()).into());
        }
        self.window.check()?;
        self.reading.check()
    }

    /// The profiles merged, rewritten as the target says.
    pub fn execute(&self) -> Result<Vec<u8>> {
        self.check()?;
        let target = self.target.format()?;
        let inputs: Vec<&Path> = self.inputs.iter().map(PathBuf::as_path).collect();
        let merged = merged(&inputs, &self.reading, &self.window)?;
        encode(&merged, target, &self.target)
    }
}

/// The profiles `inputs` read (each cut to `window` on its own recording) and merged into one.
pub fn merged(inputs: &[&Path], reading: &ReadOptions, window: &WindowOptions) -> Result<Profile> {
    // A bar on a terminal when there is enough to wait for.
    let bar = (inputs.len() >= 8 && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
        crate::read::progress(
            ProgressBar::new(inputs.len() as u64).with_style(
                ProgressStyle::with_template("merging {msg}{wide_bar} {pos}/{len} profiles")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
        )
    });
    let reader = Reader::new(reading)?;
    let bounds = window_bounds(window)?;
    let bounds = bounds.as_ref();
    let load = |path: &Path| {
        // Each input's window is taken on its own recording.
        let mut profile = reader.load(path, false, bounds)?;
        cut_to_window(&mut profile, bounds, path)?;
        Ok(profile)
    };
    let mut read = read_merging(inputs, |_, path| load(path), bar.as_ref(), None)?;
    if read.merger.is_none() {
        // An input lacked a column the first had: read them all again, merged with the
        // columns every one has (inputs that cannot be read twice were kept).
        if let Some(bar) = &bar {
            bar.set_message("again, with the columns every input has: ");
            bar.reset();
        }
        reader.hush();
        let kept = Mutex::new(std::mem::take(&mut read.kept));
        let again = |index: usize, path: &Path| {
            let kept = kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&index);
            kept.map_or_else(|| load(path), Ok)
        };
        read = read_merging(inputs, again, bar.as_ref(), Some(read.every))?;
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let formats: std::collections::BTreeSet<&str> = read.metas.iter().map(|m| m.format.as_str()).collect();
    if formats.len() > 1 {
        let list = formats.into_iter().collect::<Vec<_>>().join(", ");
        crate::warn(&format!("merging profiles of different formats ({list}): their weights are added as they are"));
    }
    let metas: Vec<&Meta> = read.metas.iter().collect();
    match read.merger {
        Some(merger) => merger.finish(&metas).map_err(|e| anyhow::anyhow!("cannot merge: {e}")),
        None => anyhow::bail!("cannot merge: no input was read"),
    }
}

/// What [`read_merging`] gives: the inputs' metadata, in order, and their merge.
struct MergeRead {
    metas: Vec<Meta>,
    /// The columns every input has.
    every: MergeColumns,
    /// The merge of them all; `None` when an input was unlike the first (see [`Merger`]), so
    /// that the inputs must be merged again with the columns `every` one has.
    merger: Option<Merger>,
    /// The inputs that cannot be read twice (stdin, pipes: not regular files), by index, for
    /// when the merge must be done again.
    kept: BTreeMap<usize, Profile>,
}

/// Reads `inputs` with `load` on the pool's threads, each taking the next input not taken yet,
/// and merges them in input order as they come, on whichever thread finds the next one ready:
/// the merge is done about when the last input is read, instead of starting then, and only the
/// inputs waiting for their turn are held, not all of them. The merge has the first input's
/// columns, or with `columns` those every input has (known from an earlier pass). After an
/// input fails no other is started, and the first failing input's error is returned.
fn read_merging(
    inputs: &[&Path],
    load: impl Fn(usize, &Path) -> Result<Profile> + Sync,
    bar: Option<&ProgressBar>,
    columns: Option<MergeColumns>,
) -> Result<MergeRead> {
    /// What is merged so far, held by the thread whose turn it is to merge.
    struct Merged {
        read: MergeRead,
        unlike: bool,
        error: Option<anyhow::Error>,
    }
    let next = AtomicUsize::new(0);
    // The lowest index whose read failed: the inputs after it are not read, every one before
    // it is (the merge must reach the error, not stop at an input left unread).
    let first_failed = AtomicUsize::new(usize::MAX);
    // Inputs read and not merged yet, by index, each with what its reading said (held, and
    // said when it is merged: in the inputs' order).
    let waiting: Mutex<BTreeMap<usize, crate::said::Held<Result<Profile>>>> = Mutex::default();
    let said = crate::said::Said::current();
    let empty = MergeRead { metas: Vec::new(), every: MergeColumns::ALL, merger: None, kept: BTreeMap::new() };
    let so_far = Mutex::new(Merged { read: empty, unlike: false, error: None });
    let waiting_now = || waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Merges every input that is next in order, unless another thread is doing so. Whoever
    // holds the turn looks again after giving it up: an input put down while it held it, by a
    // thread that found the turn taken, is merged all the same.
    let merge_ready = || loop {
        let Ok(mut turn) = so_far.try_lock() else { return };
        while turn.error.is_none() {
            let index = turn.read.metas.len();
            let Some((read, held)) = waiting_now().remove(&index) else { break };
            for message in held {
                said.warn_now(&message);
            }
            match read {
                Ok(profile) => {
                    let Merged { read, unlike, error } = &mut *turn;
                    read.every = read.every.and(MergeColumns::of(&profile));
                    // Once an input is unlike the first, the merge must be done again with the
                    // columns of all: the merger is of no more use.
                    if !*unlike {
                        let merger = read.merger.get_or_insert_with(|| match columns {
                            Some(every) => Merger::with_columns_of_all(&profile, every),
                            None => Merger::new(&profile),
                        });
                        if merger.add(&profile).is_err() {
                            (*unlike, read.merger) = (true, None);
                            if columns.is_some() {
                                let name = crate::input::source_name(inputs[index]);
                                *error = Some(anyhow::anyhow!("{name}: changed while it was merged; merge again"));
                                first_failed.fetch_min(index, Ordering::Relaxed);
                            }
                        }
                    }
                    if columns.is_none() && !regular_file(inputs[index]) {
                        read.metas.push(profile.meta.clone());
                        read.kept.insert(index, profile);
                    } else {
                        read.metas.push(profile.meta);
                    }
                }
                Err(e) => turn.error = Some(e),
            }
        }
        let (done, stopped) = (turn.read.metas.len(), turn.error.is_some());
        drop(turn);
        if stopped || !waiting_now().contains_key(&done) {
            return;
        }
    };
    rayon::scope(|scope| {
        for _ in 0..rayon::current_num_threads().min(inputs.len()) {
            scope.spawn(|_| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = inputs.get(i).filter(|_| i < first_failed.load(Ordering::Relaxed)) else { break };
                let (read, held) = crate::said::held(|| load(i, path));
                if read.is_err() {
                    first_failed.fetch_min(i, Ordering::Relaxed);
                }
                if let Some(bar) = bar {
                    bar.inc(1);
                }
                waiting_now().insert(i, (read, held));
                merge_ready();
            });
        }
    });
    let so_far = so_far.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    debug_assert!(so_far.error.is_some() || so_far.read.metas.len() == inputs.len(), "an input was left unmerged");
    match so_far.error {
        Some(e) => Err(e),
        None => Ok(so_far.read),
    }
}

/// Whether `path` is a regular file, which can be read again (stdin, pipes and FIFOs cannot).
fn regular_file(path: &Path) -> bool {
    !is_dash(path) && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

fn encode(profile: &Profile, target: TargetFormat, args: &Target) -> Result<Vec<u8>> {
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
