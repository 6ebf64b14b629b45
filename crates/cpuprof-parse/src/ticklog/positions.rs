//! Source positions: V8's `script-source` (a script's text) and `code-source-info` (a code
//! object's table from code offsets to script offsets, with the functions inlined into it)
//! records, read as `fixtures/oracle/SPEC.md` §15 says V8 11 writes them; a frame's address
//! placed on the lines of the functions it was running.

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// No inlining id.
const NOT_INLINED: u32 = u32::MAX;

/// A script the log carries.
pub(super) struct ScriptText {
    /// Its name (url or path), as `script-source` gives it.
    pub(super) name: String,
    /// Its text.
    pub(super) text: Arc<str>,
    /// Where its lines end: the UTF-16 index of each line terminator (LF, a CR not followed by
    /// LF, U+2028, U+2029), as V8's `String::CalculateLineEnds`.
    line_ends: Vec<u32>,
    /// Lines before its first (`script-details`, or inferred from a function's named line).
    pub(super) line_offset: Option<i64>,
}

impl ScriptText {
    /// The 1-based line of UTF-16 offset `offset` (the line offset taken as 0 when unknown).
    pub(super) fn line_of(&self, offset: u32) -> u32 {
        let before = self.line_ends.partition_point(|end| *end < offset);
        let line = 1 + self.line_offset.unwrap_or(0) + before as i64;
        u32::try_from(line.max(1)).unwrap_or(u32::MAX)
    }
}

/// A `script-source` record's SOURCE field (or `script-details`' NAME) as the text it stands
/// for: V8 writes a string code unit by code unit, `,` as `\x2C`, `\` as `\\`, LF as `\n`, any
/// other unit up to 0xFF that is not printable ASCII as `\xHH`, and above as `\uHHHH`. A
/// backslash before anything else stays. Returns the text and its UTF-16 units' line ends.
pub(super) fn script_text(name: &str, escaped: &str) -> ScriptText {
    let mut units: Vec<u16> = Vec::with_capacity(escaped.len());
    let bytes = escaped.as_bytes();
    let hex = |s: &[u8]| std::str::from_utf8(s).ok().and_then(|s| u16::from_str_radix(s, 16).ok());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            match bytes.get(i + 1) {
                Some(b'\\') => {
                    units.push(u16::from(b'\\'));
                    i += 2;
                    continue;
                }
                Some(b'n') => {
                    units.push(u16::from(b'\n'));
                    i += 2;
                    continue;
                }
                Some(b'x') => {
                    if let Some(unit) = bytes.get(i + 2..i + 4).and_then(hex) {
                        units.push(unit);
                        i += 4;
                        continue;
                    }
                }
                Some(b'u') => {
                    if let Some(unit) = bytes.get(i + 2..i + 6).and_then(hex) {
                        units.push(unit);
                        i += 6;
                        continue;
                    }
                }
                _ => {}
            }
        }
        // Anything else as it is (the log is UTF-8: a raw non-ASCII character, though V8
        // escapes them, is its UTF-16 units).
        let rest = &escaped[i..];
        let c = rest.chars().next().unwrap_or('\u{fffd}');
        let mut buf = [0u16; 2];
        units.extend_from_slice(c.encode_utf16(&mut buf));
        i += c.len_utf8();
    }
    let mut line_ends = Vec::new();
    for (k, unit) in units.iter().enumerate() {
        let ends = match unit {
            0x0a | 0x2028 | 0x2029 => true,
            0x0d => units.get(k + 1) != Some(&0x0a),
            _ => false,
        };
        if ends {
            line_ends.push(u32::try_from(k).unwrap_or(u32::MAX));
        }
    }
    ScriptText {
        name: name.to_owned(),
        text: Arc::from(String::from_utf16_lossy(&units)),
        line_ends,
        line_offset: None,
    }
}

/// A code object's source positions (`code-source-info`).
pub(super) struct SourceInfo {
    /// The script its own function is in.
    pub(super) script: u32,
    /// Where its function starts in the script (UTF-16 offset).
    pub(super) function_start: u32,
    /// (code offset, script offset, inlining id), in code order.
    positions: Vec<(u32, i64, u32)>,
    /// Inlining id k → (index into `functions`, call-site script offset, parent inlining id).
    inlined: Vec<(Option<u32>, i64, u32)>,
    /// The inlined functions' shared infos.
    pub(super) functions: Vec<u64>,
    /// Each inlined function as its shared info named it when the record was read (later
    /// `sfi-move`s give those addresses to other functions).
    pub(super) named: Vec<Option<SharedFunction>>,
}

