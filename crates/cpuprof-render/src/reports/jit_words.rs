//! The words for what V8 did to a function (`jit`) and did differently (`diff --explain`),
//! shared by the table, Markdown and JSON's `text`: they depend on no other report's words.

use std::fmt::Write as _;

use cpuprof_analysis::{Amount, DeoptChange, DeoptGroup, InlineChange, JitChange, Tiers};

use crate::time::format_ns;

/// A deopt's position with its inlining chain (`x.js:26:16 inlined at x.js:32:19`).
pub(crate) fn position(d: &DeoptGroup) -> String {
    let mut out = d.position.clone();
    for at in &d.inlined_at {
        let _ = write!(out, " inlined at {at}");
    }
    out
}

/// A time after the start of the profile (code made before the first sample is before 0).
pub(crate) fn signed_ns(ns: i64) -> String {
    if ns < 0 {
        format!("-{}", format_ns(ns.saturating_neg()))
    } else {
        format_ns(ns)
    }
}

/// `2× wrong map (eager) at x.js:26:16 inlined at x.js:32:19, first at 242 ms` (and the runs
/// that had them, of several), escaped by `escape`.
fn deopt_change_text(d: &DeoptChange, runs: usize, escape: fn(&str) -> String) -> String {
    let g = &d.group;
    let in_runs = if runs > 1 { format!(" in all, in {} of {runs} runs", d.runs) } else { String::new() };
    format!(
        "{}× {} ({}) at {}, first at {}{in_runs}",
        g.count,
        escape(&g.reason),
        escape(&g.kind),
        escape(&position(g)),
        signed_ns(g.first_ns)
    )
}

/// A count per run: whole for one run, one decimal for several.
fn per_run(count: u64, runs: usize) -> String {
    if runs <= 1 {
        count.to_string()
    } else {
        format!("{:.1}", count as f64 / runs as f64)
    }
}

/// The lines saying what V8 did differently to a function between the sides of a diff
/// (`V8: …`, one fact each; none when the logs show no change), escaped by `escape`.
pub(crate) fn change_lines(c: &JitChange, escape: fn(&str) -> String) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(shift) = &c.tier_shift {
        let share = |t: &Tiers, a: Amount| {
            let all = t.optimized().samples.saturating_add(t.unoptimized().samples);
            if all == 0 {
                0.0
            } else {
                100.0 * a.samples as f64 / all as f64
            }
        };
        let (b, n) = (&c.base.tiers, &c.new.tiers);
        let parts: Vec<String> = [
            ("interpreted", b.interpreted, n.interpreted),
            ("Sparkplug", b.sparkplug, n.sparkplug),
            ("Maglev", b.maglev, n.maglev),
            ("TurboFan", b.turbofan, n.turbofan),
        ]
        .into_iter()
        .filter(|(_, x, y)| x.samples > 0 || y.samples > 0)
        .map(|(name, x, y)| format!("{name} {:.0}% → {:.0}%", share(b, x), share(n, y)))
        .collect();
        lines.push(format!(
            "V8: optimized code ran {:.0}% of its self time in BASE, {:.0}% in NEW ({}; p {:.1e})",
            100.0 * shift.base_optimized,
            100.0 * shift.new_optimized,
            parts.join(", "),
            shift.p_value
        ));
    }
    for (list, which, runs, other) in [
        (&c.new_deopts, "in NEW, none in BASE", c.new.runs, (&c.base, "BASE")),
        (&c.gone_deopts, "in BASE, none in NEW", c.base.runs, (&c.new, "NEW")),
    ] {
        if list.is_empty() {
            continue;
        }
        let texts: Vec<String> = list.iter().map(|d| deopt_change_text(d, runs, escape)).collect();
        let unlogged = match (other.0.deopts_logged, other.0.runs) {
            (true, _) => String::new(),
            (false, 1) => format!(
                " ({}'s log has no deopt records at all: recorded without --log-deopt, or V8 deoptimized nothing)",
                other.1
            ),
            (false, _) => format!(
                " (not every {} log has deopt records: recorded without --log-deopt, or V8 deoptimized nothing)",
                other.1
            ),
        };
        lines.push(format!("V8: deopts {which}: {}{unlogged}", texts.join("; ")));
    }
    let names = |list: &[InlineChange]| list.iter().map(|i| escape(&i.name)).collect::<Vec<_>>().join(", ");
    if !c.no_longer_inlined.is_empty() {
        lines.push(format!("V8: NEW's optimized code does not inline {} (BASE's did)", names(&c.no_longer_inlined)));
    }
    if !c.newly_inlined.is_empty() {
        lines.push(format!("V8: NEW's optimized code inlines {} (BASE's did not)", names(&c.newly_inlined)));
    }
    let (b, n) = (&c.base, &c.new);
    if c.compared() && b.optimizations * n.runs as u64 != n.optimizations * b.runs as u64 {
        let per = if b.runs > 1 || n.runs > 1 { " per run" } else { "" };
        lines.push(format!(
            "V8: optimized {} times{per} in NEW, {} in BASE",
            per_run(n.optimizations, n.runs),
            per_run(b.optimizations, b.runs)
        ));
    }
    lines
}
