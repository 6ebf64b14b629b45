//! Walking the stack tree downwards: the children of every node (a CSR index), the roots,
//! and iterators over the ids of a column, so that no consumer rebuilds them by hand.
//!
//! The index is returned by value, not cached in the profile: a profile stays plain data
//! (cheap to clone, no interior mutability), each command walks the tree once, and a caller
//! may reorder each node's children in place ([`Children::sort_siblings_by`]) for its own walk.

use crate::tables::{StackTable, Table};
use crate::{FrameId, FuncId, StackId, StrId};

mod sealed {
    /// Conversion to and from a column position; not callable outside the model, so only the
    /// builder mints profile ids.
    pub trait Sealed: Copy {
        fn position(self) -> usize;
        fn at(index: usize) -> Self;
    }
}

/// An id that addresses a position in a column: the profile's ids, and plain `u32` node
/// numbers for trees built outside the model (a fold's label tree, a writer's node tree).
pub trait ColumnId: sealed::Sealed {}

macro_rules! column_id {
    ($($id:ty),*) => {$(
        impl sealed::Sealed for $id {
            #[inline]
            fn position(self) -> usize {
                self.index()
            }
            #[inline]
            fn at(index: usize) -> Self {
                Self::from_index(index)
            }
        }
        impl ColumnId for $id {}
    )*};
}
column_id!(StrId, FuncId, FrameId, StackId);

impl sealed::Sealed for u32 {
    #[inline]
    fn position(self) -> usize {
        self as usize
    }
    #[inline]
    fn at(index: usize) -> Self {
        u32::try_from(index).expect("node index fits in u32")
    }
}
impl ColumnId for u32 {}

/// The children of every node of a forest given by parent links, in compressed sparse rows:
/// node `v`'s children are `ids[offsets[v]..offsets[v + 1]]`, in increasing id order unless
/// re-sorted. Nodes without a parent are the roots, also in id order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Children<I> {
    offsets: Vec<u32>,
    ids: Vec<I>,
    roots: Vec<I>,
}

