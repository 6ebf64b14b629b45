//! Analyses: a [`cpuprof_model::Profile`] in, plain result structs out.
//!
//! Depends only on `cpuprof-model` and `cpuprof-folded` (the folded-text syntax its labels
//! are escaped by), and `cpuprof-parse` for its tests. No formatting, no
//! I/O: numbers stay integers (ns or sample counts) and percentages are left to renderers.
//! Every walk over the stack tree is iterative: stacks thousands of frames deep are normal.
//!
//! ```
//! use cpuprof_analysis::{top, TopOptions};
//! use cpuprof_parse::{parse, Origin, ParseOptions};
//!
//! let json = br#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},
//!   {"id":2,"callFrame":{"functionName":"work","scriptId":"7","url":"file:///a.js","lineNumber":0,"columnNumber":9}}],
//!   "startTime":0,"endTime":30,"samples":[2,2],"timeDeltas":[10,10]}"#;
//! let profile = parse(&json[..], &Origin("a.cpuprofile".into()), &ParseOptions::default()).unwrap();
//! let report = top(&profile, &TopOptions::default());
//! assert_eq!(report.rows[0].name, "work");
//! assert_eq!(report.rows[0].self_weight, 20_000); // 10 µs + the mean interval, in ns
//! ```
#![deny(missing_docs)]

mod blocks;
mod calltree;
mod category;
pub mod defaults;
mod diff;
mod diff_tree;
mod explain;
mod filter;
mod fold;
mod frame_tree;
mod gate;
mod handle;
mod hide;
mod jit;
mod jit_change;
mod keys;
mod lines;
mod paths;
mod prefix_tree;
mod recursion;
mod report_data;
mod runs;
mod side;
mod stats;
mod stretches;
mod sums;
#[cfg(test)]
mod test_support;
mod timeline;
mod top;
#[cfg(test)]
mod walk_tests;
mod weights;
mod window;

pub use blocks::{
    blocks, blocks_only, compare_blocks, run_blocks, Block, BlockChange, BlockCut, Blocks, RunBlocks, BLOCK_TOP,
    GAP_INTERVALS, GAP_MIN_NS,
};
pub use calltree::{CallGraph, CallGraphOptions, CallNode, CallTree, Cut, FindError, Pruned};
pub use category::{Categories, Category};
pub use cpuprof_model::parse_duration_ns;
pub use cpuprof_model::{resolve_window, Bound, Bounds, Window, WindowError};
pub use diff::{
    compared_unit, diff, match_files, matched_file_names, DiffOptions, DiffReport, DiffRow, Normalize, SideNumbers,
    SideTotals, UnpairedScripts, Verdict,
};
pub use diff_tree::{DiffTree, SidePair};
pub use explain::{explain, Contribution, Explanation, Inlining, Moved, EXPLAIN_ENTRIES};
pub use filter::StackFilter;
pub use fold::{fold, function_frame_label, FoldOptions, Folded};
pub use frame_tree::FrameTree;
pub use gate::{BlockRule, Crossing, Gate, GateError, Rule, RuleError, Threshold};
pub use handle::function_handle;
pub use hide::{hide_frames, ALL_HIDDEN};
pub use jit::{
    deoptimized, jit, without_tiers, Callee, DeoptGroup, Finding, JitCoverage, JitFunction, JitReport, Tiers,
    DEOPT_NOISE_PER_MILLE,
};
pub use jit_change::{DeoptChange, InlineChange, JitChange, JitSide, RowTiers, TierShift, TIER_SHIFT_POINTS};
pub use keys::{package_of, GroupBy};
pub use lines::{self_lines, FunctionLines, LineAmount};
pub use paths::{heaviest_paths, HotPath};
pub use recursion::collapse_recursion;
pub use report_data::{
    report_data, ChartRuns, PrunedPaths, ReportBucket, ReportData, ReportDataOptions, ReportFunction, PRUNED,
};
pub use timeline::{
    default_bucket_ns, find_phase, timeline, Bucket, FunctionRef, Phase, Timeline, TimelineError, TimelineOptions,
    MAX_BUCKETS,
};
pub use top::{top, Amount, Metric, Summary, TopOptions, TopReport, TopRow};
pub use weights::Weight;
pub use window::{apply_window, between, cut_window, cut_window_summed, recording};
