//! The model as a V8 `.cpuprofile` (for DevTools, speedscope, or `cpuprof` itself), written
//! so that DevTools' reading of the file gives every stack the samples and time it has here.
//!
//! DevTools gives sample i the time until sample i+1, the last sample the mean interval, and
//! a lone `(program)` sample between two samples under one top-level node to the previous
//! node. So:
//! - a profile with a timeline (a .cpuprofile, a trace or a tick log read with one) keeps
//!   its sample order, and the sample times are rebuilt from the durations: a .cpuprofile
//!   comes back with its own times, and its last sample already lasts the mean;
//! - an aggregated profile (pprof, folded stacks) is written stack by stack, `(program)`
//!   stacks first (so none sits between two others), and one sample of a stack that can
//!   give it the mean interval is moved to the end.
//!
//! A timeline whose order DevTools would rewrite (it tells apart equal call paths that the
//! model merged) is written stack by stack instead. Where the file cannot carry the times
//! exactly (say every stack has one sample, each of another length), the difference is
//! returned as a note, as are invented counts or times and what the format has no place for.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;

use cpuprof_model::file_url::file_url_of_path;
use cpuprof_model::{Children, FuncKind, Profile, SampleTimeline, StackId, StrId, ValueUnit, VmState};

/// A written `.cpuprofile` and what the user should know about it.
#[derive(Clone, Debug)]
pub struct CpuProfileOutput {
    /// The JSON text.
    pub json: Vec<u8>,
    /// Where the file differs from the profile, one sentence each.
    pub notes: Vec<String>,
}

/// The time one sample stands for when a profile has counts but no times: the period the
/// profile states, else V8's default sampling interval.
const DEFAULT_INTERVAL_NS: i64 = cpuprof_model::defaults::V8_SAMPLING_INTERVAL_NS;

/// Renders `profile` as `.cpuprofile` JSON.
///
/// A `.cpuprofile` lists every sample; a profile of more than [`MAX_SAMPLES`] (a file of
/// several GB) is refused with a message rather than written.
pub fn render_cpuprofile(profile: &Profile) -> Result<CpuProfileOutput, crate::RenderError> {
    let mut notes = lost_in_the_format(profile);
    let tree = Nodes::of(profile);
    let plan = Plan::of(profile, &tree, &mut notes);
    if plan.n > MAX_SAMPLES {
        return Err(crate::RenderError::TooManySamples { samples: plan.n, limit: MAX_SAMPLES });
    }
    if plan.total_ns >= TIME_LIMIT_NS / 4 {
        return Err(crate::RenderError::TooLong { total_ns: plan.total_ns });
    }
    let json = write_json(profile, &tree, &plan);
    Ok(CpuProfileOutput { json, notes })
}

/// Times beyond ±2^62 ns (146 years) are not read back (by cpuprof; DevTools computes in
/// doubles and loses precision long before), so none is written: the samples may last a
/// quarter of that, the recording may start a quarter of that before them.
const TIME_LIMIT_NS: i64 = cpuprof_model::defaults::TIME_LIMIT_NS;

/// The most samples a written `.cpuprofile` may hold: about 500 MB of JSON, as much as node
/// and DevTools can read (V8 strings stop at 2^29 - 24 characters).
pub const MAX_SAMPLES: u64 = 50_000_000;

