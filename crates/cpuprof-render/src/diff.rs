//! `cpuprof diff` reports: table, Markdown (a pull-request comment), JSON and CSV.

use std::fmt::Write as _;

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
use cpuprof_analysis::{DiffReport, DiffRow, Metric, Normalize, Verdict, Weight};
use serde::Serialize;

use crate::markdown::escape;
use crate::text::{display_file, truncate, visible};
use crate::time::format_ns;
use crate::Format;

/// A diff report with what is needed to present it.
#[derive(Clone, Copy, Debug)]
pub struct DiffDocument<'a> {
    /// The base inputs as named.
    pub base_sources: &'a [String],
    /// The new inputs as named.
    pub new_sources: &'a [String],
    /// The numbers.
    pub report: &'a DiffReport,
    /// The rows to show (after `-n`), in rank order.
    pub rows: &'a [DiffRow],
    /// Colour the table's changes (red hotter, green cooler): only for a terminal.
    pub color: bool,
}

/// Renders `doc` in `format`.
pub fn render_diff(doc: &DiffDocument<'_>, format: Format) -> String {
    match format {
        Format::Json => json(doc),
        Format::Csv => csv(doc),
        Format::Markdown => markdown(doc),
        _ => table(doc),
    }
}

/// An amount of the report's unit: a time, or a number of samples (per run: maybe fractional).
fn amount(v: f64, unit: Weight) -> String {
    match unit {
        Weight::Samples if (v - v.round()).abs() < 1e-9 => format!("{v:.0} samples"),
        Weight::Samples => format!("{v:.2} samples"),
        _ => format_ns(v.round() as i64),
    }
}

/// The unit as JSON and CSV name it.
fn unit_name(unit: Weight) -> &'static str {
    if unit == Weight::Samples {
        "samples"
    } else {
        "ns"
    }
}

fn signed_amount(v: f64, unit: Weight) -> String {
    let sign = if v > 0.0 {
        "+"
    } else if v < 0.0 {
        "−"
    } else {
        "±"
    };
    format!("{sign}{}", amount(v.abs(), unit))
}

fn signed_pp(v: f64) -> String {
    format!("{}{:.2}pp", if v >= 0.0 { "+" } else { "−" }, v.abs())
}

/// The change as the normalization reads it, and the other one beside it.
fn delta_text(doc: &DiffDocument<'_>, row: &DiffRow) -> String {
    let (ns, pp) = match doc.report.metric {
        Metric::SelfTime => (row.self_delta(), row.self_delta_pp()),
        Metric::Total => (row.total_delta(), row.total_delta_pp()),
    };
    match doc.report.normalize {
        Normalize::Time => format!("{} ({})", signed_amount(ns, doc.report.unit), signed_pp(pp)),
        Normalize::Share => format!("{} ({})", signed_pp(pp), signed_amount(ns, doc.report.unit)),
    }
}

fn ratio_text(row: &DiffRow, metric: Metric) -> String {
    let ratio = match metric {
        Metric::SelfTime => row.self_ratio(),
        Metric::Total => row.total_ratio(),
    };
    match (ratio, row.verdict) {
        (_, Verdict::New) => "new".to_owned(),
        (_, Verdict::Gone) => "gone".to_owned(),
        (Some(r), _) => format!("{r:.2}×"),
        (None, _) => "–".to_owned(),
    }
}

fn pcts(doc: &DiffDocument<'_>, row: &DiffRow) -> (f64, f64) {
    match doc.report.metric {
        Metric::SelfTime => (row.base.self_pct, row.new.self_pct),
        Metric::Total => (row.base.total_pct, row.new.total_pct),
    }
}

fn location(row: &DiffRow) -> String {
    let mut s = row.file.as_deref().map(display_file).unwrap_or_default().to_owned();
    if let Some(line) = row.line {
        let _ = write!(s, ":{line}");
    }
    s
}

