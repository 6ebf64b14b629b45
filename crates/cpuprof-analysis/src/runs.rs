//! Runs of busy samples: what event-loop blocks are made of, cut as the timeline is walked.
//!
//! A run is a maximal stretch of samples, in time order, none in an idle row and none further
//! from the sample before it than a gap. Finding them costs a few instructions a sample, the
//! common case inlined in the loop over each batch the walk hands over. The analysis is called
//! once a run, and sums a run's rows only for the runs it asks them of (see [`RunRows`]).

use cpuprof_model::{SampleTimeline, TimedSample};
use rustc_hash::FxHashMap;

use crate::sums::{RowSum, SparseSums};

/// What cuts samples into runs (see [`walk_runs`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunRules<'a> {
    /// The rows whose samples are idle, a bit a row (bit `r % 64` of word `r / 64`): an idle
    /// sample ends the run before it and is in none.
    pub idle: &'a [u64],
    /// The rows a run's lead may be in, bits as `idle` (see [`Run::lead`]).
    pub lead: &'a [u64],
    /// Consecutive samples further apart than this, ns, are in different runs.
    pub gap_ns: i64,
    /// Whether to count the steps between consecutive samples ([`RunsWalked::steps`]).
    pub count_steps: bool,
    /// The runs shorter than this, ns, are not told of (`i64::MIN`: all are), but at a half's
    /// ends: a run's length is from its first sample to its last one's end (its time and
    /// weight), when that weight is at most the gap (a run whose last sample weighs more is
    /// always told).
    pub min_ns: i64,
}

/// A run of samples, as the walk of one half found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    /// Its first sample.
    pub first: TimedSample,
    /// Its last sample.
    pub last: TimedSample,
    /// How many samples it holds.
    pub samples: i64,
    /// The row of its first sample in a lead row ([`RunRules::lead`]), if any.
    pub lead: Option<u32>,
    /// Whether it began with the half's first sample: it may continue the half before's last.
    pub head: bool,
    /// Whether the half ended inside it: it may go on in the half after.
    pub tail: bool,
}

/// An analysis of runs: told of each run when it ends, in time order.
pub(crate) trait Runs {
    /// The run `run` ended; `rows` gives its rows' sums when asked.
    fn end(&mut self, run: &Run, rows: &mut RunRows<'_>);
}

/// The rows of the run that just ended (see [`RunRows::sums`]).
pub(crate) struct RunRows<'a> {
    rows: &'a mut RunList,
}

impl RunRows<'_> {
    /// The run's rows, each once, with their sums (a row whose samples weigh 0 is there too);
    /// empty when asked again.
    pub(crate) fn sums(&mut self) -> &[RowSum] {
        self.rows.fold();
        self.rows.folded = false;
        self.rows.sums.take_rows(&mut self.rows.settled);
        &self.rows.settled
    }
}

/// The samples of the run being grown: a list of (row, weight) in time order (appending is
/// cheap, and most runs are never summed), folded into sparse sums when it grows long, so
/// memory stays bounded whatever the run's length.
struct RunList {
    /// The list: its first `len` entries.
    list: Box<[(u32, i64); RunList::FOLD_AT]>,
    len: usize,
    sums: SparseSums,
    /// The run's rows as last read out of `sums`.
    settled: Vec<RowSum>,
    /// Whether `sums` holds anything.
    folded: bool,
    /// How many samples were folded into `sums`.
    folded_samples: i64,
}

impl RunList {
    /// The list's length at which it is folded into the sums: small enough to stay in cache.
    const FOLD_AT: usize = 1 << 13;

    /// Appends a sample.
    #[inline]
    fn push(&mut self, row: u32, weight_ns: i64) {
        if self.len == Self::FOLD_AT {
            self.fold();
        }
        // The mask keeps the index in bounds without a check (len < FOLD_AT here).
        self.list[self.len & (Self::FOLD_AT - 1)] = (row, weight_ns);
        self.len += 1;
    }

    #[cold]
    #[inline(never)]
    fn fold(&mut self) {
        for &(row, w) in &self.list[..self.len] {
            self.sums.add(row, w);
        }
        self.folded_samples += self.len as i64;
        self.len = 0;
        self.folded = true;
    }

