//! `annotate`: a function's source with its samples by line.

use std::path::PathBuf;

use anyhow::Result;
use cpuprof_analysis::{CallGraph, FindError};
use cpuprof_model::Meta;
use cpuprof_render::{AnnotateDocument, AnnotatedFunction, Terminal};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::calls::{load_view, ViewOptions};
use crate::input::{source_name, Loaded};
use crate::sources::{script_text, source_roots, Code};
use crate::usage::UsageError;
use crate::{spelled, warn};

/// `annotate`: the source of a function (or of the hottest functions) with each line's samples.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct AnnotateRequest {
    /// The function: a handle from top (fn:…), its name, name@file:line, or a regular
    /// expression (several match: the hottest). Not with `top`.
    #[serde(default)]
    pub pattern: Option<String>,
    /// The profile to read
    pub input: PathBuf,
    /// Annotate the N functions with the most self time, one after another (instead of a pattern)
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub top: Option<u64>,
    /// Lines shown around each line with samples; longer runs of other lines are folded (default 3)
    #[serde(default = "context")]
    pub context: u64,
    /// Show every line of the function: fold none
    #[serde(default)]
    pub full: bool,
    /// Where to read scripts recorded elsewhere: OLD=NEW reads a script named OLD/… at NEW/…
    /// (several may be given; the first that matches is used)
    #[serde(default)]
    pub source_root: Vec<String>,
    #[serde(flatten)]
    pub view: ViewOptions,
}

fn context() -> u64 {
    cpuprof_analysis::defaults::ANNOTATE_CONTEXT
}

/// The functions annotated, borrowing the profile they were read from.
pub struct AnnotateAnswer<'p> {
    pub source: String,
    pub meta: Meta,
    pub graph: CallGraph<'p>,
    pub functions: Vec<AnnotatedFunction>,
    context: usize,
    full: bool,
    many: bool,
}

impl AnnotateAnswer<'_> {
    /// The report to render on `terminal`.
    pub fn document<'a>(&'a self, terminal: Terminal<'a>) -> AnnotateDocument<'a> {
        AnnotateDocument {
            source: &self.source,
            meta: &self.meta,
            graph: &self.graph,
            functions: &self.functions,
            context: self.context,
            full: self.full,
            many: self.many,
            terminal,
        }
    }
}

impl AnnotateRequest {
    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        match (&self.pattern, self.top) {
            (Some(_), Some(_)) => {
                return Err(UsageError(format!("give a function or {}, not both", spelled("top"))).into());
            }
            (None, None) => {
                return Err(UsageError(format!("give a function to annotate, or {} N", spelled("top"))).into());
            }
            (None, Some(0)) => {
                return Err(UsageError(format!("{} 0: expected at least 1 function", spelled("top"))).into());
            }
            _ => {}
        }
        source_roots(&self.source_root)?;
        self.view.check()
    }

    /// Answers the request, handing the answer (which borrows the profile read) to `answer`.
    pub fn execute<T>(&self, answer: impl FnOnce(&AnnotateAnswer<'_>) -> T) -> Result<T> {
        self.check()?;
        let roots = source_roots(&self.source_root)?;
        let mut view = self.view.clone();
        view.reading.frame_lines = true;
        let (Loaded { profile, window }, options) = load_view(&self.input, &view)?;
        let graph = CallGraph::new(&profile, &options);
        let source = source_name(&self.input);
        let chosen = match (&self.pattern, self.top) {
            (Some(pattern), _) => vec![pick(&graph, pattern, &source, "annotating")?],
            (None, top) => hottest(&graph, usize::try_from(top.unwrap_or(1)).unwrap_or(usize::MAX)),
        };
        if chosen.is_empty() && graph.samples() > 0 {
            warn(&format!("{source}: no function of a script has self time (native code and V8's own have no lines)"));
        } else if chosen.is_empty() {
            crate::warn_empty(&source, &profile, window.is_some());
        }
        let functions = chosen
            .into_iter()
            .map(|function| {
                let lines = graph.lines(function);
                let row = &graph.functions()[function];
                let (text, said) = script_text(&profile, Code::of_row(row), lines.lines.last().map(|l| l.line), &roots);
                if let Some(said) = said {
                    warn(&said);
                }
                AnnotatedFunction { function, lines, source: text }
            })
            .collect();
        let meta = crate::said::settled(&profile.meta);
        let context = usize::try_from(self.context).unwrap_or(usize::MAX);
        let many = self.top.is_some();
        Ok(answer(&AnnotateAnswer { source, meta, graph, functions, context, full: self.full, many }))
    }
}

/// The function `pattern` names; of several, the one with the most self time, the others named
/// in a warning.
pub(crate) fn pick(graph: &CallGraph<'_>, pattern: &str, source: &str, verb: &str) -> Result<usize> {
    match graph.find(pattern) {
        Ok(found) => Ok(found),
        Err(FindError::Ambiguous(mut found)) => {
            // The hottest by self: what the lines show (a stable sort keeps `find`'s order of equals).
            found.sort_by_key(|f| std::cmp::Reverse(graph.functions()[*f].self_weight));
            let others: Vec<String> = found[1..].iter().take(5).map(|f| graph.functions()[*f].handle()).collect();
            let more = found.len() - 1 - others.len();
            warn(&format!(
                "{source}: {} functions match {}: {verb} the hottest, {}; the others: {}{}",
                found.len(),
                cpuprof_render::text::visible(pattern),
                graph.functions()[found[0]].handle(),
                others.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() },
            ));
            Ok(found[0])
        }
        Err(e) => Err(crate::patterns::not_found(graph, pattern, source, e)),
    }
}

/// The `n` functions with the most self time that have a script (what has none, native code
/// and V8's own, has no lines), heaviest first.
fn hottest(graph: &CallGraph<'_>, n: usize) -> Vec<usize> {
    let functions = graph.functions();
    let mut order: Vec<usize> = (0..functions.len())
        .filter(|f| functions[*f].self_weight > 0 && Code::of_row(&functions[*f]).has_script())
        .collect();
    order.sort_by(|a, b| functions[*b].self_weight.cmp(&functions[*a].self_weight).then(a.cmp(b)));
    order.truncate(n);
    order
}
