//! ELF function symbols for cpuprof: which function of an executable or shared library
//! holds an address.
//!
//! Depends on nothing else in the workspace. A [`SymbolFile`] reads only the headers, the
//! notes and the symbol tables of a file (`.symtab` and `.dynsym`, never truncated), keeps
//! the code symbols sorted by address and demangles a name only when asked for it, so a
//! 100 MB `node` binary costs what its symbol tables cost.
//!
//! Addresses come in two spaces. A *file address* is what the symbol table says (`nm`).
//! A *runtime address* is where the code ran. V8 logs each mapping as
//! `start = mapping address − file offset`; [`SymbolFile::bias`] turns that into the
//! difference between the two, correctly for non-PIE executables (`ET_EXEC`, bias 0) and
//! for PIE executables and shared libraries (`ET_DYN`) alike.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

use std::path::{Path, PathBuf};

use std::fs::File;

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader, Sym};
use object::read::ReadCache;
use object::{Endianness, FileKind, SectionIndex};

/// Why a file's symbols could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SymbolError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The file is not an object file this crate understands.
    #[error("{path} is not a readable ELF file: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What the object reader said.
        message: String,
    },
}

/// One function symbol: `[start, end)` in file addresses.
#[derive(Clone, Copy, Debug)]
struct Symbol {
    start: u64,
    end: u64,
    name_start: u32,
    name_len: u32,
    /// Index in [`SymbolFile::alternatives`] when other names share the address, or `u32::MAX`.
    alternatives: u32,
}

/// A symbol table entry before one name per address is chosen.
struct Candidate<'a> {
    start: u64,
    size: u64,
    rank: u8,
    name: &'a [u8],
}

/// A loadable segment, as needed to relate runtime and file addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// File address of the segment.
    pub address: u64,
    /// Size in memory.
    pub size: u64,
    /// Offset of the segment's bytes in the file.
    pub offset: u64,
    /// True for an executable segment.
    pub executable: bool,
}

/// The code symbols of one ELF file.
#[derive(Debug)]
pub struct SymbolFile {
    path: PathBuf,
    position_independent: bool,
    build_id: Option<Vec<u8>>,
    segments: Vec<Segment>,
    symbols: Vec<Symbol>,
    names: Vec<u8>,
    /// Name ranges of symbols that share their address, size and binding with another name.
    alternatives: Vec<Vec<(u32, u32)>>,
}

/// Index of a symbol in a [`SymbolFile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymbolId(u32);

impl SymbolId {
    /// The position of the symbol in address order.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

const PAGE: u64 = 4096;

impl SymbolFile {
    /// Reads the symbol tables of the ELF file at `path`: its headers, symbol tables and
    /// their string tables, and nothing else of it.
    pub fn open(path: &Path) -> Result<SymbolFile, SymbolError> {
        let format = |message: String| SymbolError::Format { path: path.to_owned(), message };
        // A log names the files; a FIFO or a device there must not block or flood the reader.
        let metadata = std::fs::metadata(path).map_err(|source| SymbolError::Io { path: path.to_owned(), source })?;
        if !metadata.is_file() {
            return Err(format("not a regular file".to_owned()));
        }
        let file = File::open(path).map_err(|source| SymbolError::Io { path: path.to_owned(), source })?;
        let data = ReadCache::new(file);
        match FileKind::parse(&data) {
            Ok(FileKind::Elf64) => read_elf::<elf::FileHeader64<Endianness>>(path, &data),
            Ok(FileKind::Elf32) => read_elf::<elf::FileHeader32<Endianness>>(path, &data),
            Ok(kind) => Err(format(format!("{kind:?}, not ELF"))),
            Err(e) => Err(format(e.to_string())),
        }
    }

