//! Source maps for cpuprof: a profile of bundled, compiled or minified JavaScript, told in the
//! original functions, files and lines.
//!
//! [`SourceMaps::apply`] rewrites every JavaScript function of a profile whose script has a
//! source map: its file becomes the original source, its line and column the original
//! position, and its name the original name where the map has one. Functions that end up at
//! the same original place become one, so a bundle splits back into its modules and two builds
//! of the same code (renamed differently by a minifier) name their functions alike.
//!
//! Where a map comes from, for a script the profile names `file:///srv/dist/app.js` (or
//! `/srv/dist/app.js`), first found wins:
//! 1. with a directory given ([`SourceMaps::new`]), the script `DIR/app.js` and the map its
//!    comment names (else `DIR/app.js.map`); the map alone as `DIR/app.js.map`;
//! 2. the script where the profile says it ran, and its last `//# sourceMappingURL=` comment:
//!    an inline `data:` map or a file relative to the script; else a sibling `app.js.map`.
//!
//! Sources resolve against the url the map has *relative to the script's url in the profile*,
//! so the mapped names are the same whichever copy of the map was read.
//!
//! Names: V8 places a function at the `(` of its parameter list, or at the parameter of a
//! one-parameter arrow (`A=n=>…`), where a plain lookup finds the parameter's name. The name
//! is therefore taken from the last mapping at or before that position whose generated text is
//! the name V8 reports (`A`); without the script's text, from the mapping at the position.
//! Each map is loaded once per [`SourceMaps`] and shared by every profile and thread using it.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod load;
mod text;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cpuprof_model::{Frame, FrameId, Func, FuncId, FuncKind, ModelError, Profile, ProfileBuilder, SourceFormat, StrId};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use sourcemap::SourceMap;

use crate::load::{Found, Script};

/// How many mappings before a function's position may hold its name.
const NAME_SEARCH: usize = 64;

/// Source maps, found and loaded on first use, shared across profiles and threads.
pub struct SourceMaps {
    dir: Option<PathBuf>,
    scripts: Mutex<FxHashMap<String, Arc<OnceLock<Arc<Found>>>>>,
}

/// A profile told in original sources, and what the mapping did.
pub struct Mapped {
    /// The rewritten profile.
    pub profile: Profile,
    /// What was mapped and what was not.
    pub report: MapReport,
}

/// What [`SourceMaps::apply`] did. The mapped profile's warnings end with the problems and
/// this report as one sentence (its `Display`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapReport {
    /// JavaScript functions of scripts that could have a map (not `node:` internals).
    pub functions: usize,
    /// Of those, the functions mapped to an original source.
    pub mapped: usize,
    /// Scripts (as the profile names them) for which no source map was found.
    pub without_map: Vec<String>,
    /// Maps that were found but could not be used, one sentence each.
    pub problems: Vec<String>,
}

/// A function's original place.
#[derive(Clone, Copy)]
struct Original<'a> {
    name: Option<&'a str>,
    source: u32,
    /// 0-based.
    line: u32,
    /// 0-based.
    column: u32,
}

impl SourceMaps {
    /// Source maps found beside the scripts, or first in `dir` (`--source-map-dir`).
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self { dir, scripts: Mutex::new(FxHashMap::default()) }
    }

    /// The script (with its map) the profile names `file`, loaded once.
    fn script(&self, file: &str) -> Arc<Found> {
        let cell = {
            let mut scripts = self.scripts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            Arc::clone(scripts.entry(file.to_owned()).or_default())
        };
        // Loaded outside the lock: other scripts load meanwhile, and a second thread that
        // wants this one waits for it instead of loading it again.
        Arc::clone(cell.get_or_init(|| Arc::new(load::find(file, self.dir.as_deref()))))
    }

    /// `profile` with every JavaScript function that a source map covers moved to its original
    /// name, source, line and column, and its line hits (`positionTicks`) and frame lines
    /// mapped too. Everything else is copied as it is. Missing and unusable maps are not
    /// errors: they are reported (and added to the warnings).
    pub fn apply(&self, profile: &Profile) -> Result<Mapped, ModelError> {
        let strings = &profile.strings;
        let mut files: Vec<StrId> = profile
            .funcs
            .as_slice()
            .iter()
            .filter(|f| f.kind == FuncKind::Js && f.line.is_some())
            .map(|f| f.file)
            .collect();
        files.sort_unstable();
        files.dedup();
        let scripts: FxHashMap<StrId, Arc<Found>> =
            files.par_iter().map(|file| (*file, self.script(strings.get(*file)))).collect();

        let mut report = MapReport::default();
        for file in &files {
            match &*scripts[file] {
                Found::NoMap => report.without_map.push(strings.get(*file).to_owned()),
                Found::Broken(problem) => report.problems.push(problem.clone()),
                Found::NotAScript | Found::Map(_) => {}
            }
        }
        // The original place of each function, or None to keep it as it is.
        let originals: Vec<Option<(&Script, Original)>> = profile
            .funcs
            .as_slice()
            .iter()
            .map(|func| {
                let found = scripts.get(&func.file).filter(|_| func.kind == FuncKind::Js && func.line.is_some())?;
                if !matches!(**found, Found::NotAScript) {
                    report.functions += 1;
                }
                let Found::Map(script) = &**found else { return None };
                let original = locate(script, func, strings.get(func.name), profile.meta.format)?;
                report.mapped += 1;
                Some((&**script, original))
            })
            .collect();
        let mut profile = rebuild(profile, &originals)?;
        profile.meta.warnings.extend(report.problems.iter().map(|p| format!("source maps: {p}")));
        profile.meta.warnings.push(format!("source maps: {report}"));
        Ok(Mapped { profile, report })
    }
}

