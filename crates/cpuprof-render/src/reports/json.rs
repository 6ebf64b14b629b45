//! JSON (the documented contracts): `top`, `diff`, `tree`, `callers`/`callees`/`explain`.

use cpuprof_analysis::{
    Amount, CallGraph, CallNode, CallTree, Category, Contribution, Explanation, FunctionRef, GroupBy, Inlining, Metric,
    Normalize, Pruned, Summary,
};
use cpuprof_model::Tier;
use serde::Serialize;

use super::budget::{count_left_out, serde_within, tree_keep, tree_within, LeftOut, Rows};
use super::words::{moved_text, pct_of, unit_name, NO_IDLE_NOTE};
use super::{BlocksDocument, CallsDocument, DiffDocument, TimelineDocument, TopDocument, TreeDocument, TreeView};

/// The JSON contract of `cpuprof top` (documented in docs/json.md). Fields may be added,
/// never removed or renamed.
#[derive(Serialize)]
struct TopJson<'a> {
    source: &'a str,
    format: &'a str,
    by: &'a str,
    unit: &'a str,
    total: i64,
    samples: i64,
    duration_ns: Option<i64>,
    interval_ns: Option<i64>,
    /// With --from/--to: the window, ns after the recording's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<WindowJson>,
    /// With several inputs: each one's part of the merged report.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    inputs: Vec<InputJson<'a>>,
    summary: SummaryJson,
    /// Messages for people (`jq -r '.warnings[]'`), not data: what they quote from the input
    /// is escaped as on stderr, so that no name starts a line of its own.
    warnings: Vec<String>,
    rows: Vec<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Serialize)]
struct InputJson<'a> {
    source: &'a str,
    total: i64,
    samples: i64,
    duration_ns: Option<i64>,
}

#[derive(Serialize)]
struct WindowJson {
    from_ns: i64,
    to_ns: i64,
}

/// Where all samples went (before filters), by what was on top of the stack, and GC and
/// idle by VM state where the format records it.
#[derive(Serialize)]
struct SummaryJson {
    samples: i64,
    total: i64,
    javascript: AmountJson,
    cpp: AmountJson,
    gc: AmountJson,
    shared_libraries: AmountJson,
    unaccounted: AmountJson,
    idle: AmountJson,
    program: AmountJson,
    /// Every sample by category (`app`, `dependencies`, …): shares of all the time.
    categories: std::collections::BTreeMap<&'static str, AmountJson>,
}

#[derive(Serialize)]
pub(crate) struct AmountJson {
    samples: i64,
    total: i64,
    pct: f64,
}

/// A report's `warnings`: the messages of its profile's, escaped as on stderr.
fn warnings(meta: &cpuprof_model::Meta) -> Vec<String> {
    meta.warnings.iter().map(|w| crate::text::visible(&w.message)).collect()
}

fn summary(s: &Summary) -> SummaryJson {
    // Every percentage of the profile is of its weight (time), as the categories' are.
    let share = |v: Amount| AmountJson { samples: v.samples, total: v.weight, pct: pct_of(v.weight, s.all.weight) };
    SummaryJson {
        samples: s.all.samples,
        total: s.all.weight,
        javascript: share(s.javascript),
        cpp: share(s.cpp),
        gc: share(s.gc),
        shared_libraries: share(s.shared_lib),
        unaccounted: share(s.unaccounted),
        idle: share(s.idle),
        program: share(s.program),
        categories: categories(s),
    }
}

/// `summary.categories`: each category's time, samples and share of all the time.
pub(crate) fn categories(s: &Summary) -> std::collections::BTreeMap<&'static str, AmountJson> {
    let whole = s.categories.iter().map(|a| a.weight).fold(0i64, i64::saturating_add);
    Category::ALL
        .iter()
        .zip(&s.categories)
        .map(|(c, a)| (c.as_str(), AmountJson { samples: a.samples, total: a.weight, pct: pct_of(a.weight, whole) }))
        .collect()
}