fn verdict_text(row: &DiffRow) -> String {
    let v = row.verdict.as_str();
    if row.significant || row.verdict == Verdict::Unchanged {
        v.to_owned()
    } else {
        format!("{v} (not significant)")
    }
}

/// One regression, for the gate's message: `roundMoney (app/money.js:5) self +12.4 ms/run
/// (+3.10pp, 1.32×)`, the change in `metric` per run with its share and ratio. Names are
/// escaped: the message goes to stderr, where a raw line break could start a CI command.
pub fn regression_text(row: &DiffRow, metric: Metric, unit: Weight) -> String {
    let (delta, pp, name) = match metric {
        Metric::SelfTime => (row.self_delta(), row.self_delta_pp(), "self"),
        Metric::Total => (row.total_delta(), row.total_delta_pp(), "total"),
    };
    let location = location(row);
    let place = if location.is_empty() { String::new() } else { format!(" ({})", visible(&location)) };
    let ratio = ratio_text(row, metric);
    format!("{}{place} {name} {}/run ({}, {ratio})", visible(&row.name), signed_amount(delta, unit), signed_pp(pp))
}

/// `3 functions got hotter, 1 cooler, 1 new, 1 gone (…)`.
pub(crate) fn summary(doc: &DiffDocument<'_>) -> String {
    let count = |v: Verdict| doc.report.rows.iter().filter(|r| r.verdict == v && r.significant).count();
    let r = doc.report;
    let what = if r.unit == Weight::Samples { "samples" } else { "time" };
    let normalize = match r.normalize {
        Normalize::Time => format!("{what} per run"),
        Normalize::Share => format!("share of busy {what}"),
    };
    let metric = match r.metric {
        Metric::SelfTime => "self",
        Metric::Total => "total",
    };
    let significance = if r.tested {
        "significant at a 5% false discovery rate"
    } else {
        "not tested for significance: the weights are times without sample counts"
    };
    format!(
        "{} hotter, {} new, {} cooler, {} gone ({metric} {what}, compared by {normalize}; base: {} run(s), {} busy per run; new: {} run(s), {} busy per run; {significance})",
        count(Verdict::Hotter),
        count(Verdict::New),
        count(Verdict::Cooler),
        count(Verdict::Gone),
        r.base.runs,
        amount(r.base.busy_ns, r.unit),
        r.new.runs,
        amount(r.new.busy_ns, r.unit),
    )
}

fn table(doc: &DiffDocument<'_>) -> String {
    let mut out = summary(doc);
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
            Cell::new(truncate(&visible(&location(row)), 70)),
        ]);
    }
    out.push_str(&table.to_string());
    out.push('\n');
    out
}

fn markdown(doc: &DiffDocument<'_>) -> String {
    // The summary and the numbers are cpuprof's own text; names and files are escaped.
    let mut out = format!("**cpuprof diff**: {}\n\n", summary(doc));
    for warning in &doc.report.warnings {
        let _ = writeln!(out, "> **Warning:** {}\n", escape(warning));
    }
    if doc.rows.is_empty() {
        out.push_str("No functions to compare.\n");
        return out;
    }
    out.push_str("| function | location | base % | new % | Δ | verdict |\n|---|---|---:|---:|---:|---|\n");
    for row in doc.rows {
        let (b, n) = pcts(doc, row);
        let _ = writeln!(
            out,
            "| {} | {} | {b:.2}% | {n:.2}% | {} | {} |",
            escape(&truncate(&row.name, 120)),
            escape(&location(row)),
            delta_text(doc, row),
            verdict_text(row),
        );
    }
    out
}

/// The JSON contract of `cpuprof diff` (documented in the README). Fields may be added, never
/// removed or renamed.
#[derive(Serialize)]
struct DiffJson<'a> {
    normalize: &'a str,
    metric: &'a str,
    /// What the amounts are: `ns`, or `samples` when a profile has no times.
    unit: &'a str,
    base: SideJson<'a>,
    new: SideJson<'a>,
    /// False when the weights could not be tested (times without sample counts): then no row
    /// is significant.
    tested: bool,
    /// Scripts paired across checkout roots: the base path and the new path.
    moved_files: Vec<MovedFileJson<'a>>,
    warnings: &'a [String],
    rows: Vec<RowJson<'a>>,
}