    fn from_candidates(
        path: &Path,
        position_independent: bool,
        build_id: Option<Vec<u8>>,
        segments: Vec<Segment>,
        mut candidates: Vec<Candidate<'_>>,
    ) -> SymbolFile {
        // Symbols without a size are assembler labels, mostly inside sized functions
        // (`_shaext_shortcut`): giving them a range would cut their function in two.
        candidates.retain(|c| c.size > 0);
        candidates.sort_unstable_by(|a, b| {
            a.start.cmp(&b.start).then(a.rank.cmp(&b.rank)).then(a.size.cmp(&b.size)).then_with(|| a.name.cmp(b.name))
        });
        let mut names = Vec::new();
        let mut symbols: Vec<Symbol> = Vec::with_capacity(candidates.len());
        let mut self_alternatives: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut i = 0;
        while i < candidates.len() {
            // At one address keep one name, whatever order the tables list them in: global
            // (or weak) before local, then the smaller size, then the first demangled name.
            let first = &candidates[i];
            let mut end = i + 1;
            while end < candidates.len() && candidates[end].start == first.start {
                end += 1;
            }
            let tied = &candidates[i..end];
            let tied = &tied[..tied.iter().take_while(|c| c.rank == first.rank && c.size == first.size).count()];
            let push_name = |names: &mut Vec<u8>, name: &[u8]| {
                let range = (names.len() as u32, name.len() as u32);
                names.extend_from_slice(name);
                range
            };
            let (name_start, name_len) = push_name(&mut names, first.name);
            // The same symbol is usually in both tables; real alternatives (aliases, folded
            // functions) are told apart by demangled name, but only once one is looked up.
            let mut alternatives = u32::MAX;
            let mut others: Vec<(u32, u32)> = Vec::new();
            for c in &tied[1..] {
                if c.name != first.name && others.iter().all(|(s, l)| &names[*s as usize..(*s + *l) as usize] != c.name)
                {
                    others.push(push_name(&mut names, c.name));
                }
            }
            if !others.is_empty() {
                alternatives = self_alternatives.len() as u32;
                others.insert(0, (name_start, name_len));
                self_alternatives.push(others);
            }
            symbols.push(Symbol {
                start: first.start,
                end: first.start.saturating_add(first.size),
                name_start,
                name_len,
                alternatives,
            });
            i = end;
        }
        SymbolFile {
            path: path.to_owned(),
            position_independent,
            build_id,
            segments,
            symbols,
            names,
            alternatives: self_alternatives,
        }
    }

    /// The file this was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The GNU build id, if the file has one.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.as_deref()
    }

    /// The build id as lowercase hex, as `readelf -n` and `file` print it.
    pub fn build_id_hex(&self) -> Option<String> {
        use std::fmt::Write;
        self.build_id().map(|id| {
            id.iter().fold(String::with_capacity(id.len() * 2), |mut hex, b| {
                let _ = write!(hex, "{b:02x}");
                hex
            })
        })
    }

    /// Number of code symbols.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// True when the file has no code symbols (stripped).
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The loadable segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// True for `ET_DYN` files (shared libraries, PIE executables).
    pub fn is_position_independent(&self) -> bool {
        self.position_independent
    }

    /// runtime address − file address, for a mapping V8 logged as `start` (= mapping
    /// address − file offset). 0 for a non-PIE executable at its link address; the same
    /// rule also places a second mapping of it (V8's remapped builtins in a worker's log).
    pub fn bias(&self, logged_start: u64) -> u64 {
        // For a segment at (address, offset), logged start = bias + address − offset.
        let delta = self
            .segments
            .iter()
            .find(|s| s.executable)
            .or_else(|| self.segments.first())
            .map_or(0, |s| (s.address & !(PAGE - 1)).wrapping_sub(s.offset & !(PAGE - 1)));
        logged_start.wrapping_sub(delta)
    }

    /// True when a logged mapping `[start, end)` fits this file's layout: `end` must be the
    /// page-rounded end of one of its segments. A different build of the same path almost
    /// never passes, so this catches "the binary was upgraded since the log was written"
    /// where no build id was logged.
    pub fn fits_mapping(&self, start: u64, end: u64) -> bool {
        let bias = self.bias(start);
        let file_end = end.wrapping_sub(bias);
        self.segments.iter().any(|s| s.address.saturating_add(s.size).next_multiple_of(PAGE) == file_end)
    }

    /// The symbol that covers file address `address`.
    pub fn lookup(&self, address: u64) -> Option<SymbolId> {
        let i = self.symbols.partition_point(|s| s.start <= address).checked_sub(1)?;
        (address < self.symbols[i].end).then_some(SymbolId(i as u32))
    }

    /// The symbol that covers file address `address`, and the file addresses `[start, end)`
    /// around it that [`lookup`](Self::lookup) maps to that same symbol.
    pub fn lookup_range(&self, address: u64) -> Option<(SymbolId, (u64, u64))> {
        let id = self.lookup(address)?;
        let s = &self.symbols[id.index()];
        let next = self.symbols.get(id.index() + 1).map_or(u64::MAX, |n| n.start);
        Some((id, (s.start, s.end.min(next))))
    }

    /// `[start, end)` of a symbol, in file addresses.
    pub fn range(&self, id: SymbolId) -> (u64, u64) {
        let s = &self.symbols[id.index()];
        (s.start, s.end)
    }

    fn text(&self, (start, len): (u32, u32)) -> String {
        String::from_utf8_lossy(&self.names[start as usize..(start + len) as usize]).into_owned()
    }

