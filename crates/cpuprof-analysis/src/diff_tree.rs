//! Both sides of a comparison in one tree of frames: what a differential flame graph draws.
//!
//! Every run of each side is grafted into one [`FrameTree`]; each node keeps each side's own
//! weight (every run's, scaled: a side of several runs is drawn per run), and each caller the
//! weights of the stacks below it. The renderer only draws it.

use cpuprof_folded as folded_text;
use rustc_hash::FxHashSet;

use crate::{Folded, FrameTree};

/// A (base, new) pair of scaled weights.
pub type SidePair = (f64, f64);

/// The runs of both sides of a comparison merged into one tree of frames.
#[derive(Debug)]
pub struct DiffTree {
    tree: FrameTree,
    /// Per node, the weight of its own (the stack ending there), per side.
    own: Vec<SidePair>,
    /// Per node, the weight of the stacks it is a proper prefix of (it as a caller), per side.
    below: Vec<SidePair>,
    /// The nodes some run has a stack at, each as its path from the root (root-most first,
    /// the root left out), in the byte order of the stacks' folded text.
    stacks: Vec<Vec<u32>>,
    /// The frame labels each side draws (base, new).
    labels: [FxHashSet<String>; 2],
}

impl DiffTree {
    /// The runs of `base` and `new` in one tree, each run's weights times its side's scale.
    pub fn of(base: &[Folded], new: &[Folded], base_scale: f64, new_scale: f64) -> Self {
        let mut tree = FrameTree::default();
        let mut own: Vec<SidePair> = Vec::new();
        let mut is_stack: Vec<bool> = Vec::new();
        let mut drawn_by: [Vec<bool>; 2] = [Vec::new(), Vec::new()];
        for (side, runs, scale) in [(0, base, base_scale), (1, new, new_scale)] {
            for run in runs {
                let to = tree.graft(&run.tree);
                own.resize(tree.len(), (0.0, 0.0));
                is_stack.resize(tree.len(), false);
                for seen in &mut drawn_by {
                    seen.resize(tree.len(), false);
                }
                for (v, &node) in to.iter().enumerate().skip(1) {
                    let weight = run.tree.weight(v as u32);
                    if weight == 0 {
                        continue;
                    }
                    let w = if side == 0 { &mut own[node as usize].0 } else { &mut own[node as usize].1 };
                    *w += weight as f64 * scale;
                    is_stack[node as usize] = true;
                    // Its frames and their callers are drawn by this side (each walked once).
                    let mut up = Some(node);
                    while let Some(n) = up.filter(|n| *n != FrameTree::ROOT && !drawn_by[side][*n as usize]) {
                        drawn_by[side][n as usize] = true;
                        up = tree.parent(n);
                    }
                }
            }
        }
        let labels_of = |seen: &[bool]| -> FxHashSet<String> {
            (1..tree.len()).filter(|v| seen[*v]).map(|v| tree.label(v as u32).to_owned()).collect()
        };
        let labels = [labels_of(&drawn_by[0]), labels_of(&drawn_by[1])];
        let mut keyed: Vec<(String, Vec<u32>)> = (1..tree.len() as u32)
            .filter(|v| is_stack[*v as usize])
            .map(|v| {
                let mut path: Vec<u32> = std::iter::successors(Some(v), |n| tree.parent(*n)).collect();
                path.pop(); // the root
                path.reverse();
                (folded_text::join_stack(path.iter().map(|n| tree.label(*n))), path)
            })
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let stacks: Vec<Vec<u32>> = keyed.into_iter().map(|(_, path)| path).collect();
        let mut below = vec![(0.0f64, 0.0f64); tree.len()];
        for path in &stacks {
            let (b, n) = own[path[path.len() - 1] as usize];
            for &node in &path[..path.len() - 1] {
                below[node as usize].0 += b;
                below[node as usize].1 += n;
            }
        }
        DiffTree { tree, own, below, stacks, labels }
    }

    /// The merged tree (labels, parents, classes).
    pub fn tree(&self) -> &FrameTree {
        &self.tree
    }

    /// Every stack some run has, as its path from the root (root-most first) with the (base,
    /// new) weight that ends there, in the byte order of the stacks' folded text.
    pub fn stacks(&self) -> impl Iterator<Item = (&[u32], SidePair)> + '_ {
        self.stacks.iter().map(|path| (path.as_slice(), self.own[path[path.len() - 1] as usize]))
    }

    /// The (base, new) weight of the stacks `node` is a caller in (its own weight not counted).
    pub fn below(&self, node: u32) -> SidePair {
        self.below[node as usize]
    }

    /// Whether the base side draws a frame labelled `label`.
    pub fn in_base(&self, label: &str) -> bool {
        self.labels[0].contains(label)
    }

    /// Whether the new side draws a frame labelled `label`.
    pub fn in_new(&self, label: &str) -> bool {
        self.labels[1].contains(label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fold, FoldOptions, GroupBy, StackFilter, Weight};
    use cpuprof_parse::{parse, Origin, ParseOptions};

    fn run(text: &str) -> Folded {
        let profile = parse(text.as_bytes(), &Origin("t".into()), &ParseOptions::default()).unwrap();
        fold(&profile, &FoldOptions::new(GroupBy::Function, Weight::Samples, StackFilter::default()))
    }

    /// The stacks as `a;b` text with their pair of weights, in the tree's order.
    fn stacks(diff: &DiffTree) -> Vec<(String, SidePair)> {
        diff.stacks().map(|(path, pair)| (stacks_text(diff, path), pair)).collect()
    }

    #[test]
    fn both_sides_per_stack_scaled_per_run_with_callers_and_labels() {
        // Base: two runs, drawn at half weight each; new: one run.
        let base = [run("main;a 2\nmain;b 1\n"), run("main;a 4\nmain;b;z 3\n")];
        let new = [run("main;a 1\nmain;c 4\nmain 2\n")];
        let diff = DiffTree::of(&base, &new, 0.5, 1.0);
        assert_eq!(
            stacks(&diff),
            [
                ("main".to_owned(), (0.0, 2.0)),
                ("main;a".to_owned(), (3.0, 1.0)),
                ("main;b".to_owned(), (0.5, 0.0)),
                ("main;b;z".to_owned(), (1.5, 0.0)),
                ("main;c".to_owned(), (0.0, 4.0)),
            ]
        );
        let node = |path: &str| diff.stacks().find(|(p, _)| stacks_text(&diff, p) == path).map(|(p, _)| p[p.len() - 1]);
        // As a caller, main has everything but its own weight; b has z's.
        assert_eq!(diff.below(node("main").unwrap()), (5.0, 5.0));
        assert_eq!(diff.below(node("main;b").unwrap()), (1.5, 0.0));
        assert_eq!(diff.below(node("main;c").unwrap()), (0.0, 0.0));
        assert!(diff.in_base("z") && !diff.in_new("z"));
        assert!(diff.in_new("c") && !diff.in_base("c"));
        assert!(diff.in_base("main") && diff.in_new("main"));
    }

    fn stacks_text(diff: &DiffTree, path: &[u32]) -> String {
        path.iter().map(|n| diff.tree().label(*n)).collect::<Vec<_>>().join(";")
    }
}
