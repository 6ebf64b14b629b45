//! A profile's samples one at a time, in time order: what the analyses over time walk.
//!
//! Sample rows are sums (one row per stack, as readers aggregate them), so that the
//! analyses that need no times never pay for them. A [`Timeline`] adds, for profiles whose
//! format has times, which row each sample added to, when, and how long it lasted. Readers
//! keep it in their own compact form (a `.cpuprofile`'s node and delta columns, 4 bytes a
//! sample) and walk it on demand through a [`SampleSource`], so a timeline costs no per-sample
//! allocation and every walk is one pass over those columns.

use std::sync::{Arc, OnceLock};

use crate::runs::{RunRules, RunWalk, Runs, RunsWalked};

/// One sample on a timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedSample {
    /// The sample row it is counted in (its stack, VM state and sums).
    pub row: u32,
    /// When it was taken, ns on the profile's clock (as [`crate::Meta::start_ns`]).
    pub time_ns: i64,
    /// How long it lasted, ns: what it adds to the row's nanosecond column (0 when the
    /// profile has none).
    pub weight_ns: i64,
}

/// Where a timeline's samples come from: a reader's own columns.
pub trait SampleSource: Send + Sync {
    /// Calls `visit` with every sample, a batch at a time, in time order (ties in the order
    /// they were taken).
    fn walk(&self, visit: &mut dyn FnMut(&[TimedSample]));

    /// Walks the samples as two consecutive stretches at once, on two threads: `first` gets
    /// the earlier samples and `second` the later ones, each in time order. A source that
    /// cannot split gives them all to `first`.
    fn walk_halves(
        &self,
        first: &mut (dyn FnMut(&[TimedSample]) + Send),
        second: &mut (dyn FnMut(&[TimedSample]) + Send),
    ) {
        let _ = second;
        self.walk(first);
    }

    /// The row of each of the source's slots (`u32::MAX`: none; no two slots share a row, as
    /// [`Stretches::settle`] gives each row once), when its [`SampleSource::walk_stretches`]
    /// names samples by slot ([`StretchWalk::push_slot`]).
    fn slots(&self) -> Option<&[u32]> {
        None
    }

    /// Walks the samples as [`SampleSource::walk_halves`] does, handing each to `first` or
    /// `second` as it comes: a source whose walk makes the samples one at a time overrides it
    /// so that no batch is written and read in between.
    fn walk_stretches(&self, first: &mut StretchWalk<'_>, second: &mut StretchWalk<'_>) {
        self.walk_halves(&mut |batch| first.push_all(batch), &mut |batch| second.push_all(batch));
    }

    /// Walks the samples as [`SampleSource::walk_halves`] does, handing each to `first` or
    /// `second` as it comes (see [`SampleSource::walk_stretches`]).
    fn walk_runs(&self, first: &mut RunWalk<'_>, second: &mut RunWalk<'_>) {
        self.walk_halves(&mut |batch| first.push_all(batch), &mut |batch| second.push_all(batch));
    }
}

/// Samples in time order (see the module documentation). Cheap to clone: the source is shared.
#[derive(Clone)]
pub struct Timeline {
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
/// it (but a run walk told not to: [`Timeline::for_each_run_half`]), so an analysis over time
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
/// weight per row: see [`Timeline::for_each_stretch_half`]. Each half of a walk calls `cut`
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
}

/// The sums per row of the current stretch of a walk, dense with the rows touched listed (so a
/// stretch costs its samples, or at most 8 times the slots it touched, not the table), and of
/// all stretches when the walk sums the rows. The table is indexed by the source's slots (see
/// [`StretchWalk::push_slot`]), or by rows.
pub(crate) struct StretchSums {
    /// Samples and ns per slot; a slot with 0 samples is not in `touched`.
    sums: Vec<(i64, i64)>,
    touched: Vec<u32>,
    settled: Vec<RowSum>,
    whole: Option<Vec<(i64, i64)>>,
}

impl StretchSums {
    /// Sums with a table of `len` slots, adding into `whole` rows' sums when given.
    pub(crate) fn new(whole: Option<Vec<(i64, i64)>>, len: usize) -> Self {
        Self { sums: vec![(0, 0); len], touched: Vec::new(), settled: Vec::new(), whole }
    }

