//! One sample on a timeline: what every walk over time hands over.

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
