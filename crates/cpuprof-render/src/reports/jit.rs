//! `jit`: each function's tiers, compilations, deoptimizations and inlining, as a table
//! (lines per function), JSON and Markdown. One set of words ([`function_lines`]) for the
//! table and Markdown, so both say the same.

use std::fmt::Write as _;

use cpuprof_analysis::{
    Amount, CallGraph, DeoptChange, DeoptGroup, Finding, GroupBy, InlineChange, JitChange, JitFunction, JitSide, Tiers,
    Weight,
};
use serde::Serialize;

use super::fit;
use super::jit_words::{position, signed_ns};
use super::top_columns::{function_json, RowOf};
use super::words::{pct_of, profile_header, top_location, unit_amount, unit_name};
use super::JitDocument;
use crate::text::visible;

/// What a function's lines say, before escaping for a channel.
struct Said {
    title: String,
    lines: Vec<String>,
}

/// The verdict: one line where the data supports one.
pub(crate) fn verdict(doc: &JitDocument<'_>, f: &JitFunction) -> Option<String> {
    let graph = doc.graph;
    let row = &graph.functions()[f.function];
    let amount = |v: i64| unit_amount(graph.unit(), v);
    let finding = f.finding(row.self_weight, graph.total(), doc.report.coverage)?;
    let name = row.name.as_str();
    Some(match finding {
        Finding::Deopts => {
            let cost = f.deopt_cost();
            let first = &f.deopts[0];
            format!(
                "{name} — {} self, {:.0}% in lower tiers after {} ({} ×{} at {})",
                amount(row.self_weight),
                pct_of(cost.weight, row.self_weight),
                plural(f.deopt_count(), "deopt"),
                first.reason,
                first.count,
                position(first),
            )
        }
        Finding::Unoptimized if f.optimizations == 0 => format!(
            "{name} — {} self, {:.0}% of it interpreted or in Sparkplug: V8 never optimized it{}",
            amount(row.self_weight),
            pct_of(f.tiers.unoptimized().weight, row.self_weight),
            f.not_optimized.as_ref().map(|why| format!(" ({why})")).unwrap_or_default(),
        ),
        Finding::Unoptimized => format!(
            "{name} — {} self, {:.0}% of it interpreted or in Sparkplug though V8 optimized it {}",
            amount(row.self_weight),
            pct_of(f.tiers.unoptimized().weight, row.self_weight),
            times(f.optimizations),
        ),
        Finding::NotInlined => {
            let callee = &f.not_inlined[0];
            format!(
                "{name} — calls {} ({} under it) without inlining it in any of its optimized code",
                callee.name,
                amount(callee.total.weight)
            )
        }
        Finding::Noise => format!(
            "{name} — {} cost {} ({:.1}% of the profile): noise, not a finding",
            plural(f.deopt_count(), "deopt"),
            amount(f.deopt_cost().weight),
            pct_of(f.deopt_cost().weight, graph.total()),
        ),
    })
}

