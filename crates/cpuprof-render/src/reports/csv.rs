//! CSV with a header row: `top` and `diff`; call trees as one row per node, depth-first.

use cpuprof_analysis::{Amount, CallGraph, CallTree};

use super::tree_columns::{self, NodeRow};
use super::{BlocksDocument, CallsDocument, DiffDocument, TimelineDocument, TopDocument, TreeDocument};

/// One header row, then one row per entry; the `csv` crate quotes fields that need it
/// (commas, quotes, newlines in names).
pub(crate) fn top(doc: &TopDocument<'_>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = w.write_record(super::top_columns::CSV);
    for r in doc.rows() {
        let _ = w.write_record(super::top_columns::csv_row(doc, r));
    }
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

/// One header row, then one row per function.
pub(crate) fn diff(doc: &DiffDocument<'_>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(super::diff_columns::CSV);
    for r in doc.rows {
        let _ = w.write_record(super::diff_columns::csv_row(doc, r));
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// Rows of `tree`'s nodes, depth-first (parents before children), each with its depth (1 for
/// the first level) and `relation` in the first column.
fn tree_rows(w: &mut csv::Writer<Vec<u8>>, graph: &CallGraph<'_>, tree: &CallTree, relation: &str, whole: i64) {
    let mut todo: Vec<(usize, usize)> = tree.roots.iter().rev().map(|n| (*n, 1)).collect();
    while let Some((n, depth)) = todo.pop() {
        let node = &tree.nodes[n];
        let function = node.function.map(|f| &graph.functions()[f]);
        let row = NodeRow { relation, depth, function, self_amount: node.self_amount, total: node.total, whole };
        let _ = w.write_record(tree_columns::csv_row(&row));
        todo.extend(node.children.iter().rev().map(|c| (*c, depth + 1)));
    }
}

/// One row per node, depth-first; `total_pct` of the profile's total.
pub(crate) fn tree(doc: &TreeDocument<'_>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(tree_columns::csv_header());
    tree_rows(&mut w, doc.graph, doc.tree, "node", doc.graph.total());
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The function (`relation` "function"), then its callers and callees (depth-first);
/// `total_pct` is a share of the function's total.
pub(crate) fn calls(doc: &CallsDocument<'_>) -> String {
    let graph = doc.graph;
    let row = &graph.functions()[doc.function];
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(tree_columns::csv_header());
    let _ = w.write_record(tree_columns::csv_row(&NodeRow {
        relation: "function",
        depth: 0,
        function: Some(row),
        self_amount: Amount { weight: row.self_weight, samples: row.self_samples },
        total: Amount { weight: row.total_weight, samples: row.total_samples },
        whole: graph.total(),
    }));
    if let Some(tree) = doc.callers {
        tree_rows(&mut w, graph, tree, "caller", row.total_weight);
    }
    if let Some(tree) = doc.callees {
        tree_rows(&mut w, graph, tree, "callee", row.total_weight);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// One row per bucket: times, then the top function.
pub(crate) fn timeline(doc: &TimelineDocument<'_>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let fields = super::timeline_columns::csv_fields();
    // Writing to a Vec cannot fail.
    let _ = w.write_record(fields.iter().map(|f| f.key));
    for b in &doc.timeline.buckets {
        let _ = w.write_record(super::timeline_columns::csv_row(&fields, b));
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// One row per block, in time order.
pub(crate) fn blocks(doc: &BlocksDocument<'_>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(super::block_columns::csv_header());
    for k in &doc.blocks.blocks {
        let _ = w.write_record(super::block_columns::csv_row(k));
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// One row per line shown (folded runs are not rows), each with its function's handle, name
/// and file first.
pub(crate) fn annotate(doc: &super::AnnotateDocument<'_>) -> String {
    use super::annotate_columns::{LineCells, Listing, LINE_FIELDS};

    let mut w = csv::Writer::from_writer(Vec::new());
    let header = ["function_id", "function", "file"].into_iter().chain(LINE_FIELDS.iter().map(|f| f.key));
    let _ = w.write_record(header);
    for f in doc.functions {
        let listing = Listing::of(doc, f);
        let row = listing.row;
        for line in listing.lines() {
            let cells = LineCells { listing: &listing, amounts: listing.amounts(line) };
            let head = [row.handle(), row.plain_name().to_owned(), row.file.clone().unwrap_or_default()];
            let _ = w.write_record(head.into_iter().chain(super::cells::csv_all(LINE_FIELDS, |value| value(&cells))));
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
