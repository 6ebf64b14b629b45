//! Facts about V8 profiles that several crates assume, in one place.

/// V8's default sampling interval (`--prof-sampling-interval`, and node's `--cpu-prof-interval`):
/// 1 ms. What one sample stands for when a profile does not say.
pub const V8_SAMPLING_INTERVAL_NS: i64 = 1_000_000;

/// Times beyond ±2^62 ns (about 146 years) are not read: far beyond any recording, and far
/// enough inside `i64` that sums of a few of them cannot overflow.
pub const TIME_LIMIT_NS: i64 = 1 << 62;
