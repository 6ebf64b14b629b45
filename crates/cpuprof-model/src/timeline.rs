//! A profile's samples one at a time, in time order: what the analyses over time walk.
//!
//! Sample rows are sums (one row per stack, as readers aggregate them), so that the
//! analyses that need no times never pay for them. A [`SampleTimeline`] adds, for profiles whose
//! format has times, which row each sample added to, when, and how long it lasted. Readers
//! keep it in their own compact form (a `.cpuprofile`'s node and delta columns, 4 bytes a
//! sample) and walk it on demand through a [`SampleSource`], so a timeline costs no per-sample
//! allocation and every walk is one pass over those columns.

use std::sync::{Arc, OnceLock};

use crate::runs::{RunRules, RunWalk, Runs, RunsWalked};
use crate::sample::TimedSample;
use crate::source::SampleSource;
use crate::stretches::{StretchWalk, Stretches};

/// Samples in time order (see the module documentation). Cheap to clone: the source is shared.
#[derive(Clone)]
pub struct SampleTimeline {
    source: Arc<dyn SampleSource>,
    /// Only the samples taken in `[from, to)`, ns on the profile's clock.
    window: Option<(i64, i64)>,
    /// The source's rows as this profile numbers them (`u32::MAX`: not in this profile).
    rows: Option<Arc<[u32]>>,
    /// The rows' sums when the reader left them to be found (see [`RowSums`]); only on the
    /// whole timeline, as read.
    sums: Option<Arc<RowSums>>,
}

/// The rows' sums of a timeline whose reader did not sum them: each row's number of samples and
/// their weight (ns), found by the first walk of the whole timeline, whichever analysis makes
/// it (but a run walk told not to: [`SampleTimeline::for_each_run_half`]), so an analysis over time
/// and the rows' values cost one walk together.
#[derive(Debug)]
struct RowSums {
    rows: usize,
    sums: OnceLock<Vec<(i64, i64)>>,
}

/// Adds a batch's samples to per-row sums.
fn add_to(sums: &mut [(i64, i64)], batch: &[TimedSample]) {
    for s in batch {
        if let Some(sum) = sums.get_mut(s.row as usize) {
            *sum = (sum.0 + 1, sum.1.saturating_add(s.weight_ns));
        }
    }
}

/// `early` with `late` added, row by row.
fn added(mut early: Vec<(i64, i64)>, late: &[(i64, i64)]) -> Vec<(i64, i64)> {
    for (sum, more) in early.iter_mut().zip(late) {
        *sum = (sum.0 + more.0, sum.1.saturating_add(more.1));
    }
    early
}

impl std::fmt::Debug for SampleTimeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleTimeline").field("window", &self.window).finish_non_exhaustive()
    }
}

impl SampleTimeline {
    /// The samples `source` walks.
    pub fn new(source: impl SampleSource + 'static) -> Self {
        Self { source: Arc::new(source), window: None, rows: None, sums: None }
    }

    /// The samples `source` walks, numbered in `rows` rows whose sums (count, ns) are left to
    /// the timeline: see [`SampleTimeline::row_sums`].
    pub(crate) fn summing(source: impl SampleSource + 'static, rows: usize) -> Self {
        let sums = Some(Arc::new(RowSums { rows, sums: OnceLock::new() }));
        Self { source: Arc::new(source), window: None, rows: None, sums }
    }

    /// Each row's number of samples and their weight (ns), when the rows were left to the
    /// timeline to sum: found by a walk unless one was made already.
    pub(crate) fn row_sums(&self) -> Option<&[(i64, i64)]> {
        let pending = self.sums.as_ref()?;
        if pending.sums.get().is_none() {
            self.for_each_batch_half(|_| {}, |_| {});
        }
        pending.sums.get().map(Vec::as_slice)
    }

    /// Whether the rows' sums left to the timeline are found (by a walk made).
    pub(crate) fn sums_known(&self) -> bool {
        self.sums.as_ref().is_some_and(|p| p.sums.get().is_some())
    }

    /// Calls `visit` for every sample, in time order.
    pub fn for_each(&self, mut visit: impl FnMut(TimedSample)) {
        let inside = |s: &&TimedSample| self.window.is_none_or(|(from, to)| (from..to).contains(&s.time_ns));
        match &self.rows {
            None if self.window.is_none() => match self.sums.as_deref().filter(|p| p.sums.get().is_none()) {
                None => self.source.walk(&mut |batch| batch.iter().copied().for_each(&mut visit)),
                Some(pending) => {
                    // The rows' sums come with this walk.
                    let mut sums = vec![(0, 0); pending.rows];
                    self.source.walk(&mut |batch| {
                        add_to(&mut sums, batch);
                        batch.iter().copied().for_each(&mut visit);
                    });
                    let _ = pending.sums.set(sums);
                }
            },
            None => self.source.walk(&mut |batch| batch.iter().filter(inside).copied().for_each(&mut visit)),
            Some(rows) => self.source.walk(&mut |batch| {
                for s in batch.iter().filter(inside) {
                    if let Some(&row) = rows.get(s.row as usize).filter(|r| **r != u32::MAX) {
                        visit(TimedSample { row, ..*s });
                    }
                }
            }),
        }
    }

