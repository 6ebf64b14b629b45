//! `cpuprof tree`, `callers`, `callees` and `explain`: the call-tree views.

use anyhow::Result;
use cpuprof_app::calls::{CallsRequest, Lists, TreeRequest, ViewOptions};
use cpuprof_render::{render_calls, render_tree};

use crate::args::{CallsArgs, TreeArgs, ViewArgs};
use crate::io::Output;

/// The view options these flags ask for.
fn view_options(view: &ViewArgs) -> ViewOptions {
    ViewOptions {
        collapse_recursion: view.collapse_recursion,
        weight: view.weight.into(),
        filter: view.filter.options(),
        window: view.window.options(),
        reading: view.reading.options(),
    }
}

/// The request `tree`'s flags make.
pub(crate) fn tree_request(args: &TreeArgs) -> TreeRequest {
    TreeRequest {
        input: args.input.clone(),
        bottom_up: args.bottom_up,
        min_percent: args.min_percent,
        max_depth: args.max_depth,
        no_fold_chains: args.no_fold_chains,
        view: view_options(&args.view),
    }
}

/// The request `callers`', `callees`' and `explain`'s flags make.
pub(crate) fn calls_request(args: &CallsArgs) -> CallsRequest {
    CallsRequest {
        pattern: args.pattern.clone(),
        input: args.input.clone(),
        depth: args.depth,
        view: view_options(&args.view),
    }
}

pub(crate) fn run_tree(args: &TreeArgs) -> Result<()> {
    let request = tree_request(args);
    request.check()?;
    let format = args.view.output.report_format()?;
    let output = Output::new(args.view.output.output.as_deref(), &[args.input.as_path()])?;
    let width = crate::terminal::terminal_width(args.view.output.output.as_deref());
    let text = request.execute(|answer| render_tree(&answer.document(width), format))?;
    output.write(text.as_bytes())
}

pub(crate) fn run_calls(args: &CallsArgs, lists: Lists) -> Result<()> {
    let request = calls_request(args);
    request.check()?;
    let format = args.view.output.report_format()?;
    let output = Output::new(args.view.output.output.as_deref(), &[args.input.as_path()])?;
    let width = crate::terminal::terminal_width(args.view.output.output.as_deref());
    let text = request.execute(lists, |answer| render_calls(&answer.document(width), format))?;
    output.write(text.as_bytes())
}
