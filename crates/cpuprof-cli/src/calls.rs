//! `cpuprof tree`, `callers`, `callees` and `explain`: the call-tree views.

use anyhow::Result;
use cpuprof_analysis::{CallGraph, CallGraphOptions, Cut, Weight};
use cpuprof_render::{render_calls, render_tree, CallsDocument, TreeDocument, TreeView};

use std::path::Path;

use cpuprof_model::Profile;

use crate::args::{CallsArgs, TreeArgs, ViewArgs, WeightArg};
use crate::input::{load, source_name, stack_filter, Loaded};
use crate::io::Output;

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
        width: crate::terminal::terminal_width(args.view.output.output.as_deref()),
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
    let function =
        graph.find(&args.pattern).map_err(|e| crate::patterns::not_found(&graph, &args.pattern, &source, e))?;
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
        width: crate::terminal::terminal_width(args.view.output.output.as_deref()),
    };
    output.write(render_calls(&doc, format).as_bytes())
}
