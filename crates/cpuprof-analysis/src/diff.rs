//! `diff`: which functions got hotter between two sets of runs, with sampling noise taken
//! into account.
//!
//! **Matching.** A function is keyed by its name (the tiers of a tick log's function, kept
//! apart as [`cpuprof_model::Func::tier`], are one function here) and file. Where one file has several functions of that name (anonymous functions, say), they
//! are paired across the two sides by nearest start line, so a change that moves code still
//! matches; what stays unpaired is *new* or *gone*.
//!
//! **Measures.** Self and total time per run (the mean over the runs of a side) and as a
//! share of busy time (idle excluded), pooled over the runs.
//!
//! **Noise.** Per function, sample counts are compared with an exact binomial test
//! conditional on the function's samples on both sides (the two counts are taken as Poisson
//! with rates proportional to the function's time; under "no change" the base side's share of
//! them is fixed: by the sides' sampling exposure — runs / mean interval — when normalizing by
//! time per run, by the sides' busy sample counts when normalizing by share). With two runs or
//! more per side, the run-to-run spread counts too: the binomial variance is scaled by the
//! overdispersion of the per-run counts (quasi-binomial) and Student's t with R1 + R2 − 2
//! degrees of freedom replaces the normal. Over the functions that have enough samples to be
//! significant at all (Tarone), the Benjamini–Hochberg procedure keeps the false discovery
//! rate at `alpha`. Assumptions: samples are independent (V8 samples at a fixed interval, so
//! counts behave like Poisson counts for anything that is not periodic with it), runs of a
//! side are repetitions of the same work.

use cpuprof_model::{FuncKind, Profile, ValueUnit, Warning};
use rustc_hash::FxHashMap;

use crate::filter::StackFilter;
use crate::keys::GroupBy;
use crate::stats::{benjamini_hochberg, binomial_p, overdispersion, quasi_binomial_p};
use crate::top::{top, Metric, TopOptions};
use crate::weights::Weight;

/// What "the same" means between the two sides (`time`, `share` in requests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Normalize {
    /// Time per run: for fixed work (benchmarks, tests), where an untouched function keeps its
    /// time while its share falls because something else grew. The default.
    #[default]
    Time,
    /// Share of busy time: for fixed-duration profiles (30 s of production load).
    Share,
}

/// Options of [`diff`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DiffOptions {
    /// Default is [`Normalize::Time`].
    pub normalize: Normalize,
    /// Default is [`Metric::SelfTime`].
    pub metric: Metric,
    /// False discovery rate over all functions. Default is [`crate::defaults::ALPHA`] (0.05).
    pub alpha: f64,
    /// Which samples count. Default: all but `(idle)`.
    pub filter: StackFilter,
    /// Changes smaller than this (ns per run, or samples per run when [`compared_unit`] is
    /// samples, or share points with [`Normalize::Share`]) are
    /// not significant, whatever the test says. Default is 0.
    pub min_delta: f64,
    /// The base side's checkout root (a path prefix, `file://` url or plain): scripts under it
    /// are matched by their path below it. Default is `None`: see [`match_files`].
    pub base_root: Option<String>,
    /// The new side's checkout root. Default is `None`.
    pub new_root: Option<String>,
    /// Scripts to pair by hand, (base, new): each a path or its ending in whole `/`-separated
    /// segments (`bench-v1.js`), naming one script of its side — a script renamed between the
    /// versions. Default is empty.
    pub script_pairs: Vec<(String, String)>,
    /// What a row stands for: [`GroupBy::Function`] (the default) or [`GroupBy::Line`] (a
    /// function's executing line, from V8's line ticks: where inside it the time moved; lines
    /// match only at the same number). Files and packages are compared as functions.
    pub by: GroupBy,
}

impl Default for DiffOptions {
    fn default() -> Self {
        Self::new(Normalize::Time, Metric::SelfTime, crate::defaults::ALPHA, StackFilter::default())
    }
}

impl DiffOptions {
    /// Options with every field given but `min_delta` and the roots.
    pub fn new(normalize: Normalize, metric: Metric, alpha: f64, filter: StackFilter) -> Self {
        Self {
            normalize,
            metric,
            alpha,
            filter,
            min_delta: 0.0,
            base_root: None,
            new_root: None,
            script_pairs: Vec::new(),
            by: GroupBy::Function,
        }
    }
}

/// What happened to a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// Significantly more (under the normalization).
    Hotter,
    /// Only in the new runs.
    New,
    /// Significantly less.
    Cooler,
    /// Only in the base runs.
    Gone,
    /// No significant change.
    Unchanged,
}

impl Verdict {
    /// The lowercase name used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Hotter => "hotter",
            Verdict::New => "new",
            Verdict::Cooler => "cooler",
            Verdict::Gone => "gone",
            Verdict::Unchanged => "unchanged",
        }
    }
}

/// One side's numbers for one function.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideNumbers {
    /// Self weight per run (mean over the runs), in the report's [`DiffReport::unit`]: ns, or
    /// sample counts when a profile has no times.
    pub self_per_run: f64,
    /// Total weight per run, in the report's unit.
    pub total_per_run: f64,
    /// Self samples, all runs.
    pub self_samples: i64,
    /// Total samples, all runs.
    pub total_samples: i64,
    /// Self time as a percentage of busy time (pooled over the runs).
    pub self_pct: f64,
    /// Total time as a percentage of busy time.
    pub total_pct: f64,
    /// Self weight of each run, in the order given (zeros where the function did not run).
    pub self_runs: Vec<i64>,
    /// Total weight of each run.
    pub total_runs: Vec<i64>,
}

