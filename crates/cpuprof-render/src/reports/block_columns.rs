//! `blocks`' rows, defined once: CSV's fields (key and value) and the columns a table and
//! Markdown show (header, text, alignment, widest). JSON's blocks are objects with the functions
//! nested (json.rs); CSV flattens them into these fields.

use cpuprof_analysis::{Block, FunctionRef};

use super::cells::{self, Cell, Field};
use super::fit::NAME_WIDTH;
use super::words::{block_duration, blocked_in, function_text};
use crate::time::format_ns;

/// How a block gives a field's value.
type Value = fn(&Block) -> Cell;

fn name(f: Option<&FunctionRef>) -> Cell {
    Cell::Text(Some(f.map(|f| f.name.to_string()).unwrap_or_default()))
}

fn file(f: Option<&FunctionRef>) -> Cell {
    Cell::Text(f.and_then(|f| f.file.as_deref()).map(str::to_owned))
}

fn line(f: Option<&FunctionRef>) -> Cell {
    Cell::Int(f.and_then(|f| f.line).map(i64::from))
}

/// Every field of a block's CSV row, in its columns' order (a CSV's columns are read by
/// position: its order never changes, new fields go last).
const FIELDS: &[Field<Value>] = &[
    Field { key: "start_ns", value: |k| Cell::Int(Some(k.start_ns)) },
    Field { key: "duration_ns", value: |k| Cell::Int(Some(k.duration_ns)) },
    Field { key: "samples", value: |k| Cell::Int(Some(k.samples)) },
    Field { key: "entry_name", value: |k| name(Some(&k.entry)) },
    Field { key: "entry_file", value: |k| file(Some(&k.entry)) },
    Field { key: "entry_line", value: |k| line(Some(&k.entry)) },
    Field { key: "common_name", value: |k| name(k.common.as_ref()) },
    Field { key: "common_file", value: |k| file(k.common.as_ref()) },
    Field { key: "common_line", value: |k| line(k.common.as_ref()) },
    // The function with the most self time in the block, and that time.
    Field { key: "top_name", value: |k| name(k.top.first().map(|(f, _)| f)) },
    Field {
        key: "top_self",
        value: |k| Cell::Text(Some(k.top.first().map(|(_, w)| w.to_string()).unwrap_or_default())),
    },
    Field {
        key: "cut",
        value: |k| Cell::Text(Some(k.cut.map(cpuprof_analysis::BlockCut::as_str).unwrap_or_default().into())),
    },
    Field { key: "native_name", value: |k| name(k.native.as_ref()) },
];

/// CSV's columns: every field, in order.
pub(crate) fn csv_header() -> Vec<&'static str> {
    FIELDS.iter().map(|f| f.key).collect()
}

/// A block's CSV cells.
pub(crate) fn csv_row(k: &Block) -> Vec<String> {
    cells::csv_all(FIELDS, |value| value(k))
}

/// A column a table and Markdown show.
pub(crate) struct Shown {
    pub(crate) header: &'static str,
    /// The text, before a format escapes it.
    pub(crate) text: fn(&Block) -> String,
    /// A number (right-aligned, kept whole), else text that a narrow table shortens.
    pub(crate) number: bool,
    /// The widest a table shows it (characters).
    pub(crate) widest: usize,
}

/// The columns, in order: the numbers, then the text columns.
pub(crate) const SHOWN: [Shown; 5] = [
    Shown { header: "start", text: |k| format_ns(k.start_ns), number: true, widest: usize::MAX },
    Shown { header: "duration", text: block_duration, number: true, widest: usize::MAX },
    Shown { header: "entry", text: |k| function_text(&k.entry), number: false, widest: 40 },
    Shown { header: "blocked in", text: blocked_in, number: false, widest: NAME_WIDTH },
    Shown { header: "top self", text: top_self, number: false, widest: NAME_WIDTH },
];

/// The order a narrow table gives the text columns room in (among them: what tells blocks
/// apart first): where they were blocked, then the entry, then the top functions.
pub(crate) const TEXT_PRIORITY: [usize; 3] = [1, 0, 2];

/// The block's three functions with the most self time, with that time.
fn top_self(k: &Block) -> String {
    let top: Vec<String> = k.top.iter().take(3).map(|(f, w)| format!("{} {}", f.name, format_ns(*w))).collect();
    top.join(", ")
}
