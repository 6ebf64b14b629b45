//! Wording that several report formats share: amounts, locations, summaries.

use std::fmt::Write as _;

use cpuprof_analysis::{
    Amount, Category, Contribution, DiffRow, Explanation, Inlining, Metric, Moved, Normalize, Summary, TopRow, Verdict,
    Weight,
};
use cpuprof_model::SourceFormat;

use super::{DiffDocument, TopDocument};
use crate::text::{truncate, visible};
use crate::time::format_ns;

/// What `blocks` says of a recording without idle samples.
pub(crate) const NO_IDLE_NOTE: &str = "the recording has no idle samples: the event loop never waited in it (a batch job, or a recorder without idle notifications), so its blocks are stretches of the recording, not stalls";

/// `name (file:line)`, with the file shortened as tables show it.
pub(crate) fn function_text(f: &cpuprof_analysis::FunctionRef) -> String {
    let Some(file) = f.file.as_deref().filter(|f| !f.is_empty()) else { return f.name.to_string() };
    let short = file.rsplit(['/', '\\']).find(|part| !part.is_empty()).unwrap_or(file);
    match f.line {
        Some(line) => format!("{} ({short}:{line})", f.name),
        None => format!("{} ({short})", f.name),
    }
}

/// `3 blocks ≥ 50.0 ms · p50 101 ms · p95 301 ms · max 301 ms · 21.0% of the time blocked`, and
/// how many an edge of the recording (or of the window, when `windowed`) cuts when any does.
pub(crate) fn blocks_summary(b: &cpuprof_analysis::Blocks, windowed: bool) -> String {
    let (p50, p95, max) = b.percentiles();
    let edge = if windowed { "window" } else { "recording" };
    let cut = match b.cut {
        0 => String::new(),
        n => format!(" · {n} cut by the {edge}'s edge (marked ≥: at least that long)"),
    };
    format!(
        "{} block{} ≥ {} · p50 {} · p95 {} · max {} · {:.1}% of the time blocked{cut}",
        b.count(),
        if b.count() == 1 { "" } else { "s" },
        format_ns(b.min_ns),
        format_ns(p50),
        format_ns(p95),
        format_ns(max),
        b.blocked_pct()
    )
}

/// Where a block was spent: `spin (app.js:3) under parseReport [[vdso]]` — the deepest common
/// JavaScript frame, the nearest app frame above it, and the native frame it ran in, if any;
/// `(spread out)` when no frame holds more than half of it.
pub(crate) fn blocked_in(k: &cpuprof_analysis::Block) -> String {
    let mut text = match (&k.common, &k.under) {
        (Some(c), Some(u)) => format!("{} under {}", function_text(c), u.name),
        (Some(c), None) => function_text(c),
        (None, _) if k.native.is_some() => String::new(),
        (None, _) => "(spread out)".to_owned(),
    };
    if let Some(native) = &k.native {
        if !text.is_empty() {
            text.push(' ');
        }
        // `[vdso]`, a library named by its file, is bracketed already.
        if native.name.starts_with('[') && native.name.ends_with(']') {
            text.push_str(&native.name);
        } else {
            text.push_str(&format!("[{}]", native.name));
        }
    }
    text
}

/// A block's length, `≥ 164 ms` when an edge of the recording cuts it (it may have been longer).
pub(crate) fn block_duration(k: &cpuprof_analysis::Block) -> String {
    match k.cut {
        Some(_) => format!("≥ {}", format_ns(k.duration_ns)),
        None => format_ns(k.duration_ns),
    }
}

/// A top amount: a time, or a number of samples.
pub(crate) fn top_amount(doc: &TopDocument<'_>, value: i64) -> String {
    unit_amount(doc.report.unit, value)
}

/// `file:line:column` as far as known.
pub(crate) fn top_location(row: &TopRow) -> String {
    let mut s = row.file.as_deref().unwrap_or_default().to_owned();
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
    let mut out = profile_header(doc.source, doc.meta, &doc.report.summary, doc.report.samples, doc.report.unit);
    for input in doc.inputs {
        let mut parts = vec![format!("{} {:.1}%", top_amount(doc, input.total), pct_of(input.total, doc.report.total))];
        parts.push(format!("{} samples", input.samples));
        if let Some(d) = input.duration_ns {
            parts.push(format!("recorded {}", format_ns(d)));
        }
        out.push_str(&format!("\ninput {}: {}", visible(&input.source), parts.join(" · ")));
    }
    out
}

