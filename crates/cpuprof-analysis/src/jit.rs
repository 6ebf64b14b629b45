//! Why V8 ran a function slowly: its self time by tier, its compilations, its deoptimizations
//! with what they cost (time in lower tiers until it was optimized again), and which callees
//! its optimized code inlined — joined with the time the profile gives it.
//!
//! The tiers come from a profile read with tiers kept apart; [`without_tiers`] folds them into
//! one function each (what every other view shows) and keeps each sample's tier beside it.

use cpuprof_model::{FuncId, ModelError, Profile, ProfileBuilder, StackId, StrId, Tier};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::calltree::CallGraph;
use crate::hide::{copy_samples, FrameCopier};
use crate::top::{Amount, NO_KEY};
use crate::weights::weighs_time;

/// What deopts are grouped by: reason, kind, position and inlining chain.
type GroupKey = (StrId, StrId, StrId, Vec<StrId>);

/// A deopt costs less than this share of the profile (in per mille): noise, not a finding.
pub const DEOPT_NOISE_PER_MILLE: i64 = 10;

/// `profile` with each function's tiers folded into one function (as a profile read without
/// tiers has them), its rows in the same order, and each row's tier: the tier of its leaf
/// frame's code, where the profile kept it.
pub fn without_tiers(profile: Profile) -> Result<(Profile, Vec<Option<Tier>>), ModelError> {
    if profile.funcs.as_slice().iter().all(|f| f.tier.is_none()) {
        // Nothing to fold: each row's tier is the one the reader kept, if any.
        let tiers = match profile.samples.tiers() {
            Some(tiers) => tiers.to_vec(),
            None => vec![None; profile.samples.len()],
        };
        return Ok((profile, tiers));
    }
    let tiers: Vec<Option<Tier>> =
        profile.samples.stacks().iter().map(|s| profile.funcs[profile.func_of(*s)].tier).collect();
    let profile = &profile;
    let mut b = ProfileBuilder::new(profile.meta.format, profile.value_types.clone());
    let mut copier = FrameCopier::untiered(profile);
    let mut stacks: Vec<StackId> = Vec::with_capacity(profile.stacks.len());
    for (parent, frame) in profile.stacks.parents().iter().zip(profile.stacks.frames()) {
        let frame = copier.frame(&mut b, *frame);
        let stack = b.stack(parent.map(|p| stacks[p.index()]), frame);
        stacks.push(stack);
    }
    copy_samples(profile, &mut b, |_, old| stacks[old.index()]);
    for old in profile.stacks.ids() {
        for (line, ticks) in profile.line_hits.of(old) {
            b.line_hit(stacks[old.index()], line, ticks);
        }
    }
    let jit = &profile.jit;
    let code = jit
        .code
        .iter()
        .map(|c| cpuprof_model::CodeObject {
            func: copier.func(&mut b, c.func),
            inlined: c.inlined.iter().map(|f| copier.func(&mut b, *f)).collect(),
            ..c.clone()
        })
        .collect();
    let not_optimized: Vec<(FuncId, cpuprof_model::StrId)> = jit
        .not_optimized
        .iter()
        .map(|(f, why)| {
            let why = b.intern(profile.strings.get(*why));
            (copier.func(&mut b, *f), why)
        })
        .collect();
    let mut deopts = jit.deopts.clone();
    for d in &mut deopts {
        let mut copy = |s: cpuprof_model::StrId| b.intern(profile.strings.get(s));
        d.kind = copy(d.kind);
        d.reason = copy(d.reason);
        d.position = copy(d.position);
        for at in &mut d.inlined_at {
            *at = copy(*at);
        }
    }
    *b.jit_mut() = cpuprof_model::Jit { code, deopts, not_optimized, deopts_logged: jit.deopts_logged };
    // As `hide`'s finish, but the JIT record is this one (its functions without tiers).
    b.recording_of(&profile.meta);
    b.copy_scripts(profile);
    Ok((b.finish()?, tiers))
}

/// Self time by tier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tiers {
    /// Ignition's bytecode (`~`).
    pub interpreted: Amount,
    /// Sparkplug's baseline code (`^`).
    pub sparkplug: Amount,
    /// Maglev (`+`).
    pub maglev: Amount,
    /// TurboFan (`*`; V8 8–9's NCI code too).
    pub turbofan: Amount,
    /// Samples whose code's tier the profile does not say.
    pub unknown: Amount,
}

