//! What code lives where: V8's dynamic code (JIT code, bytecode, builtins, regexps) as an
//! interval map, and the shared libraries with their ELF symbols.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use cpuprof_model::{FrameId, FuncKind, Tier};
use cpuprof_symbols::{SymbolError, SymbolFile, SymbolId};
use rustc_hash::FxHashMap;

/// What a code object is, as far as stacks care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Code {
    /// A JavaScript function (any tier), eval code or a script.
    Js,
    /// A builtin.
    Builtin,
    /// An interpreter bytecode handler: skipped in stacks, so that interpreted time lands on
    /// the JavaScript function whose bytecode is running (the next frame).
    BytecodeHandler,
    /// A regular expression or anything else V8 compiled.
    Other,
}

/// A code object in the map. It is named (its function and frame made) only when a tick first
/// lands in it: most code V8 creates is replaced, moved away or deleted unseen, and what the
/// profile keeps must grow with the code that ran, not with the log.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) size: u64,
    pub(super) code: Code,
    pub(super) name: Name,
    /// Its source positions (an index into [`super::positions::Positions::infos`]), when the
    /// log gave them; they move with it.
    pub(super) info: Option<u32>,
    /// Whether it is a bytecode array (`~`): its frames' addresses are bytecode offsets, not
    /// return addresses.
    pub(super) bytecode: bool,
    /// Its function's shared info (0: none).
    pub(super) sfi: u64,
    /// Its code object in the JIT record (an index into [`super::jit::JitLog::code`]), when
    /// that is kept.
    pub(super) jit: Option<u32>,
}

/// How a code object is named: its text until a tick needs it, then its frame.
#[derive(Clone, Debug)]
pub(super) enum Name {
    /// A function of this kind named `text` (`file`, line and column empty).
    Plain {
        text: Box<str>,
        kind: FuncKind,
    },
    /// A JavaScript function: `text` is `fn script:line:col`, `tier` the tier its code
    /// runs in (kept only when tiers are kept apart).
    Js {
        text: Box<str>,
        tier: Option<Tier>,
    },
    Frame(FrameId),
}

/// V8's code events replayed with the tick processor's rules: new code replaces whatever it
/// overlaps; a move takes the code (and its size) to the new address and again replaces what
/// it overlaps there.
#[derive(Debug, Default)]
pub(super) struct DynamicCode {
    map: BTreeMap<u64, Entry>,
    /// `[start, end)` of the builtins and bytecode handlers: V8's embedded blob.
    blob: Option<(u64, u64)>,
}

/// `[start, end)` of addresses whose code changed.
pub(super) type Span = (u64, u64);

fn union(a: Span, b: Span) -> Span {
    (a.0.min(b.0), a.1.max(b.1))
}

impl DynamicCode {
    /// Adds code; returns the span of addresses whose meaning changed, and whether code that
    /// was there went (new code in fresh memory, the usual case, changes no address that
    /// resolved to code before).
    pub(super) fn add(&mut self, start: u64, entry: Entry) -> (Span, bool) {
        let end = start.saturating_add(entry.size);
        let removed = self.remove_overlapping(start, end);
        if matches!(entry.code, Code::Builtin | Code::BytecodeHandler) {
            self.blob = Some(self.blob.map_or((start, end), |b| union(b, (start, end))));
        }
        self.map.insert(start, entry);
        (removed.map_or((start, end), |r| union(r, (start, end))), removed.is_some())
    }

    /// Moves the code at `from`; `None` when no code starts there.
    pub(super) fn move_code(&mut self, from: u64, to: u64) -> Option<[Span; 2]> {
        let entry = self.map.remove(&from)?;
        let size = entry.size;
        let end = to.saturating_add(size);
        let removed = self.remove_overlapping(to, end);
        self.map.insert(to, entry);
        Some([(from, from.saturating_add(size)), removed.map_or((to, end), |r| union(r, (to, end)))])
    }

    /// Deletes the code at `start`; `None` when no code starts there.
    pub(super) fn delete(&mut self, start: u64) -> Option<Span> {
        let entry = self.map.remove(&start)?;
        Some((start, start.saturating_add(entry.size)))
    }

    /// The code that covers `address`, and where it starts.
    pub(super) fn find(&mut self, address: u64) -> Option<(u64, &mut Entry)> {
        let (start, entry) = self.map.range_mut(..=address).next_back()?;
        (address < start.saturating_add(entry.size)).then_some((*start, entry))
    }

