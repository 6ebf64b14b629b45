//! Folded stacks as text, and as an interactive SVG flame graph drawn by inferno.

use std::fmt::Write as _;

use cpuprof_analysis::{Folded, FrameClass, Weight};
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
pub fn render_flamegraph(folded: &Folded, options: &FlameOptions) -> Result<Vec<u8>, String> {
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
    flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg).map_err(|e| e.to_string())?;
    Ok(svg)
}

/// A differential flame graph (inferno's: widths from `new`, colour from the change — red
/// grew, blue shrank — on every frame, so a caller shows its callees' growth too). Weights
/// are multiplied by `base_scale` / `new_scale` first (1 / runs per side, say); frames only
/// the new side has are marked `(new)`. Frames only the base side has cannot be drawn in
/// a graph shaped like the new side; the caller says so.
pub fn render_differential(
    base: &Folded,
    new: &Folded,
    base_scale: f64,
    new_scale: f64,
    options: &FlameOptions,
) -> Result<Vec<u8>, String> {
    let mut merged: std::collections::BTreeMap<&str, (f64, f64)> = std::collections::BTreeMap::new();
    for s in &base.stacks {
        merged.entry(s.frames.as_str()).or_default().0 += s.weight as f64 * base_scale;
    }
    for s in &new.stacks {
        merged.entry(s.frames.as_str()).or_default().1 += s.weight as f64 * new_scale;
    }
    let base_labels: std::collections::HashSet<&str> = base.stacks.iter().flat_map(|s| s.frames.split(';')).collect();
    let mark = |frames: &str| -> String {
        frames
            .split(';')
            .map(|f| if base_labels.contains(f) { xml_safe(f) } else { format!("{} (new)", xml_safe(f)) })
            .collect::<Vec<_>>()
            .join(";")
    };
    let mut lines: Vec<String> = merged
        .iter()
        .filter(|(_, (_, n))| *n >= 0.5)
        .map(|(frames, (b, n))| format!("{} {} {}", mark(frames), b.round() as u64, n.round() as u64))
        .collect();
    lines.sort();
    let mut opts = inferno_options(options);
    options.sample_name.clone_into(&mut opts.count_name);
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg).map_err(|e| e.to_string())?;
    Ok(svg)
}

/// Text XML 1.0 can carry: C0 controls but tab (line breaks are escaped before this), and
/// U+FFFE/U+FFFF, which names may hold but no SVG may, are written as `\x01`-style escapes.
fn xml_safe(text: &str) -> String {
    if !text.chars().any(|c| (c < ' ' && c != '\t') || c == '\u{fffe}' || c == '\u{ffff}') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if (c < ' ' && c != '\t') || c == '\u{fffe}' || c == '\u{ffff}' {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
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
        assert_eq!(xml_safe("esc\u{1b}[31m\u{1}ctl\ttab"), "esc\\x1b[31m\\x01ctl\ttab");
        assert_eq!(xml_safe("bell\u{7}\u{ffff}"), "bell\\x07\\xffff");
        assert_eq!(xml_safe("plain <b>"), "plain <b>");
    }
}