impl Tiers {
    fn of(&mut self, tier: Option<Tier>) -> &mut Amount {
        match tier {
            Some(Tier::Interpreted) => &mut self.interpreted,
            Some(Tier::Sparkplug) => &mut self.sparkplug,
            Some(Tier::Maglev) => &mut self.maglev,
            Some(Tier::TurboFan | Tier::NativeContextIndependent) => &mut self.turbofan,
            None => &mut self.unknown,
        }
    }

    /// Adds `other`'s amounts, tier by tier.
    pub(crate) fn add(&mut self, other: &Tiers) {
        for (sum, part) in [
            (&mut self.interpreted, other.interpreted),
            (&mut self.sparkplug, other.sparkplug),
            (&mut self.maglev, other.maglev),
            (&mut self.turbofan, other.turbofan),
            (&mut self.unknown, other.unknown),
        ] {
            sum.add(part.weight, part.samples);
        }
    }

    /// The optimized tiers' part (Maglev and TurboFan).
    pub fn optimized(&self) -> Amount {
        Amount {
            weight: self.maglev.weight.saturating_add(self.turbofan.weight),
            samples: self.maglev.samples.saturating_add(self.turbofan.samples),
        }
    }

    /// The unoptimized tiers' part (interpreted and Sparkplug).
    pub fn unoptimized(&self) -> Amount {
        Amount {
            weight: self.interpreted.weight.saturating_add(self.sparkplug.weight),
            samples: self.interpreted.samples.saturating_add(self.sparkplug.samples),
        }
    }
}

/// How high a tier is: a deopt sends code to a lower one.
fn rank(tier: Option<Tier>) -> u8 {
    match tier {
        Some(Tier::Interpreted) => 0,
        Some(Tier::Sparkplug) => 1,
        Some(Tier::Maglev) => 2,
        Some(Tier::TurboFan | Tier::NativeContextIndependent) => 3,
        None => u8::MAX,
    }
}

/// Deoptimizations of one function at one place for one reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeoptGroup {
    /// V8's reason (`wrong map`).
    pub reason: String,
    /// The bailout kind (`eager`, `lazy`, `soft`).
    pub kind: String,
    /// Where (`file:line:column`), in the innermost function.
    pub position: String,
    /// The call sites that code was inlined at, innermost first.
    pub inlined_at: Vec<String>,
    /// How many times.
    pub count: u64,
    /// The first, in ns after the start of the profile.
    pub first_ns: i64,
    /// The function's self time in tiers below the deoptimized code's after these deopts,
    /// until V8 optimized it again (or the profile ended).
    pub after: Amount,
}

/// A callee: a function by its index in [`CallGraph::functions`] (`None`: it has no samples,
/// named by `name`), and its time under the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Callee {
    /// The function, when it has samples.
    pub function: Option<usize>,
    /// Its name as reports show it (`name file:line:column` for one without samples).
    pub name: String,
    /// Its total under the caller (zero when it never ran as a frame of its own there).
    pub total: Amount,
}

/// What V8 did to one function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitFunction {
    /// The function: an index into [`CallGraph::functions`].
    pub function: usize,
    /// Its self time by tier.
    pub tiers: Tiers,
    /// Code objects V8 made for it (each compilation, any tier).
    pub code_objects: u64,
    /// Of those, optimized ones (Maglev, TurboFan).
    pub optimizations: u64,
    /// When its first optimized code was made, in ns after the start of the profile.
    pub first_optimized_ns: Option<i64>,
    /// Its deoptimizations, the costliest first.
    pub deopts: Vec<DeoptGroup>,
    /// Functions its code inlined.
    pub inlined: Vec<Callee>,
    /// Callees with at least 1% of the profile that no code of it inlined (JavaScript only,
    /// and only for a function V8 optimized).
    pub not_inlined: Vec<Callee>,
    /// Why V8 would not optimize it, where the profile says (a `.cpuprofile`'s `deoptReason`).
    pub not_optimized: Option<String>,
}

impl JitFunction {
    /// The number of deoptimizations.
    pub fn deopt_count(&self) -> u64 {
        self.deopts.iter().map(|d| d.count).sum()
    }

