//! `cpuprof tree`, `callers`, `callees` and `explain`: the call-tree views; and `annotate`, a
//! function's lines.

use anyhow::Result;
use cpuprof_app::annotate::AnnotateRequest;
use cpuprof_app::calls::{CallsRequest, Lists, TreeRequest, ViewOptions};
use cpuprof_app::jit::JitRequest;
use cpuprof_app::UsageError;
use cpuprof_render::{render_annotate, render_calls, render_jit, render_tree};

use crate::args::{AnnotateArgs, CallsArgs, JitArgs, TreeArgs, ViewArgs};
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

/// The request `annotate`'s flags make: PATTERN and FILE, or FILE alone with `--top`.
pub(crate) fn annotate_request(args: &AnnotateArgs) -> Result<AnnotateRequest> {
    let (pattern, input) = match (args.args.as_slice(), args.top) {
        ([input], Some(_)) => (None, input.clone()),
        ([pattern, input], None) => {
            let pattern = pattern.to_str().ok_or_else(|| UsageError("PATTERN: expected UTF-8 text".to_owned()))?;
            (Some(pattern.to_owned()), input.clone())
        }
        (_, Some(_)) => return Err(UsageError("with --top N, give the profile only (no PATTERN)".to_owned()).into()),
        _ => return Err(UsageError("expected PATTERN FILE (or --top N FILE)".to_owned()).into()),
    };
    Ok(AnnotateRequest {
        pattern,
        input,
        top: args.top,
        context: args.context,
        full: args.full,
        source_root: args.source_root.clone(),
        view: view_options(&args.view),
    })
}

pub(crate) fn run_annotate(args: &AnnotateArgs) -> Result<()> {
    let request = annotate_request(args)?;
    request.check()?;
    let format = args.view.output.report_format()?;
    let to = args.view.output.output.as_deref();
    let output = Output::new(to, &[request.input.as_path()])?;
    let cwd = crate::terminal::current_dir();
    let terminal = crate::terminal::terminal(to, args.view.output.wide, cwd.as_deref());
    let text = request.execute(|answer| render_annotate(&answer.document(terminal), format))?;
    output.write(text.as_bytes())
}

/// The request `jit`'s flags make.
pub(crate) fn jit_request(args: &JitArgs) -> JitRequest {
    JitRequest {
        input: args.input.clone(),
        pattern: args.pattern.clone(),
        limit: args.limit,
        view: view_options(&args.view),
    }
}

pub(crate) fn run_jit(args: &JitArgs) -> Result<()> {
    let request = jit_request(args);
    request.check()?;
    let format = args.view.output.report_format()?;
    let to = args.view.output.output.as_deref();
    let output = Output::new(to, &[request.input.as_path()])?;
    let cwd = crate::terminal::current_dir();
    let terminal = crate::terminal::terminal(to, args.view.output.wide, cwd.as_deref());
    let text = request.execute(|answer| render_jit(&answer.document(terminal), format))?;
    output.write(text.as_bytes())
}
