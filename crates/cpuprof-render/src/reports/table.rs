//! Aligned text tables with a summary line: `top` and `diff`.

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
use cpuprof_analysis::{GroupBy, Verdict};

use super::words::{
    delta_text, diff_location, diff_summary, header, pcts, ratio_text, top_amount, top_location, verdict_text,
};
use super::{DiffDocument, TopDocument};
use crate::text::{truncate, visible};

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
            Cell::new(top_amount(doc, row.self_weight)).set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.1}%", doc.pct(row.self_weight))).set_alignment(CellAlignment::Right),
            Cell::new(top_amount(doc, row.total_weight)).set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.1}%", doc.pct(row.total_weight))).set_alignment(CellAlignment::Right),
            Cell::new(truncate(&visible(&row.name), NAME_WIDTH)),
        ];
        if !doc.by_group() {
            cells.push(Cell::new(truncate(&visible(&top_location(row)), LOCATION_WIDTH)));
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

/// The summary line, then the table.
pub(crate) fn diff(doc: &DiffDocument<'_>) -> String {
    let mut out = diff_summary(doc);
    out.push('\n');
    if doc.rows.is_empty() {
        out.push_str("no functions to compare\n");
        return out;
    }
    let mut table = Table::new();
    table.load_preset(UTF8_BORDERS_ONLY).set_content_arrangement(ContentArrangement::Disabled);
    if doc.color {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    table.set_header(vec!["verdict", "Δ", "ratio", "base%", "new%", "p", "function", "location"]);
    for row in doc.rows {
        let (b, n) = pcts(doc, row);
        let paint = |cell: Cell| match row.verdict {
            _ if !doc.color || !row.significant => cell,
            Verdict::Hotter | Verdict::New => cell.fg(comfy_table::Color::Red),
            Verdict::Cooler | Verdict::Gone => cell.fg(comfy_table::Color::Green),
            Verdict::Unchanged => cell,
        };
        table.add_row(vec![
            paint(Cell::new(verdict_text(row))),
            paint(Cell::new(delta_text(doc, row)).set_alignment(CellAlignment::Right)),
            Cell::new(ratio_text(row, doc.report.metric)).set_alignment(CellAlignment::Right),
            Cell::new(format!("{b:.2}%")).set_alignment(CellAlignment::Right),
            Cell::new(format!("{n:.2}%")).set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.2e}", row.p_value)).set_alignment(CellAlignment::Right),
            Cell::new(truncate(&visible(&row.name), 60)),
            Cell::new(truncate(&visible(&diff_location(row)), 70)),
        ]);
    }
    out.push_str(&table.to_string());
    out.push('\n');
    out
}