    /// What its deopts cost: self time in lower tiers after them.
    pub fn deopt_cost(&self) -> Amount {
        let mut cost = Amount::default();
        for d in &self.deopts {
            cost.add(d.after.weight, d.after.samples);
        }
        cost
    }
}

/// What the profile could say of V8's compilers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JitCoverage {
    /// Samples carry their code's tier (tick logs read with tiers kept apart).
    pub tiers: bool,
    /// The profile lists code objects (tick logs).
    pub code_objects: bool,
    /// The profile has deoptimization records (tick logs written with `--log-deopt`).
    pub deopts: bool,
}

/// [`jit`]'s result.
#[derive(Clone, Debug)]
pub struct JitReport {
    /// The functions asked about, in the order asked.
    pub functions: Vec<JitFunction>,
    /// What the profile could say.
    pub coverage: JitCoverage,
}

/// What V8 did to each of `functions` (indexes into `graph`'s functions), from `graph`'s
/// profile's JIT record and `row_tiers` (each sample row's tier, as [`without_tiers`] gives).
pub fn jit(graph: &CallGraph<'_>, row_tiers: &[Option<Tier>], functions: &[usize]) -> JitReport {
    let profile = graph.profile();
    let func_key = graph.func_keys();
    let chosen = Chosen::new(functions, graph.functions().len());
    let start = profile.meta.start_ns.unwrap_or(0);
    let mut out: Vec<JitFunction> = functions
        .iter()
        .map(|f| JitFunction {
            function: *f,
            tiers: Tiers::default(),
            code_objects: 0,
            optimizations: 0,
            first_optimized_ns: None,
            deopts: Vec::new(),
            inlined: Vec::new(),
            not_inlined: Vec::new(),
            not_optimized: None,
        })
        .collect();
    let chosen_of = |func: FuncId| chosen.get(func_key[func.index()]);

    // Self by tier, from each counted row's leaf.
    let (weights, counts) = crate::weights::columns(profile, graph.unit());
    let own = graph.own();
    for (row, stack) in profile.samples.stacks().iter().enumerate() {
        let Some(i) = chosen.get(graph.stack_keys()[stack.index()]) else { continue };
        if own[stack.index()] == Amount::default() {
            continue;
        }
        let c = counts.map_or(1, |c| c[row]);
        let w = weights.map_or(c, |w| w[row]);
        out[i].tiers.of(row_tiers.get(row).copied().flatten()).add(w, c);
    }

    // Code objects, and what they inlined.
    let jit = &profile.jit;
    let mut optimized_at: Vec<Vec<(i64, u8)>> = vec![Vec::new(); out.len()];
    let mut inlined: Vec<Vec<FuncId>> = vec![Vec::new(); out.len()];
    for code in &jit.code {
        let Some(i) = chosen_of(code.func) else { continue };
        let f = &mut out[i];
        f.code_objects += 1;
        if rank(Some(code.tier)) >= 2 {
            f.optimizations += 1;
            let at = code.created_ns.saturating_sub(start);
            f.first_optimized_ns = Some(f.first_optimized_ns.map_or(at, |t| t.min(at)));
            optimized_at[i].push((code.created_ns, rank(Some(code.tier))));
        }
        for callee in &code.inlined {
            if !inlined[i].contains(callee) {
                inlined[i].push(*callee);
            }
        }
    }
    for (func, why) in &jit.not_optimized {
        if let Some(i) = chosen_of(*func) {
            out[i].not_optimized = Some(profile.strings.get(*why).to_owned());
        }
    }

    // Deopts, grouped; each with the window its cost is counted in.
    let mut windows: Vec<Vec<Window>> = vec![Vec::new(); out.len()];
    let mut groups: Vec<FxHashMap<GroupKey, usize>> = vec![FxHashMap::default(); out.len()];
    for deopt in &jit.deopts {
        let Some(code) = jit.code.get(deopt.code as usize) else { continue };
        let Some(i) = chosen_of(code.func) else { continue };
        let key = (deopt.reason, deopt.kind, deopt.position, deopt.inlined_at.clone());
        let next = out[i].deopts.len();
        let group = *groups[i].entry(key).or_insert(next);
        if group == next {
            let s = |id| profile.strings.get(id).to_owned();
            out[i].deopts.push(DeoptGroup {
                reason: s(deopt.reason),
                kind: s(deopt.kind),
                position: s(deopt.position),
                inlined_at: deopt.inlined_at.iter().map(|a| s(*a)).collect(),
                count: 0,
                first_ns: deopt.time_ns.saturating_sub(start),
                after: Amount::default(),
            });
        }
        let g = &mut out[i].deopts[group];
        g.count += 1;
        g.first_ns = g.first_ns.min(deopt.time_ns.saturating_sub(start));
        windows[i].push(Window { from: deopt.time_ns, to: i64::MAX, rank: rank(Some(code.tier)), group });
    }
    for (i, w) in windows.iter_mut().enumerate() {
        close_windows(w, &optimized_at[i]);
    }
    deopt_costs(graph, row_tiers, &chosen, &windows, &mut out);

    // Inlined callees, and hot callees not inlined.
    let threshold = graph.total() / 100;
    let mut all_callees = callee_totals(graph, &chosen, out.len());
    for (i, f) in out.iter_mut().enumerate() {
        let callees = std::mem::take(&mut all_callees[i]);
        let mut inlined_keys: FxHashSet<u32> = FxHashSet::default();
        for func in &inlined[i] {
            let key = func_key[func.index()];
            let (function, name) = if key == NO_KEY || key as usize >= graph.functions().len() {
                (None, name_of(profile, *func))
            } else {
                inlined_keys.insert(key);
                (Some(key as usize), graph.functions()[key as usize].name.clone())
            };
            let total = function.and_then(|k| callees.get(&(k as u32)).copied()).unwrap_or_default();
            f.inlined.push(Callee { function, name, total });
        }
        f.inlined.sort_by(|a, b| b.total.weight.cmp(&a.total.weight).then_with(|| a.name.cmp(&b.name)));
        if f.optimizations > 0 {
            let mut hot: Vec<(u32, Amount)> = callees
                .iter()
                .filter(|(k, a)| {
                    !inlined_keys.contains(k)
                        && a.weight >= threshold.max(1)
                        && graph.functions()[**k as usize].kind == cpuprof_model::FuncKind::Js
                })
                .map(|(k, a)| (*k, *a))
                .collect();
            hot.sort_by(|a, b| b.1.weight.cmp(&a.1.weight).then(a.0.cmp(&b.0)));
            f.not_inlined = hot
                .into_iter()
                .map(|(k, total)| Callee {
                    function: Some(k as usize),
                    name: graph.functions()[k as usize].name.clone(),
                    total,
                })
                .collect();
        }
        f.deopts.sort_by(|a, b| {
            b.after.weight.cmp(&a.after.weight).then(b.count.cmp(&a.count)).then(a.first_ns.cmp(&b.first_ns))
        });
    }
    let coverage = JitCoverage {
        tiers: row_tiers.iter().any(Option::is_some),
        code_objects: !jit.code.is_empty(),
        deopts: jit.deopts_logged,
    };
    JitReport { functions: out, coverage }
}