#[derive(Serialize)]
struct MovedFileJson<'a> {
    base: &'a str,
    new: &'a str,
}

#[derive(Serialize)]
struct SideJson<'a> {
    sources: &'a [String],
    runs: usize,
    /// Busy time per run, ns.
    total: f64,
    samples: i64,
}

#[derive(Serialize)]
struct RowJson<'a> {
    name: &'a str,
    file: Option<&'a str>,
    line: Option<u32>,
    kind: &'a str,
    verdict: &'a str,
    significant: bool,
    p_value: f64,
    base_self: f64,
    new_self: f64,
    self_delta: f64,
    self_ratio: Option<f64>,
    base_total: f64,
    new_total: f64,
    total_delta: f64,
    total_ratio: Option<f64>,
    base_self_pct: f64,
    new_self_pct: f64,
    self_delta_pp: f64,
    base_total_pct: f64,
    new_total_pct: f64,
    total_delta_pp: f64,
    base_self_samples: i64,
    new_self_samples: i64,
    base_total_samples: i64,
    new_total_samples: i64,
}

fn json(doc: &DiffDocument<'_>) -> String {
    let r = doc.report;
    let side = |sources, t: &cpuprof_analysis::SideTotals| SideJson {
        sources,
        runs: t.runs,
        total: t.busy_ns,
        samples: t.samples,
    };
    let json = DiffJson {
        normalize: match r.normalize {
            Normalize::Time => "time",
            Normalize::Share => "share",
        },
        metric: match r.metric {
            Metric::SelfTime => "self",
            Metric::Total => "total",
        },
        unit: unit_name(r.unit),
        base: side(doc.base_sources, &r.base),
        new: side(doc.new_sources, &r.new),
        tested: r.tested,
        moved_files: r.moved_files.iter().map(|(base, new)| MovedFileJson { base, new }).collect(),
        warnings: &r.warnings,
        rows: doc
            .rows
            .iter()
            .map(|row| RowJson {
                name: &row.name,
                file: row.file.as_deref(),
                line: row.line,
                kind: row.kind.as_str(),
                verdict: row.verdict.as_str(),
                significant: row.significant,
                p_value: row.p_value,
                base_self: row.base.self_ns,
                new_self: row.new.self_ns,
                self_delta: row.self_delta(),
                self_ratio: row.self_ratio(),
                base_total: row.base.total_ns,
                new_total: row.new.total_ns,
                total_delta: row.total_delta(),
                total_ratio: row.total_ratio(),
                base_self_pct: row.base.self_pct,
                new_self_pct: row.new.self_pct,
                self_delta_pp: row.self_delta_pp(),
                base_total_pct: row.base.total_pct,
                new_total_pct: row.new.total_pct,
                total_delta_pp: row.total_delta_pp(),
                base_self_samples: row.base.self_samples,
                new_self_samples: row.new.self_samples,
                base_total_samples: row.base.total_samples,
                new_total_samples: row.new.total_samples,
            })
            .collect(),
    };
    let mut out = serde_json::to_string_pretty(&json).unwrap_or_default();
    out.push('\n');
    out
}

fn csv(doc: &DiffDocument<'_>) -> String {
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
            f(r.base.self_ns),
            f(r.new.self_ns),
            f(r.self_delta()),
            f(r.base.self_pct),
            f(r.new.self_pct),
            f(r.self_delta_pp()),
            f(r.base.total_ns),
            f(r.new.total_ns),
            f(r.total_delta()),
            f(r.base.total_pct),
            f(r.new.total_pct),
            f(r.total_delta_pp()),
            unit.to_owned(),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
