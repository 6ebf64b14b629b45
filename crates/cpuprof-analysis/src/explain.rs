//! Where a change came from: for the functions a [`DiffReport`] ranks first, the callers
//! whose contribution changed most and the callees whose totals changed most, per run on each
//! side, with a test where the counts allow one; and time that moved between a function and
//! its caller, the way V8 inlining moves it (the callee's frames vanish and the caller's self
//! time grows by about as much).

use cpuprof_model::Profile;
use rustc_hash::FxHashMap;

use crate::calltree::{CallGraph, CallTree};
use crate::diff::{counts_p, DiffOptions, DiffReport, DiffRow, Exposure, Verdict};
use crate::jit_change::{jit_change, JitChange, RowTiers};
use crate::side::Side;
use crate::top::TopRow;

/// How many callers and callees an explanation keeps (those whose part changed most).
pub const EXPLAIN_ENTRIES: usize = 5;

/// A caller's part of a function's total, or a callee's total under it, on both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Contribution {
    /// The caller or callee (`(root)`: the function was called by nothing).
    pub name: String,
    /// Its file, as the report names files.
    pub file: Option<String>,
    /// Its start line (on the new side where it has one there).
    pub line: Option<u32>,
    /// Several functions of this name and file call (or are called) on one side: they are
    /// summed here, and never taken for time that moved.
    pub merged: bool,
    /// Per run on the base side, in the report's unit.
    pub base: f64,
    /// Per run on the new side.
    pub new: f64,
    /// Samples, all base runs.
    pub base_samples: i64,
    /// Samples, all new runs.
    pub new_samples: i64,
    /// Two-sided p-value of the change (`None` when the weights cannot be tested).
    pub p_value: Option<f64>,
}

impl Contribution {
    /// The change per run.
    pub fn delta(&self) -> f64 {
        self.new - self.base
    }
}

/// Which way inlining changed between the sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inlining {
    /// The callee was (likely) inlined into its caller in NEW: its time moved into the
    /// caller's self time.
    InNew,
    /// The callee was (likely) inlined in BASE and is not in NEW: the caller's self time moved
    /// out into it.
    UndoneInNew,
}

/// Time that moved between a function's own time and one of its callees.
#[derive(Clone, Debug, PartialEq)]
pub struct Moved {
    /// Where the time was in BASE.
    pub from: String,
    /// Its file.
    pub from_file: Option<String>,
    /// Where it is in NEW.
    pub into: String,
    /// Its file.
    pub into_file: Option<String>,
    /// How much moved, per run, in the report's unit.
    pub weight: f64,
    /// What moved it.
    pub inlining: Inlining,
}

impl Moved {
    /// Time that moved between `outer`'s own time and `inner`, a function it calls (each a name
    /// and file): into `outer` when `inner` was inlined in NEW, out into `inner` when that was undone.
    fn between(
        outer: (&String, &Option<String>),
        inner: (&String, &Option<String>),
        weight: f64,
        inlining: Inlining,
    ) -> Self {
        let (from, into) = match inlining {
            Inlining::InNew => (inner, outer),
            Inlining::UndoneInNew => (outer, inner),
        };
        Self {
            from: from.0.clone(),
            from_file: from.1.clone(),
            into: into.0.clone(),
            into_file: into.1.clone(),
            weight,
            inlining,
        }
    }
}

/// The explanation of one row of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// The row explained: an index into [`DiffReport::rows`].
    pub row: usize,
    /// Callers whose part of the function's total changed most (largest change first).
    pub callers: Vec<Contribution>,
    /// Callees whose totals under the function changed most.
    pub callees: Vec<Contribution>,
    /// Time that moved between the function and a callee or caller (inlining).
    pub moved: Vec<Moved>,
    /// What V8 did differently to the function, where both sides' profiles recorded it
    /// (tick logs read with their JIT records).
    pub jit: Option<JitChange>,
}

