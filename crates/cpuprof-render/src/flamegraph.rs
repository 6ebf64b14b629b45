//! Folded stacks as text, and as an interactive SVG flame graph drawn by inferno.

use std::fmt::Write as _;

use cpuprof_analysis::{Folded, FrameClass, Weight};
use cpuprof_model::text::{escaped, is_unsafe_to_show};
use inferno::flamegraph::color::{Color, PaletteMap};
use inferno::flamegraph::{self, Direction, Options};

/// `root;…;leaf weight` lines, sorted (inferno, FlameGraph and speedscope read them).
pub fn render_collapsed(folded: &Folded) -> String {
    let mut out = String::with_capacity(folded.stacks.iter().map(|s| s.frames.len() + 12).sum());
    for stack in &folded.stacks {
        let _ = writeln!(out, "{} {}", stack.frames, stack.weight);
    }
    out
}

/// How the SVG looks.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct FlameOptions {
    /// The title at the top.
    pub title: String,
    /// The line under it: what shaped the graph.
    pub subtitle: String,
    /// Width in pixels. Default is `None`: inferno's 1200.
    pub width: Option<usize>,
    /// Frames narrower than this percentage of the whole graph are left out. Default:
    /// inferno's 0.1.
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
    opts.pretty_xml = options.pretty;
    "Function:".clone_into(&mut opts.name_type);
    opts
}

/// Renders `folded` as an SVG flame graph.
pub fn render_flamegraph(folded: &Folded, options: &FlameOptions) -> Result<Vec<u8>, crate::RenderError> {
    let mut palette = PaletteMap::default();
    for (label, class) in &folded.classes {
        palette.insert(xml_safe(label), color_of(*class, label));
    }
    // inferno's own bottom frame ("all", the whole profile) has the empty name.
    palette.insert("", color_of(FrameClass::Vm, "all"));
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
    let lines: Vec<String> = folded.stacks.iter().map(|s| format!("{} {}", xml_safe(&s.frames), s.weight)).collect();
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)?;
    Ok(svg)
}

/// A differential flame graph: inferno's, widths from `new` and colour from the change in
/// self weight (red grew, blue shrank). Weights are multiplied by `base_scale` /
/// `new_scale` first (1 / runs per side, say). On top of inferno:
/// - a caller whose callees' total changed by at least 0.1% of the graph says so in its
///   label, `[total +1.23%]` (inferno colours a frame by its own change only);
/// - frames only the new side has are marked `(new)`;
/// - stacks only the base side has are drawn at their base width, in blue, under a root
///   frame of their own, `(only in base)`, so the new side's frames keep their true widths;
///   frames no new stack has are marked `(gone)`.
pub fn render_differential(
    base: &Folded,
    new: &Folded,
    base_scale: f64,
    new_scale: f64,
    options: &FlameOptions,
) -> Result<Vec<u8>, crate::RenderError> {
    use std::collections::{BTreeMap, HashMap, HashSet};
    let mut merged: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for s in &base.stacks {
        merged.entry(s.frames.as_str()).or_default().0 += s.weight as f64 * base_scale;
    }
    for s in &new.stacks {
        merged.entry(s.frames.as_str()).or_default().1 += s.weight as f64 * new_scale;
    }
    let (drawn, only_base): (Vec<_>, Vec<_>) =
        merged.iter().filter(|(_, (b, n))| b.round() + n.round() > 0.0).partition(|(_, (_, n))| n.round() > 0.0);
    let labels = |folded: &Folded| -> HashSet<String> {
        folded.stacks.iter().flat_map(|s| s.frames.split(';')).map(str::to_owned).collect()
    };
    let (base_labels, new_labels) = (labels(base), labels(new));

    // Inclusive weights of every caller (a proper prefix of a stack), both sides, in a
    // prefix tree: keying them by the prefix text would cost the square of the depth.
    let mut tree = PrefixTree::default();
    let node_paths: Vec<Vec<u32>> = merged
        .iter()
        .map(|(frames, &(b, n))| {
            let path = tree.insert(frames);
            for &node in &path[..path.len() - 1] {
                tree.weights[node as usize].0 += b;
                tree.weights[node as usize].1 += n;
            }
            path
        })
        .collect();
    let path_of: HashMap<&str, &Vec<u32>> = merged.keys().copied().zip(&node_paths).collect();
    let graph_total: f64 = drawn.iter().map(|(_, (_, n))| n.round()).sum::<f64>()
        + only_base.iter().map(|(_, (b, _))| b.round()).sum::<f64>();
    let label = |node: u32, frame: &str| -> String {
        let mut text = xml_safe(frame);
        if !base_labels.contains(frame) {
            text.push_str(" (new)");
        }
        let (b, n) = tree.weights[node as usize];
        let pct = 100.0 * (n - b) / graph_total.max(1.0);
        if pct.abs() >= 0.1 {
            let _ = write!(text, " [total {pct:+.2}%]");
        }
        text
    };
    let frames_of = |frames: &str| -> Vec<String> {
        frames.split(';').zip(path_of[frames].iter()).map(|(frame, &node)| label(node, frame)).collect()
    };
    let mut lines: Vec<String> = drawn
        .iter()
        .map(|(frames, (b, n))| format!("{} {} {}", frames_of(frames).join(";"), b.round(), n.round()))
        .collect();
    for (frames, (b, _)) in &only_base {
        let gone: Vec<String> = frames
            .split(';')
            .map(|f| if new_labels.contains(f) { xml_safe(f) } else { format!("{} (gone)", xml_safe(f)) })
            .collect();
        // All of it went: drawn at the base width (the second column) with that as the change.
        let b = b.round();
        lines.push(format!("(only in base);{} {} {}", gone.join(";"), 2.0 * b, b));
    }
    lines.sort();
    let mut opts = inferno_options(options);
    options.sample_name.clone_into(&mut opts.count_name);
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)?;
    Ok(svg)
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