pub(crate) fn top(doc: &TopDocument<'_>, budget: Option<usize>) -> String {
    let by = match doc.by {
        GroupBy::File => "file",
        GroupBy::Package => "package",
        GroupBy::Line => "line",
        GroupBy::Category => "category",
        _ => "function",
    };
    let mut json = TopJson {
        source: doc.source,
        format: doc.meta.format.as_str(),
        by,
        unit: doc.unit(),
        total: doc.report.total,
        samples: doc.report.samples,
        duration_ns: doc.meta.duration_ns,
        interval_ns: doc.meta.interval_ns,
        window: doc.window.map(|w| WindowJson { from_ns: w.from_ns, to_ns: w.to_ns }),
        inputs: doc
            .inputs
            .iter()
            .map(|i| InputJson { source: &i.source, total: i.total, samples: i.samples, duration_ns: i.duration_ns })
            .collect(),
        summary: summary(&doc.report.summary),
        warnings: warnings(doc.meta),
        rows: doc.rows().iter().map(|r| super::top_columns::json_row(doc, r)).collect(),
    };
    if let Some(budget) = budget {
        return serde_within(&mut json, budget, |j| {
            vec![Box::new(("rows", &mut j.rows)) as Box<dyn Rows>, Box::new(("inputs", &mut j.inputs))]
        });
    }
    pretty(&json)
}

/// The JSON contract of `cpuprof diff` (documented in docs/json.md). Fields may be added, never
/// removed or renamed.
#[derive(Serialize)]
struct DiffJson<'a> {
    normalize: &'a str,
    metric: &'a str,
    /// What the amounts are: `ns`, or `samples` when a profile has no times.
    unit: &'a str,
    base: SideJson<'a>,
    new: SideJson<'a>,
    /// False when the weights could not be tested (no counts of samples taken): then no row
    /// is significant.
    tested: bool,
    /// Scripts paired across checkout roots: the base path and the new path.
    moved_files: Vec<MovedFileJson<'a>>,
    /// As `top`'s: every warning stderr got, escaped as there.
    warnings: Vec<String>,
    /// With `--blocks`: the event-loop blocks of each side's runs and how the longest changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    blocks: Option<BlockChangeJson>,
    rows: Vec<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Serialize)]
struct BlockChangeJson {
    base: Vec<RunBlocksJson>,
    new: Vec<RunBlocksJson>,
    max_delta_ns: f64,
    p95_delta_ns: f64,
    p_value: Option<f64>,
    significant: bool,
}

#[derive(Serialize)]
struct RunBlocksJson {
    count: usize,
    p95_ns: i64,
    max_ns: i64,
    idle_samples: i64,
    interval_ns: i64,
}

fn block_change(b: &cpuprof_analysis::BlockChange) -> BlockChangeJson {
    let runs = |runs: &[cpuprof_analysis::RunBlocks]| {
        runs.iter()
            .map(|r| RunBlocksJson {
                count: r.count,
                p95_ns: r.p95_ns,
                max_ns: r.max_ns,
                idle_samples: r.idle_samples,
                interval_ns: r.interval_ns,
            })
            .collect()
    };
    BlockChangeJson {
        base: runs(&b.base),
        new: runs(&b.new),
        max_delta_ns: b.max_delta_ns,
        p95_delta_ns: b.p95_delta_ns,
        p_value: b.p_value,
        significant: b.significant,
    }
}

#[derive(Serialize)]
struct MovedFileJson<'a> {
    base: &'a str,
    new: &'a str,
}

#[derive(Serialize)]
struct SideJson<'a> {
    sources: &'a [String],
    runs: usize,
    /// Busy time per run, ns.
    total: f64,
    samples: i64,
}

#[derive(Serialize)]
struct ExplainJson<'a> {
    callers: Vec<ContributionJson<'a>>,
    callees: Vec<ContributionJson<'a>>,
    moved: Vec<MovedJson<'a>>,
    /// What V8 did differently to the function (tick logs read with their JIT records).
    jit: Option<super::jit::JitChangeJson<'a>>,
}

#[derive(Serialize)]
struct ContributionJson<'a> {
    name: &'a str,
    file: Option<&'a str>,
    line: Option<u32>,
    /// Several same-named functions of the file, summed.
    merged: bool,
    base: f64,
    new: f64,
    delta: f64,
    base_samples: i64,
    new_samples: i64,
    p_value: Option<f64>,
}

#[derive(Serialize)]
struct MovedJson<'a> {
    from: &'a str,
    from_file: Option<&'a str>,
    into: &'a str,
    into_file: Option<&'a str>,
    /// Per run, in the report's unit.
    weight: f64,
    /// `inlined-in-new` or `no-longer-inlined-in-new`.
    inlining: &'a str,
    likely_inlined: bool,
    text: String,
}

fn contribution_json(c: &Contribution) -> ContributionJson<'_> {
    ContributionJson {
        name: &c.name,
        file: c.file.as_deref(),
        line: c.line,
        merged: c.merged,
        base: c.base,
        new: c.new,
        delta: c.delta(),
        base_samples: c.base_samples,
        new_samples: c.new_samples,
        p_value: c.p_value,
    }
}