    /// Calls `first` for the earlier samples and `second` for the later ones, in time order
    /// each, at once on two threads (when the source can split its samples; else `first`
    /// gets them all). For analyses whose partial results add up.
    pub fn for_each_half<A, B>(&self, mut first: A, mut second: B)
    where
        A: FnMut(TimedSample) + Send,
        B: FnMut(TimedSample) + Send,
    {
        self.for_each_batch_half(
            |batch| batch.iter().copied().for_each(&mut first),
            |batch| batch.iter().copied().for_each(&mut second),
        );
    }

    /// [`SampleTimeline::for_each_half`] a batch of samples at a time: for analyses whose loop over
    /// samples is tight enough that a call per sample would cost more than the work.
    pub fn for_each_batch_half<A, B>(&self, mut first: A, mut second: B)
    where
        A: FnMut(&[TimedSample]) + Send,
        B: FnMut(&[TimedSample]) + Send,
    {
        let Some(pending) = self.pending_sums() else {
            self.walk_halves_viewed(&mut first, &mut second);
            return;
        };
        // The rows' sums come with this walk.
        let (mut early, mut late) = (vec![(0, 0); pending.rows], vec![(0, 0); pending.rows]);
        self.walk_halves_viewed(
            &mut |batch| {
                add_to(&mut early, batch);
                first(batch);
            },
            &mut |batch| {
                add_to(&mut late, batch);
                second(batch);
            },
        );
        let _ = pending.sums.set(added(early, &late));
    }

    /// Walks the samples as two halves at once (as [`SampleTimeline::for_each_batch_half`]), cut into
    /// stretches by `first` and `second` (each in its half), which get each stretch's sums per
    /// row: one addition a sample for the analysis and the rows' sums together.
    pub fn for_each_stretch_half<A, B>(&self, first: &mut A, second: &mut B)
    where
        A: Stretches + Send,
        B: Stretches + Send,
    {
        let pending = self.pending_sums();
        let whole = pending.map(|p| vec![(0, 0); p.rows]);
        let whole_view = self.window.is_none() && self.rows.is_none();
        // A view's samples are filtered and renumbered rows, never the source's slots.
        let slots = if whole_view { self.source.slots() } else { None };
        let (mut early, mut late) =
            (StretchWalk::new(first, whole.clone(), slots), StretchWalk::new(second, whole, slots));
        if whole_view {
            self.source.walk_stretches(&mut early, &mut late);
        } else {
            self.walk_halves_viewed(&mut |batch| early.push_all(batch), &mut |batch| late.push_all(batch));
        }
        if let (Some(pending), Some(early), Some(late)) = (pending, early.end(), late.end()) {
            let _ = pending.sums.set(added(early, &late));
        }
    }

    /// Walks the samples as two halves at once (as [`SampleTimeline::for_each_batch_half`]), cut into
    /// runs by `rules` (see [`crate::runs`]), each half's runs told to `first` and `second` in
    /// time order; returns what each half saw and the steps. `sum_rows`: whether the walk also
    /// finds the rows' sums left to the timeline, when they are (else a later read walks again).
    pub fn for_each_run_half<A, B>(
        &self,
        rules: &RunRules<'_>,
        sum_rows: bool,
        first: &mut A,
        second: &mut B,
    ) -> RunsWalked
    where
        A: Runs + Send,
        B: Runs + Send,
    {
        let pending = self.pending_sums().filter(|_| sum_rows);
        let rows = pending.map_or(rules.idle.len() * 64, |p| p.rows);
        let whole_view = self.window.is_none() && self.rows.is_none();
        // A view's samples are filtered and renumbered rows, never the source's slots.
        let slots = if whole_view { self.source.slots() } else { None };
        let sum = pending.is_some();
        let (mut early, mut late) =
            (RunWalk::new(rules, first, rows, sum, slots), RunWalk::new(rules, second, rows, sum, slots));
        if whole_view {
            self.source.walk_runs(&mut early, &mut late);
        } else {
            self.walk_halves_viewed(&mut |batch| early.push_all(batch), &mut |batch| late.push_all(batch));
        }
        let ((early, mut steps, early_sums), (late, late_steps, late_sums)) = (early.end(rows), late.end(rows));
        if let (Some(pending), Some(early_sums), Some(late_sums)) = (pending, early_sums, late_sums) {
            let _ = pending.sums.set(added(early_sums, &late_sums));
        }
        steps.merge(&late_steps);
        // The step between the halves.
        if let (true, Some(before), Some(after)) = (rules.count_steps, early.last_ns, late.first_ns) {
            steps.add(after.saturating_sub(before));
        }
        RunsWalked { halves: [early, late], steps }
    }