/// A self-time change counts as a callee's time moved when it is this close to what the
/// callee lost (or gained): between half and twice as much.
const MOVED_RATIO: (f64, f64) = (0.5, 2.0);

/// A callee "vanished" when it kept at most this share of its time under the caller.
const VANISHED_SHARE: f64 = 0.5;

/// Explains the first `count` changed rows of `report` (significant first, as ranked), from
/// the profiles it compared with `options`; `tiers` holds each run's sample tiers per side
/// when the profiles were read with their JIT records (else empty: no JIT changes).
pub fn explain(
    base: &[&Profile],
    new: &[&Profile],
    tiers: [&[RowTiers]; 2],
    report: &DiffReport,
    options: &DiffOptions,
    count: usize,
) -> Vec<Explanation> {
    // The significant changes, as ranked; where nothing could be tested, the changes.
    let changed = |r: &DiffRow| if report.tested { r.significant } else { r.verdict != Verdict::Unchanged };
    let chosen: Vec<usize> = (0..report.rows.len()).filter(|i| changed(&report.rows[*i])).take(count).collect();
    let sides = [
        Side::new(base, report, options, options.base_root.as_deref()),
        Side::new(new, report, options, options.new_root.as_deref()),
    ];
    let exposures = (Exposure::of(&report.base), Exposure::of(&report.new));
    let mut explanations: Vec<Explanation> = chosen
        .iter()
        .map(|&row| {
            let r = &report.rows[row];
            let parts = |lists: fn(&CallGraph<'_>, usize) -> CallTree| {
                let per_side = sides.each_ref().map(|side| parts(side, r, lists));
                compare(per_side, report, options, exposures)
            };
            Explanation {
                row,
                callers: parts(|g, f| g.callers(f, 1)),
                callees: parts(|g, f| g.callees(f, 1)),
                moved: Vec::new(),
                jit: jit_change(&sides, tiers, r, options.alpha),
            }
        })
        .collect();
    for e in &mut explanations {
        let row = &report.rows[e.row];
        let self_delta = row.self_delta();
        // The row's own time grew (or shrank) by about what a callee lost (or gained).
        for c in &e.callees {
            if let Some((weight, inlining)) = moved(self_delta, c, report.tested, options.alpha) {
                e.moved.push(Moved::between((&row.name, &row.file), (&c.name, &c.file), weight, inlining));
            }
        }
        // The row is the callee: a caller's own time changed by about what came through it.
        for c in &e.callers {
            let Some(caller) = find_row(report, &c.name, c.file.as_deref()) else { continue };
            let as_callee = Contribution { name: row.name.clone(), file: row.file.clone(), ..c.clone() };
            if let Some((weight, inlining)) = moved(caller.self_delta(), &as_callee, report.tested, options.alpha) {
                e.moved.push(Moved::between((&caller.name, &caller.file), (&row.name, &row.file), weight, inlining));
            }
        }
        e.moved.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        e.moved.dedup_by(|a, b| a.from == b.from && a.into == b.into);
    }
    explanations
}

/// Whether `self_delta` (a caller's self-time change per run) is `callee`'s time moving into
/// or out of it: the callee (nearly) vanished on one side, the change is about its size, and
/// the callee's change is significant where it can be tested. Returns the weight that moved.
fn moved(self_delta: f64, callee: &Contribution, tested: bool, alpha: f64) -> Option<(f64, Inlining)> {
    if callee.merged {
        return None;
    }
    let significant = !tested || callee.p_value.is_some_and(|p| p < alpha);
    let about = |gain: f64, loss: f64| loss > 0.0 && gain / loss >= MOVED_RATIO.0 && gain / loss <= MOVED_RATIO.1;
    let lost = callee.base - callee.new;
    if self_delta > 0.0 && callee.new <= VANISHED_SHARE * callee.base && about(self_delta, lost) && significant {
        return Some((self_delta.min(lost), Inlining::InNew));
    }
    let gained = callee.new - callee.base;
    if self_delta < 0.0 && callee.base <= VANISHED_SHARE * callee.new && about(-self_delta, gained) && significant {
        return Some(((-self_delta).min(gained), Inlining::UndoneInNew));
    }
    None
}