/// The functions asked about, by key (a function's index in the graph): their place in the
/// report. Looked up per sample, so a table, not a hash.
struct Chosen(Vec<u32>);

impl Chosen {
    fn new(functions: &[usize], keys: usize) -> Self {
        let mut at = vec![u32::MAX; keys];
        for (i, f) in functions.iter().enumerate() {
            if let Some(slot) = at.get_mut(*f) {
                *slot = i as u32;
            }
        }
        Chosen(at)
    }

    /// The report's index of the function with key `key` (`NO_KEY` and keys past the graph: none).
    fn get(&self, key: u32) -> Option<usize> {
        self.0.get(key as usize).filter(|i| **i != u32::MAX).map(|i| *i as usize)
    }
}

/// A deopt's cost window: from the deopt until the function's code was optimized again to at
/// least the tier that deoptimized (or the next deopt of it), samples below `rank` count.
#[derive(Clone, Copy, Debug)]
struct Window {
    from: i64,
    to: i64,
    rank: u8,
    group: usize,
}

fn close_windows(windows: &mut [Window], optimized: &[(i64, u8)]) {
    windows.sort_by_key(|w| w.from);
    // The optimizations at each rank or above, in time order: a window's end is a search,
    // not a scan (a function can deoptimize and re-optimize thousands of times).
    let at_rank = |rank: u8| {
        let mut times: Vec<i64> = optimized.iter().filter(|(_, r)| *r >= rank).map(|(at, _)| *at).collect();
        times.sort_unstable();
        times
    };
    let mut by_rank: FxHashMap<u8, Vec<i64>> = FxHashMap::default();
    for k in 0..windows.len() {
        let w = windows[k];
        let times = by_rank.entry(w.rank).or_insert_with(|| at_rank(w.rank));
        let reoptimized = times.get(times.partition_point(|at| *at <= w.from)).copied().unwrap_or(i64::MAX);
        let next = windows.get(k + 1).map_or(i64::MAX, |n| n.from);
        windows[k].to = reoptimized.min(next);
    }
}