/// The summary line of any report on one profile (see [`header`]).
pub(crate) fn profile_header(
    source: &str,
    meta: &cpuprof_model::Meta,
    s: &Summary,
    shown: i64,
    unit: Weight,
) -> String {
    let ticklog = meta.format == SourceFormat::TickLog;
    let mut parts = vec![visible(source), meta.format.as_str().to_owned()];
    if let Some(d) = meta.duration_ns {
        parts.push(format_ns(d));
    }
    parts.push(samples_shown(shown, s.all.samples, s.idle.samples, if ticklog { "ticks" } else { "samples" }));
    if let Some(i) = meta.interval_ns {
        parts.push(format!("{} {}", if ticklog { "interval" } else { "mean interval" }, format_ns(i)));
    }
    let mut line = parts.join(" · ");
    if unit == Weight::Samples {
        line.push_str(" · weight: samples");
    }
    line.push('\n');
    line.push_str(&category_summary(s));
    if ticklog {
        line.push('\n');
        line.push_str(&tick_summary(s));
    }
    line
}

/// `1,849 samples (4,640 idle not shown)`: the samples a view counts, as every view of the same
/// file counts them (its JSON `samples`, the flame graph's title), and those it leaves out.
pub(crate) fn samples_shown(shown: i64, all: i64, idle: i64, noun: &str) -> String {
    let hidden = all.saturating_sub(shown);
    let idle_hidden = idle.min(hidden);
    let filtered = hidden - idle_hidden;
    let mut out = format!("{} {noun}", thousands(shown));
    match (idle_hidden, filtered) {
        (0, 0) => {}
        (i, 0) => out.push_str(&format!(" ({} idle not shown)", thousands(i))),
        (0, f) => out.push_str(&format!(" ({} filtered out)", thousands(f))),
        (i, f) => out.push_str(&format!(" ({} idle not shown, {} filtered out)", thousands(i), thousands(f))),
    }
    out
}

