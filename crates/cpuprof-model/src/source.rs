//! Where a timeline's samples come from: the trait a reader implements over its own columns.

use crate::sample::TimedSample;

/// Where a timeline's samples come from: a reader's own columns. The model's one walk over
/// samples; what an analysis makes of them is the analysis's (a visitor of the batches).
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
}
