//! Folding: a profile's stacks as a tree of frame labels ([`FrameTree`]), the input of flame
//! graphs and of folded stacks (`root;…;leaf weight`, written by `cpuprof_folded`).
//!
//! Folding is per stack node, never per sample: each stack with a self weight becomes one
//! weighted node, labelled once per function. The specification, shared with the independent
//! oracle, is `fixtures/oracle/SPEC.md` §8.

use cpuprof_folded::escape_frame;
use cpuprof_model::{Func, FuncKind, Profile};
use rustc_hash::FxHashMap;

use crate::category::Category;
use crate::filter::StackFilter;
use crate::frame_tree::FrameTree;
use crate::keys::{group_label, GroupBy};
use crate::weights::{effective, stack_weights, StackWeights, Weight};

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
    /// Labels for folded text that is read back (`collapse`, `convert` to folded): a reader
    /// splits `name file` at the last space before something like a path, so a script path with
    /// a space in it (`/srv/my app/a.js`) goes as its `file://` url, which has none and reads
    /// back as the path. Default is `false`: paths as they are (flame graphs).
    pub read_back: bool,
}

impl FoldOptions {
    /// Options with every field given but `prune_below`.
    pub fn new(by: GroupBy, weight: Weight, filter: StackFilter) -> Self {
        Self { by, weight, filter, prune_below: None, without_lines: false, file_names: None, read_back: false }
    }
}

/// The result of [`fold`].
#[derive(Clone, Debug)]
pub struct Folded {
    /// Unit of every weight: ns or samples.
    pub unit: Weight,
    /// The stacks, merged by what their frames read, each label interned once.
    pub tree: FrameTree,
    /// Weight of the samples counted (idle excluded unless included), before focus/ignore.
    pub total: i64,
    /// Number of those samples.
    pub samples: i64,
    /// Number of samples in the tree (after focus/ignore).
    pub drawn_samples: i64,
}

/// Folds `profile` into a tree of frame labels with the weight of each distinct stack.
///
/// Works on the stack tree, never per sample: stacks are mapped onto a tree of labels
/// (stacks whose frames read alike share a node), each label made once per function.
pub fn fold(profile: &Profile, options: &FoldOptions) -> Folded {
    let StackWeights { weight, count, total, samples } = stack_weights(profile, options.weight, &options.filter);
    let drawn_samples = count.iter().fold(0i64, |a, c| a.saturating_add(*c));
    let by_group = matches!(options.by, GroupBy::File | GroupBy::Package);

    // One label per function, escaped once, as a label id of the tree; the root has none.
    let mut tree = FrameTree::default();
    let func_label: Vec<Option<u32>> = profile
        .funcs
        .as_slice()
        .iter()
        .map(|func| {
            if func.kind == FuncKind::Root {
                return None;
            }
            let label = if by_group {
                group_label(profile, func, options.by == GroupBy::Package)
            } else {
                function_label(profile, func, options)
            };
            let label = escape_frame(&label);
            let shown = || {
                if by_group {
                    label.clone()
                } else {
                    escape_frame(&shown_label(profile, func, !options.without_lines))
                }
            };
            Some(tree.intern(label.clone(), || (Category::of_func(profile, func), shown())))
        })
        .collect();

    // Parents come before children in the stack table, so one forward pass maps each stack
    // onto its node.
    let mut node_of = vec![FrameTree::ROOT; profile.stacks.len()];
    for (s, (parent, frame)) in profile.stacks.parents().iter().zip(profile.stacks.frames()).enumerate() {
        let up = parent.map_or(FrameTree::ROOT, |p| node_of[p.index()]);
        let label = func_label[profile.frames[*frame].func.index()];
        node_of[s] = match label {
            Some(label) if !(by_group && tree.label_id(up) == Some(label)) => tree.child(up, label),
            _ => up,
        };
        tree.add_weight(node_of[s], weight[s]);
    }
    if let Some(fraction) = options.prune_below {
        // A share of what is drawn: the weight kept after focus/ignore.
        let drawn: i64 = weight.iter().fold(0i64, |a, w| a.saturating_add(*w));
        tree.prune((drawn as f64 * fraction) as i64);
    }
    Folded { unit: effective(profile, options.weight), tree, total, samples, drawn_samples }
}

/// `name file:line` (or `name file`) for JavaScript with a url, else the name (`(anonymous)` when empty).
fn function_label(profile: &Profile, func: &Func, options: &FoldOptions) -> String {
    let name = func.display_name(&profile.strings);
    let file = profile.func_file(func);
    let file = options.file_names.as_ref().and_then(|names| names.get(file)).map_or(file, String::as_str);
    let url = (options.read_back && func.kind == FuncKind::Js && file.contains(' '))
        .then(|| cpuprof_model::file_url::file_url_of_path(file))
        .flatten();
    let file = url.as_deref().unwrap_or(file);
    label_text(&name, file, func.kind, func.line.filter(|_| !options.without_lines))
}

