//! What an annotation shows of a function, for every format alike: which lines (the others
//! folded away), which are the hottest, and each line's fields (JSON and CSV).

use cpuprof_analysis::{Amount, LineAmount, TopRow, Weight};

use crate::text::{columns, truncate};

use super::cells::{Cell, Field};
use super::words::{pct_of, unit_amount};
use super::{AnnotateDocument, AnnotatedFunction};

/// How many of a function's lines are marked as its hottest (each with at least
/// [`HOT_MIN_PCT`] of its self).
pub(crate) const HOT_LINES: usize = 3;
/// The least share of a function's self, %, a line marked hot has.
pub(crate) const HOT_MIN_PCT: f64 = 5.0;

/// A line of a listing, or a run of lines folded away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shown {
    /// A line, 1-based.
    Line(u32),
    /// The lines `from..=to`, none with samples, not shown.
    Folded { from: u32, to: u32 },
}

/// One function's listing.
pub(crate) struct Listing<'a> {
    pub(crate) function: &'a AnnotatedFunction,
    pub(crate) row: &'a TopRow,
    /// The lines shown and the runs folded, in line order.
    pub(crate) shown: Vec<Shown>,
    /// The hottest lines, hottest first.
    pub(crate) hot: Vec<u32>,
    /// The profile's total (the denominator of `self_pct` and `total_pct`).
    pub(crate) whole: i64,
}

impl<'a> Listing<'a> {
    /// `function`'s listing in `doc`.
    pub(crate) fn of(doc: &AnnotateDocument<'a>, function: &'a AnnotatedFunction) -> Self {
        let row = &doc.graph.functions()[function.function];
        let lines = &function.lines.lines;
        let sampled = |l: &LineAmount| has(l.self_amount) || l.total.is_some_and(has);
        let anchors: Vec<u32> = lines.iter().filter(|l| sampled(l)).map(|l| l.line).collect();
        let known = u32::try_from(function.source.lines.len()).unwrap_or(u32::MAX);
        let start = match (row.line.filter(|l| *l > 0), anchors.first()) {
            (Some(def), Some(first)) => Some(def.min(*first)),
            (def, first) => def.or(first.copied()),
        };
        let shown = start.map_or_else(Vec::new, |start| {
            let last = anchors.last().copied().unwrap_or(start).max(start);
            // Without the text, the lines around those with samples show nothing: none are
            // listed (and a profile's line numbers, however far apart, cost nothing).
            let (context, full) = if known == 0 { (0, false) } else { (doc.context, doc.full) };
            // Context after the last line with samples, within the script.
            let end = if known == 0 {
                last
            } else {
                u32::try_from(u64::from(last).saturating_add(context as u64)).unwrap_or(u32::MAX).min(known.max(last))
            };
            plan(start, end, &anchors, context, full)
        });
        let mut hot: Vec<&LineAmount> = lines
            .iter()
            .filter(|l| l.self_amount.weight > 0 && pct_of(l.self_amount.weight, row.self_weight) >= HOT_MIN_PCT)
            .collect();
        hot.sort_by_key(|l| (std::cmp::Reverse(l.self_amount.weight), l.line));
        let hot = hot.iter().take(HOT_LINES).map(|l| l.line).collect();
        Listing { function, row, shown, hot, whole: doc.graph.total() }
    }

    /// The samples of `line` (none: zero).
    pub(crate) fn amounts(&self, line: u32) -> LineAmount {
        let lines = &self.function.lines;
        match lines.lines.binary_search_by_key(&line, |l| l.line) {
            Ok(i) => lines.lines[i],
            Err(_) => {
                LineAmount { line, self_amount: Amount::default(), total: lines.call_sites.then(Amount::default) }
            }
        }
    }