impl<I: ColumnId> Children<I> {
    /// The index of the forest where node `i` (of `parents.len()`) has parent `parents[i]`.
    /// Parents need not come before children.
    ///
    /// # Panics
    /// When a parent is not a node of the forest.
    pub fn from_parents(parents: &[Option<I>]) -> Self {
        let n = parents.len();
        // A counting sort by parent: count, prefix-sum, fill in id order.
        let mut offsets = vec![0u32; n + 1];
        let mut roots = Vec::new();
        for (v, p) in parents.iter().enumerate() {
            match p {
                Some(p) => offsets[p.position() + 1] += 1,
                None => roots.push(I::at(v)),
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill: Vec<u32> = offsets[..n].to_vec();
        let mut ids = vec![I::at(0); n - roots.len()];
        for (v, p) in parents.iter().enumerate() {
            if let Some(p) = p {
                let slot = &mut fill[p.position()];
                ids[*slot as usize] = I::at(v);
                *slot += 1;
            }
        }
        Self { offsets, ids, roots }
    }

    /// The children of `node`.
    #[inline]
    pub fn of(&self, node: I) -> &[I] {
        let v = node.position();
        &self.ids[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// The nodes without a parent, in id order.
    pub fn roots(&self) -> &[I] {
        &self.roots
    }

    /// True when `node` has no children.
    pub fn is_leaf(&self, node: I) -> bool {
        self.of(node).is_empty()
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when the forest has no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sorts the children of every node (and the roots) by `compare`, for walks that must
    /// visit siblings in an order of their own.
    pub fn sort_siblings_by(&mut self, mut compare: impl FnMut(&I, &I) -> std::cmp::Ordering) {
        for w in self.offsets.windows(2) {
            self.ids[w[0] as usize..w[1] as usize].sort_unstable_by(&mut compare);
        }
        self.roots.sort_unstable_by(compare);
    }
}

impl StackTable {
    /// The children index of the stack tree, built in two passes over the parent column.
    pub fn children(&self) -> Children<StackId> {
        Children::from_parents(self.parents())
    }

    /// Every stack id, in order (parents before children).
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = StackId> + ExactSizeIterator + Clone {
        (0..self.len()).map(StackId::from_index)
    }
}

impl<I: ColumnId, T> Table<I, T> {
    /// Every id of the table, in order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = I> + ExactSizeIterator + Clone {
        (0..self.len()).map(I::at)
    }

    /// Every row with its id, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (I, &T)> + ExactSizeIterator + Clone {
        self.ids().zip(self.as_slice())
    }
}

#[cfg(test)]
// The stacks are named a..f after the tree drawn in `forest`'s doc.
#[allow(clippy::many_single_char_names)]
mod tests {
    use super::*;
    use crate::{Frame, Func, FuncKind, ProfileBuilder, SourceFormat, ValueType};

    /// Two trees, built out of order: a → {b → d, c}; e → f. Returns the profile's stacks
    /// and the ids of a..f.
    fn forest() -> (crate::Profile, [StackId; 6]) {
        let mut b = ProfileBuilder::new(SourceFormat::Folded, vec![ValueType::SAMPLES]);
        let frame = |b: &mut ProfileBuilder, name: &str| {
            let name = b.intern(name);
            let func = b.func(Func {
                name,
                file: StrId::EMPTY,
                line: None,
                column: None,
                kind: FuncKind::Native,
                tier: None,
                library: None,
            });
            b.frame(Frame { func, line: None, column: None })
        };
        let (fa, fb, fc, fd, fe, ff) = (
            frame(&mut b, "a"),
            frame(&mut b, "b"),
            frame(&mut b, "c"),
            frame(&mut b, "d"),
            frame(&mut b, "e"),
            frame(&mut b, "f"),
        );
        let a = b.stack(None, fa);
        let bb = b.stack(Some(a), fb);
        let e = b.stack(None, fe);
        let d = b.stack(Some(bb), fd);
        let c = b.stack(Some(a), fc);
        let f = b.stack(Some(e), ff);
        b.sample(d, None, &[1]);
        (b.finish().unwrap(), [a, bb, c, d, e, f])
    }

    #[test]
    fn children_in_order_roots_and_leaves() {
        let (p, [a, b, c, d, e, f]) = forest();
        let kids = p.stacks.children();
        assert_eq!(kids.len(), 6);
        assert_eq!(kids.roots(), &[a, e]);
        assert_eq!(kids.of(a), &[b, c]);
        assert_eq!(kids.of(b), &[d]);
        assert_eq!(kids.of(e), &[f]);
        for leaf in [c, d, f] {
            assert!(kids.is_leaf(leaf));
        }
        assert!(!kids.is_leaf(a));
        // Every stack is a root or the child of its parent, exactly once.
        let listed: usize = p.stacks.ids().map(|s| kids.of(s).len()).sum::<usize>() + kids.roots().len();
        assert_eq!(listed, p.stacks.len());
        for s in p.stacks.ids() {
            match p.stacks.parent(s) {
                Some(up) => assert_eq!(kids.of(up).iter().filter(|c| **c == s).count(), 1),
                None => assert!(kids.roots().contains(&s)),
            }
        }
    }

    #[test]
    fn siblings_can_be_resorted() {
        let (p, [a, b, c, _, e, _]) = forest();
        let mut kids = p.stacks.children();
        kids.sort_siblings_by(|x, y| y.cmp(x));
        assert_eq!(kids.of(a), &[c, b]);
        assert_eq!(kids.roots(), &[e, a]);
    }

    #[test]
    fn plain_node_trees_and_the_empty_forest() {
        // 0 → {2, 3}, 3 → 1: parents need not come first.
        let kids = Children::<u32>::from_parents(&[None, Some(3), Some(0), Some(0)]);
        assert_eq!((kids.roots(), kids.of(0), kids.of(3), kids.of(1)), (&[0u32][..], &[2, 3][..], &[1][..], &[][..]));
        let empty = Children::<u32>::from_parents(&[]);
        assert!(empty.is_empty() && empty.roots().is_empty());
    }

    #[test]
    fn id_iterators_cover_each_column() {
        let (p, stacks) = forest();
        assert_eq!(p.stacks.ids().collect::<Vec<_>>(), {
            let mut s = stacks.to_vec();
            s.sort();
            s
        });
        assert_eq!(p.funcs.ids().len(), 6);
        for (id, frame) in p.frames.iter() {
            assert_eq!(p.frames[id], *frame);
        }
        assert_eq!(p.frames.ids().next_back().map(FrameId::index), Some(5));
    }
}
