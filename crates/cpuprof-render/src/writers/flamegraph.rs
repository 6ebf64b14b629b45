//! Folded stacks as text, and as an interactive SVG flame graph drawn by inferno.

use std::fmt::Write as _;

use cpuprof_analysis::{function_frame_label, Category, DiffRow, DiffTree, Folded, Verdict, Weight};
use cpuprof_folded as folded_text;
use cpuprof_model::text::{escaped, is_unsafe_to_show};
use inferno::flamegraph::color::{Color, PaletteMap};
use inferno::flamegraph::{self, Direction, Options, TextTruncateDirection};
use rustc_hash::FxHashMap;

/// `root;…;leaf weight` lines, sorted (inferno, FlameGraph and speedscope read them).
pub fn render_collapsed(folded: &Folded) -> String {
    folded_text::write_sorted(folded.tree.stack_texts())
}

/// How the SVG looks.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct FlameOptions {
    /// The title at the top.
    pub title: String,
    /// The line under it: what shaped the graph.
    pub subtitle: String,
    /// Width in pixels ([`crate::defaults::FLAME_WIDTH`] for cpuprof's flame graphs). Default is
    /// `None`: fluid, scaled to the window (laid out at inferno's 1200).
    pub width: Option<usize>,
    /// Frames narrower than this percentage of the whole graph are left out
    /// ([`crate::defaults::FLAME_MIN_WIDTH`] for cpuprof's flame graphs). Default is `None`:
    /// inferno's 0.01.
    pub min_width: Option<f64>,
    /// Icicle graph: roots at the top.
    pub inverted: bool,
    /// Merge by leaf: callers above callees (a bottom-up view).
    pub reverse: bool,
    /// What one sample is called when weights are counts (`samples`, `ticks`).
    pub sample_name: String,
    /// Indent the XML (bigger, but diffable).
    pub pretty: bool,
}

/// inferno's options for what every graph shares: text, size, direction, determinism.
fn inferno_options(options: &FlameOptions) -> Options<'static> {
    let mut opts = Options::default();
    opts.title = xml_safe(&options.title);
    opts.subtitle = (!options.subtitle.is_empty()).then(|| xml_safe(&options.subtitle));
    opts.image_width = options.width;
    if let Some(min) = options.min_width {
        opts.min_width = min;
    }
    opts.direction = if options.inverted { Direction::Inverted } else { Direction::Straight };
    opts.deterministic = true;
    // The function's name comes first in a label: what is cut is its location.
    opts.text_truncate_direction = TextTruncateDirection::Right;
    opts.pretty_xml = options.pretty;
    "Function:".clone_into(&mut opts.name_type);
    opts
}

/// Renders `folded` as an SVG flame graph.
pub fn render_flamegraph(folded: &Folded, options: &FlameOptions) -> Result<Vec<u8>, crate::RenderError> {
    let mut palette = PaletteMap::default();
    for (label, class) in folded.tree.labels() {
        palette.insert(xml_safe(label), color_of(class, label));
    }
    // inferno's own bottom frame ("all", the whole profile) has the empty name.
    palette.insert("", color_of(Category::Program, "all"));
    let mut opts = inferno_options(options);
    opts.reverse_stack_order = options.reverse;
    opts.palette_map = Some(&mut palette);
    if folded.unit == Weight::Samples {
        options.sample_name.clone_into(&mut opts.count_name);
    } else {
        // Weights are ns. inferno rounds the shown count to an integer and takes the shown
        // percentage from it, so the count is in µs: whole milliseconds would misstate small frames.
        "µs".clone_into(&mut opts.count_name);
        opts.factor = 1e-3;
    }
    // inferno sorts the lines itself.
    let mut lines: Vec<String> = Vec::new();
    folded.tree.for_each_stack(|_, frames, weight| {
        let mut line = String::new();
        folded_text::push_line(&mut line, &xml_safe(&folded_text::join_stack(frames)), [weight]);
        lines.push(line);
    });
    let shown: FxHashMap<String, String> =
        folded.tree.labels_shown().map(|(label, short)| (xml_safe(label), xml_safe(short))).collect();
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)?;
    Ok(relabel(&svg, &shown, None, opts.image_width.unwrap_or(DEFAULT_WIDTH)))
}

/// inferno's width when none is given.
const DEFAULT_WIDTH: usize = 1200;

/// inferno's text metrics (its defaults, which cpuprof keeps): 12 px monospace, 0.59 em wide.
const FONT_SIZE: f64 = 12.0;
const FONT_WIDTH: f64 = 0.59;

