//! What V8's compilers did, as a tick log records it (kept with [`crate::ParseOptions::jit`]):
//! each `code-creation` of a JavaScript function with its tier marker is a code object; its
//! `code-source-info` lists the functions inlined into it; each `code-deopt` (written with
//! `--log-deopt`) deoptimizes the code object that starts at its address at that moment in the
//! log. Functions are named at the end, as the ticks name them.

use std::sync::Arc;

use cpuprof_model::{CodeObject, Deopt, ProfileBuilder, StrId, Tier};
use rustc_hash::FxHashMap;

use super::codemap::DynamicCode;
use super::names::{unescape, unescape_utf8};
use super::positions::SharedFunction;
use super::records::address;

/// The code objects and deoptimizations read so far.
#[derive(Default)]
pub(super) struct JitLog {
    /// Function names (`fn script:line:col`), each once.
    names: Vec<Arc<str>>,
    name_index: FxHashMap<Arc<str>, u32>,
    pub(super) code: Vec<Code>,
    deopts: Vec<LoggedDeopt>,
    /// Lines that name no code object the log created (code from before logging started).
    pub(super) unknown_deopts: u64,
    /// Whether the log has a deopt line at all.
    pub(super) any_deopt: bool,
}

impl Code {
    /// The tier the code object was compiled for.
    pub(super) fn tier(&self) -> Tier {
        self.tier
    }
}

/// A code object: its function (by name index), the tier its frames are named with, the tier
/// it was compiled for, when (µs), and its inlined functions (by name index).
pub(super) struct Code {
    name: u32,
    named_tier: Option<Tier>,
    tier: Tier,
    time_us: Option<i64>,
    inlined: Vec<u32>,
}

struct LoggedDeopt {
    code: u32,
    time_us: i64,
    kind: Box<str>,
    reason: Box<str>,
    /// `file:line:col` of the deopt, then the call sites it was inlined at, innermost first.
    positions: Vec<Box<str>>,
}

impl JitLog {
    fn name(&mut self, text: &str) -> u32 {
        if let Some(i) = self.name_index.get(text) {
            return *i;
        }
        let i = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        let text: Arc<str> = Arc::from(text);
        self.names.push(text.clone());
        self.name_index.insert(text, i);
        i
    }

    /// A code-creation of `text`'s function compiled for `tier` at `time` (the line's field);
    /// `named_tier` is the tier its frames carry. Returns its index.
    pub(super) fn code_created(&mut self, text: &str, named_tier: Option<Tier>, tier: Tier, time: &str) -> u32 {
        let name = self.name(text);
        let index = u32::try_from(self.code.len()).unwrap_or(u32::MAX);
        self.code.push(Code { name, named_tier, tier, time_us: time.parse().ok(), inlined: Vec::new() });
        index
    }

    /// The functions code object `code`'s source positions inline (those its shared infos
    /// named when the positions were read).
    pub(super) fn inlined(&mut self, code: u32, named: &[Option<SharedFunction>]) {
        let mut inlined: Vec<u32> = Vec::new();
        for function in named.iter().flatten() {
            if let Some(text) = &function.name {
                let name = self.name(text);
                if !inlined.contains(&name) {
                    inlined.push(name);
                }
            }
        }
        if let Some(c) = self.code.get_mut(code as usize) {
            c.inlined = inlined;
        }
    }

    /// `code-deopt,TIME,SIZE,START,INLINING_ID,SCRIPT_OFFSET,BAILOUT,LOCATION,REASON` (V8 ≥ 8;
    /// LOCATION is `<file:line:col>` and ` inlined at <…>` for each call site). False when
    /// malformed.
    pub(super) fn deopt(&mut self, fields: &[&str], code: &mut DynamicCode) -> bool {
        let n = fields.len();
        if n < 9 {
            return false;
        }
        let (Ok(time_us), Some(start)) = (fields[1].parse::<i64>(), address(fields[3])) else { return false };
        self.any_deopt = true;
        let found = code.find(start).filter(|(at, _)| *at == start).and_then(|(_, entry)| entry.jit);
        let Some(code) = found else {
            self.unknown_deopts += 1;
            return true;
        };
        let bailout = fields[6];
        let kind = bailout.strip_prefix("deopt-").unwrap_or(bailout);
        // Positions are logged byte by byte (UTF-8), unlike code-creation names.
        let location = unescape_utf8(&fields[7..n - 1].join(","));
        let positions = location
            .split(" inlined at ")
            .map(|p| p.trim().trim_start_matches('<').trim_end_matches('>').into())
            .collect();
        self.deopts.push(LoggedDeopt {
            code,
            time_us,
            kind: kind.into(),
            reason: unescape(fields[n - 1]).into(),
            positions,
        });
        true
    }

    /// Into the profile's [`cpuprof_model::Jit`]: `func` names a function as the ticks do.
    pub(super) fn finish(
        self,
        builder: &mut ProfileBuilder,
        mut func: impl FnMut(&mut ProfileBuilder, &str, Option<Tier>) -> cpuprof_model::FuncId,
    ) {
        let mut funcs: FxHashMap<(u32, Option<Tier>), cpuprof_model::FuncId> = FxHashMap::default();
        let names = &self.names;
        let mut func_of = |b: &mut ProfileBuilder, name: u32, tier: Option<Tier>| {
            *funcs.entry((name, tier)).or_insert_with(|| func(b, &names[name as usize], tier))
        };
        let code: Vec<CodeObject> = self
            .code
            .iter()
            .map(|c| CodeObject {
                func: func_of(builder, c.name, c.named_tier),
                tier: c.tier,
                created_ns: c.time_us.unwrap_or(0).saturating_mul(1000),
                inlined: c.inlined.iter().map(|i| func_of(builder, *i, c.named_tier)).collect(),
            })
            .collect();
        let string = |b: &mut ProfileBuilder, s: &str| -> StrId { b.intern(s) };
        let deopts: Vec<Deopt> = self
            .deopts
            .iter()
            .map(|d| Deopt {
                code: d.code,
                time_ns: d.time_us.saturating_mul(1000),
                kind: string(builder, &d.kind),
                reason: string(builder, &d.reason),
                position: d.positions.first().map_or(StrId::EMPTY, |p| string(builder, p)),
                inlined_at: d.positions.iter().skip(1).map(|p| string(builder, p)).collect(),
            })
            .collect();
        let jit = builder.jit_mut();
        jit.code = code;
        jit.deopts = deopts;
        jit.deopts_logged = self.any_deopt;
    }
}
