//! `node --prof-process --preprocess` JSON (what speedscope imports as a "v8 log") → the
//! unified model.
//!
//! V8's tick processor writes it (`JsonProfile.writeJson` in `tools/profile.mjs`): `code` lists
//! every code object it knew (`{name, type: SHARED_LIB|CPP|CODE|JS, kind, func, tm}`),
//! `functions` the JavaScript functions, and `ticks` one entry per tick, `{tm, vm, s}`, where
//! `s` holds `code index, offset` pairs leaf first, `-1, address` for an address no code covers.
//! The tick processor has already picked the stack (pc or external callback, the top of stack
//! when it is a JavaScript function, the frames), so the attribution here is its own, with the
//! same conventions as the tick log reader: bytecode-handler frames are skipped, a leaf no code
//! covers is `(unaccounted)`, a leaf without any pc (address 0) is named by its VM state.
//!
//! The arrays are read one element at a time: each element is a small typed `serde` parse.

use cpuprof_model::{Frame, FrameId, FuncKind, Library, Profile, ProfileBuilder, SourceFormat, StrId, Tier};
use cpuprof_model::{Func, ValueType, VmState};
use rustc_hash::FxHashMap;
use serde::Deserialize;

use super::stacks::{js_func, plain_func};
use super::DEFAULT_INTERVAL_US;
use crate::json_scan::{describe, Scanner};
use crate::{Origin, ParseError, ParseErrorKind, ParseOptions, Span};

