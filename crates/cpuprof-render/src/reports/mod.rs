//! Reports: analysis results for people and scripts, one module per format (as hyperfine's
//! exporters), each covering every report (`top` and `diff`); `words` holds the wording
//! they share.

mod annotate_columns;
mod block_columns;
mod brief;
mod budget;
mod cells;
mod chart;
mod csv;
mod diff_columns;
mod fit;
mod github;
mod jit;
mod jit_words;
mod json;
mod markdown;
mod outline;
mod table;
mod timeline_columns;
mod top_columns;
mod tree_columns;
mod words;

use cpuprof_analysis::{
    Block, Blocks, CallGraph, CallTree, DiffReport, DiffRow, Explanation, GroupBy, Timeline, TopReport, Weight,
};
use cpuprof_model::Meta;

pub use brief::{render_brief, BriefDocument};
pub use fit::Terminal;
pub use words::regression_text;

/// `1,849 samples (4,640 idle not shown)`: a header's count of samples, as every view counts them.
pub fn samples_shown(shown: i64, all: i64, idle: i64, noun: &str) -> String {
    words::samples_shown(shown, all, idle, noun)
}

/// Output formats of tabular commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// An aligned text table with a summary line.
    #[default]
    Table,
    /// JSON (a documented, stable schema).
    Json,
    /// CSV with a header row.
    Csv,
    /// A Markdown table, e.g. for a pull-request comment.
    Markdown,
    /// [`Format::Json`]'s document, compact and within this many bytes: rows left out whole
    /// (the lightest, the deepest first) with a count per list in `left_out` — a tool's
    /// answer to an agent.
    JsonWithin(usize),
}

/// A top report with what is needed to present it.
#[derive(Clone, Copy, Debug)]
pub struct TopDocument<'a> {
    /// The input as the user named it.
    pub source: &'a str,
    /// Facts about the recording.
    pub meta: &'a Meta,
    /// The numbers.
    pub report: &'a TopReport,
    /// What the rows stand for.
    pub by: GroupBy,
    /// How many rows to show (`None`: all).
    pub limit: Option<usize>,
    /// The time window the samples were cut to, when one was given.
    pub window: Option<cpuprof_analysis::Window>,
    /// The inputs merged into the report, each with its own total (none for one input).
    pub inputs: &'a [InputTotal],
    /// The terminal the table is shown on.
    pub terminal: Terminal<'a>,
}

/// One of several inputs a report merges, and its part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputTotal {
    /// The input as the user named it.
    pub source: String,
    /// Its total, in the report's unit.
    pub total: i64,
    /// Its number of samples.
    pub samples: i64,
    /// Its recording's length, if known.
    pub duration_ns: Option<i64>,
}

impl TopDocument<'_> {
    pub(crate) fn rows(&self) -> &[cpuprof_analysis::TopRow] {
        let rows = &self.report.rows;
        &rows[..self.limit.unwrap_or(rows.len()).min(rows.len())]
    }

    pub(crate) fn unit(&self) -> &'static str {
        match self.report.unit {
            Weight::Samples => "samples",
            _ => "ns",
        }
    }

    pub(crate) fn pct(&self, value: i64) -> f64 {
        if self.report.total == 0 {
            0.0
        } else {
            100.0 * value as f64 / self.report.total as f64
        }
    }

    pub(crate) fn by_group(&self) -> bool {
        matches!(self.by, GroupBy::File | GroupBy::Package | GroupBy::Category)
    }
}

/// Renders `doc` in `format`.
pub fn render_top(doc: &TopDocument<'_>, format: Format) -> String {
    match format {
        Format::Table => table::top(doc),
        Format::Json => json::top(doc, None),
        Format::JsonWithin(budget) => json::top(doc, Some(budget)),
        Format::Csv => csv::top(doc),
        Format::Markdown => markdown::top(doc),
    }
}

/// Renders `doc` in `format`.
pub fn render_diff(doc: &DiffDocument<'_>, format: Format) -> String {
    match format {
        Format::Table => table::diff(doc),
        Format::Json => json::diff(doc, None),
        Format::JsonWithin(budget) => json::diff(doc, Some(budget)),
        Format::Csv => csv::diff(doc),
        Format::Markdown => markdown::diff(doc),
    }
}

/// `doc` as the JSON document of [`Format::Json`], on one line: what a page embeds.
pub fn render_diff_json_line(doc: &DiffDocument<'_>) -> String {
    json::diff_compact(doc)
}

/// `doc` as GitHub Actions workflow commands: an annotation per significant change shown
/// (`::warning` hotter or new, `::notice` cooler or gone), at its file and line when the file
/// is below its checkout, every field escaped; then a summary line.
pub fn render_diff_annotations(doc: &DiffDocument<'_>) -> String {
    github::annotations(doc)
}

