//! CSV with a header row: `top` and `diff`.

use super::words::unit_name;
use super::{DiffDocument, TopDocument};

/// One header row, then one row per entry; the `csv` crate quotes fields that need it
/// (commas, quotes, newlines in names).
pub(crate) fn top(doc: &TopDocument<'_>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
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
    ];
    // Writing to a Vec cannot fail.
    let _ = w.write_record(header);
    let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
    for r in doc.rows() {
        let _ = w.write_record([
            r.name.clone(),
            r.file.clone().unwrap_or_default(),
            opt(r.line),
            opt(r.column),
            r.kind.as_str().to_owned(),
            r.self_weight.to_string(),
            r.self_samples.to_string(),
            format!("{:.4}", doc.pct(r.self_weight)),
            r.total_weight.to_string(),
            r.total_samples.to_string(),
            format!("{:.4}", doc.pct(r.total_weight)),
        ]);
    }
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

/// One header row, then one row per function.
pub(crate) fn diff(doc: &DiffDocument<'_>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
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
    ]);
    let unit = unit_name(doc.report.unit);
    for r in doc.rows {
        let f = |v: f64| format!("{v:.4}");
        let _ = w.write_record([
            r.name.clone(),
            r.file.clone().unwrap_or_default(),
            r.line.map(|l| l.to_string()).unwrap_or_default(),
            r.verdict.as_str().to_owned(),
            r.significant.to_string(),
            format!("{:e}", r.p_value),
            f(r.base.self_per_run),
            f(r.new.self_per_run),
            f(r.self_delta()),
            f(r.base.self_pct),
            f(r.new.self_pct),
            f(r.self_delta_pp()),
            f(r.base.total_per_run),
            f(r.new.total_per_run),
            f(r.total_delta()),
            f(r.base.total_pct),
            f(r.new.total_pct),
            f(r.total_delta_pp()),
            unit.to_owned(),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