    /// How many code objects the map holds.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    pub(super) fn blob(&self) -> Option<(u64, u64)> {
        self.blob
    }

    /// The addresses around `address` (which no code covers) that no code covers either: from
    /// the end of the code below it to the start of the code above it.
    pub(super) fn gap(&self, address: u64) -> Span {
        use std::ops::Bound::{Excluded, Unbounded};
        let below = self.map.range(..=address).next_back().map_or(0, |(k, e)| k.saturating_add(e.size).min(address));
        let above = self.map.range((Excluded(address), Unbounded)).next().map_or(u64::MAX, |(k, _)| *k);
        (below, above)
    }

    /// Removes the entries overlapping `[start, end)`; returns the span they covered.
    fn remove_overlapping(&mut self, start: u64, end: u64) -> Option<Span> {
        // Entries never overlap each other, so walking down from `end` can stop at the first
        // one that ends at or before `start`.
        let mut span: Option<Span> = None;
        // Empty new code still takes the place of code that starts where it does.
        let end = end.max(start.saturating_add(1));
        while let Some((k, e)) = self
            .map
            .range(..end)
            .next_back()
            .filter(|(k, e)| **k >= start || k.saturating_add(e.size) > start)
            .map(|(k, e)| (*k, k.saturating_add(e.size)))
        {
            self.map.remove(&k);
            span = Some(span.map_or((k, e), |s| union(s, (k, e))));
        }
        span
    }
}

/// The symbols of one library file, read on a background thread as soon as the log names it.
enum Symbols {
    Loading(JoinHandle<Result<SymbolFile, SymbolError>>),
    /// To be read when first needed.
    Later(PathBuf),
    Read(Result<SymbolFile, SymbolError>),
    Ready(Option<Arc<SymbolFile>>),
}

/// Libraries whose symbols are read ahead, each on its own thread.
const EAGER_LIBRARIES: usize = 32;

/// Why a library's frames are labelled with its name only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum NoSymbols {
    /// A pseudo-file like `[vdso]`.
    Virtual,
    /// The file could not be read.
    Unreadable(String),
    /// The file on disk is not the one that was mapped.
    Different { build_id: Option<String> },
    /// The file has no code symbols (stripped).
    Stripped,
}

pub(super) struct Library {
    pub(super) path: String,
    /// The logged start of the first mapping: where the builtins' code-creation addresses are.
    primary_start: u64,
    /// Every logged `[start, end)` of this path.
    mappings: Vec<(u64, u64)>,
    symbols: Symbols,
    pub(super) missing: Option<NoSymbols>,
    /// The file's GNU build id, once its symbols are read.
    pub(super) build_id: Option<String>,
    pub(super) frames: FxHashMap<SymbolId, FrameId>,
    pub(super) own_frame: Option<FrameId>,
}

impl Library {
    /// Whether its symbols were read (and fit it): only then can they be said to cover none of
    /// its ticks.
    pub(super) fn has_symbols(&self) -> bool {
        matches!(self.symbols, Symbols::Ready(Some(_)))
    }

    pub(super) fn symbols(&mut self) -> Option<Arc<SymbolFile>> {
        if !matches!(self.symbols, Symbols::Ready(_)) {
            let read = match std::mem::replace(&mut self.symbols, Symbols::Ready(None)) {
                Symbols::Loading(handle) => handle.join().ok(),
                Symbols::Later(path) => Some(SymbolFile::open(&path)),
                Symbols::Read(read) => Some(read),
                Symbols::Ready(_) => None,
            };
            if let Some(Ok(file)) = &read {
                self.build_id = file.build_id_hex();
            }
            let loaded = match read {
                Some(Ok(file)) if file.is_empty() => Err(NoSymbols::Stripped),
                Some(Ok(file)) if !self.mappings.iter().any(|(s, e)| file.fits_mapping(*s, *e)) => {
                    Err(NoSymbols::Different { build_id: file.build_id_hex() })
                }
                Some(Ok(file)) => Ok(Arc::new(file)),
                Some(Err(e)) => Err(NoSymbols::Unreadable(e.to_string())),
                None => Err(NoSymbols::Unreadable("the symbol reader failed".to_owned())),
            };
            match loaded {
                Ok(file) => self.symbols = Symbols::Ready(Some(file)),
                Err(why) => self.missing = Some(why),
            }
        }
        match &self.symbols {
            Symbols::Ready(file) => file.clone(),
            Symbols::Loading(_) | Symbols::Later(_) | Symbols::Read(_) => None,
        }
    }
}

