//! Aligned text tables with a summary line: `top` and `diff`; call trees as indented lines.

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
use cpuprof_analysis::{CallGraph, CallNode, CallTree, Category, GroupBy, Verdict, Weight};

use super::fit::{self, Budget, NAME_WIDTH};
use super::outline::{self, Line};
use super::top_columns::{shown, Fit, Shown};
use super::words::{
    blocks_summary, chain_text, delta_text, diff_location, diff_summary, explanation_lines, function_text, header,
    node_name, pct_of, profile_header, short_location, top_location, unit_amount, NO_IDLE_NOTE,
};
use super::{BlocksDocument, CallsDocument, DiffDocument, TimelineDocument, TopDocument, TreeDocument, TreeView};
use crate::text::{columns, truncate, visible};
use crate::time::format_ns;

/// The category of a `top` row: of its function, or the category it is (`--by category`).
fn row_category(doc: &TopDocument<'_>, row: &cpuprof_analysis::TopRow) -> Option<Category> {
    match doc.by {
        GroupBy::Category => Category::ALL.iter().copied().find(|c| c.as_str() == row.name),
        GroupBy::File | GroupBy::Package => None,
        _ => Some(Category::of_code(row.kind, row.file.as_deref().unwrap_or(""))),
    }
}

/// A category's colour in a terminal: the flame graph's hues, in the 256-colour palette.
fn category_color(category: Category) -> comfy_table::Color {
    comfy_table::Color::AnsiValue(match category {
        Category::App => 208,
        Category::Dependencies => 75,
        Category::Node => 78,
        Category::Native => 185,
        Category::Gc => 167,
        Category::Idle | Category::Program => 245,
    })
}

/// How wide a column of `cells` under `head` is.
fn widest<'s>(head: &str, cells: impl Iterator<Item = &'s str>) -> usize {
    cells.map(columns).max().unwrap_or(0).max(columns(head))
}

