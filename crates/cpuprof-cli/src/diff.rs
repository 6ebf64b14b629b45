//! `cpuprof diff`: parse both sides in parallel, compare, render, and gate.

use std::path::PathBuf;

use anyhow::Result;
use cpuprof_analysis::{compare_blocks, run_blocks, BlockChange, BlockRule, Bound, RunBlocks};
use cpuprof_analysis::{
    compared_unit, diff, explain, fold, matched_file_names, DiffOptions, DiffReport, FoldOptions, Folded, Gate,
    GateError, GroupBy, Metric, Normalize, Rule, Weight,
};
use cpuprof_model::{Profile, ValueUnit};
use cpuprof_render::time::format_ns;
use cpuprof_render::{
    regression_text, render_diff, render_diff_annotations, render_differential, Checkouts, DiffDocument, FlameOptions,
    Format, Link,
};

use crate::args::{DiffArgs, DiffBy, NormalizeArg, ReportFormatArg};
use crate::input::{source_name, stack_filter, Reader, WindowSpec};
use crate::io::Output;
use crate::usage::UsageError;

/// A significant regression crossed a `--fail-on` threshold (exit code 3).
#[derive(Debug)]
pub(crate) struct GateTripped(pub(crate) String);

impl std::fmt::Display for GateTripped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "regression: {}", self.0)
    }
}

impl std::error::Error for GateTripped {}

/// The `--fail-on` rules: the gate on functions, and the rules on event-loop blocks.
fn parse_gate(rules: &[String]) -> Result<(Gate, Vec<BlockRule>)> {
    let (block, function): (Vec<&String>, Vec<&String>) = rules.iter().partition(|r| r.starts_with("block:"));
    let usage = |e: cpuprof_analysis::RuleError| UsageError(format!("--fail-on {e}"));
    let function = function.iter().map(|text| text.parse::<Rule>().map_err(usage)).collect::<Result<Vec<_>, _>>()?;
    let block = block.iter().map(|text| text.parse::<BlockRule>().map_err(usage)).collect::<Result<Vec<_>, _>>()?;
    Ok((Gate::new(function), block))
}

/// A `--min-delta` as given.
#[derive(Clone, Copy, Debug, PartialEq)]
enum MinDelta {
    /// Share points (`--normalize share`).
    Points(f64),
    /// Time per run.
    Nanos(f64),
    /// Samples per run (profiles without times).
    Samples(f64),
}

fn parse_min_delta(text: &str, normalize: Normalize) -> Result<MinDelta> {
    let number = |s: &str| cpuprof_model::parse_decimal(s.trim());
    match (normalize, text.strip_suffix("pp")) {
        (Normalize::Share, Some(v)) => number(v).map(MinDelta::Points),
        (Normalize::Time, None) => duration_ns(text).map(MinDelta::Nanos).or_else(|| number(text).map(MinDelta::Samples)),
        _ => None,
    }
    .ok_or_else(|| {
        UsageError(format!(
            "--min-delta {text}: expected a time per run (2ms; samples per run, 5, for profiles without times) with --normalize time, share points (0.5pp) with --normalize share"
        ))
        .into()
    })
}

/// `5ms`, `250us`, `1.5s` → ns (a unit is required).
fn duration_ns(text: &str) -> Option<f64> {
    crate::units::nanoseconds(text, false).map(|ns| ns as f64)
}

/// `FROM..TO` of `--base-window`/`--new-window` (either end open).
fn side_window(flag: &str, text: &str) -> Result<WindowSpec> {
    let error = || {
        UsageError(format!(
            "{flag} {text}: expected FROM..TO, each a time into the recording (1.5s, 250ms), from its end (-2s) or a share of it (90%), either left open (10s..)"
        ))
    };
    let (from, to) = text.split_once("..").ok_or_else(error)?;
    let bound = |t: &str| if t.trim().is_empty() { Ok(None) } else { Bound::parse(t).map(Some).ok_or_else(error) };
    Ok(WindowSpec::Bounds(bound(from)?, bound(to)?))
}

