//! What V8 did differently to one function between the sides of a comparison, from the tick
//! logs' own records: its self time's tiers, its deoptimizations and what its optimized code
//! inlined. Facts the logs state, never guesses: a tier shift is named only when it is large
//! and significant, a deopt is "new" only when no BASE run has one at that place for that
//! reason, a callee "no longer inlined" only when NEW's optimized code of the function exists
//! and none of it inlined the callee.

use cpuprof_model::Tier;
use rustc_hash::FxHashMap;

use crate::diff::DiffRow;
use crate::jit::{jit, DeoptGroup, Tiers};
use crate::side::Side;
use crate::top::Amount;

/// Each sample row's tier, as [`crate::without_tiers`] gives it, per run of a side.
pub type RowTiers = Vec<Option<Tier>>;

/// A tier shift is named when the optimized share of the function's self time moved by at
/// least this many percentage points (and the move is significant).
pub const TIER_SHIFT_POINTS: f64 = 10.0;

/// One side's JIT facts for the function, summed over its runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JitSide {
    /// Runs of the side.
    pub runs: usize,
    /// Runs that had the function.
    pub runs_with: usize,
    /// Self time by tier, all runs.
    pub tiers: Tiers,
    /// Code objects V8 made for it, all runs.
    pub code_objects: u64,
    /// Optimized ones (Maglev, TurboFan), all runs.
    pub optimizations: u64,
    /// Every run's log has deoptimization records (of any function). A log without any was
    /// written without `--log-deopt`, or V8 deoptimized nothing: the log cannot tell which.
    pub deopts_logged: bool,
}

/// The optimized share of the function's self time on each side, when it moved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TierShift {
    /// Maglev and TurboFan's share of the function's self samples whose tier is known, BASE.
    pub base_optimized: f64,
    /// The same, NEW.
    pub new_optimized: f64,
    /// Two-sided p-value of equal shares.
    pub p_value: f64,
}

/// Deopts at one place for one reason found on one side only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeoptChange {
    /// The deopts, summed over the side's runs (positions with the report's file names).
    pub group: DeoptGroup,
    /// How many of the side's runs had them.
    pub runs: usize,
    /// What the sides are compared by: reason, kind, and the positions with lines in the
    /// function's own file counted from its start line (code moved up or down by an edit
    /// above it deoptimizes at the same place).
    key: Vec<String>,
}

/// A callee inlined by one side's optimized code of the function and by none of the other's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlineChange {
    /// The callee.
    pub name: String,
    /// Its file (as the report names files).
    pub file: Option<String>,
}

/// What V8 did differently to one function.
#[derive(Clone, Debug, PartialEq)]
pub struct JitChange {
    /// BASE's facts.
    pub base: JitSide,
    /// NEW's facts.
    pub new: JitSide,
    /// The optimized share moved by at least [`TIER_SHIFT_POINTS`], significantly.
    pub tier_shift: Option<TierShift>,
    /// Deopts in NEW at a place and for a reason no BASE run has (empty unless one side's logs
    /// all have deopt records: a log without any cannot tell `--log-deopt` missing from V8
    /// deoptimizing nothing, and the words say so).
    pub new_deopts: Vec<DeoptChange>,
    /// Deopts in BASE that no NEW run has.
    pub gone_deopts: Vec<DeoptChange>,
    /// Callees BASE's optimized code inlined and NEW's (which exists) did not.
    pub no_longer_inlined: Vec<InlineChange>,
    /// Callees NEW's optimized code inlined and BASE's (which exists) did not.
    pub newly_inlined: Vec<InlineChange>,
}

impl JitChange {
    /// The sides' facts with no change claimed.
    fn unchanged(base: JitSide, new: JitSide) -> Self {
        JitChange {
            base,
            new,
            tier_shift: None,
            new_deopts: Vec::new(),
            gone_deopts: Vec::new(),
            no_longer_inlined: Vec::new(),
            newly_inlined: Vec::new(),
        }
    }

    /// Whether both sides had the function (else no change is claimed: it is new or gone).
    pub fn compared(&self) -> bool {
        self.base.runs_with > 0 && self.new.runs_with > 0
    }

    /// Whether the logs show any change for the function.
    pub fn claims_nothing(&self) -> bool {
        self.tier_shift.is_none()
            && self.new_deopts.is_empty()
            && self.gone_deopts.is_empty()
            && self.no_longer_inlined.is_empty()
            && self.newly_inlined.is_empty()
            && (!self.compared()
                || self.base.optimizations * self.new.runs as u64 == self.new.optimizations * self.base.runs as u64)
    }

    /// Whether deopts were compared: both sides had the function, and every log of one side
    /// at least has deopt records.
    pub fn deopts_compared(&self) -> bool {
        self.compared() && (self.base.deopts_logged || self.new.deopts_logged)
    }
}