    /// The run's number of samples.
    fn samples(&self) -> i64 {
        self.folded_samples + self.len as i64
    }

    /// The last sample appended (its row and weight): after any push the list holds it (a
    /// fold empties the list before a push, never after); not after [`RunRows::sums`].
    fn last(&self) -> (u32, i64) {
        self.list[self.len.wrapping_sub(1) & (Self::FOLD_AT - 1)]
    }

    /// Forgets the run's samples.
    fn clear(&mut self) {
        self.len = 0;
        self.folded_samples = 0;
        if std::mem::take(&mut self.folded) {
            self.sums.take_rows(&mut self.settled);
        }
    }
}

/// What one half of a run walk saw, besides its runs.
#[derive(Debug, Default)]
pub(crate) struct RunHalf {
    /// Its first sample's time, if it had any.
    pub first_ns: Option<i64>,
    /// Its last sample's time, if it had any.
    pub last_ns: Option<i64>,
    /// How many of its samples were idle.
    pub idle_samples: i64,
}

/// What a run walk saw, besides its runs ([`walk_runs`]).
#[derive(Debug, Default)]
pub(crate) struct RunsWalked {
    /// What each half saw.
    pub halves: [RunHalf; 2],
    /// The steps between consecutive samples, when counted ([`RunRules::count_steps`]).
    pub steps: StepCounts,
}

/// Walks `timeline`'s samples (numbered in `rows` rows) as two halves at once, cut into runs by
/// `rules`, each half's runs told to `first` and `second` in time order; returns what each half
/// saw and the steps. `sum_rows`: whether the walk also finds the rows' sums left to the
/// timeline, when they are (else a later read walks again; see
/// [`SampleTimeline::for_each_batch_half_unsummed`]).
pub(crate) fn walk_runs<A, B>(
    timeline: &SampleTimeline,
    rows: usize,
    rules: &RunRules<'_>,
    sum_rows: bool,
    first: &mut A,
    second: &mut B,
) -> RunsWalked
where
    A: Runs + Send,
    B: Runs + Send,
{
    let (mut early, mut late) = (RunWalk::new(rules, first, rows), RunWalk::new(rules, second, rows));
    if sum_rows {
        timeline.for_each_batch_half(|batch| early.push_all(batch), |batch| late.push_all(batch));
    } else {
        timeline.for_each_batch_half_unsummed(|batch| early.push_all(batch), |batch| late.push_all(batch));
    }
    let ((early, mut steps), (late, late_steps)) = (early.end(), late.end());
    steps.merge(&late_steps);
    // The step between the halves.
    if let (true, Some(before), Some(after)) = (rules.count_steps, early.last_ns, late.first_ns) {
        steps.add(after.saturating_sub(before));
    }
    RunsWalked { halves: [early, late], steps }
}

/// One half of a run walk, fed the half's samples a batch at a time.
// `growing` sums up three states in one flag for the common case's test.
#[allow(clippy::struct_excessive_bools)]
struct RunWalk<'w, R: Runs> {
    /// Idle and lead bits per row.
    idle: &'w [u64],
    lead: &'w [u64],
    gap: i64,
    /// Whether the next sample is the half's first.
    first_sample: bool,
    /// Whether a sample may only grow the run being grown ([`RunWalk::push`]'s common
    /// case): a run is `open` and it has its lead.
    growing: bool,
    /// The time of the sample before.
    before_ns: i64,
    runs: &'w mut R,
    min_ns: i64,
    /// Whether a run is being grown (its last sample is the list's last, taken at `before_ns`).
    open: bool,
    /// The run's first sample.
    first: TimedSample,
    /// The run's lead row (`u32::MAX`: none yet).
    lead_row: u32,
    head: bool,
    list: RunList,
    half: RunHalf,
    /// The steps between consecutive samples, when counted.
    steps: Option<StepCounts>,
}

/// Whether bit `i` of `bits` is set.
#[inline]
fn bit(bits: &[u64], i: u32) -> bool {
    bits.get(i as usize / 64).is_some_and(|word| word >> (i % 64) & 1 == 1)
}