/// The two windows of one profile that `--base-window`/`--new-window` or `--base-phase`/
/// `--new-phase` compare, with their labels; `None` when none is given.
fn phase_sides(args: &DiffArgs) -> Result<Option<[(WindowSpec, String); 2]>> {
    let side = |window: &Option<String>,
                phase: &Option<String>,
                flags: (&str, &str)|
     -> Result<Option<(WindowSpec, String)>> {
        match (window, phase) {
            (Some(w), _) => Ok(Some((side_window(flags.0, w)?, w.clone()))),
            (None, Some(p)) => Ok(Some((WindowSpec::Phase(p.clone()), format!("phase {p}")))),
            (None, None) => Ok(None),
        }
    };
    let base = side(&args.base_window, &args.base_phase, ("--base-window", "--base-phase"))?;
    let new = side(&args.new_window, &args.new_phase, ("--new-window", "--new-phase"))?;
    match (base, new) {
        (None, None) => Ok(None),
        (Some(b), Some(n)) => {
            if args.window.from.is_some()
                || args.window.to.is_some()
                || args.window.phase.is_some()
                || !args.window.between.is_empty()
            {
                return Err(UsageError("--base-window/--new-window (or the phases) are the windows: leave out --from, --to, --between and --phase".to_owned()).into());
            }
            Ok(Some([b, n]))
        }
        _ => Err(UsageError(
            "give both sides' windows: --base-window and --new-window (or --base-phase and --new-phase)".to_owned(),
        )
        .into()),
    }
}

/// `cpuprof diff`: the request checked, the outputs claimed (before any input is read), both
/// sides read and compared, then the report, its files and the gate's verdict.
pub(crate) fn run_diff(args: &DiffArgs) -> Result<()> {
    let mut request = request(args)?;
    let outputs = claim_outputs(args, &request)?;
    let sides = read_sides(args, &request)?;
    let compared = compare(args, &mut request, &sides)?;
    present(args, &request, &sides, compared, outputs)
}

/// A diff as asked: the sides' files, and the options checked and read.
struct DiffRequest {
    base: Vec<PathBuf>,
    new: Vec<PathBuf>,
    /// Two phases of one profile compared (`--base-window`/`--new-window`, or its phases).
    phases: Option<[(WindowSpec, String); 2]>,
    gate: Gate,
    block_rules: Vec<BlockRule>,
    /// Whether the samples' times are read (for event-loop blocks).
    with_blocks: bool,
    normalize: Normalize,
    link: Option<Link>,
    min_delta: Option<MinDelta>,
    options: DiffOptions,
}

impl DiffRequest {
    /// Every input, base then new.
    fn inputs(&self) -> Vec<&PathBuf> {
        self.base.iter().chain(&self.new).collect()
    }
}

/// The outputs of a diff: the report, and the flame graph and page when asked.
struct Outputs {
    output: Output,
    svg: Option<Output>,
    html: Option<Output>,
}

/// Both sides read: every run's profile (base first) and its event-loop blocks when asked.
struct Sides {
    profiles: Vec<Profile>,
    run_blocks: Vec<Option<RunBlocks>>,
    base_len: usize,
}

impl Sides {
    fn refs(&self) -> (Vec<&Profile>, Vec<&Profile>) {
        let (base, new) = self.profiles.split_at(self.base_len);
        (base.iter().collect(), new.iter().collect())
    }
}

/// What the comparison found, with what names the sides.
struct Compared {
    report: DiffReport,
    base_sources: Vec<String>,
    new_sources: Vec<String>,
    explanations: Vec<cpuprof_analysis::Explanation>,
    block_change: Option<BlockChange>,
}

