//! `collapse` and `flamegraph`: the profile folded into stacks, written as folded text or drawn.

use std::path::PathBuf;

use anyhow::Result;
use cpuprof_analysis::{fold, FoldOptions, Folded, GroupBy, Weight};
use cpuprof_model::{Profile, SourceFormat};
use cpuprof_render::time::format_ns;
use cpuprof_render::{render_collapsed, render_empty_flamegraph, render_flamegraph, FlameOptions};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::input::{load, source_name, stack_filter, Loaded};
use crate::usage::UsageError;
use crate::{spelled, FilterOptions, ReadOptions, WindowOptions};

/// What a frame of a folded stack stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FoldBy {
    /// A function: `name file:line`.
    #[default]
    Function,
    /// A script file (url); consecutive frames in one file merge.
    File,
    /// An npm package; (node) for node internals, (app) for the rest; consecutive frames merge.
    Package,
}

impl FoldBy {
    fn name(self) -> &'static str {
        match self {
            FoldBy::Function => "function",
            FoldBy::File => "file",
            FoldBy::Package => "package",
        }
    }
}

/// How a profile is folded (`collapse`, and `flamegraph`'s stacks).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct FoldRequest {
    /// The profile to read
    pub input: PathBuf,
    /// What a frame stands for
    #[serde(default)]
    pub by: FoldBy,
    /// What a sample weighs (default: samples for folded text and tick logs, time for a flame graph)
    #[serde(default)]
    pub weight: Option<Weight>,
    #[serde(flatten)]
    pub filter: FilterOptions,
    /// Fold recursion, direct and indirect, into the function's first frame
    #[serde(default)]
    pub collapse_recursion: bool,
    #[serde(flatten)]
    pub window: WindowOptions,
    #[serde(flatten)]
    pub reading: ReadOptions,
}

/// A folded profile and what shaped it.
struct Folding {
    profile: Profile,
    folded: Folded,
    /// The options that shaped the graph, for a subtitle.
    shaped_by: Vec<String>,
    /// Whether its samples were cut to a time window.
    windowed: bool,
}

impl FoldRequest {
    /// The request for `input` with every option as given on no command line.
    pub fn new(input: PathBuf) -> FoldRequest {
        FoldRequest {
            input,
            by: FoldBy::default(),
            weight: None,
            filter: FilterOptions::default(),
            collapse_recursion: false,
            window: WindowOptions::default(),
            reading: ReadOptions::default(),
        }
    }

    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        self.filter.check()?;
        self.window.check()?;
        self.reading.check()
    }

    /// `collapse`: the folded stacks as text. Folded text carries no unit and every reader of
    /// it (cpuprof's included) takes its numbers for sample counts: those are the default here;
    /// times only on request.
    pub fn collapse(&self) -> Result<String> {
        self.check()?;
        let Folding { profile, folded, windowed, .. } = self.folded(None, Weight::Samples, true, None)?;
        if !folded.tree.has_stacks() {
            crate::warn_empty(&source_name(&self.input), &profile, windowed);
        }
        Ok(render_collapsed(&folded))
    }

    /// The profile folded as asked; `default_weight` applies when no weight is given (tick
    /// logs always default to ticks); `read_back`: labels for folded text (see
    /// [`FoldOptions::read_back`]); `loaded`: the profile, read already as asked (else read from
    /// `input`).
    fn folded(
        &self,
        prune_below: Option<f64>,
        default_weight: Weight,
        read_back: bool,
        loaded: Option<Loaded>,
    ) -> Result<Folding> {
        let filter = stack_filter(&self.filter)?;
        let Loaded { profile, window } = match loaded {
            Some(loaded) => loaded,
            None => load(&self.input, &self.reading, &self.filter, &self.window, self.collapse_recursion)?,
        };
        let ticklog = profile.meta.format == SourceFormat::TickLog;
        let weight = match self.weight {
            Some(weight) => weight,
            None if ticklog => Weight::Samples,
            None => default_weight,
        };
        let by = match self.by {
            FoldBy::Function => GroupBy::Function,
            FoldBy::File => GroupBy::File,
            FoldBy::Package => GroupBy::Package,
        };
        let mut shaped_by = vec![format!("by {}", self.by.name())];
        shaped_by.push(match weight {
            Weight::Samples if ticklog => "weight: ticks".to_owned(),
            Weight::Samples => "weight: samples".to_owned(),
            _ => "weight: time".to_owned(),
        });
        if filter.include_idle {
            shaped_by.push("idle included".to_owned());
        }
        if let Some(re) = &filter.focus {
            shaped_by.push(format!("focus /{re}/"));
        }
        if let Some(re) = &filter.ignore {
            shaped_by.push(format!("ignore /{re}/"));
        }
        if self.collapse_recursion {
            shaped_by.push("recursion collapsed".to_owned());
        }
        if let Some(w) = window {
            shaped_by.push(format!("window {} – {}", format_ns(w.from_ns), format_ns(w.to_ns)));
        }
        let mut options = FoldOptions::new(by, weight, filter);
        options.prune_below = prune_below;
        options.read_back = read_back;
        let folded = fold(&profile, &options);
        Ok(Folding { profile, folded, shaped_by, windowed: window.is_some() })
    }

    /// `app.cpuprofile · 1.02 s · 952 samples`: the span and the samples drawn.
    fn default_title(&self, profile: &Profile, folded: &Folded) -> String {
        let source = source_name(&self.input);
        let name = source.rsplit('/').next().unwrap_or(&source).to_owned();
        let mut parts = vec![name];
        // A window's profile is as long as the window.
        if let Some(d) = profile.meta.duration_ns {
            parts.push(format_ns(d));
        }
        let noun = if profile.meta.format == SourceFormat::TickLog { "ticks" } else { "samples" };
        // Counted as `top` counts them: the samples drawn, and those left out.
        let (mut all, mut idle) = (0i64, 0i64);
        if let Some(k) = profile.value_index(cpuprof_model::ValueUnit::Count) {
            let categories = cpuprof_analysis::Categories::new(profile);
            for (row, count) in profile.samples.values(k).iter().enumerate() {
                all = all.saturating_add(*count);
                if categories.of_sample(profile, row) == cpuprof_analysis::Category::Idle {
                    idle = idle.saturating_add(*count);
                }
            }
        }
        let all = all.max(folded.drawn_samples);
        parts.push(cpuprof_render::reports::samples_shown(folded.drawn_samples, all, idle, noun));
        parts.join(" · ")
    }
}