fn label_text(name: &str, file: &str, kind: FuncKind, line: Option<u32>) -> String {
    let name = if name.is_empty() { "(anonymous)" } else { name };
    if kind != FuncKind::Js || file.is_empty() {
        return name.to_owned();
    }
    match line {
        Some(line) => format!("{name} {file}:{line}"),
        None => format!("{name} {file}"),
    }
}

/// The frame label [`fold`] gives a function of this name, file (as the fold names files) and
/// kind, with its line or (`line` `None`, as [`FoldOptions::without_lines`]) without: what joins
/// another report's row of a function (a `diff` row, say) to its frames in a flame graph.
pub fn function_frame_label(name: &str, file: Option<&str>, kind: FuncKind, line: Option<u32>) -> String {
    escape_frame(&label_text(name, file.unwrap_or(""), kind, line))
}

/// What a flame graph's frame shows of a function: its name, then where it is in brief —
/// `app.js:23` (the file's last part), the package for `node_modules` code (`fastHash
/// fast-thing`), `loader:1003` for node's internals; native code by name alone.
fn shown_label(profile: &Profile, func: &Func, with_line: bool) -> String {
    let name = func.display_name(&profile.strings);
    let name = if name.is_empty() { "(anonymous)" } else { &name };
    let file = profile.func_file(func);
    if func.kind != FuncKind::Js || file.is_empty() {
        return name.to_owned();
    }
    if file.contains("/node_modules/") {
        return format!("{name} {}", crate::keys::package_of(file));
    }
    let base = file.rsplit(['/', '\\']).find(|part| !part.is_empty()).unwrap_or(file);
    let base = base.strip_prefix("node:").unwrap_or(base);
    match func.line.filter(|_| with_line) {
        Some(line) => format!("{name} {base}:{line}"),
        None => format!("{name} {base}"),
    }
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
        let mut options = FoldOptions::new(GroupBy::Function, Weight::Samples, StackFilter::default());
        options.prune_below = prune_below;
        fold(&profile, &options)
    }

    /// The stacks as folded text with their weights, in byte order.
    fn lines(f: &Folded) -> Vec<(String, i64)> {
        let mut lines = f.tree.stack_texts();
        lines.sort();
        lines
    }

    #[test]
    fn folds_per_stack_sorted() {
        let f = folded(None);
        let lines = lines(&f);
        assert_eq!(
            lines.iter().map(|(s, w)| (s.as_str(), *w)).collect::<Vec<_>>(),
            vec![
                ("main /a.js:1;cold /a.js:10;colder /a.js:20", 2),
                ("main /a.js:1;hot /a.js:5", 90),
                ("tiny /a.js:30", 1),
            ]
        );
        assert_eq!((f.total, f.samples), (93, 93));
    }

    #[test]
    fn frames_show_the_name_then_a_short_location() {
        let f = folded(None);
        let shown: Vec<(&str, &str)> = f.tree.labels_shown().collect();
        assert!(shown.contains(&("hot /a.js:5", "hot a.js:5")), "{shown:?}");
        let mut b = cpuprof_model::ProfileBuilder::new(
            cpuprof_model::SourceFormat::CpuProfile,
            vec![cpuprof_model::ValueType::SAMPLES],
        );
        for (name, file, line) in [
            ("fastHash", "file:///srv/node_modules/.pnpm/fast-thing@1.2.3/node_modules/fast-thing/index.js", 5),
            ("Module._load", "node:internal/modules/cjs/loader", 1003),
            ("", "/srv/app/src/app.js", 7),
        ] {
            let (name, file) = (b.intern(name), b.intern(file));
            b.func(Func { name, file, line: Some(line), column: None, kind: FuncKind::Js, tier: None, library: None });
        }
        let profile = b.finish().unwrap();
        let shown: Vec<String> =
            profile.funcs.as_slice().iter().map(|func| shown_label(&profile, func, true)).collect();
        assert_eq!(shown, ["fastHash fast-thing", "Module._load loader:1003", "(anonymous) app.js:7"]);
    }

    #[test]
    fn pruning_keeps_every_drawn_width() {
        // Subtrees under 5% go into their caller; top-level frames always stay.
        let f = folded(Some(0.05));
        let lines = lines(&f);
        assert_eq!(
            lines.iter().map(|(s, w)| (s.as_str(), *w)).collect::<Vec<_>>(),
            vec![("main /a.js:1", 2), ("main /a.js:1;hot /a.js:5", 90), ("tiny /a.js:30", 1)]
        );
        assert_eq!(lines.iter().map(|s| s.1).sum::<i64>(), 93);
    }
}
