//! A call tree's CSV rows (`tree`, `callers`, `callees`), defined once: each field's key and
//! value for a node, or for the function a `callers`/`callees` answer is about. JSON writes the
//! same identity and numbers as it streams the tree (json.rs's `Writer::identity`, `numbers`).

use cpuprof_analysis::{Amount, TopRow};

use super::cells::{self, Cell, Field};
use super::words::pct_of;

/// A row of the CSV: a tree's node, or the function the answer is about.
pub(crate) struct NodeRow<'a> {
    /// `node` in a tree; `function`, `caller` or `callee` in an answer about a function.
    pub(crate) relation: &'a str,
    /// 0 for the function, 1 for a tree's first level.
    pub(crate) depth: usize,
    /// Its function (`None`: the root).
    pub(crate) function: Option<&'a TopRow>,
    pub(crate) self_amount: Amount,
    pub(crate) total: Amount,
    /// What `total_pct` is a share of.
    pub(crate) whole: i64,
}

/// How a row gives a field's value.
type Value = fn(&NodeRow<'_>) -> Cell;

/// Every field of a row, in its columns' order (a CSV's columns are read by position: its
/// order never changes, new fields go last).
const FIELDS: &[Field<Value>] = &[
    Field { key: "relation", value: |n| Cell::Text(Some(n.relation.to_owned())) },
    Field { key: "depth", value: |n| Cell::Int(Some(n.depth as i64)) },
    Field { key: "name", value: |n| Cell::Text(Some(n.function.map_or("(root)", TopRow::plain_name).to_owned())) },
    Field { key: "file", value: |n| Cell::Text(n.function.and_then(|f| f.file.clone())) },
    Field { key: "line", value: |n| Cell::Int(n.function.and_then(|f| f.line).map(i64::from)) },
    Field { key: "column", value: |n| Cell::Int(n.function.and_then(|f| f.column).map(i64::from)) },
    Field { key: "kind", value: |n| Cell::Text(Some(n.function.map_or("root", |f| f.kind.as_str()).to_owned())) },
    Field { key: "self", value: |n| Cell::Int(Some(n.self_amount.weight)) },
    Field { key: "self_samples", value: |n| Cell::Int(Some(n.self_amount.samples)) },
    Field { key: "total", value: |n| Cell::Int(Some(n.total.weight)) },
    Field { key: "total_samples", value: |n| Cell::Int(Some(n.total.samples)) },
    Field { key: "total_pct", value: |n| Cell::Num(pct_of(n.total.weight, n.whole)) },
    // The V8 tier when tiers are kept apart (`--split-tiers`), else empty.
    Field { key: "tier", value: |n| Cell::Text(n.function.and_then(|f| f.tier).map(|t| t.as_str().to_owned())) },
];

/// CSV's columns: every field, in order.
pub(crate) fn csv_header() -> Vec<&'static str> {
    FIELDS.iter().map(|f| f.key).collect()
}

/// A row's CSV cells.
pub(crate) fn csv_row(row: &NodeRow<'_>) -> Vec<String> {
    cells::csv_all(FIELDS, |value| value(row))
}