fn explain_json(e: &Explanation, unit: cpuprof_analysis::Weight) -> ExplainJson<'_> {
    ExplainJson {
        callers: e.callers.iter().map(contribution_json).collect(),
        callees: e.callees.iter().map(contribution_json).collect(),
        moved: e
            .moved
            .iter()
            .map(|m| MovedJson {
                from: &m.from,
                from_file: m.from_file.as_deref(),
                into: &m.into,
                into_file: m.into_file.as_deref(),
                weight: m.weight,
                inlining: match m.inlining {
                    Inlining::InNew => "inlined-in-new",
                    Inlining::UndoneInNew => "no-longer-inlined-in-new",
                },
                likely_inlined: true,
                text: crate::text::visible(&moved_text(m)),
            })
            .collect(),
        jit: e.jit.as_ref().map(|c| super::jit::change_json(c, unit)),
    }
}

pub(crate) fn diff(doc: &DiffDocument<'_>, budget: Option<usize>) -> String {
    let mut json = diff_json(doc);
    if let Some(budget) = budget {
        // A row goes with its explanation: the paths say why that row changed.
        return serde_within(&mut json, budget, |j| {
            vec![Box::new(("rows", &mut j.rows)) as Box<dyn Rows>, Box::new(("moved_files", &mut j.moved_files))]
        });
    }
    pretty(&json)
}

/// The same document as [`diff`], on one line (to embed).
pub(crate) fn diff_compact(doc: &DiffDocument<'_>) -> String {
    serde_json::to_string(&diff_json(doc)).unwrap_or_default()
}

fn diff_json<'a>(doc: &'a DiffDocument<'a>) -> DiffJson<'a> {
    let r = doc.report;
    let side = |sources, t: &cpuprof_analysis::SideTotals| SideJson {
        sources,
        runs: t.runs,
        total: t.busy_per_run,
        samples: t.samples,
    };
    DiffJson {
        normalize: match r.normalize {
            Normalize::Time => "time",
            Normalize::Share => "share",
        },
        metric: match r.metric {
            Metric::SelfTime => "self",
            Metric::Total => "total",
        },
        unit: unit_name(r.unit),
        base: side(doc.base_sources, &r.base),
        new: side(doc.new_sources, &r.new),
        tested: r.tested,
        moved_files: r.moved_files.iter().map(|(base, new)| MovedFileJson { base, new }).collect(),
        warnings: r.warnings.iter().map(|w| crate::text::visible(w)).collect(),
        blocks: doc.blocks.map(block_change),
        rows: doc
            .rows
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let mut json = super::diff_columns::json_row(doc, row);
                // With `--explain`, for the rows explained: where the change came from.
                if let Some(explain) = doc.explanation(i).map(|e| explain_json(e, doc.report.unit)) {
                    json.insert("explain".to_owned(), serde_json::to_value(explain).unwrap_or_default());
                }
                json
            })
            .collect(),
    }
}

/// A JSON value as serde_json writes it (strings escaped, floats as it prints them).
fn value<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Deeper levels of a call tree's JSON are indented as this one.
const MAX_INDENT_LEVEL: usize = 32;

/// Pretty JSON (or compact, for a budgeted answer), written by hand so that trees thousands of
/// levels deep need no recursion.
struct Writer {
    out: String,
    compact: bool,
}

impl Writer {
    fn new(compact: bool) -> Writer {
        Writer { out: String::new(), compact }
    }

    /// A new line at `level`: two spaces a level, up to [`MAX_INDENT_LEVEL`] (a tree thousands
    /// of levels deep would otherwise be mostly spaces, its size growing with the square of its
    /// depth); nothing in compact JSON.
    fn line(&mut self, level: usize) {
        if self.compact {
            return;
        }
        self.out.push('\n');
        for _ in 0..level.min(MAX_INDENT_LEVEL) {
            self.out.push_str("  ");
        }
    }

    /// `"key": value` on a line of its own at `level`, after a comma unless `first`.
    fn field(&mut self, level: usize, first: bool, key: &str, raw: &str) {
        if !first {
            self.out.push(',');
        }
        self.line(level);
        self.out.push_str(&value(key));
        self.out.push_str(if self.compact { ":" } else { ": " });
        self.out.push_str(raw);
    }

