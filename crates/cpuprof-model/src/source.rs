//! Where a timeline's samples come from: the trait a reader implements over its own columns.

use crate::runs::RunWalk;
use crate::sample::TimedSample;
use crate::stretches::StretchWalk;

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
    /// [`crate::Stretches::settle`] gives each row once), when its [`SampleSource::walk_stretches`]
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