    /// The rows' sums left to this walk: on the whole timeline, before a walk found them.
    fn pending_sums(&self) -> Option<&RowSums> {
        if self.window.is_some() || self.rows.is_some() {
            return None;
        }
        self.sums.as_deref().filter(|p| p.sums.get().is_none())
    }

    /// The samples of this view (window, renumbered rows) as two halves, in batches.
    fn walk_halves_viewed(
        &self,
        first: &mut (dyn FnMut(&[TimedSample]) + Send),
        second: &mut (dyn FnMut(&[TimedSample]) + Send),
    ) {
        if self.window.is_none() && self.rows.is_none() {
            self.source.walk_halves(first, second);
            return;
        }
        let window = self.window;
        let rows = self.rows.as_deref();
        // The batch's samples that are in the window, renumbered, gathered in `kept`.
        let filter = |batch: &[TimedSample], kept: &mut Vec<TimedSample>| {
            kept.clear();
            for s in batch.iter().filter(|s| window.is_none_or(|(from, to)| (from..to).contains(&s.time_ns))) {
                match rows {
                    None => kept.push(*s),
                    Some(rows) => {
                        if let Some(&row) = rows.get(s.row as usize).filter(|r| **r != u32::MAX) {
                            kept.push(TimedSample { row, ..*s });
                        }
                    }
                }
            }
        };
        let (mut early, mut late) = (Vec::new(), Vec::new());
        self.source.walk_halves(
            &mut |batch| {
                filter(batch, &mut early);
                first(&early);
            },
            &mut |batch| {
                filter(batch, &mut late);
                second(&late);
            },
        );
    }

    /// Only the samples taken in `[from_ns, to_ns)` (ns on the profile's clock) of these.
    #[must_use]
    pub fn within(&self, from_ns: i64, to_ns: i64) -> Self {
        let window = match self.window {
            Some((from, to)) => (from.max(from_ns), to.min(to_ns)),
            None => (from_ns, to_ns),
        };
        Self { window: Some(window), sums: None, ..self.clone() }
    }

    /// The same samples with their rows renumbered: row `r` becomes `map[r]`.
    pub(crate) fn renumbered(&self, map: &[u32]) -> Self {
        let rows: Arc<[u32]> = match &self.rows {
            Some(rows) => rows.iter().map(|r| map.get(*r as usize).copied().unwrap_or(u32::MAX)).collect(),
            None => map.into(),
        };
        Self { rows: Some(rows), sums: None, ..self.clone() }
    }
}

/// A timeline kept as a list: for readers whose rows are one sample each.
pub(crate) struct SampleList(pub(crate) Vec<TimedSample>);

