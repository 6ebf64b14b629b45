//! A `.cpuprofile`'s `samples` read while its call tree is still being built.
//!
//! Samples name nodes by id and are kept as node positions, which are known once `nodes` has
//! been deserialized and linked into a tree: the longest stretch of a read that runs on one
//! thread. So that the samples, which follow `nodes`, need not wait for it, a quick scan of the
//! `nodes` text lists the node ids in order (each `"id":` key and the integer after it), the
//! samples are read as indices in that list while the tree is built on the other thread, and
//! the list is then checked against the tree. The scan does not see the JSON's structure: when
//! it was fooled (an `"id"` key inside some other field of a node), the indices are mapped
//! again, through the ids they stand for.

use std::io::Read;

use rustc_hash::FxHashMap;

use crate::error::{ParseError, ParseErrorKind, Span};
use crate::json_scan::{Number, Scanner};
use crate::timeline::NodeIndex;
use crate::v8_tree::{ids_are_dense, Leaves, Tree};

/// Node ids in the order a scan of `nodes` found them, and where each is.
pub(crate) struct ScannedIds {
    ids: Vec<u64>,
    /// id → index in `ids` (the first, if an id is listed twice).
    index: IdIndex,
}

/// id → index: a plain table when the ids are dense enough, a hash map otherwise (by the tree's
/// rule, [`ids_are_dense`]).
enum IdIndex {
    Dense(Vec<u32>),
    Sparse(FxHashMap<u64, u32>),
}

/// The samples as indices in a [`ScannedIds`] list, in the narrowest type that fits it.
pub(crate) enum SampleIndices {
    Narrow(Indexed<u16>),
    Wide(Indexed<u32>),
}

/// A sample whose id names no node: its index, the id and where it is, when known.
type Unknown = (usize, u64, Option<Span>);

pub(crate) struct Indexed<N> {
    values: Vec<N>,
    /// Samples whose id the list does not have (`NONE` in `values`): index, id, where.
    odd: Vec<(usize, u64, Span)>,
}

impl ScannedIds {
    /// The ids of the `nodes` array `raw`, as far as a scan for `"id":` finds them.
    pub(crate) fn scan(raw: &[u8]) -> ScannedIds {
        fn skip_ws(bytes: &[u8]) -> &[u8] {
            let n = bytes.iter().take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')).count();
            &bytes[n..]
        }
        let mut ids = Vec::new();
        for at in memchr::memmem::find_iter(raw, b"\"id\"") {
            let after_key = skip_ws(&raw[at + 4..]);
            let Some((b':', value)) = after_key.split_first() else { continue };
            let value = skip_ws(value);
            let digits = value.iter().take_while(|b| b.is_ascii_digit()).count();
            let id =
                value[..digits].iter().try_fold(0u64, |id, d| id.checked_mul(10)?.checked_add(u64::from(d - b'0')));
            if let Some(id) = id.filter(|_| digits > 0) {
                ids.push(id);
            }
        }
        ScannedIds::new(ids)
    }

    /// The ids of a tree already built.
    pub(crate) fn of_tree(tree: &Tree) -> ScannedIds {
        ScannedIds::new(tree.ids().collect())
    }