impl std::fmt::Display for MapReport {
    /// One sentence: how many functions were mapped, and which scripts had no map.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const LISTED: usize = 5;
        write!(f, "mapped {} of {} JavaScript functions", self.mapped, self.functions)?;
        let missing = &self.without_map;
        if !missing.is_empty() {
            let plural = if missing.len() == 1 { "" } else { "s" };
            let shown: Vec<&str> = missing.iter().take(LISTED).map(String::as_str).collect();
            write!(f, "; no source map for {} script{plural}: {}", missing.len(), shown.join(", "))?;
            if missing.len() > LISTED {
                write!(f, " and {} more", missing.len() - LISTED)?;
            }
        }
        Ok(())
    }
}

/// The original place of `func` (whose V8 name is `name`).
fn locate<'m>(script: &'m Script, func: &Func, name: &str, format: SourceFormat) -> Option<Original<'m>> {
    let line = func.line?.checked_sub(1)?;
    let Some(column) = func.column.and_then(|c| c.checked_sub(1)) else {
        // No column (pprof): the line must map to one place.
        let (source, line) = line_only(script, line)?;
        return Some(Original { name: None, source, line, column: 0 });
    };
    let map = &script.map;
    let at = greatest_lower_bound(map, line, column)?;
    let token = map.get_token(at)?;
    if !token.has_source() {
        return None;
    }
    let mut chosen = token;
    let mut original_name = None;
    // Tick logs with --split-tiers mark the tier: `*v` is `v` optimized by TurboFan.
    let bare = if format == SourceFormat::TickLog { name.trim_start_matches(['~', '^', '+', '*']) } else { name };
    match &script.text {
        Some(text) if !bare.is_empty() => {
            for index in (at.saturating_sub(NAME_SEARCH)..=at).rev() {
                let Some(candidate) = map.get_token(index).filter(|t| t.get_dst_line() == line) else { break };
                if text.identifier_at(line, candidate.get_dst_col()) == Some(bare) {
                    if candidate.has_source() && candidate.get_src_id() == token.get_src_id() {
                        chosen = candidate;
                        original_name = candidate.get_name();
                    }
                    break;
                }
            }
        }
        Some(_) => {}
        None => original_name = token.get_name(),
    }
    Some(Original {
        name: original_name,
        source: chosen.get_src_id(),
        line: chosen.get_src_line(),
        column: chosen.get_src_col(),
    })
}