#[derive(Deserialize)]
struct CodeEntry {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct TickEntry {
    #[serde(default)]
    tm: Option<f64>,
    #[serde(default)]
    vm: Option<i64>,
    s: Vec<f64>,
}

/// What a code entry became.
#[derive(Clone, Copy)]
enum Resolved {
    Frame(FrameId),
    /// A bytecode handler: skipped unless it is all there is.
    Handler(FrameId),
}

pub(crate) fn parse(
    reader: impl std::io::Read + Send,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<Profile, ParseError> {
    let mut scanner = Scanner::new(reader, origin, options.limits());
    scanner.skip_bom()?;
    match scanner.skip_ws()? {
        None => return Err(ParseErrorKind::Empty.at(origin, Span::None)),
        Some(b'{') => {}
        Some(b) => {
            return Err(scanner.error(ParseErrorKind::UnknownFormat(format!(
                "expected the JSON object of `--prof-process --preprocess`, found {}",
                describe(b)
            ))))
        }
    }
    let mut reader = Reader {
        builder: ProfileBuilder::new(SourceFormat::PreprocessJson, vec![ValueType::SAMPLES, ValueType::WALL_NS]),
        // JIT records need each sample's tier, which this format gives only with tiers apart.
        split_tiers: options.split_tiers || options.jit,
        code: Vec::new(),
        code_seen: false,
        scratch: Vec::new(),
        ticks_seen: false,
        unaccounted: None,
        no_pc: FxHashMap::default(),
        time_range: None,
        unknown_code: 0,
    };
    scanner.object("the --preprocess object", |s, key, key_span| match key {
        "code" => {
            reader.code_seen = true;
            each(s, "`code`", |s, index, raw| {
                let entry: CodeEntry = serde_json::from_slice(raw).map_err(|e| element_error(s, "code", index, &e))?;
                let resolved = reader.code_entry(&entry);
                reader.code.push(resolved);
                Ok(())
            })
        }
        "ticks" => {
            if !reader.code_seen {
                // V8 writes `code` first; a `ticks` before it could not be resolved.
                return Err(ParseErrorKind::Invalid("`ticks` comes before `code`".into()).at(s.origin(), key_span));
            }
            reader.ticks_seen = true;
            each(s, "`ticks`", |s, index, raw| {
                let tick: TickEntry = serde_json::from_slice(raw).map_err(|e| element_error(s, "ticks", index, &e))?;
                reader
                    .tick(&tick)
                    .map_err(|why| s.error(ParseErrorKind::Invalid(format!("tick {index}: {why}").into())))
            })
        }
        _ => s.value("a value", None),
    })?;
    if !scanner.at_end()? {
        return Err(scanner.error(ParseErrorKind::Json("unexpected data after the --preprocess object".to_owned())));
    }
    if !reader.code_seen || !reader.ticks_seen {
        let missing = if reader.code_seen { "`ticks`" } else { "`code`" };
        return Err(ParseErrorKind::UnknownFormat(format!(
            "missing {missing}: not the JSON of `--prof-process --preprocess`"
        ))
        .at(origin, Span::None));
    }
    reader.finish(origin)
}

/// Calls `element` with the raw bytes of each element of the array that comes next.
fn each<R: std::io::Read + Send>(
    s: &mut Scanner<'_, R>,
    what: &'static str,
    mut element: impl FnMut(&mut Scanner<'_, R>, usize, &[u8]) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    s.expect(b'[', what)?;
    if s.skip_ws()? == Some(b']') {
        s.next_token(what)?;
        return Ok(());
    }
    let mut raw = Vec::new();
    for index in 0.. {
        raw.clear();
        s.value(what, Some(&mut raw))?;
        element(s, index, &raw)?;
        match s.next_token(what)? {
            b',' => {}
            b']' => return Ok(()),
            b => {
                return Err(s.error(ParseErrorKind::Json(format!(
                    "expected `,` or `]` after an element of {what}, found {}",
                    describe(b)
                ))))
            }
        }
    }
    Ok(())
}

fn element_error<R: std::io::Read + Send>(
    s: &Scanner<'_, R>,
    array: &str,
    index: usize,
    e: &serde_json::Error,
) -> ParseError {
    s.error(ParseErrorKind::Json(format!("element {index} of `{array}` (just before here): {e}")))
}

struct Reader {
    builder: ProfileBuilder,
    split_tiers: bool,
    code: Vec<Resolved>,
    code_seen: bool,
    ticks_seen: bool,
    /// The frames of the tick being read, leaf first.
    scratch: Vec<FrameId>,
    unaccounted: Option<FrameId>,
    no_pc: FxHashMap<VmState, FrameId>,
    time_range: Option<(f64, f64)>,
    /// Non-leaf frames no code covered (dropped, as the tick processor does).
    unknown_code: u64,
}

impl Reader {
    fn frame(&mut self, func: cpuprof_model::FuncId) -> FrameId {
        self.builder.frame(Frame { func, line: None, column: None })
    }

    fn code_entry(&mut self, entry: &CodeEntry) -> Resolved {
        let kind = entry.kind.as_deref().unwrap_or("");
        match entry.ty.as_str() {
            "SHARED_LIB" => {
                let path = self.builder.intern(&entry.name);
                let base = entry.name.rsplit('/').next().filter(|b| !b.is_empty()).unwrap_or(&entry.name);
                let name = self.builder.intern(base);
                let library = Some(self.builder.library(Library { path, range: None }));
                let func = self.builder.func(Func {
                    name,
                    file: StrId::EMPTY,
                    line: None,
                    column: None,
                    kind: FuncKind::SharedLib,
                    tier: None,
                    library,
                });
                Resolved::Frame(self.frame(func))
            }
            "CPP" => {
                // Older tick processors kept nm's symbol type: `T start`, `t _ssl_read`.
                let name = match entry.name.as_bytes() {
                    [letter, b' ', ..] if letter.is_ascii_alphabetic() => &entry.name[2..],
                    _ => &entry.name,
                };
                let func = plain_func(&mut self.builder, name, FuncKind::Cpp);
                Resolved::Frame(self.frame(func))
            }
            "JS" => {
                let tier = match kind {
                    _ if !self.split_tiers => None,
                    "Unopt" | "Ignition" | "Interpreted" => Tier::from_marker(b'~'),
                    "Sparkplug" | "Baseline" => Tier::from_marker(b'^'),
                    "Maglev" => Tier::from_marker(b'+'),
                    "Opt" | "Turbofan" | "TurboFan" => Tier::from_marker(b'*'),
                    _ => None,
                };
                let func = js_func(&mut self.builder, &entry.name, tier);
                Resolved::Frame(self.frame(func))
            }
            _ => match kind {
                "Builtin" => {
                    let func = plain_func(&mut self.builder, &entry.name, FuncKind::Builtin);
                    Resolved::Frame(self.frame(func))
                }
                "BytecodeHandler" => {
                    let func =
                        plain_func(&mut self.builder, &format!("BytecodeHandler:{}", entry.name), FuncKind::Builtin);
                    Resolved::Handler(self.frame(func))
                }
                "RegExp" => {
                    let func = plain_func(&mut self.builder, &format!("RegExp: {}", entry.name), FuncKind::Regexp);
                    Resolved::Frame(self.frame(func))
                }
                "" => {
                    let func = plain_func(&mut self.builder, &entry.name, FuncKind::Other);
                    Resolved::Frame(self.frame(func))
                }
                _ => {
                    let func = plain_func(&mut self.builder, &format!("{kind}: {}", entry.name), FuncKind::Other);
                    Resolved::Frame(self.frame(func))
                }
            },
        }
    }

    fn tick(&mut self, tick: &TickEntry) -> Result<(), String> {
        if tick.s.len() % 2 != 0 {
            return Err(format!("`s` has {} numbers, not code/offset pairs", tick.s.len()));
        }
        let state = VmState::from_tag(tick.vm.unwrap_or(-1));
        let mut frames = std::mem::take(&mut self.scratch);
        frames.clear();
        let mut handler = None;
        for (position, pair) in tick.s.chunks_exact(2).enumerate() {
            let (index, offset) = (pair[0], pair[1]);
            if index < 0.0 {
                if position == 0 {
                    frames.push(if offset == 0.0 { self.no_pc_frame(state) } else { self.unaccounted() });
                } else {
                    self.unknown_code += 1;
                }
                continue;
            }
            let resolved =
                usize::try_from(index as i64).ok().filter(|_| index.fract() == 0.0).and_then(|i| self.code.get(i));
            match resolved {
                Some(Resolved::Frame(frame)) => frames.push(*frame),
                Some(Resolved::Handler(frame)) => {
                    if position == 0 {
                        handler = Some(*frame);
                    }
                }
                None => return Err(format!("code index {index} is not in `code` ({} entries)", self.code.len())),
            }
        }
        if frames.is_empty() {
            frames.extend(handler);
        }
        if frames.is_empty() {
            let frame = self.unaccounted();
            frames.push(frame);
        }
        let mut parent = None;
        for frame in frames.iter().rev() {
            parent = Some(self.builder.stack(parent, *frame));
        }
        self.scratch = frames;
        // `tm` is the log's time field, in µs.
        let micros = tick.tm.filter(|t| t.is_finite());
        if let Some(t) = micros {
            self.time_range = Some(self.time_range.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        }
        if let Some(stack) = parent {
            let at = micros.map(|t| (t * 1000.0) as i64);
            self.builder.sample_in_state(stack, at, &[1, DEFAULT_INTERVAL_US * 1000], state);
        }
        Ok(())
    }

    fn unaccounted(&mut self) -> FrameId {
        if let Some(frame) = self.unaccounted {
            return frame;
        }
        let func = plain_func(&mut self.builder, "(unaccounted)", FuncKind::Unknown);
        let frame = self.frame(func);
        self.unaccounted = Some(frame);
        frame
    }

    fn no_pc_frame(&mut self, state: VmState) -> FrameId {
        if let Some(frame) = self.no_pc.get(&state) {
            return *frame;
        }
        let (name, kind) = super::names::no_pc_func(state);
        let func = plain_func(&mut self.builder, &name, kind);
        let frame = self.frame(func);
        self.no_pc.insert(state, frame);
        frame
    }

    fn finish(mut self, origin: &Origin) -> Result<Profile, ParseError> {
        let interval_ns = DEFAULT_INTERVAL_US * 1000;
        self.builder.warn(format!(
            "the --preprocess JSON does not give the sampling interval: assumed V8's default of {DEFAULT_INTERVAL_US} µs"
        ));
        if self.unknown_code > 0 {
            self.builder.warn(format!(
                "{} caller frame(s) were in no code the tick processor knew; they were left out",
                self.unknown_code
            ));
        }
        let (start, duration) = match self.time_range {
            Some((first, last)) => {
                // `as` saturates on huge or crafted times; the builder refuses what passes its limit.
                (Some((first * 1000.0) as i64), Some((((last - first) * 1000.0) as i64).saturating_add(interval_ns)))
            }
            None => (None, None),
        };
        self.builder.timing(start, duration, Some(interval_ns));
        self.builder.finish().map_err(|e| ParseErrorKind::Model(e).at(origin, Span::None))
    }
}
