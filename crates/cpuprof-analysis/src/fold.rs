//! Folded stacks (`root;…;leaf weight`), the input of flame graphs (inferno, FlameGraph,
//! speedscope).
//!
//! Folding is per stack node, never per sample: each stack with a self weight becomes one
//! line, labelled once per function. The specification, shared with the independent oracle,
//! is `fixtures/oracle/SPEC.md` §8.

use cpuprof_model::text::{escaped, is_unsafe_to_show};
use cpuprof_model::{Func, FuncKind, Profile};
use rustc_hash::FxHashMap;

use crate::filter::StackFilter;
use crate::keys::{group_label, GroupBy};
use crate::top::Weight;
use crate::weights::{effective, stack_weights, StackWeights};

/// Options of [`fold`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct FoldOptions {
    /// What a frame stands for: [`GroupBy::Function`] (the default; `name file:line`),
    /// [`GroupBy::File`] or [`GroupBy::Package`] (consecutive equal labels merge).
    /// [`GroupBy::Line`] labels like `Function`.
    pub by: GroupBy,
    /// What a sample weighs. Default is [`Weight::Time`] (ns).
    pub weight: Weight,
    /// Which samples count. Default: all but `(idle)`.
    pub filter: StackFilter,
    /// Only samples taken in `[from, to)` (ns on the profile's clock), where samples have
    /// times. Default is `None`: all.
    pub window: Option<(i64, i64)>,
    /// For drawing top-down: fold every subtree lighter than this fraction of the drawn weight
    /// into its caller's own weight (a flame graph leaves such frames out anyway; not for a
    /// reversed graph, whose frames are merged from the leaves). Default is `None`: exact
    /// lines, as `collapse` needs.
    pub prune_below: Option<f64>,
    /// Label functions `name file`, without the line: for comparing profiles of changed code,
    /// where functions move. Default is `false`.
    pub without_lines: bool,
    /// Files under other names in function labels (a script url → the name `diff` matches
    /// it by; see [`crate::matched_file_names`]). Default is `None`: as the profile names them.
    pub file_names: Option<FxHashMap<String, String>>,
}

impl FoldOptions {
    /// Options with every field given but `prune_below`.
    pub fn new(by: GroupBy, weight: Weight, filter: StackFilter, window: Option<(i64, i64)>) -> Self {
        Self { by, weight, filter, window, prune_below: None, without_lines: false, file_names: None }
    }
}

/// One distinct stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldedStack {
    /// Frame labels from the outermost caller to the leaf, escaped so that none contains
    /// `;` or a line break, joined by `;`.
    pub frames: String,
    /// The stack's own weight (in [`Folded::unit`]).
    pub weight: i64,
    /// What the leaf frame is, for colouring.
    pub leaf: FrameClass,
}

/// What a frame is, in the terms a Node engineer reads a flame graph in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameClass {
    /// Your code: JavaScript outside `node_modules` and node's internals.
    App,
    /// JavaScript in an npm package (`node_modules`).
    Package,
    /// node's own JavaScript (`node:` urls).
    Node,
    /// Native code: V8 builtins, C++, shared libraries, regular expressions.
    Native,
    /// Garbage collection.
    Gc,
    /// `(program)`, `(idle)` and what no code covers.
    Vm,
}

/// The result of [`fold`].
#[derive(Clone, Debug)]
pub struct Folded {
    /// Unit of every weight: ns or samples.
    pub unit: Weight,
    /// Distinct stacks, sorted by `frames` (byte order).
    pub stacks: Vec<FoldedStack>,
    /// The class of every frame label that occurs.
    pub classes: FxHashMap<String, FrameClass>,
    /// Weight of the samples counted (idle excluded unless included), before focus/ignore.
    pub total: i64,
    /// Number of those samples.
    pub samples: i64,
    /// Number of samples in the lines (after focus/ignore).
    pub drawn_samples: i64,
}

