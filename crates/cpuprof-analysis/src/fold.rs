//! Folded stacks (`root;…;leaf weight`), the input of flame graphs (inferno, FlameGraph,
//! speedscope).
//!
//! Folding is per stack node, never per sample: each stack with a self weight becomes one
//! line, labelled once per function. The specification, shared with the independent oracle,
//! is `fixtures/oracle/SPEC.md` §8.

use cpuprof_model::{Func, FuncKind, Profile};
use rustc_hash::FxHashMap;

use crate::filter::StackFilter;
use crate::keys::{group_label, GroupBy};
use crate::top::Weight;
use crate::weights::{stack_weights, StackWeights};

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
}

impl FoldOptions {
    /// Options with every field given.
    pub fn new(by: GroupBy, weight: Weight, filter: StackFilter, window: Option<(i64, i64)>) -> Self {
        Self { by, weight, filter, window }
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
}

/// Folds `profile` into one line per distinct stack.
pub fn fold(profile: &Profile, options: &FoldOptions) -> Folded {
    let StackWeights { weight, total, samples, .. } =
        stack_weights(profile, options.weight, &options.filter, options.window);
    let by_group = matches!(options.by, GroupBy::File | GroupBy::Package);
    // One label per function, escaped once; the root pseudo-function has none.
    let labels: Vec<Option<String>> = profile
        .funcs
        .as_slice()
        .iter()
        .map(|func| {
            (func.kind != FuncKind::Root).then(|| {
                let label = if by_group {
                    group_label(func, &profile.strings, options.by == GroupBy::Package)
                } else {
                    function_label(profile, func)
                };
                escape(&label)
            })
        })
        .collect();
    let mut classes: FxHashMap<String, FrameClass> = FxHashMap::default();
    for (func, label) in profile.funcs.as_slice().iter().zip(&labels) {
        if let Some(label) = label {
            classes.entry(label.clone()).or_insert_with(|| class_of(profile, func));
        }
    }
    let mut merged: FxHashMap<String, (i64, FrameClass)> = FxHashMap::default();
    let mut path: Vec<&str> = Vec::new();
    let mut leaf_class = FrameClass::Vm;
    for (s, w) in weight.iter().enumerate() {
        if *w == 0 {
            continue;
        }
        path.clear();
        let mut first = true;
        for frame in profile.stacks.walk(cpuprof_model::StackId::from_index(s)) {
            let func = profile.frames[frame].func;
            let Some(label) = labels[func.index()].as_deref() else { continue };
            if first {
                leaf_class = classes.get(label).copied().unwrap_or(FrameClass::Vm);
                first = false;
            }
            if by_group && path.last() == Some(&label) {
                continue;
            }
            path.push(label);
        }
        if path.is_empty() {
            continue;
        }
        path.reverse();
        let entry = merged.entry(path.join(";")).or_insert((0, leaf_class));
        entry.0 = entry.0.saturating_add(*w);
    }
    let mut stacks: Vec<FoldedStack> =
        merged.into_iter().map(|(frames, (weight, leaf))| FoldedStack { frames, weight, leaf }).collect();
    stacks.sort_unstable_by(|a, b| a.frames.as_bytes().cmp(b.frames.as_bytes()));
    Folded { unit: options.weight, stacks, classes, total, samples }
}

/// `name file:line` for JavaScript with a url, else the name (`(anonymous)` when empty).
fn function_label(profile: &Profile, func: &Func) -> String {
    let name = profile.strings.get(func.name);
    let name = if name.is_empty() { "(anonymous)" } else { name };
    let file = profile.strings.get(func.file);
    if func.kind != FuncKind::Js || file.is_empty() {
        return name.to_owned();
    }
    match func.line {
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

/// One frame stays one frame: `;` becomes `；` (U+FF1B), line breaks become `\n` / `\r`.
pub fn escape(label: &str) -> String {
    if !label.contains([';', '\n', '\r']) {
        return label.to_owned();
    }
    let mut out = String::with_capacity(label.len() + 4);
    for c in label.chars() {
        match c {
            ';' => out.push('\u{ff1b}'),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn labels_cannot_split_frames_or_lines() {
        assert_eq!(escape("a;b\nc\rd"), "a\u{ff1b}b\\nc\\rd");
        assert_eq!(escape("plain name"), "plain name");
    }
}