/// Where a frame's code offset is, innermost first: each function (`None`: the code's own; else
/// an inlined function, by its index in the record's list) and its script offset (negative:
/// unknown).
pub(super) type Elements = Vec<(Option<u32>, i64)>;

impl SourceInfo {
    /// Parses `code-source-info`'s last five fields: `SCRIPT,FN_START,FN_END,POSITIONS,INLINED,FNS`
    /// (`fields` from SCRIPT on); `None` when malformed.
    pub(super) fn parse(fields: &[&str]) -> Option<SourceInfo> {
        let [script, function_start, _end, positions, inlined, functions] = fields else { return None };
        let script = script.parse().ok()?;
        let function_start = function_start.parse().ok()?;
        let mut table = Vec::new();
        for entry in split_tagged(positions, 'C')? {
            let (code, rest) = entry.split_once('O')?;
            let (offset, inlining) = match rest.split_once('I') {
                Some((o, i)) => (o, i.parse().ok()?),
                None => (rest, NOT_INLINED),
            };
            table.push((code.parse().ok()?, offset.parse().ok()?, inlining));
        }
        let mut inlined_table = Vec::new();
        for entry in split_tagged(inlined, 'F')? {
            let (index, rest) = entry.split_once('O')?;
            let index = if index.is_empty() { None } else { Some(index.parse().ok()?) };
            let (offset, parent) = match rest.split_once('I') {
                Some((o, i)) => (o, i.parse().ok()?),
                None => (rest, NOT_INLINED),
            };
            inlined_table.push((index, offset.parse().ok()?, parent));
        }
        let mut sfis = Vec::new();
        for entry in split_tagged(functions, 'S')? {
            // As C++ prints a pointer: `0x` and hex digits.
            sfis.push(u64::from_str_radix(entry.strip_prefix("0x")?, 16).ok()?);
        }
        Some(SourceInfo {
            script,
            function_start,
            positions: table,
            inlined: inlined_table,
            functions: sfis,
            named: Vec::new(),
        })
    }

    /// The table's entry for code offset `offset`: the last with the greatest code offset at or
    /// below it; `None` before the first (or for an empty table).
    pub(super) fn entry(&self, offset: u64) -> Option<u32> {
        let after = self.positions.partition_point(|(code, _, _)| u64::from(*code) <= offset);
        after.checked_sub(1).map(|i| i as u32)
    }

    /// What entry `entry` says, innermost first; `None` when its inlining chain is broken (an
    /// id with no entry, a cycle). `unroll`: every function; else only the code's own, at its
    /// outermost call site.
    pub(super) fn elements(&self, entry: u32, unroll: bool) -> Option<Elements> {
        let &(_, offset, mut inlining) = self.positions.get(entry as usize)?;
        let mut out: Elements = Vec::new();
        let mut at = offset;
        let mut steps = 0;
        while inlining != NOT_INLINED {
            let &(index, call_site, parent) = self.inlined.get(inlining as usize)?;
            steps += 1;
            if steps > self.inlined.len() {
                return None;
            }
            if unroll {
                // A function that cannot be named is left out: its time goes to its caller.
                if let Some(index) = index.filter(|i| self.named.get(*i as usize).is_some_and(Option::is_some)) {
                    out.push((Some(index), at));
                }
            }
            at = call_site;
            inlining = parent;
        }
        out.push((None, at));
        Some(out)
    }
}

/// `text` cut before each `tag` (`C0O1C5O9` by `C`: `0O1`, `5O9`); `None` when it does not start
/// with one.
fn split_tagged(text: &str, tag: char) -> Option<Vec<&str>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    let rest = text.strip_prefix(tag)?;
    Some(rest.split(tag).collect())
}

/// The scripts and the code objects' positions a log gave.
#[derive(Default)]
pub(super) struct Positions {
    /// By script id.
    pub(super) scripts: FxHashMap<u32, ScriptText>,
    /// `script-details`' line offsets, by script id (they may come before the script's text).
    pub(super) line_offsets: FxHashMap<u32, i64>,
    /// Every code object's info, by index (code entries hold the index).
    pub(super) infos: Vec<SourceInfo>,
    /// The function (its code-creation name) and script of each shared info seen.
    pub(super) functions: FxHashMap<u64, SharedFunction>,
}