/// The command line checked and read into a request (usage errors here, before anything is read).
fn request(args: &DiffArgs) -> Result<DiffRequest> {
    if args.output.format == ReportFormatArg::Brief {
        return Err(brief_refused().into());
    }
    let phases = phase_sides(args)?;
    let (base, new) = match (args.pair.as_slice(), args.base.is_empty(), args.new.is_empty(), &phases) {
        ([file], true, true, Some(_)) => (vec![file.clone()], vec![file.clone()]),
        (_, _, _, Some(_)) => {
            return Err(UsageError(
                "--base-window/--new-window (or the phases) compare two windows of one profile: give one FILE"
                    .to_owned(),
            )
            .into())
        }
        ([b, n], true, true, None) => (vec![b.clone()], vec![n.clone()]),
        ([], false, false, None) => (args.base.clone(), args.new.clone()),
        _ => return Err(UsageError("give BASE and NEW, or --base FILE… and --new FILE…".to_owned()).into()),
    };
    let (gate, block_rules) = parse_gate(&args.fail_on)?;
    // Blocks need the samples' times, read only when asked for (they cost time on large profiles).
    let with_blocks = args.blocks || !block_rules.is_empty() || phases.is_some();
    let normalize = match args.normalize {
        NormalizeArg::Time => Normalize::Time,
        NormalizeArg::Share => Normalize::Share,
    };
    let metric: Metric = args.sort.into();
    let link = args
        .link
        .as_deref()
        .map(|template| {
            let web = template.starts_with("https://") || template.starts_with("http://");
            if !web || !template.contains("{path}") {
                return Err(UsageError(format!(
                    "--link {}: expected an http(s) URL with {{path}} (and {{line}}), e.g. https://github.com/o/r/blob/REV/{{path}}#L{{line}}",
                    cpuprof_render::text::visible(template)
                )));
            }
            Ok(Link { template: template.to_owned() })
        })
        .transpose()?;
    let min_delta = args.min_delta.as_deref().map(|t| parse_min_delta(t, normalize)).transpose()?;
    let mut options =
        DiffOptions::new(normalize, metric, cpuprof_analysis::defaults::ALPHA, stack_filter(&args.filter)?);
    options.base_root.clone_from(&args.base_root);
    if args.by == DiffBy::Line {
        if args.explain.is_some() {
            return Err(UsageError("--explain explains functions: leave out --by line".to_owned()).into());
        }
        options.by = GroupBy::Line;
    }
    options.new_root.clone_from(&args.new_root);
    for pair in &args.map {
        let Some((old, new)) = pair.split_once('=').filter(|(o, n)| !o.is_empty() && !n.is_empty()) else {
            return Err(UsageError(format!(
                "--map {}: expected OLD=NEW, a base script and the new script it became (bench-v1.js=bench-v2.js)",
                cpuprof_render::text::visible(pair)
            ))
            .into());
        };
        options.script_pairs.push((old.to_owned(), new.to_owned()));
    }
    Ok(DiffRequest { base, new, phases, gate, block_rules, with_blocks, normalize, link, min_delta, options })
}

/// Claims every output of the diff, refusing any that is an input or the job summary.
fn claim_outputs(args: &DiffArgs, request: &DiffRequest) -> Result<Outputs> {
    let inputs = request.inputs();
    let input_paths: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    let output = Output::new(args.output.output.as_deref(), &input_paths)?;
    if args.output.format == ReportFormatArg::Github {
        if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            let summary = std::path::Path::new(&summary);
            crate::io::refuse_appending_to_input(summary, "GITHUB_STEP_SUMMARY", &input_paths)?;
            let outputs = [
                ("-o", args.output.output.as_deref()),
                ("--flamegraph", args.flamegraph.as_deref()),
                ("--report", args.report.as_deref()),
            ];
            if let Some((flag, _)) = outputs.iter().find(|(_, o)| o.is_some_and(|o| crate::io::same_file(o, summary))) {
                return Err(UsageError(format!(
                    "{flag} names the job summary file (GITHUB_STEP_SUMMARY), which --format github adds the report to"
                ))
                .into());
            }
        }
    }
    let svg_output = args.flamegraph.as_deref().map(|svg| Output::new(Some(svg), &input_paths)).transpose()?;
    let html_output = args.report.as_deref().map(|html| Output::new(Some(html), &input_paths)).transpose()?;
    Ok(Outputs { output, svg: svg_output, html: html_output })
}

/// A run as read: its profile and, when asked for, its blocks.
type ReadRun = (Profile, Option<RunBlocks>);