    /// The head fields of every call-tree document, opening its object.
    fn head(&mut self, source: &str, meta: &cpuprof_model::Meta, graph: &CallGraph<'_>) {
        self.out.push('{');
        self.field(1, true, "source", &value(source));
        self.field(1, false, "format", &value(meta.format.as_str()));
        self.field(1, false, "unit", &value(unit_name(graph.unit())));
        self.field(1, false, "total", &graph.total().to_string());
        self.field(1, false, "samples", &graph.samples().to_string());
        self.field(1, false, "warnings", &value(&warnings(meta)));
    }

    /// `name, file, line, column, kind` of a node's function.
    fn identity(&mut self, level: usize, graph: &CallGraph<'_>, function: Option<usize>) {
        let row = function.map(|f| &graph.functions()[f]);
        self.field(level, true, "name", &value(row.map_or("(root)", |r| r.plain_name())));
        if let Some(tier) = row.and_then(|r| r.tier) {
            self.field(level, false, "tier", &value(tier.as_str()));
        }
        if let Some(row) = row {
            self.field(level, false, "id", &value(&row.handle()));
        }
        self.field(level, false, "file", &value(&row.and_then(|r| r.file.as_deref())));
        self.field(level, false, "line", &value(&row.and_then(|r| r.line)));
        self.field(level, false, "column", &value(&row.and_then(|r| r.column)));
        self.field(level, false, "kind", &value(row.map_or("root", |r| r.kind.as_str())));
    }

    /// The numbers of a `top` row: self and total, samples and percentages of `total`.
    fn numbers(&mut self, level: usize, self_amount: Amount, total: Amount, whole: i64) {
        self.field(level, false, "self", &self_amount.weight.to_string());
        self.field(level, false, "self_samples", &self_amount.samples.to_string());
        self.field(level, false, "self_pct", &value(&pct_of(self_amount.weight, whole)));
        self.field(level, false, "total", &total.weight.to_string());
        self.field(level, false, "total_samples", &total.samples.to_string());
        self.field(level, false, "total_pct", &value(&pct_of(total.weight, whole)));
    }

    fn pruned(&mut self, level: usize, pruned: Option<Pruned>) {
        if let Some(p) = pruned {
            let text = format!(
                "{{\"nodes\": {}, \"total\": {}, \"total_samples\": {}}}",
                p.nodes, p.total.weight, p.total.samples
            );
            self.field(level, false, "pruned", &text);
        }
    }

    /// The array of `nodes` (opened by the caller after `"key": `), each node an object of
    /// `fields` and its children under `children.0` (none when `None`) down to the level
    /// `children.1` (the first is 1; nodes there have no key: nothing was looked for below),
    /// depth-first; only the nodes `kept` marks, when it is given.
    #[allow(clippy::too_many_arguments)] // the shape of one array; a struct would only rename them
    fn nodes(
        &mut self,
        tree: &CallTree,
        kept: Option<&[bool]>,
        level: usize,
        children: (Option<&str>, usize),
        with_pruned: bool,
        fields: &impl Fn(&mut Self, usize, &CallNode),
    ) {
        enum Step {
            Open(usize, usize, bool, usize),
            Close(usize, usize, bool),
        }
        let shown = |n: &usize| kept.is_none_or(|k| k[*n]);
        let push_all = |todo: &mut Vec<Step>, nodes: &[usize], level: usize, depth: usize| {
            let shown: Vec<usize> = nodes.iter().copied().filter(shown).collect();
            for (i, n) in shown.iter().enumerate().rev() {
                todo.push(Step::Open(*n, level, i == 0, depth));
            }
        };
        self.out.push('[');
        if !tree.roots.iter().any(shown) {
            self.out.push(']');
            return;
        }
        let mut todo = Vec::new();
        push_all(&mut todo, &tree.roots, level + 1, 1);
        let close_array = |w: &mut Self, level: usize| {
            w.line(level);
            w.out.push(']');
        };
        while let Some(step) = todo.pop() {
            match step {
                Step::Open(n, level, first, depth) => {
                    if !first {
                        self.out.push(',');
                    }
                    self.line(level);
                    self.out.push('{');
                    let node = &tree.nodes[n];
                    fields(self, level + 1, node);
                    let Some(key) = children.0.filter(|_| depth < children.1) else {
                        todo.push(Step::Close(n, level, false));
                        continue;
                    };
                    self.field(level + 1, false, key, "[");
                    if node.children.iter().any(shown) {
                        todo.push(Step::Close(n, level, true));
                        push_all(&mut todo, &node.children, level + 2, depth + 1);
                    } else {
                        self.out.push(']');
                        todo.push(Step::Close(n, level, false));
                    }
                }
                Step::Close(n, level, open_children) => {
                    if open_children {
                        close_array(self, level + 1);
                    }
                    if with_pruned {
                        self.pruned(level + 1, tree.nodes[n].pruned);
                    }
                    self.line(level);
                    self.out.push('}');
                }
            }
        }
        close_array(self, level);
    }