/// The summary line, then the table.
pub(crate) fn top(doc: &TopDocument<'_>) -> String {
    let mut out = fit::wrap(&header(doc), doc.terminal.width);
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
    table.load_preset(UTF8_BORDERS_ONLY).set_content_arrangement(ContentArrangement::Disabled);
    if doc.terminal.color {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    // The columns of `top_columns`: the numbers, whole; then the name and the location, which
    // shorten to fit the terminal.
    let columns: Vec<&Shown> = shown(doc).collect();
    let head: Vec<&str> = columns.iter().map(|c| (c.header)(doc)).collect();
    let rows = doc.rows();
    let of = |fit: Fit| columns.iter().find(|c| c.fit == fit);
    let numbers: Vec<Vec<String>> = rows
        .iter()
        .map(|row| columns.iter().filter(|c| c.fit == Fit::Number).map(|c| (c.text)(doc, row)).collect())
        .collect();
    let texts = |fit: Fit| -> Vec<String> {
        of(fit).map(|c| rows.iter().map(|row| visible(&(c.text)(doc, row))).collect()).unwrap_or_default()
    };
    let (names, locations) = (texts(Fit::Name), texts(Fit::Location));
    let fixed: Vec<usize> = (0..numbers.first().map_or(0, Vec::len))
        .map(|k| widest(head[k], numbers.iter().map(|n| n[k].as_str())))
        .collect();
    let what = of(Fit::Name).map_or("", |c| (c.header)(doc));
    let widest_location = widest("location", locations.iter().map(String::as_str));
    let short_location = Budget::short_location(locations.iter().map(String::as_str));
    let budget = Budget::of(
        doc.terminal.width,
        &fixed,
        widest(what, names.iter().map(String::as_str)),
        of(Fit::Location).map(|_| (widest_location, short_location)),
    );
    let cwd = budget.filter(|b| b.location < widest_location).and(doc.terminal.cwd);
    table.set_header(head);
    for (k, ((numbers, name), row)) in numbers.into_iter().zip(&names).zip(rows).enumerate() {
        let mut cells: Vec<Cell> =
            numbers.into_iter().map(|n| Cell::new(n).set_alignment(CellAlignment::Right)).collect();
        let name = Cell::new(fit::name(name, budget.map(|b| b.name)));
        cells.push(match row_category(doc, row).filter(|_| doc.terminal.color) {
            Some(category) => name.fg(category_color(category)),
            None => name,
        });
        if let Some(location) = locations.get(k) {
            let location = Cell::new(fit::location(location, budget.map(|b| b.location), cwd));
            cells.push(if doc.terminal.color { location.add_attribute(comfy_table::Attribute::Dim) } else { location });
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
    let mut out = fit::wrap(&diff_summary(doc), doc.terminal.width);
    out.push('\n');
    if doc.rows.is_empty() {
        out.push_str("no functions to compare\n");
        return out;
    }
    let mut table = Table::new();
    table.load_preset(UTF8_BORDERS_ONLY).set_content_arrangement(ContentArrangement::Disabled);
    if doc.terminal.color {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    // Each row's number columns' texts, in the order of `SHOWN`.
    let columns = super::diff_columns::SHOWN;
    let mut numbers: Vec<Vec<String>> =
        doc.rows.iter().map(|row| columns.iter().map(|c| (c.text)(doc, row)).collect()).collect();
    let widths_of = |numbers: &[Vec<String>]| -> Vec<usize> {
        (0..columns.len()).map(|k| widest(columns[k].header, numbers.iter().map(|n| n[k].as_str()))).collect()
    };
    let mut widths = widths_of(&numbers);
    let names: Vec<String> = doc.rows.iter().map(|row| visible(&row.name)).collect();
    let locations: Vec<String> = doc.rows.iter().map(|row| visible(&diff_location(row))).collect();
    let widest_location = widest("location", locations.iter().map(String::as_str));
    let widest_name = widest("function", names.iter().map(String::as_str));
    let fits = |cols: &[usize], widths: &[usize]| {
        let fixed: Vec<usize> = cols.iter().map(|k| widths[*k]).collect();
        Budget::fits(doc.terminal.width, &fixed, widest_name, Some(widest_location))
    };
    // A narrow terminal gives up the columns dropped at 2, then at 1; then the texts shorten.
    let kept = |level: u8| -> Vec<usize> { (0..columns.len()).filter(|k| columns[*k].dropped < level).collect() };
    let shown =
        [kept(u8::MAX), kept(2), kept(1)].into_iter().find(|cols| fits(cols, &widths)).unwrap_or_else(|| kept(1));
    if !fits(&shown, &widths) {
        for n in &mut numbers {
            for (text, column) in n.iter_mut().zip(columns) {
                *text = (column.short)(std::mem::take(text));
            }
        }
        widths = widths_of(&numbers);
    }
    let budget = Budget::of(
        doc.terminal.width,
        &shown.iter().map(|k| widths[*k]).collect::<Vec<_>>(),
        widest_name,
        Some((widest_location, Budget::short_location(locations.iter().map(String::as_str)))),
    );
    let cwd = budget.filter(|b| b.location < widest_location).and(doc.terminal.cwd);
    let mut header: Vec<&str> = shown.iter().map(|k| columns[*k].header).collect();
    header.extend(["function", "location"]);
    table.set_header(header);
    for (((row, numbers), name), location) in doc.rows.iter().zip(numbers).zip(&names).zip(&locations) {
        let paint = |cell: Cell| match row.verdict {
            _ if !doc.terminal.color || !row.significant => cell,
            Verdict::Hotter | Verdict::New => cell.fg(comfy_table::Color::Red),
            Verdict::Cooler | Verdict::Gone => cell.fg(comfy_table::Color::Green),
            Verdict::Unchanged => cell,
        };
        let mut cells: Vec<Cell> = shown
            .iter()
            .map(|k| {
                let column = &columns[*k];
                let cell = Cell::new(&numbers[*k]);
                let cell = if column.left { cell } else { cell.set_alignment(CellAlignment::Right) };
                if column.painted {
                    paint(cell)
                } else {
                    cell
                }
            })
            .collect();
        cells.push(Cell::new(fit::name(name, budget.map(|b| b.name))));
        cells.push(Cell::new(fit::location(location, budget.map(|b| b.location), cwd)));
        table.add_row(cells);
    }
    out.push_str(&table.to_string());
    out.push('\n');
    if !doc.explanations.is_empty() {
        out.push_str("\nwhere the changes came from:\n");
    }
    for e in doc.explanations {
        let row = &doc.report.rows[e.row];
        let location = diff_location(row);
        out.push_str(&format!(
            "{}{}{} ({})\n",
            visible(&row.name),
            if location.is_empty() { "" } else { "  " },
            visible(&location),
            delta_text(doc, row)
        ));
        for line in explanation_lines(doc, e, visible) {
            out.push_str("  ");
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Width of a call-tree line's function part (guides, names, location) before it is cut, when
/// no terminal width is known.
const TREE_LABEL_WIDTH: usize = 110;

/// The narrowest function part a terminal's width cuts lines to.
const TREE_LABEL_MIN_WIDTH: usize = 24;

/// The numbers columns of a call-tree line, then its guides, its chain of names (joined by
/// `separator`) and the location, cut to `width` in all (when given): the middle of a long
/// chain goes first, so the last name and its location stay.
fn tree_line(
    out: &mut String,
    width: Option<usize>,
    numbers: &str,
    guides: &str,
    (names, separator): (&[String], &str),
    location: &str,
) {
    let room =
        width.map_or(TREE_LABEL_WIDTH, |w| w.saturating_sub(numbers.chars().count() + 2).max(TREE_LABEL_MIN_WIDTH));
    // Guides deeper than the room leave a name at least 16 columns: their outer part gives way
    // to `…` (a name is never blanked by its own indentation).
    let keep = room.saturating_sub(16);
    let guides: String = match guides.chars().count() {
        n if n > keep && keep > 1 => format!("…{}", guides.chars().skip(n - (keep - 1)).collect::<String>()),
        _ => guides.to_owned(),
    };
    let budget = room.saturating_sub(guides.chars().count());
    // The location, when the names keep some room beside it.
    let location_chars = if location.is_empty() { 0 } else { location.chars().count() + 2 };
    let (location, budget) =
        if budget >= location_chars + 16 { (location, budget - location_chars) } else { ("", budget) };
    let mut text = format!("{guides}{}", chain_text(names, separator, budget));
    if !location.is_empty() {
        text.push_str("  ");
        text.push_str(location);
    }
    out.push_str(numbers);
    out.push_str("  ");
    out.push_str(&truncate(&text, room));
    out.push('\n');
}

/// The names of a chain of nodes, escaped for a terminal, and how they are joined: `a → b → c`
/// (callees) or `c ← b ← a` (callers).
fn chain_names(graph: &CallGraph<'_>, tree: &CallTree, chain: &[usize], upward: bool) -> (Vec<String>, &'static str) {
    let names = chain.iter().map(|n| visible(node_name(graph, tree.nodes[*n].function))).collect();
    (names, if upward { " ← " } else { " → " })
}

fn location_of(graph: &CallGraph<'_>, node: &CallNode) -> String {
    node.function.map(|f| visible(&short_location(&graph.functions()[f]))).unwrap_or_default()
}

/// The summary line, what the tree is, then one line per node with guides.
pub(crate) fn tree(doc: &TreeDocument<'_>) -> String {
    let graph = doc.graph;
    let mut out =
        fit::wrap(&profile_header(doc.source, doc.meta, graph.summary(), graph.samples(), graph.unit()), doc.width);
    out.push('\n');
    out.push_str(match doc.view {
        TreeView::TopDown => "top-down: callers above the functions they call\n",
        TreeView::BottomUp => "bottom-up: functions by self time, under each the callers its time came through\n",
    });
    if doc.tree.roots.is_empty() {
        out.push_str(if graph.samples() == 0 {
            "no samples: the profile recorded nothing to report\n"
        } else {
            "no rows: every sample was filtered out\n"
        });
        return out;
    }
    let amount = |v: i64| unit_amount(graph.unit(), v);
    let pct = |v: i64| format!("{:.1}%", pct_of(v, graph.total()));
    // Sample counts beside times (with --weight samples the amounts are the counts).
    let with_samples = graph.unit() != Weight::Samples;
    let samples = |v: i64| if with_samples { format!(" {v:>8}") } else { String::new() };
    out.push_str(&format!(
        "{:>10} {:>6} {:>10} {:>6}{}  function\n",
        "total",
        "total%",
        "self",
        "self%",
        if with_samples { format!(" {:>8}", "samples") } else { String::new() }
    ));
    let upward = doc.view == TreeView::BottomUp;
    for line in outline::lines(doc.tree, doc.fold_chains, !upward) {
        match line {
            Line::Nodes { chain, guides } => {
                let node = &doc.tree.nodes[chain[chain.len() - 1]];
                // The function a line is about: the callee at the end of a chain of calls, the
                // first of a chain of callers.
                let subject = &doc.tree.nodes[if upward { chain[0] } else { chain[chain.len() - 1] }];
                let numbers = format!(
                    "{:>10} {:>6} {:>10} {:>6}{}",
                    amount(node.total.weight),
                    pct(node.total.weight),
                    amount(node.self_amount.weight),
                    pct(node.self_amount.weight),
                    samples(node.total.samples)
                );
                let (names, separator) = chain_names(graph, doc.tree, &chain, upward);
                let location = location_of(graph, subject);
                tree_line(&mut out, doc.width, &numbers, &guides.prefix(), (&names, separator), &location);
            }
            Line::More { pruned, guides } => {
                let label = format!("… {} more ({})", pruned.nodes, amount(pruned.total.weight));
                let blank = " ".repeat(35 + if with_samples { 9 } else { 0 });
                tree_line(&mut out, doc.width, &blank, &guides.prefix(), (&[label], ""), "");
            }
        }
    }
    out
}

/// The function's line, then its callers and callees, each a share of its total.
pub(crate) fn calls(doc: &CallsDocument<'_>) -> String {
    let graph = doc.graph;
    let row = &graph.functions()[doc.function];
    let amount = |v: i64| unit_amount(graph.unit(), v);
    let mut out =
        fit::wrap(&profile_header(doc.source, doc.meta, graph.summary(), graph.samples(), graph.unit()), doc.width);
    out.push('\n');
    let name = visible(&row.name);
    // The location shortened (as a table's column) to what the line has room for beside the name.
    let location = fit::location(
        &visible(&top_location(row)),
        doc.width.map(|w| w.saturating_sub(columns(&name) + 2).max(14)),
        None,
    );
    let line = super::words::function_heading(&name, &location, row, graph);
    out.push_str(&fit::wrap(&line, doc.width));
    out.push('\n');
    let share = |v: i64| format!("{:.1}%", pct_of(v, row.total_weight));
    let sections = [
        ("callers: the part of its total that came through each", doc.callers, None, true),
        ("callees: their totals under it, and its own time", doc.callees, Some(row.self_weight), false),
    ];
    for (title, tree, own, upward) in sections {
        let Some(tree) = tree else { continue };
        out.push('\n');
        out.push_str(title);
        out.push('\n');
        out.push_str(&format!("{:>10} {:>6}  function\n", "total", "share"));
        // The function's own time, as a callee row in its place by weight.
        let mut own = own.filter(|w| *w != 0 || tree.roots.is_empty());
        let own_line = |out: &mut String, own: &mut Option<i64>| {
            if let Some(w) = own.take() {
                let numbers = format!("{:>10} {:>6}", amount(w), share(w));
                tree_line(out, doc.width, &numbers, "", (&["(self)".to_owned()], ""), "");
            }
        };
        for line in outline::lines(tree, false, false) {
            if let Line::Nodes { chain, guides } = line {
                let node = &tree.nodes[chain[0]];
                if guides.depth() == 0 && own.is_some_and(|w| w > node.total.weight) {
                    own_line(&mut out, &mut own);
                }
                let numbers = format!("{:>10} {:>6}", amount(node.total.weight), share(node.total.weight));
                let (names, separator) = chain_names(graph, tree, &chain, upward);
                let location = location_of(graph, node);
                tree_line(&mut out, doc.width, &numbers, &guides.prefix(), (&names, separator), &location);
            }
        }
        own_line(&mut out, &mut own);
    }
    out
}

/// The summary lines of a timeline or blocks report: the profile, and the window.
fn time_header(
    source: &str,
    meta: &cpuprof_model::Meta,
    window: Option<cpuprof_analysis::Window>,
    what: &str,
) -> String {
    let mut parts = vec![visible(source), meta.format.as_str().to_owned()];
    if let Some(d) = meta.duration_ns {
        parts.push(format_ns(d));
    }
    if let Some(w) = window {
        parts.push(format!("window {} – {}", format_ns(w.from_ns), format_ns(w.to_ns)));
    }
    parts.push(what.to_owned());
    parts.join(" · ")
}

/// The chart, the phases, and with `bucket_table` the buckets.
pub(crate) fn timeline(doc: &TimelineDocument<'_>) -> String {
    let t = doc.timeline;
    let out = time_header(
        doc.source,
        doc.meta,
        doc.window,
        &format!("{} buckets of {}", t.buckets.len(), format_ns(t.bucket_ns)),
    );
    let mut out = fit::wrap(&out, doc.width);
    out.push('\n');
    out.push_str(&super::chart::chart(t, doc.width.unwrap_or(100), doc.width));
    if !doc.bucket_table {
        return out;
    }
    let mut table = Table::new();
    table.load_preset(UTF8_BORDERS_ONLY).force_no_tty().set_content_arrangement(ContentArrangement::Disabled);
    // A category no bucket has is left out: the columns go to what tells buckets apart; in a
    // narrow terminal the least telling go next (busy and idle stay, and the chart has them all).
    let mut categories: Vec<(Category, &str)> = super::timeline_columns::TABLE_CATEGORIES
        .into_iter()
        .filter(|(c, _)| t.buckets.iter().any(|b| b.of(*c) != 0))
        .collect();
    if let Some(width) = doc.width {
        let pct_width = |head: &str| head.len().max(4);
        let room_for = |categories: &[(Category, &str)]| {
            let mut cells = vec![8, 4];
            cells.extend(categories.iter().map(|(_, h)| pct_width(h)));
            cells.extend([9, 12]);
            fit::table_columns(&cells) <= width
        };
        for drop in super::timeline_columns::TABLE_DROPPED {
            if room_for(&categories) {
                break;
            }
            categories.retain(|(c, _)| *c != drop);
        }
    }
    let mut head: Vec<&str> = vec!["start", "busy"];
    head.extend(categories.iter().map(|(_, h)| *h));
    head.extend(["self", "top function"]);
    let rows: Vec<Vec<String>> = t
        .buckets
        .iter()
        .map(|b| {
            let whole = b.busy().saturating_add(b.of(Category::Idle));
            let pct = |v: i64| format!("{:.0}%", pct_of(v, whole));
            let mut cells = vec![format_ns(b.start_ns), pct(b.busy())];
            cells.extend(categories.iter().map(|(c, _)| pct(b.of(*c))));
            match &b.top {
                Some((f, w)) => {
                    cells.extend([unit_amount(t.unit, *w), truncate(&visible(&function_text(f)), NAME_WIDTH)]);
                }
                None => cells.extend([String::new(), String::new()]),
            }
            cells
        })
        .collect();
    // The function's column has the room the numbers leave (at least 12: the line wraps below that).
    let numbers = head.len() - 1;
    let fixed: Vec<usize> = (0..numbers).map(|k| widest(head[k], rows.iter().map(|r| r[k].as_str()))).collect();
    let name = widest(head[numbers], rows.iter().map(|r| r[numbers].as_str()));
    let name = doc
        .width
        .map_or(name, |w| name.min(w.saturating_sub(fit::table_columns(&[fixed.clone(), vec![0]].concat())).max(12)));
    table.set_header(head);
    for row in rows {
        let cells = row.into_iter().enumerate().map(|(k, text)| {
            if k < numbers {
                Cell::new(text).set_alignment(CellAlignment::Right)
            } else {
                Cell::new(truncate(&text, name))
            }
        });
        table.add_row(cells.collect::<Vec<_>>());
    }
    out.push_str(&table.to_string());
    out.push('\n');
    out
}

/// The summary line, then the blocks, longest first.
pub(crate) fn blocks(doc: &BlocksDocument<'_>) -> String {
    let b = doc.blocks;
    let mut out = fit::wrap(
        &time_header(doc.source, doc.meta, doc.window, &format!("sampling interval {}", format_ns(b.interval_ns))),
        doc.width,
    );
    out.push('\n');
    out.push_str(&fit::wrap(&blocks_summary(b, doc.window.is_some()), doc.width));
    out.push('\n');
    if b.idle_samples == 0 {
        out.push_str(&fit::wrap(&format!("note: {NO_IDLE_NOTE}"), doc.width));
        out.push('\n');
    }
    if b.blocks.is_empty() {
        return out;
    }
    let mut table = Table::new();
    table.load_preset(UTF8_BORDERS_ONLY).force_no_tty().set_content_arrangement(ContentArrangement::Disabled);
    let columns = &super::block_columns::SHOWN;
    let rows: Vec<[String; 5]> = doc
        .longest()
        .iter()
        .map(|k| {
            columns.each_ref().map(|c| if c.number { (c.text)(k) } else { truncate(&visible(&(c.text)(k)), c.widest) })
        })
        .collect();
    let head = columns.each_ref().map(|c| c.header);
    let fixed = columns.iter().filter(|c| c.number).count();
    let widths = fit::text_columns(doc.width, &head, &rows, fixed, &super::block_columns::TEXT_PRIORITY);
    table.set_header(head.iter().zip(&widths).filter(|(_, w)| **w > 0).map(|(h, _)| *h).collect::<Vec<_>>());
    for row in rows {
        let cells =
            row.into_iter().zip(&widths).zip(columns).filter(|((_, w), _)| **w > 0).map(|((text, w), column)| {
                let cell = Cell::new(truncate(&text, *w));
                if column.number {
                    cell.set_alignment(CellAlignment::Right)
                } else {
                    cell
                }
            });
        table.add_row(cells.collect::<Vec<_>>());
    }
    out.push_str(&table.to_string());
    out.push('\n');
    let shown = doc.longest().len();
    if shown < b.count() {
        out.push_str(&format!("({shown} of {} blocks; -n to show more)\n", b.count()));
    }
    out
}

/// Each function's header line, where its source came from, then its lines: self (and total
/// where the profile has call-site lines), the share of the function's self, the line number,
/// a mark on the hottest and the source text cut to the width; runs of lines without samples
/// folded into one line.
pub(crate) fn annotate(doc: &super::AnnotateDocument<'_>) -> String {
    use super::annotate_columns::{listing_lines, notes, Listing};

    let graph = doc.graph;
    let width = doc.terminal.width;
    let mut out =
        fit::wrap(&profile_header(doc.source, doc.meta, graph.summary(), graph.samples(), graph.unit()), width);
    out.push('\n');
    for f in doc.functions {
        let listing = Listing::of(doc, f);
        let row = listing.row;
        out.push('\n');
        let name = visible(&row.name);
        let location = fit::location(
            &visible(&top_location(row)),
            width.map(|w| w.saturating_sub(columns(&name) + 2).max(14)),
            doc.terminal.cwd,
        );
        let title = super::words::function_heading(&name, &location, row, graph);
        out.push_str(&fit::wrap(&title, width));
        out.push('\n');
        for note in notes(&listing, graph.unit()) {
            out.push_str(&fit::wrap(&note, width));
            out.push('\n');
        }
        for line in listing_lines(&listing, graph.unit(), width, doc.terminal.color) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}