/// inferno's SVG with each frame labelled by what `shown` says of its name (the function's
/// name, then a short location), the full name staying in its tooltip: the label is written
/// fitted to the frame (cut from the right), and kept on the frame (`data-label`) for the
/// script that fits labels again after a zoom. The Search button is made readable. With
/// `colours`, each frame is filled with its name's colour there (the neutral one when absent).
fn relabel(
    svg: &[u8],
    shown: &FxHashMap<String, String>,
    colours: Option<&FxHashMap<String, [u8; 3]>>,
    image_width: usize,
) -> Vec<u8> {
    let Ok(svg) = std::str::from_utf8(svg) else { return svg.to_vec() };
    let svg = svg
        .replace(
            "var txt = find_child(e, \"title\").textContent.replace(",
            "var txt = e.getAttribute(\"data-label\") || find_child(e, \"title\").textContent.replace(",
        )
        .replace("#search { text-anchor:end; opacity:0.1; cursor:pointer; }", SEARCH_STYLE);
    let mut out = String::with_capacity(svg.len() + svg.len() / 8);
    let mut rest = svg.as_str();
    // Each frame: <g><title>NAME (…)</title><rect … width="W%" …/><text …>LABEL</text></g>
    // (indented with --pretty-xml).
    while let Some(at) = rest.find("<g>") {
        let (before, frame) = rest.split_at(at);
        out.push_str(before);
        if !frame["<g>".len()..].trim_start().starts_with("<title>") {
            out.push_str("<g>");
            rest = &frame["<g>".len()..];
            continue;
        }
        let Some(end) = frame.find("</g>") else { break };
        let (frame, after) = frame.split_at(end);
        let frame = relabel_frame(frame, shown, image_width);
        match colours {
            Some(colours) => out.push_str(&recolour_frame(&frame, colours)),
            None => out.push_str(&frame),
        }
        rest = after;
    }
    out.push_str(rest);
    out.into_bytes()
}

/// The Search button's style: inferno draws it at 10% opacity on its pale background.
const SEARCH_STYLE: &str =
    "#search { text-anchor:end; opacity:1; cursor:pointer; font-weight:bold; fill:rgb(0,70,160); }";

/// One frame (`<g>…<title>…</text>`, without its `</g>`) relabelled; unchanged when its name
/// is not one of `shown`'s.
fn relabel_frame(frame: &str, shown: &FxHashMap<String, String>, image_width: usize) -> String {
    let relabelled = (|| {
        let title_end = frame.find("</title>")?;
        let title = &frame[frame.find("<title>")? + "<title>".len()..title_end];
        // The name, before inferno's ` (N µs, P%)`.
        let name = unescape_xml(&title[..title.rfind(" (")?]);
        let short = shown.get(&name)?;
        let width_at = frame[title_end..].find(" width=\"")? + title_end + " width=\"".len();
        let width_pct: f64 = frame[width_at..].split('%').next()?.parse().ok()?;
        let text_at = frame.rfind("<text ")?;
        let label_at = frame[text_at..].find('>')? + text_at + 1;
        let label_end = frame.rfind("</text>")?;
        let fits = (width_pct / (100.0 * FONT_SIZE * FONT_WIDTH / image_width as f64)).trunc() as usize;
        let label = match short.chars().count() {
            _ if fits < 3 => String::new(),
            n if n < fits => short.clone(),
            _ => format!("{}..", short.chars().take(fits - 2).collect::<String>()),
        };
        Some(format!(
            "<g data-label=\"{}\">{}{}{}",
            xml_text(short),
            &frame["<g>".len()..label_at],
            xml_text(&label),
            &frame[label_end..]
        ))
    })();
    relabelled.unwrap_or_else(|| frame.to_owned())
}

/// The name of a frame (`<g…><title>NAME (…)</title>…`), before inferno's ` (N µs, P%; ±D%)`.
fn frame_name(frame: &str) -> Option<String> {
    let title = &frame[frame.find("<title>")? + "<title>".len()..frame.find("</title>")?];
    Some(unescape_xml(&title[..title.rfind(" (")?]))
}

/// One frame with its rectangle filled with its name's colour in `colours` ([`NEUTRAL`] when
/// absent: inferno's own `all` frame, `(only in base)`).
fn recolour_frame(frame: &str, colours: &FxHashMap<String, [u8; 3]>) -> String {
    let [r, g, b] = frame_name(frame).and_then(|name| colours.get(&name).copied()).unwrap_or(NEUTRAL);
    let Some(fill) =
        frame.find("<rect ").and_then(|at| frame[at..].find(" fill=\"").map(|f| at + f + " fill=\"".len()))
    else {
        return frame.to_owned();
    };
    let Some(end) = frame[fill..].find('"').map(|e| fill + e) else { return frame.to_owned() };
    format!("{}rgb({r},{g},{b}){}", &frame[..fill], &frame[end..])
}