    /// What one node adds to a compact document: its object (without its children's), the
    /// comma before it and its children's key and brackets.
    fn node_size(
        tree: &CallTree,
        n: usize,
        key: Option<&str>,
        with_pruned: bool,
        fields: &impl Fn(&mut Self, usize, &CallNode),
    ) -> usize {
        let mut w = Writer::new(true);
        fields(&mut w, 0, &tree.nodes[n]);
        if with_pruned {
            w.pruned(0, tree.nodes[n].pruned);
        }
        // `,{` … `}`, and `,"key":[]`.
        w.out.len() + 3 + key.map_or(0, |k| value(k).len() + 4)
    }

    fn finish(mut self) -> String {
        if self.compact {
            self.out.push('}');
        } else {
            self.out.push_str("\n}\n");
        }
        self.out
    }
}

/// The JSON contract of `cpuprof tree` (documented in docs/json.md). Fields may be added,
/// never removed or renamed.
pub(crate) fn tree(doc: &TreeDocument<'_>, budget: Option<usize>) -> String {
    let graph = doc.graph;
    let fields = |w: &mut Writer, level: usize, node: &CallNode| {
        w.identity(level, graph, node.function);
        w.numbers(level, node.self_amount, node.total, graph.total());
    };
    let write = |kept: Option<&[bool]>, compact: bool| {
        let mut w = Writer::new(compact);
        w.head(doc.source, doc.meta, graph);
        let view = match doc.view {
            TreeView::TopDown => "top-down",
            TreeView::BottomUp => "bottom-up",
        };
        w.field(1, false, "view", &value(view));
        w.pruned(1, doc.tree.pruned);
        w.field(1, false, "roots", "");
        w.nodes(doc.tree, kept, 1, (Some("children"), usize::MAX), true, &fields);
        w.finish()
    };
    let Some(budget) = budget else { return write(None, false) };
    let size = |n: usize, _: usize| Writer::node_size(doc.tree, n, Some("children"), true, &fields);
    let plan = |room: usize| {
        let kept = tree_keep(doc.tree, usize::MAX, room, size)?;
        let mut left_out = LeftOut::default();
        count_left_out(doc.tree, &kept, usize::MAX, ("roots", "children"), &mut left_out);
        Some((kept, left_out))
    };
    tree_within(budget, doc.tree.nodes.len(), plan, |kept| write(kept, true))
}

/// The JSON contract of `cpuprof callers`, `callees` and `explain` (documented in docs/json.md).
pub(crate) fn calls(doc: &CallsDocument<'_>, budget: Option<usize>) -> String {
    let graph = doc.graph;
    let row = &graph.functions()[doc.function];
    let lists = [("callers", doc.callers), ("callees", doc.callees)];
    let fields = |w: &mut Writer, level: usize, node: &CallNode| {
        w.identity(level, graph, node.function);
        w.field(level, false, "total", &node.total.weight.to_string());
        w.field(level, false, "total_samples", &node.total.samples.to_string());
        w.field(level, false, "pct", &value(&pct_of(node.total.weight, row.total_weight)));
    };
    let write = |kept: [Option<&[bool]>; 2], compact: bool| {
        let mut w = Writer::new(compact);
        w.head(doc.source, doc.meta, graph);
        w.field(1, false, "function", "{");
        w.identity(2, graph, Some(doc.function));
        let amount = |weight, samples| Amount { weight, samples };
        w.numbers(
            2,
            amount(row.self_weight, row.self_samples),
            amount(row.total_weight, row.total_samples),
            graph.total(),
        );
        w.line(1);
        w.out.push('}');
        for ((key, tree), kept) in lists.iter().zip(kept) {
            let Some(tree) = tree else { continue };
            w.field(1, false, key, "");
            w.nodes(tree, kept, 1, (Some(key), doc.depth), false, &fields);
        }
        w.finish()
    };
    let Some(budget) = budget else { return write([None, None], false) };
    // Callers and callees share the room: both lists, as one tree of two roots' lists.
    let joined = join_lists(&lists);
    // Both keys are as long: the size of one is the other's.
    let size =
        |n: usize, at: usize| Writer::node_size(&joined.tree, n, (at < doc.depth).then_some("callers"), false, &fields);
    let plan = |room: usize| {
        let kept = tree_keep(&joined.tree, doc.depth, room, size)?;
        let (a, b) = joined.split(&kept);
        let mut left_out = LeftOut::default();
        for ((key, list), kept) in lists.iter().zip([a, b]) {
            if let Some(list) = list {
                count_left_out(list, &kept, doc.depth, (key, key), &mut left_out);
            }
        }
        Some((kept, left_out))
    };
    tree_within(budget, joined.tree.nodes.len(), plan, |kept| {
        let split = kept.map(|k| joined.split(k));
        match &split {
            Some((a, b)) => write([Some(a), Some(b)], true),
            None => write([None, None], true),
        }
    })
}

