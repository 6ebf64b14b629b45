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
//! 1. with a directory given ([`SourceMaps::new`]), a copy of the script there, by the longest
//!    end of its path that exists (`DIR/dist/app.js` before `DIR/app.js`), and the map its
//!    comment names (else its sibling `.map`); or the map alone at that place;
//! 2. the script where the profile says it ran, and its last `//# sourceMappingURL=` comment:
//!    an inline `data:` map or a file relative to the script; else a sibling `app.js.map`;
//! 3. as in 1, in the folder of the profile ([`SourceMaps::apply`]'s `near`).
//!
//! Sources resolve against the url the map has *relative to the script's url in the profile*,
//! so the mapped names are the same whichever copy of the map was read.
//!
//! Names: V8 places a function at the `(` of its parameter list, or at the parameter of a
//! one-parameter arrow (`A=n=>…`), where a plain lookup finds the parameter's name. The
//! function is therefore placed at, and named by, the last mapping at or before that position
//! whose generated text is the name V8 reports (`A`); a dotted name (`a.doubleIt`) part by
//! part. Without the script's text V8's names stay. Names V8 reports that the text does not
//! have where V8 places the function are counted ([`MapReport::names_not_found`]): when they
//! are most of them, the script or map is probably not the build that was profiled.
//! Each map is loaded once per [`SourceMaps`] and shared by every profile and thread using it.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod load;
mod text;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use cpuprof_model::{Frame, FrameId, Func, FuncId, FuncKind, ModelError, Profile, ProfileBuilder, StrId, Warning};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use sourcemap::SourceMap;

use crate::load::{Found, Script};
use crate::text::ScriptText;

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
    /// Functions whose name (as V8 gives it) was looked for in their script's text before
    /// their position.
    pub names_checked: usize,
    /// Of those, the functions whose name is not there. A few are normal (a class constructor
    /// is named after its class, `o["k"] = function` is called `o.k`); most of them mean that
    /// the script, or its map, is not the build that was profiled, and the report says so.
    pub names_not_found: usize,
}

/// A function's original place.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Original {
    /// The original name, when the map gives one.
    name: Option<String>,
    source: u32,
    /// 0-based.
    line: u32,
    /// 0-based.
    column: u32,
}

/// The functions declared on one generated line (see [`declarations`]).
pub(crate) type Declarations = FxHashMap<String, Option<Original>>;

impl SourceMaps {
    /// Source maps found beside the scripts, or first in `dir`.
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self { dir, scripts: Mutex::new(FxHashMap::default()) }
    }

    /// The script (with its map) the profile names `file`, loaded once (per `near`).
    fn script(&self, file: &str, near: Option<&Path>) -> Arc<Found> {
        let key = format!("{}\0{file}", near.map(Path::display).map(|d| d.to_string()).unwrap_or_default());
        let cell = {
            let mut scripts = self.scripts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            Arc::clone(scripts.entry(key).or_default())
        };
        // Loaded outside the lock: other scripts load meanwhile, and a second thread that
        // wants this one waits for it instead of loading it again.
        Arc::clone(cell.get_or_init(|| Arc::new(load::find(file, self.dir.as_deref(), near))))
    }

    /// `profile` with every JavaScript function that a source map covers moved to its original
    /// name, source, line and column, and its line hits (`positionTicks`) and frame lines
    /// mapped too. Everything else is copied as it is. Missing and unusable maps are not
    /// errors: they are reported (and added to the warnings). `near` is the folder the
    /// profile was read from: scripts not found elsewhere are looked for there, as in
    /// the `dir` given to [`SourceMaps::new`] (a profile kept beside a copy of its build).
    pub fn apply(&self, profile: &Profile, near: Option<&Path>) -> Result<Mapped, ModelError> {
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
            files.par_iter().map(|file| (*file, self.script(strings.get(*file), near))).collect();

        let mut report = MapReport::default();
        for file in &files {
            match &*scripts[file] {
                Found::NoMap => report.without_map.push(strings.get(*file).to_owned()),
                Found::Broken(problem) => report.problems.push(problem.clone()),
                Found::Map(script) if script.negative > 0 => report.problems.push(format!(
                    "{}: its source map places {} mapping(s) before line 1 or column 1; they were left out",
                    shortened(strings.get(*file), 200),
                    script.negative
                )),
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
                let (original, name_found) = locate(script, func, strings.get(func.name));
                report.names_checked += usize::from(name_found.is_some());
                report.names_not_found += usize::from(name_found == Some(false));
                let original = original?;
                report.mapped += 1;
                Some((&**script, original))
            })
            .collect();
        let mut profile = rebuild(profile, &originals)?;
        profile.meta.warnings.extend(report.problems.iter().map(|p| Warning::new(format!("source maps: {p}"))));
        profile.meta.warnings.push(Warning::new(format!("source maps: {report}")));
        Ok(Mapped { profile, report })
    }
}