    /// The text of `line`, if the source has it.
    pub(crate) fn text(&self, line: u32) -> Option<&str> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        self.function.source.lines.get(index).map(String::as_str)
    }

    /// The lines shown, without the folded runs.
    pub(crate) fn lines(&self) -> impl Iterator<Item = u32> + '_ {
        self.shown.iter().filter_map(|s| match s {
            Shown::Line(l) => Some(*l),
            Shown::Folded { .. } => None,
        })
    }

    /// A line's share of the function's self, %.
    pub(crate) fn function_pct(&self, amount: Amount) -> f64 {
        pct_of(amount.weight, self.row.self_weight)
    }

    /// Whether the line is one of the hottest.
    pub(crate) fn is_hot(&self, line: u32) -> bool {
        self.hot.contains(&line)
    }
}

/// Columns a tab in source text stands for.
const TAB_COLUMNS: usize = 4;

/// A source line as text reports show it: tabs as spaces, controls and bidi characters as
/// visible escapes (the source is other people's code).
pub(crate) fn code_text(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    // The columns so far, counted as they grow (a line may hold many tabs).
    let mut width = 0;
    for c in line.chars() {
        if c == '\t' {
            let spaces = TAB_COLUMNS - width % TAB_COLUMNS;
            out.extend(std::iter::repeat_n(' ', spaces));
            width += spaces;
        } else {
            out.push(c);
            width += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        }
    }
    crate::text::visible(&out)
}

/// `lines 14–18`: a folded run.
pub(crate) fn folded_text(from: u32, to: u32) -> String {
    format!("⋮ lines {from}–{to}: no samples")
}

/// What the listing says about the function's source and lines, besides its rows: where the
/// source came from, or that there is none; that lines have no totals; self on no line.
pub(crate) fn notes(listing: &Listing<'_>, unit: Weight) -> Vec<String> {
    let f = listing.function;
    let mut notes = Vec::new();
    let file = f.source.file.as_deref().map(crate::text::visible);
    notes.push(match (f.source.origin, file) {
        (super::SourceOrigin::None, Some(file)) => {
            let why =
                f.source.missing.as_deref().map(crate::text::visible).map_or_else(String::new, |w| format!(": {w}"));
            format!("source: none shown for {file}{why} (line numbers and times only)")
        }
        (super::SourceOrigin::None, None) => {
            "source: the function names no script (line numbers and times only)".to_owned()
        }
        (origin, Some(file)) => format!("source: {file} ({})", origin.as_str()),
        (origin, None) => format!("source: {}", origin.as_str()),
    });
    if !f.lines.call_sites && !f.lines.lines.is_empty() {
        notes.push("self time only: the profile records no call-site lines, so lines have no total".to_owned());
    }
    if f.lines.unlined.weight != 0 || f.lines.unlined.samples != 0 {
        let amount = unit_amount(unit, f.lines.unlined.weight);
        notes.push(format!("{amount} of its self ({:.1}%) is on no known line", listing.function_pct(f.lines.unlined)));
    }
    if f.lines.lines.is_empty() && listing.row.self_weight == 0 && listing.row.total_weight != 0 {
        notes.push("no self time: its time is in the functions it calls".to_owned());
    }
    notes
}

