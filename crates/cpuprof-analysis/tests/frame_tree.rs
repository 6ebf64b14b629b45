//! The fold result at the crate's boundary: a weighted tree of frame labels, each label
//! interned once, walked without strings being split. Expected values are worked by hand
//! from the input below.

use cpuprof_analysis::{fold, Category, FoldOptions, Folded, FrameTree, GroupBy, StackFilter, Weight};
use cpuprof_parse::{parse, Origin, ParseOptions};

/// `work` is called from two places; one name holds a `;` (written as U+FF1B).
const INPUT: &str = "main /a.js:1 4\n\
                     main /a.js:1;work /a.js:5 3\n\
                     main /a.js:1;work /a.js:5;leaf /a.js:9 2\n\
                     other /b.js:2 1\n\
                     other /b.js:2;work /a.js:5 1\n\
                     semi\u{ff1b}colon /c.js:3 1\n";

fn folded(text: &str) -> Folded {
    let profile = parse(text.as_bytes(), &Origin("t.folded".into()), &ParseOptions::default()).unwrap();
    fold(&profile, &FoldOptions::new(GroupBy::Function, Weight::Samples, StackFilter::default()))
}

/// (frames root first, weight) of every stack, in walk order.
fn stacks(tree: &FrameTree) -> Vec<(Vec<String>, i64)> {
    let mut out = Vec::new();
    tree.for_each_stack(|node, frames, weight| {
        assert_eq!(tree.weight(node), weight);
        assert_eq!(tree.label(node), *frames.last().unwrap());
        out.push((frames.iter().map(|f| (*f).to_owned()).collect(), weight));
    });
    out
}

fn owned(frames: &[&str], weight: i64) -> (Vec<String>, i64) {
    (frames.iter().map(|f| (*f).to_owned()).collect(), weight)
}

#[test]
fn one_node_per_distinct_path_one_label_per_function() {
    let f = folded(INPUT);
    let tree = &f.tree;
    // The root, main, main;work, main;work;leaf, other, other;work, semi.
    assert_eq!(tree.len(), 7);
    assert!(tree.has_stacks());
    let mut labels: Vec<(&str, Category)> = tree.labels().collect();
    labels.sort_unstable();
    let semi = "semi\u{ff1b}colon /c.js:3";
    let expected = ["leaf /a.js:9", "main /a.js:1", "other /b.js:2", semi, "work /a.js:5"];
    assert_eq!(labels, expected.map(|l| (l, Category::App)));
    assert_eq!((f.total, f.samples, f.drawn_samples), (12, 12, 12));
}

#[test]
fn walk_is_depth_first_with_siblings_by_label() {
    let f = folded(INPUT);
    let semi = "semi\u{ff1b}colon /c.js:3";
    assert_eq!(
        stacks(&f.tree),
        vec![
            owned(&["main /a.js:1"], 4),
            owned(&["main /a.js:1", "work /a.js:5"], 3),
            owned(&["main /a.js:1", "work /a.js:5", "leaf /a.js:9"], 2),
            owned(&["other /b.js:2"], 1),
            owned(&["other /b.js:2", "work /a.js:5"], 1),
            owned(&[semi], 1),
        ]
    );
    // The root: no label, no caller, its children in label order.
    let root = FrameTree::ROOT;
    assert_eq!((f.tree.label(root), f.tree.parent(root)), ("", None));
    let top: Vec<&str> = f.tree.children().of(root).iter().map(|c| f.tree.label(*c)).collect();
    assert_eq!(top, ["main /a.js:1", "other /b.js:2", semi]);
    for child in f.tree.children().of(root) {
        assert_eq!(f.tree.parent(*child), Some(root));
    }
}

#[test]
fn grafting_adds_runs_path_by_path() {
    let a = folded(INPUT);
    let b = folded("main /a.js:1;work /a.js:5 10\nnew /n.js:1 5\n");
    let mut both = a.tree.clone();
    let to = both.graft(&b.tree);
    // b's root, main and main;work land on a's nodes; only `new` is a new node.
    assert_eq!(both.len(), a.tree.len() + 1);
    assert_eq!(to[FrameTree::ROOT as usize], FrameTree::ROOT);
    let got: Vec<(Vec<String>, i64)> = stacks(&both);
    assert_eq!(got[1], owned(&["main /a.js:1", "work /a.js:5"], 13));
    assert!(got.contains(&owned(&["new /n.js:1"], 5)));
    assert_eq!(got.iter().map(|s| s.1).sum::<i64>(), 12 + 15);
    // Grafting onto an empty tree copies it.
    let mut copy = FrameTree::default();
    copy.graft(&a.tree);
    assert_eq!(stacks(&copy), stacks(&a.tree));
}

#[test]
fn stack_texts_are_folded_text() {
    let f = folded(INPUT);
    let mut texts = f.tree.stack_texts();
    texts.sort();
    // Reading them back gives the same tree.
    let again = cpuprof_folded::write_sorted(texts.clone());
    assert_eq!(stacks(&folded(&again).tree), stacks(&f.tree));
    assert_eq!(texts[1], ("main /a.js:1;work /a.js:5".to_owned(), 3));
    assert!(!FrameTree::default().has_stacks());
}