fn plural(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

fn times(n: u64) -> String {
    match n {
        1 => "once".to_owned(),
        2 => "twice".to_owned(),
        n => format!("{n} times"),
    }
}

/// The words for one function.
fn said(doc: &JitDocument<'_>, f: &JitFunction) -> Said {
    let graph = doc.graph;
    let unit = graph.unit();
    let row = &graph.functions()[f.function];
    let amount = |v: i64| unit_amount(unit, v);
    let title = super::words::function_heading(&row.name, &top_location(row), row, graph);
    let mut lines = Vec::new();
    if let Some(v) = verdict(doc, f) {
        lines.push(format!("▶ {v}"));
    }
    let coverage = doc.report.coverage;
    if coverage.tiers && row.self_weight > 0 {
        let t = &f.tiers;
        let share = |a: Amount| format!("{:.0}%", pct_of(a.weight, row.self_weight));
        let mut tiers = format!(
            "self by tier: interpreted {} · sparkplug {} · maglev {} · turbofan {}",
            share(t.interpreted),
            share(t.sparkplug),
            share(t.maglev),
            share(t.turbofan)
        );
        if t.unknown.samples > 0 {
            let _ = write!(tiers, " · unknown {}", share(t.unknown));
        }
        lines.push(tiers);
    }
    if coverage.code_objects {
        let first = f.first_optimized_ns.map(|t| format!(", first optimized at {}", signed_ns(t))).unwrap_or_default();
        lines.push(format!("code: {} ({} optimized){first}", plural(f.code_objects, "code object"), f.optimizations));
    }
    if let Some(why) = &f.not_optimized {
        lines.push(format!("V8 would not optimize it: {why}"));
    }
    if !f.deopts.is_empty() {
        lines.push(format!(
            "{}, {} in lower tiers after them:",
            plural(f.deopt_count(), "deopt"),
            amount(f.deopt_cost().weight)
        ));
        for d in &f.deopts {
            lines.push(format!(
                "  {}× {} ({}) at {} — first at {}, {} after",
                d.count,
                d.reason,
                d.kind,
                position(d),
                signed_ns(d.first_ns),
                amount(d.after.weight)
            ));
        }
    } else if coverage.deopts && coverage.code_objects {
        lines.push("no deopts".to_owned());
    }
    if !f.inlined.is_empty() {
        let names: Vec<String> =
            f.inlined
                .iter()
                .map(|c| {
                    if c.total.samples > 0 {
                        format!("{} ({})", c.name, amount(c.total.weight))
                    } else {
                        c.name.clone()
                    }
                })
                .collect();
        lines.push(format!("inlined: {}", names.join(", ")));
    }
    if !f.not_inlined.is_empty() {
        let names: Vec<String> =
            f.not_inlined.iter().map(|c| format!("{} ({})", c.name, amount(c.total.weight))).collect();
        lines.push(format!("hot callees not inlined: {}", names.join(", ")));
    }
    Said { title, lines }
}

/// Each function's lines (escaped as the table escapes them, without its title), as a page
/// shows them beside its own view of the function: the function's index in the document's
/// graph, and its lines (sub-lines indented by two spaces). Functions with nothing to say are
/// left out.
pub(crate) fn function_lines(doc: &JitDocument<'_>) -> Vec<(usize, Vec<String>)> {
    doc.report
        .functions
        .iter()
        .map(|f| (f.function, said(doc, f).lines.iter().map(|l| visible(l)).collect::<Vec<_>>()))
        .filter(|(_, lines)| !lines.is_empty())
        .collect()
}

pub(crate) fn table(doc: &JitDocument<'_>) -> String {
    let graph = doc.graph;
    let width = doc.terminal.width;
    let mut out =
        fit::wrap(&profile_header(doc.source, doc.meta, graph.summary(), graph.samples(), graph.unit()), width);
    out.push('\n');
    for f in &doc.report.functions {
        let said = said(doc, f);
        out.push('\n');
        out.push_str(&fit::wrap(&visible(&said.title), width));
        out.push('\n');
        for line in &said.lines {
            out.push_str(&fit::wrap(&format!("  {}", visible(line)), width));
            out.push('\n');
        }
    }
    out
}

pub(crate) fn markdown(doc: &JitDocument<'_>) -> String {
    use super::markdown::escape;
    let graph = doc.graph;
    let mut out = String::new();
    for line in profile_header(doc.source, doc.meta, graph.summary(), graph.samples(), graph.unit()).lines() {
        let _ = write!(out, "**{}**\n\n", escape(line));
    }
    for f in &doc.report.functions {
        let said = said(doc, f);
        let _ = write!(out, "\n### {}\n\n", escape(&said.title));
        for line in &said.lines {
            match line.strip_prefix("  ") {
                Some(sub) => {
                    let _ = writeln!(out, "  - {}", escape(sub));
                }
                None => {
                    let _ = writeln!(out, "- {}", escape(line));
                }
            }
        }
    }
    out
}

#[derive(Serialize)]
struct JitJson<'a> {
    source: &'a str,
    format: &'static str,
    unit: &'static str,
    total: i64,
    samples: i64,
    coverage: CoverageJson,
    functions: Vec<serde_json::Map<String, serde_json::Value>>,
    warnings: Vec<String>,
}