    /// How many ids the scan found.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    fn new(ids: Vec<u64>) -> ScannedIds {
        let max = ids.iter().copied().max().unwrap_or(0);
        let index = if ids_are_dense(max, ids.len()) {
            let mut table = vec![u32::MAX; max as usize + 1];
            for (i, id) in ids.iter().enumerate().rev() {
                table[*id as usize] = i as u32;
            }
            IdIndex::Dense(table)
        } else {
            let mut map = FxHashMap::default();
            for (i, id) in ids.iter().enumerate().rev() {
                map.insert(*id, i as u32);
            }
            IdIndex::Sparse(map)
        };
        ScannedIds { ids, index }
    }

    /// Reads `samples` (the opening `[` next) as indices in this list.
    pub(crate) fn read_samples<R: Read + Send>(&self, s: &mut Scanner<'_, R>) -> Result<SampleIndices, ParseError> {
        Ok(if u16::try_from(self.ids.len()).is_ok() {
            SampleIndices::Narrow(self.read(s)?)
        } else {
            SampleIndices::Wide(self.read(s)?)
        })
    }

    fn read<N: NodeIndex + TryFrom<u32>, R: Read + Send>(
        &self,
        s: &mut Scanner<'_, R>,
    ) -> Result<Indexed<N>, ParseError> {
        let mut read = Indexed { values: Vec::new(), odd: Vec::new() };
        let narrow = |i: u32| N::try_from(i).ok().filter(|i| *i != N::NONE);
        // The index in the samples' own width: half the cache footprint for small trees.
        let table: Vec<N> = match &self.index {
            IdIndex::Dense(table) => table.iter().map(|i| narrow(*i).unwrap_or(N::NONE)).collect(),
            IdIndex::Sparse(_) => Vec::new(),
        };
        let lookup = |id: u64| match &self.index {
            IdIndex::Dense(_) => table.get(usize::try_from(id).ok()?).copied().filter(|i| *i != N::NONE),
            IdIndex::Sparse(map) => narrow(*map.get(&id)?),
        };
        let slow = |index, number, at, out: &mut Vec<N>| {
            let id = node_id(number)?;
            out.push(lookup(id).unwrap_or_else(|| {
                read.odd.push((index, id, at));
                N::NONE
            }));
            Ok(())
        };
        match &self.index {
            IdIndex::Dense(_) => {
                let fast = |id: i64| table.get(usize::try_from(id).ok()?).copied().filter(|i| *i != N::NONE);
                s.number_array("`samples`", &mut read.values, fast, slow)?;
            }
            IdIndex::Sparse(_) => {
                s.number_array("`samples`", &mut read.values, |id| lookup(u64::try_from(id).ok()?), slow)?;
            }
        }
        Ok(read)
    }
}

impl SampleIndices {
    /// The samples as positions in `tree`, whose ids `scanned` (the list they were read by)
    /// should be; for the first sample whose id names no node, `Err((index, id, where))`
    /// (where it is, when known).
    pub(crate) fn positions(self, scanned: &ScannedIds, tree: &Tree) -> Result<Leaves, Unknown> {
        let narrow_tree = u16::try_from(tree.nodes.len()).is_ok();
        if tree.ids().eq(scanned.ids.iter().copied()) {
            // Same list, same width: the indices are the positions.
            match self {
                SampleIndices::Narrow(read) => read.settle_odd(tree).map(Leaves::Narrow),
                SampleIndices::Wide(read) => read.settle_odd(tree).map(Leaves::Wide),
            }
        } else if narrow_tree {
            self.remapped::<u16>(scanned, tree).map(Leaves::Narrow)
        } else {
            self.remapped::<u32>(scanned, tree).map(Leaves::Wide)
        }
    }

    /// Positions through the ids the indices stand for (the scan was fooled).
    fn remapped<M: NodeIndex + TryFrom<u32>>(self, scanned: &ScannedIds, tree: &Tree) -> Result<Vec<M>, Unknown> {
        let (values, odd): (Vec<u32>, _) = match self {
            SampleIndices::Narrow(read) => (
                read.values.iter().map(|i| if *i == u16::NONE { u32::NONE } else { u32::from(*i) }).collect(),
                read.odd,
            ),
            SampleIndices::Wide(read) => (read.values, read.odd),
        };
        let mut odd = odd.into_iter().peekable();
        let mut positions = Vec::with_capacity(values.len());
        for (index, i) in values.into_iter().enumerate() {
            let (id, at) = match odd.next_if(|(at, _, _)| *at == index) {
                Some((_, id, at)) => (id, Some(at)),
                None => (scanned.ids.get(i as usize).copied().unwrap_or(u64::MAX), None),
            };
            match tree.position(id).and_then(|p| M::try_from(p).ok()) {
                Some(p) => positions.push(p),
                None => return Err((index, id, at)),
            }
        }
        Ok(positions)
    }
}

impl<N: NodeIndex + TryFrom<u32>> Indexed<N> {
    /// The values, with the samples the list had no id for placed by the tree.
    fn settle_odd(mut self, tree: &Tree) -> Result<Vec<N>, Unknown> {
        for (index, id, at) in self.odd {
            match tree.position(id).and_then(|p| N::try_from(p).ok()) {
                Some(p) => self.values[index] = p,
                None => return Err((index, id, Some(at))),
            }
        }
        Ok(self.values)
    }
}

pub(crate) fn node_id(number: Number) -> Result<u64, ParseErrorKind> {
    match number {
        Number::Int(id) if id >= 0 => Ok(id as u64),
        Number::Int(id) => Err(ParseErrorKind::OutOfRange { what: "node id", value: id.to_string() }),
        Number::Float(f) => Err(ParseErrorKind::Invalid(format!("a node id must be an integer, found {f:?}").into())),
    }
}