/// `text` cut to `max` characters for a message (a `data:` url or a hostile path can be
/// megabytes).
pub(crate) fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

impl MapReport {
    /// True when most names V8 gives are not in the scripts: another build's scripts or maps.
    pub fn looks_stale(&self) -> bool {
        self.names_not_found >= 2 && self.names_not_found * 2 > self.names_checked
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
            let shown: Vec<String> = missing.iter().take(LISTED).map(|m| shortened(m, 200)).collect();
            write!(f, "; no source map for {} script{plural}: {}", missing.len(), shown.join(", "))?;
            if missing.len() > LISTED {
                write!(f, " and {} more", missing.len() - LISTED)?;
            }
        }
        if self.looks_stale() {
            write!(
                f,
                "; {} of {} functions are not named in the script as V8 names them: is it the script (and map) \
                 that was profiled?",
                self.names_not_found, self.names_checked
            )?;
        }
        Ok(())
    }
}

/// The original place of `func` (whose V8 name is `name`), if the map has one, and whether the
/// script's text has that name where V8 places the function (`None`: not checked). Most names
/// missing is a sign that the script or map is not the one that was profiled.
fn locate(script: &Script, func: &Func, name: &str) -> (Option<Original>, Option<bool>) {
    // Names are plain: a tick log's tier is a field of the function, not part of its name.
    // `a.doubleIt` (V8 names a function by what it was assigned to): each part is bound.
    let parts: Option<Vec<&str>> = name.split('.').map(|p| is_identifier(p).then_some(p)).collect();
    // Names the text spells otherwise (esbuild writes `größe` as `gr\u00F6\u00DFe`) are not checked.
    let checked = script.text.is_some() && func.column.is_some() && parts.is_some() && name.is_ascii();
    if let Some((original, found)) = locate_mapped(script, func, name, parts.as_deref()) {
        return (Some(original), Some(found).filter(|_| checked));
    }
    // Not mapped: is the name at least in the text before the function's position?
    let found = match (&script.text, parts.as_deref().and_then(<[&str]>::last), func.line, func.column) {
        (Some(text), Some(last), Some(line), Some(column)) if checked => {
            Some(text.has_identifier_before(line.saturating_sub(1), column.saturating_sub(1), last))
        }
        _ => None,
    };
    (None, found)
}

fn locate_mapped(script: &Script, func: &Func, bare: &str, parts: Option<&[&str]>) -> Option<(Original, bool)> {
    let line = func.line?.checked_sub(1)?;
    let map = &script.map;
    let Some(column) = func.column.and_then(|c| c.checked_sub(1)) else {
        return Some((locate_line(script, line, parts)?, true));
    };
    let at = greatest_lower_bound(map, line, column)?;
    let token = map.get_token(at).filter(|t| placed(script, t))?;
    let here =
        Original { name: None, source: token.get_src_id(), line: token.get_src_line(), column: token.get_src_col() };
    let (Some(text), Some(parts)) = (&script.text, parts) else {
        // Nothing to bind the name with: V8's name stays (the mapping here may be a parameter's).
        return Some((here, true));
    };
    // The last part names the function (the mapping with its text, at or before V8's position,
    // is its declaration); the parts before it come before it (`a` in `a.doubleIt=function`).
    let mut from = at;
    let mut names = Vec::with_capacity(parts.len());
    let mut declaration = None;
    for (k, part) in parts.iter().enumerate().rev() {
        let Some(index) = bind(script, text, line, from, part).filter(|i| {
            map.get_token(*i).is_some_and(|t| {
                // The name itself must lead to V8's position (`A=n=>`, `v(`), not belong to an
                // object or array around the function (`o={[k](){…}}`).
                let last = k + 1 == parts.len();
                let joined = !last
                    || text.joins_name_and_function(line, t.get_dst_col().saturating_add(part.len() as u32), column);
                placed(script, &t) && t.get_src_id() == token.get_src_id() && joined
            })
        }) else {
            break;
        };
        let mapping = map.get_token(index)?;
        declaration.get_or_insert(mapping);
        names.push(mapping.get_name().unwrap_or(part));
        let Some(before) = index.checked_sub(1) else { break };
        from = before;
    }
    let Some(declaration) = declaration else { return Some((here, false)) };
    // Parts that were not found keep V8's spelling.
    let kept = parts.len() - names.len();
    let name = parts[..kept].iter().copied().chain(names.into_iter().rev()).collect::<Vec<_>>().join(".");
    let original = Original {
        name: (name != bare).then_some(name),
        source: declaration.get_src_id(),
        line: declaration.get_src_line(),
        column: declaration.get_src_col(),
    };
    Some((original, true))
}

