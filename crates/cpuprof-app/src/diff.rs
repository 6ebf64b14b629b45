//! `diff`: what changed between two profiles, or two sets of runs, or two windows of one; the
//! significance of each change, where it came from (`explain`), the event-loop blocks, and the
//! CI gate's verdict.

use std::path::PathBuf;

use anyhow::Result;
use cpuprof_analysis::{compare_blocks, run_blocks, BlockChange, BlockRule, Bound, RunBlocks};
use cpuprof_analysis::{
    compared_unit, diff, explain, fold, matched_file_names, without_tiers, DiffOptions, DiffReport, FoldOptions,
    Folded, Gate, GateError, GroupBy, Metric, Normalize, RowTiers, Rule, Weight,
};
use cpuprof_model::{Profile, ValueUnit};
use cpuprof_render::time::format_ns;
use cpuprof_render::{regression_text, render_differential, Checkouts, DiffDocument, FlameOptions, Link, Terminal};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::input::{source_name, stack_filter, Reader, WindowSpec};
use crate::top::Rows;
use crate::{spelled, FilterOptions, ReadOptions, UsageError, WindowOptions};

/// What a row of a diff stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiffBy {
    /// A function: name and file (same-named functions of a file paired by nearest line).
    #[default]
    Function,
    /// A source line within a function (.cpuprofile positionTicks; total equals self).
    Line,
}

/// `diff`: what changed.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct DiffRequest {
    /// BASE and NEW profiles (one run each); or base and new
    pub pair: Vec<PathBuf>,
    /// Base runs (several runs of the same work)
    pub base: Vec<PathBuf>,
    /// New runs
    pub new: Vec<PathBuf>,
    /// Compare time per run (fixed work: benchmarks, tests) or share of busy time (fixed duration)
    pub normalize: Normalize,
    /// Rank and decide by self or total time
    pub sort: Metric,
    /// What a row stands for: a function, or a line of one
    pub by: DiffBy,
    #[serde(flatten)]
    pub rows: Rows,
    /// Count a change smaller than this as unchanged: a time per run (2ms), share points (0.5pp)
    /// with normalize share, or samples per run (5) for profiles without times
    pub min_delta: Option<String>,
    /// For the N first changed functions, say where the change came from (callers, callees, inlining)
    #[schemars(range(min = 1))]
    pub explain: Option<u64>,
    /// Markdown: each location a link to the source, from an http(s) template with {path} and {line}
    pub link: Option<String>,
    /// The gate: a significant regression crossing METRIC:THRESHOLD (self or total; +2pp, +20%,
    /// +5ms; block:+50ms) fails it
    pub fail_on: Vec<String>,
    /// Also compare the event-loop blocks (reads the samples' times)
    pub blocks: bool,
    /// Source maps of the base build: scripts and maps in this folder; implies source_maps
    pub base_source_map_dir: Option<PathBuf>,
    /// Source maps of the new build; implies source_maps
    pub new_source_map_dir: Option<PathBuf>,
    /// The base build's checkout folder as the profiles name it: scripts matched by their path below it
    pub base_root: Option<String>,
    /// The new build's checkout folder, as base_root
    pub new_root: Option<String>,
    /// Pair a base script with the new script it became: OLD=NEW, each a path or its ending
    pub map: Vec<String>,
    #[serde(flatten)]
    pub filter: FilterOptions,
    #[serde(flatten)]
    pub window: WindowOptions,
    /// Compare two windows of one profile: the base side's (FROM..TO, either open: 0s..2s, 10s..)
    pub base_window: Option<String>,
    /// The new side's window of the profile (as base_window)
    pub new_window: Option<String>,
    /// Compare two phases of one profile: the base side's, by number or label (1, startup)
    pub base_phase: Option<String>,
    /// The new side's phase (as base_phase: 2, steady)
    pub new_phase: Option<String>,
    #[serde(flatten)]
    pub reading: ReadOptions,
}

