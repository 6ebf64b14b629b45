//! The call-tree views: `tree` (top-down or bottom-up), and `callers`, `callees` and `explain`
//! of one function.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cpuprof_analysis::{CallGraph, CallGraphOptions, CallTree, Cut, Weight};
use cpuprof_model::Meta;
use cpuprof_render::{CallsDocument, TreeDocument, TreeView};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::input::{load, source_name, stack_filter, Loaded};
use crate::usage::UsageError;
use crate::{spelled, FilterOptions, ReadOptions, WindowOptions};

/// What the call-tree views share: the samples, their weight, how they are read.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ViewOptions {
    /// Fold recursion, direct and indirect, into the function's first frame (a;f;b;f;c → a;f;c)
    pub collapse_recursion: bool,
    /// What a sample weighs: its duration (ns), or 1
    pub weight: Weight,
    #[serde(flatten)]
    pub filter: FilterOptions,
    #[serde(flatten)]
    pub window: WindowOptions,
    #[serde(flatten)]
    pub reading: ReadOptions,
}

impl ViewOptions {
    /// Usage errors of the options every view shares.
    pub fn check(&self) -> Result<()> {
        self.filter.check()?;
        self.window.check()?;
        self.reading.check()
    }
}

/// The profile a view asks for, read from `input`, whether it was cut to a time window, and
/// the call graph's options.
pub(crate) fn load_view(input: &Path, view: &ViewOptions) -> Result<(Loaded, CallGraphOptions)> {
    let filter = stack_filter(&view.filter)?;
    let loaded = load(input, &view.reading, &view.filter, &view.window, view.collapse_recursion)?;
    Ok((loaded, CallGraphOptions::new(view.weight, filter)))
}

/// `tree`: the call tree.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct TreeRequest {
    /// The profile to read
    pub input: PathBuf,
    /// The inverted tree: functions by self time, the paths that call them under each
    #[serde(default)]
    pub bottom_up: bool,
    /// Leave out nodes under this percentage of the total (summed into `… N more`; default 1)
    #[serde(default = "min_percent")]
    #[schemars(range(min = 0, max = 100))]
    pub min_percent: f64,
    /// Show at most N levels
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_depth: Option<u64>,
    /// One line per node, even for chains of only children (tables and Markdown)
    #[serde(default)]
    pub no_fold_chains: bool,
    #[serde(flatten)]
    pub view: ViewOptions,
}

fn min_percent() -> f64 {
    cpuprof_analysis::defaults::TREE_MIN_PERCENT
}

/// A call-tree view's answer, borrowing the profile it was read from.
pub struct TreeAnswer<'p> {
    pub source: String,
    pub meta: Meta,
    pub graph: CallGraph<'p>,
    pub tree: CallTree,
    pub view: TreeView,
    pub fold_chains: bool,
}

impl TreeAnswer<'_> {
    /// The report to render, `width` columns wide (`None`: no limit).
    pub fn document(&self, width: Option<usize>) -> TreeDocument<'_> {
        TreeDocument {
            source: &self.source,
            meta: &self.meta,
            graph: &self.graph,
            tree: &self.tree,
            view: self.view,
            fold_chains: self.fold_chains,
            width,
        }
    }
}

impl TreeRequest {
    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        if !(0.0..=100.0).contains(&self.min_percent) {
            return Err(UsageError(format!(
                "{} {}: expected a percentage from 0 to 100",
                spelled("min_percent"),
                self.min_percent
            ))
            .into());
        }
        if self.max_depth == Some(0) {
            return Err(UsageError(format!("{} 0: expected at least 1 level", spelled("max_depth"))).into());
        }
        self.view.check()
    }

    /// Answers the request, handing the answer (which borrows the profile read) to `answer`.
    pub fn execute<T>(&self, answer: impl FnOnce(&TreeAnswer<'_>) -> T) -> Result<T> {
        self.check()?;
        let (Loaded { profile, window }, options) = load_view(&self.input, &self.view)?;
        let graph = CallGraph::new(&profile, &options);
        let cut = Cut {
            min_percent: self.min_percent,
            max_depth: self.max_depth.map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
        };
        let (tree, view) = if self.bottom_up {
            (graph.bottom_up(&cut), TreeView::BottomUp)
        } else {
            (graph.top_down(&cut), TreeView::TopDown)
        };
        let source = source_name(&self.input);
        if tree.roots.is_empty() && tree.pruned.is_none() {
            crate::warn_empty(&source, &profile, window.is_some());
        }
        let meta = crate::said::settled(&profile.meta);
        Ok(answer(&TreeAnswer { source, meta, graph, tree, view, fold_chains: !self.no_fold_chains }))
    }
}

/// Which lists a calls view shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lists {
    Callers,
    Callees,
    Both,
}

/// `callers`, `callees`, `explain`: one function's callers and callees.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct CallsRequest {
    /// The function: a handle from top (fn:…), its name, name@file:line, or a regular expression
    pub pattern: String,
    /// The profile to read
    pub input: PathBuf,
    /// Levels of callers (or callees) to show (default 1)
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub depth: u64,
    #[serde(flatten)]
    pub view: ViewOptions,
}

fn one() -> u64 {
    1
}

/// A calls view's answer, borrowing the profile it was read from.
pub struct CallsAnswer<'p> {
    pub source: String,
    pub meta: Meta,
    pub graph: CallGraph<'p>,
    /// The function's row in the graph.
    pub function: usize,
    pub callers: Option<CallTree>,
    pub callees: Option<CallTree>,
    pub depth: usize,
}

impl CallsAnswer<'_> {
    /// The report to render, `width` columns wide (`None`: no limit).
    pub fn document(&self, width: Option<usize>) -> CallsDocument<'_> {
        CallsDocument {
            source: &self.source,
            meta: &self.meta,
            graph: &self.graph,
            function: self.function,
            callers: self.callers.as_ref(),
            callees: self.callees.as_ref(),
            depth: self.depth,
            width,
        }
    }
}

impl CallsRequest {
    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        if self.depth == 0 {
            return Err(UsageError(format!("{} 0: expected at least 1 level", spelled("depth"))).into());
        }
        self.view.check()
    }

    /// Answers the request with `lists`, handing the answer (which borrows the profile read)
    /// to `answer`.
    pub fn execute<T>(&self, lists: Lists, answer: impl FnOnce(&CallsAnswer<'_>) -> T) -> Result<T> {
        self.check()?;
        let (Loaded { profile, .. }, options) = load_view(&self.input, &self.view)?;
        let graph = CallGraph::new(&profile, &options);
        let source = source_name(&self.input);
        let function =
            graph.find(&self.pattern).map_err(|e| crate::patterns::not_found(&graph, &self.pattern, &source, e))?;
        let depth = usize::try_from(self.depth).unwrap_or(usize::MAX);
        let up = matches!(lists, Lists::Callers | Lists::Both).then(|| graph.callers(function, depth));
        let down = matches!(lists, Lists::Callees | Lists::Both).then(|| graph.callees(function, depth));
        let meta = crate::said::settled(&profile.meta);
        Ok(answer(&CallsAnswer { source, meta, graph, function, callers: up, callees: down, depth }))
    }
}