/// Where the logged absolute `path` is in a copy of the recording machine's files at `root`.
/// `..` is resolved as the kernel did when the file was mapped (`/..` is `/`), so no path in a
/// log can name a file outside `root`.
fn under_root(root: &Path, path: &str) -> PathBuf {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::ParentDir => {
                parts.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    let mut file = root.to_path_buf();
    file.extend(parts);
    file
}

/// Where an address is in the libraries.
#[derive(Clone, Copy, Debug)]
pub(super) struct Hit {
    pub(super) library: usize,
    /// The logged start of the mapping that holds the address.
    pub(super) mapping_start: u64,
}

#[derive(Default)]
pub(super) struct Libraries {
    pub(super) all: Vec<Library>,
    /// Index of each path in `all`.
    by_path: FxHashMap<String, usize>,
    /// `(start, end, library)` sorted by start.
    ranges: Vec<(u64, u64, usize)>,
    root: Option<PathBuf>,
}

impl Libraries {
    pub(super) fn new(root: Option<PathBuf>) -> Self {
        Self { root, ..Self::default() }
    }

    /// A `shared-library` line. V8 logs every mapping of a file with start = mapping address −
    /// file offset, so one file's mappings share a start; they are merged into one range.
    pub(super) fn add(&mut self, path: &str, start: u64, end: u64) {
        let library = if let Some(i) = self.by_path.get(path) {
            *i
        } else {
            self.by_path.insert(path.to_owned(), self.all.len());
            self.all.push(Library {
                path: path.to_owned(),
                primary_start: start,
                mappings: Vec::new(),
                symbols: self.load(path),
                missing: path.starts_with('[').then_some(NoSymbols::Virtual),
                build_id: None,
                frames: FxHashMap::default(),
                own_frame: None,
            });
            self.all.len() - 1
        };
        self.all[library].mappings.push((start, end));
        let at = self.ranges.partition_point(|(s, _, l)| (*s, *l) < (start, library));
        match self.ranges.get_mut(at) {
            Some(range) if range.0 == start && range.2 == library => range.1 = range.1.max(end),
            _ => self.ranges.insert(at, (start, end, library)),
        }
    }

    fn load(&self, path: &str) -> Symbols {
        if path.starts_with('[') || !path.starts_with('/') {
            return Symbols::Ready(None);
        }
        let file = match &self.root {
            Some(root) => under_root(root, path),
            None => PathBuf::from(path),
        };
        // A process maps a few dozen files; past that, read them only when a tick needs one.
        if self.all.len() >= EAGER_LIBRARIES {
            return Symbols::Later(file);
        }
        let in_thread = file.clone();
        match std::thread::Builder::new().name("symbols".into()).spawn(move || SymbolFile::open(&in_thread)) {
            Ok(handle) => Symbols::Loading(handle),
            // No thread to spare: read them right here.
            Err(_) => Symbols::Read(SymbolFile::open(&file)),
        }
    }

    /// Whether any library mapping overlaps `[start, end)`.
    pub(super) fn overlap(&self, (start, end): Span) -> bool {
        self.find(start).is_some() || {
            let i = self.ranges.partition_point(|(s, _, _)| *s < start);
            self.ranges.get(i).is_some_and(|(s, _, _)| *s < end)
        }
    }

    /// The addresses around `address` that [`Self::find`] answers as it does `address`: within
    /// its mapping and below the next one's start, or between two mappings.
    pub(super) fn around(&self, address: u64) -> Span {
        let next = self.ranges.partition_point(|(s, _, _)| *s <= address);
        let above = self.ranges.get(next).map_or(u64::MAX, |(s, _, _)| *s);
        match next.checked_sub(1).map(|i| self.ranges[i]) {
            Some((start, end, _)) if address < end => (start, end.min(above)),
            Some((_, end, _)) => (end, above),
            None => (0, above),
        }
    }

    pub(super) fn find(&self, address: u64) -> Option<Hit> {
        let i = self.ranges.partition_point(|(s, _, _)| *s <= address).checked_sub(1)?;
        let (start, end, library) = self.ranges[i];
        (address < end).then_some(Hit { library, mapping_start: start })
    }

    /// The logged start of the library's first mapping.
    pub(super) fn primary_start(&self, library: usize) -> u64 {
        self.all[library].primary_start
    }

    /// `[start, end)` of the library's first mapping (its logged segments merged).
    pub(super) fn primary_range(&self, library: usize) -> (u64, u64) {
        let library = &self.all[library];
        let start = library.primary_start;
        let end = library.mappings.iter().filter(|(s, _)| *s == start).map(|(_, e)| *e).max().unwrap_or(start);
        (start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(size: u64, n: usize) -> Entry {
        Entry { size, code: Code::Js, name: Name::Frame(frame(n)), info: None, bytecode: false, sfi: 0, jit: None }
    }

    /// Frame `n` of a profile with frames 0..=n (only the builder makes ids).
    fn frame(n: usize) -> FrameId {
        use cpuprof_model::{Frame, Func, ProfileBuilder, SourceFormat, StrId};
        let mut b = ProfileBuilder::new(SourceFormat::TickLog, Vec::new());
        let frames = (0..=n).map(|i| {
            let func = Func {
                name: StrId::EMPTY,
                file: StrId::EMPTY,
                line: Some(i as u32),
                column: None,
                kind: FuncKind::Js,
                tier: None,
                library: None,
            };
            let func = b.func(func);
            b.frame(Frame { func, line: None, column: None })
        });
        frames.last().expect("n + 1 frames")
    }

    fn frame_at(code: &mut DynamicCode, address: u64) -> Option<usize> {
        match code.find(address)?.1.name {
            Name::Frame(frame) => Some(frame.index()),
            _ => None,
        }
    }

    #[test]
    fn overlapping_code_is_replaced() {
        let mut code = DynamicCode::default();
        code.add(100, entry(10, 1));
        code.add(110, entry(10, 2));
        assert_eq!(code.add(105, entry(10, 3)), ((100, 120), true)); // overlaps both
        assert!(frame_at(&mut code, 100).is_none());
        assert_eq!(frame_at(&mut code, 105), Some(3));
        assert_eq!(frame_at(&mut code, 114), Some(3));
        assert!(frame_at(&mut code, 115).is_none());
        assert!(frame_at(&mut code, 99).is_none());
    }

    #[test]
    fn moves_chain_and_replace() {
        let mut code = DynamicCode::default();
        code.add(100, entry(10, 1));
        code.add(300, entry(50, 2));
        assert_eq!(code.move_code(100, 200), Some([(100, 110), (200, 210)]));
        // A chain, landing inside entry 2, which goes.
        assert_eq!(code.move_code(200, 310), Some([(200, 210), (300, 350)]));
        assert!(code.move_code(100, 400).is_none());
        assert!(frame_at(&mut code, 300).is_none());
        assert_eq!(frame_at(&mut code, 319), Some(1));
        assert!(frame_at(&mut code, 320).is_none());
        assert_eq!(code.delete(310), Some((310, 320)));
        assert!(code.delete(310).is_none());
    }

    #[test]
    fn code_replaced_moved_or_deleted_leaves_the_map() {
        let mut code = DynamicCode::default();
        for i in 0..10_000 {
            let name = Name::Js { text: format!("f{i} /a.js:1:1").into(), tier: None };
            code.add(
                0x1000 + (i % 8) * 0x100,
                Entry { size: 0x100, code: Code::Js, name, info: None, bytecode: false, sfi: 0, jit: None },
            );
            code.add(0x10_0000 + i * 0x10, entry(0x10, 1));
            code.move_code(0x10_0000 + i * 0x10, 0x20_0000 + i * 0x10);
            code.delete(0x20_0000 + i * 0x10);
        }
        assert_eq!(code.len(), 8);
        assert!(matches!(&code.find(0x1000).unwrap().1.name, Name::Js { text, .. } if &**text == "f9992 /a.js:1:1"));
    }

    #[test]
    fn logged_paths_stay_under_the_symbols_folder() {
        let root = Path::new("/sym");
        for (logged, expected) in [
            ("/usr/bin/node", "/sym/usr/bin/node"),
            ("/../../etc/passwd", "/sym/etc/passwd"),
            ("/usr/lib/../../../../etc/x", "/sym/etc/x"),
            ("/usr/./lib//libc.so.6", "/sym/usr/lib/libc.so.6"),
            ("/a/b/..", "/sym/a"),
            ("/..", "/sym"),
        ] {
            assert_eq!(under_root(root, logged), Path::new(expected), "{logged}");
        }
    }

    #[test]
    fn libraries_merge_mappings_of_one_file() {
        let mut libs = Libraries::new(None);
        libs.add("[vdso]", 0x7000, 0x8000);
        libs.add("[vdso]", 0x7000, 0x9000);
        assert_eq!(libs.all.len(), 1);
        assert!(libs.find(0x8800).is_some());
        assert!(libs.find(0x9000).is_none());
        assert!(libs.find(0x6fff).is_none());
    }
}