/// Two lists of nodes (callers and callees) as one tree, to share a budget: the second's
/// nodes numbered after the first's.
struct Joined {
    tree: CallTree,
    first: usize,
}

impl Joined {
    /// A kept mark per joined node as one per list.
    fn split(&self, kept: &[bool]) -> (Vec<bool>, Vec<bool>) {
        (kept[..self.first].to_vec(), kept[self.first..].to_vec())
    }
}

fn join_lists(lists: &[(&str, Option<&CallTree>); 2]) -> Joined {
    let mut tree = CallTree::default();
    let mut first = 0;
    for (i, (_, list)) in lists.iter().enumerate() {
        let offset = tree.nodes.len();
        if let Some(list) = list {
            tree.nodes.extend(list.nodes.iter().map(|n| {
                let mut n = n.clone();
                for c in &mut n.children {
                    *c += offset;
                }
                n
            }));
            tree.roots.extend(list.roots.iter().map(|r| r + offset));
        }
        if i == 0 {
            first = tree.nodes.len();
        }
    }
    Joined { tree, first }
}

/// The JSON contract of `cpuprof timeline` (documented in docs/json.md).
#[derive(Serialize)]
struct TimelineJson<'a> {
    source: &'a str,
    format: &'a str,
    unit: &'a str,
    duration_ns: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<WindowJson>,
    bucket_ns: i64,
    /// As `top`'s.
    warnings: Vec<String>,
    buckets: Vec<BucketJson<'a>>,
    phases: Vec<PhaseJson<'a>>,
}

#[derive(Serialize)]
struct BucketJson<'a> {
    start_ns: i64,
    end_ns: i64,
    samples: i64,
    busy: i64,
    idle: i64,
    gc: i64,
    program: i64,
    categories: std::collections::BTreeMap<&'static str, i64>,
    top: Option<FunctionWeightJson<'a>>,
}

#[derive(Serialize)]
struct FunctionJson<'a> {
    /// The plain name: a tier's marker is in `tier`.
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tier: Option<&'static str>,
    file: Option<&'a str>,
    line: Option<u32>,
}

#[derive(Serialize)]
struct FunctionWeightJson<'a> {
    /// The plain name: a tier's marker is in `tier`.
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tier: Option<&'static str>,
    file: Option<&'a str>,
    line: Option<u32>,
    #[serde(rename = "self")]
    self_weight: i64,
}

#[derive(Serialize)]
struct PhaseJson<'a> {
    start_ns: i64,
    end_ns: i64,
    label: &'a str,
    entry: &'a str,
}

fn function(f: &FunctionRef) -> FunctionJson<'_> {
    FunctionJson { name: f.plain_name(), tier: f.tier.map(Tier::as_str), file: f.file.as_deref(), line: f.line }
}

fn function_weight((f, w): &(FunctionRef, i64)) -> FunctionWeightJson<'_> {
    FunctionWeightJson {
        name: f.plain_name(),
        tier: f.tier.map(Tier::as_str),
        file: f.file.as_deref(),
        line: f.line,
        self_weight: *w,
    }
}

fn pretty<T: Serialize>(value: &T) -> String {
    // Serializing plain structs of strings and numbers cannot fail.
    let mut out = serde_json::to_string_pretty(value).unwrap_or_default();
    out.push('\n');
    out
}

