//! JSON (the documented contracts): `top` and `diff`.

use cpuprof_analysis::{Amount, GroupBy, Metric, Normalize, Summary};
use serde::Serialize;

use super::words::{pct_of, unit_name};
use super::{DiffDocument, TopDocument};

/// The JSON contract of `cpuprof top` (documented in the README). Fields may be added,
/// never removed or renamed.
#[derive(Serialize)]
struct TopJson<'a> {
    source: &'a str,
    format: &'a str,
    by: &'a str,
    unit: &'a str,
    total: i64,
    samples: i64,
    duration_ns: Option<i64>,
    interval_ns: Option<i64>,
    summary: SummaryJson,
    /// Messages for people (`jq -r '.warnings[]'`), not data: what they quote from the input
    /// is escaped as on stderr, so that no name starts a line of its own.
    warnings: Vec<String>,
    rows: Vec<TopRowJson<'a>>,
}

/// Where all samples went (before filters), by what was on top of the stack, and GC and
/// idle by VM state where the format records it.
#[derive(Serialize)]
struct SummaryJson {
    samples: i64,
    total: i64,
    javascript: AmountJson,
    cpp: AmountJson,
    gc: AmountJson,
    shared_libraries: AmountJson,
    unaccounted: AmountJson,
    idle: AmountJson,
    program: AmountJson,
}

#[derive(Serialize)]
struct AmountJson {
    samples: i64,
    total: i64,
    pct: f64,
}

#[derive(Serialize)]
struct TopRowJson<'a> {
    name: &'a str,
    file: Option<&'a str>,
    line: Option<u32>,
    column: Option<u32>,
    kind: &'a str,
    #[serde(rename = "self")]
    self_weight: i64,
    self_samples: i64,
    self_pct: f64,
    total: i64,
    total_samples: i64,
    total_pct: f64,
}

fn summary(s: &Summary) -> SummaryJson {
    let share = |v: Amount| AmountJson { samples: v.samples, total: v.weight, pct: pct_of(v.samples, s.all.samples) };
    SummaryJson {
        samples: s.all.samples,
        total: s.all.weight,
        javascript: share(s.javascript),
        cpp: share(s.cpp),
        gc: share(s.gc),
        shared_libraries: share(s.shared_lib),
        unaccounted: share(s.unaccounted),
        idle: share(s.idle),
        program: share(s.program),
    }
}

pub(crate) fn top(doc: &TopDocument<'_>) -> String {
    let by = match doc.by {
        GroupBy::File => "file",
        GroupBy::Package => "package",
        GroupBy::Line => "line",
        _ => "function",
    };
    let json = TopJson {
        source: doc.source,
        format: doc.meta.format.as_str(),
        by,
        unit: doc.unit(),
        total: doc.report.total,
        samples: doc.report.samples,
        duration_ns: doc.meta.duration_ns,
        interval_ns: doc.meta.interval_ns,
        summary: summary(&doc.report.summary),
        warnings: doc.meta.warnings.iter().map(|w| crate::text::visible(&w.message)).collect(),
        rows: doc
            .rows()
            .iter()
            .map(|r| TopRowJson {
                name: &r.name,
                file: r.file.as_deref(),
                line: r.line,
                column: r.column,
                kind: r.kind.as_str(),
                self_weight: r.self_weight,
                self_samples: r.self_samples,
                self_pct: doc.pct(r.self_weight),
                total: r.total_weight,
                total_samples: r.total_samples,
                total_pct: doc.pct(r.total_weight),
            })
            .collect(),
    };
    // Serializing plain structs of strings and numbers cannot fail.
    let mut out = serde_json::to_string_pretty(&json).unwrap_or_default();
    out.push('\n');
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
    rows: Vec<DiffRowJson<'a>>,
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
struct DiffRowJson<'a> {
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

pub(crate) fn diff(doc: &DiffDocument<'_>) -> String {
    let r = doc.report;
    let side = |sources, t: &cpuprof_analysis::SideTotals| SideJson {
        sources,
        runs: t.runs,
        total: t.busy_per_run,
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
            .map(|row| DiffRowJson {
                name: &row.name,
                file: row.file.as_deref(),
                line: row.line,
                kind: row.kind.as_str(),
                verdict: row.verdict.as_str(),
                significant: row.significant,
                p_value: row.p_value,
                base_self: row.base.self_per_run,
                new_self: row.new.self_per_run,
                self_delta: row.self_delta(),
                self_ratio: row.self_ratio(),
                base_total: row.base.total_per_run,
                new_total: row.new.total_per_run,
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
