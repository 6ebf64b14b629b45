//! A report row's field values, and how JSON and CSV write them: what every report's column
//! list (`top_columns`, `diff_columns`, `block_columns`, `timeline_columns`, `tree_columns`)
//! gives its fields.

use serde_json::{Map, Value};

/// A field's value in a row.
pub(crate) enum Cell {
    /// Not in the row (JSON leaves the key out; CSV writes an empty cell).
    Absent,
    /// A whole number, or null when unknown.
    Int(Option<i64>),
    /// A number (JSON: the number; CSV: 4 decimals).
    Num(f64),
    /// A number that may be unknown (JSON: the number or null; CSV: 4 decimals or empty).
    MaybeNum(Option<f64>),
    /// A probability, small as it may be (JSON: the number; CSV: in scientific notation).
    Small(f64),
    /// Yes or no.
    Bool(bool),
    /// Text, or null when unknown.
    Text(Option<String>),
    /// Whole numbers, one per run (JSON: an array; CSV: separated by `;`).
    Ints(Vec<i64>),
}

/// A field of a report's rows: its key in JSON and its header in CSV, and how a row gives its
/// value (`V`: a function of the report's document and row).
pub(crate) struct Field<V> {
    pub(crate) key: &'static str,
    pub(crate) value: V,
}

/// A row as a JSON object: `fields` in order, but the absent ones; `cell` gives a field's value.
pub(crate) fn json_row<V>(fields: &[Field<V>], cell: impl Fn(&V) -> Cell) -> Map<String, Value> {
    let mut out = Map::new();
    for field in fields {
        let (key, cell) = (field.key, cell(&field.value));
        let value = match cell {
            Cell::Absent => continue,
            Cell::Int(v) => v.map_or(Value::Null, Value::from),
            Cell::Num(v) | Cell::Small(v) => Value::from(v),
            Cell::MaybeNum(v) => v.map_or(Value::Null, Value::from),
            Cell::Bool(v) => Value::from(v),
            Cell::Text(v) => v.map_or(Value::Null, Value::from),
            Cell::Ints(v) => Value::from(v),
        };
        out.insert(key.to_owned(), value);
    }
    out
}

/// A row's CSV cells: those of the `columns` named, in order, from the lists of `fields`.
pub(crate) fn csv_row<V>(fields: &[&[Field<V>]], columns: &[&str], cell: impl Fn(&V) -> Cell) -> Vec<String> {
    let value = |key: &str| {
        let field = fields.iter().flat_map(|list| list.iter()).find(|f| f.key == key);
        // A column named wrong would be empty in every row: every test that writes CSV says so.
        debug_assert!(field.is_some(), "the CSV column {key} is no field of the row");
        field.map_or(Cell::Absent, |f| cell(&f.value))
    };
    columns.iter().map(|key| csv_text(value(key))).collect()
}

/// A row's CSV cells: every one of `fields`, in order (for a CSV whose columns are its fields).
pub(crate) fn csv_all<V>(fields: &[Field<V>], cell: impl Fn(&V) -> Cell) -> Vec<String> {
    fields.iter().map(|f| csv_text(cell(&f.value))).collect()
}

/// A cell as CSV writes it.
fn csv_text(cell: Cell) -> String {
    match cell {
        Cell::Absent | Cell::Int(None) | Cell::Text(None) | Cell::MaybeNum(None) => String::new(),
        Cell::Int(Some(v)) => v.to_string(),
        Cell::Num(v) | Cell::MaybeNum(Some(v)) => format!("{v:.4}"),
        Cell::Small(v) => format!("{v:e}"),
        Cell::Bool(v) => v.to_string(),
        Cell::Text(Some(v)) => v,
        Cell::Ints(v) => v.iter().map(ToString::to_string).collect::<Vec<_>>().join(";"),
    }
}