/// A differential frame's colour: what the comparison's table says of its function. Only a
/// significant change is coloured (red grew, blue shrank; darker when new or gone), so the
/// graph and the table agree on what changed.
fn verdict_colour(verdict: Option<Verdict>) -> [u8; 3] {
    match verdict {
        Some(Verdict::Hotter) => [240, 110, 100],
        Some(Verdict::New) => [200, 45, 45],
        Some(Verdict::Cooler) => [115, 155, 235],
        Some(Verdict::Gone) => [55, 90, 200],
        Some(Verdict::Unchanged) | None => NEUTRAL,
    }
}

/// What a function within the noise is filled with in a differential graph.
const NEUTRAL: [u8; 3] = [225, 225, 225];

/// Each function's verdict by its frame label (`name file`, as `diff` folds): significant
/// changes only; a label shared by rows that disagree (two functions of one name in one file)
/// gets none.
fn verdicts_by_label(rows: &[DiffRow]) -> FxHashMap<String, Option<Verdict>> {
    let mut by_label: FxHashMap<String, Option<Verdict>> = FxHashMap::default();
    for row in rows {
        let verdict = (row.significant && row.verdict != Verdict::Unchanged).then_some(row.verdict);
        let label = function_frame_label(&row.name, row.file.as_deref(), row.kind, None);
        by_label.entry(label).and_modify(|v| *v = if *v == verdict { *v } else { None }).or_insert(verdict);
    }
    by_label
}

/// The text of XML character data (the entities quick-xml writes).
fn unescape_xml(text: &str) -> String {
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

/// The SVG of a profile with nothing to draw (no samples, or none left after the filters): the
/// title, the subtitle and a line saying so, in a valid SVG of inferno's width. (inferno itself
/// writes an error image and fails on empty input.)
pub fn render_empty_flamegraph(options: &FlameOptions) -> Vec<u8> {
    let width = options.width.unwrap_or(1200);
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"{width}\" height=\"90\" \
         viewBox=\"0 0 {width} 90\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>{title}</title>\n\
         <rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#eeeeee\"/>\n\
         <text x=\"50%\" y=\"24\" text-anchor=\"middle\" font-family=\"Verdana\" font-size=\"17\">{title}</text>\n\
         <text x=\"50%\" y=\"48\" text-anchor=\"middle\" font-family=\"Verdana\" font-size=\"12\" fill=\"#a0a0a0\">{subtitle}</text>\n\
         <text x=\"50%\" y=\"72\" text-anchor=\"middle\" font-family=\"Verdana\" font-size=\"12\">no samples to draw</text>\n</svg>\n",
        title = xml_text(&options.title),
        subtitle = xml_text(&options.subtitle),
    );
    svg.into_bytes()
}

/// `text` as XML character data: [`xml_safe`], then `&`, `<`, `>` and quotes as entities.
fn xml_text(text: &str) -> String {
    let safe = xml_safe(text);
    let mut out = String::with_capacity(safe.len());
    for c in safe.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// A differential flame graph: inferno's, widths from `new`, each frame coloured by what the
/// comparison's table (`rows`, from folds labelled `name file`) says of its function: red for
/// a significant growth, blue for a significant drop, neutral within the noise — not by the
/// frame's own change, which could contradict the table. Weights are multiplied by
/// `base_scale` / `new_scale` first (1 / runs per side, say). On top of inferno:
/// - a caller whose callees' total changed by at least 0.1% of the graph says so in its
///   label, `[total +1.23%]` (inferno colours a frame by its own change only);
/// - frames only the new side has are marked `(new)`;
/// - stacks only the base side has are drawn at their base width, in blue, under a root
///   frame of their own, `(only in base)`, so the new side's frames keep their true widths;
///   frames no new stack has are marked `(gone)`.
pub fn render_differential(
    base: &[Folded],
    new: &[Folded],
    base_scale: f64,
    new_scale: f64,
    rows: &[DiffRow],
    options: &FlameOptions,
) -> Result<Vec<u8>, crate::RenderError> {
    let verdicts = verdicts_by_label(rows);
    let diff_tree = DiffTree::of(base, new, base_scale, new_scale);
    let tree = diff_tree.tree();
    let (drawn, only_base): (Vec<_>, Vec<_>) =
        diff_tree.stacks().filter(|(_, (b, n))| b.round() + n.round() > 0.0).partition(|(_, (_, n))| n.round() > 0.0);
    let graph_total: f64 = drawn.iter().map(|(_, (_, n))| n.round()).sum::<f64>()
        + only_base.iter().map(|(_, (b, _))| b.round()).sum::<f64>();
    // What each name a frame gets is shown as (its short label with the same marks), and its
    // colour.
    let shown = std::cell::RefCell::new(FxHashMap::default());
    let colours = std::cell::RefCell::new(FxHashMap::default());
    let marked = |node: u32, marks: &str| -> String {
        let name = format!("{}{marks}", xml_safe(tree.label(node)));
        shown.borrow_mut().entry(name.clone()).or_insert_with(|| format!("{}{marks}", xml_safe(tree.short(node))));
        colours
            .borrow_mut()
            .entry(name.clone())
            .or_insert_with(|| verdict_colour(verdict_of(&verdicts, tree.label(node))));
        name
    };
    let label = |node: u32| -> String {
        let frame = tree.label(node);
        let mut marks = String::new();
        if !diff_tree.in_base(frame) {
            marks.push_str(" (new)");
        }
        let (b, n) = diff_tree.below(node);
        let pct = 100.0 * (n - b) / graph_total.max(1.0);
        if pct.abs() >= 0.1 {
            let _ = write!(marks, " [total {pct:+.2}%]");
        }
        marked(node, &marks)
    };
    let mut lines: Vec<String> = drawn
        .iter()
        .map(|(path, (b, n))| {
            let mut line = String::new();
            folded_text::push_line(
                &mut line,
                &folded_text::join_stack(path.iter().map(|n| label(*n))),
                [b.round(), n.round()],
            );
            line
        })
        .collect();
    for (path, (b, _)) in &only_base {
        let gone = path.iter().map(|n| marked(*n, if diff_tree.in_new(tree.label(*n)) { "" } else { " (gone)" }));
        let stack = folded_text::join_stack(std::iter::once("(only in base)".to_owned()).chain(gone));
        // All of it went: drawn at the base width (the second column) with that as the change.
        let b = b.round();
        let mut line = String::new();
        folded_text::push_line(&mut line, &stack, [2.0 * b, b]);
        lines.push(line);
    }
    lines.sort();
    let mut opts = inferno_options(options);
    options.sample_name.clone_into(&mut opts.count_name);
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)?;
    Ok(relabel(&svg, &shown.into_inner(), Some(&colours.into_inner()), opts.image_width.unwrap_or(DEFAULT_WIDTH)))
}

