//! The analyses' defaults, in one place: the options' `Default`s and the command line read them.

/// The false discovery rate of `diff` over all functions: 5%.
pub const ALPHA: f64 = 0.05;