impl SampleSource for SampleList {
    fn walk(&self, visit: &mut dyn FnMut(&[TimedSample])) {
        self.0.chunks(4096).for_each(visit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RowSum;

    /// Samples as (slot, time, weight), pushed densely when the walk lets it; the slots'
    /// rows are the slots reversed, with every fifth slot rowless.
    struct Slots {
        samples: Vec<(u32, i64, i64)>,
        rows: Vec<u32>,
        /// How many walks listed throughout, and how many summed densely with their last
        /// stretch dense or listed.
        modes: Arc<[std::sync::atomic::AtomicUsize; 3]>,
    }

    impl SampleSource for Slots {
        fn walk(&self, _: &mut dyn FnMut(&[TimedSample])) {
            unreachable!("walked by slot")
        }

        fn slots(&self) -> Option<&[u32]> {
            Some(&self.rows)
        }

        fn walk_stretches(&self, first: &mut StretchWalk<'_>, _second: &mut StretchWalk<'_>) {
            let dense = first.densely(self.samples.len());
            for &(slot, t, w) in &self.samples {
                if dense {
                    first.push_densely(slot, t, w);
                } else {
                    first.push_slot(slot, t, w);
                }
            }
            let mode = match (dense, first.sums.listing) {
                (false, _) => 0,
                (true, false) => 1,
                (true, true) => 2,
            };
            self.modes[mode].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Time buckets `width` ns wide from 0; a sample before 0 is a stretch of its own (as a
    /// timeline's samples before the recording start are cut one by one).
    struct Buckets {
        width: i64,
        span: (i64, i64),
        /// Each stretch's bucket and rows, sorted.
        settled: Vec<(i64, Vec<RowSum>)>,
        /// The bucket of the current stretch, and of the one a cut ended.
        current: i64,
        ended: i64,
    }

    impl Buckets {
        fn keep(&mut self, bucket: i64, rows: &[RowSum]) {
            let mut rows = rows.to_vec();
            rows.sort_by_key(|r| r.row);
            if !rows.is_empty() {
                self.settled.push((bucket, rows));
            }
        }
    }

    impl Stretches for Buckets {
        fn span(&self) -> (i64, i64) {
            self.span
        }

        fn cut(&mut self, s: &TimedSample) -> bool {
            let k = s.time_ns.max(0) / self.width;
            self.span = if s.time_ns < 0 { (0, 0) } else { (k * self.width, (k + 1) * self.width) };
            self.ended = std::mem::replace(&mut self.current, k);
            true
        }

        fn settle(&mut self, rows: &[RowSum]) {
            self.keep(self.ended, rows);
        }

        fn end(&mut self, rows: &[RowSum]) {
            self.keep(self.current, rows);
        }
    }

    #[test]
    fn a_dense_walk_settles_what_a_listing_walk_does() {
        let modes: Arc<[std::sync::atomic::AtomicUsize; 3]> = Arc::default();
        // Tables small and big for their samples (some walks too short for their table to be
        // read at each take), stretches of one sample to hundreds, samples before 0.
        let shapes = [1u32, 7, 60, 300].into_iter().flat_map(|slots| {
            [0usize, 3, 25, 500, 2000].into_iter().flat_map(move |n| [1i64, 3, 17, 400].map(|width| (slots, n, width)))
        });
        for (case, (slots, n, width)) in shapes.enumerate() {
            // Scattered slots (two past the table), steps of 0 to 3 ns, from before 0.
            let mut t = (case % 7) as i64 - 4;
            let samples: Vec<(u32, i64, i64)> = (0..n as u64)
                .map(|k| {
                    t += (k * 13 % 4) as i64;
                    (((k * k * 31 + k * 7) % u64::from(slots + 2)) as u32, t, (k * 37 % 1000) as i64)
                })
                .collect();
            let rows: Vec<u32> = (0..slots).map(|s| if s % 5 == 4 { u32::MAX } else { slots - 1 - s }).collect();
            // What each stretch should get, summed naively per bucket.
            let mut expected: Vec<(i64, Vec<RowSum>)> = Vec::new();
            for (k, &(slot, time, w)) in samples.iter().enumerate() {
                let bucket = time.max(0) / width;
                let fresh = time < 0 || k == 0 || samples[k - 1].1 < 0 || samples[k - 1].1 / width != bucket;
                if fresh {
                    expected.push((bucket, Vec::new()));
                }
                let Some(&row) = rows.get(slot as usize).filter(|r| **r != u32::MAX) else { continue };
                let stretch = &mut expected.last_mut().unwrap().1;
                match stretch.iter_mut().find(|r| r.row == row) {
                    Some(r) => (r.samples, r.ns) = (r.samples + 1, r.ns + w),
                    None => stretch.push(RowSum { row, samples: 1, ns: w }),
                }
            }
            expected.retain(|(_, rows)| !rows.is_empty());
            for (_, rows) in &mut expected {
                rows.sort_by_key(|r| r.row);
            }
            let timeline = SampleTimeline::new(Slots { samples, rows, modes: modes.clone() });
            let buckets = || Buckets { width, span: (0, 0), settled: Vec::new(), current: 0, ended: 0 };
            let (mut first, mut second) = (buckets(), buckets());
            timeline.for_each_stretch_half(&mut first, &mut second);
            if first.settled != expected {
                let at = first.settled.iter().zip(&expected).position(|(a, b)| a != b);
                let at = at.unwrap_or(first.settled.len().min(expected.len()));
                panic!(
                    "case {case}: {} stretches, {} expected; first differing {at}: {:?} vs {:?}; modes {:?}",
                    first.settled.len(),
                    expected.len(),
                    first.settled.get(at),
                    expected.get(at),
                    modes
                );
            }
            assert!(second.settled.is_empty());
        }
        // Each way is exercised: listing throughout, and dense with the last stretch dense or
        // listed.
        let modes = modes.each_ref().map(|m| m.load(std::sync::atomic::Ordering::Relaxed));
        assert!(modes.iter().all(|m| *m >= 5), "{modes:?}");
    }
}