/// The index of the last mapping at or before mapping `from` (at most [`NAME_SEARCH`] back, on
/// generated `line`) whose generated text is the identifier `name`.
fn bind(script: &Script, text: &ScriptText, line: u32, from: usize, name: &str) -> Option<usize> {
    (from.saturating_sub(NAME_SEARCH)..=from)
        .rev()
        .map_while(|i| script.map.get_token(i).filter(|t| t.get_dst_line() == line).map(|t| (i, t)))
        .find(|(_, t)| text.identifier_at(line, t.get_dst_col()) == Some(name))
        .map(|(i, _)| i)
}

/// A function known by its line alone (pprof has no columns): the place whose generated text
/// declares its name on that line (`A=`, `function v(`, `w:`), if exactly one does; else the
/// one original line that the generated line holds, with V8's name.
fn locate_line(script: &Script, line: u32, parts: Option<&[&str]>) -> Option<Original> {
    if let Some(&[.., name]) = parts {
        if let Some(Some(place)) = declarations(script, line).get(name) {
            let name = place.name.clone().filter(|n| n != name);
            return Some(Original { name, ..place.clone() });
        }
    }
    let (source, line) = line_only(script, line)?;
    Some(Original { name: None, source, line, column: 0 })
}

/// The functions declared on 0-based generated `line`, by generated name: where each is in the
/// original (its name there in `name`), or `None` when several places declare the same name.
/// Worked out once per line: a minified line holds every function of the bundle.
fn declarations(script: &Script, line: u32) -> Arc<Declarations> {
    let mut lines = script.declarations.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let entry = lines.entry(line).or_insert_with(|| {
        let mut found = Declarations::default();
        let (map, Some(text)) = (&script.map, &script.text) else { return Arc::new(found) };
        let tokens =
            (mappings_before(map, line, 0)..).map_while(|i| map.get_token(i).filter(|t| t.get_dst_line() == line));
        for token in tokens.filter(|t| placed(script, t)) {
            let Some(name) = text.identifier_at(line, token.get_dst_col()) else { continue };
            if !text.declares(line, token.get_dst_col(), name) {
                continue;
            }
            let place = Original {
                name: token.get_name().map(str::to_owned),
                source: token.get_src_id(),
                line: token.get_src_line(),
                column: token.get_src_col(),
            };
            found
                .entry(name.to_owned())
                .and_modify(|seen| {
                    if seen.as_ref().is_some_and(|s| *s != place) {
                        *seen = None;
                    }
                })
                .or_insert(Some(place));
        }
        Arc::new(found)
    });
    Arc::clone(entry)
}

/// True when `token` maps to a source that has a name, at a line and column not below 0.
fn placed(script: &Script, token: &sourcemap::Token<'_>) -> bool {
    token.has_source()
        && script.sources.get(token.get_src_id() as usize).is_some_and(Option::is_some)
        && load::in_range(token.get_src_line())
        && load::in_range(token.get_src_col())
}