/// A listing as text lines (the table's, and Markdown's code block): a header, then each line
/// shown with its self, its share of the profile's total and of the function's self (and its
/// total where the profile has call-site lines), its number, a mark on the hottest and its
/// text cut to `width`; each folded run as one line. `color`: the hottest lines bold red, those without samples dimmed.
pub(crate) fn listing_lines(listing: &Listing<'_>, unit: Weight, width: Option<usize>, color: bool) -> Vec<String> {
    if listing.shown.is_empty() {
        return Vec::new();
    }
    let paint = |text: String, code: &str| if color { format!("\x1b[{code}m{text}\x1b[0m") } else { text };
    let call_sites = listing.function.lines.call_sites;
    let blank_zero = |a: Amount, text: String| if has(a) { text } else { String::new() };
    let self_text = |l: u32| {
        let a = listing.amounts(l).self_amount;
        blank_zero(a, unit_amount(unit, a.weight))
    };
    let pct_text = |l: u32| {
        let a = listing.amounts(l).self_amount;
        blank_zero(a, format!("{:.1}%", listing.function_pct(a)))
    };
    // Its share of the profile, as `top`'s self%.
    let all_text = |l: u32| {
        let a = listing.amounts(l).self_amount;
        blank_zero(a, format!("{:.1}%", pct_of(a.weight, listing.whole)))
    };
    let total_text = |l: u32| {
        let t = listing.amounts(l).total.unwrap_or_default();
        blank_zero(t, unit_amount(unit, t.weight))
    };
    // The numbers' columns, as wide as their widest cell.
    let lines: Vec<u32> = listing.lines().collect();
    let widest = |header: &str, text: &dyn Fn(u32) -> String| {
        lines.iter().map(|l| columns(&text(*l))).chain([columns(header)]).max().unwrap_or(0)
    };
    let (w_self, w_all, w_pct, w_line) = (
        widest("self", &self_text),
        widest("self%", &all_text),
        widest("fn%", &pct_text),
        widest("line", &|l| l.to_string()),
    );
    let w_total = if call_sites { widest("total", &total_text) } else { 0 };
    let numbers = |l: Option<u32>| {
        let cell = |f: &dyn Fn(u32) -> String, header: &str| l.map_or_else(|| header.to_owned(), f);
        let (s, a, p) = (cell(&self_text, "self"), cell(&all_text, "self%"), cell(&pct_text, "fn%"));
        let mut text = format!("{s:>w_self$} {a:>w_all$} {p:>w_pct$}");
        if call_sites {
            let t = cell(&total_text, "total");
            text.push_str(&format!(" {t:>w_total$}"));
        }
        let n = cell(&|l: u32| l.to_string(), "line");
        text.push_str(&format!(" {n:>w_line$}"));
        text
    };
    let mut out = vec![numbers(None)];
    // The numbers, a blank, the mark and a blank before the text.
    let gutter = columns(&out[0]) + 3;
    let room = width.map(|w| w.saturating_sub(gutter).max(8));
    for shown in &listing.shown {
        out.push(match *shown {
            Shown::Line(l) => {
                let hot = listing.is_hot(l);
                let text = listing.text(l).map(code_text).unwrap_or_default();
                let text = room.map_or_else(|| text.clone(), |room| truncate(&text, room));
                let mark = if hot { '▶' } else { ' ' };
                let line = format!("{} {mark} {text}", numbers(Some(l)));
                let line = line.trim_end().to_owned();
                let amounts = listing.amounts(l);
                match (hot, has(amounts.self_amount) || amounts.total.is_some_and(has)) {
                    (true, _) => paint(line, "1;31"),
                    (false, false) => paint(line, "2"),
                    (false, true) => line,
                }
            }
            Shown::Folded { from, to } => paint(format!("{:gutter$}{}", "", folded_text(from, to)), "2"),
        });
    }
    out
}

fn has(a: Amount) -> bool {
    a.weight != 0 || a.samples != 0
}