/// The gate's rules: the gate on functions, and the rules on event-loop blocks.
fn parse_gate(rules: &[String]) -> Result<(Gate, Vec<BlockRule>)> {
    let (block, function): (Vec<&String>, Vec<&String>) = rules.iter().partition(|r| r.starts_with("block:"));
    let usage = |e: cpuprof_analysis::RuleError| UsageError(format!("{} {e}", spelled("fail_on")));
    let function = function.iter().map(|text| text.parse::<Rule>().map_err(usage)).collect::<Result<Vec<_>, _>>()?;
    let block = block.iter().map(|text| text.parse::<BlockRule>().map_err(usage)).collect::<Result<Vec<_>, _>>()?;
    Ok((Gate::new(function), block))
}

/// A diff's request checked (usage errors here, before anything is read): the sides' files and
/// the options read.
pub struct Checked {
    base: Vec<PathBuf>,
    new: Vec<PathBuf>,
    /// Two phases of one profile compared (base/new windows, or its phases).
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

impl Checked {
    /// Every input, base then new.
    pub fn inputs(&self) -> Vec<&PathBuf> {
        self.base.iter().chain(&self.new).collect()
    }
}

/// What the front end will show of a diff, beyond its report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shown {
    /// The differential flame graph (an SVG of its own).
    pub flamegraph: bool,
    /// The HTML page.
    pub page: bool,
    /// The report is CSV (which has no room for explanations).
    pub csv: bool,
}

/// Both sides read: every run's profile (base first) and its event-loop blocks when asked.
struct Sides {
    profiles: Vec<Profile>,
    run_blocks: Vec<Option<RunBlocks>>,
    /// Each run's sample tiers, when read with their JIT records (for explanations), else empty.
    row_tiers: Vec<RowTiers>,
    base_len: usize,
}

impl Sides {
    fn refs(&self) -> (Vec<&Profile>, Vec<&Profile>) {
        let (base, new) = self.profiles.split_at(self.base_len);
        (base.iter().collect(), new.iter().collect())
    }

    /// Each side's runs' sample tiers (empty when not read with them).
    fn tiers(&self) -> [&[RowTiers]; 2] {
        if self.row_tiers.is_empty() {
            return [&[], &[]];
        }
        let (base, new) = self.row_tiers.split_at(self.base_len);
        [base, new]
    }
}

/// `diff`'s answer: the report and what it was read from, and the gate's verdict.
pub struct DiffAnswer {
    sides: Sides,
    pub report: DiffReport,
    pub base_sources: Vec<String>,
    pub new_sources: Vec<String>,
    pub explanations: Vec<cpuprof_analysis::Explanation>,
    pub block_change: Option<BlockChange>,
    pub link: Option<Link>,
    pub checkouts: Checkouts,
    pub limit: Option<usize>,
    options: DiffOptions,
    /// The differential flame graph, when shown (the page without it is still the comparison).
    pub flame_svg: Option<Result<Vec<u8>, String>>,
    /// What crossed the gate's thresholds: none when it passed (or there is no gate).
    pub crossed: Vec<String>,
}

impl DiffAnswer {
    /// The report to render, on `terminal`.
    pub fn document<'a>(&'a self, terminal: Terminal<'a>) -> DiffDocument<'a> {
        let shown = &self.report.rows[..self.limit.unwrap_or(usize::MAX).min(self.report.rows.len())];
        DiffDocument {
            blocks: self.block_change.as_ref(),
            base_sources: &self.base_sources,
            new_sources: &self.new_sources,
            report: &self.report,
            rows: shown,
            explanations: &self.explanations,
            link: self.link.as_ref(),
            checkouts: &self.checkouts,
            terminal,
        }
    }

