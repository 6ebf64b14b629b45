//! The command line, as clap types only; `run` turns them into library options.

use std::path::PathBuf;

use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use cpuprof_app::{FilterOptions, ReadOptions, WindowOptions};
use cpuprof_model::SourceFormat;
use cpuprof_render::Format;

#[derive(Debug, Parser)]
#[command(
    name = "cpuprof",
    version,
    about = "Answers from CPU profiles of Node.js/V8 programs",
    after_help = "EXAMPLES:\n  cpuprof top app.cpuprofile\n  cpuprof top app.cpuprofile -n 40 --by package\n  cpuprof top app.cpuprofile --format json -o top.json\n  cpuprof top isolate-0x5a1e2c0-4242-v8.log\n  gzip -c app.cpuprofile | cpuprof top -\n  cpuprof flamegraph app.cpuprofile -o flame.svg\n  cpuprof top app.cpuprofile --source-maps\n  cpuprof diff before.cpuprofile after.cpuprofile --format markdown\n  cpuprof convert app.cpuprofile -o app.pb.gz\n  cpuprof top profile.pb.gz --sample-type cpu\n\nEXIT STATUS:\n  0 ok · 1 bad input or I/O error · 2 usage error · 3 `diff --fail-on` found a regression"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Functions (or files, packages, lines) ranked by the CPU time they hold
    #[command(after_help = TOP_HELP, mut_arg("format", formats(ReportFormatArg::TOP)))]
    Top(TopArgs),
    /// Folded stacks (`root;…;leaf weight`) for inferno, FlameGraph or speedscope
    #[command(after_help = COLLAPSE_HELP)]
    Collapse(CollapseArgs),
    /// An interactive SVG flame graph (search, zoom), readable offline
    #[command(after_help = FLAMEGRAPH_HELP)]
    Flamegraph(FlamegraphArgs),
    /// The call tree: top-down (callers above callees) or bottom-up (hot functions, their callers under them)
    #[command(after_help = TREE_HELP, mut_arg("format", formats(ReportFormatArg::VIEWS)))]
    Tree(TreeArgs),
    /// Who calls a function: the part of its total that comes through each caller
    #[command(after_help = CALLERS_HELP, mut_arg("format", formats(ReportFormatArg::VIEWS)))]
    Callers(CallsArgs),
    /// What a function calls: each callee's total under it, and its own time
    #[command(after_help = CALLEES_HELP, mut_arg("format", formats(ReportFormatArg::VIEWS)))]
    Callees(CallsArgs),
    /// A function's callers and callees together (speedscope's sandwich)
    #[command(after_help = EXPLAIN_HELP, mut_arg("format", formats(ReportFormatArg::VIEWS)))]
    Explain(CallsArgs),
    /// A function's source with the time of each line, the hottest marked (or --top N functions')
    #[command(after_help = ANNOTATE_HELP, mut_arg("format", formats(ReportFormatArg::VIEWS)))]
    Annotate(AnnotateArgs),
    /// What V8 did to the hottest functions: self time by tier, compilations, deopts and their cost, inlining
    #[command(after_help = JIT_HELP, mut_arg("format", formats(ReportFormatArg::JIT)))]
    Jit(JitArgs),
    /// Which functions got hotter between BASE and NEW, with sampling noise taken into account
    #[command(after_help = DIFF_HELP, mut_arg("format", formats(ReportFormatArg::DIFF)))]
    Diff(Box<DiffArgs>),
    /// Rewrite a profile as pprof (go tool pprof, Pyroscope, Parca), .cpuprofile or folded stacks
    #[command(after_help = CONVERT_HELP)]
    Convert(ConvertArgs),
    /// Combine profiles (workers of one process, repeated runs) into one
    #[command(after_help = MERGE_HELP)]
    Merge(MergeArgs),
    /// The profile over time: busy, GC, idle and each category per bucket, and its phases
    #[command(after_help = TIMELINE_HELP)]
    Timeline(TimelineArgs),
    /// What blocked the event loop: stretches without idle samples, longest first
    #[command(after_help = BLOCKS_HELP, mut_arg("format", formats(ReportFormatArg::VIEWS)))]
    Blocks(BlocksArgs),
    /// One self-contained HTML page to explore the profile: timeline, top, flame graph, callers and callees, blocks
    #[command(after_help = REPORT_HELP)]
    Report(ReportArgs),
    /// Profile a command (every Node process it starts), or attach to a running Node process
    #[command(after_help = RECORD_HELP, mut_arg("format", formats(ReportFormatArg::TOP)))]
    Record(RecordArgs),
    /// Serve the commands as Model Context Protocol tools on stdin/stdout, for coding agents
    #[command(after_help = MCP_HELP)]
    Mcp(McpArgs),
}

const MCP_HELP: &str = "\
TOOLS:
  load (read a profile once for the session; a brief summary), top, tree, callers, callees,
  explain, diff, timeline, blocks, flamegraph and report (write a file, return its path),
  convert. Each takes its command's options as JSON arguments (`by`, `limit`, `from`, …;
  the schemas come from the same definitions as this help), answers in the command's JSON,
  and keeps to a byte budget (`budget`), leaving rows out with a note of how many. A profile
  is read once and kept while its file is unchanged (path, size, time of change), so later
  questions about it answer at once. `rows[].id` in top (and `id` in tree, callers, callees)
  is a function's stable handle: pass it as `pattern`.

REGISTER IT (an MCP client's configuration):
  {\"mcpServers\": {\"cpuprof\": {\"command\": \"cpuprof\", \"args\": [\"mcp\"]}}}

EXAMPLES:
  cpuprof mcp
  cpuprof mcp --budget 16384";

/// The bytes an MCP answer keeps to when the call names no budget.
pub(crate) const DEFAULT_BUDGET: u64 = 8 * 1024;

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The bytes an answer keeps to unless a call names its own `budget`
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_BUDGET)]
    pub(crate) budget: u64,
}