/// One function, compared.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffRow {
    /// Function name (without a tier: a tick log's tiers are one function; `(anonymous)` for
    /// anonymous functions).
    pub name: String,
    /// Its file, if known.
    pub file: Option<String>,
    /// Start line on the new side (the base side for gone functions).
    pub line: Option<u32>,
    /// What kind of code it is.
    pub kind: FuncKind,
    /// Zeros when the function is new.
    pub base: SideNumbers,
    /// Zeros when the function is gone.
    pub new: SideNumbers,
    /// What happened.
    pub verdict: Verdict,
    /// Whether the change in the chosen metric is significant (after the FDR control).
    pub significant: bool,
    /// Two-sided p-value of the change in the chosen metric (before the FDR control).
    pub p_value: f64,
    /// The smallest p-value the test could give with this many samples: rows that could
    /// never be significant are left out of the FDR family (Tarone's rule).
    pub min_p: f64,
}

impl DiffRow {
    /// Self weight change per run, in the report's unit.
    pub fn self_delta(&self) -> f64 {
        self.new.self_per_run - self.base.self_per_run
    }

    /// Total weight change per run, in the report's unit.
    pub fn total_delta(&self) -> f64 {
        self.new.total_per_run - self.base.total_per_run
    }

    /// new / base self time; `None` when base is 0.
    pub fn self_ratio(&self) -> Option<f64> {
        (self.base.self_per_run > 0.0).then(|| self.new.self_per_run / self.base.self_per_run)
    }

    /// new / base total time; `None` when base is 0.
    pub fn total_ratio(&self) -> Option<f64> {
        (self.base.total_per_run > 0.0).then(|| self.new.total_per_run / self.base.total_per_run)
    }

    /// Self share change, percentage points.
    pub fn self_delta_pp(&self) -> f64 {
        self.new.self_pct - self.base.self_pct
    }

    /// Total share change, percentage points.
    pub fn total_delta_pp(&self) -> f64 {
        self.new.total_pct - self.base.total_pct
    }

    /// The change that ranks and decides: weight per run (report unit) or share (pp) of the metric.
    pub fn delta(&self, normalize: Normalize, metric: Metric) -> f64 {
        match (normalize, metric) {
            (Normalize::Time, Metric::SelfTime) => self.self_delta(),
            (Normalize::Time, Metric::Total) => self.total_delta(),
            (Normalize::Share, Metric::SelfTime) => self.self_delta_pp(),
            (Normalize::Share, Metric::Total) => self.total_delta_pp(),
        }
    }
}

/// One side of the comparison, summed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideTotals {
    /// Number of runs.
    pub runs: usize,
    /// Busy weight per run (mean), in the report's [`DiffReport::unit`].
    pub busy_per_run: f64,
    /// Busy samples, all runs.
    pub samples: i64,
    /// Samples of each run that the filter kept (idle excluded), in the order given: a run
    /// with none compares nothing.
    pub run_samples: Vec<i64>,
}

/// The result of [`diff`].
#[derive(Clone, Debug)]
pub struct DiffReport {
    /// As asked.
    pub normalize: Normalize,
    /// As asked.
    pub metric: Metric,
    /// What every `_per_run` amount holds: ns, or sample counts when a profile has
    /// no times (folded stacks), since counts and times cannot be compared.
    pub unit: Weight,
    /// The base side.
    pub base: SideTotals,
    /// The new side.
    pub new: SideTotals,
    /// Rows in rank order: significantly hotter and new (largest change first), significantly
    /// cooler and gone (largest drop first), then the rest (largest change first).
    pub rows: Vec<DiffRow>,
    /// Whether the rows were tested at all: the test needs counts of samples taken, which
    /// folded stacks of times and pprof profiles counting records lack. When false, no row is
    /// significant.
    pub tested: bool,
    /// Scripts of the base side matched to a script at another path on the new side (a
    /// different checkout root), base path → new path, in path order.
    pub moved_files: Vec<(String, String)>,
    /// What may make the comparison misleading: the sides share almost no functions; the
    /// weights cannot be tested (typed as the readers' are).
    pub warnings: Vec<Warning>,
    /// A script of each side whose functions are all gone (base) and all new (new), when the
    /// sides share almost no functions and one script each holds most of their time: most
    /// likely one script renamed, to be paired by hand ([`DiffOptions::script_pairs`]).
    pub unpaired_scripts: Option<UnpairedScripts>,
    /// The pairs of [`DiffOptions::script_pairs`] that could not be used, with why (a side names
    /// no script, or several).
    pub unused_script_pairs: Vec<((String, String), String)>,
}

/// A script of each side that most likely is one script renamed (see
/// [`DiffReport::unpaired_scripts`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnpairedScripts {
    /// The base side's script.
    pub base: String,
    /// The new side's script.
    pub new: String,
    /// The shortest ending of `base` (whole `/`-separated segments) that no other script ends in.
    pub base_ending: String,
    /// The same of `new`.
    pub new_ending: String,
}

/// A function's numbers in one run.
#[derive(Clone, Copy, Default)]
struct RunNumbers {
    self_weight: i64,
    total_weight: i64,
    self_samples: i64,
    total_samples: i64,
}

/// A function on one side: its runs' numbers.
struct SideFunction {
    line: Option<u32>,
    /// For rows of lines, the start line of their function.
    function_line: Option<u32>,
    column: Option<u32>,
    kind: FuncKind,
    runs: Vec<RunNumbers>,
}

