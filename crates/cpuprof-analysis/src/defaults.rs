//! The analyses' defaults, in one place: the options' `Default`s and the command line read them.

/// The false discovery rate of `diff` over all functions: 5%.
pub const ALPHA: f64 = 0.05;

/// Call-tree nodes under this percentage of the profile's total are left out (summed into
/// their parent's `pruned`): DevTools shows everything, which buries a terminal.
pub const TREE_MIN_PERCENT: f64 = 1.0;
