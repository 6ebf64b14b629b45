use cpuprof_analysis::{GroupBy, Share, Summary};

use crate::table::pct_of;
use serde::Serialize;

use crate::TopDocument;

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
    rows: Vec<RowJson<'a>>,
}

/// Where all samples went (before filters), by what was on top of the stack, and GC and
/// idle by VM state where the format records it.
#[derive(Serialize)]
struct SummaryJson {
    samples: i64,
    total: i64,
    javascript: ShareJson,
    cpp: ShareJson,
    gc: ShareJson,
    shared_libraries: ShareJson,
    unaccounted: ShareJson,
    idle: ShareJson,
    program: ShareJson,
}

#[derive(Serialize)]
struct ShareJson {
    samples: i64,
    total: i64,
    pct: f64,
}

#[derive(Serialize)]
struct RowJson<'a> {
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
    let share = |v: Share| ShareJson { samples: v.samples, total: v.weight, pct: pct_of(v.samples, s.all.samples) };
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
            .map(|r| RowJson {
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
