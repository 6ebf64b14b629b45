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
    sums: Vec<(i64, i64)>,
    /// Whether the slots added to are listed in `touched` (else a take reads the table).
    listing: bool,
    /// Whether each take chooses how the next stretch is summed (see [`StretchWalk::densely`]).
    adapts: bool,
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

/// One half of a stretch walk ([`Timeline::for_each_stretch_half`]), fed a sample at a time
/// by the source's walk ([`SampleSource::walk_stretches`]).
pub struct StretchWalk<'w> {
    sums: StretchSums,
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
    fn new(
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
    /// say; see [`SampleSource::slots`]): the walk's table is indexed by slot, so the sample
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
    fn end(mut self) -> Option<Vec<(i64, i64)>> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
            let timeline = Timeline::new(Slots { samples, rows, modes: modes.clone() });
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
