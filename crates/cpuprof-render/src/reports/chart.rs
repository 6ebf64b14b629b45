//! The timeline as a terminal chart: one line of Unicode blocks per category over a time axis,
//! and the phases under it, fitting a given width.

use cpuprof_analysis::{Category, Timeline};

use crate::text::visible;
use crate::time::format_ns;

/// Eighths of a cell, from empty to full.
const LEVELS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Width of the labels before the chart.
const LABEL: usize = 13;

/// The chart for `width` columns (at least 20 columns of chart); the phases' lines wrap within
/// `wrap` (a terminal's width; `None`: whole).
pub(crate) fn chart(timeline: &Timeline, width: usize, wrap: Option<usize>) -> String {
    let buckets = &timeline.buckets;
    let columns = width.saturating_sub(LABEL).max(20).min(buckets.len().max(1));
    // Buckets per column: the chart shows the buckets' sums, never more columns than fit.
    let per = buckets.len().div_ceil(columns).max(1);
    let groups: Vec<&[cpuprof_analysis::Bucket]> = buckets.chunks(per).collect();
    let whole = |g: &[cpuprof_analysis::Bucket]| {
        g.iter().map(|b| b.busy().saturating_add(b.of(Category::Idle))).fold(0i64, i64::saturating_add)
    };
    let line = |label: &str, value: &dyn Fn(&cpuprof_analysis::Bucket) -> i64| {
        let mut out = format!("{label:<LABEL$}");
        for g in &groups {
            let (v, w) = (g.iter().map(value).fold(0i64, i64::saturating_add), whole(g));
            let level = if v <= 0 || w <= 0 { 0 } else { ((8.0 * v as f64 / w as f64).round() as usize).clamp(1, 8) };
            out.push(LEVELS[level]);
        }
        // No trailing blanks: an empty end of the line is the same on every terminal.
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    };
    let mut out = line("busy", &|b| b.busy());
    for category in Category::ALL {
        if buckets.iter().any(|b| b.of(category) != 0) {
            out.push_str(&line(category.as_str(), &|b| b.of(category)));
        }
    }
    // The time axis: a tick and a label wherever one fits.
    let span = timeline.bucket_ns.saturating_mul(per as i64);
    let mut axis = vec![' '; groups.len()];
    let mut labels = vec![' '; groups.len() + 12];
    let mut free = 0;
    for (c, slot) in axis.iter_mut().enumerate() {
        let at = span.saturating_mul(c as i64);
        let text = if at == 0 { "0".to_owned() } else { format_ns(at).replace(' ', "") };
        if c >= free && c + text.chars().count() <= labels.len() {
            *slot = '╵';
            for (k, ch) in text.chars().enumerate() {
                labels[c + k] = ch;
            }
            free = c + text.chars().count() + 3;
        }
    }
    out.push_str(&format!("{:<LABEL$}{}\n", "", axis.iter().collect::<String>().trim_end()));
    out.push_str(&format!("{:<LABEL$}{}\n", "", labels.iter().collect::<String>().trim_end()));
    if timeline.phases.len() > 1 {
        let mark: String = (0..groups.len())
            .map(|c| {
                let at = span.saturating_mul(c as i64);
                let phase = timeline.phases.iter().position(|p| at < p.end_ns).unwrap_or(timeline.phases.len() - 1);
                char::from_digit((phase + 1) as u32 % 36, 36).unwrap_or('?')
            })
            .collect();
        out.push_str(&format!("{:<LABEL$}{mark}\n", "phases"));
    }
    for (i, p) in timeline.phases.iter().enumerate() {
        let label = if p.label.starts_with("phase ") { String::new() } else { format!(" {}", p.label) };
        let line = format!(
            "  {}{label} · {} – {} · entry {}",
            i + 1,
            format_ns(p.start_ns),
            format_ns(p.end_ns),
            visible(&p.entry)
        );
        out.push_str(&super::fit::wrap(&line, wrap));
        out.push('\n');
    }
    out
}
