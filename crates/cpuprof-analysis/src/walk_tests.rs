//! The walks over time on profiles as the readers give them: a `.cpuprofile`'s timeline, whose
//! rows' sums are left to its first walk, walked whole, in halves, in stretches and in runs.

use cpuprof_model::{Profile, TimedSample};
use cpuprof_parse::{parse, Origin, ParseOptions};

use crate::runs::{walk_runs, Run, RunRows, RunRules, Runs, StepCounts};
use crate::stretches::{walk_stretches, Stretches};
use crate::sums::RowSum;
use crate::test_support::random;

fn read(bytes: &[u8]) -> Profile {
    parse(bytes, &Origin("t".into()), &ParseOptions::with_timeline()).unwrap()
}

fn walked(profile: &Profile) -> Vec<TimedSample> {
    let mut all = Vec::new();
    profile.samples.timeline().unwrap().for_each(|s| all.push(s));
    all
}

/// Runs that are not looked at.
struct NoRuns;

impl Runs for NoRuns {
    fn end(&mut self, _: &Run, _: &mut RunRows<'_>) {}
}

/// Cuts a walk into stretches of 3 samples, and keeps what it was given: the samples, and
/// each stretch's rows as settled and as summed from its samples.
#[derive(Default)]
struct Cuts {
    samples: Vec<TimedSample>,
    settled: Vec<Vec<RowSum>>,
    summed: Vec<Vec<RowSum>>,
    stretch: Vec<TimedSample>,
    next: Option<TimedSample>,
}

impl Cuts {
    fn settle(&mut self, rows: &[RowSum]) {
        let mut rows = rows.to_vec();
        rows.sort_by_key(|r| r.row);
        self.settled.push(rows);
        let mut summed: Vec<RowSum> = Vec::new();
        for s in std::mem::take(&mut self.stretch) {
            match summed.iter_mut().find(|r| r.row == s.row) {
                Some(r) => (r.samples, r.ns) = (r.samples + 1, r.ns + s.weight_ns),
                None => summed.push(RowSum { row: s.row, samples: 1, ns: s.weight_ns }),
            }
        }
        summed.sort_by_key(|r| r.row);
        self.summed.push(summed);
        self.stretch.extend(self.next.take());
    }
}

impl Stretches for Cuts {
    fn span(&self) -> (i64, i64) {
        (0, 0)
    }

    fn cut(&mut self, s: &TimedSample) -> bool {
        self.samples.push(*s);
        if self.stretch.len() == 3 {
            // The stretch is settled before `s` begins the next.
            self.next = Some(*s);
            return true;
        }
        self.stretch.push(*s);
        false
    }

    fn settle(&mut self, rows: &[RowSum]) {
        Cuts::settle(self, rows);
    }

