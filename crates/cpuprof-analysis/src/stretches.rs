//! Stretches of samples (time buckets) summed per row as a walk of the timeline goes.

use cpuprof_model::{SampleTimeline, TimedSample};

use crate::sums::{RowSum, SparseSums};

/// An analysis that cuts samples into stretches (time buckets) and wants each stretch's
/// weight per row: see [`walk_stretches`]. Each half of a walk calls `cut` with each sample
/// taken outside the current [`Stretches::span`] (settling the stretch before it when `cut`
/// says it begins one), and `end` with the last stretch.
pub(crate) trait Stretches {
    /// The current stretch's span, `[from, to)` on the profile's clock: a sample taken in it
    /// continues the stretch without a call to `cut` (so the walk's loop makes no call for
    /// most samples). Read again after each `cut`; an empty span has every sample cut.
    fn span(&self) -> (i64, i64);

    /// Whether `s`, taken outside the span, begins a new stretch (the samples before it, since
    /// the last cut, are then settled).
    fn cut(&mut self, s: &TimedSample) -> bool;

    /// The stretch that the last `cut` ended: its rows, each once, with their sums (a row whose
    /// samples weigh 0 is there too).
    fn settle(&mut self, rows: &[RowSum]);

    /// The last stretch of the walk (of its half), as [`Stretches::settle`].
    fn end(&mut self, rows: &[RowSum]);

    /// The last sample of the stretch just settled or ended, right after that call: the one
    /// sample of a stretch that may last past its span (a sample lasts until the next one is
    /// taken), for an analysis that spreads its time over the stretches it lasts into.
    fn settled_last(&mut self, last: &TimedSample) {
        let _ = last;
    }
}

/// Walks `timeline`'s samples (numbered in `rows` rows) as two halves at once (as
/// [`SampleTimeline::for_each_batch_half`]), cut into stretches by `first` and `second` (each
/// in its half), which get each stretch's sums per row: one addition a sample. The rows' sums
/// left to the timeline, if any, are added up from the stretches' (a row a stretch, not a
/// sample).
pub(crate) fn walk_stretches<A, B>(timeline: &SampleTimeline, rows: usize, first: &mut A, second: &mut B)
where
    A: Stretches + Send,
    B: Stretches + Send,
{
    let pending = timeline.row_sums_pending();
    let whole = pending.as_ref().map(cpuprof_model::PendingRowSums::rows);
    let (mut early, mut late) = (StretchWalk::new(first, rows, whole), StretchWalk::new(second, rows, whole));
    timeline.for_each_batch_half_unsummed(|batch| early.push_all(batch), |batch| late.push_all(batch));
    if let (Some(pending), Some(mut sums), Some(late)) = (pending, early.end(), late.end()) {
        for (sum, more) in sums.iter_mut().zip(late) {
            *sum = (sum.0 + more.0, sum.1.saturating_add(more.1));
        }
        timeline.found_row_sums(pending, sums);
    }
}

/// One half of a stretch walk, fed the half's samples a batch at a time.
struct StretchWalk<'w, S: Stretches> {
    sums: SparseSums,
    /// The stretch's rows as last read out of `sums`.
    settled: Vec<RowSum>,
    /// The stretches' current span, as [`Stretches::span`] last said.
    span: (i64, i64),
    stretches: &'w mut S,
    /// The latest sample pushed; `time_ns == i64::MIN` before the first.
    last: TimedSample,
    /// Every stretch's rows summed, when the walk finds the timeline's rows' sums.
    whole: Option<Vec<(i64, i64)>>,
}

/// No sample yet.
const NONE: TimedSample = TimedSample { row: u32::MAX, time_ns: i64::MIN, weight_ns: 0 };

impl<'w, S: Stretches> StretchWalk<'w, S> {
    /// A half of `rows` rows, summing the `whole` rows' sums when given their number.
    fn new(stretches: &'w mut S, rows: usize, whole: Option<usize>) -> Self {
        let span = stretches.span();
        let sums = SparseSums::adaptive(rows.max(whole.unwrap_or(0)));
        let whole = whole.map(|rows| vec![(0, 0); rows]);
        Self { sums, settled: Vec::new(), span, stretches, last: NONE, whole }
    }

    /// The next samples of the half, in time order.
    fn push_all(&mut self, batch: &[TimedSample]) {
        for (k, s) in batch.iter().enumerate() {
            if !(self.span.0..self.span.1).contains(&s.time_ns) {
                let before = if k == 0 { self.last } else { batch[k - 1] };
                self.cross(s, before);
            }
            self.sums.add(s.row, s.weight_ns);
        }
        if let Some(s) = batch.last() {
            self.last = *s;
        }
    }

    /// `s`, which follows `before` in the half, is outside the span: it may begin a stretch.
    #[cold]
    #[inline(never)]
    fn cross(&mut self, s: &TimedSample, before: TimedSample) {
        if self.stretches.cut(s) {
            self.take();
            self.stretches.settle(&self.settled);
            self.tell(before);
        }
        self.span = self.stretches.span();
    }

    /// Ends the walk: the last stretch is settled; returns every stretch's rows summed, when
    /// the walk sums them.
    fn end(mut self) -> Option<Vec<(i64, i64)>> {
        self.take();
        self.stretches.end(&self.settled);
        self.tell(self.last);
        self.whole
    }