/// `1,234,567`.
fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `app 67.5% · node 1.2% · native 12.0% · gc 16.3% · program 0.5%`: the categories with
/// samples, as shares of all the time (idle included).
pub(crate) fn category_summary(s: &Summary) -> String {
    let whole = s.categories.iter().map(|a| a.weight).fold(0i64, i64::saturating_add);
    let parts: Vec<String> = Category::ALL
        .iter()
        .zip(&s.categories)
        .filter(|(_, a)| a.samples != 0 || a.weight != 0)
        .map(|(c, a)| format!("{} {:.1}%", c.as_str(), pct_of(a.weight, whole)))
        .collect();
    format!("categories: {}", if parts.is_empty() { "none".to_owned() } else { parts.join(" · ") })
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
pub(crate) fn summary_parts(s: &Summary) -> [(&'static str, &'static str, Amount); 6] {
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
/// `name  location · self 12 ms (3.4%) · total 40 ms (11.2%)`: a function's line above what
/// a report says of it (name and location as given: each format escapes its own way).
pub(crate) fn function_heading(
    name: &str,
    location: &str,
    row: &TopRow,
    graph: &cpuprof_analysis::CallGraph<'_>,
) -> String {
    let amount = |v: i64| unit_amount(graph.unit(), v);
    format!(
        "{name}{}{location} · self {} ({:.1}%) · total {} ({:.1}%)",
        if location.is_empty() { "" } else { "  " },
        amount(row.self_weight),
        pct_of(row.self_weight, graph.total()),
        amount(row.total_weight),
        pct_of(row.total_weight, graph.total()),
    )
}

pub(crate) fn pct_of(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// An amount of the report's unit: a time, or a number of samples (per run: maybe fractional).
pub(crate) fn amount(v: f64, unit: Weight) -> String {
    match unit {
        Weight::Samples if (v - v.round()).abs() < 1e-9 => format!("{v:.0} samples"),
        Weight::Samples => format!("{v:.2} samples"),
        _ => format_ns(v.round() as i64),
    }
}

/// The unit as JSON and CSV name it.
pub(crate) fn unit_name(unit: Weight) -> &'static str {
    if unit == Weight::Samples {
        "samples"
    } else {
        "ns"
    }
}

pub(crate) fn signed_amount(v: f64, unit: Weight) -> String {
    let sign = if v > 0.0 {
        "+"
    } else if v < 0.0 {
        "−"
    } else {
        "±"
    };
    format!("{sign}{}", amount(v.abs(), unit))
}

pub(crate) fn signed_pp(v: f64) -> String {
    format!("{}{:.2}pp", if v >= 0.0 { "+" } else { "−" }, v.abs())
}

/// The change as the normalization reads it, and the other one beside it.
pub(crate) fn delta_text(doc: &DiffDocument<'_>, row: &DiffRow) -> String {
    let (ns, pp) = match doc.report.metric {
        Metric::SelfTime => (row.self_delta(), row.self_delta_pp()),
        Metric::Total => (row.total_delta(), row.total_delta_pp()),
    };
    match doc.report.normalize {
        Normalize::Time => format!("{} ({})", signed_amount(ns, doc.report.unit), signed_pp(pp)),
        Normalize::Share => format!("{} ({})", signed_pp(pp), signed_amount(ns, doc.report.unit)),
    }
}

pub(crate) fn ratio_text(row: &DiffRow, metric: Metric) -> String {
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

pub(crate) fn pcts(doc: &DiffDocument<'_>, row: &DiffRow) -> (f64, f64) {
    match doc.report.metric {
        Metric::SelfTime => (row.base.self_pct, row.new.self_pct),
        Metric::Total => (row.base.total_pct, row.new.total_pct),
    }
}

pub(crate) fn diff_location(row: &DiffRow) -> String {
    let mut s = row.file.as_deref().unwrap_or_default().to_owned();
    if let Some(line) = row.line {
        let _ = write!(s, ":{line}");
    }
    s
}

pub(crate) fn verdict_text(row: &DiffRow) -> String {
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
    let location = diff_location(row);
    let place = if location.is_empty() { String::new() } else { format!(" ({})", visible(&location)) };
    let ratio = ratio_text(row, metric);
    format!("{}{place} {name} {}/run ({}, {ratio})", visible(&row.name), signed_amount(delta, unit), signed_pp(pp))
}

/// `3 functions got hotter, 1 cooler, 1 new, 1 gone (…)`.
pub(crate) fn diff_summary(doc: &DiffDocument<'_>) -> String {
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
    let runs = |n: usize| if n == 1 { "1 run".to_owned() } else { format!("{n} runs") };
    let significance = if r.tested {
        format!("significant at a {}% false discovery rate", cpuprof_analysis::defaults::ALPHA * 100.0)
    } else {
        "not tested for significance: the weights are not counts of samples taken".to_owned()
    };
    format!(
        "{} hotter, {} new, {} cooler, {} gone ({metric} {what}, compared by {normalize}; base: {}, {} busy per run; new: {}, {} busy per run; {significance})",
        count(Verdict::Hotter),
        count(Verdict::New),
        count(Verdict::Cooler),
        count(Verdict::Gone),
        runs(r.base.runs),
        amount(r.base.busy_per_run, r.unit),
        runs(r.new.runs),
        amount(r.new.busy_per_run, r.unit),
    ) + &doc.blocks.map(|b| format!("\n{}", block_change_line(b))).unwrap_or_default()
}

/// `event-loop blocks ≥ 50 ms: longest 301 ms → 405 ms (+104 ms, significant) · p95 …`, per run.
pub(crate) fn block_change_line(b: &cpuprof_analysis::BlockChange) -> String {
    let mean = |runs: &[cpuprof_analysis::RunBlocks], f: fn(&cpuprof_analysis::RunBlocks) -> i64| {
        runs.iter().map(|r| f(r) as f64).sum::<f64>() / runs.len().max(1) as f64
    };
    let signed = |v: f64| signed_amount(v, Weight::Time);
    let verdict = match (b.significant, b.p_value) {
        (true, Some(p)) => format!("significant, p {p:.2e}"),
        (false, Some(p)) => format!("not significant, p {p:.2e}"),
        (true, None) => "beyond two sampling intervals; one run: not tested".to_owned(),
        (false, None) => "within two sampling intervals; one run: not tested".to_owned(),
    };
    format!(
        "event-loop blocks ≥ 50 ms, per run: longest {} → {} ({}, {verdict}) · p95 {} → {} ({}) · count {} → {}",
        format_ns(mean(&b.base, |r| r.max_ns).round() as i64),
        format_ns(mean(&b.new, |r| r.max_ns).round() as i64),
        signed(b.max_delta_ns),
        format_ns(mean(&b.base, |r| r.p95_ns).round() as i64),
        format_ns(mean(&b.new, |r| r.p95_ns).round() as i64),
        signed(b.p95_delta_ns),
        mean(&b.base, |r| r.count as i64),
        mean(&b.new, |r| r.count as i64),
    )
}

/// An amount in `unit`: a time, or a number of samples.
pub(crate) fn unit_amount(unit: Weight, value: i64) -> String {
    match unit {
        Weight::Samples => value.to_string(),
        _ => format_ns(value),
    }
}

/// `file:line` of a call-tree node's function, short (the file's last component), or `""`.
pub(crate) fn short_location(row: &TopRow) -> String {
    let Some(file) = row.file.as_deref().filter(|f| !f.is_empty()) else { return String::new() };
    let short = file.rsplit(['/', '\\']).find(|part| !part.is_empty()).unwrap_or(file);
    match row.line {
        Some(line) => format!("{short}:{line}"),
        None => short.to_owned(),
    }
}

/// What a call-tree node shows as its name: the function's, or `(root)` for the top of the
/// stack in a callers list.
pub(crate) fn node_name<'g>(graph: &'g cpuprof_analysis::CallGraph<'_>, function: Option<usize>) -> &'g str {
    function.map_or("(root)", |f| graph.functions()[f].name.as_str())
}

/// `time moved from priceOrder into processBatch (priceOrder likely inlined in NEW)`; names
/// as given (each format escapes the sentence its own way).
pub(crate) fn moved_text(m: &Moved) -> String {
    match m.inlining {
        Inlining::InNew => format!("time moved from {} into {} ({} likely inlined in NEW)", m.from, m.into, m.from),
        Inlining::UndoneInNew => {
            format!("time moved from {} into {} ({} likely no longer inlined in NEW)", m.from, m.into, m.into)
        }
    }
}

/// `main +40.0 ms/run (120 ms → 160 ms, p 1.2e-05)`; the name as given.
pub(crate) fn contribution_text(c: &Contribution, unit: Weight) -> String {
    let p = c.p_value.map(|p| format!(", p {p:.1e}")).unwrap_or_default();
    let line = c.line.map(|l| format!(":{l}")).unwrap_or_default();
    let merged = if c.merged { " (same-named functions, summed)" } else { "" };
    format!(
        "{}{line}{merged} {}/run ({} → {}{p})",
        c.name,
        signed_amount(c.delta(), unit),
        amount(c.base, unit),
        amount(c.new, unit)
    )
}

/// The lines explaining one row: what moved, then callers and callees (names escaped by
/// `escape`).
pub(crate) fn explanation_lines(doc: &DiffDocument<'_>, e: &Explanation, escape: fn(&str) -> String) -> Vec<String> {
    let unit = doc.report.unit;
    let mut lines: Vec<String> = e
        .moved
        .iter()
        .map(|m| {
            let named = Moved { from: escape(&m.from), into: escape(&m.into), ..m.clone() };
            let mut line = format!("{}: {} per run", moved_text(&named), amount(m.weight, unit));
            // On the function the time moved into: what is left of its change is its own.
            let row = &doc.report.rows[e.row];
            if m.into == row.name && m.into_file == row.file && m.inlining == Inlining::InNew {
                let rest = row.self_delta() - m.weight;
                let _ =
                    write!(line, "; the rest, {} per run, is {}'s own", signed_amount(rest, unit), escape(&row.name));
            }
            line
        })
        .collect();
    for (what, list) in [("callers", &e.callers), ("callees", &e.callees)] {
        if list.is_empty() {
            continue;
        }
        let parts: Vec<String> = list
            .iter()
            .map(|c| contribution_text(&Contribution { name: escape(&c.name), ..c.clone() }, unit))
            .collect();
        lines.push(format!("{what}: {}", parts.join("; ")));
    }
    if let Some(change) = &e.jit {
        lines.extend(super::jit_words::change_lines(change, escape));
    }
    lines
}

/// The names of a chain joined by `separator`, at most `max` characters: when longer, names
/// from the middle go (`a → b → … → z`, as many first ones as fit), then the first name is cut;
/// the last name, whose numbers the line shows, stays whole as far as it fits.
pub(crate) fn chain_text(names: &[String], separator: &str, max: usize) -> String {
    let joined = names.join(separator);
    let Some((last, rest)) = names.split_last() else { return joined };
    if joined.chars().count() <= max || rest.is_empty() {
        return truncate(&joined, max);
    }
    if let [first] = rest {
        // No middle to leave out: the first name is cut.
        let room = max.saturating_sub(separator.chars().count() + last.chars().count());
        return if room < 2 { truncate(&joined, max) } else { format!("{}{separator}{last}", truncate(first, room)) };
    }
    let tail = format!("{separator}…{separator}{last}");
    let mut head = String::new();
    for name in rest {
        let grown = if head.is_empty() { name.clone() } else { format!("{head}{separator}{name}") };
        if grown.chars().count() + tail.chars().count() > max {
            break;
        }
        head = grown;
    }
    if head.is_empty() {
        let room = max.saturating_sub(tail.chars().count());
        if room < 2 {
            // No room for the first name: the chain reads `… → last`, never `→ … → last` (a
            // separator where a name should be).
            return truncate(&format!("…{separator}{last}"), max);
        }
        head = truncate(&rest[0], room);
    }
    format!("{head}{tail}")
}

#[cfg(test)]
mod tests {
    use super::chain_text;

    #[test]
    fn chains_lose_their_middle_then_their_first_name() {
        let names: Vec<String> = ["main", "handle", "parse", "JSON.parse"].iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(chain_text(&names, " → ", 80), "main → handle → parse → JSON.parse");
        assert_eq!(chain_text(&names, " → ", 30), "main → handle → … → JSON.parse");
        assert_eq!(chain_text(&names, " → ", 21), "main → … → JSON.parse");
        // Two names: no middle to leave out, so no `…` between them.
        assert_eq!(chain_text(&names[2..], " → ", 16), "pa… → JSON.parse");
    }
}