/// The report's row of the function `name` in `file`, when only one has that name there.
fn find_row<'r>(report: &'r DiffReport, name: &str, file: Option<&str>) -> Option<&'r DiffRow> {
    let mut rows = report.rows.iter().filter(|r| r.name == name && r.file.as_deref() == file);
    let row = rows.next()?;
    rows.next().is_none().then_some(row)
}

/// Per (name, file): weight per run on each side and samples per run.
type Parts = FxHashMap<(String, Option<String>), Part>;

#[derive(Clone, Debug, Default)]
struct Part {
    weight: i64,
    samples: Vec<u64>,
    /// The start lines of the functions summed here (more than one: same-named functions).
    lines: Vec<Option<u32>>,
}

/// The parts of `row`'s function in every run (`lists`: its callers or callees, one level),
/// keyed as the report keys functions.
fn parts(side: &Side<'_>, row: &DiffRow, lists: fn(&CallGraph<'_>, usize) -> CallTree) -> Parts {
    let mut parts = Parts::default();
    let n = side.runs.len();
    for (r, (graph, _)) in side.runs.iter().enumerate() {
        let key_of = |f: &TopRow| side.key_of(r, f);
        for f in side.matching(r, row) {
            let tree = lists(graph, f);
            for node in tree.roots.iter().map(|n| &tree.nodes[*n]) {
                let (key, line) = match node.function {
                    Some(g) => (key_of(&graph.functions()[g]), graph.functions()[g].line),
                    None => (("(root)".to_owned(), None), None),
                };
                let part =
                    parts.entry(key).or_insert_with(|| Part { weight: 0, samples: vec![0; n], lines: Vec::new() });
                if !part.lines.contains(&line) {
                    part.lines.push(line);
                }
                part.weight = part.weight.saturating_add(node.total.weight);
                part.samples[r] += u64::try_from(node.total.samples).unwrap_or(0);
            }
        }
    }
    parts
}

/// The parts of both sides, compared, largest change first, at most [`EXPLAIN_ENTRIES`].
fn compare(
    [base, new]: [Parts; 2],
    report: &DiffReport,
    options: &DiffOptions,
    (base_exposure, new_exposure): (Exposure, Exposure),
) -> Vec<Contribution> {
    let mut keys: Vec<&(String, Option<String>)> = base.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    let per_run = |weight: i64, runs: usize| if runs == 0 { 0.0 } else { weight as f64 / runs as f64 };
    let empty = Part::default();
    let mut out: Vec<Contribution> = keys
        .into_iter()
        .map(|key| {
            let (b, n) = (base.get(key).unwrap_or(&empty), new.get(key).unwrap_or(&empty));
            let zeros = |runs: usize| vec![0u64; runs];
            let b_samples = if b.samples.is_empty() { zeros(base_exposure.runs) } else { b.samples.clone() };
            let n_samples = if n.samples.is_empty() { zeros(new_exposure.runs) } else { n.samples.clone() };
            let p_value = report
                .tested
                .then(|| counts_p(&b_samples, &n_samples, base_exposure, new_exposure, options.normalize).0);
            Contribution {
                name: key.0.clone(),
                file: key.1.clone(),
                line: n.lines.first().or(b.lines.first()).copied().flatten(),
                merged: b.lines.len() > 1 || n.lines.len() > 1,
                base: per_run(b.weight, report.base.runs),
                new: per_run(n.weight, report.new.runs),
                base_samples: b_samples.iter().map(|v| *v as i64).sum(),
                new_samples: n_samples.iter().map(|v| *v as i64).sum(),
                p_value,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.delta().abs().total_cmp(&a.delta().abs()).then_with(|| a.name.cmp(&b.name)).then_with(|| a.file.cmp(&b.file))
    });
    out.truncate(EXPLAIN_ENTRIES);
    out
}