    /// `(mangled, demangled)` name of a symbol. Where several names share its address, size
    /// and binding, the first by demangled name (then by mangled name), so the choice never
    /// depends on the order of the tables.
    fn names_of(&self, id: SymbolId) -> (String, String) {
        let s = &self.symbols[id.index()];
        let Some(alternatives) = self.alternatives.get(s.alternatives as usize) else {
            let raw = self.text((s.name_start, s.name_len));
            let demangled = demangle(&raw);
            return (raw, demangled);
        };
        alternatives
            .iter()
            .map(|range| {
                let raw = self.text(*range);
                let demangled = demangle(&raw);
                (raw, demangled)
            })
            .min_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)))
            .unwrap_or_default()
    }

    /// The symbol's name as the file has it (mangled), lossily decoded.
    pub fn raw_name(&self, id: SymbolId) -> String {
        self.names_of(id).0
    }

    /// The symbol's name demangled (C++ with parameters, or Rust), or as it is when it is
    /// not mangled.
    pub fn name(&self, id: SymbolId) -> String {
        self.names_of(id).1
    }
}

fn read_elf<Elf: FileHeader<Endian = Endianness>>(
    path: &Path,
    data: &ReadCache<File>,
) -> Result<SymbolFile, SymbolError> {
    let format = |e: object::Error| SymbolError::Format { path: path.to_owned(), message: e.to_string() };
    let header = Elf::parse(data).map_err(format)?;
    let endian = header.endian().map_err(format)?;
    let position_independent = header.e_type(endian) != elf::ET_EXEC;
    let segments = header
        .program_headers(endian, data)
        .map_err(format)?
        .iter()
        .filter(|p| p.p_type(endian) == elf::PT_LOAD)
        .map(|p| Segment {
            address: p.p_vaddr(endian).into(),
            size: p.p_memsz(endian).into(),
            offset: p.p_offset(endian).into(),
            executable: p.p_flags(endian).contains(elf::PF_X),
        })
        .collect();
    let sections = header.sections(endian, data).map_err(format)?;
    let mut build_id = None;
    for section in sections.iter() {
        if let Ok(Some(mut notes)) = section.notes(endian, data) {
            while let Ok(Some(note)) = notes.next() {
                if note.name() == b"GNU" && note.n_type(endian) == elf::NT_GNU_BUILD_ID {
                    build_id = Some(note.desc().to_vec());
                }
            }
        }
    }
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    for table_type in [elf::SHT_SYMTAB, elf::SHT_DYNSYM] {
        let table = sections.symbols(endian, data, table_type).map_err(format)?;
        if table.is_empty() {
            continue;
        }
        // One read of the whole string table, rather than one per name.
        let strings = sections.section(table.string_section()).and_then(|s| s.data(endian, data)).map_err(format)?;
        for symbol in table.symbols() {
            // What `nm --defined-only` shows as t, T, w, W or i: anything defined in code.
            let kind = symbol.st_type();
            if kind == elf::STT_SECTION || kind == elf::STT_FILE || kind == elf::STT_TLS {
                continue;
            }
            let Some(index) = symbol.st_shndx(endian).index() else { continue };
            let Ok(section) = sections.section(SectionIndex(usize::from(index))) else { continue };
            if !section.sh_flags(endian).contains(elf::SHF_EXECINSTR) {
                continue;
            }
            let Some(tail) = strings.get(symbol.st_name(endian) as usize..) else { continue };
            let name = &tail[..tail.iter().position(|b| *b == 0).unwrap_or(tail.len())];
            if name.is_empty() || name.starts_with(b"$") {
                continue; // mapping symbols and the like
            }
            let bind = symbol.st_bind();
            candidates.push(Candidate {
                start: symbol.st_value(endian).into(),
                size: symbol.st_size(endian).into(),
                // Global and weak symbols name a function better than local ones.
                rank: u8::from(!(bind == elf::STB_GLOBAL || bind == elf::STB_WEAK)),
                name,
            });
        }
    }
    Ok(SymbolFile::from_candidates(path, position_independent, build_id, segments, candidates))
}

/// `_ZN2v88internal7Isolate4InitEv` → `v8::internal::Isolate::Init()`; anything that is not a
/// mangled name comes back unchanged.
pub fn demangle(name: &str) -> String {
    if !(name.starts_with("_Z") || name.starts_with("_R") || name.starts_with("__Z")) {
        return name.to_owned();
    }
    // Thunks are spelled as binutils (`nm -C`, `c++filt`) and libstdc++ spell them, which is
    // what people search for; the demangler has its own notation for them.
    let demangled = match thunk(name) {
        Some((kind, target)) => format!("{kind} to {}", symbolic_demangle::demangle(&format!("_Z{target}"))),
        None => symbolic_demangle::demangle(name).into_owned(),
    };
    integer_literals(&demangled)
}