    /// Reads the stretch's rows out, adding them to the whole's.
    fn take(&mut self) {
        self.sums.take_rows(&mut self.settled);
        if let Some(whole) = &mut self.whole {
            for r in &self.settled {
                if let Some(sum) = whole.get_mut(r.row as usize) {
                    *sum = (sum.0 + r.samples, sum.1.saturating_add(r.ns));
                }
            }
        }
    }

    /// Tells the stretches the last sample of the stretch just settled, if it had one.
    fn tell(&mut self, last: TimedSample) {
        if last.time_ns != i64::MIN && last.row != u32::MAX {
            self.stretches.settled_last(&last);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Halves;

    /// Time buckets `width` ns wide from 0; a sample before 0 is a stretch of its own (as a
    /// timeline's samples before the recording start are cut one by one).
    struct Buckets {
        width: i64,
        span: (i64, i64),
        /// Each stretch's bucket and rows, sorted.
        settled: Vec<(i64, Vec<RowSum>)>,
        /// The last sample of each stretch settled, as told.
        lasts: Vec<TimedSample>,
        /// The bucket of the current stretch, and of the one a cut ended.
        current: i64,
        ended: i64,
    }

    impl Buckets {
        fn new(width: i64) -> Self {
            Self { width, span: (0, 0), settled: Vec::new(), lasts: Vec::new(), current: 0, ended: 0 }
        }

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

        fn settled_last(&mut self, last: &TimedSample) {
            self.lasts.push(*last);
        }
    }

    /// What [`Buckets`] should get from a walk of `samples` (one half's): each stretch's rows
    /// summed naively per bucket, and the last sample of each stretch that has a row.
    fn reference(samples: &[TimedSample], rows: u32, width: i64) -> (Vec<(i64, Vec<RowSum>)>, Vec<TimedSample>) {
        let mut expected: Vec<(i64, Vec<RowSum>)> = Vec::new();
        let mut lasts: Vec<TimedSample> = Vec::new();
        for (k, s) in samples.iter().enumerate() {
            let bucket = s.time_ns.max(0) / width;
            let before = k.checked_sub(1).map(|b| samples[b]);
            let fresh = s.time_ns < 0 || before.is_none_or(|b| b.time_ns < 0 || b.time_ns / width != bucket);
            if fresh {
                lasts.extend(before.filter(|b| b.row != u32::MAX));
                expected.push((bucket, Vec::new()));
            }
            if s.row >= rows {
                continue;
            }
            let stretch = &mut expected.last_mut().unwrap().1;
            match stretch.iter_mut().find(|r| r.row == s.row) {
                Some(r) => (r.samples, r.ns) = (r.samples + 1, r.ns + s.weight_ns),
                None => stretch.push(RowSum { row: s.row, samples: 1, ns: s.weight_ns }),
            }
        }
        lasts.extend(samples.last().filter(|s| s.row != u32::MAX));
        expected.retain(|(_, rows)| !rows.is_empty());
        for (_, rows) in &mut expected {
            rows.sort_by_key(|r| r.row);
        }
        (expected, lasts)
    }

    /// Each stretch gets its samples' rows summed, in each half: tables small and big for their
    /// samples (whether a stretch is listed or read whole, `sums.rs` tests), stretches of one
    /// sample to hundreds, samples before 0, rowless samples and rows past the table; and each
    /// stretch's last sample is told, across the batches the walk hands over.
    #[test]
    fn stretches_get_their_samples_summed_in_each_half() {
        let shapes = [1u32, 7, 60, 300].into_iter().flat_map(|rows| {
            [0usize, 3, 25, 500, 2000].into_iter().flat_map(move |n| [1i64, 3, 17, 400].map(|width| (rows, n, width)))
        });
        for (case, (rows, n, width)) in shapes.enumerate() {
            // Scattered rows (two past the table, every fifth sample rowless), steps of 0 to 3
            // ns, from before 0.
            let mut t = (case % 7) as i64 - 4;
            let samples: Vec<TimedSample> = (0..n as u64)
                .map(|k| {
                    t += (k * 13 % 4) as i64;
                    let row = ((k * k * 31 + k * 7) % u64::from(rows + 2)) as u32;
                    let row = if k % 5 == 4 { u32::MAX } else { row };
                    TimedSample { row, time_ns: t, weight_ns: (k * 37 % 1000) as i64 }
                })
                .collect();
            for at in [n, n / 3] {
                let context = format!("case {case}: {rows} rows, {n} samples split at {at}, width {width}");
                let timeline = cpuprof_model::SampleTimeline::new(Halves { samples: samples.clone(), at });
                let (mut first, mut second) = (Buckets::new(width), Buckets::new(width));
                walk_stretches(&timeline, rows as usize, &mut first, &mut second);
                for (half, got) in [(&samples[..at], &first), (&samples[at..], &second)] {
                    let (expected, lasts) = reference(half, rows, width);
                    assert_eq!(got.settled, expected, "{context}");
                    assert_eq!(got.lasts, lasts, "{context}");
                }
            }
        }
    }
}