/// Folds `profile` into one line per distinct stack.
///
/// Works on the stack tree, never per sample: stacks are first mapped onto a tree of labels
/// (stacks whose frames read alike share a node), then each label-tree node with weight of
/// its own becomes one line, written from a depth-first walk with one growing path.
pub fn fold(profile: &Profile, options: &FoldOptions) -> Folded {
    let StackWeights { weight, count, total, samples } =
        stack_weights(profile, options.weight, &options.filter, options.window);
    let drawn_samples = count.iter().fold(0i64, |a, c| a.saturating_add(*c));
    let by_group = matches!(options.by, GroupBy::File | GroupBy::Package);

    // One label per function, escaped once, as an id into `labels`; the root has none.
    let mut labels: Vec<String> = Vec::new();
    let mut label_ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut classes: FxHashMap<String, FrameClass> = FxHashMap::default();
    let func_label: Vec<u32> = profile
        .funcs
        .as_slice()
        .iter()
        .map(|func| {
            if func.kind == FuncKind::Root {
                return NO_LABEL;
            }
            let label = if by_group {
                group_label(profile, func, options.by == GroupBy::Package)
            } else {
                function_label(profile, func, !options.without_lines, options.file_names.as_ref())
            };
            let label = escape(&label);
            classes.entry(label.clone()).or_insert_with(|| class_of(profile, func));
            *label_ids.entry(label).or_insert_with_key(|label| {
                labels.push(label.clone());
                (labels.len() - 1) as u32
            })
        })
        .collect();

    // The label tree: node 0 is the root (no label); parents come before children.
    let mut tree = LabelTree::default();
    let mut node_of = vec![0u32; profile.stacks.len()];
    for (s, (parent, frame)) in profile.stacks.parents().iter().zip(profile.stacks.frames()).enumerate() {
        let up = parent.map_or(0, |p| node_of[p.index()]);
        let label = func_label[profile.frames[*frame].func.index()];
        node_of[s] = if label == NO_LABEL || (by_group && tree.label[up as usize] == label) {
            up
        } else {
            tree.child(up, label)
        };
        let own = &mut tree.weight[node_of[s] as usize];
        *own = own.saturating_add(weight[s]);
    }
    if let Some(fraction) = options.prune_below {
        // A share of what is drawn: the weight kept after focus/ignore.
        let drawn: i64 = weight.iter().fold(0i64, |a, w| a.saturating_add(*w));
        tree.prune((drawn as f64 * fraction) as i64);
    }

    let stacks = tree.lines(&labels, &classes);
    Folded { unit: effective(profile, options.weight), stacks, classes, total, samples, drawn_samples }
}

const NO_LABEL: u32 = u32::MAX;

/// Stacks merged by what their frames read.
struct LabelTree {
    parent: Vec<u32>,
    label: Vec<u32>,
    weight: Vec<i64>,
    index: FxHashMap<(u32, u32), u32>,
}

impl Default for LabelTree {
    fn default() -> Self {
        Self { parent: vec![0], label: vec![NO_LABEL], weight: vec![0], index: FxHashMap::default() }
    }
}

impl LabelTree {
    fn child(&mut self, parent: u32, label: u32) -> u32 {
        *self.index.entry((parent, label)).or_insert_with(|| {
            self.parent.push(parent);
            self.label.push(label);
            self.weight.push(0);
            (self.label.len() - 1) as u32
        })
    }

    /// Moves the weight of every subtree lighter than `min` into the node above it, as if
    /// those frames were not there: a flame graph would not draw them anyway, and the
    /// frames it does draw keep their widths.
    fn prune(&mut self, min: i64) {
        let n = self.label.len();
        let mut subtree = self.weight.clone();
        for v in (1..n).rev() {
            let p = self.parent[v] as usize;
            subtree[p] = subtree[p].saturating_add(subtree[v]);
        }
        for v in (1..n).rev() {
            let p = self.parent[v] as usize;
            // The root draws nothing of its own: its children always stay.
            if p != 0 && subtree[v] < min {
                self.weight[p] = self.weight[p].saturating_add(self.weight[v]);
                self.weight[v] = 0;
            }
        }
    }

