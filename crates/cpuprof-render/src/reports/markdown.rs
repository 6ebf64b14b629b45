//! Markdown (a pull-request comment): tables for `top` and `diff`, nested lists for call trees.

use std::fmt::Write as _;

use cpuprof_analysis::{CallGraph, CallTree, Category, DiffRow, Metric, Verdict};

use crate::time::format_ns;

use super::outline::{self, Line};
use super::top_columns::{shown, Fit, Shown};
use super::words::{
    amount, blocks_summary, chain_text, delta_text, diff_location, diff_summary, explanation_lines, header, node_name,
    pct_of, profile_header, ratio_text, short_location, signed_amount, top_location, unit_amount, NO_IDLE_NOTE,
};
use super::{BlocksDocument, CallsDocument, DiffDocument, TimelineDocument, TopDocument, TreeDocument, TreeView};
use crate::text::{escaped, is_unsafe_to_show, truncate};

/// Text safe in Markdown prose and GFM table cells: only what Markdown would read as syntax
/// there is escaped — emphasis, code, links, tables, headings, math and mentions by a backslash
/// (`\*`, `` \` ``, `\[`, `\|`, `\$`, `\@` …), HTML by entities — so that the rest (`:`, `/`, `.`,
/// `(`, `-` …) reads as it is; controls and bidi characters are shown as escapes.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let chars: Vec<char> = s.chars().collect();
    // Whether the current word (since the last space) has an `@`.
    let mut at_in_word = false;
    for (i, &c) in chars.iter().enumerate() {
        if c.is_whitespace() {
            at_in_word = false;
        }
        at_in_word |= c == '@';
        // GFM links `scheme://…`, `www.…` and `x@y.z` by themselves: a backslash before the `:`
        // or `.` that makes one keeps a name from becoming a link.
        let autolink = match c {
            ':' => chars.get(i + 1..i + 3) == Some(&['/', '/'][..]),
            '.' => {
                at_in_word
                    || chars
                        .get(i.saturating_sub(3)..i)
                        .is_some_and(|w| w.len() == 3 && w.iter().collect::<String>().eq_ignore_ascii_case("www"))
            }
            _ => false,
        };
        if autolink {
            out.push('\\');
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\\\n"),
            c if is_unsafe_to_show(c) => {
                out.push('\\');
                out.push_str(&escaped(c));
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' | '!' | '$' | '@' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` as a code span for a GFM table cell: [`code_span`], its `|` escaped (GFM splits cells
/// before it reads spans, and unescapes them then).
pub(crate) fn code(s: &str) -> String {
    code_span(&crate::text::visible(s).replace('|', "\\|"))
}

/// `s` as a code span in prose (where `|` is plain text).
pub(crate) fn code_in_text(s: &str) -> String {
    code_span(&crate::text::visible(s))
}

/// A code span of `shown`: literal whatever it holds (no emphasis, link, HTML or mention),
/// fenced by one backtick more than its longest run of them, padded when it would lose a
/// character to the fence (a backtick at an end, or a space at both).
fn code_span(shown: &str) -> String {
    if shown.is_empty() {
        return String::new();
    }
    let longest = shown.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let spaced = shown.starts_with(' ') && shown.ends_with(' ');
    let pad = if shown.starts_with('`') || shown.ends_with('`') || spaced { " " } else { "" };
    format!("{fence}{pad}{shown}{pad}{fence}")
}

pub(crate) fn top(doc: &TopDocument<'_>) -> String {
    let mut out = String::new();
    for line in header(doc).lines() {
        out.push_str(&format!("**{}**\n\n", escape(line)));
    }
    if doc.report.rows.is_empty() {
        out.push_str("No samples to report.\n");
        return out;
    }
    let columns: Vec<&Shown> = shown(doc).collect();
    let cells = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    out.push_str(&cells(columns.iter().map(|c| (c.header)(doc).to_owned()).collect()));
    out.push_str(&format!(
        "|{}|\n",
        columns.iter().map(|c| if c.fit == Fit::Number { "---:" } else { "---" }).collect::<Vec<_>>().join("|")
    ));
    for r in doc.rows() {
        out.push_str(&cells(
            columns
                .iter()
                .map(|c| match c.fit {
                    Fit::Number => (c.text)(doc, r),
                    Fit::Name => code(&truncate(&(c.text)(doc, r), 120)),
                    Fit::Location => code(&(c.text)(doc, r)),
                })
                .collect(),
        ));
    }
    out
}

pub(crate) fn diff(doc: &DiffDocument<'_>) -> String {
    // The summary and the numbers are cpuprof's own text; names and files are code spans.
    let mut out = format!("**cpuprof diff**: {}{}\n\n", diff_summary(doc), biggest_changes(doc));
    for warning in &doc.report.warnings {
        let _ = writeln!(out, "> **Warning:** {}\n", escape(warning));
    }
    if doc.rows.is_empty() {
        out.push_str("No functions to compare.\n");
        return out;
    }
    let metric = match doc.report.metric {
        Metric::SelfTime => "self",
        Metric::Total => "total",
    };
    let _ = writeln!(out, "<details><summary>{} functions compared ({metric} per run)</summary>\n", doc.rows.len());
    let columns = DIFF_COLUMNS;
    let cells = |texts: &mut dyn Iterator<Item = String>| format!("| {} |\n", texts.collect::<Vec<_>>().join(" | "));
    out.push_str(&cells(&mut columns.iter().map(|c| c.header.to_owned())));
    out.push_str(&format!("|{}\n", columns.iter().map(|c| if c.right { "---:|" } else { "---|" }).collect::<String>()));
    for row in doc.rows {
        out.push_str(&cells(&mut columns.iter().map(|c| (c.text)(doc, row))));
    }
    out.push_str("\n</details>\n");
    if !doc.explanations.is_empty() {
        out.push_str("\n**Where the changes came from**\n\n");
    }
    for e in doc.explanations {
        let row = &doc.report.rows[e.row];
        let _ = writeln!(
            out,
            "- **{}** {} ({})",
            escape(&row.name),
            code_in_text(&diff_location(row)),
            delta_text(doc, row)
        );
        for line in explanation_lines(doc, e, escape) {
            let _ = writeln!(out, "  - {line}");
        }
    }
    out
}

/// A column of `diff`'s Markdown table: its header, whether it is right-aligned, its text.
struct DiffColumn {
    header: &'static str,
    right: bool,
    text: fn(&DiffDocument<'_>, &DiffRow) -> String,
}

/// The columns of `diff`'s Markdown table, in order: the amounts are per run, of the metric
/// ranked by.
const DIFF_COLUMNS: &[DiffColumn] = &[
    DiffColumn { header: "verdict", right: false, text: |_, r| verdict_cell(r) },
    DiffColumn { header: "function", right: false, text: |_, r| code(&truncate(&r.name, 120)) },
    DiffColumn { header: "location", right: false, text: linked },
    DiffColumn { header: "base", right: true, text: |doc, r| amount(ranked(doc, r).0, doc.report.unit) },
    DiffColumn { header: "new", right: true, text: |doc, r| amount(ranked(doc, r).1, doc.report.unit) },
    DiffColumn { header: "Δ", right: true, text: delta_text },
    DiffColumn { header: "ratio", right: true, text: |doc, r| ratio_text(r, doc.report.metric) },
    DiffColumn { header: "p", right: true, text: |_, r| format!("{:.2e}", r.p_value) },
];

/// A row's base and new amounts per run, of the metric the diff ranks by.
fn ranked(doc: &DiffDocument<'_>, row: &DiffRow) -> (f64, f64) {
    match doc.report.metric {
        Metric::SelfTime => (row.base.self_per_run, row.new.self_per_run),
        Metric::Total => (row.base.total_per_run, row.new.total_per_run),
    }
}

/// A row's location as code, a link to its source with `--link` when it is a file below the
/// checkout (or the current directory).
fn linked(doc: &DiffDocument<'_>, row: &DiffRow) -> String {
    let location = code(&diff_location(row));
    let (Some(link), Some(relative)) = (doc.link, checkout_path(doc, row)) else { return location };
    let url = link
        .template
        .replace("{path}", &url_path(&relative))
        .replace("{line}", &row.line.map(|l| l.to_string()).unwrap_or_default());
    format!("[{location}]({url})")
}

/// A row's file as a path below its build's checkout (or the current directory), if it is one.
pub(crate) fn checkout_path(doc: &DiffDocument<'_>, row: &DiffRow) -> Option<String> {
    let file = row.file.as_deref()?;
    let root = if row.verdict == Verdict::Gone { &doc.checkouts.base_root } else { &doc.checkouts.new_root };
    let path = file;
    let below = |dir: &str| path.strip_prefix(dir.trim_end_matches('/')).and_then(|p| p.strip_prefix('/'));
    // A path already below its checkout (diff names scripts so when it found their roots).
    let already = !path.starts_with('/') && !path.contains(':');
    let relative = if already { Some(path) } else { root.as_deref().or(doc.terminal.cwd).and_then(below) };
    relative.map(str::to_owned)
}

/// `path` for a URL: each byte outside the unreserved set and `/` percent-encoded (so no space,
/// parenthesis or bracket can end the Markdown link).
fn url_path(path: &str) -> String {
    path.bytes().fold(String::with_capacity(path.len()), |mut out, b| {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
        out
    })
}

/// ` · first changes: `f` +1.20 ms, `g` −0.80 ms`: the first significant changes in the
/// report's order, for the summary line.
fn biggest_changes(doc: &DiffDocument<'_>) -> String {
    let shown: Vec<String> = doc
        .rows
        .iter()
        .filter(|r| r.significant && r.verdict != Verdict::Unchanged)
        .take(3)
        .map(|r| {
            let delta = match doc.report.metric {
                Metric::SelfTime => r.self_delta(),
                Metric::Total => r.total_delta(),
            };
            format!("{} {}", code_in_text(&truncate(&r.name, 60)), signed_amount(delta, doc.report.unit))
        })
        .collect();
    if shown.is_empty() {
        String::new()
    } else {
        format!(" · first changes: {}", shown.join(", "))
    }
}

/// A row's verdict with its mark: ▲ significantly hotter (or new), ▼ cooler (or gone); a change
/// that is not significant says so and has none.
fn verdict_cell(row: &DiffRow) -> String {
    let verdict = row.verdict.as_str();
    match row.verdict {
        Verdict::Unchanged => verdict.to_owned(),
        _ if !row.significant => format!("{verdict} (n.s.)"),
        Verdict::Hotter | Verdict::New => format!("▲ **{verdict}**"),
        Verdict::Cooler | Verdict::Gone => format!("▼ **{verdict}**"),
    }
}

/// A call tree as a nested list: `- **12.3%** 1.20 s (self 0.1%) name · file:line`.
/// `upward`: a tree of callers (chains read `c ← b ← a`, named by their first function);
/// `with_more`: a line for the nodes a cut left out.
fn tree_list(
    out: &mut String,
    graph: &CallGraph<'_>,
    tree: &CallTree,
    chains: (bool, bool),
    with_more: bool,
    whole: i64,
) {
    let (fold_chains, upward) = chains;
    let amount = |v: i64| unit_amount(graph.unit(), v);
    // Nested no deeper than the table draws guides; deeper items say their level.
    let indent = |guides: &outline::Guides| {
        let mut s = "  ".repeat(guides.depth().min(outline::MAX_GUIDES));
        s.push_str("- ");
        if guides.depth() >= outline::MAX_GUIDES {
            let _ = write!(s, "\\[{}\\] ", guides.depth() + 1);
        }
        s
    };
    for line in outline::lines(tree, fold_chains, !upward) {
        match line {
            Line::Nodes { chain, guides } => {
                let node = &tree.nodes[chain[chain.len() - 1]];
                let subject = &tree.nodes[if upward { chain[0] } else { chain[chain.len() - 1] }];
                let names: Vec<String> =
                    chain.iter().map(|n| escape(&truncate(node_name(graph, tree.nodes[*n].function), 120))).collect();
                let location =
                    subject.function.map(|f| short_location(&graph.functions()[f])).filter(|l| !l.is_empty());
                let _ = writeln!(
                    out,
                    "{}**{:.1}%** {} (self {:.1}%) {}{}",
                    indent(&guides),
                    pct_of(node.total.weight, whole),
                    amount(node.total.weight),
                    pct_of(node.self_amount.weight, whole),
                    chain_text(&names, if upward { " ← " } else { " → " }, MARKDOWN_CHAIN_CHARS),
                    location.map(|l| format!(" · {}", escape(&l))).unwrap_or_default(),
                );
            }
            Line::More { pruned, guides } if with_more => {
                let _ = writeln!(out, "{}… {} more ({})", indent(&guides), pruned.nodes, amount(pruned.total.weight));
            }
            Line::More { .. } => {}
        }
    }
}

/// The longest chain of names an item shows before eliding its middle.
const MARKDOWN_CHAIN_CHARS: usize = 400;

pub(crate) fn tree(doc: &TreeDocument<'_>) -> String {
    let graph = doc.graph;
    let mut out = String::new();
    for line in profile_header(doc.source, doc.meta, graph.summary(), graph.samples(), graph.unit()).lines() {
        let _ = writeln!(out, "**{}**\n", escape(line));
    }
    out.push_str(match doc.view {
        TreeView::TopDown => "Top-down: callers above the functions they call (total%, total, self%).\n\n",
        TreeView::BottomUp => "Bottom-up: functions by self time, under each the callers its time came through.\n\n",
    });
    if doc.tree.roots.is_empty() {
        out.push_str("No samples to report.\n");
        return out;
    }
    tree_list(&mut out, graph, doc.tree, (doc.fold_chains, doc.view == TreeView::BottomUp), true, graph.total());
    out
}

pub(crate) fn calls(doc: &CallsDocument<'_>) -> String {
    let graph = doc.graph;
    let row = &graph.functions()[doc.function];
    let mut out = String::new();
    for line in profile_header(doc.source, doc.meta, graph.summary(), graph.samples(), graph.unit()).lines() {
        let _ = writeln!(out, "**{}**\n", escape(line));
    }
    let amount = |v: i64| unit_amount(graph.unit(), v);
    let _ = writeln!(
        out,
        "**{}** {} · self {} ({:.1}%) · total {} ({:.1}%)\n",
        escape(&truncate(&row.name, 120)),
        escape(&top_location(row)),
        amount(row.self_weight),
        pct_of(row.self_weight, graph.total()),
        amount(row.total_weight),
        pct_of(row.total_weight, graph.total()),
    );
    // Percentages here are shares of the function's total.
    let sections = [("Callers", doc.callers, None, true), ("Callees", doc.callees, Some(row.self_weight), false)];
    for (title, tree, own, upward) in sections {
        let Some(tree) = tree else { continue };
        let _ = writeln!(out, "{title} (share of its total):\n");
        tree_list(&mut out, graph, tree, (false, upward), false, row.total_weight);
        if let Some(own) = own.filter(|w| *w != 0) {
            let _ = writeln!(out, "- **{:.1}%** {} (self)", pct_of(own, row.total_weight), amount(own));
        }
        out.push('\n');
    }
    out
}

/// The phases, then a table of buckets.
pub(crate) fn timeline(doc: &TimelineDocument<'_>) -> String {
    let t = doc.timeline;
    let mut out =
        format!("**{}** · {} buckets of {}\n\n", escape(doc.source), t.buckets.len(), escape(&format_ns(t.bucket_ns)));
    out.push_str("| phase | label | from | to | entry |\n|---:|---|---:|---:|---|\n");
    for (i, p) in t.phases.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            i + 1,
            escape(&p.label),
            escape(&format_ns(p.start_ns)),
            escape(&format_ns(p.end_ns)),
            escape(&p.entry)
        );
    }
    let columns = super::timeline_columns::MARKDOWN;
    let line = |texts: &mut dyn Iterator<Item = String>| format!("| {} |\n", texts.collect::<Vec<_>>().join(" | "));
    out.push('\n');
    out.push_str(&line(&mut columns.iter().map(|c| c.header.to_owned())));
    out.push_str(&format!("|{}\n", columns.iter().map(|c| if c.right { "---:|" } else { "---|" }).collect::<String>()));
    for b in &t.buckets {
        let whole = b.busy().saturating_add(b.of(Category::Idle));
        out.push_str(&line(&mut columns.iter().map(|c| escape(&(c.text)(b, whole)))));
    }
    out
}

/// The summary, then the blocks, longest first.
pub(crate) fn blocks(doc: &BlocksDocument<'_>) -> String {
    let b = doc.blocks;
    let mut out = format!("**{}**: {}\n\n", escape(doc.source), escape(&blocks_summary(b, doc.window.is_some())));
    if b.idle_samples == 0 {
        let _ = writeln!(out, "> **Note:** {}\n", escape(NO_IDLE_NOTE));
    }
    if b.blocks.is_empty() {
        return out;
    }
    let columns = &super::block_columns::SHOWN;
    let line = |texts: &mut dyn Iterator<Item = String>| format!("| {} |\n", texts.collect::<Vec<_>>().join(" | "));
    out.push_str(&line(&mut columns.iter().map(|c| c.header.to_owned())));
    out.push_str(&format!(
        "|{}\n",
        columns.iter().map(|c| if c.number { "---:|" } else { "---|" }).collect::<String>()
    ));
    for k in doc.longest() {
        out.push_str(&line(&mut columns.iter().map(|c| escape(&(c.text)(k)))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn hostile_names_are_inert() {
        assert_eq!(escape("a|b"), "a\\|b");
        assert_eq!(escape("<script>"), "&lt;script&gt;");
        assert_eq!(escape("`x`*y*"), "\\`x\\`\\*y\\*");
        assert_eq!(escape("a\nb"), "a\\\\nb");
        assert_eq!(escape("\u{202e}"), "\\\\u{202e}");
    }
}

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[test]
    fn prose_escapes_what_markdown_reads_and_breaks_autolinks() {
        assert_eq!(escape("app.js:12 (x)"), "app.js:12 (x)");
        assert_eq!(escape("*a* [b](c) `d` <e> f|g"), "\\*a\\* \\[b\\](c) \\`d\\` &lt;e&gt; f\\|g");
        assert_eq!(escape("https://evil.example/x"), "https\\://evil.example/x");
        assert_eq!(escape("www.evil.example"), "www\\.evil.example");
        assert_eq!(escape("me@evil.example x.y"), "me\\@evil\\.example x.y");
    }

    #[test]
    fn code_spans_hold_anything() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`edge`"), "`` `edge` ``");
        assert_eq!(code("a|b"), "`a\\|b`");
        assert_eq!(code_in_text("a|b"), "`a|b`");
        assert_eq!(code(" spaced "), "`  spaced  `");
    }
}

/// Each function as a heading with its numbers, notes, and its listing in a code block (the
/// table's lines, without colour or a width).
pub(crate) fn annotate(doc: &super::AnnotateDocument<'_>) -> String {
    use super::annotate_columns::{listing_lines, notes, Listing};

    let graph = doc.graph;
    let header = profile_header(doc.source, doc.meta, graph.summary(), graph.samples(), graph.unit());
    let mut out = String::new();
    for line in header.lines() {
        let _ = write!(out, "**{}**\n\n", escape(line));
    }
    for f in doc.functions {
        let listing = Listing::of(doc, f);
        let row = listing.row;
        let location = top_location(row);
        let _ = write!(
            out,
            "\n### {}{}\n\nself {} ({:.1}%) · total {} ({:.1}%)\n\n",
            escape(&row.name),
            if location.is_empty() { String::new() } else { format!(" · {}", escape(&location)) },
            escape(&unit_amount(graph.unit(), row.self_weight)),
            pct_of(row.self_weight, graph.total()),
            escape(&unit_amount(graph.unit(), row.total_weight)),
            pct_of(row.total_weight, graph.total()),
        );
        for note in notes(&listing, graph.unit()) {
            let _ = writeln!(out, "- {}", escape(&note));
        }
        let lines = listing_lines(&listing, graph.unit(), None, false);
        if lines.is_empty() {
            continue;
        }
        // A fence longer than any run of backticks in the code, which could otherwise close it.
        let longest = lines.iter().flat_map(|l| l.split(|c| c != '`')).map(str::len).max().unwrap_or(0);
        let fence = "`".repeat(longest.max(2) + 1);
        let _ = writeln!(out, "\n{fence}text");
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out, "{fence}");
    }
    out
}
