//! `jit`: what V8 did to the hottest functions (or one) — tiers, compilations,
//! deoptimizations and their cost, inlining.

use std::path::PathBuf;

use anyhow::Result;
use cpuprof_analysis::{without_tiers, CallGraph, JitReport};
use cpuprof_model::{FuncKind, Meta, Profile};
use cpuprof_render::{JitDocument, Terminal};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::calls::ViewOptions;
use crate::input::{load_read, source_name, stack_filter, Loaded};
use crate::usage::UsageError;
use crate::{spelled, warn};

/// `jit`: each hot function's self time by V8 tier, its compilations, its deoptimizations
/// with what they cost, and what its optimized code inlined.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct JitRequest {
    /// The profile to read (a tick log has tiers and deopts; a .cpuprofile only deoptReason)
    pub input: PathBuf,
    /// One function: a handle from top (fn:…), its name, name@file:line, or a regular
    /// expression (several match: the hottest). Default: the hottest JavaScript functions.
    #[serde(default)]
    pub pattern: Option<String>,
    /// How many of the hottest JavaScript functions (by self time) to show, without a pattern;
    /// functions V8 deoptimized with at least 1% of the profile in total follow them
    #[serde(default = "limit")]
    #[schemars(range(min = 1))]
    pub limit: u64,
    #[serde(flatten)]
    pub view: ViewOptions,
}

fn limit() -> u64 {
    cpuprof_analysis::defaults::JIT_FUNCTIONS
}

/// The functions' JIT facts, borrowing the profile they were read from.
pub struct JitAnswer<'p> {
    pub source: String,
    pub meta: Meta,
    pub graph: CallGraph<'p>,
    pub report: JitReport,
}

impl JitAnswer<'_> {
    /// The report to render on `terminal`.
    pub fn document<'a>(&'a self, terminal: Terminal<'a>) -> JitDocument<'a> {
        JitDocument { source: &self.source, meta: &self.meta, graph: &self.graph, report: &self.report, terminal }
    }
}

impl JitRequest {
    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        if self.limit == 0 {
            return Err(UsageError(format!("{} 0: expected at least 1 function", spelled("limit"))).into());
        }
        self.view.check()
    }

    /// Answers the request, handing the answer (which borrows the profile read) to `answer`.
    pub fn execute<T>(&self, answer: impl FnOnce(&JitAnswer<'_>) -> T) -> Result<T> {
        self.check()?;
        let mut reading = self.view.reading.clone();
        reading.jit = true;
        let view = &self.view;
        let filter = stack_filter(&view.filter)?;
        let Loaded { profile, window } =
            load_read(&self.input, &reading, &view.filter, &view.window, view.collapse_recursion, true)?;
        let source = source_name(&self.input);
        let (profile, row_tiers) = without_tiers(profile)
            .map_err(|e| anyhow::anyhow!("{source}: cannot fold the tiers of its functions: {e}"))?;
        let options = cpuprof_analysis::CallGraphOptions::new(view.weight, filter);
        let graph = CallGraph::new(&profile, &options);
        let chosen = if let Some(pattern) = &self.pattern {
            vec![crate::annotate::pick(&graph, pattern, &source, "showing")?]
        } else {
            shown(&graph, usize::try_from(self.limit).unwrap_or(usize::MAX))
        };
        if chosen.is_empty() {
            crate::warn_empty(&source, &profile, window.is_some());
        }
        let report = cpuprof_analysis::jit(&graph, &row_tiers, &chosen);
        say_coverage(&source, &profile, &report);
        let meta = crate::said::settled(&profile.meta);
        Ok(answer(&JitAnswer { source, meta, graph, report }))
    }
}

/// What the input cannot say, once: a `.cpuprofile` has no tiers or deopts; a tick log
/// without `--log-deopt` has no deopts.
fn say_coverage(source: &str, profile: &Profile, report: &JitReport) {
    use cpuprof_model::SourceFormat;
    let coverage = report.coverage;
    if profile.meta.format != SourceFormat::TickLog {
        warn(&format!(
            "{source}: a {} records no V8 tiers, compilations or deoptimizations{}; a tick log has them \
             (cpuprof record --prof --jit, or node --prof --log-deopt)",
            profile.meta.format.as_str(),
            if profile.jit.not_optimized.is_empty() { "" } else { " (only why V8 would not optimize a function)" },
        ));
    } else if !coverage.deopts {
        warn(&format!(
            "{source}: the log has no deoptimization records: written without --log-deopt, or V8 deoptimized \
             nothing (cpuprof record --prof --jit adds the flag)"
        ));
    }
}

/// The functions `jit` shows without a pattern: the `n` hottest by self, then functions whose
/// deopts matter though their own time is small (an inliner sent back to the interpreter).
fn shown(graph: &CallGraph<'_>, n: usize) -> Vec<usize> {
    let mut chosen = hottest(graph, n);
    for f in cpuprof_analysis::deoptimized(graph) {
        if !chosen.contains(&f) {
            chosen.push(f);
        }
    }
    chosen
}

/// A function as the page's data and the call graph both name it: name, file, line, column.
type Identity<'a> = (&'a str, Option<&'a str>, Option<u32>, Option<u32>);

/// `jit`'s lines for the report page's function view: of the functions `jit` shows with
/// [`REPORT_JIT_FUNCTIONS`](cpuprof_analysis::defaults::REPORT_JIT_FUNCTIONS), each keyed
/// by its index in the page's `data`; `profile` was folded by [`without_tiers`] into
/// `row_tiers`, and the page's numbers are `options`'.
pub(crate) fn page_jit(
    source: &str,
    profile: &Profile,
    row_tiers: &[Option<cpuprof_model::Tier>],
    data: &cpuprof_analysis::ReportData,
    options: &cpuprof_analysis::CallGraphOptions,
) -> Vec<cpuprof_report::FunctionJit> {
    let graph = CallGraph::new(profile, options);
    let chosen = shown(&graph, cpuprof_analysis::defaults::REPORT_JIT_FUNCTIONS);
    let report = cpuprof_analysis::jit(&graph, row_tiers, &chosen);
    let meta = profile.meta.clone();
    let terminal = Terminal { width: None, cwd: None, color: false };
    let doc = JitDocument { source, meta: &meta, graph: &graph, report: &report, terminal };
    let index: std::collections::HashMap<Identity<'_>, usize> = data
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| ((f.name.as_str(), f.file.as_deref(), f.line, f.column), i))
        .collect();
    cpuprof_render::jit_function_lines(&doc)
        .into_iter()
        .filter_map(|(f, lines)| {
            let row = &graph.functions()[f];
            let function = *index.get(&(row.name.as_str(), row.file.as_deref(), row.line, row.column))?;
            Some(cpuprof_report::FunctionJit { function: u32::try_from(function).ok()?, lines })
        })
        .collect()
}

/// The `n` JavaScript functions with the most self time, heaviest first.
fn hottest(graph: &CallGraph<'_>, n: usize) -> Vec<usize> {
    let functions = graph.functions();
    let mut order: Vec<usize> =
        (0..functions.len()).filter(|f| functions[*f].self_weight > 0 && functions[*f].kind == FuncKind::Js).collect();
    order.sort_by(|a, b| functions[*b].self_weight.cmp(&functions[*a].self_weight).then(a.cmp(b)));
    order.truncate(n);
    order
}