/// A diff report with what is needed to present it.
#[derive(Clone, Copy, Debug)]
pub struct DiffDocument<'a> {
    /// The base inputs as named.
    pub base_sources: &'a [String],
    /// The new inputs as named.
    pub new_sources: &'a [String],
    /// The numbers.
    pub report: &'a DiffReport,
    /// The rows to show (after `-n`), in rank order.
    pub rows: &'a [DiffRow],
    /// Where the changes of some rows came from (`diff --explain`); rows by index into the
    /// report's rows.
    pub explanations: &'a [Explanation],
    /// How the event-loop blocks changed (`diff --blocks`).
    pub blocks: Option<&'a cpuprof_analysis::BlockChange>,
    /// The terminal the table is shown on (colour: red hotter, green cooler).
    pub terminal: Terminal<'a>,
    /// Markdown: where a location links to.
    pub link: Option<&'a Link>,
    /// Where the builds were checked out: links and annotations name files below these.
    pub checkouts: &'a Checkouts,
}

/// Links from a report's locations to their source (`diff --link`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// An http(s) URL with `{path}` (the file below its checkout) and `{line}`.
    pub template: String,
}

/// The builds' checkout folders as the profiles name them (unset: the current directory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checkouts {
    /// The base build's, for gone functions.
    pub base_root: Option<String>,
    /// The new build's.
    pub new_root: Option<String>,
}

impl DiffDocument<'_> {
    /// The explanation of the report's row `row`, if there is one.
    pub(crate) fn explanation(&self, row: usize) -> Option<&Explanation> {
        self.explanations.iter().find(|e| e.row == row)
    }
}

/// Which call tree a [`TreeDocument`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeView {
    /// Callers above callees, from the outermost caller.
    TopDown,
    /// Functions by self time, their callers under them.
    BottomUp,
}

/// A call tree with what is needed to present it.
#[derive(Clone, Copy)]
pub struct TreeDocument<'a> {
    /// The input as the user named it.
    pub source: &'a str,
    /// Facts about the recording.
    pub meta: &'a Meta,
    /// The samples the tree was grown from (functions, totals).
    pub graph: &'a CallGraph<'a>,
    /// The tree.
    pub tree: &'a CallTree,
    /// Which tree it is.
    pub view: TreeView,
    /// Fold chains of only children into one line (`a → b → c`) in the table and Markdown.
    pub fold_chains: bool,
    /// The width the table's lines are cut to (a terminal's); `None`: a fixed width.
    pub width: Option<usize>,
}

/// One function's callers and callees (either or both) with what is needed to present them.
#[derive(Clone, Copy)]
pub struct CallsDocument<'a> {
    /// The input as the user named it.
    pub source: &'a str,
    /// Facts about the recording.
    pub meta: &'a Meta,
    /// The samples the lists were grown from (functions, totals).
    pub graph: &'a CallGraph<'a>,
    /// The function: an index into the graph's functions.
    pub function: usize,
    /// Its callers, when asked for.
    pub callers: Option<&'a CallTree>,
    /// Its callees, when asked for.
    pub callees: Option<&'a CallTree>,
    /// Levels asked for (nested lists in JSON when more than 1).
    pub depth: usize,
    /// The width the table's lines are cut to (a terminal's); `None`: a fixed width.
    pub width: Option<usize>,
}

/// Renders `doc` in `format`.
pub fn render_tree(doc: &TreeDocument<'_>, format: Format) -> String {
    match format {
        Format::Table => table::tree(doc),
        Format::Json => json::tree(doc, None),
        Format::JsonWithin(budget) => json::tree(doc, Some(budget)),
        Format::Csv => csv::tree(doc),
        Format::Markdown => markdown::tree(doc),
    }
}

/// Renders `doc` in `format`.
pub fn render_calls(doc: &CallsDocument<'_>, format: Format) -> String {
    match format {
        Format::Table => table::calls(doc),
        Format::Json => json::calls(doc, None),
        Format::JsonWithin(budget) => json::calls(doc, Some(budget)),
        Format::Csv => csv::calls(doc),
        Format::Markdown => markdown::calls(doc),
    }
}

/// A timeline with what is needed to present it.
#[derive(Clone, Copy, Debug)]
pub struct TimelineDocument<'a> {
    /// The input as the user named it.
    pub source: &'a str,
    /// Facts about the recording.
    pub meta: &'a Meta,
    /// The buckets and phases.
    pub timeline: &'a Timeline,
    /// The time window the samples were cut to, when one was given.
    pub window: Option<cpuprof_analysis::Window>,
    /// The terminal's width in columns (the chart fits it); `None`: 100.
    pub width: Option<usize>,
    /// With [`Format::Table`]: the table of buckets under the chart.
    pub bucket_table: bool,
}

/// Renders `doc` in `format`: for [`Format::Table`], the chart (and the buckets' table when
/// [`TimelineDocument::bucket_table`]).
pub fn render_timeline(doc: &TimelineDocument<'_>, format: Format) -> String {
    match format {
        Format::Table => table::timeline(doc),
        Format::Json => json::timeline(doc, None),
        Format::JsonWithin(budget) => json::timeline(doc, Some(budget)),
        Format::Csv => csv::timeline(doc),
        Format::Markdown => markdown::timeline(doc),
    }
}