    /// The HTML page of the comparison (with the flame graph when it was drawn).
    pub fn page(&self, doc: &DiffDocument<'_>) -> Result<String> {
        let (base, new) = self.sides.refs();
        let svg = self.flame_svg.as_ref().and_then(|s| s.as_ref().ok()).map(Vec::as_slice);
        diff_page(doc, &base, &new, self.sides.tiers(), &self.options, svg)
    }
}

impl DiffRequest {
    /// Checks the request and reads its options (usage errors, before anything is read).
    pub fn check(&self) -> Result<Checked> {
        let phases = self.phase_sides()?;
        let (base, new) = match (self.pair.as_slice(), self.base.is_empty(), self.new.is_empty(), &phases) {
            ([file], true, true, Some(_)) => (vec![file.clone()], vec![file.clone()]),
            (_, _, _, Some(_)) => {
                return Err(UsageError(format!(
                    "{}/{} (or the phases) compare two windows of one profile: give one FILE",
                    spelled("base_window"),
                    spelled("new_window")
                ))
                .into())
            }
            ([b, n], true, true, None) => (vec![b.clone()], vec![n.clone()]),
            ([], false, false, None) => (self.base.clone(), self.new.clone()),
            _ => {
                return Err(UsageError(format!(
                    "give BASE and NEW, or {} FILE… and {} FILE…",
                    spelled("base"),
                    spelled("new")
                ))
                .into())
            }
        };
        let (gate, block_rules) = parse_gate(&self.fail_on)?;
        // Blocks need the samples' times, read only when asked for (they cost time on large profiles).
        let with_blocks = self.blocks || !block_rules.is_empty() || phases.is_some();
        let normalize = self.normalize;
        let link = self
            .link
            .as_deref()
            .map(|template| {
                let web = template.starts_with("https://") || template.starts_with("http://");
                if !web || !template.contains("{path}") {
                    return Err(UsageError(format!(
                        "{} {}: expected an http(s) URL with {{path}} (and {{line}}), e.g. https://github.com/o/r/blob/REV/{{path}}#L{{line}}",
                        spelled("link"),
                        cpuprof_render::text::visible(template)
                    )));
                }
                Ok(Link { template: template.to_owned() })
            })
            .transpose()?;
        let min_delta = self.min_delta.as_deref().map(|t| parse_min_delta(t, normalize)).transpose()?;
        let mut options =
            DiffOptions::new(normalize, self.sort, cpuprof_analysis::defaults::ALPHA, stack_filter(&self.filter)?);
        options.base_root.clone_from(&self.base_root);
        if self.by == DiffBy::Line {
            if self.explain.is_some() {
                return Err(UsageError(format!(
                    "{} explains functions: leave out {} line",
                    spelled("explain"),
                    spelled("by")
                ))
                .into());
            }
            options.by = GroupBy::Line;
        }
        if self.explain == Some(0) {
            return Err(UsageError(format!("{} 0: expected at least 1 function", spelled("explain"))).into());
        }
        self.rows.check()?;
        self.window.check()?;
        self.reading.check()?;
        options.new_root.clone_from(&self.new_root);
        for pair in &self.map {
            let Some((old, new)) = pair.split_once('=').filter(|(o, n)| !o.is_empty() && !n.is_empty()) else {
                return Err(UsageError(format!(
                    "{} {}: expected OLD=NEW, a base script and the new script it became (bench-v1.js=bench-v2.js)",
                    spelled("map"),
                    cpuprof_render::text::visible(pair)
                ))
                .into());
            };
            options.script_pairs.push((old.to_owned(), new.to_owned()));
        }
        Ok(Checked { base, new, phases, gate, block_rules, with_blocks, normalize, link, min_delta, options })
    }

