//! Stretches of samples (time buckets) summed per row as the source walks them.

use crate::sample::TimedSample;

/// A sample row's sums over a stretch of samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSum {
    /// The row (see [`TimedSample::row`]).
    pub row: u32,
    /// How many of the stretch's samples are in it.
    pub samples: i64,
    /// Their weight, ns (as [`TimedSample::weight_ns`]).
    pub ns: i64,
}

/// An analysis that cuts samples into stretches (time buckets) and wants each stretch's
/// weight per row: see [`crate::SampleTimeline::for_each_stretch_half`]. Each half of a walk calls `cut`
/// with each sample taken outside the current [`Stretches::span`] (settling the stretch
/// before it when `cut` says it begins one), and `end` with the last stretch.
pub trait Stretches {
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

/// The sums per row of the current stretch of a walk, dense with the rows touched listed (so a
/// stretch costs its samples, or at most 8 times the slots it touched, not the table), and of
/// all stretches when the walk sums the rows. The table is indexed by the source's slots (see
/// [`StretchWalk::push_slot`]), or by rows. A stretch summed densely lists nothing, and its take
/// reads the whole table.
pub(crate) struct StretchSums {
    /// Samples and ns per slot; a slot with 0 samples was not added to.
    pub(crate) sums: Vec<(i64, i64)>,
    /// Whether the slots added to are listed in `touched` (else a take reads the table).
    pub(crate) listing: bool,
    /// Whether each take chooses how the next stretch is summed (see [`StretchWalk::densely`]).
    pub(crate) adapts: bool,
    touched: Vec<u32>,
    settled: Vec<RowSum>,
    whole: Option<Vec<(i64, i64)>>,
}

impl StretchSums {
    /// Sums with a table of `len` slots, adding into `whole` rows' sums when given.
    pub(crate) fn new(whole: Option<Vec<(i64, i64)>>, len: usize) -> Self {
        Self { sums: vec![(0, 0); len], listing: true, adapts: false, touched: Vec::new(), settled: Vec::new(), whole }
    }

    #[inline]
    pub(crate) fn add(&mut self, slot: u32, weight_ns: i64) {
        let Some(sum) = self.sums.get_mut(slot as usize) else { return self.add_beyond(slot, weight_ns) };
        if self.listing && sum.0 == 0 {
            self.touched.push(slot);
        }
        *sum = (sum.0 + 1, sum.1.saturating_add(weight_ns));
    }

    /// [`StretchSums::add`] when summing densely: nothing listed, nothing tested.
    #[inline]
    fn add_densely(&mut self, slot: u32, weight_ns: i64) {
        debug_assert!(!self.listing, "summing densely");
        let Some(sum) = self.sums.get_mut(slot as usize) else { return self.add_beyond(slot, weight_ns) };
        *sum = (sum.0 + 1, sum.1.saturating_add(weight_ns));
    }

    /// Adds a sample whose slot is past the table, growing it.
    #[cold]
    fn add_beyond(&mut self, slot: u32, weight_ns: i64) {
        self.sums.resize(slot as usize + 1, (0, 0));
        self.add(slot, weight_ns);
    }

    /// The current stretch's rows with their sums, which start again from 0; `rows` numbers
    /// the slots' rows (`u32::MAX`: none), when the slots are not rows.
    pub(crate) fn take(&mut self, rows: Option<&[u32]>) -> &[RowSum] {
        self.settled.clear();
        let mut settle = |slot: u32, (samples, ns): (i64, i64)| {
            let row = match rows {
                None => slot,
                Some(rows) => match rows.get(slot as usize) {
                    Some(&row) if row != u32::MAX => row,
                    _ => return,
                },
            };
            self.settled.push(RowSum { row, samples, ns });
            if let Some(sum) = self.whole.as_mut().and_then(|w| w.get_mut(row as usize)) {
                *sum = (sum.0 + samples, sum.1.saturating_add(ns));
            }
        };
        let mut samples = 0i64;
        if !self.listing || self.touched.len() >= self.sums.len() / 8 {
            // Most of the table, or not listed: read in order, not at random.
            self.touched.clear();
            for (slot, sum) in self.sums.iter_mut().enumerate().filter(|(_, sum)| sum.0 != 0) {
                samples += sum.0;
                settle(slot as u32, std::mem::take(sum));
            }
        } else {
            for slot in self.touched.drain(..) {
                let sum = std::mem::take(&mut self.sums[slot as usize]);
                samples += sum.0;
                settle(slot, sum);
            }
        }
        if self.adapts {
            // The next stretch is summed densely after one of at least an eighth of the table in
            // samples, so each read of the table is paid for by that many samples.
            self.listing = samples < (self.sums.len() / 8) as i64;
        }
        &self.settled
    }
}

/// One half of a stretch walk ([`crate::SampleTimeline::for_each_stretch_half`]), fed a sample at a time
/// by the source's walk ([`crate::SampleSource::walk_stretches`]).
pub struct StretchWalk<'w> {
    pub(crate) sums: StretchSums,
    /// The stretches' current span, as [`Stretches::span`] last said.
    span: (i64, i64),
    /// The span [`StretchWalk::push_densely`] keeps to its fast path: `span` while the
    /// stretch is summed densely, else empty (so that every sample takes the path that lists).
    dense_span: (i64, i64),
    stretches: &'w mut (dyn Stretches + Send),
    /// The row of each slot, when the source pushes by slot.
    slots: Option<&'w [u32]>,
    /// The latest sample pushed (its slot, or row without slots; time; weight), for
    /// [`Stretches::settled_last`]; `time_ns == i64::MIN` before the first.
    last: (u32, i64, i64),
}