pub(crate) fn timeline(doc: &TimelineDocument<'_>, budget: Option<usize>) -> String {
    let t = doc.timeline;
    let mut json = TimelineJson {
        source: doc.source,
        format: doc.meta.format.as_str(),
        unit: unit_name(t.unit),
        duration_ns: t.length_ns,
        window: doc.window.map(|w| WindowJson { from_ns: w.from_ns, to_ns: w.to_ns }),
        bucket_ns: t.bucket_ns,
        warnings: warnings(doc.meta),
        buckets: t
            .buckets
            .iter()
            .map(|b| BucketJson {
                start_ns: b.start_ns,
                end_ns: b.end_ns,
                samples: b.samples,
                busy: b.busy(),
                idle: b.of(Category::Idle),
                gc: b.of(Category::Gc),
                program: b.of(Category::Program),
                categories: Category::ALL.iter().map(|c| (c.as_str(), b.of(*c))).collect(),
                top: b.top.as_ref().map(function_weight),
            })
            .collect(),
        phases: t
            .phases
            .iter()
            .map(|p| PhaseJson { start_ns: p.start_ns, end_ns: p.end_ns, label: &p.label, entry: &p.entry })
            .collect(),
    };
    if let Some(budget) = budget {
        return serde_within(&mut json, budget, |j| {
            vec![Box::new(("buckets", &mut j.buckets)) as Box<dyn Rows>, Box::new(("phases", &mut j.phases))]
        });
    }
    pretty(&json)
}

/// The JSON contract of `cpuprof blocks` (documented in docs/json.md).
#[derive(Serialize)]
struct BlocksJson<'a> {
    source: &'a str,
    format: &'a str,
    unit: &'a str,
    duration_ns: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<WindowJson>,
    interval_ns: i64,
    min_ns: i64,
    idle_samples: i64,
    /// Set when the recording has no idle samples: its blocks are not stalls.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
    /// As `top`'s.
    warnings: Vec<String>,
    blocks: Vec<BlockJson<'a>>,
    summary: BlockSummaryJson,
}

#[derive(Serialize)]
struct BlockJson<'a> {
    start_ns: i64,
    duration_ns: i64,
    samples: i64,
    entry: FunctionJson<'a>,
    top: Vec<FunctionWeightJson<'a>>,
    common: Option<FunctionJson<'a>>,
    under: Option<FunctionJson<'a>>,
    /// The deepest common frame when it is not JavaScript (what `common` ran in).
    native: Option<FunctionJson<'a>>,
    /// `start`, `end` or `both` when an edge of the recording (or window) cuts it, else null.
    cut: Option<&'static str>,
}

#[derive(Serialize)]
struct BlockSummaryJson {
    count: usize,
    /// How many of them are cut by an edge (their lengths are lower bounds).
    cut: usize,
    p50_ns: i64,
    p95_ns: i64,
    max_ns: i64,
    blocked_pct: f64,
}

pub(crate) fn blocks(doc: &BlocksDocument<'_>, budget: Option<usize>) -> String {
    let b = doc.blocks;
    let (p50_ns, p95_ns, max_ns) = b.percentiles();
    let mut json = BlocksJson {
        source: doc.source,
        format: doc.meta.format.as_str(),
        unit: "ns",
        duration_ns: b.length_ns,
        window: doc.window.map(|w| WindowJson { from_ns: w.from_ns, to_ns: w.to_ns }),
        interval_ns: b.interval_ns,
        min_ns: b.min_ns,
        idle_samples: b.idle_samples,
        note: (b.idle_samples == 0).then_some(NO_IDLE_NOTE),
        warnings: warnings(doc.meta),
        blocks: b
            .blocks
            .iter()
            .map(|k| BlockJson {
                start_ns: k.start_ns,
                duration_ns: k.duration_ns,
                samples: k.samples,
                entry: function(&k.entry),
                top: k.top.iter().map(function_weight).collect(),
                common: k.common.as_ref().map(function),
                under: k.under.as_ref().map(function),
                native: k.native.as_ref().map(function),
                cut: k.cut.map(cpuprof_analysis::BlockCut::as_str),
            })
            .collect(),
        summary: BlockSummaryJson {
            count: b.count(),
            cut: b.cut,
            p50_ns,
            p95_ns,
            max_ns,
            blocked_pct: b.blocked_pct(),
        },
    };
    if let Some(budget) = budget {
        return serde_within(&mut json, budget, |j| vec![Box::new(("blocks", &mut j.blocks)) as Box<dyn Rows>]);
    }
    pretty(&json)
}

/// The JSON contract of `cpuprof annotate` (documented in docs/json.md): one function's
/// `function`, `script` and `lines` at the top level, or several under `functions` (`--top`).
/// Fields may be added, never removed or renamed.
#[derive(Serialize)]
struct AnnotateJson<'a> {
    source: &'a str,
    format: &'a str,
    unit: &'a str,
    total: i64,
    samples: i64,
    warnings: Vec<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    one: Option<AnnotatedJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    functions: Option<Vec<AnnotatedJson>>,
}