/// The lines `start..=end` with the `anchors` (lines with samples, ascending) and `context`
/// lines around each shown, and `start`; runs of two or more others folded; all shown when
/// `full`. Built from the anchors' ranges, so that its cost is that of what it lists.
fn plan(start: u32, end: u32, anchors: &[u32], context: usize, full: bool) -> Vec<Shown> {
    if end < start {
        return Vec::new();
    }
    let (start, end) = (u64::from(start), u64::from(end));
    let context = u64::try_from(context).unwrap_or(u64::MAX);
    // The ranges shown, merged: the first line, and each anchor with its context.
    let mut ranges: Vec<(u64, u64)> = if full { vec![(start, end)] } else { vec![(start, start)] };
    if !full {
        for a in anchors.iter().map(|a| u64::from(*a)) {
            let (from, to) = (a.saturating_sub(context).max(start), a.saturating_add(context).min(end));
            match ranges.last_mut() {
                Some(last) if from <= last.1.saturating_add(1) => last.1 = last.1.max(to),
                _ if from <= to => ranges.push((from, to)),
                _ => {}
            }
        }
    }
    let line = |l: u64| u32::try_from(l).unwrap_or(u32::MAX);
    let mut shown = Vec::new();
    let mut next = start;
    for (from, to) in ranges {
        match from.saturating_sub(next) {
            0 => {}
            // A gap of one line is shown, not folded.
            1 => shown.push(Shown::Line(line(next))),
            _ => shown.push(Shown::Folded { from: line(next), to: line(from - 1) }),
        }
        shown.extend((from.max(next)..=to).map(|l| Shown::Line(line(l))));
        next = next.max(to.saturating_add(1));
    }
    match end.saturating_add(1).saturating_sub(next) {
        0 => {}
        1 => shown.push(Shown::Line(line(next))),
        _ => shown.push(Shown::Folded { from: line(next), to: line(end) }),
    }
    shown
}

/// What a line's fields are a function of.
pub(crate) struct LineCells<'a> {
    pub(crate) listing: &'a Listing<'a>,
    pub(crate) amounts: LineAmount,
}

type Value = fn(&LineCells<'_>) -> Cell;

/// A line's fields, as JSON and CSV write them.
pub(crate) const LINE_FIELDS: &[Field<Value>] = &[
    Field { key: "line", value: |c| Cell::Int(Some(i64::from(c.amounts.line))) },
    Field { key: "text", value: |c| Cell::Text(c.listing.text(c.amounts.line).map(str::to_owned)) },
    Field { key: "self", value: |c| Cell::Int(Some(c.amounts.self_amount.weight)) },
    Field { key: "self_samples", value: |c| Cell::Int(Some(c.amounts.self_amount.samples)) },
    Field { key: "self_pct", value: |c| Cell::Num(pct_of(c.amounts.self_amount.weight, c.listing.whole)) },
    Field { key: "function_pct", value: |c| Cell::Num(c.listing.function_pct(c.amounts.self_amount)) },
    Field { key: "total", value: |c| Cell::Int(c.amounts.total.map(|t| t.weight)) },
    Field { key: "total_samples", value: |c| Cell::Int(c.amounts.total.map(|t| t.samples)) },
    Field { key: "total_pct", value: |c| Cell::MaybeNum(c.amounts.total.map(|t| pct_of(t.weight, c.listing.whole))) },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_folds_runs_of_two_or_more_lines_away_from_samples() {
        use Shown::{Folded, Line};
        assert_eq!(
            plan(10, 30, &[12, 20], 1, false),
            vec![
                Line(10),
                Line(11),
                Line(12),
                Line(13),
                Folded { from: 14, to: 18 },
                Line(19),
                Line(20),
                Line(21),
                Folded { from: 22, to: 30 }
            ]
        );
        // A gap of one line is shown, not folded.
        assert_eq!(plan(1, 5, &[1, 5], 1, false), vec![Line(1), Line(2), Line(3), Line(4), Line(5)]);
        assert_eq!(plan(1, 4, &[4], 0, true), (1..=4).map(Line).collect::<Vec<_>>());
        assert_eq!(plan(3, 3, &[], 2, false), vec![Line(3)]);
        // Lines as far apart as a profile may say: a few rows, at once.
        assert_eq!(
            plan(1, u32::MAX, &[1, u32::MAX], 3, false),
            vec![
                Line(1),
                Line(2),
                Line(3),
                Line(4),
                Folded { from: 5, to: u32::MAX - 4 },
                Line(u32::MAX - 3),
                Line(u32::MAX - 2),
                Line(u32::MAX - 1),
                Line(u32::MAX)
            ]
        );
        assert_eq!(plan(5, 4, &[], 0, true), vec![]);
    }
}
