//! A profile's samples one at a time, in time order: what the analyses over time walk.
//!
//! Sample rows are sums (one row per stack, as readers aggregate them), so that the
//! analyses that need no times never pay for them. A [`SampleTimeline`] adds, for profiles whose
//! format has times, which row each sample added to, when, and how long it lasted. Readers
//! keep it in their own compact form (a `.cpuprofile`'s node and delta columns, 4 bytes a
//! sample) and walk it on demand through a [`SampleSource`], so a timeline costs no per-sample
//! allocation and every walk is one pass over those columns.

use std::sync::{Arc, OnceLock};

use crate::sample::TimedSample;
use crate::source::SampleSource;

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
/// it (but one told not to: [`SampleTimeline::for_each_batch_half_unsummed`]), so an analysis over time
/// and the rows' values cost one walk together.
#[derive(Debug)]
struct RowSums {
    rows: usize,
    sums: OnceLock<Vec<(i64, i64)>>,
}

/// The rows' sums a timeline left to a walk ([`SampleTimeline::row_sums_pending`]): only the
/// timeline makes one, and [`SampleTimeline::found_row_sums`] takes it.
#[derive(Debug)]
pub struct PendingRowSums {
    rows: usize,
}

impl PendingRowSums {
    /// How many rows there are to sum.
    pub fn rows(&self) -> usize {
        self.rows
    }
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

    /// [`SampleTimeline::for_each_batch_half`] leaving the rows' sums, when the reader left
    /// them to the timeline, to a later walk (for an analysis whose caller reads no sample
    /// values after it), or to the analysis ([`SampleTimeline::row_sums_pending`]): the walk
    /// adds nothing to them.
    pub fn for_each_batch_half_unsummed<A, B>(&self, mut first: A, mut second: B)
    where
        A: FnMut(&[TimedSample]) + Send,
        B: FnMut(&[TimedSample]) + Send,
    {
        self.walk_halves_viewed(&mut first, &mut second);
    }

    /// The rows' sums left to a walk of this timeline that has not been made (see
    /// [`crate::ProfileBuilder::summed_timeline`]), if they are: an analysis whose walk sums the
    /// rows anyway, a stretch at a time, walks the whole timeline with
    /// [`SampleTimeline::for_each_batch_half_unsummed`] and gives them with
    /// [`SampleTimeline::found_row_sums`], instead of the walk adding each sample to them.
    pub fn row_sums_pending(&self) -> Option<PendingRowSums> {
        self.pending_sums().map(|p| PendingRowSums { rows: p.rows })
    }

    /// The rows' sums (samples and ns per row, of every sample the walk was given) that a walk
    /// of the whole timeline found, for the `pending` sums this timeline left to it: they become
    /// the profile's values.
    // The token is taken, not borrowed: it gives the sums once.
    #[allow(clippy::needless_pass_by_value)]
    pub fn found_row_sums(&self, pending: PendingRowSums, sums: Vec<(i64, i64)>) {
        debug_assert_eq!(sums.len(), pending.rows, "a sum per row");
        if let Some(left) = self.pending_sums().filter(|p| p.rows == sums.len()) {
            let _ = left.sums.set(sums);
        }
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
