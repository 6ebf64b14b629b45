//! `diff`'s rows, defined once: each field's key (JSON and CSV) and value, and the columns a
//! table shows (with the order a narrow terminal gives them up in). JSON, CSV and the table
//! render from these lists (Markdown's table, with links and code spans, is markdown.rs'
//! `DIFF_COLUMNS`); a new column of `diff` is a field here.

use cpuprof_analysis::DiffRow;
use serde_json::Map;

use super::cells::{self, Cell, Field};
use super::words::{delta_text, pcts, ratio_text, unit_name, verdict_text};
use super::DiffDocument;

/// How a row gives a field's value.
type Value = fn(&DiffDocument<'_>, &DiffRow) -> Cell;

/// Every field of a `diff` row, in JSON's order (`explain`, for the rows explained, follows).
const FIELDS: &[Field<Value>] = &[
    Field { key: "name", value: |_, r| Cell::Text(Some(r.name.clone())) },
    Field { key: "file", value: |_, r| Cell::Text(r.file.clone()) },
    Field { key: "line", value: |_, r| Cell::Int(r.line.map(i64::from)) },
    Field { key: "kind", value: |_, r| Cell::Text(Some(r.kind.as_str().to_owned())) },
    Field { key: "verdict", value: |_, r| Cell::Text(Some(r.verdict.as_str().to_owned())) },
    Field { key: "significant", value: |_, r| Cell::Bool(r.significant) },
    Field { key: "p_value", value: |_, r| Cell::Small(r.p_value) },
    Field { key: "base_self", value: |_, r| Cell::Num(r.base.self_per_run) },
    Field { key: "new_self", value: |_, r| Cell::Num(r.new.self_per_run) },
    Field { key: "self_delta", value: |_, r| Cell::Num(r.self_delta()) },
    Field { key: "self_ratio", value: |_, r| Cell::MaybeNum(r.self_ratio()) },
    Field { key: "base_total", value: |_, r| Cell::Num(r.base.total_per_run) },
    Field { key: "new_total", value: |_, r| Cell::Num(r.new.total_per_run) },
    Field { key: "total_delta", value: |_, r| Cell::Num(r.total_delta()) },
    Field { key: "total_ratio", value: |_, r| Cell::MaybeNum(r.total_ratio()) },
    Field { key: "base_self_pct", value: |_, r| Cell::Num(r.base.self_pct) },
    Field { key: "new_self_pct", value: |_, r| Cell::Num(r.new.self_pct) },
    Field { key: "self_delta_pp", value: |_, r| Cell::Num(r.self_delta_pp()) },
    Field { key: "base_total_pct", value: |_, r| Cell::Num(r.base.total_pct) },
    Field { key: "new_total_pct", value: |_, r| Cell::Num(r.new.total_pct) },
    Field { key: "total_delta_pp", value: |_, r| Cell::Num(r.total_delta_pp()) },
    Field { key: "base_self_samples", value: |_, r| Cell::Int(Some(r.base.self_samples)) },
    Field { key: "new_self_samples", value: |_, r| Cell::Int(Some(r.new.self_samples)) },
    Field { key: "base_total_samples", value: |_, r| Cell::Int(Some(r.base.total_samples)) },
    Field { key: "new_total_samples", value: |_, r| Cell::Int(Some(r.new.total_samples)) },
    // Each run's self and total weight, in the order given.
    Field { key: "base_self_runs", value: |_, r| Cell::Ints(r.base.self_runs.clone()) },
    Field { key: "new_self_runs", value: |_, r| Cell::Ints(r.new.self_runs.clone()) },
    Field { key: "base_total_runs", value: |_, r| Cell::Ints(r.base.total_runs.clone()) },
    Field { key: "new_total_runs", value: |_, r| Cell::Ints(r.new.total_runs.clone()) },
];

/// The fields only CSV writes: a CSV row stands alone, so it says its unit.
const CSV_ONLY: &[Field<Value>] =
    &[Field { key: "unit", value: |doc, _| Cell::Text(Some(unit_name(doc.report.unit).into())) }];

/// The fields CSV writes, in its columns' order (a CSV's columns are read by position: its
/// order never changes, new fields go last).
pub(crate) const CSV: &[&str] = &[
    "name",
    "file",
    "line",
    "verdict",
    "significant",
    "p_value",
    "base_self",
    "new_self",
    "self_delta",
    "base_self_pct",
    "new_self_pct",
    "self_delta_pp",
    "base_total",
    "new_total",
    "total_delta",
    "base_total_pct",
    "new_total_pct",
    "total_delta_pp",
    "unit",
];

/// A row as JSON: every field but the absent ones, in [`FIELDS`]' order.
pub(crate) fn json_row(doc: &DiffDocument<'_>, row: &DiffRow) -> Map<String, serde_json::Value> {
    cells::json_row(FIELDS, |value| value(doc, row))
}

/// A row's CSV cells, in [`CSV`]'s order.
pub(crate) fn csv_row(doc: &DiffDocument<'_>, row: &DiffRow) -> Vec<String> {
    cells::csv_row(&[FIELDS, CSV_ONLY], CSV, |value| value(doc, row))
}

/// A number column a table shows (the function and its location follow them).
pub(crate) struct Shown {
    pub(crate) header: &'static str,
    pub(crate) text: fn(&DiffDocument<'_>, &DiffRow) -> String,
    /// Left-aligned (else right).
    pub(crate) left: bool,
    /// Red or green with the verdict, in colour.
    pub(crate) painted: bool,
    /// When a narrow terminal gives it up: 0 never, then 2 before 1.
    pub(crate) dropped: u8,
    /// Its shorter text, for a terminal too narrow for the columns kept.
    pub(crate) short: fn(String) -> String,
}

/// The number columns tables show, in order. A narrow terminal loses the p value, then the
/// two shares (Δ says the change in points), then the points and the words of "not significant".
pub(crate) const SHOWN: &[Shown] = &[
    Shown {
        header: "verdict",
        text: |_, r| verdict_text(r),
        left: true,
        painted: true,
        dropped: 0,
        short: |t| t.replace(" (not significant)", " (n.s.)"),
    },
    Shown {
        header: "Δ",
        text: delta_text,
        left: false,
        painted: true,
        dropped: 0,
        short: |mut t| {
            if let Some(at) = t.find(" (") {
                t.truncate(at);
            }
            t
        },
    },
    Shown {
        header: "ratio",
        text: |doc, r| ratio_text(r, doc.report.metric),
        left: false,
        painted: false,
        dropped: 0,
        short: same,
    },
    Shown {
        header: "base%",
        text: |doc, r| format!("{:.2}%", pcts(doc, r).0),
        left: false,
        painted: false,
        dropped: 1,
        short: same,
    },
    Shown {
        header: "new%",
        text: |doc, r| format!("{:.2}%", pcts(doc, r).1),
        left: false,
        painted: false,
        dropped: 1,
        short: same,
    },
    Shown {
        header: "p",
        text: |_, r| format!("{:.2e}", r.p_value),
        left: false,
        painted: false,
        dropped: 2,
        short: same,
    },
];

fn same(text: String) -> String {
    text
}