/// The verdict of the function a frame label stands for: a tick log's tiers (`*name`, `~name`)
/// are one function in the table.
fn verdict_of(verdicts: &FxHashMap<String, Option<Verdict>>, label: &str) -> Option<Verdict> {
    if let Some(v) = verdicts.get(label) {
        return *v;
    }
    let untiered = label.strip_prefix(['~', '^', '+', '*', '-'])?;
    verdicts.get(untiered).copied().flatten()
}

/// Text XML 1.0 can carry and a reader can trust: titles and labels with controls,
/// noncharacters or bidi overrides (which no frame label from `fold` holds any more) get the
/// visible escapes every output uses.
fn xml_safe(text: &str) -> String {
    if !text.chars().any(is_unsafe_to_show) {
        return text.to_owned();
    }
    text.chars().fold(String::with_capacity(text.len() + 8), |mut out, c| {
        if is_unsafe_to_show(c) {
            out.push_str(&escaped(c));
        } else {
            out.push(c);
        }
        out
    })
}

/// A colour per class, varied within the class by a stable hash of the label so that
/// neighbouring frames stay apart: warm for your code, blue for packages, green for node's
/// internals, yellow for native code, red for GC, grey for the VM.
fn color_of(class: Category, label: &str) -> Color {
    let [r, g, b] = frame_color(class, label);
    Color { r, g, b }
}

/// The colour of a frame labelled `label` of category `class`, as `[r, g, b]`: what the SVG
/// flame graphs and the HTML report both paint it with.
pub fn frame_color(class: Category, label: &str) -> [u8; 3] {
    // FNV-1a: stable across runs and platforms.
    let hash = label.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let v = |range: u8, shift: u32| ((hash >> shift) % u64::from(range)) as u8;
    let (r, g, b) = match class {
        Category::App => (230 + v(25, 0), 120 + v(70, 8), 40 + v(30, 16)),
        Category::Dependencies => (90 + v(40, 0), 140 + v(40, 8), 215 + v(40, 16)),
        Category::Node => (90 + v(40, 0), 190 + v(40, 8), 120 + v(40, 16)),
        Category::Native => (215 + v(30, 0), 200 + v(40, 8), 60 + v(40, 16)),
        Category::Gc => (220 + v(35, 0), 50 + v(40, 8), 50 + v(40, 16)),
        Category::Idle | Category::Program => {
            let grey = 170 + v(40, 0);
            (grey, grey, grey)
        }
    };
    [r, g, b]
}

#[cfg(test)]
mod tests {
    use super::xml_safe;

    #[test]
    fn names_cannot_break_the_xml() {
        assert_eq!(xml_safe("esc\u{1b}[31m\u{1}ctl\ttab"), "esc\\u{1b}[31m\\u{1}ctl\\u{9}tab");
        assert_eq!(xml_safe("bell\u{7}\u{ffff}\u{202e}"), "bell\\u{7}\\u{ffff}\\u{202e}");
        assert_eq!(xml_safe("plain <b>"), "plain <b>");
    }
}