const RECORD_HELP: &str = "\
A COMMAND:
  Every Node process COMMAND starts, and each of its worker threads, is profiled: NODE_OPTIONS
  (yours kept) gains `--require` of a small preload that profiles the thread in process and
  writes its profile when it ends (node 20 takes neither --cpu-prof nor --prof in NODE_OPTIONS).
  Ctrl-C, SIGTERM and SIGHUP go on to COMMAND; a Node process that would die of one exits
  instead (with 128 + the signal's number) so that its profile is written, unless the program
  handles the signal itself. When COMMAND ends, the profiles are kept (-o), `cpuprof top` of
  them all is printed, with each one's total, and cpuprof exits with COMMAND's exit status.

A RUNNING PROCESS (--pid):
  SIGUSR1 opens its inspector on 127.0.0.1 (port 9229, or the port it was started with), as Node
  documents; cpuprof profiles it (and its worker threads) over the DevTools protocol for
  --duration or until Ctrl-C, then disables the profiler and closes the inspector again if it
  opened it. While attached, anyone on this machine can connect to that port: a debugger has
  full control of the process. --url attaches to an inspector that is already open.

EXAMPLES:
  cpuprof record -- node app.js
  cpuprof record -o profiles -- npm test
  cpuprof record --duration 30s --report load.html -- node server.js
  cpuprof record --prof -- node app.js             # a V8 tick log instead
  cpuprof record --prof --jit -- node app.js       # with deopts, for cpuprof jit
  cpuprof record --pid 4242 --duration 10s -o live.cpuprofile
  cpuprof record --url ws://127.0.0.1:9229/0f2c… --duration 5s";

#[derive(Debug, Args)]
#[allow(clippy::struct_excessive_bools)]
pub(crate) struct RecordArgs {
    /// The command to run and profile, after `--`
    #[arg(value_name = "COMMAND", last = true, required_unless_present_any = ["pid", "url"], conflicts_with_all = ["pid", "url"])]
    pub(crate) command: Vec<std::ffi::OsString>,

    /// Attach to this running Node process instead
    #[arg(long, value_name = "PID")]
    pub(crate) pid: Option<u32>,

    /// With --pid: the port its inspector opens on (default: the one it was started with, else 9229)
    #[arg(long, value_name = "PORT", requires = "pid")]
    pub(crate) inspect_port: Option<u16>,

    /// Attach to an inspector that is already open (ws://HOST:PORT/ID or http://HOST:PORT); any host but loopback only when named here
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,

    /// Sampling interval
    #[arg(long, value_name = "TIME", default_value = "1ms", allow_hyphen_values = true)]
    pub(crate) interval: String,

    /// Stop after this long. With --pid: profiling stops (else at Ctrl-C). A COMMAND gets SIGINT, as from Ctrl-C (ending of it counts as success), and is killed 10 s later if still running
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub(crate) duration: Option<String>,

    /// Record a V8 tick log (node --prof) instead of .cpuprofile files; COMMAND must be node
    #[arg(long, conflicts_with_all = ["pid", "url"])]
    pub(crate) prof: bool,

    /// With --prof: V8's deoptimizations in the log too (node --log-deopt), for `cpuprof jit`
    #[arg(long, requires = "prof")]
    pub(crate) jit: bool,

    /// Keep the profiles in DIR (made if needed), or in FILE.cpuprofile (several: merged, as `cpuprof merge` does). Default: cpuprof-record-PID
    #[arg(short, long, value_name = "DIR|FILE")]
    pub(crate) output: Option<PathBuf>,

    /// Also write a flame graph of them all (as `cpuprof flamegraph`)
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) flamegraph: Option<PathBuf>,

    /// Also write the HTML report of them all (as `cpuprof report`)
    #[arg(long, value_name = "FILE.html")]
    pub(crate) report: Option<PathBuf>,

    /// Print no `top` when done
    #[arg(long, short)]
    pub(crate) quiet: bool,

    #[command(flatten)]
    pub(crate) rows: RowsArgs,

    /// Format of the `top` printed when done
    #[arg(long, value_enum, default_value_t = ReportFormatArg::Table)]
    pub(crate) format: ReportFormatArg,
}

const REPORT_HELP: &str = "\
THE PAGE:
  One HTML file that opens from disk, offline (its Content-Security-Policy allows no network
  access): the profile's facts and category split, the timeline (CPU by category, event-loop
  blocks marked; drag across it and every view follows that stretch of time), the top table
  (by function, file or package; sort, filter), a flame graph (zoom, search, icicle), and for
  a function its callers, callees and lines. Its numbers are `top`'s, `callers`' and
  `callees'`: for a dragged range, those of `--from`/`--to` at the range's ends. A large profile's
  light call paths (under a share chosen to keep the page to a few MB) are kept under
  `(pruned)` by function: self times stay exact, the header says how much was pruned.

EXAMPLES:
  cpuprof report app.cpuprofile                 # writes app.report.html beside it
  cpuprof report app.cpuprofile -o /tmp/app.html
  cpuprof report isolate-0x5a1e2c0-4242-v8.log --from 2s --hide '^node:'
  cpuprof diff base.cpuprofile new.cpuprofile --report diff.html";

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Profile to read (as for `top`), or - for stdin (with -o)
    #[arg(value_name = "FILE")]
    pub(crate) input: PathBuf,

    /// Write the page to FILE (- = stdout; written atomically). Default: NAME.report.html beside the input
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    /// What a sample weighs
    #[arg(long, value_enum, default_value_t = WeightArg::Time)]
    pub(crate) weight: WeightArg,

    /// List event-loop blocks at least this long
    #[arg(long, value_name = "TIME", default_value = cpuprof_analysis::defaults::REPORT_MIN_BLOCK)]
    pub(crate) min_block: String,

    /// Read scripts the profile names below OLD from below NEW, for the functions' annotated
    /// source (a profile recorded elsewhere); may be repeated
    #[arg(long, value_name = "OLD=NEW")]
    pub(crate) source_root: Vec<String>,

    #[command(flatten)]
    pub(crate) filter: FilterArgs,

    #[command(flatten)]
    pub(crate) window: WindowArgs,

    #[command(flatten)]
    pub(crate) reading: InputArgs,
}

const TIMELINE_HELP: &str = "\
BUCKETS:
  A sample belongs to the bucket its time falls in (as to a --from/--to window), so the buckets
  add up to the whole profile, idle included. Default bucket: the smallest of 1, 2, 5 × 10^k ms
  that cuts the recording into at most 50. Each bucket: busy (not idle), GC, idle and
  (program) time, the categories (app, dependencies, node, native, gc, idle, program) and the
  function with the most self time.

PHASES:
  Each bucket has a character: idle when it is mostly idle, else its entry (the outermost code
  frame of most of its time: the main module, a timer, an I/O callback, …). Runs of buckets
  shorter than 1/20 of the buckets (at least 2) join their longer neighbour; what is left are the
  phases: `startup` (the first), `steady` (the longest of the others), `phase N`. `top --phase
  steady` (or --phase 2) takes a phase as its window, on every command.

EXAMPLES:
  cpuprof timeline app.cpuprofile
  cpuprof timeline app.cpuprofile --bucket 100ms --format table
  cpuprof timeline isolate-0x5a1e2c0-4242-v8.log --buckets 40 --format json
  cpuprof top app.cpuprofile --phase steady";

const BLOCKS_HELP: &str = "\
BLOCKS:
  A block is a stretch of samples without an idle one ((idle) in a .cpuprofile or trace, the
  IDLE VM state in a tick log): the event loop did not get to wait. Consecutive samples more than
  10 sampling intervals apart have a gap between them (nothing is known of it): a gap ends a
  block. For each block: when, how long, the entry that started it (the outermost code frame:
  timer, I/O callback, microtask queue, module load), the functions with the most self time in
  it, and the deepest frame more than half of its time was spent under (`blocked in`). A
  recording without idle samples (a batch job) is said to be one.

EXAMPLES:
  cpuprof blocks app.cpuprofile
  cpuprof blocks app.cpuprofile --min 200ms --format json
  cpuprof blocks isolate-0x5a1e2c0-4242-v8.log --from 10s";

#[derive(Debug, Args)]
pub(crate) struct TimelineArgs {
    /// Profile to read (.cpuprofile, tick log or Chrome trace: formats with sample times), or - for stdin
    #[arg(value_name = "FILE")]
    pub(crate) input: PathBuf,

    /// The length of a bucket (100ms, 1s)
    #[arg(long, value_name = "TIME", conflicts_with = "buckets")]
    pub(crate) bucket: Option<String>,

