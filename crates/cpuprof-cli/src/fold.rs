//! `cpuprof collapse` and `cpuprof flamegraph`: fold the profile, then write text or SVG.

use anyhow::Result;
use cpuprof_analysis::{fold, FoldOptions, Folded, GroupBy, Weight};
use cpuprof_model::{Profile, SourceFormat};
use cpuprof_render::time::format_ns;
use cpuprof_render::{render_collapsed, render_empty_flamegraph, render_flamegraph, FlameOptions};

use crate::args::{CollapseArgs, FlamegraphArgs, FoldArgs, FoldBy, WeightArg};
use crate::input::{load, source_name, stack_filter, Loaded};
use crate::io::Output;

pub(crate) fn run_collapse(args: &CollapseArgs) -> Result<()> {
    let output = Output::new(args.fold.output.as_deref(), &[args.fold.input.as_path()])?;
    // Folded text carries no unit and every reader of it (cpuprof's included) takes its
    // numbers for sample counts: those are the default here; times only on request.
    let Folding { profile, folded, windowed, .. } = folded(&args.fold, None, Weight::Samples, true, None)?;
    if !folded.tree.has_stacks() {
        crate::warn_empty(&source_name(&args.fold.input), &profile, windowed);
    }
    output.write(render_collapsed(&folded).as_bytes())
}

pub(crate) fn run_flamegraph(args: &FlamegraphArgs) -> Result<()> {
    flamegraph_of(args, None)
}

/// The flame graph `args` ask for, of `loaded` when given (its name: `args.fold.input`).
pub(crate) fn flamegraph_of(args: &FlamegraphArgs, loaded: Option<Loaded>) -> Result<()> {
    // SVG is not for a terminal: without -o there, it goes to a file beside the input.
    let beside = (args.fold.output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .then(|| crate::io::beside(&args.fold.input, "flamegraph", "svg"));
    let output = Output::new(args.fold.output.as_deref().or(beside.as_deref()), &[args.fold.input.as_path()])?;
    // inferno leaves out frames narrower than --min-width percent of the graph; subtrees under
    // half of that are merged into their callers before it sees them. Not when reversed: the
    // graph then merges frames from the leaves, and a light leaf may be heavy there.
    let prune = (!args.reverse).then_some(0.5 * args.min_width / 100.0);
    let Folding { profile, folded, shaped_by, windowed } = folded(&args.fold, prune, Weight::Time, false, loaded)?;
    // An empty profile is not an error (docs/conventions.md, "Empty profiles"): a warning, and a valid SVG
    // that says there is nothing to draw.
    let empty = !folded.tree.has_stacks();
    if empty {
        crate::warn_empty(&source_name(&args.fold.input), &profile, windowed);
    }
    let title = args.title.clone().unwrap_or_else(|| default_title(&args.fold, &profile, &folded));
    let mut shaped_by = shaped_by;
    if args.reverse {
        shaped_by.push("reversed: callers above callees".to_owned());
    }
    let mut options = FlameOptions::default();
    options.title = title;
    options.subtitle = shaped_by.join(" · ");
    options.width = usize::try_from(args.width).ok();
    options.min_width = Some(args.min_width);
    options.inverted = args.inverted;
    options.reverse = args.reverse;
    options.pretty = args.pretty_xml;
    let sample_name = if profile.meta.format == SourceFormat::TickLog { "ticks" } else { "samples" };
    sample_name.clone_into(&mut options.sample_name);
    let svg = if empty {
        render_empty_flamegraph(&options)
    } else {
        render_flamegraph(&folded, &options).map_err(|e| anyhow::anyhow!("cannot draw the flame graph: {e}"))?
    };
    output.write(&svg)?;
    if let Some(path) = beside {
        crate::say(&format!(
            "flame graph written to {} (open it in a browser; -o - writes it to stdout)",
            path.display()
        ));
    }
    Ok(())
}

/// The profile, folded as the arguments say, and the options that shaped it (for a subtitle).
/// A folded profile and what shaped it.
struct Folding {
    profile: Profile,
    folded: Folded,
    /// The options that shaped the graph, for a subtitle.
    shaped_by: Vec<String>,
    /// Whether its samples were cut to a time window.
    windowed: bool,
}

/// `default_weight` applies when `--weight` is not given (tick logs always default to ticks).
/// The profile folded as `args` say; `read_back`: labels for folded text (see
/// [`FoldOptions::read_back`]).
/// `loaded`: the profile, read already as `args` say (else read from `args.input`).
fn folded(
    args: &FoldArgs,
    prune_below: Option<f64>,
    default_weight: Weight,
    read_back: bool,
    loaded: Option<Loaded>,
) -> Result<Folding> {
    let filter = stack_filter(&args.filter)?;
    let Loaded { profile, window } = match loaded {
        Some(loaded) => loaded,
        None => load(&args.input, &args.reading, &args.filter, &args.window, args.collapse_recursion)?,
    };
    let ticklog = profile.meta.format == SourceFormat::TickLog;
    let weight = match args.weight {
        Some(WeightArg::Samples) => Weight::Samples,
        Some(WeightArg::Time) => Weight::Time,
        None if ticklog => Weight::Samples,
        None => default_weight,
    };
    let by = match args.by {
        FoldBy::Function => GroupBy::Function,
        FoldBy::File => GroupBy::File,
        FoldBy::Package => GroupBy::Package,
    };
    let mut shaped_by = vec![format!("by {}", by_name(args.by))];
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
    if args.collapse_recursion {
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

fn by_name(by: FoldBy) -> &'static str {
    match by {
        FoldBy::Function => "function",
        FoldBy::File => "file",
        FoldBy::Package => "package",
    }
}

/// `app.cpuprofile · 1.02 s · 952 samples`: the span and the samples drawn.
fn default_title(args: &FoldArgs, profile: &Profile, folded: &Folded) -> String {
    let source = source_name(&args.input);
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
