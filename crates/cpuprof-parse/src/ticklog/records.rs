//! Records: every line but ticks, replayed in file order. Library and code events update
//! the code map; the rest are facts about the log (version, interval) or skipped with a note.

use cpuprof_model::{FuncKind, Tier};

use super::codemap::{Code, Entry, Name};
use super::names::{split_quoted, unescape};
use super::Decoder;

/// Why a line was skipped, with the first line it happened on.
#[derive(Default)]
pub(super) struct Skipped {
    pub(super) count: u64,
    pub(super) first: Option<(u64, String)>,
}

impl Skipped {
    pub(super) fn note(&mut self, line: u64, why: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((line, why()));
        }
    }
}

/// A JavaScript code-creation line without its function's address and tier: its name held a
/// raw line break, so the rest follows on the next physical line(s).
pub(super) struct Pending {
    pub(super) line: u64,
    pub(super) text: String,
    pub(super) parts: u32,
}

/// The first V8 (major, minor) whose VM states include PARSER and BYTECODE_COMPILER; older
/// logs number JS, GC, COMPILER, OTHER, EXTERNAL, IDLE from 0.
pub(super) const FIRST_PARSER_STATE: (u32, u32) = (6, 3);

/// A function name with more raw line breaks than this is not put back together.
pub(super) const MAX_NAME_LINES: u32 = 8;

/// How [`Decoder::code_creation`] treats a JavaScript line without function address and tier.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Incomplete {
    /// Hold it back: the next line may be the rest of its name.
    HoldBack,
    /// It was put together from several lines: fail, to try one more.
    Fail,
    /// Nothing more is coming: code without a function, as V8's tick processor keeps it.
    Keep,
}

/// The record tags of node 20's logs: a line starting with one is not the rest of a name.
pub(super) const RECORD_TAGS: [&str; 22] = [
    "v8-version",
    "v8-platform",
    "shared-library",
    "shared-library-end",
    "profiler",
    "heap-capacity",
    "heap-available",
    "new",
    "delete",
    "code-creation",
    "code-move",
    "code-delete",
    "sfi-move",
    "code-source-info",
    "script-source",
    "script-details",
    "code-deopt",
    "timer-event-start",
    "timer-event-end",
    "current-time",
    "tick",
    "code-disable-optimization",
];

impl Decoder {
    /// No rest is coming for a held-back line: keep its code without a function.
    pub(super) fn settle_pending(&mut self) {
        if let Some(pending) = self.pending.take() {
            let fields: Vec<&str> = pending.text.split(',').collect();
            if !self.code_creation(&fields, Incomplete::Keep) {
                self.malformed.note(pending.line, || "a code-creation line with missing or malformed fields".into());
            }
        }
    }