/// Reads every run of both sides, each on its own thread.
fn read_sides(args: &DiffArgs, request: &DiffRequest) -> Result<Sides> {
    // Every input is parsed on its own thread.
    // Tiers are merged whatever the flag says: diff matches functions across them.
    // A side with its own source maps means both sides are mapped.
    let source_maps =
        args.reading.source_maps || args.base_source_map_dir.is_some() || args.new_source_map_dir.is_some();
    let reading = crate::args::InputArgs { split_tiers: false, source_maps, ..args.reading.clone() };
    // One reader (and map cache) per side when the sides have their own source maps: two
    // builds recorded at the same path have different maps under the same script url.
    let side_reader = |flag: &str, dir: &Option<PathBuf>| match dir {
        Some(dir) => Reader::with_source_map_dir(&reading, flag, dir).map(Some),
        None => Ok(None),
    };
    let shared = Reader::new(&reading)?;
    let base_reader = side_reader("--base-source-map-dir", &args.base_source_map_dir)?;
    let new_reader = side_reader("--new-source-map-dir", &args.new_source_map_dir)?;
    let inputs = request.inputs();
    let base = &request.base;
    let (phases, with_blocks) = (&request.phases, request.with_blocks);
    let readers: Vec<&Reader> = (0..inputs.len())
        .map(|i| if i < base.len() { base_reader.as_ref() } else { new_reader.as_ref() }.unwrap_or(&shared))
        .collect();
    let bounds = crate::input::window_bounds(&args.window)?;
    let windows: Vec<Option<&WindowSpec>> = match &phases {
        Some([b, n]) => vec![Some(&b.0), Some(&n.0)],
        None => vec![bounds.as_ref(); inputs.len()],
    };
    // Each run's blocks are measured as recorded, before a window's times are scaled.
    // What each input's reading says is said in the inputs' order once all are read.
    let profiles: Vec<crate::warnings::Held<Result<ReadRun>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = inputs
            .iter()
            .zip(readers)
            .zip(windows)
            .map(|((path, reader), window)| {
                let per_second = phases.is_some();
                scope.spawn(move || {
                    crate::warnings::held(|| {
                        let mut profile = reader
                            .load(path, with_blocks, window)
                            .and_then(|p| crate::input::hide_frames(p, &args.filter, path))?;
                        crate::input::cut_to_window(&mut profile, window, path)?;
                        let blocks = if with_blocks { run_blocks(&profile, DEFAULT_BLOCK_MIN_NS) } else { None };
                        if per_second {
                            per_second_of_window(&mut profile);
                        }
                        Ok((profile, blocks))
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| (Err(anyhow::anyhow!("a parser thread failed")), Vec::new())))
            .collect()
    });
    let profiles: Vec<Result<ReadRun>> = profiles
        .into_iter()
        .map(|(read, held)| {
            for message in held {
                crate::warnings::Said::current().warn_now(&message);
            }
            read
        })
        .collect();
    let (profiles, run_blocks): (Vec<Profile>, Vec<Option<RunBlocks>>) =
        profiles.into_iter().collect::<Result<Vec<_>>>()?.into_iter().unzip();
    let formats: std::collections::BTreeSet<&str> = profiles.iter().map(|p| p.meta.format.as_str()).collect();
    if formats.len() > 1 {
        crate::warn(&format!(
            "comparing different formats ({}): their time attribution differs, so small changes mean little",
            formats.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(Sides { profiles, run_blocks, base_len: base.len() })
}

/// Compares the sides: the report, checked (no empty side, time per run where compared), its
/// warnings said, the explanations and the blocks' change.
fn compare(args: &DiffArgs, request: &mut DiffRequest, sides: &Sides) -> Result<Compared> {
    let (base_refs, new_refs) = sides.refs();
    let (with_blocks, normalize, min_delta) = (request.with_blocks, request.normalize, request.min_delta);
    let DiffRequest { base, new, phases, gate, block_rules, options, .. } = request;
    let unit = compared_unit(&base_refs, &new_refs);
    // Counts are compared when a profile has no times, so a time means nothing.
    gate.check_unit(unit).map_err(|e| UsageError(format!("--fail-on {e}")))?;
    options.min_delta = match (min_delta, unit) {
        (None, _) => 0.0,
        (Some(MinDelta::Points(v)), _) | (Some(MinDelta::Nanos(v)), Weight::Time) | (Some(MinDelta::Samples(v)), Weight::Samples) => v,
        (Some(MinDelta::Nanos(_)), _) => {
            return Err(UsageError(format!(
                "--min-delta {}: a profile has no times (folded stacks), so the comparison is by sample counts: give samples per run (5)",
                args.min_delta.as_deref().unwrap_or_default()
            ))
            .into())
        }
        (Some(MinDelta::Samples(_)), _) => {
            return Err(UsageError(format!(
                "--min-delta {}: expected a time per run with a unit (2ms)",
                args.min_delta.as_deref().unwrap_or_default()
            ))
            .into())
        }
    };
    let report = diff(&base_refs, &new_refs, options);
    if let Some(((old, new), why)) = report.unused_script_pairs.first() {
        return Err(UsageError(format!(
            "--map {}={}: {}",
            cpuprof_render::text::visible(old),
            cpuprof_render::text::visible(new),
            cpuprof_render::text::visible(why)
        ))
        .into());
    }
    // A side without samples compares nothing: every function would be new or gone, and a
    // gate would pass on nothing at all.
    let empty: Vec<String> = base
        .iter()
        .zip(&report.base.run_samples)
        .chain(new.iter().zip(&report.new.run_samples))
        .filter(|(_, samples)| **samples == 0)
        .map(|(path, _)| source_name(path))
        .collect();
    // Bad input (exit 1), not a bad command line: the same command is right for other files.
    if !empty.is_empty() {
        return Err(anyhow::anyhow!(
            "{}: no samples to compare{}; a diff needs samples in every run on both sides",
            empty.join(", "),
            if args.filter.focus.is_some() || args.filter.ignore.is_some() { " after the filters" } else { "" }
        ));
    }
    // Samples without time (every interval 0) weigh nothing per run: no change could be tested.
    let timeless: Vec<&str> = [("base", &report.base), ("new", &report.new)]
        .into_iter()
        .filter(|(_, side)| report.unit == Weight::Time && normalize == Normalize::Time && side.busy_per_run <= 0.0)
        .map(|(name, _)| name)
        .collect();
    if !timeless.is_empty() {
        return Err(UsageError(format!(
            "the {} side has samples but no time (every sampling interval is 0), so time per run cannot be compared: check the recording, or compare shares (--normalize share)",
            timeless.join(" and ")
        ))
        .into());
    }
    if let Err(e) = gate.check(&report) {
        return Err(UsageError(match e {
            GateError::Untested
                if base_refs.iter().chain(&new_refs).any(|p| p.value_types.len() > 1 && !p.counts_samples()) =>
            {
                "--fail-on: a profile counts sample records, not samples taken (pprof times without a count type or \
                 a usable period), so no change can be tested for significance and the gate cannot decide"
                    .to_owned()
            }
            GateError::Untested => {
                "--fail-on: a profile's weights are times without sample counts (folded stacks read with \
                 --folded-weight time), so no change can be tested for significance and the gate cannot decide"
                    .to_owned()
            }
            e => format!("--fail-on {e}"),
        })
        .into());
    }
    for warning in &report.warnings {
        crate::warn(warning);
    }
    if let Some(u) = &report.unpaired_scripts {
        crate::warn(&format!(
            "to compare {} with {}: --map {}={}",
            cpuprof_render::text::visible(&u.base),
            cpuprof_render::text::visible(&u.new),
            cpuprof_render::text::visible(&u.base_ending),
            cpuprof_render::text::visible(&u.new_ending)
        ));
    }
    if base.len() == 1 && new.len() == 1 && normalize == Normalize::Time {
        crate::warn(
            "one run per side: only sampling noise is accounted for, not how runs differ (machine load, JIT \
             timing); record several runs per side (--base a b c --new x y z) before trusting small changes",
        );
    }
    let (base_sources, new_sources): (Vec<String>, Vec<String>) = match &phases {
        Some([b, n]) => {
            (vec![format!("{} [{}]", source_name(&base[0]), b.1)], vec![format!("{} [{}]", source_name(&new[0]), n.1)])
        }
        None => (base.iter().map(|p| source_name(p)).collect(), new.iter().map(|p| source_name(p)).collect()),
    };
    if args.explain.is_some() && args.output.format == ReportFormatArg::Csv {
        crate::warn("--explain is not written to CSV (one row per function); use --format table, markdown or json");
    }
    let explanations = args
        .explain
        .map(|n| explain(&base_refs, &new_refs, &report, options, usize::try_from(n).unwrap_or(usize::MAX)))
        .unwrap_or_default();
    let block_change = if with_blocks {
        let runs: Option<Vec<RunBlocks>> = sides.run_blocks.iter().copied().collect();
        let change = runs.map(|mut runs| {
            let new_runs = runs.split_off(base.len());
            compare_blocks(runs, new_runs, cpuprof_analysis::defaults::ALPHA)
        });
        if change.is_none() && block_rules.is_empty() {
            crate::warn(
                "--blocks: a profile has no timeline (pprof, folded stacks), so the event-loop blocks are not compared",
            );
        }
        if !block_rules.is_empty() {
            check_block_gate(change.as_ref(), &base_sources, &new_sources)?;
        }
        change
    } else {
        None
    };
    Ok(Compared { report, base_sources, new_sources, explanations, block_change })
}

/// Writes the report and its files, then gives the gate's verdict.
fn present(args: &DiffArgs, request: &DiffRequest, sides: &Sides, compared: Compared, outputs: Outputs) -> Result<()> {
    let Compared { report, base_sources, new_sources, explanations, block_change } = compared;
    let (base_refs, new_refs) = sides.refs();
    let DiffRequest { gate, block_rules, link, options, .. } = request;
    let Outputs { output, svg: svg_output, html: html_output } = outputs;
    let cwd = crate::terminal::current_dir();
    let svg =
        (svg_output.is_some() || html_output.is_some()).then(|| differential(&base_refs, &new_refs, options, &report));
    if let (None, Some(Err(e))) = (&svg_output, &svg) {
        // The page without its flame graph is still the comparison.
        crate::warn(&format!("the report has no flame graph: {e}"));
    }
    // Every warning said (the readers', the analysis', this command's) is in the report.
    let mut report = report;
    report.warnings = crate::warnings::said();
    let report = report;
    let shown = &report.rows[..args.rows.limit().unwrap_or(usize::MAX).min(report.rows.len())];
    let doc = DiffDocument {
        blocks: block_change.as_ref(),
        base_sources: &base_sources,
        new_sources: &new_sources,
        report: &report,
        rows: shown,
        explanations: &explanations,
        link: link.as_ref(),
        checkouts: &Checkouts { base_root: args.base_root.clone(), new_root: args.new_root.clone() },
        terminal: crate::terminal::terminal(args.output.output.as_deref(), args.output.wide, cwd.as_deref()),
    };
    write_report(&doc, args.output.format, output)?;
    if let (Some(svg_output), Some(svg)) = (svg_output, &svg) {
        match svg {
            Ok(svg) => svg_output.write(svg)?,
            Err(e) => return Err(anyhow::anyhow!("{e}")),
        }
    }
    if let (Some(html_output), Some(svg)) = (html_output, &svg) {
        // The page without its flame graph is still the comparison.
        let svg = svg.as_ref().ok().map(Vec::as_slice);
        let page = diff_page(&doc, &base_refs, &new_refs, options, svg);
        html_output.write(page?.as_bytes())?;
    }

    let mut crossed: Vec<String> = gate
        .decide(&base_refs, &new_refs, options, &report)?
        .iter()
        .map(|c| {
            let rules: Vec<&str> = c.rules.iter().map(Rule::as_str).collect();
            format!("{}, threshold {}", regression_text(&c.row, c.metric, report.unit), rules.join(", "))
        })
        .collect();
    if let Some(change) = &block_change {
        let rules: Vec<&str> = block_rules.iter().filter(|r| r.crosses(change)).map(BlockRule::as_str).collect();
        if !rules.is_empty() {
            crossed.push(format!("{}, threshold {}", block_change_text(change), rules.join(", ")));
        }
    }
    if crossed.is_empty() {
        Ok(())
    } else {
        Err(GateTripped(crossed.join("; ")).into())
    }
}

/// The HTML page of the comparison: every row up to [`REPORT_DIFF_ROWS`], the first changes
/// explained, the differential flame graph `svg`.
///
/// [`REPORT_DIFF_ROWS`]: cpuprof_analysis::defaults::REPORT_DIFF_ROWS
fn diff_page(
    doc: &DiffDocument<'_>,
    base: &[&Profile],
    new: &[&Profile],
    options: &DiffOptions,
    svg: Option<&[u8]>,
) -> Result<String> {
    use cpuprof_analysis::defaults::{REPORT_DIFF_ROWS, REPORT_EXPLAIN};
    let report = doc.report;
    // Explanations are of functions (rows of lines have none).
    let explanations =
        if options.by == GroupBy::Function { explain(base, new, report, options, REPORT_EXPLAIN) } else { Vec::new() };
    let rows = &report.rows[..report.rows.len().min(REPORT_DIFF_ROWS)];
    let doc = DiffDocument { rows, explanations: &explanations, ..*doc };
    let json = cpuprof_render::render_diff_json_line(&doc);
    Ok(cpuprof_report::render_diff_report(&cpuprof_report::DiffPage {
        json: &json,
        base_sources: doc.base_sources,
        new_sources: doc.new_sources,
        rows: report.rows.len(),
        flame_svg: svg,
    })?)
}

/// `--format brief` sums up one profile: not a diff.
fn brief_refused() -> UsageError {
    UsageError("--format brief is for top (one profile); a diff has table, json, csv, markdown and github".to_owned())
}

/// Writes the report in `format`. For GitHub the annotations go to the output and the Markdown
/// report is appended to the job summary (the file `GITHUB_STEP_SUMMARY` names: the runner
/// gives each step its own and collects it, so it is added to, not replaced), or follows the
/// annotations outside Actions.
fn write_report(doc: &DiffDocument<'_>, format: ReportFormatArg, output: Output) -> Result<()> {
    let format = match format {
        ReportFormatArg::Table => Format::Table,
        ReportFormatArg::Json => crate::session::json_format(),
        ReportFormatArg::Csv => Format::Csv,
        ReportFormatArg::Markdown => Format::Markdown,
        ReportFormatArg::Brief => return Err(brief_refused().into()),
        ReportFormatArg::Github => {
            let mut text = render_diff_annotations(doc);
            let markdown = render_diff(doc, Format::Markdown);
            match std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
                Some(summary) => append_summary(std::path::Path::new(&summary), &markdown)?,
                None => text.push_str(&markdown),
            }
            return output.write(text.as_bytes());
        }
    };
    output.write(render_diff(doc, format).as_bytes())
}

/// Appends `markdown` to the job summary file at `path`, after a blank line.
fn append_summary(path: &std::path::Path, markdown: &str) -> Result<()> {
    use std::io::Write as _;
    let shown = cpuprof_render::text::visible(&path.display().to_string());
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| anyhow::anyhow!("GITHUB_STEP_SUMMARY {shown}: cannot open it to add the report: {e}"))?;
    file.write_all(format!("{markdown}\n").as_bytes())
        .map_err(|e| anyhow::anyhow!("GITHUB_STEP_SUMMARY {shown}: cannot add the report: {e}"))
}

/// The shortest block `diff --blocks` compares (as `cpuprof blocks`' default).
const DEFAULT_BLOCK_MIN_NS: i64 = 50_000_000;

/// Whether block rules can decide: every run has a timeline and idle samples (a recording where
/// the loop never waited has no stalls to compare, and a gate must not pass on nothing).
fn check_block_gate(change: Option<&BlockChange>, base: &[String], new: &[String]) -> Result<()> {
    let Some(change) = change else {
        return Err(UsageError(
            "--fail-on block:…: a profile has no timeline (pprof, folded stacks), so it has no event-loop blocks"
                .to_owned(),
        )
        .into());
    };
    let idle_free: Vec<&String> = base
        .iter()
        .zip(&change.base)
        .chain(new.iter().zip(&change.new))
        .filter(|(_, run)| run.idle_samples == 0)
        .map(|(name, _)| name)
        .collect();
    if !idle_free.is_empty() {
        return Err(UsageError(format!(
            "--fail-on block:…: {} has no idle samples (the event loop never waited in the recording), so its blocks are not stalls and the gate cannot decide",
            idle_free.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ))
        .into());
    }
    Ok(())
}

/// `longest event-loop block +104 ms (301 ms → 405 ms)`.
fn block_change_text(change: &BlockChange) -> String {
    let mean = |runs: &[RunBlocks]| {
        (runs.iter().map(|r| r.max_ns as f64).sum::<f64>() / runs.len().max(1) as f64).round() as i64
    };
    format!(
        "longest event-loop block +{} ({} → {})",
        format_ns(change.max_delta_ns.round() as i64),
        format_ns(mean(&change.base)),
        format_ns(mean(&change.new))
    )
}

/// Scales `profile`'s times to one second of its (window's) length, so that windows of
/// different lengths compare as rates.
fn per_second_of_window(profile: &mut Profile) {
    let length = profile.meta.duration_ns.unwrap_or(0);
    if let (Some(k), true) = (profile.value_index(ValueUnit::Nanoseconds), length > 0) {
        profile.samples.scale_values(k, 1_000_000_000, length);
    }
}

/// Both sides folded by function in `unit` (time, or sample counts when a profile has no
/// times), per run or as shares, drawn differentially.
fn differential(base: &[&Profile], new: &[&Profile], options: &DiffOptions, report: &DiffReport) -> Result<Vec<u8>> {
    let (normalize, unit) = (options.normalize, report.unit);
    // One fold per run: the graph adds the runs up, each scaled.
    let fold_side = |profiles: &[&Profile], root: Option<&str>| -> Vec<Folded> {
        let mut folds: Vec<Folded> = profiles
            .iter()
            .map(|p| {
                // Functions move between the versions: frames are `name file`, with files named as
                // diff matches them (below the checkout roots, moved scripts as the new side has them).
                let mut fold_options = FoldOptions::new(GroupBy::Function, unit, options.filter.clone());
                fold_options.without_lines = true;
                fold_options.file_names = Some(matched_file_names(p, root, &report.moved_files));
                fold(p, &fold_options)
            })
            .collect();
        if folds.is_empty() {
            folds.push(fold(base[0], &FoldOptions::default()));
        }
        folds
    };
    let (b, n) = (fold_side(base, options.base_root.as_deref()), fold_side(new, options.new_root.as_deref()));
    let total = |folds: &[Folded]| folds.iter().fold(0i64, |sum, f| sum + f.total);
    let (b_total, n_total) = (total(&b), total(&n));
    let timed = unit == Weight::Time;
    // µs (or samples) per run, or the base scaled to the new side's total (shares).
    let scale = if timed { 1e-3 } else { 1.0 };
    let (base_scale, new_scale) = match normalize {
        Normalize::Time => (scale / base.len() as f64, scale / new.len() as f64),
        Normalize::Share => {
            let ratio = if b_total > 0 { n_total as f64 / b_total as f64 } else { 1.0 };
            (scale * ratio / new.len() as f64, scale / new.len() as f64)
        }
    };
    let mut flame = FlameOptions::default();
    "cpuprof diff: red grew, blue shrank".clone_into(&mut flame.title);
    let per_run = if timed { "µs per run" } else { "samples per run" };
    let widths = match normalize {
        Normalize::Time => format!("widths: new, {per_run}"),
        Normalize::Share => format!("widths: new, {per_run} · base scaled to the same total (shares)"),
    };
    flame.subtitle = format!(
        "{widths} · colour: the table's verdict (significant changes only) · [total ±x%]: callees' change · (only in base): at base width"
    );
    (if timed { "µs" } else { "samples" }).clone_into(&mut flame.sample_name);
    render_differential(&b, &n, base_scale, new_scale, &report.rows, &flame)
        .map_err(|e| anyhow::anyhow!("cannot draw the flame graph: {e}"))
}