/// Distinct call paths as a tree of frame labels: node ids index `weights`.
#[derive(Default)]
struct PrefixTree<'a> {
    children: std::collections::HashMap<(u32, &'a str), u32>,
    /// Per node: the (base, new) weight of the stacks passing through it as a caller.
    weights: Vec<(f64, f64)>,
}

impl<'a> PrefixTree<'a> {
    /// The nodes of `frames` (`;`-joined), root-most first, added where missing.
    fn insert(&mut self, frames: &'a str) -> Vec<u32> {
        let mut parent = u32::MAX;
        frames
            .split(';')
            .map(|frame| {
                let next = u32::try_from(self.weights.len()).unwrap_or(u32::MAX);
                let node = *self.children.entry((parent, frame)).or_insert(next);
                if node == next {
                    self.weights.push((0.0, 0.0));
                }
                parent = node;
                node
            })
            .collect()
    }
}

/// A colour per class, varied within the class by a stable hash of the label so that
/// neighbouring frames stay apart: warm for your code, blue for packages, green for node's
/// internals, yellow for native code, red for GC, grey for the VM.
fn color_of(class: FrameClass, label: &str) -> Color {
    // FNV-1a: stable across runs and platforms.
    let hash = label.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let v = |range: u8, shift: u32| ((hash >> shift) % u64::from(range)) as u8;
    let (r, g, b) = match class {
        FrameClass::App => (230 + v(25, 0), 120 + v(70, 8), 40 + v(30, 16)),
        FrameClass::Package => (90 + v(40, 0), 140 + v(40, 8), 215 + v(40, 16)),
        FrameClass::Node => (90 + v(40, 0), 190 + v(40, 8), 120 + v(40, 16)),
        FrameClass::Native => (215 + v(30, 0), 200 + v(40, 8), 60 + v(40, 16)),
        FrameClass::Gc => (220 + v(35, 0), 50 + v(40, 8), 50 + v(40, 16)),
        FrameClass::Vm => {
            let grey = 170 + v(40, 0);
            (grey, grey, grey)
        }
    };
    Color { r, g, b }
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
