//! `top`'s rows, defined once: each field's key (JSON and CSV), its value, and each column a
//! table or Markdown shows (header, text, alignment, how it fits). The formats render from these
//! lists; a new column of `top` is a field here (and its number in the analysis), nothing more.

use cpuprof_analysis::{GroupBy, TopRow};
use serde_json::Map;

use super::cells::{self, Cell, Field};
use super::words::{top_amount, top_location};
use super::TopDocument;

/// What a row's fields are a function of besides the row: what rows stand for, and the
/// total their percentages are of (a `top` report's, or the profile's for one function's row
/// in another report).
#[derive(Clone, Copy)]
pub(crate) struct RowOf {
    pub(crate) by: GroupBy,
    pub(crate) whole: i64,
}

impl RowOf {
    fn of(doc: &TopDocument<'_>) -> Self {
        RowOf { by: doc.by, whole: doc.report.total }
    }

    fn pct(self, value: i64) -> f64 {
        super::words::pct_of(value, self.whole)
    }
}

/// How a row gives a field's value.
type Value = fn(RowOf, &TopRow) -> Cell;

/// Every field of a `top` row, in JSON's order.
const FIELDS: &[Field<Value>] = &[
    // The function's stable handle (rows by function only).
    Field { key: "id", value: |doc, r| text_if(doc.by == GroupBy::Function, || r.handle()) },
    // The plain name: a tier's marker is in `tier`, not here.
    Field { key: "name", value: |_, r| Cell::Text(Some(r.plain_name().to_owned())) },
    // The V8 tier of the function's code when tiers are kept apart (`--split-tiers`).
    Field { key: "tier", value: |_, r| r.tier.map_or(Cell::Absent, |t| Cell::Text(Some(t.as_str().to_owned()))) },
    Field { key: "file", value: |_, r| Cell::Text(r.file.clone()) },
    Field { key: "line", value: |_, r| Cell::Int(r.line.map(i64::from)) },
    Field { key: "column", value: |_, r| Cell::Int(r.column.map(i64::from)) },
    Field {
        key: "kind",
        value: |doc, r| Cell::Text(Some(if doc.by == GroupBy::Category { "category" } else { r.kind.as_str() }.into())),
    },
    Field { key: "self", value: |_, r| Cell::Int(Some(r.self_weight)) },
    Field { key: "self_samples", value: |_, r| Cell::Int(Some(r.self_samples)) },
    Field { key: "self_pct", value: |of, r| Cell::Num(of.pct(r.self_weight)) },
    Field { key: "total", value: |_, r| Cell::Int(Some(r.total_weight)) },
    Field { key: "total_samples", value: |_, r| Cell::Int(Some(r.total_samples)) },
    Field { key: "total_pct", value: |of, r| Cell::Num(of.pct(r.total_weight)) },
];

/// The fields CSV writes, in its columns' order (a CSV's columns are read by position: its
/// order never changes, new fields go last).
pub(crate) const CSV: &[&str] = &[
    "name",
    "file",
    "line",
    "column",
    "kind",
    "self",
    "self_samples",
    "self_pct",
    "total",
    "total_samples",
    "total_pct",
    "tier",
];

fn text_if(shown: bool, text: impl FnOnce() -> String) -> Cell {
    if shown {
        Cell::Text(Some(text()))
    } else {
        Cell::Absent
    }
}

/// A row as JSON: every field but the absent ones, in [`FIELDS`]' order.
pub(crate) fn json_row(doc: &TopDocument<'_>, row: &TopRow) -> Map<String, serde_json::Value> {
    function_json(RowOf::of(doc), row)
}

/// A row as JSON (see [`json_row`]), its percentages of `of.whole`.
pub(crate) fn function_json(of: RowOf, row: &TopRow) -> Map<String, serde_json::Value> {
    cells::json_row(FIELDS, |value| value(of, row))
}

/// A row's CSV cells, in [`CSV`]'s order.
pub(crate) fn csv_row(doc: &TopDocument<'_>, row: &TopRow) -> Vec<String> {
    cells::csv_row(&[FIELDS], CSV, |value| value(RowOf::of(doc), row))
}

/// How a shown column fits a narrow terminal.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// A number: always whole, right-aligned.
    Number,
    /// The row's name: shortened last, from its middle.
    Name,
    /// Where it is (`file:line:column`): shortened first, from the left (rows by function only).
    Location,
}

/// A column a table or Markdown shows.
pub(crate) struct Shown {
    pub(crate) header: fn(&TopDocument<'_>) -> &'static str,
    pub(crate) text: fn(&TopDocument<'_>, &TopRow) -> String,
    pub(crate) fit: Fit,
}

/// The columns tables and Markdown show, in order.
pub(crate) const SHOWN: &[Shown] = &[
    Shown { header: |_| "self", text: |doc, r| top_amount(doc, r.self_weight), fit: Fit::Number },
    Shown { header: |_| "self%", text: |doc, r| format!("{:.1}%", doc.pct(r.self_weight)), fit: Fit::Number },
    Shown { header: |_| "total", text: |doc, r| top_amount(doc, r.total_weight), fit: Fit::Number },
    Shown { header: |_| "total%", text: |doc, r| format!("{:.1}%", doc.pct(r.total_weight)), fit: Fit::Number },
    Shown { header: what, text: |_, r| r.name.clone(), fit: Fit::Name },
    Shown { header: |_| "location", text: |_, r| top_location(r), fit: Fit::Location },
];

/// What a row stands for, as the name column's header says it.
fn what(doc: &TopDocument<'_>) -> &'static str {
    match doc.by {
        GroupBy::File => "file",
        GroupBy::Package => "package",
        GroupBy::Category => "category",
        _ => "function",
    }
}

/// The columns `doc` shows: the location only for rows that have one (not files, packages or
/// categories).
pub(crate) fn shown(doc: &TopDocument<'_>) -> impl Iterator<Item = &'static Shown> {
    let groups = doc.by_group();
    SHOWN.iter().filter(move |c| c.fit != Fit::Location || !groups)
}