/// A JavaScript identifier (ASCII exactly; other letters approximately).
fn is_identifier(name: &str) -> bool {
    name.chars().next().is_some_and(|c| !c.is_ascii_digit()) && name.chars().all(text::is_identifier_char)
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
/// Mappings before the line's first code (its indentation) are left out: they often carry
/// on the line above.
fn line_only(script: &Script, line: u32) -> Option<(u32, u32)> {
    let mut places = script.line_places.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    *places.entry(line).or_insert_with(|| scan_line(script, line))
}

fn scan_line(script: &Script, line: u32) -> Option<(u32, u32)> {
    let map = &script.map;
    let code = script.text.as_ref().map_or(0, |t| t.indentation(line));
    let mut found = None;
    for index in mappings_before(map, line, u64::from(code)).. {
        let Some(token) = map.get_token(index).filter(|t| t.get_dst_line() == line) else { break };
        if !placed(script, &token) {
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
        let new = if let Some((script, original)) = &originals[id.index()] {
            let name = original.name.as_deref().unwrap_or(strings.get(func.name));
            let file = script.sources.get(original.source as usize).and_then(Option::as_deref).unwrap_or("");
            Func {
                name: b.intern(name),
                file: b.intern(file),
                line: original.line.checked_add(1),
                column: func.column.and(original.column.checked_add(1)),
                kind: func.kind,
                tier: func.tier,
                library: None,
            }
        } else {
            let library = func.library.map(|l| b.copy_library(profile, l));
            Func { name: b.intern(strings.get(func.name)), file: b.intern(strings.get(func.file)), library, ..func }
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
        let (line, column) = match (&originals[frame.func.index()], frame.line) {
            (Some((script, original)), Some(line)) => (Some(mapped_line(script, original, line, frame.column)), None),
            (_, line) => (line, frame.column),
        };
        let new = b.frame(Frame { func, line, column });
        frames[id.index()] = Some(new);
        new
    });

    // Row for row, so the timeline (which names rows) goes along unchanged.
    let states = profile.samples.vm_states();
    let mut values = Vec::with_capacity(profile.value_types.len());
    for (row, stack) in profile.samples.stacks().iter().enumerate() {
        values.clear();
        values.extend((0..profile.value_types.len()).map(|k| profile.samples.values(k)[row]));
        match states {
            Some(states) => b.sample_in_state(stacks[stack.index()], None, &values, states[row]),
            None => b.sample(stacks[stack.index()], None, &values),
        }
    }
    if let Some(timeline) = profile.samples.timeline() {
        b.timeline(timeline.clone());
    }
    for (stack, new_stack) in profile.stacks.ids().zip(&stacks) {
        let original = &originals[profile.func_of(stack).index()];
        for (line, ticks) in profile.line_hits.of(stack) {
            let line = original.as_ref().map_or(line, |(script, original)| mapped_line(script, original, line, None));
            b.line_hit(*new_stack, line, ticks);
        }
    }
    b.recording_of(&profile.meta);
    b.copy_scripts(profile);
    // The original sources' text the maps carry, of the sources functions now name.
    let mut carried: rustc_hash::FxHashSet<(*const Script, u32)> = rustc_hash::FxHashSet::default();
    for (script, original) in originals.iter().flatten() {
        if !carried.insert((std::ptr::from_ref::<Script>(script), original.source)) {
            continue;
        }
        let file = script.sources.get(original.source as usize).and_then(Option::as_deref);
        if let (Some(file), Some(text)) = (file, script.map.get_source_contents(original.source)) {
            b.script(file, cpuprof_model::ScriptOrigin::SourceMap, std::sync::Arc::from(text));
        }
    }
    b.finish()
}

/// The original 1-based line of generated 1-based `line` (and `column`) inside a function now
/// at `function`: where the map says, or the function's own line when the generated line
/// holds code of several original lines (minified code) or of another source.
fn mapped_line(script: &Script, function: &Original, line: u32, column: Option<u32>) -> u32 {
    let Some(line0) = line.checked_sub(1) else { return function.line.saturating_add(1) };
    let place = match column.and_then(|c| c.checked_sub(1)) {
        Some(column) => greatest_lower_bound(&script.map, line0, column)
            .and_then(|at| script.map.get_token(at))
            .filter(|t| placed(script, t))
            .map(|t| (t.get_src_id(), t.get_src_line())),
        None => line_only(script, line0),
    };
    match place {
        Some((source, line)) if source == function.source => line.saturating_add(1),
        _ => function.line.saturating_add(1),
    }
}