#[derive(Serialize)]
struct CoverageJson {
    tiers: bool,
    code_objects: bool,
    deopts: bool,
}

#[derive(Serialize)]
struct TiersJson {
    interpreted: i64,
    sparkplug: i64,
    maglev: i64,
    turbofan: i64,
    unknown: i64,
}

#[derive(Serialize)]
struct DeoptJson<'a> {
    reason: &'a str,
    kind: &'a str,
    position: &'a str,
    inlined_at: &'a [String],
    count: u64,
    first_ns: i64,
    after: i64,
    after_samples: i64,
    /// `after` when the unit is ns (null when amounts are samples).
    after_ns: Option<i64>,
}

#[derive(Serialize)]
struct CalleeJson<'a> {
    name: &'a str,
    handle: Option<String>,
    total: i64,
    total_samples: i64,
}

fn callee_json<'a>(graph: &CallGraph<'_>, c: &'a cpuprof_analysis::Callee) -> CalleeJson<'a> {
    CalleeJson {
        name: &c.name,
        handle: c.function.map(|f| graph.functions()[f].handle()),
        total: c.total.weight,
        total_samples: c.total.samples,
    }
}

pub(crate) fn json(doc: &JitDocument<'_>) -> String {
    let graph = doc.graph;
    let tiers = tiers_json;
    let functions = doc
        .report
        .functions
        .iter()
        .map(|f| {
            let row = &graph.functions()[f.function];
            let mut out = function_json(RowOf { by: GroupBy::Function, whole: graph.total() }, row);
            let mut put = |k: &str, v: serde_json::Value| {
                out.insert(k.to_owned(), v);
            };
            put("verdict", verdict(doc, f).map_or(serde_json::Value::Null, |v| visible(&v).into()));
            put(
                "finding",
                f.finding(row.self_weight, graph.total(), doc.report.coverage)
                    .map_or(serde_json::Value::Null, |x| x.as_str().into()),
            );
            put("tiers", to_value(&tiers(&f.tiers, |a| a.weight)));
            put("tier_samples", to_value(&tiers(&f.tiers, |a| a.samples)));
            put("code_objects", f.code_objects.into());
            put("optimizations", f.optimizations.into());
            put("first_optimized_ns", f.first_optimized_ns.into());
            put("not_optimized", f.not_optimized.as_deref().map(visible).into());
            put("deopt_count", f.deopt_count().into());
            put("deopt_cost", f.deopt_cost().weight.into());
            put("deopt_cost_samples", f.deopt_cost().samples.into());
            let deopts: Vec<DeoptJson<'_>> = f.deopts.iter().map(|d| deopt_json(d, graph.unit())).collect();
            put("deopts", to_value(&deopts));
            let inlined: Vec<CalleeJson<'_>> = f.inlined.iter().map(|c| callee_json(graph, c)).collect();
            put("inlined", to_value(&inlined));
            let not_inlined: Vec<CalleeJson<'_>> = f.not_inlined.iter().map(|c| callee_json(graph, c)).collect();
            put("not_inlined", to_value(&not_inlined));
            out
        })
        .collect();
    let coverage = doc.report.coverage;
    let json = JitJson {
        source: doc.source,
        format: doc.meta.format.as_str(),
        unit: unit_name(graph.unit()),
        total: graph.total(),
        samples: graph.samples(),
        coverage: CoverageJson { tiers: coverage.tiers, code_objects: coverage.code_objects, deopts: coverage.deopts },
        functions,
        warnings: doc.meta.warnings.iter().map(|w| visible(&w.message)).collect(),
    };
    let mut text = serde_json::to_string_pretty(&json).unwrap_or_default();
    text.push('\n');
    text
}