/// What a `.cpuprofile` has no place for: VM states, and kinds of native code.
fn lost_in_the_format(profile: &Profile) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(states) = profile.samples.vm_states() {
        let counts = profile.value_index(ValueUnit::Count).map(|k| profile.samples.values(k));
        let count = |state| {
            let rows = states.iter().enumerate().filter(|(_, s)| **s == state);
            rows.map(|(row, _)| counts.map_or(1, |c| c[row])).fold(0i64, i64::saturating_add)
        };
        let (gc, idle) = (count(VmState::Gc), count(VmState::Idle));
        if gc + idle > 0 {
            notes.push(format!(
                "a .cpuprofile has no VM states: {gc} sample(s) taken during GC and {idle} while idle keep their stacks"
            ));
        }
    }
    let native = |kind| {
        matches!(kind, FuncKind::Cpp | FuncKind::SharedLib | FuncKind::Builtin | FuncKind::Regexp | FuncKind::Unknown)
    };
    if profile.funcs.as_slice().iter().any(|f| native(f.kind)) {
        notes.push(
            "C++, library, builtin and regexp functions are written as functions of their library or of no file (a .cpuprofile has no kinds for them)"
                .to_owned(),
        );
    }
    notes
}

/// The call tree: one node per stack, under one root (index 0). Written ids are index + 1.
struct Nodes {
    /// The stack each node stands for (`None` for a root the profile does not have).
    stack: Vec<Option<StackId>>,
    /// Children of each node, in node order.
    children: Children<u32>,
    /// The node of each stack.
    of_stack: Vec<u32>,
    /// Each node's top-level ancestor (the root's child above it; DevTools' "bottom node").
    top_level: Vec<u32>,
}

impl Nodes {
    fn of(profile: &Profile) -> Nodes {
        let stacks = &profile.stacks;
        let mut stack = vec![None];
        let mut parent: Vec<u32> = vec![0];
        let mut of_stack = Vec::with_capacity(stacks.len());
        // Parents come before children in a stack table, so one forward pass suffices.
        for (id, up) in stacks.ids().zip(stacks.parents()) {
            let is_root = profile.funcs[profile.func_of(id)].kind == FuncKind::Root;
            match up {
                // V8's own `(root)` (several, after a merge) is the written root.
                None if is_root => {
                    stack[0].get_or_insert(id);
                    of_stack.push(0);
                }
                _ => {
                    of_stack.push(stack.len() as u32);
                    parent.push(up.map_or(0, |p| of_stack[p.index()]));
                    stack.push(Some(id));
                }
            }
        }
        let up: Vec<Option<u32>> = parent.iter().enumerate().map(|(node, p)| (node > 0).then_some(*p)).collect();
        let children = Children::from_parents(&up);
        let mut top_level: Vec<u32> = Vec::with_capacity(parent.len());
        for (node, p) in parent.iter().enumerate() {
            let top = if *p == 0 { node as u32 } else { top_level[*p as usize] };
            top_level.push(top);
        }
        Nodes { stack, children, of_stack, top_level }
    }

    fn children(&self, node: usize) -> &[u32] {
        self.children.of(node as u32)
    }
}

/// The samples in the order they are written, each with the duration DevTools will give it.
struct Plan<'p> {
    profile: &'p Profile,
    counts: Option<&'p [i64]>,
    times: Option<&'p [i64]>,
    /// The samples one by one, when the profile has times.
    timeline: Option<&'p SampleTimeline>,
    /// The duration of the timeline's last sample.
    last_weight: i64,
    /// What one sample lasts where the profile has no times.
    per_sample_ns: i64,
    /// Rows in written order; `None`: the profile's order.
    order: Option<Vec<usize>>,
    /// One sample of this row moved to the end, with this duration.
    last: Option<(usize, i64)>,
    /// Time of the first sample, ns.
    first_ns: i64,
    /// Number of samples and their total duration.
    n: u64,
    total_ns: i64,
}