struct Side {
    /// (name, file) → functions at distinct start lines.
    functions: FxHashMap<(String, Option<String>), Vec<SideFunction>>,
    busy_per_run: Vec<i64>,
    busy_samples: Vec<i64>,
    /// Per run, the samples the filter kept.
    kept_samples: Vec<i64>,
}

/// The file as matching sees it: the model holds scripts on disk by path (`file://` urls
/// made paths when read); a Windows path by either separator (`C:\app\x.js` as a tick log
/// writes it, `C:/app/x.js` from a url) is `C:/app/x.js`.
fn match_file(file: &str) -> String {
    let path = cpuprof_model::file_url::script_path(file);
    if is_windows_path(&path) {
        path.replace('\\', "/")
    } else {
        path.into_owned()
    }
}

/// `C:\…`, `C:/…` or a UNC path `\\host\…`.
fn is_windows_path(path: &str) -> bool {
    matches!(path.as_bytes(), [drive, b':', b'\\' | b'/', ..] if drive.is_ascii_alphabetic())
        || path.starts_with("\\\\")
}

/// A script on disk, as [`match_file`] writes it (`/srv/app.js`, `C:/app.js`): only those can
/// move with a checkout; `node:` internals, urls and V8's pseudo-scripts cannot.
fn is_disk_path(path: &str) -> bool {
    path.starts_with('/') || matches!(path.as_bytes(), [drive, b':', b'/', ..] if drive.is_ascii_alphabetic())
}

/// `file` relative to `root` when it lies under it (both as [`match_file`] sees them).
fn below_root(file: String, root: Option<&str>) -> String {
    let Some(root) = root else { return file };
    let root = match_file(root);
    let root = root.trim_end_matches('/');
    match file.strip_prefix(root).and_then(|rest| rest.strip_prefix('/')) {
        Some(rest) if !rest.is_empty() => rest.to_owned(),
        _ => file,
    }
}

/// Pairs the scripts of two checkouts of the same program. The checkout roots are inferred:
/// each script on disk found on one side only votes for the roots its pairing implies, when
/// the longest path ending it shares with a script of the other side (whole `/`-separated
/// segments, the file name at least) ends no other script on either side
/// (`/ci/base/src/app.js` ↔ `/ci/pr/src/app.js` votes for `/ci/base/` → `/ci/pr/`). The roots
/// with the most votes win, if they explain more scripts than the two sides have at identical
/// paths (then they are one checkout, and a script in one folder on one side and another on
/// the other is a different script). Every base script under the base root is then paired with
/// the new side's script at the same path under the new root, when there is one: an
/// `index.js` at the root pairs though `node_modules/*/index.js` share its name. `node:`
/// internals and urls never move. Returns base path → new path, in path order.
pub fn match_files<'a>(base_files: &[&'a str], new_files: &[&'a str]) -> Vec<(&'a str, &'a str)> {
    use rustc_hash::FxHashSet;
    let new_set: FxHashSet<&str> = new_files.iter().copied().collect();
    let base_set: FxHashSet<&str> = base_files.iter().copied().collect();
    let on_disk = |f: &&str| is_disk_path(f);
    let identical = base_files.iter().copied().filter(on_disk).filter(|f| new_set.contains(f)).count();
    // Only paths missing from the other side can have moved.
    let base_only: Vec<&str> = base_files.iter().copied().filter(on_disk).filter(|f| !new_set.contains(f)).collect();
    let new_only: Vec<&str> = new_files.iter().copied().filter(on_disk).filter(|f| !base_set.contains(f)).collect();
    if base_only.is_empty() || new_only.is_empty() {
        return Vec::new();
    }
    // Uniqueness is over the whole side (a pair must not steal an ending that an identical
    // path also has), matching over the unpaired paths.
    let (base_all, new_all) = (endings(base_files), endings(new_files));
    let new_endings = endings(&new_only);
    let mut votes: FxHashMap<(&str, &str), usize> = FxHashMap::default();
    for base in &base_only {
        // Longest ending first.
        let Some((ending, new)) = path_endings(base).find_map(|e| new_endings.get(e).map(|(_, new)| (e, *new))) else {
            continue;
        };
        let unique = |map: &FxHashMap<&str, (u32, &str)>| map.get(ending).is_some_and(|(count, _)| *count == 1);
        if unique(&base_all) && unique(&new_all) {
            let roots = (&base[..base.len() - ending.len()], &new[..new.len() - ending.len()]);
            *votes.entry(roots).or_default() += 1;
        }
    }
    let Some(((base_root, new_root), count)) =
        votes.into_iter().max_by(|(a, x), (b, y)| x.cmp(y).then_with(|| b.cmp(a)))
    else {
        return Vec::new();
    };
    if count <= identical {
        return Vec::new();
    }
    let new_only: FxHashSet<&str> = new_only.into_iter().collect();
    let mut pairs: Vec<(&str, &str)> = base_only
        .iter()
        .filter_map(|base| {
            let rest = base.strip_prefix(base_root)?;
            let new = format!("{new_root}{rest}");
            new_only.get(new.as_str()).map(|new| (*base, *new))
        })
        .collect();
    pairs.sort_unstable();
    pairs
}

/// Every ending (from a `/` to the end) of every path → how many paths end so, and one of them.
fn endings<'a>(paths: &[&'a str]) -> FxHashMap<&'a str, (u32, &'a str)> {
    let mut map: FxHashMap<&'a str, (u32, &'a str)> = FxHashMap::default();
    for path in paths {
        for ending in path_endings(path) {
            let entry = map.entry(ending).or_insert((0, path));
            entry.0 += 1;
        }
    }
    map
}