    pub(super) fn other(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            self.empty.get_or_insert((self.line, 0)).1 += 1;
            return;
        }
        let mut text = String::from_utf8_lossy(bytes);
        if self.line == 1 {
            if let Some(rest) = text.strip_prefix('\u{feff}') {
                text = rest.to_owned().into();
            }
        }
        let tag = text.split(',').next().unwrap_or_default();
        if let Some(mut pending) = self.pending.take() {
            if RECORD_TAGS.contains(&tag) {
                self.pending = Some(pending);
                self.settle_pending();
            } else {
                // The rest of a code-creation line whose function name held a raw line break.
                pending.text.push('\n');
                pending.text.push_str(&text);
                pending.parts += 1;
                let fields: Vec<&str> = pending.text.split(',').collect();
                if self.code_creation(&fields, Incomplete::Fail) {
                    return;
                }
                if pending.parts < MAX_NAME_LINES {
                    self.pending = Some(pending);
                } else {
                    self.malformed.note(pending.line, || "a code-creation line whose name never ends".into());
                }
                return;
            }
        }
        if !self.quoted && (tag == "shared-library" || tag == "profiler") {
            // Older V8 quoted its strings; the libraries and `profiler` come before any code.
            self.quoted = text.as_bytes().get(tag.len() + 1) == Some(&b'"');
        }
        let unquoted;
        let fields: Vec<&str> = if self.quoted && text.contains('"') {
            unquoted = split_quoted(&text);
            unquoted.iter().map(AsRef::as_ref).collect()
        } else {
            text.split(',').collect()
        };
        let line = self.line;
        let ok = match fields[0] {
            "v8-version" => {
                if self.version.is_none() {
                    self.version = Some((line, fields[1..].join(".")));
                    let number = |i: usize| fields.get(i).and_then(|f| f.parse::<u32>().ok());
                    if let (Some(major), Some(minor)) = (number(1), number(2)) {
                        self.old_states = (major, minor) < FIRST_PARSER_STATE;
                    }
                }
                true
            }
            "shared-library" => {
                match (fields.get(1), fields.get(2).and_then(|f| address(f)), fields.get(3).and_then(|f| address(f))) {
                    (Some(path), Some(start), Some(end)) if start < end => {
                        self.libraries.add(&unescape(path), start, end);
                        self.changed(None);
                        true
                    }
                    // macOS logs list libraries whose text V8 found empty (start = end): they
                    // cover no address.
                    (Some(_), Some(start), Some(end)) => start == end,
                    _ => false,
                }
            }
            "profiler" => {
                if fields.get(1) == Some(&"begin") {
                    match fields.get(2).and_then(|f| f.parse::<i64>().ok()).filter(|i| *i > 0) {
                        Some(interval) => self.interval_us = Some(interval),
                        None => {
                            return self.malformed.note(line, || "a profiler,begin line without an interval".into())
                        }
                    }
                }
                true
            }
            "new" => {
                if fields.get(1) == Some(&"CodeRange") && self.code_range.is_none() {
                    self.code_range = fields.get(2).and_then(|f| address(f));
                    self.changed(None);
                }
                true
            }
            "code-creation" => self.code_creation(&fields, Incomplete::HoldBack),
            "code-move" => match (fields.get(1).and_then(|f| address(f)), fields.get(2).and_then(|f| address(f))) {
                (Some(from), Some(to)) => {
                    match self.code.move_code(from, to) {
                        Some([gone, arrived]) => {
                            self.changed(Some(gone));
                            self.changed(Some(arrived));
                            self.leaves.forget();
                        }
                        None => self.unknown_moves.note(line, || format!("{from:#x}")),
                    }
                    true
                }
                _ => false,
            },
            "code-delete" => match fields.get(1).and_then(|f| address(f)) {
                Some(start) => {
                    if let Some(gone) = self.code.delete(start) {
                        self.changed(Some(gone));
                        self.leaves.forget();
                    }
                    true
                }
                None => false,
            },
            "code-source-info" => self.code_source_info(&fields),
            "script-source" => match (fields.get(1).and_then(|f| f.parse::<u32>().ok()), fields.get(2)) {
                (Some(id), Some(name)) => {
                    let mut script = super::positions::script_text(name, &fields[3..].join(","));
                    script.line_offset = self.positions.line_offsets.get(&id).copied();
                    self.positions.scripts.insert(id, script);
                    true
                }
                _ => false,
            },
            "script-details" => {
                let id = fields.get(1).and_then(|f| f.parse::<u32>().ok());
                let offset = fields.get(3).and_then(|f| f.parse::<i64>().ok());
                if let (Some(id), Some(offset)) = (id, offset) {
                    self.positions.line_offsets.insert(id, offset);
                    if let Some(script) = self.positions.scripts.get_mut(&id) {
                        script.line_offset = Some(offset);
                    }
                }
                true
            }
            "sfi-move" => {
                if let (Some(from), Some(to)) =
                    (fields.get(1).and_then(|f| address(f)), fields.get(2).and_then(|f| address(f)))
                {
                    if let Some(function) = self.positions.functions.remove(&from) {
                        self.positions.functions.insert(to, function);
                    }
                }
                true
            }
            "code-deopt" => match &mut self.jit {
                Some(log) => log.deopt(&fields, &mut self.code),
                None => true,
            },
            "tick" => false,
            // Other records (heap events, timers) do not matter to stacks.
            _ => true,
        };
        if !ok {
            let tag = fields[0].to_owned();
            self.malformed.note(line, || format!("a `{}` line with missing or malformed fields", visible(&tag)));
        }
    }

    /// `code-creation,type,kind,time,start,size,name[,sfi,state]`; `incomplete` says what to
    /// do with a JavaScript line without sfi and state. False when malformed.
    pub(super) fn code_creation(&mut self, fields: &[&str], incomplete: Incomplete) -> bool {
        let with_time: Vec<&str>;
        let fields = if fields.len() >= 6 && fields[3].starts_with("0x") {
            // Before V8 5.x: `code-creation,type,kind,start,size,name[,func,state]`, no time.
            with_time = fields[..3].iter().chain(&[""]).chain(&fields[3..]).copied().collect();
            &with_time[..]
        } else if fields.len() >= 5 && fields[2].starts_with("0x") {
            // Before 2012: `code-creation,type,start,size,name[,func,state]`, no kind either.
            with_time = fields[..2].iter().chain(&["", ""]).chain(&fields[2..]).copied().collect();
            &with_time[..]
        } else {
            fields
        };
        let incomplete = if self.quoted { Incomplete::Keep } else { incomplete };
        let n = fields.len();
        if n < 7 {
            return false;
        }
        let kind = fields[1];
        let (Some(start), Some(size)) = (address(fields[4]), fields[5].parse::<u64>().ok()) else { return false };
        let no_function = matches!(kind, "Builtin" | "BytecodeHandler" | "RegExp" | "Stub" | "Handler");
        let with_function = !no_function
            && n >= 9
            && address(fields[n - 2]).is_some()
            && matches!(fields[n - 1], "" | "~" | "^" | "+" | "*" | "-");
        let name = if with_function { fields[6..n - 2].join(",") } else { fields[6..].join(",") };
        if name.contains("code-creation,") || name.contains(",tick,") {
            // Two isolates writing one log (`--no-logfile-per-isolate`) tore lines into each
            // other: no name to recover.
            return false;
        }
        let js_kind = matches!(kind, "JS" | "Eval" | "Script" | "Function" | "LazyCompile" | "InterpretedFunction");
        if js_kind && !with_function {
            match incomplete {
                Incomplete::HoldBack => {
                    self.pending = Some(Pending { line: self.line, text: fields.join(","), parts: 1 });
                    return true;
                }
                Incomplete::Fail => return false,
                Incomplete::Keep => {}
            }
        }
        // Named when a tick first needs it (see `Entry`): until then only its text is kept.
        let plain = |text: String, kind| Name::Plain { text: text.into(), kind };
        let (name, code) = match kind {
            "Builtin" => (plain(name, FuncKind::Builtin), Code::Builtin),
            "BytecodeHandler" => (plain(format!("BytecodeHandler:{name}"), FuncKind::Builtin), Code::BytecodeHandler),
            // Spelled as V8 names regular expressions in a .cpuprofile (and --prof-process does).
            "RegExp" => (plain(format!("RegExp: {}", unescape(&name)), FuncKind::Regexp), Code::Other),
            _ if with_function => {
                let tier = match fields[n - 1].as_bytes() {
                    [marker] if self.tier_names == super::TierNames::Every => Tier::from_marker(*marker),
                    _ => None,
                };
                (Name::Js { text: unescape(&name).into(), tier }, Code::Js)
            }
            // Code of a JavaScript kind without its function (never a top-of-stack function).
            _ if js_kind => (Name::Js { text: unescape(&name).into(), tier: None }, Code::Other),
            _ => (plain(format!("{kind}: {}", unescape(&name)), FuncKind::Other), Code::Other),
        };
        let (bytecode, sfi) = if with_function {
            let sfi = address(fields[n - 2]).unwrap_or(0);
            if let Name::Js { text, .. } = &name {
                self.positions.functions.entry(sfi).or_default().name = Some(text.clone().into());
            }
            (fields[n - 1] == "~", sfi)
        } else {
            (false, 0)
        };
        let jit = match (&mut self.jit, &name) {
            (Some(log), Name::Js { text, tier }) if with_function => {
                let marker = fields[n - 1].as_bytes().first().copied().and_then(Tier::from_marker);
                marker.map(|compiled| log.code_created(text, *tier, compiled, fields[3]))
            }
            _ => None,
        };
        let (span, replaced) = self.code.add(start, Entry { size, code, name, info: None, bytecode, sfi, jit });
        // Builtins also decide what addresses in their remapped copies mean.
        self.changed(if matches!(code, Code::Builtin | Code::BytecodeHandler) { None } else { Some(span) });
        // New code in fresh memory changes no remembered leaf: those are ranges of code that
        // was there, or of C++ symbols and builtins' copies, which it may shadow.
        if replaced || self.libraries.overlap(span) || self.remapped_builtin_overlap(span) {
            self.leaves.forget();
        }
        true
    }
}