    fn end(&mut self, rows: &[RowSum]) {
        Cuts::settle(self, rows);
    }
}

/// What a profile read with its timeline says, by whichever walk its rows' sums come
/// from: the rows, their values and the recording.
fn facts(profile: &Profile) -> (Vec<cpuprof_model::StackId>, Vec<Vec<i64>>, cpuprof_model::Meta) {
    (
        profile.samples.stacks().to_vec(),
        (0..2).map(|k| profile.samples.values(k).to_vec()).collect(),
        profile.meta.clone(),
    )
}

/// Rows whose sums are left to the timeline's first walk are those the reader's own walk
/// sums: on every recorded fixture and on random profiles with `(program)` runs, lone
/// `(program)` samples, late samples and idle, whether the first walk is an analysis's or
/// the values' own.
#[test]
fn sums_left_to_the_timeline_are_the_sums_read() {
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for dir in ["../../fixtures/cpuprofile", "../../fixtures/edge"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "cpuprofile") {
                inputs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    // Random profiles of (root) → (program) | (idle) | (garbage collector) | a → b.
    let mut next = random(0x2545_f491_4f6c_dd1d);
    let join = |v: &[i64]| v.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
    let node = |id: u32, name: &str, url: &str, children: &str| {
        format!(
            r#"{{"id":{id},"callFrame":{{"functionName":"{name}","scriptId":"{}","url":"{url}","lineNumber":0,"columnNumber":0}},"children":[{children}]}}"#,
            if url.is_empty() { 0 } else { 7 }
        )
    };
    let nodes = [
        node(1, "(root)", "", "2,3,4,5"),
        node(2, "(program)", "", ""),
        node(3, "(idle)", "", ""),
        node(4, "(garbage collector)", "", ""),
        node(5, "a", "file:///a.js", "6"),
        node(6, "b", "file:///a.js", ""),
    ];
    let text = |ids: &[i64], deltas: &[i64]| {
        format!(
            r#"{{"nodes":[{}],"startTime":1000,"endTime":{},"samples":[{}],"timeDeltas":[{}]}}"#,
            nodes.join(","),
            1000 + 1400 * ids.len(),
            join(ids),
            join(deltas)
        )
    };
    // (program) pairs that prove nothing: the pair's second sample is late, or a late sample
    // falls between them (both (program) samples may then be given away).
    for (ids, deltas) in [([5, 5, 2, 2, 5], [10, 10, 10, -15, 25]), ([5, 2, 2, 5, 5], [10, 10, 10, -5, 15])] {
        let text = text(&ids, &deltas);
        inputs.push((format!("late (program) pair: {text}"), text.into_bytes()));
    }
    for case in 0..300 {
        let n = 4 + next(60) as usize;
        let lone_program = case % 3 == 0;
        let mut ids = Vec::new();
        let mut deltas = Vec::new();
        for i in 0..n {
            let id = match next(10) {
                0 | 1 => 2,
                2 => 3,
                3 => 4,
                4..=6 => 5,
                _ => 6,
            };
            // Some cases have no two (program) samples in a row, so the walk must decide.
            let id = if lone_program && id == 2 && ids.last() == Some(&2) { 6 } else { id };
            ids.push(id);
            // A quarter of the cases with no sample late; deltas past 32 ms (the first too).
            deltas.push(match next(12) {
                0 if case % 4 != 0 => -(next(3000) as i64),
                1 => 0,
                2 => 32_000 + next(3000) as i64,
                _ if i == 0 => 50,
                _ => 900 + next(400) as i64,
            });
        }
        let text = text(&ids, &deltas);
        inputs.push((format!("random case {case}: {text}"), text.into_bytes()));
    }
    let (mut left, mut read_at_once) = (0, 0);
    for (name, bytes) in &inputs {
        let origin = Origin("t".into());
        let eager = parse(&bytes[..], &origin, &ParseOptions::default()).unwrap();
        let values_first = read(bytes);
        if values_first.samples.values_known() {
            read_at_once += 1;
        } else {
            left += 1;
        }
        assert_eq!(facts(&values_first), facts(&eager), "{name}");
        // A walk of every sample first (as `for_each` makes it): the values come with it.
        let walk_first = read(bytes);
        let samples = walked(&walk_first);
        assert!(walk_first.samples.values_known(), "{name}");
        assert_eq!(facts(&walk_first), facts(&eager), "{name}");
        assert_eq!(samples, walked(&values_first), "{name}");
        // A run walk counts the steps between the samples it walks.
        let runs_first = read(bytes);
        let rules = RunRules { idle: &[], lead: &[], gap_ns: i64::MAX, count_steps: true, min_ns: i64::MIN };
        let (timeline, rows) = (runs_first.samples.timeline().unwrap(), runs_first.samples.len());
        let steps = walk_runs(timeline, rows, &rules, true, &mut NoRuns, &mut NoRuns).steps;
        let mut want = StepCounts::default();
        for pair in samples.windows(2) {
            want.add(pair[1].time_ns - pair[0].time_ns);
        }
        assert_eq!((steps.count(), steps.lower_median()), (want.count(), want.lower_median()), "{name}");
        assert_eq!(facts(&runs_first), facts(&eager), "{name}");
        // The same with the walk in two halves on two threads.
        let halves_first = read(bytes);
        let (mut early, mut late) = (Vec::new(), Vec::new());
        halves_first.samples.timeline().unwrap().for_each_half(|s| early.push(s), |s| late.push(s));
        early.append(&mut late);
        assert!(halves_first.samples.values_known(), "{name}");
        assert_eq!(facts(&halves_first), facts(&eager), "{name}");
        assert_eq!(early, samples, "{name}");
        // The same with the walk cut into stretches: each stretch's rows are its samples'.
        let stretches_first = read(bytes);
        let mut halves = [Cuts::default(), Cuts::default()];
        let [early, late] = &mut halves;
        let (timeline, rows) = (stretches_first.samples.timeline().unwrap(), stretches_first.samples.len());
        walk_stretches(timeline, rows, early, late);
        assert!(stretches_first.samples.values_known(), "{name}");
        assert_eq!(facts(&stretches_first), facts(&eager), "{name}");
        let seen: Vec<TimedSample> = halves.iter().flat_map(|h| h.samples.clone()).collect();
        assert_eq!(seen, samples, "{name}");
        for half in &halves {
            assert_eq!(half.settled, half.summed, "{name}");
        }
    }
    // Both ways are exercised.
    assert!(left > 100 && read_at_once > 10, "left to the timeline {left}, read at once {read_at_once}");
}
