//! The timeline's bucket rows, defined once: CSV's fields (key and value), the category columns
//! a table shows (header, and the order a narrow terminal gives them up in) and Markdown's
//! columns. JSON's buckets nest the categories and the top function (json.rs).

use cpuprof_analysis::{Bucket, Category};

use super::cells::{self, Cell, Field};
use super::words::{function_text, pct_of};
use crate::time::format_ns;

/// How a bucket gives a field's value.
type Value = Box<dyn Fn(&Bucket) -> Cell>;

fn int(value: fn(&Bucket) -> i64) -> Value {
    Box::new(move |b| Cell::Int(Some(value(b))))
}

/// The top function's field: text, or empty in a bucket without one.
fn top(value: fn(&(cpuprof_analysis::FunctionRef, i64)) -> String) -> Value {
    Box::new(move |b| Cell::Text(Some(b.top.as_ref().map(value).unwrap_or_default())))
}

/// Every field of a bucket's CSV row, in its columns' order (a CSV's columns are read by
/// position: its order never changes, new fields go last): the bucket, its busy time and
/// three categories first, every category's time (so `idle`, `gc` and `program` are named
/// twice, with the same values), then the function with the most self time.
pub(crate) fn csv_fields() -> Vec<Field<Value>> {
    let mut fields = vec![
        Field { key: "start_ns", value: int(|b| b.start_ns) },
        Field { key: "end_ns", value: int(|b| b.end_ns) },
        Field { key: "samples", value: int(|b| b.samples) },
        Field { key: "busy", value: int(Bucket::busy) },
        Field { key: "idle", value: int(|b| b.of(Category::Idle)) },
        Field { key: "gc", value: int(|b| b.of(Category::Gc)) },
        Field { key: "program", value: int(|b| b.of(Category::Program)) },
    ];
    fields.extend(
        Category::ALL
            .map(|c| Field { key: c.as_str(), value: Box::new(move |b: &Bucket| Cell::Int(Some(b.of(c)))) as Value }),
    );
    fields.extend([
        Field { key: "top_name", value: top(|(f, _)| f.name.to_string()) },
        Field { key: "top_file", value: top(|(f, _)| f.file.as_deref().unwrap_or_default().to_owned()) },
        Field { key: "top_line", value: top(|(f, _)| f.line.map(|l| l.to_string()).unwrap_or_default()) },
        Field { key: "top_self", value: top(|(_, w)| w.to_string()) },
    ]);
    fields
}

/// A bucket's CSV cells, for `fields` ([`csv_fields`]).
pub(crate) fn csv_row(fields: &[Field<Value>], b: &Bucket) -> Vec<String> {
    cells::csv_all(fields, |value| value(b))
}

/// The category columns a table shows, in order, with their headers (a category no bucket has
/// is left out).
pub(crate) const TABLE_CATEGORIES: [(Category, &str); 7] = [
    (Category::App, "app"),
    (Category::Dependencies, "deps"),
    (Category::Node, "node"),
    (Category::Native, "native"),
    (Category::Gc, "gc"),
    (Category::Program, "program"),
    (Category::Idle, "idle"),
];

/// The category columns a narrow terminal gives up, the least telling first (busy and idle
/// stay, and the chart has them all).
pub(crate) const TABLE_DROPPED: [Category; 6] =
    [Category::Program, Category::Native, Category::Node, Category::Dependencies, Category::Gc, Category::App];

/// A column of Markdown's bucket table: its header, whether it is right-aligned, its text
/// (given the bucket and its whole time, busy and idle).
pub(crate) struct MarkdownColumn {
    pub(crate) header: &'static str,
    pub(crate) right: bool,
    pub(crate) text: fn(&Bucket, i64) -> String,
}

/// Markdown's bucket columns, in order: shares of the bucket's time, then its top function.
pub(crate) const MARKDOWN: &[MarkdownColumn] = &[
    MarkdownColumn { header: "start", right: true, text: |b, _| format_ns(b.start_ns) },
    MarkdownColumn { header: "busy", right: true, text: |b, whole| share(b.busy(), whole) },
    MarkdownColumn { header: "gc", right: true, text: |b, whole| share(b.of(Category::Gc), whole) },
    MarkdownColumn { header: "idle", right: true, text: |b, whole| share(b.of(Category::Idle), whole) },
    MarkdownColumn { header: "program", right: true, text: |b, whole| share(b.of(Category::Program), whole) },
    MarkdownColumn {
        header: "top function",
        right: false,
        text: |b, _| b.top.as_ref().map(|(f, _)| function_text(f)).unwrap_or_default(),
    },
];

/// `v` as a whole percentage of `whole`.
fn share(v: i64, whole: i64) -> String {
    format!("{:.0}%", pct_of(v, whole))
}