impl<'w, R: Runs> RunWalk<'w, R> {
    fn new(rules: &RunRules<'w>, runs: &'w mut R, rows: usize) -> Self {
        Self {
            idle: rules.idle,
            lead: rules.lead,
            gap: rules.gap_ns,
            first_sample: true,
            growing: false,
            before_ns: 0,
            runs,
            min_ns: rules.min_ns,
            open: false,
            first: TimedSample { row: u32::MAX, time_ns: 0, weight_ns: 0 },
            lead_row: u32::MAX,
            head: false,
            list: RunList {
                list: vec![(0, 0); RunList::FOLD_AT].into_boxed_slice().try_into().expect("FOLD_AT entries"),
                len: 0,
                sums: SparseSums::new(rows),
                settled: Vec::new(),
                folded: false,
                folded_samples: 0,
            },
            half: RunHalf::default(),
            steps: rules.count_steps.then(StepCounts::default),
        }
    }

    /// The next samples of the half, in time order.
    fn push_all(&mut self, batch: &[TimedSample]) {
        for s in batch {
            self.push(s.row, s.time_ns, s.weight_ns);
        }
    }

    /// The next sample of the half, in time order.
    #[inline]
    fn push(&mut self, row: u32, time_ns: i64, weight_ns: i64) {
        // The common case, kept small as the batch's loop inlines it: the sample grows the
        // run being grown (no gap before it, not idle) and its step is in the table.
        if self.growing {
            let step = time_ns.saturating_sub(self.before_ns);
            let counted = |steps: &mut Option<StepCounts>| steps.as_mut().is_none_or(|s| s.add_in_table(step));
            if step <= self.gap && !bit(self.idle, row) && counted(&mut self.steps) {
                self.list.push(row, weight_ns);
                self.before_ns = time_ns;
                return;
            }
        }
        self.take(row, time_ns, weight_ns);
    }

    /// Takes the next sample, any.
    #[inline(never)]
    fn take(&mut self, row: u32, time_ns: i64, weight_ns: i64) {
        if self.first_sample {
            self.first_sample = false;
            self.half.first_ns = Some(time_ns);
            self.before_ns = time_ns;
            self.grow(row, time_ns, weight_ns, 0);
            self.head = self.open;
        } else {
            let step = time_ns.saturating_sub(self.before_ns);
            if let Some(steps) = &mut self.steps {
                steps.add(step);
            }
            self.grow(row, time_ns, weight_ns, step);
            self.before_ns = time_ns;
        }
        self.growing = self.open && self.lead_row != u32::MAX;
    }

    /// Adds a sample `step` ns after the one before (taken at `before_ns`, which its time
    /// replaces after) to the run being grown, or ends it.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn grow(&mut self, row: u32, time_ns: i64, weight_ns: i64, step: i64) {
        if bit(self.idle, row) {
            return self.idle_sample();
        }
        if !self.open || step > self.gap {
            self.open(TimedSample { row, time_ns, weight_ns });
        } else if self.lead_row == u32::MAX {
            self.find_lead(row);
        }
        self.list.push(row, weight_ns);
    }

    /// An idle sample: it ends the run being grown.
    #[inline]
    fn idle_sample(&mut self) {
        self.half.idle_samples += 1;
        if self.open {
            self.end_run(false);
        }
    }

    /// The run has no lead yet: is it `row`?
    #[cold]
    #[inline(never)]
    fn find_lead(&mut self, row: u32) {
        if bit(self.lead, row) {
            self.lead_row = row;
        }
    }

    /// Opens a run at `s`, ending the one before, if any.
    #[cold]
    #[inline(never)]
    fn open(&mut self, s: TimedSample) {
        if self.open {
            self.end_run(false);
        }
        self.open = true;
        self.first = s;
        self.lead_row = if bit(self.lead, s.row) { s.row } else { u32::MAX };
    }

    /// Ends the run being grown (`tail`: at the end of the half), whose last sample is the
    /// list's last, taken at `before_ns`.
    #[cold]
    #[inline(never)]
    fn end_run(&mut self, tail: bool) {
        self.open = false;
        let head = std::mem::take(&mut self.head);
        let (last_row, last_weight) = self.list.last();
        let last_ns = self.before_ns;
        let short = last_weight <= self.gap
            && last_ns.saturating_add(last_weight).saturating_sub(self.first.time_ns) < self.min_ns;
        if short && !head && !tail {
            self.list.clear();
            return;
        }
        let run = Run {
            first: self.first,
            last: TimedSample { row: last_row, time_ns: last_ns, weight_ns: last_weight },
            samples: self.list.samples(),
            lead: (self.lead_row != u32::MAX).then_some(self.lead_row),
            head,
            tail,
        };
        self.runs.end(&run, &mut RunRows { rows: &mut self.list });
        self.list.clear();
    }

    /// Ends the walk of the half: the run still open, if any, ends as its tail; returns what
    /// the half saw and its steps.
    fn end(mut self) -> (RunHalf, StepCounts) {
        if self.open {
            self.end_run(true);
        }
        self.half.last_ns = self.half.first_ns.map(|_| self.before_ns);
        (self.half, self.steps.unwrap_or_default())
    }
}