/// One side's facts, with what they are compared by.
#[derive(Default)]
struct Gathered {
    side: JitSide,
    /// Deopt groups by (reason, kind, position, chain), with the runs that had them.
    deopts: Vec<DeoptChange>,
    /// Callees some optimized code inlined, by (name, file).
    inlined: Vec<(String, Option<String>)>,
}

/// What V8 did differently to `row`'s function between `sides`, whose runs' tiers are `tiers`;
/// `None` when a side's profiles record neither tiers nor code objects (not tick logs read
/// with their JIT records).
pub(crate) fn jit_change(
    sides: &[Side<'_>; 2],
    tiers: [&[RowTiers]; 2],
    row: &DiffRow,
    alpha: f64,
) -> Option<JitChange> {
    let [base, new] = [0, 1].map(|s| gather(&sides[s], tiers[s], row));
    let (base, new) = (base?, new?);
    if base.side.runs_with == 0 || new.side.runs_with == 0 {
        // A function new or gone: everything V8 did to it is on one side, nothing changed.
        return Some(JitChange::unchanged(base.side, new.side));
    }
    let tier_shift = tier_shift(&base.side.tiers, &new.side.tiers, alpha);
    let (new_deopts, gone_deopts) = if base.side.deopts_logged || new.side.deopts_logged {
        (only_in(&new.deopts, &base.deopts), only_in(&base.deopts, &new.deopts))
    } else {
        (Vec::new(), Vec::new())
    };
    let inline_change = |from: &Gathered, to: &Gathered| -> Vec<InlineChange> {
        if to.side.optimizations == 0 {
            return Vec::new();
        }
        from.inlined
            .iter()
            .filter(|k| !to.inlined.contains(k))
            .map(|(name, file)| InlineChange { name: name.clone(), file: file.clone() })
            .collect()
    };
    Some(JitChange {
        no_longer_inlined: inline_change(&base, &new),
        newly_inlined: inline_change(&new, &base),
        tier_shift,
        new_deopts,
        gone_deopts,
        base: base.side,
        new: new.side,
    })
}

/// One side's facts for `row`'s function; `None` when its profiles have no JIT record.
fn gather(side: &Side<'_>, tiers: &[RowTiers], row: &DiffRow) -> Option<Gathered> {
    if tiers.len() != side.runs.len() {
        return None;
    }
    let recorded = side
        .runs
        .iter()
        .zip(tiers)
        .all(|((graph, _), tiers)| !graph.profile().jit.code.is_empty() || tiers.iter().any(Option::is_some));
    if !recorded {
        return None;
    }
    let mut out = Gathered {
        side: JitSide {
            runs: side.runs.len(),
            deopts_logged: side.runs.iter().all(|(g, _)| g.profile().jit.deopts_logged),
            ..JitSide::default()
        },
        ..Gathered::default()
    };
    let mut deopt_index: FxHashMap<Vec<String>, usize> = FxHashMap::default();
    for (run, ((graph, files), tiers)) in side.runs.iter().zip(tiers).enumerate() {
        let functions = side.matching(run, row);
        if functions.is_empty() {
            continue;
        }
        out.side.runs_with += 1;
        let rename = |position: &str| renamed_position(position, files);
        let mut seen_in_run: Vec<usize> = Vec::new();
        for f in jit(graph, tiers, &functions).functions {
            out.side.tiers.add(&f.tiers);
            out.side.code_objects += f.code_objects;
            out.side.optimizations += f.optimizations;
            for d in f.deopts {
                let group = DeoptGroup {
                    position: rename(&d.position),
                    inlined_at: d.inlined_at.iter().map(|a| rename(a)).collect(),
                    ..d
                };
                let start = graph.functions()[f.function].line;
                let mut key = vec![group.reason.clone(), group.kind.clone()];
                key.extend(
                    std::iter::once(&group.position)
                        .chain(&group.inlined_at)
                        .map(|p| from_start(p, row.file.as_deref(), start)),
                );
                let next = out.deopts.len();
                let i = *deopt_index.entry(key.clone()).or_insert(next);
                if i == next {
                    out.deopts.push(DeoptChange {
                        group: DeoptGroup { count: 0, after: Amount::default(), ..group.clone() },
                        runs: 0,
                        key,
                    });
                }
                let sum = &mut out.deopts[i];
                sum.group.count += group.count;
                sum.group.first_ns = sum.group.first_ns.min(group.first_ns);
                sum.group.after.add(group.after.weight, group.after.samples);
                if !seen_in_run.contains(&i) {
                    seen_in_run.push(i);
                    sum.runs += 1;
                }
            }
            for callee in f.inlined {
                let key = match callee.function {
                    Some(k) => side.key_of(run, &graph.functions()[k]),
                    None => (callee.name, None),
                };
                if !out.inlined.contains(&key) {
                    out.inlined.push(key);
                }
            }
        }
    }
    Some(out)
}

/// `file:line:column` with the file as the report names it.
fn renamed_position(position: &str, files: &FxHashMap<String, String>) -> String {
    let mut parts = position.rsplitn(3, ':');
    let (Some(column), Some(line), Some(file)) = (parts.next(), parts.next(), parts.next()) else {
        return position.to_owned();
    };
    match files.get(file) {
        Some(renamed) => format!("{renamed}:{line}:{column}"),
        None => position.to_owned(),
    }
}

/// `file:line:column` with the line counted from `start` (`file:+3:7`) when `file` is the
/// function's own (`own`); else as it is.
fn from_start(position: &str, own: Option<&str>, start: Option<u32>) -> String {
    let mut parts = position.rsplitn(3, ':');
    let (Some(column), Some(line), Some(file), Some(own), Some(start)) =
        (parts.next(), parts.next(), parts.next(), own, start)
    else {
        return position.to_owned();
    };
    match line.parse::<i64>() {
        Ok(line) if file == own => format!("{file}:{:+}:{column}", line - i64::from(start)),
        _ => position.to_owned(),
    }
}

/// The groups of `side` at a (reason, kind, place) that `other` has none of, most first.
fn only_in(side: &[DeoptChange], other: &[DeoptChange]) -> Vec<DeoptChange> {
    let mut out: Vec<DeoptChange> = side.iter().filter(|d| !other.iter().any(|o| o.key == d.key)).cloned().collect();
    out.sort_by(|a, b| b.group.count.cmp(&a.group.count).then(a.group.first_ns.cmp(&b.group.first_ns)));
    out
}

/// The optimized share of self samples on each side, when it moved by [`TIER_SHIFT_POINTS`]
/// or more and the move is significant at `alpha`.
fn tier_shift(base: &Tiers, new: &Tiers, alpha: f64) -> Option<TierShift> {
    let counts = |t: &Tiers| {
        let optimized = u64::try_from(t.optimized().samples).unwrap_or(0);
        let unoptimized = u64::try_from(t.unoptimized().samples).unwrap_or(0);
        (optimized, unoptimized)
    };
    let ((bo, bu), (no, nu)) = (counts(base), counts(new));
    let (b_all, n_all) = (bo + bu, no + nu);
    if b_all == 0 || n_all == 0 {
        return None;
    }
    let (base_optimized, new_optimized) = (bo as f64 / b_all as f64, no as f64 / n_all as f64);
    if (new_optimized - base_optimized).abs() * 100.0 < TIER_SHIFT_POINTS {
        return None;
    }
    // Conditional on how many samples fell in the rarer kind of code, BASE's part of them is
    // binomial with BASE's share of the function's samples when the shares are equal (the
    // binomial approximation of Fisher's exact test, close when that kind is rare).
    let share = b_all as f64 / (b_all + n_all) as f64;
    let p_value = if bu + nu <= bo + no {
        crate::stats::binomial_p(bu, nu, share)
    } else {
        crate::stats::binomial_p(bo, no, share)
    };
    (p_value < alpha).then_some(TierShift { base_optimized, new_optimized, p_value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{diff, without_tiers, DiffOptions};
    use cpuprof_model::Profile;
    use cpuprof_parse::{parse, Origin, ParseOptions};

    /// `path` read with its JIT records (only leaves named with their tier, as the app reads),
    /// or with every frame's tiers apart, folded.
    fn read_with(path: &str, split_tiers: bool, frame_lines: bool) -> (Profile, RowTiers) {
        let bytes = std::fs::read(format!("../../fixtures/{path}")).unwrap();
        let mut options = ParseOptions::with_timeline();
        options.jit = true;
        options.split_tiers = split_tiers;
        options.frame_lines = frame_lines;
        without_tiers(parse(bytes.as_slice(), &Origin(path.into()), &options).unwrap()).unwrap()
    }

    fn read(path: &str) -> (Profile, RowTiers) {
        read_with(path, false, false)
    }

    /// Leaves named with their tier give each function the same self time by tier, code
    /// objects, deopts and deopt costs as every frame's tiers kept apart (and the same profile
    /// once folded), with and without frame lines.
    #[test]
    fn leaf_tiers_are_what_tiers_apart_give() {
        use crate::{CallGraph, CallGraphOptions, StackFilter, Weight};
        let logs = ["jit/jit.log.gz", "jit/jit-sparkplug.log.gz", "lines/inlined.log.gz", "inline/new.1.log.gz"];
        for path in logs {
            for lines in [false, true] {
                let per_function = |split: bool| {
                    let (profile, tiers) = read_with(path, split, lines);
                    let graph = CallGraph::new(&profile, &CallGraphOptions::new(Weight::Time, StackFilter::default()));
                    let all: Vec<usize> = (0..graph.functions().len()).collect();
                    let report = jit(&graph, &tiers, &all);
                    let mut out: Vec<String> = report
                        .functions
                        .iter()
                        // Functions the profile names but no sample or code object has are
                        // not compared (a read may name a frame it then places elsewhere).
                        .filter(|f| graph.functions()[f.function].total_samples > 0 || f.code_objects > 0)
                        .map(|f| {
                            let row = &graph.functions()[f.function];
                            let deopts: Vec<String> =
                                f.deopts.iter().map(|d| format!("{}×{} {:?}", d.count, d.reason, d.after)).collect();
                            format!(
                                "{} {:?}:{:?} self {} {:?} code {} deopts {deopts:?}",
                                row.name, row.file, row.line, row.self_weight, f.tiers, f.code_objects
                            )
                        })
                        .collect();
                    out.sort();
                    out
                };
                let (leaf, apart) = (per_function(false), per_function(true));
                assert!(leaf.len() > 10, "{path}: {} functions", leaf.len());
                let only_leaf: Vec<&String> = leaf.iter().filter(|l| !apart.contains(l)).collect();
                let only_apart: Vec<&String> = apart.iter().filter(|l| !leaf.contains(l)).collect();
                assert!(
                    only_leaf.is_empty() && only_apart.is_empty(),
                    "{path} (lines: {lines}): leaf tiers only {only_leaf:#?}, tiers apart only {only_apart:#?}"
                );
            }
        }
    }

    /// Every function of a log compared with itself: the logs show no change, whatever the
    /// function (hot, deoptimized, inlining, never optimized).
    #[test]
    fn self_against_self_claims_nothing() {
        for path in ["jit/jit.log.gz", "jit/jit-sparkplug.log.gz", "lines/inlined.log.gz"] {
            let (profile, tiers) = read(path);
            let options = DiffOptions::default();
            let report = diff(&[&profile], &[&profile], &options);
            let sides = [0, 1].map(|_| Side::new(&[&profile], &report, &options, None));
            let tiers = [std::slice::from_ref(&tiers), std::slice::from_ref(&tiers)];
            let mut optimized = 0;
            for row in &report.rows {
                let change = jit_change(&sides, tiers, row, options.alpha).expect("a tick log has JIT records");
                assert!(change.claims_nothing() && change.base == change.new, "{path}: {}: {change:?}", row.name);
                optimized += usize::from(change.base.optimizations > 0);
            }
            assert!(optimized > 0 || path.contains("sparkplug"), "{path}: no optimized function compared");
        }
    }

    /// The pair of fixtures/jit: the polymorphic call site's deopts are new in NEW, gone in the
    /// reverse comparison; the Sparkplug-only run shifts sumTo's tiers.
    #[test]
    fn the_planned_changes_are_claimed_both_ways() {
        let (mono, mono_tiers) = read("jit/jit-mono.log.gz");
        let (poly, poly_tiers) = read("jit/jit.log.gz");
        let (sparkplug, sparkplug_tiers) = read("jit/jit-sparkplug.log.gz");
        let options = DiffOptions::default();
        let change = |base: (&Profile, &RowTiers), new: (&Profile, &RowTiers), name: &str| {
            let report = diff(&[base.0], &[new.0], &options);
            let row = report.rows.iter().find(|r| r.name == name).unwrap();
            let sides = [Side::new(&[base.0], &report, &options, None), Side::new(&[new.0], &report, &options, None)];
            jit_change(&sides, [std::slice::from_ref(base.1), std::slice::from_ref(new.1)], row, options.alpha).unwrap()
        };
        let forward = change((&mono, &mono_tiers), (&poly, &poly_tiers), "sumAreas");
        assert!(forward.new_deopts.iter().any(|d| d.group.reason == "wrong map"), "{forward:?}");
        assert!(forward.gone_deopts.is_empty() && forward.tier_shift.is_none(), "{forward:?}");
        let back = change((&poly, &poly_tiers), (&mono, &mono_tiers), "sumAreas");
        assert_eq!(back.gone_deopts, forward.new_deopts);
        let shift = change((&mono, &mono_tiers), (&sparkplug, &sparkplug_tiers), "sumTo").tier_shift.unwrap();
        assert!(shift.base_optimized > 0.9 && shift.new_optimized == 0.0 && shift.p_value < 1e-6, "{shift:?}");
    }
}