fn tiers_json(t: &Tiers, pick: fn(&Amount) -> i64) -> TiersJson {
    TiersJson {
        interpreted: pick(&t.interpreted),
        sparkplug: pick(&t.sparkplug),
        maglev: pick(&t.maglev),
        turbofan: pick(&t.turbofan),
        unknown: pick(&t.unknown),
    }
}

fn deopt_json(d: &DeoptGroup, unit: Weight) -> DeoptJson<'_> {
    DeoptJson {
        after_ns: (unit == Weight::Time).then_some(d.after.weight),
        reason: &d.reason,
        kind: &d.kind,
        position: &d.position,
        inlined_at: &d.inlined_at,
        count: d.count,
        first_ns: d.first_ns,
        after: d.after.weight,
        after_samples: d.after.samples,
    }
}

fn to_value<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// One side's JIT facts in `diff --explain`'s JSON.
#[derive(Serialize)]
pub(crate) struct JitSideJson {
    runs: usize,
    runs_with: usize,
    /// Self samples by tier, all runs of the side.
    tier_samples: TiersJson,
    code_objects: u64,
    optimizations: u64,
    deopts_logged: bool,
}

#[derive(Serialize)]
pub(crate) struct DeoptChangeJson<'a> {
    #[serde(flatten)]
    deopt: DeoptJson<'a>,
    /// Runs of the side that had these deopts.
    runs: usize,
}

#[derive(Serialize)]
pub(crate) struct InlineChangeJson<'a> {
    name: &'a str,
    file: Option<&'a str>,
}

#[derive(Serialize)]
pub(crate) struct TierShiftJson {
    base_optimized: f64,
    new_optimized: f64,
    p_value: f64,
}

/// What V8 did differently to a function, in `diff --explain`'s JSON.
#[derive(Serialize)]
pub(crate) struct JitChangeJson<'a> {
    base: JitSideJson,
    new: JitSideJson,
    /// Both sides had the function (else nothing is claimed: it is new or gone).
    compared: bool,
    tier_shift: Option<TierShiftJson>,
    /// Deopts were compared: every log of one side at least has deopt records.
    deopts_compared: bool,
    new_deopts: Vec<DeoptChangeJson<'a>>,
    gone_deopts: Vec<DeoptChangeJson<'a>>,
    no_longer_inlined: Vec<InlineChangeJson<'a>>,
    newly_inlined: Vec<InlineChangeJson<'a>>,
    /// The facts as the table says them.
    text: Vec<String>,
}

pub(crate) fn change_json(c: &JitChange, unit: Weight) -> JitChangeJson<'_> {
    fn deopts(list: &[DeoptChange], unit: Weight) -> Vec<DeoptChangeJson<'_>> {
        list.iter().map(|d| DeoptChangeJson { deopt: deopt_json(&d.group, unit), runs: d.runs }).collect()
    }
    fn inlines(list: &[InlineChange]) -> Vec<InlineChangeJson<'_>> {
        list.iter().map(|i| InlineChangeJson { name: &i.name, file: i.file.as_deref() }).collect()
    }
    let side = |s: &JitSide| JitSideJson {
        runs: s.runs,
        runs_with: s.runs_with,
        tier_samples: tiers_json(&s.tiers, |a| a.samples),
        code_objects: s.code_objects,
        optimizations: s.optimizations,
        deopts_logged: s.deopts_logged,
    };
    JitChangeJson {
        base: side(&c.base),
        new: side(&c.new),
        tier_shift: c.tier_shift.map(|t| TierShiftJson {
            base_optimized: t.base_optimized,
            new_optimized: t.new_optimized,
            p_value: t.p_value,
        }),
        compared: c.compared(),
        deopts_compared: c.deopts_compared(),
        new_deopts: deopts(&c.new_deopts, unit),
        gone_deopts: deopts(&c.gone_deopts, unit),
        no_longer_inlined: inlines(&c.no_longer_inlined),
        newly_inlined: inlines(&c.newly_inlined),
        text: super::jit_words::change_lines(c, visible),
    }
}
