//! The end-to-end tests: one test binary, each file of tests/ one module of it (as ripgrep's
//! tests/tests.rs), so that they compile and link once, not once per file. A new file of tests
//! gets its `mod` line here. tests/mutations.rs is a binary of its own: it installs a global
//! allocator, which caps what every thread of its process allocates.
//!
//! One file's tests: `cargo test -p cpuprof-cli --test tests top::` (a module's path filters).

mod common;

mod agents;
mod annotate;
mod bad_input;
mod bombs;
mod browser;
mod calltree;
mod calltree_invariants;
mod ci_recipe;
mod convert_cpuprofile;
mod diff;
mod diff_explain;
mod empty_profiles;
mod flamegraph;
mod fold;
mod folded;
mod go_peek;
mod go_pprof;
mod hostile;
mod io_safety;
mod jit;
mod legacy_cpuprofile;
mod mcp;
mod perf_script;
mod pprof;
mod readme;
mod record;
mod record_attach;
mod report;
mod sourcemap;
mod terminal;
mod ticklog;
mod timeline;
mod top;
mod trace;
mod trace_variants;