/// The endings of `path` at each `/`, longest first, ending in the file name: `a/b/c.js` →
/// `a/b/c.js`, `b/c.js`, `c.js`. A path without `/` is its own only ending.
fn path_endings(path: &str) -> impl Iterator<Item = &str> {
    let starts = std::iter::once(0).chain(path.match_indices('/').map(|(i, _)| i + 1));
    starts.map(move |i| &path[i..]).filter(|e| !e.is_empty())
}

fn side(runs: &[&Profile], filter: &StackFilter, unit: Weight, root: Option<&str>, by_line: bool) -> Side {
    let mut side = Side {
        functions: FxHashMap::default(),
        busy_per_run: Vec::new(),
        busy_samples: Vec::new(),
        kept_samples: Vec::new(),
    };
    for (r, profile) in runs.iter().enumerate() {
        let by = if by_line { GroupBy::Line } else { GroupBy::Function };
        let mut options = TopOptions::new(by, unit, Metric::SelfTime, filter.clone());
        options.lines_per_function = by_line;
        let report = top(profile, &options);
        side.busy_per_run.push(report.total);
        side.busy_samples.push(report.samples);
        // Every kept sample has one leaf function.
        side.kept_samples.push(report.rows.iter().fold(0i64, |sum, r| sum.saturating_add(r.self_samples)));
        for row in report.rows {
            // The tiers of a function are one function here: its name without the marker.
            let name = row.plain_name();
            let key = (name.to_owned(), row.file.as_deref().map(|f| below_root(match_file(f), root)));
            let functions = side.functions.entry(key).or_default();
            let at = if let Some(at) = functions
                .iter()
                .position(|f| f.line == row.line && f.column == row.column && f.function_line == row.function_line)
            {
                at
            } else {
                functions.push(SideFunction {
                    line: row.line,
                    function_line: row.function_line,
                    column: row.column,
                    kind: row.kind,
                    runs: vec![RunNumbers::default(); runs.len()],
                });
                functions.len() - 1
            };
            let numbers = &mut functions[at].runs[r];
            numbers.self_weight += row.self_weight;
            numbers.total_weight = numbers.total_weight.max(row.total_weight);
            numbers.self_samples += row.self_samples;
            numbers.total_samples = numbers.total_samples.max(row.total_samples);
        }
    }
    side
}

/// What [`diff`] compares `base` and `new` by: time, or sample counts when a profile has no
/// times (folded stacks). [`DiffOptions::min_delta`] is in this unit.
pub fn compared_unit(base: &[&Profile], new: &[&Profile]) -> Weight {
    let timed = base.iter().chain(new).all(|p| p.value_index(ValueUnit::Nanoseconds).is_some());
    if timed {
        Weight::Time
    } else {
        Weight::Samples
    }
}

/// Whether every profile counts its samples, which the significance test needs: folded stacks
/// of times carry weights without counts, and a pprof profile of times without counts or a
/// usable period only its records ([`cpuprof_model::ValueKind::Records`]).
fn counts_known(profiles: &[&Profile]) -> bool {
    profiles.iter().all(|p| p.counts_samples())
}

/// Share of the busy samples above which unmatched functions make a comparison suspect.
const UNMATCHED_WARNING_SHARE: f64 = 50.0;

