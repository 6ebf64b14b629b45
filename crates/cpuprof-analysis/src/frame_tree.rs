//! The result of folding: a weighted tree of frame labels, each label interned once.

use cpuprof_model::Children;
use rustc_hash::FxHashMap;

use crate::category::Category;
use crate::prefix_tree::PrefixTree;

/// Label id of the root, which has no label.
const NO_LABEL: u32 = u32::MAX;

/// Stacks merged by what their frames read: node [`FrameTree::ROOT`] stands for the whole
/// profile and has no label; every other node is a frame label called from its parent, with
/// the weight of its own (self weight). Nodes are `u32`s, parents before children; two
/// children of one node never share a label.
///
/// Labels are interned once, in their folded-text form (escaped by
/// [`cpuprof_folded::escape_frame`]: one line each, no `;`), so a walk can hand them to a
/// folded-text writer as they are.
#[derive(Clone, Debug)]
pub struct FrameTree {
    labels: Vec<String>,
    /// The category of each label (the first function that reads so decides).
    classes: Vec<Category>,
    /// What a flame graph shows of each label in its frame: the function's name first, then a
    /// short location (`app.js:23`, a package's name), the full label being for the tooltip.
    shorts: Vec<String>,
    label_ids: FxHashMap<String, u32>,
    /// The nodes, keyed by label id under their parent; the root alone has no parent.
    tree: PrefixTree,
    weight: Vec<i64>,
}

impl Default for FrameTree {
    fn default() -> Self {
        let mut tree = PrefixTree::default();
        tree.node(None, NO_LABEL);
        Self {
            labels: Vec::new(),
            classes: Vec::new(),
            shorts: Vec::new(),
            label_ids: FxHashMap::default(),
            tree,
            weight: vec![0],
        }
    }
}

impl FrameTree {
    /// The root: the whole profile, no label.
    pub const ROOT: u32 = 0;

    /// The id of `label` (already escaped), interned with `class` if it is new.
    pub(crate) fn intern(&mut self, label: String, facts: impl FnOnce() -> (Category, String)) -> u32 {
        if let Some(id) = self.label_ids.get(&label) {
            return *id;
        }
        let id = self.labels.len() as u32;
        let (class, short) = facts();
        self.labels.push(label.clone());
        self.classes.push(class);
        self.shorts.push(short);
        self.label_ids.insert(label, id);
        id
    }

    /// The label id of `node` (`None` for the root).
    pub(crate) fn label_id(&self, node: u32) -> Option<u32> {
        Some(self.tree.key(node)).filter(|l| *l != NO_LABEL)
    }

    /// The child of `parent` with label id `label`, added (with no weight) if missing.
    pub(crate) fn child(&mut self, parent: u32, label: u32) -> u32 {
        let node = self.tree.node(Some(parent), label);
        if node as usize == self.weight.len() {
            self.weight.push(0);
        }
        node
    }

    /// Adds `weight` to the own weight of `node`.
    pub(crate) fn add_weight(&mut self, node: u32, weight: i64) {
        let own = &mut self.weight[node as usize];
        *own = own.saturating_add(weight);
    }

    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// True when the tree is only its root.
    pub fn is_empty(&self) -> bool {
        self.len() == 1
    }

    /// True when some node other than the root has weight of its own: there is a stack to
    /// write or draw.
    pub fn has_stacks(&self) -> bool {
        self.weight[1..].iter().any(|w| *w != 0)
    }

    /// The caller of `node`; `None` for the root.
    pub fn parent(&self, node: u32) -> Option<u32> {
        self.tree.parent(node)
    }

    /// The label of `node` (escaped; `""` for the root).
    pub fn label(&self, node: u32) -> &str {
        self.label_id(node).map_or("", |l| &self.labels[l as usize])
    }

    /// What `node`'s frame is, for colouring (the root counts as `(program)`).
    pub fn class(&self, node: u32) -> Category {
        self.label_id(node).map_or(Category::Program, |l| self.classes[l as usize])
    }

    /// The own (self) weight of `node`.
    pub fn weight(&self, node: u32) -> i64 {
        self.weight[node as usize]
    }