    #[inline]
    pub(crate) fn add(&mut self, slot: u32, weight_ns: i64) {
        let Some(sum) = self.sums.get_mut(slot as usize) else { return self.add_beyond(slot, weight_ns) };
        if sum.0 == 0 {
            self.touched.push(slot);
        }
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
        if self.touched.len() >= self.sums.len() / 8 {
            // Most of the table: read in order, not at random.
            self.touched.clear();
            for (slot, sum) in self.sums.iter_mut().enumerate().filter(|(_, sum)| sum.0 != 0) {
                settle(slot as u32, std::mem::take(sum));
            }
        } else {
            for slot in self.touched.drain(..) {
                settle(slot, std::mem::take(&mut self.sums[slot as usize]));
            }
        }
        &self.settled
    }
}

/// One half of a stretch walk ([`Timeline::for_each_stretch_half`]), fed a sample at a time
/// by the source's walk ([`SampleSource::walk_stretches`]).
pub struct StretchWalk<'w> {
    sums: StretchSums,
    /// The stretches' current span, as [`Stretches::span`] last said.
    span: (i64, i64),
    stretches: &'w mut (dyn Stretches + Send),
    /// The row of each slot, when the source pushes by slot.
    slots: Option<&'w [u32]>,
}

impl<'w> StretchWalk<'w> {
    fn new(
        stretches: &'w mut (dyn Stretches + Send),
        whole: Option<Vec<(i64, i64)>>,
        slots: Option<&'w [u32]>,
    ) -> Self {
        let len = slots.map_or_else(|| whole.as_ref().map_or(0, Vec::len), <[u32]>::len);
        Self { sums: StretchSums::new(whole, len), span: stretches.span(), stretches, slots }
    }

    /// The next sample of the half, in time order (from a source without slots).
    #[inline]
    pub fn push(&mut self, s: TimedSample) {
        debug_assert!(self.slots.is_none(), "a source with slots pushes by slot");
        if !(self.span.0..self.span.1).contains(&s.time_ns) {
            self.cross(&s);
        }
        self.sums.add(s.row, s.weight_ns);
    }

    /// The next samples of the half, in time order (from a source without slots).
    pub fn push_all(&mut self, batch: &[TimedSample]) {
        for s in batch {
            self.push(*s);
        }
    }

    /// The next sample of the half, in time order, named by the source's own slot (a node,
    /// say; see [`SampleSource::slots`]): the walk's table is indexed by slot, so the sample
    /// costs no lookup of its row.
    #[inline]
    pub fn push_slot(&mut self, slot: u32, time_ns: i64, weight_ns: i64) {
        if !(self.span.0..self.span.1).contains(&time_ns) {
            let row = self.slots.and_then(|rows| rows.get(slot as usize)).copied().unwrap_or(u32::MAX);
            self.cross(&TimedSample { row, time_ns, weight_ns });
        }
        self.sums.add(slot, weight_ns);
    }

    /// `s` is outside the span: it may begin a stretch.
    #[cold]
    #[inline(never)]
    fn cross(&mut self, s: &TimedSample) {
        if self.stretches.cut(s) {
            self.stretches.settle(self.sums.take(self.slots));
        }
        self.span = self.stretches.span();
    }

    /// Ends the walk: the last stretch is settled; returns the rows' sums when it made them.
    fn end(mut self) -> Option<Vec<(i64, i64)>> {
        self.stretches.end(self.sums.take(self.slots));
        self.sums.whole
    }
}

impl std::fmt::Debug for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeline").field("window", &self.window).finish_non_exhaustive()
    }
}

impl Timeline {
    /// The samples `source` walks.
    pub fn new(source: impl SampleSource + 'static) -> Self {
        Self { source: Arc::new(source), window: None, rows: None, sums: None }
    }

    /// The samples `source` walks, numbered in `rows` rows whose sums (count, ns) are left to
    /// the timeline: see [`Timeline::row_sums`].
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

    /// [`Timeline::for_each_half`] a batch of samples at a time: for analyses whose loop over
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

    /// Walks the samples as two halves at once (as [`Timeline::for_each_batch_half`]), cut into
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

    /// Walks the samples as two halves at once (as [`Timeline::for_each_batch_half`]), cut into
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