impl<'p> Plan<'p> {
    fn of(profile: &'p Profile, tree: &Nodes, notes: &mut Vec<String>) -> Plan<'p> {
        let column = |unit| profile.value_index(unit).map(|k| profile.samples.values(k));
        let per_sample_ns = profile.meta.interval_ns.filter(|i| *i > 0).unwrap_or(DEFAULT_INTERVAL_NS);
        let timeline = profile.samples.timeline();
        let (mut first_ns, mut last_weight) = (None, 0);
        if let Some(timeline) = timeline {
            timeline.for_each(|s| {
                first_ns.get_or_insert(s.time_ns);
                last_weight = s.weight_ns;
            });
        }
        let first_ns = first_ns.or(profile.meta.start_ns).unwrap_or(0);
        let mut plan = Plan {
            profile,
            counts: column(ValueUnit::Count),
            times: column(ValueUnit::Nanoseconds),
            timeline,
            last_weight,
            per_sample_ns,
            order: None,
            last: None,
            first_ns,
            n: 0,
            total_ns: 0,
        };
        let rows = profile.samples.len();
        for row in 0..rows {
            let (count, time) = plan.row(row);
            plan.n = plan.n.saturating_add(count);
            plan.total_ns = plan.total_ns.saturating_add(time);
        }
        plan.note_invented(notes);
        let moved = if timeline.is_some() { plan.programs_devtools_would_move(tree) } else { 0 };
        if moved > 0 {
            notes.push(format!(
                "the sample order is not kept: DevTools would give {moved} (program) sample(s) to their neighbours, \
                 whose call paths it tells apart and cpuprof does not; the samples are written stack by stack"
            ));
        }
        if timeline.is_none() || moved > 0 {
            plan.arrange(tree, notes);
        } else if let Some(last) = plan.last_sample_duration() {
            plan.note_mean(last, notes);
        }
        plan
    }

    /// How many samples DevTools' `fixMissingSamples` would move in the written order: a
    /// top-level `(program)` sample between two samples under one top-level node, neither of
    /// them a top-level system node. The model's own order went through the same rule when it
    /// was read, but equal call paths it merged may be apart in the original.
    fn programs_devtools_would_move(&self, nodes: &Nodes) -> usize {
        let profile = self.profile;
        let top_level_kind = |node: u32| {
            let stack = nodes.stack[node as usize].filter(|_| nodes.top_level[node as usize] == node)?;
            Some(profile.funcs[profile.func_of(stack)].kind)
        };
        let system =
            |node: u32| matches!(top_level_kind(node), Some(FuncKind::Program | FuncKind::Gc | FuncKind::Idle));
        let (mut window, mut moved) = ([u32::MAX; 3], 0);
        self.each_sample(|stack, _| {
            window = [window[1], window[2], nodes.of_stack[stack.index()]];
            let [prev, current, next] = window;
            if prev != u32::MAX
                && top_level_kind(current) == Some(FuncKind::Program)
                && !system(prev)
                && !system(next)
                && nodes.top_level[prev as usize] == nodes.top_level[next as usize]
            {
                moved += 1;
            }
        });
        moved
    }

    /// Samples and time of `row`, with the gaps filled: no count (time / period, at least
    /// one), no time (the period per sample), time without samples (one sample).
    fn row(&self, row: usize) -> (u64, i64) {
        let time = self.times.map(|t| t[row].max(0));
        let count = match (self.counts, time) {
            (Some(c), _) => u64::try_from(c[row]).unwrap_or(0),
            (None, Some(t)) => {
                u64::try_from(t.saturating_add(self.per_sample_ns / 2) / self.per_sample_ns).unwrap_or(0)
            }
            (None, None) => 1,
        };
        let count = if count == 0 && time.unwrap_or(0) > 0 { 1 } else { count };
        let time = time.unwrap_or_else(|| (count as i64).saturating_mul(self.per_sample_ns));
        (count, time)
    }

    fn note_invented(&self, notes: &mut Vec<String>) {
        let us = self.per_sample_ns as f64 / 1000.0;
        let invented = match (self.counts.is_some(), self.times.is_some()) {
            (true, false) => {
                Some(format!("the profile has sample counts but no times: each sample is written as {us} µs"))
            }
            (false, true) => {
                Some(format!("the profile has times but no sample counts: counts are written as time / {us} µs"))
            }
            _ => None,
        };
        notes.extend(invented);
        if let (Some(counts), Some(times)) = (self.counts, self.times) {
            let bumped = counts.iter().zip(times).filter(|(c, t)| **c <= 0 && **t > 0).count();
            if bumped > 0 {
                notes.push(format!("{bumped} stack(s) had time but no samples: each is written as one sample"));
            }
        }
    }

    /// Stack by stack, `(program)` first (the top-level one first of all: only that one is
    /// `(program)` to DevTools, so no sample of it can sit between two others), with the sample
    /// that lasts the mean moved to the end.
    fn arrange(&mut self, tree: &Nodes, notes: &mut Vec<String>) {
        let profile = self.profile;
        let rank = |row: usize| {
            let stack = profile.samples.stacks()[row];
            let node = tree.of_stack[stack.index()];
            match profile.funcs[profile.func_of(stack)].kind {
                FuncKind::Program if tree.top_level[node as usize] == node => 0,
                FuncKind::Program => 1,
                _ => 2,
            }
        };
        let mut order: Vec<usize> = (0..profile.samples.len()).filter(|r| self.row(*r).0 > 0).collect();
        order.sort_by_key(|r| rank(*r));
        if self.n >= 2 {
            // DevTools gives the last sample floor((total - x) / (n - 1)); x = floor(total / n)
            // is that, unless total ≡ n - 1 (mod n). A stack with two or more samples and at
            // least x of time can give one sample x; a stack with one sample only if it lasts x.
            let n = self.n as i64;
            let x = self.total_ns / n;
            let fits = |r: &usize| {
                let (count, time) = self.row(*r);
                (count >= 2 && time >= x) || (count == 1 && time == x)
            };
            // Otherwise the sample that can come nearest to x: the least damage.
            let nearest = || {
                let candidates = order.iter().map(|r| {
                    let (count, time) = self.row(*r);
                    (*r, if count >= 2 { time.min(x) } else { time })
                });
                candidates.min_by_key(|(_, d)| d.abs_diff(x))
            };
            self.last = order.iter().copied().find(fits).map(|row| (row, x)).or_else(nearest);
            if let Some(written) = self.last_sample_duration() {
                self.note_mean(written, notes);
            }
        }
        self.order = Some(order);
    }

    /// The duration the plan gives the last sample (`None` with fewer than two samples).
    fn last_sample_duration(&self) -> Option<i64> {
        if self.n < 2 {
            return None;
        }
        if let Some((_, x)) = self.last {
            return Some(x);
        }
        if self.timeline.is_some() {
            return Some(if self.times.is_some() { self.last_weight.max(0) } else { self.per_sample_ns });
        }
        let row = self.profile.samples.len().checked_sub(1)?;
        let (count, time) = self.row(row);
        Some(split(time, count, count.checked_sub(1)?))
    }

    /// A note when DevTools' mean interval for the last sample is not the duration it has here.
    fn note_mean(&self, last: i64, notes: &mut Vec<String>) {
        let others = i128::from(self.total_ns) - i128::from(last);
        let mean = (others / (i128::from(self.n) - 1)) as i64;
        // Off by 1 ns when total ≡ n - 1 (mod n): no duration fits then, and it is not news.
        if mean.abs_diff(last) > 1 {
            notes.push(format!(
                "DevTools gives the last sample the mean interval ({mean} ns), not its {last} ns: the total differs by {} ns",
                mean - last
            ));
        }
    }

    /// Calls `visit(stack, duration)` for every sample, in written order.
    fn each_sample(&self, mut visit: impl FnMut(StackId, i64)) {
        let stacks = self.profile.samples.stacks();
        let mut row_samples = |row: usize| {
            let (mut count, mut time) = self.row(row);
            if let Some((last_row, x)) = self.last {
                if last_row == row {
                    count -= 1;
                    time -= x;
                }
            }
            for k in 0..count {
                visit(stacks[row], split(time, count, k));
            }
        };
        match (&self.order, self.timeline) {
            (Some(order), _) => order.iter().for_each(|r| row_samples(*r)),
            (None, Some(timeline)) => {
                let by_time = self.times.is_some();
                timeline.for_each(|s| {
                    visit(stacks[s.row as usize], if by_time { s.weight_ns.max(0) } else { self.per_sample_ns });
                });
            }
            (None, None) => (0..stacks.len()).for_each(&mut row_samples),
        }
        if let Some((row, x)) = self.last {
            visit(stacks[row], x);
        }
    }
}

/// Sample `k` of `count` sharing `time`: the remainder goes one ns each to the first ones.
fn split(time: i64, count: u64, k: u64) -> i64 {
    let count = count as i64;
    let (q, r) = (time / count, time % count);
    q + i64::from((k as i64) < r)
}

fn write_json(profile: &Profile, nodes: &Nodes, plan: &Plan<'_>) -> Vec<u8> {
    // About 10 bytes per sample (a node id and a delta); the Vec grows past a guess that is wrong.
    let mut out = Vec::with_capacity(64 * nodes.stack.len() + 10 * plan.n as usize);
    let mut hits = vec![0u64; nodes.stack.len()];
    plan.each_sample(|stack, _| hits[nodes.of_stack[stack.index()] as usize] += 1);

    // Writing to a Vec cannot fail.
    let _ = write_nodes(&mut out, profile, nodes, &hits);
    // Times: the first sample at its own time, each next one when the one before ends; all
    // relative to the start, which is kept unless it is beyond what a reader takes (a damaged
    // tick log's clock, say): then the file starts at 0.
    let first = plan.first_ns;
    let limit = TIME_LIMIT_NS / 4;
    let start = profile.meta.start_ns.filter(|s| *s <= first && first.saturating_sub(*s) < limit).unwrap_or(first);
    let lead = first - start;
    let (mut span, mut last_start) = (lead, lead);
    plan.each_sample(|_, d| {
        last_start = span;
        span += d;
    });
    // The recording's end where it is known and after the last sample (DevTools reads it
    // only when there is a single sample).
    let recorded_end = profile.meta.start_ns.zip(profile.meta.duration_ns).map(|(s, d)| s.saturating_add(d));
    let end = match recorded_end.map(|e| e.saturating_sub(start)) {
        Some(end) if plan.n >= 2 && (last_start..limit).contains(&end) => end,
        _ => span,
    };
    let base = if start.unsigned_abs() < limit.unsigned_abs() { start } else { 0 };
    out.extend_from_slice(b"],\"startTime\":");
    write_us(&mut out, base);
    out.extend_from_slice(b",\"endTime\":");
    write_us(&mut out, base + end);

    out.extend_from_slice(b",\"samples\":[");
    let mut first = true;
    plan.each_sample(|stack, _| {
        if !first {
            out.push(b',');
        }
        first = false;
        write_int(&mut out, nodes.of_stack[stack.index()] + 1);
    });
    out.extend_from_slice(b"],\"timeDeltas\":[");
    let mut previous: Option<i64> = None;
    plan.each_sample(|_, d| {
        match previous {
            None => write_us(&mut out, lead),
            Some(p) => {
                out.push(b',');
                write_us(&mut out, p);
            }
        }
        previous = Some(d);
    });
    out.extend_from_slice(b"]}\n");
    out
}

fn write_nodes(out: &mut Vec<u8>, profile: &Profile, nodes: &Nodes, hits: &[u64]) -> std::io::Result<()> {
    // Script ids: one per file for JavaScript; "0" for V8's meta nodes and native code (whose
    // url V8 leaves empty, but a C++ function's library is worth keeping: readers then take it
    // for a script's function, as for any url).
    let mut scripts: HashMap<StrId, u32> = HashMap::new();
    out.extend_from_slice(b"{\"nodes\":[");
    for (node, stack) in nodes.stack.iter().enumerate() {
        if node > 0 {
            out.push(b',');
        }
        let func = stack.map(|s| profile.funcs[profile.func_of(s)]);
        let (name, file, line, column, kind) = match &func {
            Some(f) => (f.display_name(&profile.strings), f.file, f.line, f.column, f.kind),
            None => ("(root)".into(), StrId::EMPTY, None, None, FuncKind::Root),
        };
        let name = if kind == FuncKind::Root { "(root)" } else { &name };
        let script = if kind == FuncKind::Js {
            let next = scripts.len() as u32 + 1;
            *scripts.entry(file).or_insert(next)
        } else {
            0
        };
        write!(out, "{{\"id\":{},\"callFrame\":{{\"functionName\":", node + 1)?;
        serde_json::to_writer(&mut *out, name)?;
        write!(out, ",\"scriptId\":\"{script}\",\"url\":")?;
        let url = match &func {
            Some(f) => profile.func_file(f),
            None => profile.strings.get(file),
        };
        // V8 names a script on disk by its `file://` url; the model holds its path.
        let url = match kind {
            FuncKind::Js => file_url_of_path(url).map_or(Cow::Borrowed(url), Cow::Owned),
            _ => Cow::Borrowed(url),
        };
        serde_json::to_writer(&mut *out, &url)?;
        let zero_based = |v: Option<u32>| v.map_or(-1, |v| i64::from(v) - 1);
        write!(
            out,
            ",\"lineNumber\":{},\"columnNumber\":{}}},\"hitCount\":{}",
            zero_based(line),
            zero_based(column),
            hits[node]
        )?;
        let children = nodes.children(node);
        if !children.is_empty() {
            out.extend_from_slice(b",\"children\":[");
            for (i, child) in children.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_int(out, child + 1);
            }
            out.push(b']');
        }
        if let Some(stack) = stack.filter(|_| node > 0) {
            let mut ticks = profile.line_hits.of(stack).peekable();
            if ticks.peek().is_some() {
                out.extend_from_slice(b",\"positionTicks\":[");
                for (i, (line, count)) in ticks.enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write!(out, "{{\"line\":{line},\"ticks\":{count}}}")?;
                }
                out.push(b']');
            }
        }
        out.push(b'}');
    }
    Ok(())
}