    /// What a flame graph's frame shows of `node`'s label (see [`Self::labels_shown`]).
    pub fn short(&self, node: u32) -> &str {
        self.label_id(node).map_or("", |l| &self.shorts[l as usize])
    }

    /// Every distinct label with what a frame shows of it: the function's name, then a short
    /// location (`priceOrder app.js:23`, `fastHash fast-thing`).
    pub fn labels_shown(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.labels.iter().map(String::as_str).zip(self.shorts.iter().map(String::as_str))
    }

    /// Every distinct label with its class, including labels of functions no drawn stack
    /// reaches.
    pub fn labels(&self) -> impl Iterator<Item = (&str, Category)> + '_ {
        self.labels.iter().map(String::as_str).zip(self.classes.iter().copied())
    }

    /// The children index of the tree (the model's), each node's children sorted by label.
    pub fn children(&self) -> Children<u32> {
        let mut children = Children::from_parents(&self.tree.parents);
        children.sort_siblings_by(|a, b| self.label(*a).cmp(self.label(*b)));
        children
    }

    /// Calls `visit(node, frames, weight)` for every node with weight of its own, `frames`
    /// being the labels from the outermost caller down to the node. Depth-first, siblings by
    /// label, with one growing path: no allocation per node.
    pub fn for_each_stack<'a>(&'a self, mut visit: impl FnMut(u32, &[&'a str], i64)) {
        let children = self.children();
        let mut path: Vec<&str> = Vec::new();
        // (node, leaving?)
        let mut todo: Vec<(u32, bool)> = children.of(Self::ROOT).iter().rev().map(|c| (*c, false)).collect();
        while let Some((v, leaving)) = todo.pop() {
            if leaving {
                path.pop();
                continue;
            }
            path.push(self.label(v));
            if self.weight(v) != 0 {
                visit(v, &path, self.weight(v));
            }
            todo.push((v, true));
            todo.extend(children.of(v).iter().rev().map(|c| (*c, false)));
        }
    }

    /// The stacks of [`for_each_stack`](Self::for_each_stack) as folded-text stacks
    /// (`a;b;c`) with their weights, in walk order.
    pub fn stack_texts(&self) -> Vec<(String, i64)> {
        let mut out = Vec::new();
        self.for_each_stack(|_, frames, weight| out.push((cpuprof_folded::join_stack(frames), weight)));
        out
    }

    /// Adds every node of `other` (its labels, classes and own weights) to this tree, merging
    /// paths that read alike, and returns where each of `other`'s nodes went.
    pub fn graft(&mut self, other: &FrameTree) -> Vec<u32> {
        let labels: Vec<u32> = other
            .labels
            .iter()
            .zip(other.classes.iter().zip(&other.shorts))
            .map(|(label, (class, short))| self.intern(label.clone(), || (*class, short.clone())))
            .collect();
        let mut to = vec![Self::ROOT; other.len()];
        // Parents come before children.
        for v in 1..other.len() as u32 {
            let up = to[other.tree.parent(v).unwrap_or(Self::ROOT) as usize];
            to[v as usize] = self.child(up, labels[other.tree.key(v) as usize]);
            self.add_weight(to[v as usize], other.weight[v as usize]);
        }
        self.add_weight(Self::ROOT, other.weight[0]);
        to
    }

    /// Moves the weight of every subtree lighter than `min` into the node above it, as if
    /// those frames were not there: a flame graph would not draw them anyway, and the
    /// frames it does draw keep their widths.
    pub(crate) fn prune(&mut self, min: i64) {
        let n = self.len();
        let mut subtree = self.weight.clone();
        for v in (1..n).rev() {
            let p = self.tree.parents[v].map_or(0, |p| p as usize);
            subtree[p] = subtree[p].saturating_add(subtree[v]);
        }
        for v in (1..n).rev() {
            let p = self.tree.parents[v].map_or(0, |p| p as usize);
            // The root draws nothing of its own: its children always stay.
            if p != 0 && subtree[v] < min {
                self.weight[p] = self.weight[p].saturating_add(self.weight[v]);
                self.weight[v] = 0;
            }
        }
    }
}
