//! The renderers' defaults, in one place: the options' `Default`s and the command line read them.

/// The width of a flame graph drawn at a fixed width, in pixels: inferno's own.
pub const FLAME_WIDTH: usize = 1200;

/// Frames narrower than this percentage of the whole graph are left out of cpuprof's flame
/// graphs: ten times inferno's (and FlameGraph's) 0.01, which keeps graphs of large profiles
/// to a size a browser draws quickly.
pub const FLAME_MIN_WIDTH: f64 = 0.1;