    /// The two windows of one profile that base/new windows or phases compare, with their
    /// labels; `None` when none is given.
    fn phase_sides(&self) -> Result<Option<[(WindowSpec, String); 2]>> {
        if self.base_window.is_some() && self.base_phase.is_some() {
            return Err(UsageError(format!(
                "{} cannot be used with {}",
                spelled("base_window"),
                spelled("base_phase")
            ))
            .into());
        }
        if self.new_window.is_some() && self.new_phase.is_some() {
            return Err(
                UsageError(format!("{} cannot be used with {}", spelled("new_window"), spelled("new_phase"))).into()
            );
        }
        let side =
            |window: &Option<String>, phase: &Option<String>, field: &str| -> Result<Option<(WindowSpec, String)>> {
                match (window, phase) {
                    (Some(w), _) => Ok(Some((side_window(field, w)?, w.clone()))),
                    (None, Some(p)) => Ok(Some((WindowSpec::Phase(p.clone()), format!("phase {p}")))),
                    (None, None) => Ok(None),
                }
            };
        let base = side(&self.base_window, &self.base_phase, "base_window")?;
        let new = side(&self.new_window, &self.new_phase, "new_window")?;
        let w = &self.window;
        match (base, new) {
            (None, None) => Ok(None),
            (Some(b), Some(n)) => {
                if w.from.is_some() || w.to.is_some() || w.phase.is_some() || !w.between.is_empty() {
                    return Err(UsageError(format!(
                        "{}/{} (or the phases) are the windows: leave out {}, {}, {} and {}",
                        spelled("base_window"),
                        spelled("new_window"),
                        spelled("from"),
                        spelled("to"),
                        spelled("between"),
                        spelled("phase")
                    ))
                    .into());
                }
                Ok(Some([b, n]))
            }
            _ => Err(UsageError(format!(
                "give both sides' windows: {} and {} (or {} and {})",
                spelled("base_window"),
                spelled("new_window"),
                spelled("base_phase"),
                spelled("new_phase")
            ))
            .into()),
        }
    }
}

impl Checked {
    /// Reads both sides, compares them and decides the gate, with what `shown` will show.
    pub fn execute(self, request: &DiffRequest, shown: Shown) -> Result<DiffAnswer> {
        let sides = read_sides(request, &self, shown)?;
        compare(request, self, sides, shown)
    }
}

/// A `min_delta` as given.
#[derive(Clone, Copy, Debug, PartialEq)]
enum MinDelta {
    /// Share points (normalize share).
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
        let (flag, normalize) = (spelled("min_delta"), spelled("normalize"));
        UsageError(format!(
            "{flag} {text}: expected a time per run (2ms; samples per run, 5, for profiles without times) with {normalize} time, share points (0.5pp) with {normalize} share"
        ))
        .into()
    })
}

/// `5ms`, `250us`, `1.5s` → ns (a unit is required).
fn duration_ns(text: &str) -> Option<f64> {
    cpuprof_analysis::parse_duration_ns(text, false).map(|ns| ns as f64)
}

/// `FROM..TO` of base/new windows (either end open).
fn side_window(field: &str, text: &str) -> Result<WindowSpec> {
    let error = || {
        UsageError(format!(
            "{} {text}: expected FROM..TO, each a time into the recording (1.5s, 250ms), from its end (-2s) or a share of it (90%), either left open (10s..)",
            spelled(field)
        ))
    };
    let (from, to) = text.split_once("..").ok_or_else(error)?;
    let bound = |t: &str| if t.trim().is_empty() { Ok(None) } else { Bound::parse(t).map(Some).ok_or_else(error) };
    Ok(WindowSpec::Bounds(bound(from)?, bound(to)?))
}

/// A run as read: its profile, when asked for its blocks, and its samples' tiers.
type ReadRun = (Profile, Option<RunBlocks>, RowTiers);