/// Adds each chosen function's self samples in a lower tier inside one of its deopts' windows
/// to that deopt's group.
fn deopt_costs(
    graph: &CallGraph<'_>,
    row_tiers: &[Option<Tier>],
    chosen: &Chosen,
    windows: &[Vec<Window>],
    out: &mut [JitFunction],
) {
    if windows.iter().all(Vec::is_empty) {
        return;
    }
    let profile = graph.profile();
    let Some(timeline) = profile.samples.timeline() else { return };
    let stacks = profile.samples.stacks();
    let keys = graph.stack_keys();
    let own = graph.own();
    let by_time = weighs_time(profile, graph.unit());
    timeline.for_each(|sample| {
        let row = sample.row as usize;
        let Some(stack) = stacks.get(row) else { return };
        let Some(i) = chosen.get(keys[stack.index()]) else { return };
        if own[stack.index()] == Amount::default() {
            return;
        }
        let w = &windows[i];
        let at = w.partition_point(|x| x.from <= sample.time_ns);
        let Some(window) = at.checked_sub(1).map(|k| w[k]) else { return };
        let tier = row_tiers.get(row).copied().flatten();
        if sample.time_ns < window.to && tier.is_some() && rank(tier) < window.rank {
            let weight = if by_time { sample.weight_ns } else { 1 };
            out[i].deopts[window.group].after.add(weight, 1);
        }
    });
}

/// For each of the `n` chosen functions, each callee's total under it (one level down), by
/// key: what [`CallGraph::callees`] gives at depth 1 — read below the function's innermost
/// frame in each stack, through frames without a function — in one walk up every stack with
/// samples of its own, rather than one walk of the whole tree per function.
fn callee_totals(graph: &CallGraph<'_>, chosen: &Chosen, n: usize) -> Vec<FxHashMap<u32, Amount>> {
    let mut out: Vec<FxHashMap<u32, Amount>> = vec![FxHashMap::default(); n];
    let parents = graph.profile().stacks.parents();
    let keys = graph.stack_keys();
    let mut seen: Vec<usize> = Vec::new();
    for (s, own) in graph.own().iter().enumerate() {
        if own.samples == 0 && own.weight == 0 {
            continue;
        }
        seen.clear();
        let mut below: Option<u32> = None;
        let mut at = Some(s);
        while let Some(node) = at {
            let key = keys[node];
            if key != NO_KEY {
                if let Some(i) = chosen.get(key).filter(|i| !seen.contains(i)) {
                    // Its innermost frame on this path: what it called is the frame below.
                    seen.push(i);
                    if let Some(callee) = below {
                        out[i].entry(callee).or_default().add(own.weight, own.samples);
                    }
                }
                below = Some(key);
            }
            at = parents[node].map(StackId::index);
        }
    }
    out
}