    /// One line per node with weight of its own, sorted by the frame text's bytes.
    fn lines(&self, labels: &[String], classes: &FxHashMap<String, FrameClass>) -> Vec<FoldedStack> {
        let n = self.label.len();
        // Children lists (CSR), each sorted by label, so that the walk is nearly in order.
        let mut first = vec![0u32; n + 1];
        for v in 1..n {
            first[self.parent[v] as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut children = vec![0u32; n.saturating_sub(1)];
        for v in 1..n {
            let p = self.parent[v] as usize;
            children[fill[p] as usize] = v as u32;
            fill[p] += 1;
        }
        for p in 0..n {
            children[first[p] as usize..first[p + 1] as usize].sort_unstable_by(|a, b| {
                labels[self.label[*a as usize] as usize].cmp(&labels[self.label[*b as usize] as usize])
            });
        }
        let mut out = Vec::new();
        let mut path = String::new();
        let mut lengths: Vec<usize> = Vec::new();
        // (node, leaving?)
        let mut todo: Vec<(u32, bool)> =
            children[first[0] as usize..first[1] as usize].iter().rev().map(|c| (*c, false)).collect();
        while let Some((v, leaving)) = todo.pop() {
            if leaving {
                path.truncate(lengths.pop().unwrap_or(0));
                continue;
            }
            let v = v as usize;
            lengths.push(path.len());
            if !path.is_empty() {
                path.push(';');
            }
            let label = &labels[self.label[v] as usize];
            path.push_str(label);
            if self.weight[v] != 0 {
                let leaf = classes.get(label).copied().unwrap_or(FrameClass::Vm);
                out.push(FoldedStack { frames: path.clone(), weight: self.weight[v], leaf });
            }
            todo.push((v as u32, true));
            todo.extend(children[first[v] as usize..first[v + 1] as usize].iter().rev().map(|c| (*c, false)));
        }
        // The walk's order differs from byte order only where one label extends another
        // (`f` and `f x.js:3`): a stable sort of the nearly sorted lines settles it.
        out.sort_by(|a, b| a.frames.as_bytes().cmp(b.frames.as_bytes()));
        out
    }
}

/// `name file:line` (or `name file`) for JavaScript with a url, else the name (`(anonymous)` when empty).
fn function_label(
    profile: &Profile,
    func: &Func,
    with_line: bool,
    file_names: Option<&FxHashMap<String, String>>,
) -> String {
    let name = func.display_name(&profile.strings);
    let name = if name.is_empty() { "(anonymous)" } else { &name };
    let file = profile.func_file(func);
    let file = file_names.and_then(|names| names.get(file)).map_or(file, String::as_str);
    if func.kind != FuncKind::Js || file.is_empty() {
        return name.to_owned();
    }
    match func.line.filter(|_| with_line) {
        Some(line) => format!("{name} {file}:{line}"),
        None => format!("{name} {file}"),
    }
}

fn class_of(profile: &Profile, func: &Func) -> FrameClass {
    match func.kind {
        FuncKind::Js => {
            let file = profile.strings.get(func.file);
            if file.starts_with("node:") {
                FrameClass::Node
            } else if file.contains("/node_modules/") {
                FrameClass::Package
            } else {
                FrameClass::App
            }
        }
        FuncKind::Gc => FrameClass::Gc,
        FuncKind::Program | FuncKind::Idle | FuncKind::Root | FuncKind::Unknown => FrameClass::Vm,
        FuncKind::Native
        | FuncKind::Cpp
        | FuncKind::SharedLib
        | FuncKind::Builtin
        | FuncKind::Regexp
        | FuncKind::Other => FrameClass::Native,
    }
}

/// One frame stays one frame, on one line, inert on a terminal: `;` becomes `；` (U+FF1B),
/// line breaks become `\n` / `\r`, a backslash that would read as one of these escapes
/// becomes `\\`, other characters no output shows raw (controls, bidi
/// overrides: [`is_unsafe_to_show`]) become `\u{1b}`-style escapes, and a label ending in
/// ` <digits>` keeps that space as U+00A0, since flame-graph tools read a line's trailing
/// numbers as its counts (two of them as a differential graph). The folded reader undoes all
/// of it.
pub fn escape(label: &str) -> String {
    let trailing_number = label
        .rfind(' ')
        .filter(|at| at + 1 < label.len() && label[at + 1..].bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    if trailing_number.is_none() && !label.chars().any(|c| c == ';' || c == '\\' || is_unsafe_to_show(c)) {
        return label.to_owned();
    }
    let mut out = String::with_capacity(label.len() + 4);
    for (i, c) in label.char_indices() {
        match c {
            ';' => out.push('\u{ff1b}'),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' if backslash_reads_as_escape(&label[i + 1..]) => {
                out.push_str("\\\\");
            }
            c if is_unsafe_to_show(c) => out.push_str(&escaped(c)),
            ' ' if Some(i) == trailing_number => out.push('\u{a0}'),
            c => out.push(c),
        }
    }
    out
}

/// Whether a backslash before `rest` would read as the start of an escape: before `n`, `r`,
/// `\\`, `u{`, or a character that is itself escaped.
fn backslash_reads_as_escape(rest: &str) -> bool {
    rest.starts_with("u{") || rest.chars().next().is_some_and(|c| matches!(c, 'n' | 'r' | '\\') || is_unsafe_to_show(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cpuprof_parse::{parse, Origin, ParseOptions};

    /// root → main → {hot (90 samples), cold → colder (2 samples)}; top-level `tiny` (1 sample).
    const PROFILE: &str = r#"{"nodes":[
      {"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2,6]},
      {"id":2,"callFrame":{"functionName":"main","scriptId":"1","url":"file:///a.js","lineNumber":0,"columnNumber":0},"children":[3,4]},
      {"id":3,"callFrame":{"functionName":"hot","scriptId":"1","url":"file:///a.js","lineNumber":4,"columnNumber":0}},
      {"id":4,"callFrame":{"functionName":"cold","scriptId":"1","url":"file:///a.js","lineNumber":9,"columnNumber":0},"children":[5]},
      {"id":5,"callFrame":{"functionName":"colder","scriptId":"1","url":"file:///a.js","lineNumber":19,"columnNumber":0}},
      {"id":6,"callFrame":{"functionName":"tiny","scriptId":"1","url":"file:///a.js","lineNumber":29,"columnNumber":0}}],
      "startTime":0,"endTime":93,
      "samples":[3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,5,5,6],
      "timeDeltas":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}"#;

    fn folded(prune_below: Option<f64>) -> Folded {
        let profile = parse(PROFILE.as_bytes(), &Origin("t".into()), &ParseOptions::default()).unwrap();
        let mut options = FoldOptions::new(GroupBy::Function, Weight::Samples, StackFilter::default(), None);
        options.prune_below = prune_below;
        fold(&profile, &options)
    }

    #[test]
    fn folds_per_stack_sorted() {
        let f = folded(None);
        let lines: Vec<(&str, i64)> = f.stacks.iter().map(|s| (s.frames.as_str(), s.weight)).collect();
        assert_eq!(
            lines,
            vec![
                ("main file:///a.js:1;cold file:///a.js:10;colder file:///a.js:20", 2),
                ("main file:///a.js:1;hot file:///a.js:5", 90),
                ("tiny file:///a.js:30", 1),
            ]
        );
        assert_eq!((f.total, f.samples), (93, 93));
    }

    #[test]
    fn pruning_keeps_every_drawn_width() {
        // Subtrees under 5% go into their caller; top-level frames always stay.
        let f = folded(Some(0.05));
        let lines: Vec<(&str, i64)> = f.stacks.iter().map(|s| (s.frames.as_str(), s.weight)).collect();
        assert_eq!(
            lines,
            vec![
                ("main file:///a.js:1", 2),
                ("main file:///a.js:1;hot file:///a.js:5", 90),
                ("tiny file:///a.js:30", 1)
            ]
        );
        assert_eq!(f.stacks.iter().map(|s| s.weight).sum::<i64>(), 93);
    }

    #[test]
    fn labels_cannot_split_frames_or_lines() {
        assert_eq!(escape("a;b\nc\rd"), "a\u{ff1b}b\\nc\\rd");
        assert_eq!(escape("plain name"), "plain name");
        assert_eq!(escape(r"C:\temp\new\\x\u{1b}\"), r"C:\temp\\new\\\x\\u{1b}\");
        assert_eq!(escape("a\\\n|b\\\u{1b}"), r"a\\\n|b\\\u{1b}");
        assert_eq!(escape("\u{1b}[31m\ttab\u{202e}"), "\\u{1b}[31m\\u{9}tab\\u{202e}");
        assert_eq!(escape("RegExp: ^(a+)+ 200"), "RegExp: ^(a+)+\u{a0}200");
        assert_eq!(escape("v 1.2 x"), "v 1.2 x");
        assert_eq!(escape("ends with space "), "ends with space ");
    }
}
