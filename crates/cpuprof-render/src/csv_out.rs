use crate::TopDocument;

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