/// Compares `base` runs with `new` runs.
pub fn diff(base: &[&Profile], new: &[&Profile], options: &DiffOptions) -> DiffReport {
    let unit = compared_unit(base, new);
    let by_line = options.by == GroupBy::Line;
    let mut b = side(base, &options.filter, unit, options.base_root.as_deref(), by_line);
    let n = side(new, &options.filter, unit, options.new_root.as_deref(), by_line);
    let (moved_files, unused_script_pairs) = rekey_moved_files(&mut b, &n, &options.script_pairs);
    let totals = |s: &Side| SideTotals {
        runs: s.busy_per_run.len(),
        busy_per_run: mean(&s.busy_per_run),
        samples: s.busy_samples.iter().fold(0, |a, b| a.saturating_add(*b)),
        run_samples: s.kept_samples.clone(),
    };
    let (base_totals, new_totals) = (totals(&b), totals(&n));
    let tested = counts_known(base) && counts_known(new);

    let mut keys: Vec<&(String, Option<String>)> = b.functions.keys().chain(n.functions.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut rows = Vec::new();
    for key in keys {
        let empty = Vec::new();
        let olds = b.functions.get(key).unwrap_or(&empty);
        let news = n.functions.get(key).unwrap_or(&empty);
        for (old, new_fn) in pair_by_line(olds, news, by_line) {
            let line = new_fn.or(old).and_then(|f| f.line);
            let kind = new_fn.or(old).map_or(FuncKind::Other, |f| f.kind);
            let numbers = |f: Option<&SideFunction>, s: &Side| {
                f.map_or_else(
                    || {
                        let runs = s.busy_per_run.len();
                        SideNumbers { self_runs: vec![0; runs], total_runs: vec![0; runs], ..SideNumbers::default() }
                    },
                    |f| side_numbers(f, s),
                )
            };
            let base_numbers = numbers(old, &b);
            let new_numbers = numbers(new_fn, &n);
            let name = if key.0.is_empty() { "(anonymous)".to_owned() } else { key.0.clone() };
            let (p_value, min_p) = if tested { p_value(old, new_fn, &b, &n, options) } else { (1.0, 1.0) };
            rows.push(DiffRow {
                name,
                file: key.1.clone(),
                line,
                kind,
                base: base_numbers,
                new: new_numbers,
                verdict: Verdict::Unchanged,
                significant: false,
                p_value,
                min_p,
            });
        }
    }
    let tests: Vec<(f64, f64)> = rows.iter().map(|r| (r.p_value, r.min_p)).collect();
    for (row, significant) in rows.iter_mut().zip(benjamini_hochberg(&tests, options.alpha)) {
        row.significant = significant;
    }
    for row in &mut rows {
        let delta = row.delta(options.normalize, options.metric);
        if delta.abs() < options.min_delta {
            row.significant = false;
        }
        row.verdict =
            match (row.base.self_samples + row.base.total_samples, row.new.self_samples + row.new.total_samples) {
                (0, _) => Verdict::New,
                (_, 0) => Verdict::Gone,
                _ if !row.significant => Verdict::Unchanged,
                _ if delta > 0.0 => Verdict::Hotter,
                _ if delta < 0.0 => Verdict::Cooler,
                _ => Verdict::Unchanged,
            };
    }
    let (normalize, metric) = (options.normalize, options.metric);
    rows.sort_by(|x, y| {
        // Significant growth (hotter, new) first, then significant drops (cooler, gone), then
        // everything the noise could explain.
        let group = |r: &DiffRow| match r.verdict {
            _ if !r.significant => 2,
            Verdict::Hotter | Verdict::New => 0,
            Verdict::Cooler | Verdict::Gone => 1,
            Verdict::Unchanged => 2,
        };
        let (dx, dy) = (x.delta(normalize, metric), y.delta(normalize, metric));
        group(x)
            .cmp(&group(y))
            .then_with(|| match group(x) {
                0 => dy.total_cmp(&dx),
                1 => dx.total_cmp(&dy),
                _ => dy.abs().total_cmp(&dx.abs()),
            })
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.file.cmp(&y.file))
            .then_with(|| x.line.cmp(&y.line))
    });
    let mut warnings = Vec::new();
    if !tested {
        let records = base.iter().chain(new).any(|p| p.value_index(ValueUnit::Count).is_some() && !p.counts_samples());
        warnings.push(Warning::new(if records {
            "a profile counts sample records, not samples taken (pprof times without a count type or a usable \
             period), so no change can be tested for significance and none is called hotter or cooler"
        } else {
            "the weights of a profile are times without sample counts (folded stacks of times), so no change \
             can be tested for significance: compare the recordings, or folded sample counts"
        }));
    }
    // Self shares add up to 100% over a side's functions.
    let unmatched = |verdict: Verdict, side: fn(&DiffRow) -> f64| -> f64 {
        rows.iter().filter(|r| r.verdict == verdict).map(side).sum()
    };
    let (gone, added) = (unmatched(Verdict::Gone, |r| r.base.self_pct), unmatched(Verdict::New, |r| r.new.self_pct));
    let mut unpaired_scripts = None;
    if gone > UNMATCHED_WARNING_SHARE && added > UNMATCHED_WARNING_SHARE {
        unpaired_scripts = renamed_script(&rows);
        warnings.push(Warning::new(match unpaired_scripts.as_ref().map(|u| (&u.base, &u.new)) {
            Some((old, new)) => format!(
                "every function of {old} is gone and every one of {new} is new ({gone:.0}% and {added:.0}% of \
                 each side's busy time): the scripts differ, most likely one renamed; pair them to compare their \
                 functions"
            ),
            None => format!(
                "the profiles share almost no functions: {gone:.0}% of the base's busy time is in functions the \
                 new side lacks and {added:.0}% of the new side's in functions the base lacks; are they the same \
                 program, and are its scripts at paths that can be matched (give each side's checkout root)?"
            ),
        }));
    }
    DiffReport {
        normalize,
        metric,
        unit,
        base: base_totals,
        new: new_totals,
        rows,
        tested,
        moved_files,
        warnings,
        unpaired_scripts,
        unused_script_pairs,
    }
}

/// The name [`diff`] matches each script of `profile` by: its path below `root` (when given),
/// as the other side names it when [`DiffReport::moved_files`] pairs it. For drawing the
/// comparison with the same identities as the report.
pub fn matched_file_names(
    profile: &Profile,
    root: Option<&str>,
    moved_files: &[(String, String)],
) -> FxHashMap<String, String> {
    let moved: FxHashMap<&str, &str> = moved_files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mut names = FxHashMap::default();
    for func in profile.funcs.as_slice() {
        let file = profile.func_file(func);
        if file.is_empty() || names.contains_key(file) {
            continue;
        }
        let key = below_root(match_file(file), root);
        let key = moved.get(key.as_str()).map_or(key.clone(), |to| (*to).to_owned());
        names.insert(file.to_owned(), key);
    }
    names
}

