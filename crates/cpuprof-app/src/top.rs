//! `top`: functions (files, packages, lines, categories) ranked by time; and its brief form,
//! the one-screen summary an agent starts from.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use cpuprof_analysis::{top, Blocks, GroupBy, HotPath, Metric, TopOptions, TopReport, Weight, Window};
use cpuprof_model::Meta;
use cpuprof_render::{BriefDocument, InputTotal, Terminal, TopDocument};
use rayon::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::input::{load, load_read, source_name, stack_filter, Loaded};
use crate::usage::UsageError;
use crate::{spelled, FilterOptions, ReadOptions, WindowOptions};

/// How many rows a report shows.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Rows {
    /// Show the N first rows (at least 1; default 20)
    #[schemars(range(min = 1))]
    pub limit: u64,
    /// Show every row (overrides limit)
    pub all: bool,
}

impl Default for Rows {
    fn default() -> Self {
        Rows { limit: cpuprof_analysis::defaults::ROWS, all: false }
    }
}

impl Rows {
    /// The number of rows to show, `None` for all.
    pub fn limit(&self) -> Option<usize> {
        if self.all {
            None
        } else {
            usize::try_from(self.limit).ok()
        }
    }

    /// A usage error for a limit of none.
    pub fn check(&self) -> Result<()> {
        if self.limit == 0 {
            return Err(UsageError(format!("{} 0: expected at least 1 row", spelled("limit"))).into());
        }
        Ok(())
    }
}

/// `top`: what is hot.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct TopRequest {
    /// Profiles to read (.cpuprofile, tick log, Chrome trace, pprof, folded stacks, perf script…;
    /// gzip is fine); several are merged, each one's total shown
    #[schemars(length(min = 1))]
    pub inputs: Vec<PathBuf>,
    #[serde(flatten)]
    pub rows: Rows,
    /// What a row stands for
    #[serde(default)]
    pub by: GroupBy,
    /// Rank by self time (on top of the stack) or total time (anywhere in the stack)
    #[serde(default)]
    pub sort: Metric,
    /// What a sample weighs: its duration (ns), or 1
    #[serde(default)]
    pub weight: Weight,
    #[serde(flatten)]
    pub filter: FilterOptions,
    #[serde(flatten)]
    pub window: WindowOptions,
    #[serde(flatten)]
    pub reading: ReadOptions,
}

/// `top`'s answer: the ranked rows and what they were read from.
pub struct TopAnswer {
    /// The input as named, or what several merged are called.
    pub source: String,
    /// The (merged) profile's facts, with the run's warnings.
    pub meta: Meta,
    pub report: TopReport,
    pub by: GroupBy,
    pub limit: Option<usize>,
    pub window: Option<Window>,
    /// Each input's part, when several were merged.
    pub inputs: Vec<InputTotal>,
}

impl TopAnswer {
    /// The report to render, on `terminal`.
    pub fn document<'a>(&'a self, terminal: Terminal<'a>) -> TopDocument<'a> {
        TopDocument {
            source: &self.source,
            meta: &self.meta,
            report: &self.report,
            by: self.by,
            limit: self.limit,
            window: self.window,
            inputs: &self.inputs,
            terminal,
        }
    }
}

impl TopRequest {
    /// The request for `inputs` with every option as given on no command line.
    pub fn new(inputs: Vec<PathBuf>) -> TopRequest {
        TopRequest {
            inputs,
            rows: Rows::default(),
            by: GroupBy::default(),
            sort: Metric::default(),
            weight: Weight::default(),
            filter: FilterOptions::default(),
            window: WindowOptions::default(),
            reading: ReadOptions::default(),
        }
    }

    fn options(&self) -> Result<TopOptions> {
        self.rows.check()?;
        Ok(TopOptions::new(self.by, self.weight, self.sort, stack_filter(&self.filter)?))
    }

    /// Usage errors (before anything is read or an output is claimed); `brief`: of the brief form.
    pub fn check(&self, brief: bool) -> Result<()> {
        let options = self.options()?;
        let inputs = self.paths()?;
        if brief {
            if inputs.len() != 1 {
                let format = spelled("format");
                return Err(UsageError(format!("{format} brief sums up one profile: give one input")).into());
            }
            if options.by != GroupBy::Function {
                let (format, by) = (spelled("format"), spelled("by"));
                return Err(UsageError(format!("{format} brief lists functions: leave {by} out")).into());
            }
        } else if inputs.len() > 1 && options.by == GroupBy::Line {
            return Err(UsageError(format!(
                "{} line reads the lines one profile recorded, which a merge does not keep: give one input",
                spelled("by")
            ))
            .into());
        }
        self.filter.check()?;
        self.window.check()?;
        self.reading.check()
    }