/// Counts of positive steps between samples, for their median without keeping them: whole
/// microseconds up to 65 ms (what V8 samples at) in a table, any other in a map.
#[derive(Debug, Default)]
pub(crate) struct StepCounts {
    /// Counts by whole microseconds; entry 0 counts the steps of 0, which are not counted.
    whole_us: Vec<u64>,
    other: FxHashMap<i64, u64>,
}

/// The inverse of 125 modulo 2^64 (1000 = 2^3 * 125), by Newton's iteration (each step
/// doubles the correct low bits; 125 is its own inverse modulo 8).
const INVERSE_125: u64 = {
    let mut inverse: u64 = 125;
    let mut i = 0;
    while i < 5 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(125u64.wrapping_mul(inverse)));
        i += 1;
    }
    inverse
};

/// `ns / 1000` when `ns` (as 64 bits) is a multiple of 1000, else a number over `u64::MAX /
/// 1000`: exact division by multiplication with the inverse (Granlund and Montgomery), a
/// multiply and a rotate in place of a division and a multiply back. A negative `ns` is never
/// a multiple as 64 bits (2^64 is not one of 1000) and always lands above.
#[inline]
fn exact_us(ns: i64) -> u64 {
    (ns as u64).wrapping_mul(INVERSE_125).rotate_right(3)
}

impl StepCounts {
    const TABLE_US: i64 = 1 << 16;