/// The script of the gone functions and the script of the new ones holding the most busy time of
/// each side, when each holds more than half of it and neither side has any function of the
/// other's script: one script renamed between the versions.
fn renamed_script(rows: &[DiffRow]) -> Option<UnpairedScripts> {
    let heaviest = |verdict: Verdict, share: fn(&DiffRow) -> f64| {
        let mut by_file: FxHashMap<&str, f64> = FxHashMap::default();
        for r in rows.iter().filter(|r| r.verdict == verdict) {
            if let Some(file) = r.file.as_deref() {
                *by_file.entry(file).or_default() += share(r);
            }
        }
        by_file.into_iter().max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(a.0)))
    };
    let (old, old_share) = heaviest(Verdict::Gone, |r| r.base.self_pct)?;
    let (new, new_share) = heaviest(Verdict::New, |r| r.new.self_pct)?;
    let shared = rows.iter().any(|r| {
        matches!(r.file.as_deref(), Some(f) if f == old || f == new)
            && !matches!(r.verdict, Verdict::Gone | Verdict::New)
    });
    let mut files: Vec<&str> = rows.iter().filter_map(|r| r.file.as_deref()).collect();
    files.sort_unstable();
    files.dedup();
    (old != new && old_share > UNMATCHED_WARNING_SHARE && new_share > UNMATCHED_WARNING_SHARE && !shared).then(|| {
        UnpairedScripts {
            base: old.to_owned(),
            new: new.to_owned(),
            base_ending: shortest_ending(old, &files),
            new_ending: shortest_ending(new, &files),
        }
    })
}

/// The shortest ending of `path` in whole `/`-separated segments that no other of `files` ends in.
fn shortest_ending(path: &str, files: &[&str]) -> String {
    let segments: Vec<&str> = path.split('/').collect();
    for n in 1..=segments.len() {
        let ending = segments[segments.len() - n..].join("/");
        let unique = !files.iter().any(|f| *f != path && (*f == ending || f.ends_with(&format!("/{ending}"))));
        if unique && !ending.is_empty() {
            return ending;
        }
    }
    path.to_owned()
}