/// Event-loop blocks with what is needed to present them.
#[derive(Clone, Copy, Debug)]
pub struct BlocksDocument<'a> {
    /// The input as the user named it.
    pub source: &'a str,
    /// Facts about the recording.
    pub meta: &'a Meta,
    /// The blocks.
    pub blocks: &'a Blocks,
    /// The time window the samples were cut to, when one was given.
    pub window: Option<cpuprof_analysis::Window>,
    /// How many blocks tables list (`None`: all of those described).
    pub limit: Option<usize>,
    /// The width the table's lines fit (a terminal's); `None`: as wide as their cells.
    pub width: Option<usize>,
}

impl BlocksDocument<'_> {
    /// The blocks tables list: the longest first (then the earliest), at most `limit`.
    pub(crate) fn longest(&self) -> Vec<&Block> {
        let mut blocks: Vec<&Block> = self.blocks.blocks.iter().collect();
        blocks.sort_by_key(|b| (std::cmp::Reverse(b.duration_ns), b.start_ns));
        blocks.truncate(self.limit.unwrap_or(usize::MAX));
        blocks
    }
}

/// Renders `doc` in `format`.
pub fn render_blocks(doc: &BlocksDocument<'_>, format: Format) -> String {
    match format {
        Format::Table => table::blocks(doc),
        Format::Json => json::blocks(doc, None),
        Format::JsonWithin(budget) => json::blocks(doc, Some(budget)),
        Format::Csv => csv::blocks(doc),
        Format::Markdown => markdown::blocks(doc),
    }
}

/// Where an annotated function's source text came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceOrigin {
    /// The script's file on disk.
    Disk,
    /// The script's text in the profile itself (a tick log's `script-source`).
    ScriptSource,
    /// A source map's `sourcesContent`.
    SourceMap,
    /// None was found: the lines' numbers and times alone.
    None,
}

impl SourceOrigin {
    /// The origin as JSON and CSV name it.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceOrigin::Disk => "disk",
            SourceOrigin::ScriptSource => "script-source",
            SourceOrigin::SourceMap => "sourcemap",
            SourceOrigin::None => "none",
        }
    }
}

/// A script's text, as an annotation shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceText {
    /// Where it came from.
    pub origin: SourceOrigin,
    /// The file it was read from, or the script's name when none was found.
    pub file: Option<String>,
    /// Its lines (without their ends); empty when none was found.
    pub lines: Vec<String>,
    /// Why none is shown (`not found`, `it changed since …`), when none is.
    pub missing: Option<String>,
}

/// One function's lines and source, annotated.
#[derive(Clone, Debug)]
pub struct AnnotatedFunction {
    /// The function: an index into the graph's functions.
    pub function: usize,
    /// Its samples by line.
    pub lines: cpuprof_analysis::FunctionLines,
    /// Its script's text.
    pub source: SourceText,
}

/// Functions' source annotated with their samples by line, with what is needed to present them.
#[derive(Clone, Copy)]
pub struct AnnotateDocument<'a> {
    /// The input as the user named it.
    pub source: &'a str,
    /// Facts about the recording.
    pub meta: &'a Meta,
    /// The samples the lines were counted from (functions, totals).
    pub graph: &'a CallGraph<'a>,
    /// The functions, in the order shown.
    pub functions: &'a [AnnotatedFunction],
    /// Lines shown around each line with samples (the others folded away).
    pub context: usize,
    /// Every line of each function shown, none folded.
    pub full: bool,
    /// Several functions were asked for (`--top`): JSON lists them under `functions` however
    /// many there are.
    pub many: bool,
    /// The terminal the table is shown on (colour: the hottest lines, cold lines dimmed).
    pub terminal: Terminal<'a>,
}

/// Renders `doc` in `format`.
pub fn render_annotate(doc: &AnnotateDocument<'_>, format: Format) -> String {
    match format {
        Format::Table => table::annotate(doc),
        Format::Json => json::annotate(doc, None),
        Format::JsonWithin(budget) => json::annotate(doc, Some(budget)),
        Format::Csv => csv::annotate(doc),
        Format::Markdown => markdown::annotate(doc),
    }
}

/// What V8 did to functions (`jit`), with what is needed to present it.
#[derive(Clone, Copy)]
pub struct JitDocument<'a> {
    /// The input as the user named it.
    pub source: &'a str,
    /// Facts about the recording.
    pub meta: &'a Meta,
    /// The samples (functions, totals).
    pub graph: &'a CallGraph<'a>,
    /// The functions' JIT facts.
    pub report: &'a cpuprof_analysis::JitReport,
    /// The terminal the table is shown on.
    pub terminal: Terminal<'a>,
}

/// Each function's `jit` lines as a page shows them: the function's index in `doc`'s graph
/// and its lines (escaped; the table's words without the title), for those with something to say.
pub fn jit_function_lines(doc: &JitDocument<'_>) -> Vec<(usize, Vec<String>)> {
    jit::function_lines(doc)
}

/// Renders `doc` in `format` (table, JSON or Markdown; JSON within a budget is JSON whole).
pub fn render_jit(doc: &JitDocument<'_>, format: Format) -> String {
    match format {
        Format::Table | Format::Csv => jit::table(doc),
        Format::Json | Format::JsonWithin(_) => jit::json(doc),
        Format::Markdown => jit::markdown(doc),
    }
}
