use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
use cpuprof_analysis::{GroupBy, Share, Summary, TopRow, Weight};
use cpuprof_model::SourceFormat;

use crate::text::{display_file, truncate, visible};
use crate::time::format_ns;
use crate::TopDocument;

const NAME_WIDTH: usize = 60;
const LOCATION_WIDTH: usize = 70;

/// The summary line, then the table.
pub(crate) fn top(doc: &TopDocument<'_>) -> String {
    let mut out = header(doc);
    out.push('\n');
    if doc.report.rows.is_empty() {
        out.push_str(if doc.report.samples == 0 {
            "no samples: the profile recorded nothing to report\n"
        } else {
            "no rows: every sample was filtered out\n"
        });
        return out;
    }
    let mut table = Table::new();
    table.load_preset(UTF8_BORDERS_ONLY).force_no_tty().set_content_arrangement(ContentArrangement::Disabled);
    let what = match doc.by {
        GroupBy::File => "file",
        GroupBy::Package => "package",
        _ => "function",
    };
    let mut head = vec!["self", "self%", "total", "total%", what];
    if !doc.by_group() {
        head.push("location");
    }
    table.set_header(head);
    for row in doc.rows() {
        let mut cells = vec![
            Cell::new(amount(doc, row.self_weight)).set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.1}%", doc.pct(row.self_weight))).set_alignment(CellAlignment::Right),
            Cell::new(amount(doc, row.total_weight)).set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.1}%", doc.pct(row.total_weight))).set_alignment(CellAlignment::Right),
            Cell::new(truncate(&visible(&row.name), NAME_WIDTH)),
        ];
        if !doc.by_group() {
            cells.push(Cell::new(truncate(&visible(&location(row)), LOCATION_WIDTH)));
        }
        table.add_row(cells);
    }
    out.push_str(&table.to_string());
    out.push('\n');
    let shown = doc.rows().len();
    if shown < doc.report.rows.len() {
        out.push_str(&format!("({} of {} rows; -n to show more)\n", shown, doc.report.rows.len()));
    }
    out
}

fn amount(doc: &TopDocument<'_>, value: i64) -> String {
    match doc.report.unit {
        Weight::Samples => value.to_string(),
        _ => format_ns(value),
    }
}

/// `file:line:column` as far as known.
pub(crate) fn location(row: &TopRow) -> String {
    let mut s = row.file.as_deref().map(display_file).unwrap_or_default().to_owned();
    if let Some(line) = row.line {
        s.push_str(&format!(":{line}"));
        if let Some(column) = row.column {
            s.push_str(&format!(":{column}"));
        }
    }
    s
}

/// `app.cpuprofile · cpuprofile · 1.02 s · 952 samples · mean interval 1.07 ms · idle 3.1% · GC 1.2% · program 0.8%`;
/// for tick logs a second line says where the ticks went, as `node --prof-process` does.
pub(crate) fn header(doc: &TopDocument<'_>) -> String {
    let meta = doc.meta;
    let s = &doc.report.summary;
    let ticklog = meta.format == SourceFormat::TickLog;
    let mut parts = vec![visible(doc.source), meta.format.as_str().to_owned()];
    if let Some(d) = meta.duration_ns {
        parts.push(format_ns(d));
    }
    parts.push(format!("{} {}", s.all.samples, if ticklog { "ticks" } else { "samples" }));
    if let Some(i) = meta.interval_ns {
        parts.push(format!("{} {}", if ticklog { "interval" } else { "mean interval" }, format_ns(i)));
    }
    let share = |v: Share| if s.all.weight == 0 { 0.0 } else { 100.0 * v.weight as f64 / s.all.weight as f64 };
    if !ticklog {
        parts.push(format!("idle {:.1}%", share(s.idle)));
        parts.push(format!("GC {:.1}%", share(s.gc)));
        parts.push(format!("program {:.1}%", share(s.program)));
    }
    let mut line = parts.join(" · ");
    if doc.report.unit == Weight::Samples {
        line.push_str(" · weight: samples");
    }
    if ticklog {
        line.push('\n');
        line.push_str(&tick_summary(s));
    }
    line
}

/// `JavaScript 12 (2.0%) · C++ 590 (96.1%) · GC 1 (0.2%) · shared libraries 6 (1.0%) · unaccounted 5 (0.8%)`
pub(crate) fn tick_summary(s: &Summary) -> String {
    let parts: Vec<String> = summary_parts(s)
        .iter()
        .map(|(label, _, share)| format!("{label} {} ({:.1}%)", share.samples, pct_of(share.samples, s.all.samples)))
        .collect();
    format!("ticks: {}", parts.join(" · "))
}

/// The categories of a tick summary: display label, JSON key, share.
pub(crate) fn summary_parts(s: &Summary) -> [(&'static str, &'static str, Share); 6] {
    [
        ("JavaScript", "javascript", s.javascript),
        ("C++", "cpp", s.cpp),
        ("GC", "gc", s.gc),
        ("shared libraries", "shared_libraries", s.shared_lib),
        ("unaccounted", "unaccounted", s.unaccounted),
        ("idle", "idle", s.idle),
    ]
}

/// `part` as a percentage of `whole` (0 for an empty whole).
pub(crate) fn pct_of(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}