    fn paths(&self) -> Result<Vec<&Path>> {
        let inputs: Vec<&Path> = self.inputs.iter().map(PathBuf::as_path).collect();
        if inputs.is_empty() {
            return Err(UsageError(format!("{}: give at least one profile", spelled("inputs"))).into());
        }
        if inputs.iter().filter(|p| crate::read::is_dash(p)).count() > 1 {
            return Err(UsageError("stdin (-) can be read only once".to_owned()).into());
        }
        Ok(inputs)
    }

    /// Answers the request.
    pub fn execute(&self) -> Result<TopAnswer> {
        self.check(false)?;
        let options = self.options()?;
        let inputs = self.paths()?;
        // Rows by line read tick logs' frames at their lines.
        let mut reading = self.reading.clone();
        reading.frame_lines = self.by == GroupBy::Line;
        let (Loaded { profile, window }, source, totals) = if let [input] = inputs.as_slice() {
            (load(input, &reading, &self.filter, &self.window, false)?, source_name(input), Vec::new())
        } else {
            self.load_merged(&inputs, &options)?
        };
        let report = top(&profile, &options);
        // Empty profiles: a warning and a valid, empty report (docs/conventions.md, "Empty profiles").
        if report.rows.is_empty() {
            crate::warn_empty(&source, &profile, window.is_some());
        }
        Ok(TopAnswer {
            source,
            meta: crate::said::settled(&profile.meta),
            report,
            by: options.by,
            limit: self.rows.limit(),
            window,
            inputs: totals,
        })
    }

    /// Several inputs, each read (and cut to its window) on its own as `merge` reads them,
    /// merged; with what it names them and each one's part.
    fn load_merged(&self, inputs: &[&Path], options: &TopOptions) -> Result<(Loaded, String, Vec<InputTotal>)> {
        // The lowest index whose read failed: no input after it is read (none is needed), every
        // one before it is, so the error reported is the first bad input's in the inputs' order,
        // as `merge` reports it (a parallel collect into a Result keeps whichever failed first
        // in time).
        let first_failed = AtomicUsize::new(usize::MAX);
        let said = crate::said::Said::current();
        // What each input's reading says is held, and said in the inputs' order once all are read.
        let read: Vec<Option<(Result<Loaded>, Vec<String>)>> = inputs
            .par_iter()
            .enumerate()
            .map(|(i, input)| {
                (i < first_failed.load(Ordering::Relaxed)).then(|| {
                    let (read, held) = crate::said::within(&said, || {
                        crate::said::held(|| load(input, &self.reading, &self.filter, &self.window, false))
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

    /// The brief form: one profile in at most 40 lines (see `render_brief`).
    pub fn brief(&self) -> Result<BriefAnswer> {
        use cpuprof_analysis::defaults::{BRIEF_BLOCK_MIN_NS, BRIEF_FUNCTIONS, BRIEF_PATHS};
        self.check(true)?;
        let options = self.options()?;
        let inputs = self.paths()?;
        let [input] = inputs.as_slice() else { unreachable!("checked: one input") };
        let Loaded { profile, window } = load_read(input, &self.reading, &self.filter, &self.window, false, true)?;
        let mut by_self = options.clone();
        by_self.sort = Metric::SelfTime;
        let (report, (paths, blocks)) = rayon::join(
            || top(&profile, &by_self),
            || {
                let paths = cpuprof_analysis::heaviest_paths(&profile, by_self.weight, &by_self.filter, BRIEF_PATHS);
                let timed = profile.samples.timeline().is_some();
                let blocks = timed.then(|| cpuprof_analysis::blocks_only(&profile, BRIEF_BLOCK_MIN_NS, Some(1)).ok());
                (paths, blocks.flatten())
            },
        );
        let source = source_name(input);
        if report.rows.is_empty() {
            crate::warn_empty(&source, &profile, window.is_some());
        }
        let top = TopAnswer {
            source,
            meta: crate::said::settled(&profile.meta),
            report,
            by: GroupBy::Function,
            limit: Some(BRIEF_FUNCTIONS),
            window,
            inputs: Vec::new(),
        };
        Ok(BriefAnswer { top, paths, blocks })
    }
}

/// The brief form's answer: `top` by self time, the heaviest call paths, the longest block.
pub struct BriefAnswer {
    pub top: TopAnswer,
    pub paths: Vec<HotPath>,
    pub blocks: Option<Blocks>,
}

impl BriefAnswer {
    /// The summary to render (its width is its own: `terminal`'s is not read).
    pub fn document<'a>(&'a self, terminal: Terminal<'a>) -> BriefDocument<'a> {
        BriefDocument { top: self.top.document(terminal), paths: &self.paths, blocks: self.blocks.as_ref() }
    }
}