/// How many mappings lie before 0-based generated (`line`, `column`) (mappings are sorted).
fn mappings_before(map: &SourceMap, line: u32, column: u64) -> usize {
    let (mut low, mut high) = (0, map.get_token_count() as usize);
    while low < high {
        let mid = low + (high - low) / 2;
        let before =
            map.get_token(mid).is_some_and(|t| (t.get_dst_line(), u64::from(t.get_dst_col())) < (line, column));
        if before {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// The index of the last mapping at or before 0-based (`line`, `column`) on that line.
fn greatest_lower_bound(map: &SourceMap, line: u32, column: u32) -> Option<usize> {
    let at = mappings_before(map, line, u64::from(column) + 1).checked_sub(1)?;
    (map.get_token(at)?.get_dst_line() == line).then_some(at)
}

/// The one original `(source, line)` that 0-based generated `line` maps to, if it maps to
/// exactly one (a minified line holds many: then there is no answer).
fn line_only(script: &Script, line: u32) -> Option<(u32, u32)> {
    let mut places = script.line_places.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    *places.entry(line).or_insert_with(|| scan_line(&script.map, line))
}

fn scan_line(map: &SourceMap, line: u32) -> Option<(u32, u32)> {
    let mut found = None;
    for index in mappings_before(map, line, 0).. {
        let Some(token) = map.get_token(index).filter(|t| t.get_dst_line() == line) else { break };
        if !token.has_source() {
            continue;
        }
        let place = (token.get_src_id(), token.get_src_line());
        match found {
            None => found = Some(place),
            Some(seen) if seen != place => return None,
            Some(_) => {}
        }
    }
    found
}

/// `profile` rebuilt with each function at its original place (`originals`, by function id).
fn rebuild(profile: &Profile, originals: &[Option<(&Script, Original)>]) -> Result<Profile, ModelError> {
    let strings = &profile.strings;
    let mut b = ProfileBuilder::new(profile.meta.format, profile.value_types.clone());
    let mut funcs: Vec<Option<FuncId>> = vec![None; profile.funcs.len()];
    let mut frames: Vec<Option<FrameId>> = vec![None; profile.frames.len()];
    let mut new_func = |b: &mut ProfileBuilder, id: FuncId| -> FuncId {
        if let Some(new) = funcs[id.index()] {
            return new;
        }
        let func = profile.funcs[id];
        let new = match originals[id.index()] {
            Some((script, original)) => {
                let name = original.name.map_or_else(
                    || strings.get(func.name).to_owned(),
                    |n| tiered(strings.get(func.name), n, profile.meta.format),
                );
                let file = script.sources.get(original.source as usize).map_or("", String::as_str);
                Func {
                    name: b.intern(&name),
                    file: b.intern(file),
                    line: original.line.checked_add(1),
                    column: func.column.and(original.column.checked_add(1)),
                    kind: func.kind,
                }
            }
            None => Func { name: b.intern(strings.get(func.name)), file: b.intern(strings.get(func.file)), ..func },
        };
        let new = b.func(new);
        funcs[id.index()] = Some(new);
        new
    };
    let stacks = b.copy_stacks(profile, |b, id| {
        if let Some(new) = frames[id.index()] {
            return new;
        }
        let frame = profile.frames[id];
        let func = new_func(b, frame.func);
        let (line, column) = match (originals[frame.func.index()], frame.line) {
            (Some((script, original)), Some(line)) => (Some(mapped_line(script, original, line, frame.column)), None),
            (_, line) => (line, frame.column),
        };
        let new = b.frame(Frame { func, line, column });
        frames[id.index()] = Some(new);
        new
    });

    let times = profile.samples.times_ns();
    let states = profile.samples.vm_states();
    let mut values = Vec::with_capacity(profile.value_types.len());
    for (row, stack) in profile.samples.stacks().iter().enumerate() {
        values.clear();
        values.extend((0..profile.value_types.len()).map(|k| profile.samples.values(k)[row]));
        let time = times.map(|t| t[row]);
        match states {
            Some(states) => b.sample_in_state(stacks[stack.index()], time, &values, states[row]),
            None => b.sample(stacks[stack.index()], time, &values),
        }
    }
    for (index, new_stack) in stacks.iter().enumerate() {
        let stack = cpuprof_model::StackId::from_index(index);
        let original = originals[profile.func_of(stack).index()];
        for (line, ticks) in profile.line_hits.of(stack) {
            let line = original.map_or(line, |(script, original)| mapped_line(script, original, line, None));
            b.line_hit(*new_stack, line, ticks);
        }
    }
    for warning in &profile.meta.warnings {
        b.warn(warning.clone());
    }
    b.timing(profile.meta.start_ns, profile.meta.duration_ns, profile.meta.interval_ns);
    b.finish()
}

/// The original 1-based line of generated 1-based `line` (and `column`) inside a function now
/// at `function`: where the map says, or the function's own line when the generated line
/// holds code of several original lines (minified code) or of another source.
fn mapped_line(script: &Script, function: Original, line: u32, column: Option<u32>) -> u32 {
    let Some(line0) = line.checked_sub(1) else { return function.line.saturating_add(1) };
    let place = match column.and_then(|c| c.checked_sub(1)) {
        Some(column) => greatest_lower_bound(&script.map, line0, column)
            .and_then(|at| script.map.get_token(at))
            .filter(sourcemap::Token::has_source)
            .map(|t| (t.get_src_id(), t.get_src_line())),
        None => line_only(script, line0),
    };
    match place {
        Some((source, line)) if source == function.source => line.saturating_add(1),
        _ => function.line.saturating_add(1),
    }
}

/// The original `name` with the tier marker of V8's `v8_name` kept (tick logs' `*v` → `*name`).
fn tiered(v8_name: &str, name: &str, format: SourceFormat) -> String {
    let marker = if format == SourceFormat::TickLog {
        &v8_name[..v8_name.len() - v8_name.trim_start_matches(['~', '^', '+', '*']).len()]
    } else {
        ""
    };
    format!("{marker}{name}")
}