    /// Cut the recording into N buckets
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(crate) buckets: Option<u32>,

    /// What a sample weighs
    #[arg(long, value_enum, default_value_t = WeightArg::Time)]
    pub(crate) weight: WeightArg,

    #[command(flatten)]
    pub(crate) window: WindowArgs,

    #[command(flatten)]
    pub(crate) reading: InputArgs,

    /// Output format: the chart, the chart and a table of buckets, or data
    #[arg(long, value_enum, default_value_t = TimelineFormatArg::Chart)]
    pub(crate) format: TimelineFormatArg,

    /// Write to FILE instead of stdout (- = stdout); written atomically
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

/// `timeline --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum TimelineFormatArg {
    /// A line of Unicode blocks per category over a time axis, and the phases
    Chart,
    /// The chart, then a table of the buckets
    Table,
    /// JSON (a documented, stable schema)
    Json,
    /// CSV, one row per bucket
    Csv,
    /// Markdown tables of the phases and buckets
    Markdown,
}

#[derive(Debug, Args)]
pub(crate) struct BlocksArgs {
    /// Profile to read (.cpuprofile, tick log or Chrome trace: formats with sample times), or - for stdin
    #[arg(value_name = "FILE")]
    pub(crate) input: PathBuf,

    /// Report blocks at least this long
    #[arg(long, value_name = "TIME", default_value = cpuprof_analysis::defaults::MIN_BLOCK)]
    pub(crate) min: String,

    #[command(flatten)]
    pub(crate) rows: RowsArgs,

    #[command(flatten)]
    pub(crate) window: WindowArgs,

    #[command(flatten)]
    pub(crate) reading: InputArgs,

    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

const CONVERT_HELP: &str = "\
TARGET:
  From -o's extension (.pb.gz, .pb, .pprof, .prof: pprof; .cpuprofile: V8 .cpuprofile;
  .folded, .collapsed, .txt: folded stacks) or --output-format. pprof is written gzipped (unless
  --uncompressed) with the sample types samples/count and cpu/nanoseconds (wall/nanoseconds
  when the profile has idle time). A .cpuprofile opens in DevTools and speedscope: it keeps
  the input's sample order where it has one (.cpuprofile, trace, tick log), and DevTools'
  reading of it gives every stack the samples and time it has here. Folded stacks are
  weighted by sample counts. .cpuprofile and folded output is gzipped when the name ends
  in .gz.

EXAMPLES:
  cpuprof convert app.cpuprofile -o app.pb.gz && go tool pprof -top app.pb.gz
  cpuprof convert isolate-0x5a1e2c0-4242-v8.log -o app.pb.gz
  cpuprof convert trace.json --profile 0x1 -o main.folded
  cpuprof convert isolate-0x5a1e2c0-4242-v8.log -o app.cpuprofile # for DevTools
  cpuprof convert profile.pb.gz --sample-type wall -o - --output-format folded";

const MERGE_HELP: &str = "\
Totals of the result are the sums of the inputs' totals; equal functions and stacks become
one. Inputs are read in parallel and may be of different formats. Per-sample timestamps are
dropped (inputs come from different clocks).

EXAMPLES:
  cpuprof merge CPU.*.cpuprofile -o all.pb.gz
  cpuprof merge CPU.*.cpuprofile -o all.cpuprofile   # one profile for DevTools
  cpuprof merge run1.cpuprofile run2.cpuprofile run3.cpuprofile -o runs.folded";

#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// Input profile (`-` for stdin; gzip is undone)
    #[arg(value_name = "FILE")]
    pub(crate) input: PathBuf,

    #[command(flatten)]
    pub(crate) target: TargetArgs,

    #[command(flatten)]
    pub(crate) window: WindowArgs,

    #[command(flatten)]
    pub(crate) reading: InputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// Input profiles
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub(crate) inputs: Vec<PathBuf>,

    #[command(flatten)]
    pub(crate) target: TargetArgs,

    #[command(flatten)]
    pub(crate) window: WindowArgs,

    #[command(flatten)]
    pub(crate) reading: InputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct TargetArgs {
    /// Where to write (`-` for stdout, with --output-format)
    #[arg(short, long, value_name = "FILE", required = true)]
    pub(crate) output: PathBuf,

    /// The format to write (default: from the output's extension)
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(crate) output_format: Option<TargetFormat>,

    /// Write plain bytes even where the format or name would be gzipped
    #[arg(long)]
    pub(crate) uncompressed: bool,
}

/// What `convert` and `merge` write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum TargetFormat {
    /// pprof profile.proto
    Pprof,
    /// V8 .cpuprofile JSON (DevTools, speedscope)
    Cpuprofile,
    /// Folded stacks, as `cpuprof collapse` writes them
    Folded,
}