/// Integer template arguments as binutils writes them: `(unsigned long)16` → `16ul`.
fn integer_literals(text: &str) -> String {
    const SUFFIXES: [(&str, &str); 6] = [
        ("(unsigned long long)", "ull"),
        ("(long long)", "ll"),
        ("(unsigned long)", "ul"),
        ("(unsigned int)", "u"),
        ("(long)", "l"),
        ("(int)", ""),
    ];
    if !text.contains(')') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while let Some(open) = rest.find('(') {
        for (cast, suffix) in SUFFIXES {
            if let Some(after) = rest[open..].strip_prefix(cast) {
                let sign = usize::from(after.starts_with('-'));
                let digits = after[sign..].bytes().take_while(u8::is_ascii_digit).count();
                if digits > 0 {
                    out.push_str(&rest[..open]);
                    out.push_str(&after[..sign + digits]);
                    out.push_str(suffix);
                    rest = &after[sign + digits..];
                    continue 'scan;
                }
            }
        }
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
    }
    out.push_str(rest);
    out
}

/// `_ZThn8_N…` → ("non-virtual thunk", "N…"): the special names of the Itanium ABI's thunks.
fn thunk(name: &str) -> Option<(&'static str, &str)> {
    let rest = name.strip_prefix("_ZT")?;
    let (kind, offsets, rest) = match rest.as_bytes().first()? {
        b'h' => ("non-virtual thunk", 1, rest),
        b'v' => ("virtual thunk", 1, rest),
        b'c' => ("covariant return thunk", 2, &rest[1..]),
        _ => return None,
    };
    let mut rest = rest;
    for _ in 0..offsets {
        rest = call_offset(rest)?;
    }
    Some((kind, rest))
}

/// Skips one `h <number> _` or `v <number> _ <number> _`.
fn call_offset(s: &str) -> Option<&str> {
    let (numbers, rest) = match s.as_bytes().first()? {
        b'h' => (1, &s[1..]),
        b'v' => (2, &s[1..]),
        _ => return None,
    };
    let mut rest = rest;
    for _ in 0..numbers {
        let body = rest.strip_prefix('n').unwrap_or(rest);
        let digits = body.bytes().take_while(u8::is_ascii_digit).count();
        rest = body.get(digits..)?.strip_prefix('_').filter(|_| digits > 0)?;
    }
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(symbols: &[(u64, u64, &str)]) -> SymbolFile {
        let candidates =
            symbols.iter().map(|(a, s, n)| Candidate { start: *a, size: *s, rank: 0, name: n.as_bytes() }).collect();
        SymbolFile::from_candidates(Path::new("/x"), false, None, Vec::new(), candidates)
    }

    #[test]
    fn lookup_uses_sizes_and_skips_labels() {
        let f = file(&[(0x100, 0x10, "a"), (0x104, 0, "label"), (0x200, 0, "b"), (0x300, 0x8, "c")]);
        assert_eq!(f.lookup(0x100).map(|i| f.raw_name(i)), Some("a".into()));
        assert_eq!(f.lookup(0x10f).map(|i| f.raw_name(i)), Some("a".into()));
        assert_eq!(f.lookup(0x110), None);
        assert_eq!(f.lookup(0x2ff), None);
        assert_eq!(f.lookup(0x307).map(|i| f.raw_name(i)), Some("c".into()));
        assert_eq!(f.lookup(0x308), None);
        assert_eq!(f.lookup(0xff), None);
    }

    #[test]
    fn one_name_per_address() {
        let f = file(&[(0x100, 0x20, "big"), (0x100, 0x10, "b"), (0x100, 0x10, "a")]);
        assert_eq!(f.len(), 1);
        assert_eq!(f.raw_name(SymbolId(0)), "a");
        assert_eq!(f.range(SymbolId(0)), (0x100, 0x110));
    }

    #[test]
    fn demangles_cpp_and_keeps_c() {
        assert_eq!(demangle("_ZN2v88internal7Isolate4InitEv"), "v8::internal::Isolate::Init()");
        assert_eq!(demangle("sha512_block_data_order_avx2"), "sha512_block_data_order_avx2");
        assert_eq!(
            demangle("_ZThn8_N2v88internal7Isolate4InitEv"),
            "non-virtual thunk to v8::internal::Isolate::Init()"
        );
        assert_eq!(
            demangle("_ZTv0_n24_N2v88internal7Isolate4InitEv"),
            "virtual thunk to v8::internal::Isolate::Init()"
        );
        assert_eq!(demangle("_ZThx"), symbolic_demangle::demangle("_ZThx"));
        assert_eq!(integer_literals("f<(unsigned long)16, (int)-3, (bool)1>(int)"), "f<16ul, -3, (bool)1>(int)");
    }
}