/// `name file:line:column` of a function no sample has.
fn name_of(profile: &Profile, func: FuncId) -> String {
    let f = profile.funcs[func];
    let name = profile.strings.get(f.name);
    let name = if name.is_empty() { "(anonymous)" } else { name };
    let file = profile.func_file(&f);
    match (file.is_empty(), f.line, f.column) {
        (true, _, _) => name.to_owned(),
        (false, Some(l), Some(c)) => format!("{name} {file}:{l}:{c}"),
        (false, Some(l), None) => format!("{name} {file}:{l}"),
        (false, None, _) => format!("{name} {file}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CallGraphOptions, StackFilter, Weight};
    use cpuprof_parse::{parse, Origin, ParseOptions};

    /// The one walk gives every function's callees as [`CallGraph::callees`] does, recursion
    /// and frames without a function included.
    #[test]
    fn callee_totals_are_the_call_trees() {
        let fixtures = [
            "jit/jit.log.gz",
            "lines/inlined.log.gz",
            "cpuprofile/deep-recursion.cpuprofile",
            "cpuprofile/blocks.cpuprofile",
            "cpuprofile/money.cpuprofile",
        ];
        for path in fixtures {
            let bytes = std::fs::read(format!("../../fixtures/{path}")).unwrap();
            let profile = parse(bytes.as_slice(), &Origin(path.into()), &ParseOptions::default()).unwrap();
            let graph = CallGraph::new(&profile, &CallGraphOptions::new(Weight::Time, StackFilter::default()));
            let all: Vec<usize> = (0..graph.functions().len()).collect();
            let walked = callee_totals(&graph, &Chosen::new(&all, all.len()), all.len());
            let mut compared = 0;
            for f in all {
                let tree = graph.callees(f, 1);
                let mut expected: FxHashMap<u32, Amount> = FxHashMap::default();
                for node in tree.roots.iter().map(|r| &tree.nodes[*r]) {
                    if let Some(g) = node.function {
                        expected.entry(g as u32).or_default().add(node.total.weight, node.total.samples);
                    }
                }
                compared += expected.len();
                assert_eq!(walked[f], expected, "{path}: {}", graph.functions()[f].name);
            }
            assert!(compared > 5, "{path}: {compared} callees");
        }
    }
}

/// What the data says of a function, when it says something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finding {
    /// Its deopts cost at least 1% of the profile in lower tiers.
    Deopts,
    /// At least 1% of the profile in its own code, and most of that unoptimized.
    Unoptimized,
    /// Optimized, and a hot callee was never inlined into it.
    NotInlined,
    /// It deoptimized, but that cost less than 1% of the profile: noise, not a finding.
    Noise,
}

impl Finding {
    /// The finding's name in reports' data.
    pub fn as_str(self) -> &'static str {
        match self {
            Finding::Deopts => "deopts",
            Finding::Unoptimized => "unoptimized",
            Finding::NotInlined => "not-inlined",
            Finding::Noise => "noise",
        }
    }
}

impl JitFunction {
    /// What the data says of it, in a profile whose percentages are of `total`.
    pub fn finding(&self, self_weight: i64, total: i64, coverage: JitCoverage) -> Option<Finding> {
        let share = |w: i64| i128::from(w) * 1000 >= i128::from(total) * i128::from(DEOPT_NOISE_PER_MILLE);
        let cost = self.deopt_cost().weight;
        if self.deopt_count() > 0 && cost > 0 && share(cost) {
            return Some(Finding::Deopts);
        }
        let unoptimized = self.tiers.unoptimized().weight;
        if coverage.tiers && self_weight > 0 && share(self_weight) && unoptimized.saturating_mul(2) > self_weight {
            return Some(Finding::Unoptimized);
        }
        if !self.not_inlined.is_empty() {
            return Some(Finding::NotInlined);
        }
        (self.deopt_count() > 0).then_some(Finding::Noise)
    }
}

/// The functions (indexes into `graph`'s functions) whose code V8 deoptimized and whose total
/// is at least 1% of the profile, heaviest total first: an inliner's deopt matters even where
/// its own self time is small.
pub fn deoptimized(graph: &CallGraph<'_>) -> Vec<usize> {
    let profile = graph.profile();
    let func_key = graph.func_keys();
    let functions = graph.functions();
    let mut found: Vec<usize> = Vec::new();
    for deopt in &profile.jit.deopts {
        let Some(code) = profile.jit.code.get(deopt.code as usize) else { continue };
        let key = func_key[code.func.index()];
        if key == NO_KEY || key as usize >= functions.len() || found.contains(&(key as usize)) {
            continue;
        }
        let total = functions[key as usize].total_weight;
        if i128::from(total) * 100 >= i128::from(graph.total()) && total > 0 {
            found.push(key as usize);
        }
    }
    found.sort_by(|a, b| functions[*b].total_weight.cmp(&functions[*a].total_weight).then(a.cmp(b)));
    found
}