    /// Counts `step`, ns (not when it is 0 or less).
    // Measured: without it the per-sample loop makes a call per step (+0.2 s on 46 M samples).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(crate) fn add(&mut self, step: i64) {
        if !self.add_in_table(step) {
            self.add_other(step);
        }
    }

    /// Counts `step` if the table has its entry; returns whether it did.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn add_in_table(&mut self, step: i64) -> bool {
        // A step of 0 lands in entry 0 (never read); a step not whole or too long, past the end.
        match self.whole_us.get_mut(exact_us(step) as usize) {
            Some(count) => {
                *count += 1;
                true
            }
            None => false,
        }
    }

    /// [`StepCounts::add`] of a step not counted in the table (as it is).
    #[cold]
    fn add_other(&mut self, step: i64) {
        if step <= 0 {
            return;
        }
        if step % 1000 == 0 && step / 1000 < Self::TABLE_US {
            self.whole_us = vec![0; Self::TABLE_US as usize];
            self.whole_us[(step / 1000) as usize] += 1;
        } else {
            *self.other.entry(step).or_default() += 1;
        }
    }

    /// The table's counts of positive steps, by whole microseconds.
    fn whole(&self) -> impl Iterator<Item = (i64, u64)> + '_ {
        self.whole_us.iter().enumerate().skip(1).map(|(us, c)| (us as i64, *c))
    }

    /// How many steps were counted.
    pub(crate) fn count(&self) -> u64 {
        self.whole().map(|(_, c)| c).sum::<u64>() + self.other.values().sum::<u64>()
    }

    /// Adds `other`'s counts.
    pub(crate) fn merge(&mut self, other: &StepCounts) {
        if !other.whole_us.is_empty() {
            if self.whole_us.is_empty() {
                self.whole_us = vec![0; Self::TABLE_US as usize];
            }
            for (a, b) in self.whole_us.iter_mut().zip(&other.whole_us) {
                *a += b;
            }
        }
        for (step, c) in &other.other {
            *self.other.entry(*step).or_default() += c;
        }
    }

    /// The lower median (the ⌈n/2⌉-th smallest); `None` without steps.
    pub(crate) fn lower_median(&self) -> Option<i64> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        let rank = (count - 1) / 2;
        let mut counts: Vec<(i64, u64)> = self.whole().filter(|(_, c)| *c > 0).map(|(us, c)| (us * 1000, c)).collect();
        counts.extend(self.other.iter().map(|(step, c)| (*step, *c)));
        counts.sort_unstable();
        let mut seen = 0u64;
        counts.into_iter().find_map(|(step, c)| {
            seen += c;
            (seen > rank).then_some(step)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{random, stack, Halves};
    use cpuprof_model::{FuncKind, Profile, ProfileBuilder, SourceFormat, ValueType};

    /// A profile of `rows` rows whose sums are left to a timeline of `samples`, walked as two
    /// halves split at `at`.
    fn summing(samples: Vec<TimedSample>, rows: usize, at: usize) -> Profile {
        let mut b = ProfileBuilder::new(SourceFormat::CpuProfile, vec![ValueType::SAMPLES, ValueType::WALL_NS]);
        let f = stack(&mut b, "f", FuncKind::Js);
        for _ in 0..rows {
            b.sample(f, None, &[0, 0]);
        }
        b.summed_timeline(Halves { samples, at });
        b.finish().unwrap()
    }

    /// Every run a half told of, with its rows' sums (asked for every other run, so that the
    /// runs not asked leave nothing behind).
    #[derive(Default)]
    struct Told(Vec<(Run, Option<Vec<RowSum>>)>);

    impl Runs for Told {
        fn end(&mut self, run: &Run, rows: &mut RunRows<'_>) {
            let mut sums = (self.0.len() % 2 == 0).then(|| rows.sums().to_vec());
            if let Some(sums) = &mut sums {
                sums.sort_by_key(|r| r.row);
            }
            self.0.push((*run, sums));
        }
    }

    /// A run as [`reference`] writes it.
    struct Want {
        first: TimedSample,
        last: TimedSample,
        samples: i64,
        lead: Option<u32>,
        /// Its rows' (samples, ns), in row order.
        rows: Vec<RowSum>,
    }

    /// The runs of `samples` (rows named), as the walk's rules say, written plainly.
    fn reference(samples: &[TimedSample], idle: &[u64], lead: &[u64], gap: i64) -> Vec<Want> {
        let mut runs: Vec<Want> = Vec::new();
        let mut open = false;
        let mut before = None;
        for s in samples {
            let step = before.map(|b: i64| s.time_ns.saturating_sub(b));
            before = Some(s.time_ns);
            if bit(idle, s.row) {
                open = false;
                continue;
            }
            if !open || step.is_some_and(|step| step > gap) {
                runs.push(Want { first: *s, last: *s, samples: 0, lead: None, rows: Vec::new() });
                open = true;
            }
            let run = runs.last_mut().unwrap();
            run.last = *s;
            run.samples += 1;
            if run.lead.is_none() && s.row != u32::MAX && bit(lead, s.row) {
                run.lead = Some(s.row);
            }
            match run.rows.iter_mut().find(|r| r.row == s.row) {
                Some(r) => (r.samples, r.ns) = (r.samples + 1, r.ns + s.weight_ns),
                None => run.rows.push(RowSum { row: s.row, samples: 1, ns: s.weight_ns }),
            }
        }
        for run in &mut runs {
            run.rows.sort_by_key(|r| r.row);
        }
        runs
    }

    #[test]
    fn runs_cut_in_the_walk_are_the_runs_written_plainly() {
        let mut next = random(0x9e37_79b9_7f4a_7c15);
        let gap = 5_000;
        // Runs the minimum leaves untold (the check above is for them).
        let mut short_runs_left_untold = 0;
        for case in 0..60 {
            // Long runs (past the fold) in some cases, short ones in others.
            let (len, idle_in) = if case % 4 == 0 { (20_000, 9_000) } else { (1 + next(600) as usize, 6) };
            // Samples are drawn as one of 40 nodes, as a reader's timeline names them: node k is
            // in row 7k mod 30 (no two nodes share a row), in none (u32::MAX) from 30, or in a
            // row past the table (35) from 38.
            let (slots, rows) = (40u32, 30usize);
            let slot_rows: Vec<u32> = (0..slots)
                .map(|k| match k {
                    38.. => 35,
                    30.. => u32::MAX,
                    _ => k * 7 % rows as u32,
                })
                .collect();
            let idle = vec![1u64 << 3 | 1 << 17];
            // Rows 5 and 20 are no run's lead (nor are nodes without a row).
            let lead = vec![!0u64 ^ (1 << 5) ^ (1 << 20)];
            let mut t = next(1_000) as i64;
            let samples: Vec<TimedSample> = (0..len)
                .map(|_| {
                    // Node 9 is row 3, idle; no other node is in an idle row (rows 3 and 17).
                    let slot = match next(idle_in) {
                        0 => 9,
                        _ => match next(u64::from(slots)) as u32 {
                            9 | 11 => 12,
                            slot => slot,
                        },
                    };
                    // No gap (5_001 and more) in the long cases.
                    t += [0, 1_000, 1_000, 999, 4_000, 5_000, 5_001, 60_000]
                        [next(if len > 9_000 { 6 } else { 8 }) as usize];
                    // Whole µs in some cases (runs exactly the minimum long), some past the gap.
                    let weight_ns = match case % 4 {
                        0 => next(3_000) as i64,
                        _ => [0, 1_000, 2_000, 3_000, 7_000][next(5) as usize],
                    };
                    TimedSample { row: slot, time_ns: t, weight_ns }
                })
                .collect();
            let named: Vec<TimedSample> =
                samples.iter().map(|s| TimedSample { row: slot_rows[s.row as usize], ..*s }).collect();
            let want = reference(&named, &idle, &lead, gap);
            // Every run told in some cases; in others, only those at least 4 or 9 µs long (more
            // than the gap: a run whose last sample weighs more is told, however short).
            let min_ns = [i64::MIN, 4_000, 9_000][case % 3];
            // Steps not counted in some cases (the common case's test differs without them).
            let count_steps = case % 5 != 2;
            let rules = RunRules { idle: &idle, lead: &lead, gap_ns: gap, count_steps, min_ns };
            for at in [0, len / 3, len] {
                {
                    let (mut early, mut late) = (Told::default(), Told::default());
                    let profile = summing(named.clone(), rows, at);
                    let timeline = profile.samples.timeline().unwrap();
                    // The rows' sums left to the timeline are found by the walk when it is told to.
                    let sum_rows = at % 2 == 0;
                    let walked = walk_runs(timeline, rows, &rules, sum_rows, &mut early, &mut late);
                    let [first, second] = walked.halves;
                    assert_eq!(profile.samples.values_known(), sum_rows);
                    let mut row_sums = vec![(0i64, 0i64); rows];
                    for s in named.iter().filter(|s| (s.row as usize) < rows) {
                        row_sums[s.row as usize] =
                            (row_sums[s.row as usize].0 + 1, row_sums[s.row as usize].1 + s.weight_ns);
                    }
                    let read: Vec<(i64, i64)> = profile
                        .samples
                        .values(0)
                        .iter()
                        .copied()
                        .zip(profile.samples.values(1).iter().copied())
                        .collect();
                    assert_eq!(read, row_sums);
                    let context = format!("case {case}, split at {at} of {len}");
                    // The runs told: all but those shorter than the minimum (to the last sample's
                    // end, when it weighs at most the gap), which are told only at a half's ends.
                    let told = |first: &TimedSample, last: &TimedSample| {
                        last.weight_ns > gap || last.time_ns + last.weight_ns - first.time_ns >= min_ns
                    };
                    for (run, _) in early.0.iter().chain(&late.0) {
                        assert!(told(&run.first, &run.last) || run.head || run.tail, "{context}: {run:?}");
                    }
                    short_runs_left_untold += want.iter().filter(|w| !told(&w.first, &w.last)).count();
                    // The halves' runs, the run they meet in put together, are the reference's.
                    let mut got: Vec<(Run, Option<Vec<RowSum>>)> = early.0;
                    let mut rest = late.0.into_iter().peekable();
                    let tail_open = got.last().is_some_and(|(run, _)| run.tail);
                    if let Some(head) = if tail_open { late_head(&mut rest) } else { None } {
                        let tail = got.last().expect("a tail");
                        if head.0.first.time_ns - tail.0.last.time_ns <= gap {
                            let tail = got.pop().unwrap();
                            let mut run = tail.0;
                            run.last = head.0.last;
                            run.samples += head.0.samples;
                            run.lead = run.lead.or(head.0.lead);
                            got.push((run, None));
                        } else {
                            got.push(head);
                        }
                    }
                    got.extend(rest);
                    got.retain(|(run, _)| told(&run.first, &run.last));
                    let want: Vec<&Want> = want.iter().filter(|r| told(&r.first, &r.last)).collect();
                    assert_eq!(got.len(), want.len(), "{context}");
                    for ((run, sums), want) in got.iter().zip(want) {
                        let got = (run.first, run.last, run.samples, run.lead);
                        assert_eq!(got, (want.first, want.last, want.samples, want.lead), "{context}");
                        if let Some(sums) = sums {
                            // Samples without a row, or past the table, are in no sums.
                            let known: Vec<RowSum> =
                                want.rows.iter().filter(|r| (r.row as usize) < rows).copied().collect();
                            assert_eq!(sums, &known, "{context}");
                        }
                    }
                    let idle_samples = named.iter().filter(|s| bit(&idle, s.row)).count() as i64;
                    assert_eq!(first.idle_samples + second.idle_samples, idle_samples, "{context}");
                    let mut steps = StepCounts::default();
                    for pair in named.windows(2).filter(|_| count_steps) {
                        steps.add(pair[1].time_ns - pair[0].time_ns);
                    }
                    assert_eq!(
                        (walked.steps.count(), walked.steps.lower_median()),
                        (steps.count(), steps.lower_median())
                    );
                }
            }
        }
        assert!(short_runs_left_untold > 100, "{short_runs_left_untold} runs left untold");
    }

    /// The second half's first run, when it began with the half's first sample.
    fn late_head(
        rest: &mut std::iter::Peekable<impl Iterator<Item = (Run, Option<Vec<RowSum>>)>>,
    ) -> Option<(Run, Option<Vec<RowSum>>)> {
        rest.next_if(|(run, _)| run.head)
    }

    #[test]
    fn the_median_of_steps_counted_in_and_out_of_the_table() {
        let mut steps = StepCounts::default();
        for step in [0, -5, 1_000_000, 1_000_000, 1_500, 70_000_000, 1_000_000] {
            steps.add(step);
        }
        assert_eq!(steps.count(), 5);
        assert_eq!(steps.lower_median(), Some(1_000_000));
        let mut more = StepCounts::default();
        for _ in 0..6 {
            more.add(2_000);
        }
        steps.merge(&more);
        assert_eq!(steps.count(), 11);
        assert_eq!(steps.lower_median(), Some(2_000));
        assert_eq!(StepCounts::default().lower_median(), None);
    }

    #[test]
    fn exact_division_by_a_thousand_finds_the_multiples_and_only_them() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut values = vec![0, 1, 999, 1000, 1001, 8000, 125_000, 65_535_000, 65_536_000, i64::MAX, i64::MIN, -1000];
        values.extend((0..100_000).map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Multiples of 1000 and their neighbours, small and large, of either sign.
            let base = (state >> (i % 40)) as i64 / 1000 * 1000;
            let base = if i % 3 == 0 { -base } else { base };
            base + [0, 1, -1, 8, 125, 500][i % 6]
        }));
        for ns in values {
            let want = (ns >= 0 && ns % 1000 == 0).then_some((ns / 1000) as u64);
            match want {
                Some(us) => assert_eq!(exact_us(ns), us, "{ns}"),
                None => assert!(exact_us(ns) > u64::MAX / 1000, "{ns}"),
            }
        }
        // Zero is counted nowhere, in the table or out of it.
        let mut steps = StepCounts::default();
        steps.add(3000);
        steps.add(0);
        assert_eq!((steps.count(), steps.lower_median()), (1, Some(3000)));
    }
}