/// The one script of `files` that `name` names: the script itself, or the only one it ends (in
/// whole `/`-separated segments).
fn script_named<'f>(files: &'f [String], name: &str, side: &str) -> Result<&'f String, String> {
    let name = match_file(&name.replace('\\', "/"));
    let ending = format!("/{}", name.trim_start_matches('/'));
    let found: Vec<&String> = files.iter().filter(|f| **f == name || f.ends_with(&ending)).collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("no {side} script is {name} or ends in {ending}")),
        many => Err(format!(
            "{} {side} scripts end in {ending} ({}): give more of the path",
            many.len(),
            many.iter().take(3).map(|f| f.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Renames the base side's scripts that [`match_files`] pairs with a script at another path
/// on the new side (and those `by_hand` pairs), so that their functions meet; returns the pairs.
#[allow(clippy::type_complexity)]
fn rekey_moved_files(
    b: &mut Side,
    n: &Side,
    by_hand: &[(String, String)],
) -> (Vec<(String, String)>, Vec<((String, String), String)>) {
    let files = |s: &Side| -> Vec<String> {
        let mut files: Vec<String> = s.functions.keys().filter_map(|(_, f)| f.clone()).collect();
        files.sort_unstable();
        files.dedup();
        files
    };
    let (base_files, new_files) = (files(b), files(n));
    let base_refs: Vec<&str> = base_files.iter().map(String::as_str).collect();
    let new_refs: Vec<&str> = new_files.iter().map(String::as_str).collect();
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut unused = Vec::new();
    for (old, new) in by_hand {
        match (script_named(&base_files, old, "base"), script_named(&new_files, new, "new")) {
            (Ok(a), Ok(b)) => pairs.push((a.clone(), b.clone())),
            (Err(why), _) | (_, Err(why)) => unused.push(((old.clone(), new.clone()), why)),
        }
    }
    let paired = |f: &str| pairs.iter().any(|(a, b)| a == f || b == f);
    let automatic: Vec<(String, String)> = match_files(&base_refs, &new_refs)
        .into_iter()
        .filter(|(a, b)| !paired(a) && !paired(b))
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
    pairs.extend(automatic);
    pairs.sort();
    if pairs.is_empty() {
        return (pairs, unused);
    }
    let renamed: FxHashMap<&str, &str> = pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let functions = std::mem::take(&mut b.functions);
    for ((name, file), functions_here) in functions {
        let file = file.map(|f| renamed.get(f.as_str()).map_or(f.clone(), |to| (*to).to_owned()));
        b.functions.entry((name, file)).or_default().extend(functions_here);
    }
    (pairs, unused)
}

/// Pairs same-named functions of one file across the sides by nearest start line (closest
/// pairs first); the rest are unpaired. With `lines` (rows of lines), a line pairs only with
/// the line at the same offset into its function, the functions paired by nearest start line:
/// a function that moved keeps its lines.
fn pair_by_line<'a>(
    olds: &'a [SideFunction],
    news: &'a [SideFunction],
    lines: bool,
) -> Vec<(Option<&'a SideFunction>, Option<&'a SideFunction>)> {
    let mut candidates: Vec<(u64, usize, usize)> = Vec::new();
    let offset = |f: &SideFunction| f.line.zip(f.function_line).map(|(l, s)| i64::from(l) - i64::from(s));
    for (i, o) in olds.iter().enumerate() {
        for (j, n) in news.iter().enumerate() {
            if lines && offset(o) != offset(n) {
                continue;
            }
            let (a, b) = if lines { (o.function_line, n.function_line) } else { (o.line, n.line) };
            // By line, then by column (minified code has many functions on one line).
            let distance = match (a, b) {
                (Some(a), Some(b)) => {
                    u64::from(a.abs_diff(b)) << 32 | u64::from(o.column.unwrap_or(0).abs_diff(n.column.unwrap_or(0)))
                }
                (None, None) => 0,
                _ => u64::MAX / 2,
            };
            candidates.push((distance, i, j));
        }
    }
    candidates.sort_unstable();
    let (mut old_used, mut new_used) = (vec![false; olds.len()], vec![false; news.len()]);
    let mut pairs = Vec::new();
    for (_, i, j) in candidates {
        if !old_used[i] && !new_used[j] {
            old_used[i] = true;
            new_used[j] = true;
            pairs.push((Some(&olds[i]), Some(&news[j])));
        }
    }
    pairs.extend(olds.iter().zip(&old_used).filter(|(_, u)| !**u).map(|(o, _)| (Some(o), None)));
    pairs.extend(news.iter().zip(&new_used).filter(|(_, u)| !**u).map(|(n, _)| (None, Some(n))));
    pairs
}

fn mean(values: &[i64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().map(|v| *v as f64).sum::<f64>() / values.len() as f64
    }
}

fn side_numbers(f: &SideFunction, side: &Side) -> SideNumbers {
    // Saturating: the times of a hand-made file may be anything.
    let sum = |v: &mut dyn Iterator<Item = i64>| v.fold(0i64, i64::saturating_add);
    let busy = sum(&mut side.busy_per_run.iter().copied());
    let pct = |v: i64| if busy == 0 { 0.0 } else { 100.0 * v as f64 / busy as f64 };
    let self_sum = sum(&mut f.runs.iter().map(|r| r.self_weight));
    let total_sum = sum(&mut f.runs.iter().map(|r| r.total_weight));
    SideNumbers {
        self_per_run: mean(&f.runs.iter().map(|r| r.self_weight).collect::<Vec<_>>()),
        total_per_run: mean(&f.runs.iter().map(|r| r.total_weight).collect::<Vec<_>>()),
        self_samples: f.runs.iter().map(|r| r.self_samples).sum(),
        total_samples: f.runs.iter().map(|r| r.total_samples).sum(),
        self_pct: pct(self_sum),
        total_pct: pct(total_sum),
        self_runs: f.runs.iter().map(|r| r.self_weight).collect(),
        total_runs: f.runs.iter().map(|r| r.total_weight).collect(),
    }
}

/// The p-value of "no change" in the chosen metric, and the smallest p-value the test could
/// give for the function's sample count (used to leave hopeless rows out of the FDR family).
///
/// One run per side: the exact binomial test. Several runs per side: the binomial variance is
/// scaled by the overdispersion seen between runs (quasi-binomial), and Student's t with
/// R1 + R2 − 2 degrees of freedom replaces the normal distribution.
fn p_value(
    old: Option<&SideFunction>,
    new: Option<&SideFunction>,
    b: &Side,
    n: &Side,
    options: &DiffOptions,
) -> (f64, f64) {
    let per_run = |f: Option<&SideFunction>, runs: usize| -> Vec<u64> {
        (0..runs)
            .map(|r| {
                f.map_or(0, |f| {
                    let run = f.runs[r];
                    let count = if options.metric == Metric::Total { run.total_samples } else { run.self_samples };
                    u64::try_from(count).unwrap_or(0)
                })
            })
            .collect()
    };
    let (c1, c2) = (per_run(old, b.busy_per_run.len()), per_run(new, n.busy_per_run.len()));
    let exposure = |s: &Side| Exposure {
        runs: s.busy_per_run.len(),
        busy: s.busy_per_run.iter().fold(0i64, |a, v| a.saturating_add(*v)),
        samples: s.busy_samples.iter().fold(0i64, |a, v| a.saturating_add(*v)),
    };
    counts_p(&c1, &c2, exposure(b), exposure(n), options.normalize)
}

/// What a side's samples were taken over: its runs, their busy weight and busy samples.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Exposure {
    pub(crate) runs: usize,
    /// Summed over the runs.
    pub(crate) busy: i64,
    /// Summed over the runs.
    pub(crate) samples: i64,
}

impl Exposure {
    pub(crate) fn of(totals: &SideTotals) -> Self {
        Self { runs: totals.runs, busy: (totals.busy_per_run * totals.runs as f64) as i64, samples: totals.samples }
    }
}

/// The p-value of "no change" between per-run sample counts `c1` (base) and `c2` (new), and
/// the smallest p-value the test could give for their sum.
pub(crate) fn counts_p(c1: &[u64], c2: &[u64], b: Exposure, n: Exposure, normalize: Normalize) -> (f64, f64) {
    let (x1, x2): (u64, u64) = (c1.iter().sum(), c2.iter().sum());
    // The base side's expected part of the function's samples if nothing changed.
    let weight = |s: Exposure| -> f64 {
        match normalize {
            // Exposure: runs / mean sampling interval (samples per ns of per-run time).
            Normalize::Time => {
                if s.busy == 0 {
                    0.0
                } else {
                    s.runs as f64 * s.samples as f64 / s.busy as f64
                }
            }
            Normalize::Share => s.samples as f64,
        }
    };
    let (w1, w2) = (weight(b), weight(n));
    let p0 = if w1 + w2 > 0.0 { w1 / (w1 + w2) } else { 0.5 };
    let trials = x1.saturating_add(x2);
    if c1.len() < 2 && c2.len() < 2 {
        let min_p = binomial_p(0, trials, p0).min(binomial_p(trials, 0, p0));
        return (binomial_p(x1, x2, p0), min_p);
    }
    // The spread between runs, from every side that has more than one.
    let dispersion = overdispersion(c1, c2);
    let df = (c1.len() + c2.len()).saturating_sub(2).max(1) as f64;
    let quasi = |x: u64| quasi_binomial_p(x, trials, p0, dispersion, df);
    (quasi(x1), quasi(0).min(quasi(trials)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_pair_across_checkout_roots() {
        let base = [
            "/ci/base/src/app.js",
            "/ci/base/src/x/index.js",
            "/ci/base/src/y/index.js",
            "node:fs",
            "/ci/base/lone.js",
        ];
        let new =
            ["/ci/pr/src/app.js", "/ci/pr/src/x/index.js", "/ci/pr/src/y/index.js", "node:fs", "/elsewhere/other.js"];
        assert_eq!(
            match_files(&base, &new),
            [
                ("/ci/base/src/app.js", "/ci/pr/src/app.js"),
                ("/ci/base/src/x/index.js", "/ci/pr/src/x/index.js"),
                ("/ci/base/src/y/index.js", "/ci/pr/src/y/index.js"),
            ]
        );
        // An ending that two scripts of a side share is ambiguous: no pair.
        let base = ["/a/one/util.js", "/a/two/util.js"];
        let new = ["/b/util.js"];
        assert!(match_files(&base, &new).is_empty());
        // Nor when the identical path on both sides already holds that ending.
        let base = ["/a/util.js", "/shared/util.js"];
        let new = ["/b/util.js", "/shared/util.js"];
        assert!(match_files(&base, &new).is_empty());
        // One checkout: a script in one folder and another in another are different scripts.
        let base = ["/app/src/cache/util.js", "/app/main.js"];
        let new = ["/app/src/http/util.js", "/app/main.js"];
        assert!(match_files(&base, &new).is_empty());
        // The roots that the unambiguous scripts show pair the root's index.js too.
        let base = ["/ci/base/index.js", "/ci/base/node_modules/foo/index.js", "/ci/base/node_modules/bar/index.js"];
        let new = ["/ci/pr/index.js", "/ci/pr/node_modules/foo/index.js", "/ci/pr/node_modules/bar/index.js"];
        assert_eq!(match_files(&base, &new).len(), 3, "{:?}", match_files(&base, &new));
        // node internals, urls and pseudo-scripts never move.
        let base = ["node:internal/modules/cjs/loader", "https://cdn.example.com/v2/lib/util", "/ci/base/a.js"];
        let new = ["node:internal/modules/esm/loader", "node:internal/util", "/ci/pr/a.js"];
        assert_eq!(match_files(&base, &new), [("/ci/base/a.js", "/ci/pr/a.js")]);
        // Windows paths, as tick logs write them.
        let base = [match_file("C:\\ci\\base\\src\\app.js")];
        let new = [match_file("file:///C:/ci/pr/src/app.js")];
        let (base, new) = ([base[0].as_str()], [new[0].as_str()]);
        assert_eq!(match_files(&base, &new), [("C:/ci/base/src/app.js", "C:/ci/pr/src/app.js")]);
    }

    /// A tick log read with tiers apart: `work` interpreted (3 ticks) and optimized by TurboFan
    /// (`turbofan` ticks), and a function whose name starts like a marker but has no tier.
    fn tiered(turbofan: i64) -> Profile {
        use cpuprof_model::{Frame, Func, ProfileBuilder, SourceFormat, Tier, ValueType};
        let mut b = ProfileBuilder::new(SourceFormat::TickLog, vec![ValueType::SAMPLES, ValueType::WALL_NS]);
        let file = b.intern("/app.js");
        for (name, tier, ticks) in
            [("work", Some(Tier::Interpreted), 3), ("work", Some(Tier::TurboFan), turbofan), ("*gen", None, 5)]
        {
            let name = b.intern(name);
            let func = Func { name, file, line: Some(1), column: Some(1), kind: FuncKind::Js, tier, library: None };
            let func = b.func(func);
            let frame = b.frame(Frame { func, line: None, column: None });
            let stack = b.stack(None, frame);
            b.sample(stack, None, &[ticks, ticks * 1_000_000]);
        }
        b.finish().unwrap()
    }

    #[test]
    fn the_tiers_of_a_function_are_one_function_and_names_stay_whole() {
        let report = diff(&[&tiered(1)], &[&tiered(7)], &DiffOptions::default());
        let mut rows: Vec<(&str, i64, i64)> =
            report.rows.iter().map(|r| (r.name.as_str(), r.base.self_samples, r.new.self_samples)).collect();
        rows.sort_unstable();
        // 1 + 3 and 7 + 3 ticks of `work`; `*gen` keeps its star (the old rule cut any marker).
        assert_eq!(rows, [("*gen", 5, 5), ("work", 4, 10)]);
    }

    #[test]
    fn urls_and_roots_as_matching_sees_them() {
        assert_eq!(match_file("file:///ci/my%20app/x.js"), "/ci/my app/x.js");
        assert_eq!(match_file("/ci/my app/x.js"), "/ci/my app/x.js");
        assert_eq!(match_file("file:///C:/app/x.js"), "C:/app/x.js");
        assert_eq!(match_file("file:///C:%5Capp%5Cx.js"), "C:/app/x.js");
        assert_eq!(match_file("node:internal/timers"), "node:internal/timers");
        assert_eq!(below_root("/ci/base/src/a.js".to_owned(), Some("/ci/base/")), "src/a.js");
        assert_eq!(below_root("/ci/base/src/a.js".to_owned(), Some("/ci/base")), "src/a.js");
        assert_eq!(below_root("/ci/baseline/a.js".to_owned(), Some("/ci/base")), "/ci/baseline/a.js");
    }
}