/// Reads every run of both sides, each on its own thread.
fn read_sides(args: &DiffRequest, request: &Checked, shown: Shown) -> Result<Sides> {
    // Every input is parsed on its own thread.
    // Tiers are merged whatever the flag says: diff matches functions across them.
    // A side with its own source maps means both sides are mapped.
    let source_maps =
        args.reading.source_maps || args.base_source_map_dir.is_some() || args.new_source_map_dir.is_some();
    // Explanations name what V8 did differently: tick logs are read with their JIT records
    // (tiers apart, folded back after reading with each sample's tier kept beside).
    let with_jit = (args.explain.is_some() || shown.page) && request.options.by == GroupBy::Function;
    let reading = ReadOptions { split_tiers: false, source_maps, jit: with_jit, ..args.reading.clone() };
    // One reader (and map cache) per side when the sides have their own source maps: two
    // builds recorded at the same path have different maps under the same script url.
    let side_reader = |flag: &str, dir: &Option<PathBuf>| match dir {
        Some(dir) => Reader::with_source_map_dir(&reading, flag, dir).map(Some),
        None => Ok(None),
    };
    let shared = Reader::new(&reading)?;
    let base_reader = side_reader("base_source_map_dir", &args.base_source_map_dir)?;
    let new_reader = side_reader("new_source_map_dir", &args.new_source_map_dir)?;
    let inputs = request.inputs();
    let base = &request.base;
    let (phases, with_blocks) = (&request.phases, request.with_blocks);
    let readers: Vec<&Reader> = (0..inputs.len())
        .map(|i| if i < base.len() { base_reader.as_ref() } else { new_reader.as_ref() }.unwrap_or(&shared))
        .collect();
    let bounds = crate::input::window_bounds(&args.window)?;
    let filter = &args.filter;
    let windows: Vec<Option<&WindowSpec>> = match &phases {
        Some([b, n]) => vec![Some(&b.0), Some(&n.0)],
        None => vec![bounds.as_ref(); inputs.len()],
    };
    // Each run's blocks are measured as recorded, before a window's times are scaled.
    // What each input's reading says is said in the inputs' order once all are read.
    let profiles: Vec<crate::said::Held<Result<ReadRun>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = inputs
            .iter()
            .zip(readers)
            .zip(windows)
            .map(|((path, reader), window)| {
                let per_second = phases.is_some();
                scope.spawn(move || {
                    crate::said::held(|| {
                        let mut profile = reader
                            .load(path, with_blocks, window)
                            .and_then(|p| crate::input::hide_frames(p, filter, path))?;
                        crate::input::cut_to_window(&mut profile, window, path)?;
                        let (mut profile, tiers) = if with_jit {
                            without_tiers(profile).map_err(|e| {
                                anyhow::anyhow!("{}: cannot fold the tiers of its functions: {e}", source_name(path))
                            })?
                        } else {
                            (profile, Vec::new())
                        };
                        let blocks = if with_blocks { run_blocks(&profile, DEFAULT_BLOCK_MIN_NS) } else { None };
                        if per_second {
                            per_second_of_window(&mut profile);
                        }
                        Ok((profile, blocks, tiers))
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
                crate::said::Said::current().warn_now(&message);
            }
            read
        })
        .collect();
    let mut read = profiles.into_iter().collect::<Result<Vec<_>>>()?;
    let row_tiers: Vec<RowTiers> =
        if with_jit { read.iter_mut().map(|r| std::mem::take(&mut r.2)).collect() } else { Vec::new() };
    let (profiles, run_blocks): (Vec<Profile>, Vec<Option<RunBlocks>>) = read.into_iter().map(|r| (r.0, r.1)).unzip();
    let formats: std::collections::BTreeSet<&str> = profiles.iter().map(|p| p.meta.format.as_str()).collect();
    if formats.len() > 1 {
        crate::warn(&format!(
            "comparing different formats ({}): their time attribution differs, so small changes mean little",
            formats.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(Sides { profiles, run_blocks, row_tiers, base_len: base.len() })
}

/// Compares the sides: the report, checked (no empty side, time per run where compared), its
/// warnings said, the explanations and the blocks' change.
fn compare(args: &DiffRequest, request: Checked, sides: Sides, shown: Shown) -> Result<DiffAnswer> {
    let (base_refs, new_refs) = sides.refs();
    let (with_blocks, normalize, min_delta) = (request.with_blocks, request.normalize, request.min_delta);
    let Checked { base, new, phases, gate, block_rules, mut options, link, .. } = request;
    let options = &mut options;
    let unit = compared_unit(&base_refs, &new_refs);
    // Counts are compared when a profile has no times, so a time means nothing.
    gate.check_unit(unit).map_err(|e| UsageError(format!("{} {e}", spelled("fail_on"))))?;
    options.min_delta = match (min_delta, unit) {
        (None, _) => 0.0,
        (Some(MinDelta::Points(v)), _) | (Some(MinDelta::Nanos(v)), Weight::Time) | (Some(MinDelta::Samples(v)), Weight::Samples) => v,
        (Some(MinDelta::Nanos(_)), _) => {
            return Err(UsageError(format!(
                "{} {}: a profile has no times (folded stacks), so the comparison is by sample counts: give samples per run (5)",
                spelled("min_delta"),
                args.min_delta.as_deref().unwrap_or_default()
            ))
            .into())
        }
        (Some(MinDelta::Samples(_)), _) => {
            return Err(UsageError(format!(
                "{} {}: expected a time per run with a unit (2ms)",
                spelled("min_delta"),
                args.min_delta.as_deref().unwrap_or_default()
            ))
            .into())
        }
    };
    let report = diff(&base_refs, &new_refs, options);
    if let Some(((old, new), why)) = report.unused_script_pairs.first() {
        return Err(UsageError(format!(
            "{} {}={}: {}",
            spelled("map"),
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
            "the {} side has samples but no time (every sampling interval is 0), so time per run cannot be compared: check the recording, or compare shares ({} share)",
            timeless.join(" and "),
            spelled("normalize")
        ))
        .into());
    }
    if let Err(e) = gate.check(&report) {
        return Err(UsageError(match e {
            GateError::Untested
                if base_refs.iter().chain(&new_refs).any(|p| p.value_types.len() > 1 && !p.counts_samples()) =>
            {
                format!(
                    "{}: a profile counts sample records, not samples taken (pprof times without a count type or \
                     a usable period), so no change can be tested for significance and the gate cannot decide",
                    spelled("fail_on")
                )
            }
            GateError::Untested => {
                format!(
                    "{}: a profile's weights are times without sample counts (folded stacks read with \
                     {} time), so no change can be tested for significance and the gate cannot decide",
                    spelled("fail_on"),
                    spelled("folded_weight")
                )
            }
            e => format!("{} {e}", spelled("fail_on")),
        })
        .into());
    }
    for warning in &report.warnings {
        crate::warn(warning);
    }
    if let Some(u) = &report.unpaired_scripts {
        crate::warn(&format!(
            "to compare {} with {}: {} {}={}",
            cpuprof_render::text::visible(&u.base),
            cpuprof_render::text::visible(&u.new),
            spelled("map"),
            cpuprof_render::text::visible(&u.base_ending),
            cpuprof_render::text::visible(&u.new_ending)
        ));
    }
    if base.len() == 1 && new.len() == 1 && normalize == Normalize::Time {
        let (b, n) = (crate::spelled("base"), crate::spelled("new"));
        crate::warn(&format!(
            "one run per side: only sampling noise is accounted for, not how runs differ (machine load, JIT \
             timing); record several runs per side ({b} a b c {n} x y z) before trusting small changes"
        ));
    }
    let (base_sources, new_sources): (Vec<String>, Vec<String>) = match &phases {
        Some([b, n]) => {
            (vec![format!("{} [{}]", source_name(&base[0]), b.1)], vec![format!("{} [{}]", source_name(&new[0]), n.1)])
        }
        None => (base.iter().map(|p| source_name(p)).collect(), new.iter().map(|p| source_name(p)).collect()),
    };
    if args.explain.is_some() && shown.csv {
        crate::warn(&format!(
            "{} is not written to CSV (one row per function); use {} table, markdown or json",
            spelled("explain"),
            spelled("format")
        ));
    }
    let explanations = args
        .explain
        .map(|n| {
            explain(&base_refs, &new_refs, sides.tiers(), &report, options, usize::try_from(n).unwrap_or(usize::MAX))
        })
        .unwrap_or_default();
    let block_change = if with_blocks {
        let runs: Option<Vec<RunBlocks>> = sides.run_blocks.iter().copied().collect();
        let change = runs.map(|mut runs| {
            let new_runs = runs.split_off(base.len());
            compare_blocks(runs, new_runs, cpuprof_analysis::defaults::ALPHA)
        });
        if change.is_none() && block_rules.is_empty() {
            crate::warn(&format!(
                "{}: a profile has no timeline (pprof, folded stacks), so the event-loop blocks are not compared",
                spelled("blocks")
            ));
        }
        if !block_rules.is_empty() {
            check_block_gate(change.as_ref(), &base_sources, &new_sources)?;
        }
        change
    } else {
        None
    };
    let svg = (shown.flamegraph || shown.page)
        .then(|| differential(&base_refs, &new_refs, options, &report).map_err(|e| e.to_string()));
    if let (false, Some(Err(e))) = (shown.flamegraph, &svg) {
        // The page without its flame graph is still the comparison.
        crate::warn(&format!("the report has no flame graph: {e}"));
    }
    // Every warning said (the readers', the analysis', this request's) is in the report.
    let mut report = report;
    report.warnings = crate::said::said().into_iter().map(cpuprof_model::Warning::new).collect();
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
    let checkouts = Checkouts { base_root: args.base_root.clone(), new_root: args.new_root.clone() };
    let options = options.clone();
    drop((base_refs, new_refs));
    Ok(DiffAnswer {
        sides,
        report,
        base_sources,
        new_sources,
        explanations,
        block_change,
        link,
        checkouts,
        limit: args.rows.limit(),
        options,
        flame_svg: svg,
        crossed,
    })
}

/// The HTML page of the comparison: every row up to [`REPORT_DIFF_ROWS`], the first changes
/// explained, the differential flame graph `svg`.
///
/// [`REPORT_DIFF_ROWS`]: cpuprof_analysis::defaults::REPORT_DIFF_ROWS
fn diff_page(
    doc: &DiffDocument<'_>,
    base: &[&Profile],
    new: &[&Profile],
    tiers: [&[RowTiers]; 2],
    options: &DiffOptions,
    svg: Option<&[u8]>,
) -> Result<String> {
    use cpuprof_analysis::defaults::{REPORT_DIFF_ROWS, REPORT_EXPLAIN};
    let report = doc.report;
    // Explanations are of functions (rows of lines have none).
    let explanations = if options.by == GroupBy::Function {
        explain(base, new, tiers, report, options, REPORT_EXPLAIN)
    } else {
        Vec::new()
    };
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

/// The shortest block `diff --blocks` compares (as `cpuprof blocks`' default).
const DEFAULT_BLOCK_MIN_NS: i64 = 50_000_000;

/// Whether block rules can decide: every run has a timeline and idle samples (a recording where
/// the loop never waited has no stalls to compare, and a gate must not pass on nothing).
fn check_block_gate(change: Option<&BlockChange>, base: &[String], new: &[String]) -> Result<()> {
    let Some(change) = change else {
        return Err(UsageError(format!(
            "{} block:…: a profile has no timeline (pprof, folded stacks), so it has no event-loop blocks",
            spelled("fail_on")
        ))
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
            "{} block:…: {} has no idle samples (the event loop never waited in the recording), so its blocks are not stalls and the gate cannot decide",
            spelled("fail_on"),
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