/// A function as its shared info names it.
#[derive(Clone, Default)]
pub(super) struct SharedFunction {
    /// Its code-creation name (`name url:line:column`).
    pub(super) name: Option<Arc<str>>,
    /// Its script, from the last `code-source-info` of its code.
    pub(super) script: Option<u32>,
}

impl Positions {
    /// The functions `info`'s shared infos name now, and their scripts: its own code's, else the
    /// one script the log gave the text of by the function's url.
    pub(super) fn name_inlined(&self, info: &mut SourceInfo) {
        info.named = info
            .functions
            .iter()
            .map(|sfi| {
                let mut function = self.functions.get(sfi).cloned()?;
                function.name.as_ref()?;
                if function.script.is_none() {
                    let url = super::names::split_js_name(function.name.as_deref()?).script;
                    let mut same = self.scripts.iter().filter(|(_, s)| !url.is_empty() && s.name == url);
                    if let (Some((id, _)), None) = (same.next(), same.next()) {
                        function.script = Some(*id);
                    }
                }
                Some(function)
            })
            .collect();
    }

    /// The 1-based line of script offset `offset` in script `script`, if the log gave its text.
    pub(super) fn line(&self, script: u32, offset: i64) -> Option<u32> {
        let offset = u32::try_from(offset).ok()?;
        self.scripts.get(&script).map(|s| s.line_of(offset))
    }

    /// Records the line offset of `script` from a function named as starting on `named_line`
    /// at `function_start`, unless one is known.
    pub(super) fn infer_line_offset(&mut self, script: u32, function_start: u32, named_line: u32) {
        let given = self.line_offsets.get(&script).copied();
        if let Some(s) = self.scripts.get_mut(&script) {
            if s.line_offset.is_none() {
                let computed = i64::from(s.line_of(function_start));
                s.line_offset = Some(given.unwrap_or(i64::from(named_line) - computed));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_text_undoes_v8s_escapes_and_finds_its_line_ends() {
        let s = script_text("a.js", r"a\x2Cb\\c\nd\x0d\ne\x0df\u2028g\ud83d\ude80\xe9\q");
        assert_eq!(&*s.text, "a,b\\c\nd\r\ne\rf\u{2028}g🚀é\\q");
        // LF at 5; the CR before an LF ends no line; the LF at 8; the lone CR at 10; U+2028 at 12.
        assert_eq!(s.line_ends, vec![5, 8, 10, 12]);
        assert_eq!((s.line_of(0), s.line_of(5), s.line_of(6), s.line_of(11), s.line_of(13)), (1, 1, 2, 4, 5));
    }

    #[test]
    fn source_info_entries_and_inlining_chains() {
        let info = SourceInfo::parse(&[
            "81",
            "165",
            "257",
            "C0O165C57O204C93O255C123O102I0C130O225I1",
            "F0O225FO300I0",
            "S0x10",
        ])
        .unwrap();
        assert_eq!(
            (info.entry(0), info.entry(56), info.entry(57), info.entry(1000)),
            (Some(0), Some(0), Some(1), Some(4))
        );
        assert_eq!(info.functions, vec![0x10]);
        let mut info = info;
        info.named = vec![Some(SharedFunction { name: Some("square a.js:1:1".into()), script: None })];
        assert_eq!(info.elements(1, true), Some(vec![(None, 204)]));
        // Entry 3: inlined function 0 called at 225 of the code's own.
        assert_eq!(info.elements(3, true), Some(vec![(Some(0), 102), (None, 225)]));
        assert_eq!(info.elements(3, false), Some(vec![(None, 225)]));
        // Entry 4: inlining 1 has no function index: left out; its caller, inlining 0, at 300.
        assert_eq!(info.elements(4, true), Some(vec![(Some(0), 300), (None, 225)]));
        // A function its shared info did not name is left out too.
        info.named = vec![None];
        assert_eq!(info.elements(3, true), Some(vec![(None, 225)]));
        let empty = SourceInfo::parse(&["1", "0", "9", "", "", ""]).unwrap();
        assert_eq!(empty.entry(5), None);
        assert!(SourceInfo::parse(&["1", "0", "9", "X1", "", ""]).is_none());
        let mut cycle = SourceInfo::parse(&["1", "0", "9", "C0O1I0", "F0O5I0", "S0x1"]).unwrap();
        cycle.named = vec![Some(SharedFunction::default())];
        assert_eq!(cycle.elements(0, true), None);
    }
}