impl Decoder {
    /// `code-source-info,START,SCRIPT,FN_START,FN_END,POSITIONS,INLINED,FNS`: the positions of
    /// the code at START (written right after its code-creation). False when malformed; info for
    /// code the map does not hold is dropped.
    fn code_source_info(&mut self, fields: &[&str]) -> bool {
        let (Some(start), Some(mut info)) =
            (fields.get(1).and_then(|f| address(f)), fields.get(2..).and_then(super::positions::SourceInfo::parse))
        else {
            return false;
        };
        let Some((at, entry)) = self.code.find(start).filter(|(at, _)| *at == start) else { return true };
        let span = (at, at.saturating_add(entry.size));
        let named_line = match &entry.name {
            Name::Js { text, .. } => super::names::split_js_name(text).line,
            _ => None,
        };
        let index = u32::try_from(self.positions.infos.len()).unwrap_or(u32::MAX);
        entry.info = Some(index);
        if entry.sfi != 0 {
            self.positions.functions.entry(entry.sfi).or_default().script = Some(info.script);
        }
        if let Some(line) = named_line {
            self.positions.infer_line_offset(info.script, info.function_start, line);
        }
        self.positions.name_inlined(&mut info);
        if let (Some(log), Some(code)) = (&mut self.jit, entry.jit) {
            log.inlined(code, &info.named);
        }
        self.positions.infos.push(info);
        // Addresses in the code may have been resolved without its positions.
        self.changed(Some(span));
        self.leaves.forget();
        true
    }
}

/// An address field: `0x…` hex (V8's only form), decimal tolerated.
pub(super) fn address(field: &str) -> Option<u64> {
    match field.strip_prefix("0x") {
        Some(hex) if !hex.is_empty() && hex.len() <= 16 => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None => field.parse().ok(),
    }
}

/// Text for a message: control characters escaped, at most 40 characters.
pub(super) fn visible(s: &str) -> String {
    s.chars().take(40).flat_map(char::escape_debug).collect()
}