const DIFF_HELP: &str = "\
MATCHING:
  Functions match by name (whatever their V8 tier) and file; same-named functions of one
  file pair up by nearest start line, so moved code still matches. The rest is new or gone.
  Scripts of two checkouts (/ci/base/src/app.js, /ci/pr/src/app.js; file:// urls or paths)
  pair by the longest path ending that no other script on either side has; --base-root and
  --new-root name the checkouts when that is ambiguous. With --source-maps, functions match by
  their original names and sources, so a minifier renaming them differently does not matter.

BLOCKS:
  --blocks (implied by --fail-on block:… and by the windows of one profile) compares the event
  loop's blocks at least 50 ms long (`cpuprof blocks`): the 95th percentile and the longest per
  run. With 2+ runs per side the longest blocks are tested with Welch's t; with one run on a side
  a change counts when it is larger than two sampling intervals (the precision of a block's
  ends). block:+50ms trips when the longest block grew by 50 ms or more and counts.

NOISE:
  Per function, an exact binomial test on sample counts; with 2+ runs per side, a
  quasi-binomial test (the binomial's z scaled by the run-to-run spread, with Student's t);
  the false discovery rate over all functions held at 5% (Benjamini-Hochberg). Changes that are not significant are `unchanged` and never trip
  the gate. Folded stacks are read as sample counts; read as times (--folded-weight time) they
  cannot be tested, and --fail-on is refused.

PHASES OF ONE PROFILE:
  With --base-window/--new-window (or --base-phase/--new-phase) and one FILE, the two sides are
  two windows of it, each one run; their times are scaled to one second of window, so windows
  of different lengths compare as rates.

EXPLAIN:
  --explain [N]: for the N first changed functions, the callers whose part of the function's
  total changed most and the callees whose totals under it changed most (per run on each side,
  with a p-value), and time that moved between a function's self time and a callee that
  vanished on one side: V8 inlined it (its time now counts as the caller's own).

EXIT STATUS:
  0 no regression crossed a --fail-on threshold · 1 bad input (a side without samples
  included) · 2 usage · 3 a significant regression crossed a --fail-on threshold (the last line on stderr
  names each one, its change and the threshold) · 130/143/129 interrupted (SIGINT, SIGTERM,
  SIGHUP; no output is left half-written).

EXAMPLES:
  cpuprof diff before.cpuprofile after.cpuprofile
  cpuprof diff --base base/*.cpuprofile --new pr/*.cpuprofile
  cpuprof diff before.cpuprofile after.cpuprofile --format markdown -o diff.md
  cpuprof diff --base base/*.cpuprofile --new pr/*.cpuprofile --explain
  cpuprof diff --base base/*.cpuprofile --new pr/*.cpuprofile --report diff.html
  cpuprof diff --base base/*.cpuprofile --new pr/*.cpuprofile \\
      --fail-on self:+5% --format github # in GitHub Actions
  cpuprof diff before.cpuprofile after.cpuprofile --by line --focus priceOrder
  cpuprof diff a.cpuprofile b.cpuprofile --fail-on self:+2pp \\
      --fail-on total:+20%
  cpuprof diff base/app.cpuprofile pr/app.cpuprofile \\
      --base-root /ci/base --new-root /ci/pr
  cpuprof diff mon.cpuprofile tue.cpuprofile --normalize share
  cpuprof diff v1.cpuprofile v2.cpuprofile \\
      --base-source-map-dir v1/dist --new-source-map-dir v2/dist
  cpuprof diff app.cpuprofile --base-window 0s..2s --new-window 10s..12s
  cpuprof diff app.cpuprofile --base-phase startup --new-phase steady";

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// BASE and NEW profiles (one run each); or use --base/--new
    #[arg(value_name = "FILE", num_args = 0..=2)]
    pub(crate) pair: Vec<PathBuf>,

    /// Base runs (several runs of the same work)
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "pair")]
    pub(crate) base: Vec<PathBuf>,

    /// New runs
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "pair")]
    pub(crate) new: Vec<PathBuf>,

    /// Compare time per run (fixed work: benchmarks, tests) or share of busy time (fixed duration)
    #[arg(long, value_enum, default_value_t = NormalizeArg::Time)]
    pub(crate) normalize: NormalizeArg,

    /// Rank and decide by self or total time
    #[arg(long, value_enum, default_value_t = MetricArg::SelfTime)]
    pub(crate) sort: MetricArg,

    /// What a row stands for: a function, or a line of one (V8's line ticks: where inside a
    /// function the time moved; lines match at the same number)
    #[arg(long, value_enum, default_value_t = DiffBy::Function)]
    pub(crate) by: DiffBy,

    #[command(flatten)]
    pub(crate) rows: RowsArgs,

    /// Count a change smaller than this as unchanged: a time per run (2ms), share points (0.5pp)
    /// with --normalize share, or samples per run (5) for profiles without times
    #[arg(long, value_name = "DELTA")]
    pub(crate) min_delta: Option<String>,

    /// For the N first changed functions (default 5), say where the change came from: the callers
    /// and callees whose part changed most, and time that moved between a function and its callee
    /// (V8 inlining)
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "5", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) explain: Option<u64>,

    /// Markdown: each location a link to the source, from an http(s) TEMPLATE with {path} (the
    /// file below --new-root/--base-root, else below the current directory) and {line}, e.g.
    /// `https://github.com/o/r/blob/$GITHUB_SHA/{path}#L{line}`
    #[arg(long, value_name = "TEMPLATE")]
    pub(crate) link: Option<String>,

    /// Also write a differential flame graph (red grew, blue shrank; shaped like NEW) to SVG
    #[arg(long, value_name = "SVG")]
    pub(crate) flamegraph: Option<PathBuf>,

    /// Also write the comparison as one self-contained HTML page: the verdicts (sortable, filterable),
    /// each function's runs side by side, where its change came from, and the differential flame graph
    #[arg(long, value_name = "HTML")]
    pub(crate) report: Option<PathBuf>,

    /// Exit 3 when a significant regression crosses METRIC:THRESHOLD (self or total; +2pp, +20%, +5ms;
    /// block:+50ms: the longest event-loop block); repeatable
    #[arg(long, value_name = "METRIC:THRESHOLD")]
    pub(crate) fail_on: Vec<String>,

    /// Also compare the event-loop blocks (the 95th percentile and the longest of each side; see
    /// `cpuprof blocks`): reads the samples' times, which takes longer on large profiles
    #[arg(long)]
    pub(crate) blocks: bool,

    /// Source maps of the base build: scripts and maps in DIR (as --source-map-dir, for the base
    /// profiles only), for two builds recorded at the same path; implies --source-maps
    #[arg(long, value_name = "DIR")]
    pub(crate) base_source_map_dir: Option<PathBuf>,

    /// Source maps of the new build, as --base-source-map-dir; implies --source-maps
    #[arg(long, value_name = "DIR")]
    pub(crate) new_source_map_dir: Option<PathBuf>,

    /// The base build's checkout folder as the profiles name it (/ci/base, file:///ci/base):
    /// its scripts are matched by their path below it
    #[arg(long, value_name = "DIR")]
    pub(crate) base_root: Option<String>,

    /// The new build's checkout folder, as --base-root
    #[arg(long, value_name = "DIR")]
    pub(crate) new_root: Option<String>,

    /// Pair a base script with the new script it became (renamed): OLD=NEW, each a path or its
    /// ending (bench-v1.js=bench-v2.js); repeatable
    #[arg(long, value_name = "OLD=NEW")]
    pub(crate) map: Vec<String>,

    #[command(flatten)]
    pub(crate) filter: FilterArgs,

    /// The same window of every run, each on its own recording
    #[command(flatten)]
    pub(crate) window: WindowArgs,

    /// Compare two windows of one profile: the base side's (FROM..TO, either open: 0s..2s, 10s..,
    /// ..50%); times are then per second of window
    #[arg(long, value_name = "FROM..TO", allow_hyphen_values = true, conflicts_with = "base_phase")]
    pub(crate) base_window: Option<String>,

    /// The new side's window of the profile (as --base-window)
    #[arg(long, value_name = "FROM..TO", allow_hyphen_values = true, conflicts_with = "new_phase")]
    pub(crate) new_window: Option<String>,

    /// Compare two phases of one profile (`cpuprof timeline` lists them): the base side's, by number
    /// or label (1, startup)
    #[arg(long, value_name = "PHASE")]
    pub(crate) base_phase: Option<String>,

    /// The new side's phase (as --base-phase: 2, steady)
    #[arg(long, value_name = "PHASE")]
    pub(crate) new_phase: Option<String>,

    #[command(flatten)]
    pub(crate) reading: InputArgs,

    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum DiffBy {
    /// Function: name and file (same-named functions of a file paired by nearest line)
    Function,
    /// Source line within a function (.cpuprofile positionTicks; total equals self)
    Line,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum NormalizeArg {
    /// Time per run (the default)
    Time,
    /// Share of busy time
    Share,
}

const COLLAPSE_HELP: &str = "\
FORMAT:
  One line per distinct stack, callers first: `main /app/main.js:3;work /app/main.js:9 1234`.
  Labels are `name file:line` (JavaScript; a script path with a space in it is written as its
  file:// url, so that it reads back whole), the bare name for native code and (program),
  (garbage collector), (idle); `;` inside a name becomes `；` and line breaks `\\n`, so one
  frame stays one frame, and a name ending in ` <number>` keeps that space as U+00A0, so no
  reader takes the number for a count. Weights are sample counts (the default, as every folded
  reader expects), or ns with --weight time (read them back with --folded-weight time: times
  carry no counts, so `diff` cannot test them). Lines are sorted.

EXAMPLES:
  cpuprof collapse app.cpuprofile -o app.folded
  cpuprof collapse app.cpuprofile --weight time -o app-ns.folded
  cpuprof collapse app.cpuprofile --by package | inferno-flamegraph > pkg.svg
  cpuprof collapse isolate-0x5a1e2c0-4242-v8.log --from 2s --to 5s";

const FLAMEGRAPH_HELP: &str = "\
COLOURS:
  orange: your code · blue: node_modules packages · green: node internals (node:) ·
  yellow: native code (V8 builtins, C++, regexps) · red: garbage collection ·
  grey: (program), (idle), unaccounted. Stable from run to run.

In the SVG: click a frame to zoom, Ctrl-F (or the Search button) to highlight matches.
Without -o on a terminal, the SVG is written beside the input (app.cpuprofile
→ app.svg); piped, or with -o -, to stdout.

EXAMPLES:
  cpuprof flamegraph app.cpuprofile -o flame.svg
  cpuprof flamegraph app.cpuprofile -o icicle.svg --inverted --focus handle
  cpuprof flamegraph app.cpuprofile -o callers.svg --reverse --by package
  cpuprof flamegraph isolate-0x5a1e2c0-4242-v8.log -o flame.svg --from 1s";

/// Folding options shared by `collapse` and `flamegraph`.
#[derive(Debug, Args)]
pub(crate) struct FoldArgs {
    /// Profile to read (.cpuprofile, tick log, Chrome trace, pprof, folded stacks, perf script…; gzip is fine; see --input-format), or - for stdin
    #[arg(value_name = "FILE")]
    pub(crate) input: PathBuf,

    /// What a frame stands for
    #[arg(long, value_enum, default_value_t = FoldBy::Function)]
    pub(crate) by: FoldBy,

    /// What a sample weighs [default: samples for collapse (what folded readers expect); time for flamegraph, ticks for tick logs]
    #[arg(long, value_enum)]
    pub(crate) weight: Option<WeightArg>,

    #[command(flatten)]
    pub(crate) filter: FilterArgs,

    /// Fold recursion, direct and indirect, into the function's first frame (a;f;b;f;c → a;f;c)
    #[arg(long)]
    pub(crate) collapse_recursion: bool,

    #[command(flatten)]
    pub(crate) window: WindowArgs,

    #[command(flatten)]
    pub(crate) reading: InputArgs,

    /// Write to FILE instead of stdout (- = stdout); written atomically
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct CollapseArgs {
    #[command(flatten)]
    pub(crate) fold: FoldArgs,
}

#[derive(Debug, Args)]
pub(crate) struct FlamegraphArgs {
    #[command(flatten)]
    pub(crate) fold: FoldArgs,

    /// Title [default: the file name, duration and sample count]
    #[arg(long)]
    pub(crate) title: Option<String>,

    /// Width of the image in pixels
    #[arg(long, value_name = "PIXELS", default_value_t = cpuprof_render::defaults::FLAME_WIDTH as u64, value_parser = clap::value_parser!(u64).range(100..=100_000))]
    pub(crate) width: u64,

    /// Leave out frames narrower than this percentage of the whole graph
    #[arg(long, value_name = "PERCENT", default_value_t = cpuprof_render::defaults::FLAME_MIN_WIDTH, value_parser = percent)]
    pub(crate) min_width: f64,

    /// An icicle graph: roots at the top, growing down
    #[arg(long)]
    pub(crate) inverted: bool,

    /// Merge stacks from the leaf: each function's callers above it (bottom-up)
    #[arg(long)]
    pub(crate) reverse: bool,

    /// Indent the SVG's XML (bigger, but diffable)
    #[arg(long)]
    pub(crate) pretty_xml: bool,
}

/// A percentage from 0 to 100.
fn percent(text: &str) -> Result<f64, String> {
    match cpuprof_model::parse_decimal(text) {
        Some(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("{text}: expected a percentage from 0 to 100")),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum FoldBy {
    /// Function: `name file:line`
    Function,
    /// Script file (url); consecutive frames in one file merge
    File,
    /// npm package; (node) for node internals, (app) for the rest; consecutive frames merge
    Package,
}

const TOP_HELP: &str = "\
TIME ATTRIBUTION:
  .cpuprofile samples are timed as Chrome DevTools' Performance panel does: sample i lasts
  until sample i+1 (samples stable-sorted by time), the last one gets the mean interval,
  and a lone (program) sample between two samples of the same top-level frame is given to
  its neighbour. self = time with the row on top of the stack; total = time with the row
  anywhere in the stack, counted once per sample however deep the recursion.

EXAMPLES:
  cpuprof top app.cpuprofile
  cpuprof top app.cpuprofile -n 50 --sort total
  cpuprof top app.cpuprofile --by package --include-idle
  cpuprof top app.cpuprofile --focus 'handleRequest' --hide '^node:'
  cpuprof top app.cpuprofile.gz --format markdown -o top.md
  cpuprof top isolate-0x5a1e2c0-4242-v8.log --split-tiers
  cpuprof top isolate-0x5a1e2c0-4242-v8.log --symbols /mnt/prod-root
  cpuprof top CPU.20251130.cpuprofile --source-maps      # original TS names
  cpuprof top prod.cpuprofile --source-map-dir ./dist    # recorded elsewhere

TICK LOGS:
  One tick is one sample, weighing the sampling interval (profiler,begin). Frame 0 is the pc,
  or the C++ callback V8 was in; bytecode-handler frames are skipped, so interpreted time
  lands on the JavaScript function. C++ is named from the ELF symbol tables of the binaries
  the log names (node --prof-process mis-places them on node 20); a tick nothing covers is
  (unaccounted). The summary line counts ticks as node --prof-process does.";

#[derive(Debug, Args)]
pub(crate) struct TopArgs {
    /// Profile to read (.cpuprofile, tick log, Chrome trace, pprof, folded stacks, perf script…; gzip is fine; see --input-format), or - for stdin; several are merged (as `cpuprof merge` merges them), each one's total shown
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub(crate) inputs: Vec<PathBuf>,

    #[command(flatten)]
    pub(crate) rows: RowsArgs,

    /// What a row stands for
    #[arg(long, value_enum, default_value_t = By::Function)]
    pub(crate) by: By,

    /// Rank by self time (on top of the stack) or total time (anywhere in the stack)
    #[arg(long, value_enum, default_value_t = MetricArg::SelfTime)]
    pub(crate) sort: MetricArg,

    /// What a sample weighs
    #[arg(long, value_enum, default_value_t = WeightArg::Time)]
    pub(crate) weight: WeightArg,

    #[command(flatten)]
    pub(crate) filter: FilterArgs,

    #[command(flatten)]
    pub(crate) window: WindowArgs,

    #[command(flatten)]
    pub(crate) reading: InputArgs,

    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

const TREE_HELP: &str = "\
NUMBERS:
  Functions are keyed as `top` keys them (name, file, line, column) and weighed as `top` weighs
  them (percentages of the same total). Top-down: a node's self is the time its stack ends
  there, its total the time through it. Bottom-up: each function's self and total are its
  `top` numbers; under it, the paths its time came through, read up from its outermost frame
  in each stack (recursion counted once). Nodes under --min-percent of the total are summed
  into `… N more`; chains of only children are one line `a → b → c` (not in JSON).

EXAMPLES:
  cpuprof tree app.cpuprofile
  cpuprof tree app.cpuprofile --bottom-up --min-percent 2
  cpuprof tree app.cpuprofile --focus handleRequest --max-depth 6
  cpuprof tree app.cpuprofile --collapse-recursion --format json -o tree.json
  cpuprof tree isolate-0x5a1e2c0-4242-v8.log --from 2s --to 5s";

/// The PATTERN section of `callers`, `callees` and `explain` (a macro: `concat!` takes literals).
macro_rules! pattern_help {
    () => {
        "\
PATTERN:
  A function's name as `top` shows it (`handleRequest`, `(anonymous)`); or name@file:line
  (`render@views/page.js:40`, the file a suffix of its path or url, :line optional); or a
  regular expression searched in names and files. When several functions match, they are
  listed, one a line, each with the name@file:line:column that names it alone (exit 2): paste
  it, or PATTERN#N for the N-th."
    };
}

const CALLERS_HELP: &str = concat!(
    pattern_help!(),
    "\n\nNUMBERS:
  For each caller, the part of the function's total that came through it, read from the
  function's outermost frame in each stack (recursion counted once): the parts add up to its
  total; `(root)` is the part where nothing called it. --depth N goes N callers up.

EXAMPLES:
  cpuprof callers priceOrder app.cpuprofile
  cpuprof callers 'render@views/page.js:40' app.cpuprofile --depth 3
  cpuprof callers '^JSON\\.' app.cpuprofile --format json"
);

const CALLEES_HELP: &str = concat!(
    pattern_help!(),
    "\n\nNUMBERS:
  Each callee's total under the function, read from its innermost frame in each stack: the
  callees' totals and the function's own time (self) add up to its total. --depth N goes N
  calls down.

EXAMPLES:
  cpuprof callees handleRequest app.cpuprofile
  cpuprof callees handleRequest app.cpuprofile --depth 4
  cpuprof callees processBatch app.cpuprofile --format markdown -o callees.md"
);

const EXPLAIN_HELP: &str = concat!(
    pattern_help!(),
    "\n\nEXAMPLES:
  cpuprof explain priceOrder app.cpuprofile
  cpuprof explain handleRequest app.cpuprofile --depth 2 --format json"
);

const ANNOTATE_HELP: &str = concat!(
    pattern_help!(),
    " Here, of several matches the hottest is annotated, and a warning names the others.

NUMBERS:
  Each line's self: the samples taken on it in the function itself (a .cpuprofile's
  positionTicks split the function's self time over its lines, as DevTools' Sources panel
  does). fn% is the line's share of the function's self. Where the profile records the line
  of every frame (pprof), each line also has a total: the samples with it anywhere on the
  stack, the functions it called included. The hottest lines are marked ▶.

SOURCE:
  The script is read from disk at the path the profile names (--source-root OLD=NEW for a
  profile recorded elsewhere). Without it, the lines' numbers and times are shown alone, and a
  warning says why; a file that no longer fits the profile's lines is said, not shown.

EXAMPLES:
  cpuprof annotate priceOrder app.cpuprofile
  cpuprof annotate 'render@views/page.js' app.cpuprofile --full
  cpuprof annotate --top 5 app.cpuprofile
  cpuprof annotate handleRequest app.cpuprofile --source-root /srv/app=./ --format json"
);

const JIT_HELP: &str = concat!(
    "PATTERN (optional): one function, as for callers. ",
    pattern_help!(),
    " Of several matches the hottest is shown, and a warning names the others.

DATA:
  A V8 tick log has it all: each code object V8 made (code-creation: its tier, when, and from
  code-source-info the functions inlined into it) and, when node ran with --log-deopt, each
  deoptimization (code-deopt: reason, kind, source position with its inlining chain). Record
  one with `cpuprof record --prof --jit -- node app.js` (or node --prof --log-deopt app.js).
  A .cpuprofile has none of it, only a function's deoptReason where V8 gave one.

NUMBERS:
  self by tier: the function's self time by the tier of the code it ran in: interpreted
  (Ignition, ~), sparkplug (^), maglev (+), turbofan (*); an inlined function's time is in
  its inliner's tier. After a deopt, the function's self time in tiers below the code that
  deoptimized, until V8 made optimized code of it again, is the deopt's cost. A function whose
  deopts cost less than 1% of the profile is noise, not a finding.

EXAMPLES:
  cpuprof jit isolate-0x1-v8.log
  cpuprof jit isolate-0x1-v8.log priceOrder
  cpuprof jit isolate-0x1-v8.log -n 5 --format json"
);

#[derive(Debug, Args)]
pub(crate) struct JitArgs {
    /// Profile to read (a tick log; as for `top`), or - for stdin
    #[arg(value_name = "FILE")]
    pub(crate) input: PathBuf,

    /// One function (its name, name@file:line, its fn: handle from top, or a regular expression)
    #[arg(value_name = "PATTERN")]
    pub(crate) pattern: Option<String>,

    /// Show the N hottest JavaScript functions (by self time), without PATTERN; functions V8 deoptimized with 1% or more of the profile in total follow
    #[arg(short = 'n', long = "limit", value_name = "N", default_value_t = cpuprof_analysis::defaults::JIT_FUNCTIONS, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) limit: u64,

    #[command(flatten)]
    pub(crate) view: ViewArgs,
}

/// What the call-tree views (`tree`, `callers`, `callees`, `explain`) share: the samples, their
/// weight and the output.
#[derive(Debug, Args)]
pub(crate) struct ViewArgs {
    /// Fold recursion, direct and indirect, into the function's first frame (a;f;b;f;c → a;f;c)
    #[arg(long)]
    pub(crate) collapse_recursion: bool,

    /// What a sample weighs
    #[arg(long, value_enum, default_value_t = WeightArg::Time)]
    pub(crate) weight: WeightArg,

    #[command(flatten)]
    pub(crate) filter: FilterArgs,

    #[command(flatten)]
    pub(crate) window: WindowArgs,

    #[command(flatten)]
    pub(crate) reading: InputArgs,

    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct TreeArgs {
    /// Profile to read (.cpuprofile, tick log, Chrome trace, pprof, folded stacks, perf script…; gzip is fine; see --input-format), or - for stdin
    #[arg(value_name = "FILE")]
    pub(crate) input: PathBuf,

    /// The inverted tree: functions by self time, the paths that call them under each
    #[arg(long)]
    pub(crate) bottom_up: bool,

    /// Leave out nodes under this percentage of the total (summed into `… N more`)
    #[arg(long, value_name = "PERCENT", default_value_t = cpuprof_analysis::defaults::TREE_MIN_PERCENT, value_parser = percent)]
    pub(crate) min_percent: f64,

    /// Show at most N levels
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_depth: Option<u64>,

    /// One line per node, even for chains of only children (tables and Markdown)
    #[arg(long)]
    pub(crate) no_fold_chains: bool,

    #[command(flatten)]
    pub(crate) view: ViewArgs,
}

#[derive(Debug, Args)]
pub(crate) struct CallsArgs {
    /// The function: its name, name@file:line, or a regular expression
    #[arg(value_name = "PATTERN")]
    pub(crate) pattern: String,

    /// Profile to read (as for `top`), or - for stdin
    #[arg(value_name = "FILE")]
    pub(crate) input: PathBuf,

    /// Levels of callers (or callees) to show
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) depth: u64,

    #[command(flatten)]
    pub(crate) view: ViewArgs,
}

#[derive(Debug, Args)]
pub(crate) struct AnnotateArgs {
    /// The function (its name, name@file:line, its fn: handle from top, or a regular
    /// expression), then the profile to read (as for `top`, or - for stdin); with --top, the
    /// profile only
    #[arg(value_name = "PATTERN FILE", num_args = 1..=2, required = true)]
    pub(crate) args: Vec<PathBuf>,

    /// Annotate the N functions with the most self time, one after another, instead of one
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) top: Option<u64>,

    /// Lines shown around each line with samples; longer runs of other lines are folded
    #[arg(long, value_name = "N", default_value_t = cpuprof_analysis::defaults::ANNOTATE_CONTEXT)]
    pub(crate) context: u64,

    /// Show every line of the function: fold none
    #[arg(long)]
    pub(crate) full: bool,

    /// Read scripts the profile names below OLD from below NEW (a profile recorded on another
    /// machine, in a container or another checkout); may be repeated
    #[arg(long, value_name = "OLD=NEW")]
    pub(crate) source_root: Vec<String>,

    #[command(flatten)]
    pub(crate) view: ViewArgs,
}

/// How many rows a report shows.
#[derive(Debug, Args)]
pub(crate) struct RowsArgs {
    /// Show the N first rows
    #[arg(short = 'n', long = "limit", value_name = "N", default_value_t = cpuprof_analysis::defaults::ROWS, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) limit: u64,

    /// Show every row (overrides -n)
    #[arg(long)]
    pub(crate) all: bool,
}

/// Which samples count.
#[derive(Debug, Default, Args)]
pub(crate) struct FilterArgs {
    /// Count (idle) samples (the event loop waiting)
    #[arg(long)]
    pub(crate) include_idle: bool,

    /// Keep only samples with a function in their stack whose name or file matches REGEX
    #[arg(long, value_name = "REGEX")]
    pub(crate) focus: Option<String>,

    /// Drop samples with a function in their stack whose name or file matches REGEX
    #[arg(long, value_name = "REGEX")]
    pub(crate) ignore: Option<String>,

    /// Take the frames of functions whose name or file matches REGEX out of every stack, keeping
    /// their samples on their callers (pprof's -hide; applied before --focus and --ignore)
    #[arg(long, value_name = "REGEX")]
    pub(crate) hide: Option<String>,
}

/// A time window, for profiles whose samples have times (.cpuprofile, tick logs).
#[derive(Debug, Default, Args)]
pub(crate) struct WindowArgs {
    /// Only samples taken at or after TIME into the recording (1.5s, 250ms, 800us, 2min, 1h; -2s: before
    /// its end; 90%: a share of its length)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub(crate) from: Option<String>,

    /// Only samples taken before TIME into the recording (as --from)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub(crate) to: Option<String>,

    /// Only samples from the first with function A on its stack to the last with B (patterns as
    /// for `callers`: a name, name@file:line or a regex)
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with_all = ["from", "to", "phase"])]
    pub(crate) between: Vec<String>,

    /// Only the samples of one phase of the timeline (`cpuprof timeline` lists them): its number
    /// (1, 2, …) or label (startup, steady)
    #[arg(long, value_name = "PHASE", conflicts_with_all = ["from", "to"])]
    pub(crate) phase: Option<String>,
}

/// How inputs are read: their format, and options of particular formats.
#[derive(Clone, Debug, Args)]
#[command(next_help_heading = "Input")]
pub(crate) struct InputArgs {
    /// The input's format; `auto` recognises it from the content (gzip is always undone)
    #[arg(long, value_enum, default_value_t = InputFormatArg::AUTO)]
    pub(crate) input_format: InputFormatArg,

    /// Folded stacks: what the numbers are: `samples` (counts, the default) or `time` (ns, as
    /// `collapse --weight time` writes them; `diff` cannot test times for significance)
    #[arg(long, value_enum, default_value_t = WeightArg::Samples, value_name = "WEIGHT", hide_possible_values = true)]
    pub(crate) folded_weight: WeightArg,

    /// Tick logs and perf script text: keep a function's V8 tiers apart: ~f (interpreted), ^f (Sparkplug), +f (Maglev), *f (TurboFan)
    #[arg(long)]
    pub(crate) split_tiers: bool,

    /// Tick logs: keep V8's view of TurboFan-inlined functions (their time in the function they
    /// were inlined into) instead of giving each its own frame under its caller
    #[arg(long)]
    pub(crate) no_unroll_inlined: bool,

    /// Tick logs: read the libraries the log names (/usr/bin/node, libc, …) under DIR instead of
    /// /, for logs recorded on another machine
    #[arg(long, value_name = "DIR")]
    pub(crate) symbols: Option<PathBuf>,

    /// pprof: the sample type to weigh by (cpu, wall, samples, …; default: the file's default
    /// type when it is a time, else cpu, wall or another time)
    #[arg(long, value_name = "TYPE")]
    pub(crate) sample_type: Option<String>,

    /// Chrome traces: the CPU profile to read, ID or PID:ID (default: the main thread's with the
    /// most samples; a warning lists them all)
    #[arg(long, value_name = "ID")]
    pub(crate) profile: Option<String>,

    /// Map JavaScript frames through source maps to their original function names, sources and
    /// lines (the script's sourceMappingURL comment, inline or a file, or a sibling .map)
    #[arg(long)]
    pub(crate) source_maps: bool,

    /// Look for the scripts and their source maps in DIR first, by file name (for profiles
    /// recorded on another machine or checkout); implies --source-maps
    #[arg(long, value_name = "DIR")]
    pub(crate) source_map_dir: Option<PathBuf>,

    /// Read at most SIZE bytes of an input, after gzip decompression (2GiB, 500MB, …; default
    /// 2GiB): a decompression bomb fails in bounded memory. Limits on single values (a
    /// .cpuprofile's nodes, a trace event, a folded line) grow with it
    #[arg(long, value_name = "SIZE", value_parser = cpuprof_app::input::parse_size)]
    pub(crate) max_input_size: Option<u64>,
}

impl InputArgs {
    /// The reading options these flags ask for.
    pub(crate) fn options(&self) -> ReadOptions {
        ReadOptions {
            input_format: cpuprof_app::input::InputFormat(self.input_format.0),
            folded_weight: self.folded_weight.into(),
            split_tiers: self.split_tiers,
            no_unroll_inlined: self.no_unroll_inlined,
            symbols: self.symbols.clone(),
            sample_type: self.sample_type.clone(),
            profile: self.profile.clone(),
            source_maps: self.source_maps,
            source_map_dir: self.source_map_dir.clone(),
            max_input_size: self.max_input_size,
            frame_lines: false,
            jit: false,
        }
    }
}

impl FilterArgs {
    /// The filter these flags ask for.
    pub(crate) fn options(&self) -> FilterOptions {
        FilterOptions {
            include_idle: self.include_idle,
            focus: self.focus.clone(),
            ignore: self.ignore.clone(),
            hide: self.hide.clone(),
        }
    }
}

impl WindowArgs {
    /// The window these flags ask for.
    pub(crate) fn options(&self) -> WindowOptions {
        WindowOptions {
            from: self.from.clone(),
            to: self.to.clone(),
            between: self.between.clone(),
            phase: self.phase.clone(),
        }
    }
}

impl From<WeightArg> for cpuprof_analysis::Weight {
    fn from(weight: WeightArg) -> Self {
        match weight {
            WeightArg::Time => Self::Time,
            WeightArg::Samples => Self::Samples,
        }
    }
}

impl From<By> for cpuprof_analysis::GroupBy {
    fn from(by: By) -> Self {
        match by {
            By::Function => Self::Function,
            By::File => Self::File,
            By::Package => Self::Package,
            By::Line => Self::Line,
            By::Category => Self::Category,
        }
    }
}

impl RowsArgs {
    /// The rows these flags ask for.
    pub(crate) fn options(&self) -> cpuprof_app::top::Rows {
        cpuprof_app::top::Rows { limit: self.limit, all: self.all }
    }
}

/// `--input-format`: `auto` or a format the parser reads. The formats and their names are
/// the library's ([`SourceFormat`]); clap's `ValueEnum` is implemented here, in the CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InputFormatArg(pub(crate) Option<SourceFormat>);

impl InputFormatArg {
    /// Recognise the format from the content.
    pub(crate) const AUTO: InputFormatArg = InputFormatArg(None);
    /// `auto`, then every format.
    const VARIANTS: [InputFormatArg; SourceFormat::ALL.len() + 1] = {
        let mut all = [InputFormatArg::AUTO; SourceFormat::ALL.len() + 1];
        let mut i = 0;
        while i < SourceFormat::ALL.len() {
            all[i + 1] = InputFormatArg(Some(SourceFormat::ALL[i]));
            i += 1;
        }
        all
    };
}

impl ValueEnum for InputFormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::VARIANTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(match self.0 {
            None => clap::builder::PossibleValue::new("auto").help("Recognise the format from the content"),
            Some(format) => clap::builder::PossibleValue::new(format.as_str()).help(format.description()),
        })
    }
}

#[derive(Debug, Args)]
pub(crate) struct OutputArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = ReportFormatArg::Table)]
    pub(crate) format: ReportFormatArg,

    /// Write to FILE instead of stdout (- = stdout); written atomically
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    /// Never cut names or locations to fit the terminal (tables fit $COLUMNS when it is set,
    /// else the terminal's width; a file or a pipe gets them whole)
    #[arg(long)]
    pub(crate) wide: bool,
}

/// `--format`: the report formats of [`Format`], named and described for the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReportFormatArg {
    /// An aligned text table with a summary line
    Table,
    /// JSON (a documented, stable schema)
    Json,
    /// CSV with a header row
    Csv,
    /// A Markdown table, e.g. for a pull-request comment
    Markdown,
    /// diff in GitHub Actions: annotations on stdout, the Markdown report appended to
    /// $GITHUB_STEP_SUMMARY (after the annotations when it is unset)
    Github,
    /// top: the profile in at most 40 lines (categories, top 10 by self time with their
    /// handles, the heaviest call paths, the longest event-loop block, warnings)
    Brief,
}

impl ReportFormatArg {
    /// What `top` renders (and `record` prints with it).
    pub(crate) const TOP: &'static [Self] = &[Self::Table, Self::Json, Self::Csv, Self::Markdown, Self::Brief];
    /// What `diff` renders.
    pub(crate) const DIFF: &'static [Self] = &[Self::Table, Self::Json, Self::Csv, Self::Markdown, Self::Github];
    /// What `tree`, `callers`, `callees`, `explain` and `blocks` render.
    pub(crate) const VIEWS: &'static [Self] = &[Self::Table, Self::Json, Self::Csv, Self::Markdown];
    /// What `jit` renders (its lists per function have no one table shape for CSV).
    pub(crate) const JIT: &'static [Self] = &[Self::Table, Self::Json, Self::Markdown];
}

/// `--format` of a command that renders `offered`: its `--help`, clap's check of a value and
/// the MCP tool's schema all read this one list (an enum of every format would offer some
/// that the command then refuses).
fn formats(offered: &'static [ReportFormatArg]) -> impl FnOnce(clap::Arg) -> clap::Arg {
    move |arg| {
        let names = offered.iter().filter_map(ValueEnum::to_possible_value);
        arg.value_parser(
            clap::builder::PossibleValuesParser::new(names)
                .try_map(|name: String| ReportFormatArg::from_str(&name, false)),
        )
    }
}

impl OutputArgs {
    /// The report format, for the commands that have no GitHub form.
    pub(crate) fn report_format(&self) -> Result<Format, cpuprof_app::UsageError> {
        Ok(match self.format {
            ReportFormatArg::Table => Format::Table,
            ReportFormatArg::Json => Format::Json,
            ReportFormatArg::Csv => Format::Csv,
            ReportFormatArg::Markdown => Format::Markdown,
            ReportFormatArg::Github => {
                return Err(cpuprof_app::UsageError(
                    "--format github is for diff; use --format markdown for a job summary".to_owned(),
                ))
            }
            ReportFormatArg::Brief => {
                return Err(cpuprof_app::UsageError(
                    "--format brief is for top (one profile); use --format json for the whole report".to_owned(),
                ))
            }
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum By {
    /// Function: name + file + line + column
    Function,
    /// Script file (url)
    File,
    /// npm package under node_modules; (node) for node internals, (app) for the rest
    Package,
    /// Source line (V8's positionTicks); total equals self, as .cpuprofile has no call-site lines
    Line,
    /// Category: app, dependencies (node_modules), node (node: internals), native (V8, C++), gc,
    /// idle, program; total: time with a frame of it on the stack
    Category,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum MetricArg {
    /// Self time
    #[value(name = "self")]
    SelfTime,
    /// Total (inclusive) time
    Total,
}

impl From<MetricArg> for cpuprof_analysis::Metric {
    fn from(metric: MetricArg) -> Self {
        match metric {
            MetricArg::SelfTime => Self::SelfTime,
            MetricArg::Total => Self::Total,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum WeightArg {
    /// Each sample weighs its duration (until the next sample, as DevTools); numbers in ns
    Time,
    /// Each sample weighs 1: plain sample counts, immune to irregular sampling intervals
    Samples,
}

#[cfg(test)]
mod defaults {
    use super::*;

    /// What a request built in code (the recorder's) takes for "no options" is what clap makes of none.
    #[test]
    fn the_default_options_are_those_of_an_empty_command_line() {
        let Command::Top(top) = Cli::parse_from(["cpuprof", "top", "x.cpuprofile"]).command else { unreachable!() };
        assert_eq!(format!("{:?}", top.reading.options()), format!("{:?}", ReadOptions::default()));
        assert_eq!(format!("{:?}", top.filter.options()), format!("{:?}", FilterOptions::default()));
        assert_eq!(format!("{:?}", top.window.options()), format!("{:?}", WindowOptions::default()));
        let request = cpuprof_app::top::TopRequest::new(vec!["x.cpuprofile".into()]);
        assert_eq!(top.rows.limit, request.rows.limit);
    }
}