impl<'w> StretchWalk<'w> {
    pub(crate) fn new(
        stretches: &'w mut (dyn Stretches + Send),
        whole: Option<Vec<(i64, i64)>>,
        slots: Option<&'w [u32]>,
    ) -> Self {
        let len = slots.map_or_else(|| whole.as_ref().map_or(0, Vec::len), <[u32]>::len);
        let span = stretches.span();
        let last = (0, i64::MIN, 0);
        Self { sums: StretchSums::new(whole, len), span, dense_span: (0, 0), stretches, slots, last }
    }

    /// The next sample of the half, in time order (from a source without slots).
    #[inline]
    pub fn push(&mut self, s: TimedSample) {
        debug_assert!(self.slots.is_none(), "a source with slots pushes by slot");
        if !(self.span.0..self.span.1).contains(&s.time_ns) {
            self.cross(&s);
        }
        self.sums.add(s.row, s.weight_ns);
        self.last = (s.row, s.time_ns, s.weight_ns);
    }

    /// The next samples of the half, in time order (from a source without slots).
    pub fn push_all(&mut self, batch: &[TimedSample]) {
        for s in batch {
            self.push(*s);
        }
    }

    /// The next sample of the half, in time order, named by the source's own slot (a node,
    /// say; see [`crate::SampleSource::slots`]): the walk's table is indexed by slot, so the sample
    /// costs no lookup of its row.
    #[inline]
    pub fn push_slot(&mut self, slot: u32, time_ns: i64, weight_ns: i64) {
        if !(self.span.0..self.span.1).contains(&time_ns) {
            self.cross_slot(slot, time_ns, weight_ns);
        }
        self.sums.add(slot, weight_ns);
        self.last = (slot, time_ns, weight_ns);
    }

    /// Whether this half may sum stretches densely, in a walk of `samples` samples (all
    /// halves'): then the slots a stretch touches are not listed (that test and push on every
    /// sample took a quarter of a timeline's walk), its take reads the whole table instead, and
    /// the source pushes with [`StretchWalk::push_densely`]. Only where reading the table costs
    /// at most 8 reads a sample: the first stretch when the table is at most 8 times the
    /// samples, and then each stretch after one of at least an eighth of the table in samples
    /// (the others are listed). The answer stays once it is yes.
    pub fn densely(&mut self, samples: usize) -> bool {
        if !self.sums.adapts && self.sums.sums.len() <= samples.saturating_mul(8) {
            // A switch to summing densely loses nothing even mid-stretch: the take reads all.
            self.sums.adapts = true;
            self.sums.listing = false;
            self.dense_span = self.span;
        }
        self.sums.adapts
    }

    /// [`StretchWalk::push_slot`] for a half that may sum densely ([`StretchWalk::densely`]).
    #[inline]
    pub fn push_densely(&mut self, slot: u32, time_ns: i64, weight_ns: i64) {
        if !(self.dense_span.0..self.dense_span.1).contains(&time_ns) {
            return self.push_listed(slot, time_ns, weight_ns);
        }
        self.sums.add_densely(slot, weight_ns);
        self.last = (slot, time_ns, weight_ns);
    }

    /// [`StretchWalk::push_densely`] of a sample outside the span, or of any in a stretch that
    /// is listed.
    #[inline]
    fn push_listed(&mut self, slot: u32, time_ns: i64, weight_ns: i64) {
        if !(self.span.0..self.span.1).contains(&time_ns) {
            self.cross_slot(slot, time_ns, weight_ns);
        }
        self.sums.add(slot, weight_ns);
        self.last = (slot, time_ns, weight_ns);
    }

    /// `slot`'s sample is outside the span (see [`StretchWalk::cross`]).
    #[cold]
    #[inline(never)]
    fn cross_slot(&mut self, slot: u32, time_ns: i64, weight_ns: i64) {
        let row = self.slots.and_then(|rows| rows.get(slot as usize)).copied().unwrap_or(u32::MAX);
        self.cross(&TimedSample { row, time_ns, weight_ns });
    }

    /// `s` is outside the span: it may begin a stretch.
    #[cold]
    #[inline(never)]
    fn cross(&mut self, s: &TimedSample) {
        if self.stretches.cut(s) {
            self.stretches.settle(self.sums.take(self.slots));
            self.tell_last();
        }
        self.span = self.stretches.span();
        self.dense_span = if self.sums.listing { (0, 0) } else { self.span };
    }

    /// Ends the walk: the last stretch is settled; returns the rows' sums when it made them.
    pub(crate) fn end(mut self) -> Option<Vec<(i64, i64)>> {
        self.stretches.end(self.sums.take(self.slots));
        self.tell_last();
        self.sums.whole
    }

    /// Tells the stretches the last sample of the stretch just settled, if it had one.
    fn tell_last(&mut self) {
        let (slot, time_ns, weight_ns) = std::mem::replace(&mut self.last, (0, i64::MIN, 0));
        if time_ns == i64::MIN {
            return;
        }
        let row = match self.slots {
            None => slot,
            Some(rows) => match rows.get(slot as usize) {
                Some(&row) if row != u32::MAX => row,
                _ => return,
            },
        };
        self.stretches.settled_last(&TimedSample { row, time_ns, weight_ns });
    }
}
