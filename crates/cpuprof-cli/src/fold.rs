//! `cpuprof collapse` and `cpuprof flamegraph`: the flags mapped to a `FoldRequest` or a
//! `FlamegraphRequest` (`cpuprof_app::fold`), the text or SVG written.

use anyhow::Result;
use cpuprof_app::fold::{FlamegraphRequest, FoldBy as By, FoldRequest};
use cpuprof_app::input::Loaded;

use crate::args::{CollapseArgs, FlamegraphArgs, FoldArgs, FoldBy};
use crate::io::Output;

/// The request the folding flags make.
fn fold_request(args: &FoldArgs) -> FoldRequest {
    FoldRequest {
        input: args.input.clone(),
        by: match args.by {
            FoldBy::Function => By::Function,
            FoldBy::File => By::File,
            FoldBy::Package => By::Package,
        },
        weight: args.weight.map(Into::into),
        filter: args.filter.options(),
        collapse_recursion: args.collapse_recursion,
        window: args.window.options(),
        reading: args.reading.options(),
    }
}

/// The request `flamegraph`'s flags make.
fn flamegraph_request(args: &FlamegraphArgs) -> FlamegraphRequest {
    FlamegraphRequest {
        fold: fold_request(&args.fold),
        title: args.title.clone(),
        width: args.width,
        min_width: args.min_width,
        inverted: args.inverted,
        reverse: args.reverse,
        pretty_xml: args.pretty_xml,
    }
}

pub(crate) fn run_collapse(args: &CollapseArgs) -> Result<()> {
    let request = fold_request(&args.fold);
    request.check()?;
    let output = Output::new(args.fold.output.as_deref(), &[args.fold.input.as_path()])?;
    output.write(request.collapse()?.as_bytes())
}

pub(crate) fn run_flamegraph(args: &FlamegraphArgs) -> Result<()> {
    let request = flamegraph_request(args);
    request.check()?;
    // SVG is not for a terminal: without -o there, it goes to a file beside the input.
    let beside = (args.fold.output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .then(|| crate::io::beside(&args.fold.input, "flamegraph", "svg"));
    let output = Output::new(args.fold.output.as_deref().or(beside.as_deref()), &[args.fold.input.as_path()])?;
    output.write(&request.execute(None)?)?;
    if let Some(path) = beside {
        crate::say(&format!(
            "flame graph written to {} (open it in a browser; -o - writes it to stdout)",
            path.display()
        ));
    }
    Ok(())
}

/// The flame graph of a profile read already (`record`'s), named `request.fold.input`, to `output`.
pub(crate) fn flamegraph_of(request: &FlamegraphRequest, loaded: Loaded, output: Output) -> Result<()> {
    output.write(&request.execute(Some(loaded))?)
}
