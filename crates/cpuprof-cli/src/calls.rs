//! `cpuprof tree`, `callers`, `callees` and `explain`: the call-tree views.

use anyhow::Result;
use cpuprof_analysis::{CallGraph, CallGraphOptions, Cut, FindError, Weight};
use cpuprof_render::text::visible;
use cpuprof_render::time::format_ns;
use cpuprof_render::{render_calls, render_tree, CallsDocument, Terminal, TreeDocument, TreeView};

use std::path::Path;

use cpuprof_model::Profile;

use crate::args::{CallsArgs, TreeArgs, ViewArgs, WeightArg};
use crate::input::{load, source_name, stack_filter, Loaded};
use crate::io::Output;
use crate::usage::{UsageChoices, UsageError};

/// The profile `view` asks for, read from `input` (and whether it was cut to a time window),
/// and where the report goes.
fn load_view(input: &Path, view: &ViewArgs) -> Result<(Profile, bool, CallGraphOptions, Output)> {
    let filter = stack_filter(&view.filter)?;
    let output = Output::new(view.output.output.as_deref(), &[input])?;
    let Loaded { profile, window } = load(input, &view.reading, &view.filter, &view.window, view.collapse_recursion)?;
    let weight = match view.weight {
        WeightArg::Time => Weight::Time,
        WeightArg::Samples => Weight::Samples,
    };
    Ok((profile, window.is_some(), CallGraphOptions::new(weight, filter), output))
}

pub(crate) fn run_tree(args: &TreeArgs) -> Result<()> {
    let format = args.view.output.report_format()?;
    let (profile, windowed, options, output) = load_view(&args.input, &args.view)?;
    let graph = CallGraph::new(&profile, &options);
    let cut = Cut {
        min_percent: args.min_percent,
        max_depth: args.max_depth.map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
    };
    let (tree, view) = if args.bottom_up {
        (graph.bottom_up(&cut), TreeView::BottomUp)
    } else {
        (graph.top_down(&cut), TreeView::TopDown)
    };
    let source = source_name(&args.input);
    if tree.roots.is_empty() && tree.pruned.is_none() {
        crate::warn_empty(&source, &profile, windowed);
    }
    let meta = crate::warnings::settled(&profile.meta);
    let doc = TreeDocument {
        source: &source,
        meta: &meta,
        graph: &graph,
        tree: &tree,
        view,
        fold_chains: !args.no_fold_chains,
        width: terminal_width(args.view.output.output.as_deref()),
    };
    output.write(render_tree(&doc, format).as_bytes())
}

/// Which lists a calls command shows.
#[derive(Clone, Copy)]
pub(crate) enum Lists {
    Callers,
    Callees,
    Both,
}

pub(crate) fn run_calls(args: &CallsArgs, lists: Lists) -> Result<()> {
    let format = args.view.output.report_format()?;
    let (profile, _, options, output) = load_view(&args.input, &args.view)?;
    let graph = CallGraph::new(&profile, &options);
    let source = source_name(&args.input);
    let function = graph.find(&args.pattern).map_err(|e| not_found(&graph, &args.pattern, &source, e))?;
    let depth = usize::try_from(args.depth).unwrap_or(usize::MAX);
    let up = matches!(lists, Lists::Callers | Lists::Both).then(|| graph.callers(function, depth));
    let down = matches!(lists, Lists::Callees | Lists::Both).then(|| graph.callees(function, depth));
    let meta = crate::warnings::settled(&profile.meta);
    let doc = CallsDocument {
        source: &source,
        meta: &meta,
        graph: &graph,
        function,
        callers: up.as_ref(),
        callees: down.as_ref(),
        depth,
        width: terminal_width(args.view.output.output.as_deref()),
    };
    output.write(render_calls(&doc, format).as_bytes())
}

/// How many candidates an ambiguous pattern's message lists.
const CANDIDATES_SHOWN: usize = 20;