/// `flamegraph`: an interactive SVG flame graph.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct FlamegraphRequest {
    #[serde(flatten)]
    pub fold: FoldRequest,
    /// Title (default: the file name, duration and sample count)
    #[serde(default)]
    pub title: Option<String>,
    /// Width of the image in pixels (100 to 100000)
    #[serde(default = "flame_width")]
    #[schemars(range(min = 100, max = 100_000))]
    pub width: u64,
    /// Leave out frames narrower than this percentage of the whole graph
    #[serde(default = "flame_min_width")]
    #[schemars(range(min = 0, max = 100))]
    pub min_width: f64,
    /// An icicle graph: roots at the top, growing down
    #[serde(default)]
    pub inverted: bool,
    /// Merge stacks from the leaf: each function's callers above it (bottom-up)
    #[serde(default)]
    pub reverse: bool,
    /// Indent the SVG's XML (bigger, but diffable)
    #[serde(default)]
    pub pretty_xml: bool,
}

fn flame_width() -> u64 {
    cpuprof_render::defaults::FLAME_WIDTH as u64
}

fn flame_min_width() -> f64 {
    cpuprof_render::defaults::FLAME_MIN_WIDTH
}

impl FlamegraphRequest {
    /// The request for `input` with every option as given on no command line.
    pub fn new(input: PathBuf) -> FlamegraphRequest {
        FlamegraphRequest {
            fold: FoldRequest::new(input),
            title: None,
            width: flame_width(),
            min_width: flame_min_width(),
            inverted: false,
            reverse: false,
            pretty_xml: false,
        }
    }

    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        if !(100..=100_000).contains(&self.width) {
            return Err(
                UsageError(format!("{} {}: expected 100 to 100000 pixels", spelled("width"), self.width)).into()
            );
        }
        if !(0.0..=100.0).contains(&self.min_width) {
            return Err(UsageError(format!(
                "{} {}: expected a percentage from 0 to 100",
                spelled("min_width"),
                self.min_width
            ))
            .into());
        }
        self.fold.check()
    }

    /// Draws the flame graph (of `loaded` when given, named `fold.input`; else read from it).
    pub fn execute(&self, loaded: Option<Loaded>) -> Result<Vec<u8>> {
        self.check()?;
        // inferno leaves out frames narrower than min_width percent of the graph; subtrees under
        // half of that are merged into their callers before it sees them. Not when reversed: the
        // graph then merges frames from the leaves, and a light leaf may be heavy there.
        let prune = (!self.reverse).then_some(0.5 * self.min_width / 100.0);
        let Folding { profile, folded, shaped_by, windowed } = self.fold.folded(prune, Weight::Time, false, loaded)?;
        // An empty profile is not an error (docs/conventions.md, "Empty profiles"): a warning, and
        // a valid SVG that says there is nothing to draw.
        let empty = !folded.tree.has_stacks();
        if empty {
            crate::warn_empty(&source_name(&self.fold.input), &profile, windowed);
        }
        let title = self.title.clone().unwrap_or_else(|| self.fold.default_title(&profile, &folded));
        let mut shaped_by = shaped_by;
        if self.reverse {
            shaped_by.push("reversed: callers above callees".to_owned());
        }
        let mut options = FlameOptions::default();
        options.title = title;
        options.subtitle = shaped_by.join(" · ");
        options.width = usize::try_from(self.width).ok();
        options.min_width = Some(self.min_width);
        options.inverted = self.inverted;
        options.reverse = self.reverse;
        options.pretty = self.pretty_xml;
        let sample_name = if profile.meta.format == SourceFormat::TickLog { "ticks" } else { "samples" };
        sample_name.clone_into(&mut options.sample_name);
        if empty {
            return Ok(render_empty_flamegraph(&options));
        }
        render_flamegraph(&folded, &options).map_err(|e| anyhow::anyhow!("cannot draw the flame graph: {e}"))
    }
}