/// `ns` as microseconds, exactly: an integer where it is one, else up to three decimals.
fn write_us(out: &mut Vec<u8>, ns: i64) {
    if ns < 0 {
        out.push(b'-');
    }
    let abs = ns.unsigned_abs();
    write_int(out, abs / 1000);
    let mut frac = abs % 1000;
    if frac != 0 {
        out.push(b'.');
        let mut divisor = 100;
        while frac != 0 {
            // Digits below 10 by construction.
            out.push(b'0' + (frac / divisor) as u8);
            frac %= divisor;
            divisor /= 10;
        }
    }
}

/// `value` in decimal (the arrays hold tens of millions of numbers: no `fmt` machinery).
fn write_int(out: &mut Vec<u8>, value: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(ns: i64) -> String {
        let mut out = Vec::new();
        write_us(&mut out, ns);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn microseconds_are_exact() {
        assert_eq!(us(0), "0");
        assert_eq!(us(1_000), "1");
        assert_eq!(us(1_500), "1.5");
        assert_eq!(us(1_001), "1.001");
        assert_eq!(us(-2_050), "-2.05");
        assert_eq!(us(i64::MIN), "-9223372036854775.808");
    }

    #[test]
    fn split_adds_up() {
        for (time, count) in [(10, 3), (0, 4), (7, 7), (1_000_003, 10)] {
            let parts: Vec<i64> = (0..count).map(|k| split(time, count, k)).collect();
            assert_eq!(parts.iter().sum::<i64>(), time);
            assert!(parts.iter().max().unwrap_or(&0) - parts.iter().min().unwrap_or(&0) <= 1);
        }
    }
}