/// One function annotated.
#[derive(Serialize)]
struct AnnotatedJson {
    function: serde_json::Map<String, serde_json::Value>,
    script: ScriptJson,
    /// Whether the lines have totals (the profile records call-site lines).
    call_sites: bool,
    /// The function's self whose line is not known.
    unlined: i64,
    unlined_samples: i64,
    lines: Vec<serde_json::Map<String, serde_json::Value>>,
    /// Each line's self weight, to leave the lightest out first within a budget.
    #[serde(skip)]
    weights: Vec<i64>,
}

#[derive(Serialize)]
struct ScriptJson {
    file: Option<String>,
    origin: &'static str,
    /// Its number of lines (null without a source).
    lines_total: Option<usize>,
}

/// The characters of a line's text an answer within a budget keeps.
const BUDGET_TEXT_CHARS: usize = 200;

/// A function's lines, which a budget leaves out the lightest first (the kept stay in line order).
struct LinesByWeight<'a>(&'a mut AnnotatedJson);

impl Rows for LinesByWeight<'_> {
    fn name(&self) -> &'static str {
        "lines"
    }

    fn sizes(&self) -> Vec<usize> {
        self.heaviest_first().into_iter().map(|i| super::budget::compact_len(&self.0.lines[i])).collect()
    }

    fn keep(&mut self, n: usize) {
        let mut kept = vec![false; self.0.lines.len()];
        for i in self.heaviest_first().into_iter().take(n) {
            kept[i] = true;
        }
        let mut k = kept.iter();
        self.0.lines.retain(|_| k.next().copied().unwrap_or(false));
    }
}

impl LinesByWeight<'_> {
    fn heaviest_first(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.0.lines.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(self.0.weights.get(i).copied().unwrap_or(0)), i));
        order
    }
}

pub(crate) fn annotate(doc: &super::AnnotateDocument<'_>, budget: Option<usize>) -> String {
    use super::annotate_columns::{LineCells, Listing, LINE_FIELDS};
    use super::cells::json_row;
    use super::top_columns::{function_json, RowOf};

    let graph = doc.graph;
    let annotated = |f: &super::AnnotatedFunction| {
        let listing = Listing::of(doc, f);
        let (mut lines, mut weights) = (Vec::new(), Vec::new());
        for line in listing.lines() {
            let cells = LineCells { listing: &listing, amounts: listing.amounts(line) };
            weights.push(cells.amounts.self_amount.weight);
            let mut row = json_row(LINE_FIELDS, |value| value(&cells));
            // Within a budget, a line of a minified bundle (a megabyte long) must not push out
            // every other: its text is cut.
            if budget.is_some() {
                if let Some(serde_json::Value::String(text)) = row.get_mut("text") {
                    if text.chars().count() > BUDGET_TEXT_CHARS {
                        *text = format!("{}…", text.chars().take(BUDGET_TEXT_CHARS).collect::<String>());
                    }
                }
            }
            lines.push(row);
        }
        let source = &f.source;
        AnnotatedJson {
            function: function_json(RowOf { by: GroupBy::Function, whole: graph.total() }, listing.row),
            script: ScriptJson {
                file: source.file.clone(),
                origin: source.origin.as_str(),
                lines_total: (source.origin != super::SourceOrigin::None).then_some(source.lines.len()),
            },
            call_sites: f.lines.call_sites,
            unlined: f.lines.unlined.weight,
            unlined_samples: f.lines.unlined.samples,
            lines,
            weights,
        }
    };
    let mut all: Vec<AnnotatedJson> = doc.functions.iter().map(annotated).collect();
    let single = all.len() == 1 && !doc.many;
    let mut json = AnnotateJson {
        source: doc.source,
        format: doc.meta.format.as_str(),
        unit: unit_name(graph.unit()),
        total: graph.total(),
        samples: graph.samples(),
        warnings: warnings(doc.meta),
        one: if single { all.pop() } else { None },
        functions: if single { None } else { Some(all) },
    };
    let Some(budget) = budget else { return pretty(&json) };
    serde_within(&mut json, budget, |j| {
        let mut lists: Vec<Box<dyn Rows + '_>> = Vec::new();
        lists.extend(j.one.as_mut().map(|one| Box::new(LinesByWeight(one)) as Box<dyn Rows>));
        for f in j.functions.iter_mut().flatten() {
            lists.push(Box::new(LinesByWeight(f)));
        }
        lists
    })
}
