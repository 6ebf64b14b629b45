//! The analyses' defaults, in one place: the options' `Default`s and the command line read them.

/// The false discovery rate of `diff` over all functions: 5%.
pub const ALPHA: f64 = 0.05;

/// Call-tree nodes under this percentage of the profile's total are left out (summed into
/// their parent's `pruned`): DevTools shows everything, which buries a terminal.
pub const TREE_MIN_PERCENT: f64 = 1.0;

/// A report's timeline has at most this many buckets (of a round length: fewer, longer ones
/// when their entries would pass [`REPORT_MAX_ENTRIES`]): a range dragged on it is as fine as that.
pub const REPORT_MAX_BUCKETS: u32 = 200;

/// A report's call tree is pruned (light call paths folded into `(pruned)` nodes) to at most
/// this many nodes…
pub const REPORT_MAX_NODES: usize = 40_000;

/// …and its buckets to at most this many (node, weight) entries in all: with the nodes, what
/// keeps a report of a profile of any size to a few MB.
pub const REPORT_MAX_ENTRIES: usize = 300_000;

/// The report's flame chart holds at most this many runs of samples (a run: consecutive samples
/// with one stack); more are merged into as many slots of time, each the stack that held most of it.
pub const REPORT_MAX_RUNS: usize = 50_000;

/// A report lists event-loop blocks at least this long (`report --min-block`), as text.
pub const REPORT_MIN_BLOCK: &str = "50ms";

/// A report lists at most this many event-loop blocks (the longest).
pub const REPORT_BLOCKS: usize = 100;

/// A report keeps each function's heaviest this many lines (of self time).
pub const REPORT_LINES: usize = 20;

/// A report carries the source text around the lines of this many functions (those whose
/// listed lines hold the most self time).
pub const REPORT_SOURCES: usize = 100;

/// A report prunes its call tree harder (down to [`REPORT_MIN_NODES`]) rather than show fewer
/// than this many buckets.
pub const REPORT_MIN_BUCKETS: usize = 50;

/// The fewest nodes a report prunes its call tree to.
pub const REPORT_MIN_NODES: usize = 2_500;

/// …unless more than this percentage of the self time would then be under `(pruned)` nodes.
pub const REPORT_MAX_PRUNED_PERCENT: f64 = 1.0;

/// A diff's report holds at most this many rows (in rank order: every significant change comes
/// before the noise), which keeps its page small for profiles of thousands of functions.
pub const REPORT_DIFF_ROWS: usize = 2_000;

/// A diff's report explains this many of the changes (as `diff --explain N`).
pub const REPORT_EXPLAIN: usize = 20;

/// The shortest event-loop block a brief summary (`top --format brief`, MCP `load`) considers, ns.
pub const BRIEF_BLOCK_MIN_NS: i64 = 50_000_000;

/// How many functions a brief summary lists.
pub const BRIEF_FUNCTIONS: usize = 10;

/// How many call paths a brief summary lists.
pub const BRIEF_PATHS: usize = 5;

/// A report shows this many rows unless asked for more (`top`, `diff`, `blocks`).
pub const ROWS: u64 = 20;

/// `blocks` lists event-loop blocks at least this long, as text.
pub const MIN_BLOCK: &str = "50ms";

/// `annotate` shows this many lines around each line with samples (longer runs of others are
/// folded), as `git diff`'s context.
pub const ANNOTATE_CONTEXT: u64 = 3;

/// `jit` shows this many of the hottest JavaScript functions.
pub const JIT_FUNCTIONS: u64 = 10;

/// How many of the hottest JavaScript functions the report page has `jit`'s facts for (and
/// the deoptimized ones with at least 1% of the profile in total).
pub const REPORT_JIT_FUNCTIONS: usize = 50;