/// The error for a pattern that names no single function: an ambiguous one or a bad regex is
/// a usage error (exit 2) listing the candidates, one a line, each with the pattern that names
/// it alone; none at all is a failure (exit 1).
pub(crate) fn not_found(graph: &CallGraph<'_>, pattern: &str, source: &str, error: FindError) -> anyhow::Error {
    let amount = |v: i64| if graph.unit() == Weight::Samples { format!("{v} samples") } else { format_ns(v) };
    let numbers = |f: usize| {
        let row = &graph.functions()[f];
        format!("{}, self {}, total {}", row.kind.as_str(), amount(row.self_weight), amount(row.total_weight))
    };
    let describe = |f: &usize| format!("{} ({})", visible(&exact_pattern(graph, *f)), numbers(*f));
    let shown = visible(pattern);
    match error {
        FindError::Ambiguous(found) => {
            // Each candidate's own `name@file:line:column`, when that names it alone and
            // pastes as shown; else its number among this pattern's candidates.
            let mut choices: Vec<String> = found
                .iter()
                .take(CANDIDATES_SHOWN)
                .enumerate()
                .map(|(i, f)| {
                    let exact = exact_pattern(graph, *f);
                    let alone = matches!(graph.find(&exact), Ok(g) if g == *f) && visible(&exact) == exact;
                    let paste = if alone { exact } else { format!("{shown}#{}", i + 1) };
                    format!("  #{} {paste}  ({})", i + 1, numbers(*f))
                })
                .collect();
            if found.len() > CANDIDATES_SHOWN {
                choices.push(format!(
                    "  … and {} more: narrow the pattern (its file, :line, :column)",
                    found.len() - CANDIDATES_SHOWN
                ));
            }
            // name@file:line given, and functions on that line: only the column tells them apart.
            let rows: Vec<&cpuprof_analysis::TopRow> = found.iter().map(|f| &graph.functions()[*f]).collect();
            let one_line = pattern.contains('@')
                && rows.windows(2).all(|w| (&w[0].name, &w[0].file, w[0].line) == (&w[1].name, &w[1].file, w[1].line));
            let how = if one_line {
                "they start on the same line: add the column (name@file:line:column)"
            } else {
                "name one as shown (name@file:line:column)"
            };
            UsageChoices {
                head: format!(
                    "{shown}: {} functions match in {source}; {how}, or by its number as {shown}#N:",
                    found.len()
                ),
                choices,
            }
            .into()
        }
        FindError::Empty => {
            UsageError("PATTERN is empty: give a function's name, name@file:line or a regex".to_owned()).into()
        }
        FindError::Regex(e) => {
            UsageError(format!("{shown}: no function has that name, and it is not a valid regular expression: {e}"))
                .into()
        }
        FindError::NoSamples(found) => {
            let list: Vec<String> = found.iter().take(CANDIDATES_SHOWN).map(describe).collect();
            anyhow::anyhow!(
                "{shown}: the functions that match have no samples left after the filters: {}",
                list.join("; ")
            )
        }
        _ => anyhow::anyhow!("{shown}: no function in {source} matches (by name, name@file:line or regex)"),
    }
}

/// `name@file:line:column` of function `f` (as much of it as is known), as a pattern names it.
fn exact_pattern(graph: &CallGraph<'_>, f: usize) -> String {
    let row = &graph.functions()[f];
    let mut at = row.name.clone();
    if let Some(file) = row.file.as_deref().filter(|f| !f.is_empty()) {
        at.push('@');
        at.push_str(file);
        if let Some(line) = row.line {
            at.push_str(&format!(":{line}"));
            if let Some(column) = row.column {
                at.push_str(&format!(":{column}"));
            }
        }
    }
    at
}

/// The width text reports are fitted to when they go to stdout: `COLUMNS` when it is set (so a
/// pipe can ask), else the terminal's when stdout is one; else, and for files, `None`, so that
/// files and pipes get the same lines wherever they are written.
pub(crate) fn terminal_width(output: Option<&std::path::Path>) -> Option<usize> {
    if !output.is_none_or(crate::io::is_dash) {
        return None;
    }
    let asked = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|c| *c > 0);
    asked.or_else(|| {
        std::io::IsTerminal::is_terminal(&std::io::stdout())
            .then(terminal_size::terminal_size)
            .flatten()
            .map(|(terminal_size::Width(w), _)| usize::from(w))
    })
}

/// The terminal a text report written to `output` is shown on: its width (none with `wide`),
/// `cwd`, and colour only for a person at a terminal, never with `NO_COLOR`.
pub(crate) fn terminal<'c>(output: Option<&std::path::Path>, wide: bool, cwd: Option<&'c str>) -> Terminal<'c> {
    let color = output.is_none_or(crate::io::is_dash)
        && std::io::IsTerminal::is_terminal(&std::io::stdout())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    Terminal { width: terminal_width(output).filter(|_| !wide), cwd, color }
}

/// The directory tables show paths relative to when they must shorten them.
pub(crate) fn current_dir() -> Option<String> {
    std::env::current_dir().ok().and_then(|d| d.to_str().map(str::to_owned))
}
