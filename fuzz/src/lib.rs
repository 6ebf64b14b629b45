//! The harness shared by the fuzz targets in `fuzz_targets/`.
//!
//! Every input is parsed twice, with `timeline: false` (samples summed per stack) and with
//! `timeline: true` (one row per sample). A panic anywhere is a bug; so is a
//! `ParseErrorKind::Model` error (the parser built an inconsistent model) and any broken
//! invariant that [`check`] finds in a profile that parsed. Any other `Err` is a fine answer.

use std::collections::HashSet;

use cpuprof_model::{Profile, SampleTimeline, ValueUnit};
use cpuprof_parse::{parse, Origin, ParseErrorKind, ParseOptions, SourceFormat};

/// Tick logs name shared libraries by absolute path and the parser reads their ELF symbols.
/// Resolving them under a directory that does not exist keeps the fuzzer off the real
/// filesystem (`..` cannot climb out of a directory that is not there).
const NO_SYMBOLS: &str = "/nonexistent/cpuprof-fuzz-symbols";

/// Longest walk (in frames, summed over the sampled stacks) [`check`] does with
/// `StackTable::walk`, so that a deep recursion with many leaves stays linear.
const WALK_BUDGET: usize = 1 << 20;

/// Parses `data` as `format` (`None`: sniffed) both ways and checks what comes out.
///
/// # Panics
/// On purpose, for libFuzzer to report: see the module documentation.
pub fn run(data: &[u8], format: Option<SourceFormat>) {
    let mut parsed = [None, None];
    for (slot, timeline) in parsed.iter_mut().zip([false, true]) {
        let mut options = ParseOptions::default();
        options.format = format;
        options.timeline = timeline;
        options.symbols_root = Some(NO_SYMBOLS.into());
        match parse(data, &Origin("fuzz-input".to_owned()), &options) {
            Ok(profile) => {
                check(&profile);
                *slot = Some(profile);
            }
            Err(e) => {
                // Rendering the error is part of the contract (line:column spans and all).
                let message = e.to_string();
                assert!(!message.is_empty());
                if let ParseErrorKind::Model(model) = &e.kind {
                    panic!("parser built an invalid model (timeline={timeline}): {model}: {message}");
                }
            }
        }
    }
    if let [Some(summed), Some(timeline)] = &parsed {
        same_totals(summed, timeline);
    }
}

/// The invariants of `cpuprof_model::Profile` that its docs promise, checked the slow way.
///
/// # Panics
/// On purpose, when one is broken.
pub fn check(p: &Profile) {
    // Ids resolve.
    for f in p.funcs.as_slice() {
        let _ = p.strings.get(f.name);
        let _ = p.strings.get(f.file);
    }
    for frame in p.frames.as_slice() {
        let _ = &p.funcs[frame.func];
    }
    // Stack tree: parents before children, no duplicate (parent, frame).
    let n = p.stacks.len();
    assert_eq!(p.stacks.parents().len(), n);
    assert_eq!(p.stacks.frames().len(), n);
    let mut depth = vec![0usize; n];
    let mut seen = HashSet::with_capacity(n);
    // Ids are minted by the model only: `ids()` is the public way to every stack.
    assert_eq!(p.stacks.ids().len(), n);
    for (i, s) in p.stacks.ids().enumerate() {
        assert_eq!(s.index(), i, "StackTable::ids out of order");
        let _ = &p.frames[p.stacks.frame(s)];
        depth[i] = match p.stacks.parent(s) {
            Some(parent) => {
                assert!(parent < s, "stack {i} has parent {} (parents must come first)", parent.index());
                depth[parent.index()] + 1
            }
            None => 1,
        };
        assert!(
            seen.insert((p.stacks.parent(s), p.stacks.frame(s))),
            "stack {i} duplicates an earlier (parent, frame)"
        );
    }
    // Samples: every column as long as the stack column; every stack walks to a root.
    let rows = p.samples.len();
    for k in 0..p.value_types.len() {
        assert_eq!(p.samples.values(k).len(), rows, "value column {k}");
        assert!(p.samples.values(k).iter().all(|v| *v >= 0), "negative value in column {k}");
    }
    if let Some(timeline) = p.samples.timeline() {
        check_timeline(p, timeline);
    }
    if let Some(states) = p.samples.vm_states() {
        assert_eq!(states.len(), rows, "vm state column");
    }
    let mut budget = WALK_BUDGET;
    for s in p.samples.stacks() {
        let d = depth[s.index()];
        if d > budget {
            continue;
        }
        budget -= d;
        let mut walked = 0;
        for frame in p.stacks.walk(*s) {
            let _ = p.funcs[p.frames[frame].func];
            walked += 1;
        }
        assert_eq!(walked, d, "walk from stack {} did not reach a root in {d} steps", s.index());
        let _ = p.func_of(*s);
    }
    // Line hits: sorted by stack, each stack's rows reachable through `of`.
    let hit_rows: usize = p.stacks.ids().map(|s| p.line_hits.of(s).count()).sum();
    assert_eq!(hit_rows, p.line_hits.len(), "line hits are not all under a known stack, or not sorted");
    assert_eq!(p.strings.get(cpuprof_model::StrId::EMPTY), "");
}

/// The samples one at a time, where the format has times: each names a row of the profile,
/// lasts no negative time, and they come in time order; the rows are their sums (the docs of
/// `Samples` and `SampleTimeline`).
fn check_timeline(p: &Profile, timeline: &SampleTimeline) {
    let rows = p.samples.len();
    let mut sums = vec![(0i64, 0i64); rows];
    let mut last_ns = i64::MIN;
    timeline.for_each(|s| {
        let row = s.row as usize;
        assert!(row < rows, "timeline sample in row {row} of {rows}");
        assert!(s.weight_ns >= 0, "timeline sample at {} ns weighs {} ns", s.time_ns, s.weight_ns);
        assert!(s.time_ns >= last_ns, "timeline sample at {} ns after one at {last_ns} ns", s.time_ns);
        last_ns = s.time_ns;
        sums[row] = (sums[row].0 + 1, sums[row].1.saturating_add(s.weight_ns));
    });
    for (k, value_type) in p.value_types.iter().enumerate() {
        let pick = |&(count, ns): &(i64, i64)| match value_type.unit {
            ValueUnit::Count => count,
            ValueUnit::Nanoseconds => ns,
        };
        let from_timeline: Vec<i64> = sums.iter().map(pick).collect();
        assert!(p.samples.values(k) == from_timeline, "value column {k} is not the sum of the timeline's samples");
    }
}

/// The same input read with and without `timeline` holds the same samples: each value
/// column sums to the same total.
fn same_totals(summed: &Profile, timeline: &Profile) {
    assert_eq!(summed.value_types, timeline.value_types, "value types differ with timeline");
    for k in 0..summed.value_types.len() {
        let a: i128 = summed.samples.values(k).iter().map(|v| i128::from(*v)).sum();
        let b: i128 = timeline.samples.values(k).iter().map(|v| i128::from(*v)).sum();
        assert_eq!(
            a,
            b,
            "column {k} ({}) sums to {a} summed but {b} with timeline",
            summed.value_types[k].kind.as_str()
        );
    }
}
