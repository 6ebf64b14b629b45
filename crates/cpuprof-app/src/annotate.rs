//! `annotate`: a function's source with its samples by line.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cpuprof_analysis::{CallGraph, FindError, TopRow};
use cpuprof_model::{Meta, Profile, ScriptOrigin};
use cpuprof_render::{AnnotateDocument, AnnotatedFunction, SourceOrigin, SourceText, Terminal};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::calls::{load_view, ViewOptions};
use crate::input::{source_name, Loaded};
use crate::usage::UsageError;
use crate::{spelled, warn};

/// `annotate`: the source of a function (or of the hottest functions) with each line's samples.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct AnnotateRequest {
    /// The function: a handle from top (fn:…), its name, name@file:line, or a regular
    /// expression (several match: the hottest). Not with `top`.
    #[serde(default)]
    pub pattern: Option<String>,
    /// The profile to read
    pub input: PathBuf,
    /// Annotate the N functions with the most self time, one after another (instead of a pattern)
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub top: Option<u64>,
    /// Lines shown around each line with samples; longer runs of other lines are folded (default 3)
    #[serde(default = "context")]
    pub context: u64,
    /// Show every line of the function: fold none
    #[serde(default)]
    pub full: bool,
    /// Where to read scripts recorded elsewhere: OLD=NEW reads a script named OLD/… at NEW/…
    /// (several may be given; the first that matches is used)
    #[serde(default)]
    pub source_root: Vec<String>,
    #[serde(flatten)]
    pub view: ViewOptions,
}

fn context() -> u64 {
    cpuprof_analysis::defaults::ANNOTATE_CONTEXT
}

/// The functions annotated, borrowing the profile they were read from.
pub struct AnnotateAnswer<'p> {
    pub source: String,
    pub meta: Meta,
    pub graph: CallGraph<'p>,
    pub functions: Vec<AnnotatedFunction>,
    context: usize,
    full: bool,
    many: bool,
}

impl AnnotateAnswer<'_> {
    /// The report to render on `terminal`.
    pub fn document<'a>(&'a self, terminal: Terminal<'a>) -> AnnotateDocument<'a> {
        AnnotateDocument {
            source: &self.source,
            meta: &self.meta,
            graph: &self.graph,
            functions: &self.functions,
            context: self.context,
            full: self.full,
            many: self.many,
            terminal,
        }
    }
}

/// A `--source-root` rule: scripts named below `old` are read below `new`.
struct SourceRoot<'a> {
    old: &'a str,
    new: &'a str,
}

impl AnnotateRequest {
    /// Usage errors (before anything is read or an output is claimed).
    pub fn check(&self) -> Result<()> {
        match (&self.pattern, self.top) {
            (Some(_), Some(_)) => {
                return Err(UsageError(format!("give a function or {}, not both", spelled("top"))).into());
            }
            (None, None) => {
                return Err(UsageError(format!("give a function to annotate, or {} N", spelled("top"))).into());
            }
            (None, Some(0)) => {
                return Err(UsageError(format!("{} 0: expected at least 1 function", spelled("top"))).into());
            }
            _ => {}
        }
        self.roots()?;
        self.view.check()
    }

    fn roots(&self) -> Result<Vec<SourceRoot<'_>>> {
        self.source_root
            .iter()
            .map(|rule| match rule.split_once('=') {
                Some((old, new)) if !old.is_empty() && !new.is_empty() => Ok(SourceRoot { old, new }),
                _ => Err(UsageError(format!(
                    "{} {rule:?}: expected OLD=NEW, two folders (the scripts' as the profile names them, and where they are here)",
                    spelled("source_root")
                ))
                .into()),
            })
            .collect()
    }

    /// Answers the request, handing the answer (which borrows the profile read) to `answer`.
    pub fn execute<T>(&self, answer: impl FnOnce(&AnnotateAnswer<'_>) -> T) -> Result<T> {
        self.check()?;
        let roots = self.roots()?;
        let (Loaded { profile, window }, options) = load_view(&self.input, &self.view)?;
        let graph = CallGraph::new(&profile, &options);
        let source = source_name(&self.input);
        let chosen = match (&self.pattern, self.top) {
            (Some(pattern), _) => vec![pick(&graph, pattern, &source)?],
            (None, top) => hottest(&graph, usize::try_from(top.unwrap_or(1)).unwrap_or(usize::MAX)),
        };
        if chosen.is_empty() {
            crate::warn_empty(&source, &profile, window.is_some());
        }
        let functions = chosen
            .into_iter()
            .map(|function| {
                let lines = graph.lines(function);
                let row = &graph.functions()[function];
                let text = script_text(&profile, row, &lines, &roots);
                AnnotatedFunction { function, lines, source: text }
            })
            .collect();
        let meta = crate::said::settled(&profile.meta);
        let context = usize::try_from(self.context).unwrap_or(usize::MAX);
        let many = self.top.is_some();
        Ok(answer(&AnnotateAnswer { source, meta, graph, functions, context, full: self.full, many }))
    }
}

/// The function `pattern` names; of several, the one with the most self time, the others named
/// in a warning.
fn pick(graph: &CallGraph<'_>, pattern: &str, source: &str) -> Result<usize> {
    match graph.find(pattern) {
        Ok(found) => Ok(found),
        Err(FindError::Ambiguous(mut found)) => {
            // The hottest by self: what the lines show (a stable sort keeps `find`'s order of equals).
            found.sort_by_key(|f| std::cmp::Reverse(graph.functions()[*f].self_weight));
            let others: Vec<String> = found[1..].iter().take(5).map(|f| graph.functions()[*f].handle()).collect();
            let more = found.len() - 1 - others.len();
            warn(&format!(
                "{source}: {} functions match {}: annotating the hottest, {}; the others: {}{}",
                found.len(),
                cpuprof_render::text::visible(pattern),
                graph.functions()[found[0]].handle(),
                others.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() },
            ));
            Ok(found[0])
        }
        Err(e) => Err(crate::patterns::not_found(graph, pattern, source, e)),
    }
}

/// The `n` functions with the most self time that have a script (what has none, native code
/// and V8's own, has no lines), heaviest first.
fn hottest(graph: &CallGraph<'_>, n: usize) -> Vec<usize> {
    let functions = graph.functions();
    let mut order: Vec<usize> =
        (0..functions.len()).filter(|f| functions[*f].self_weight > 0 && has_script(&functions[*f])).collect();
    order.sort_by(|a, b| functions[*b].self_weight.cmp(&functions[*a].self_weight).then(a.cmp(b)));
    order.truncate(n);
    order
}

/// The most bytes of a script read from disk.
const MAX_SCRIPT_BYTES: u64 = 64 << 20;

/// The source of `row`'s script, in order: the file on disk (through the `roots`) when it
/// fits the profile's lines, the text the profile carries (a tick log's `script-source`, a
/// source map's `sourcesContent`), else none; says (warns) why there is none, and that a file
/// on disk does not fit the profile.
fn script_text(
    profile: &Profile,
    row: &TopRow,
    lines: &cpuprof_analysis::FunctionLines,
    roots: &[SourceRoot<'_>],
) -> SourceText {
    let none = |file: Option<String>| SourceText { origin: SourceOrigin::None, file, lines: Vec::new() };
    if !has_script(row) {
        // A library's path is no source to show (C++, shared libraries, builtins).
        return none(None);
    }
    let Some(file) = row.file.as_deref().filter(|f| !f.is_empty()) else { return none(None) };
    let carried = profile.script(file).map(|script| SourceText {
        origin: match script.origin {
            ScriptOrigin::ScriptSource => SourceOrigin::ScriptSource,
            ScriptOrigin::SourceMap => SourceOrigin::SourceMap,
        },
        file: Some(file.to_owned()),
        lines: script.text.lines().map(str::to_owned).collect(),
    });
    let shown = |s: &str| cpuprof_render::text::visible(s);
    let path = roots
        .iter()
        .find_map(|r| {
            let rest = file.strip_prefix(r.old.trim_end_matches('/'))?;
            (rest.is_empty() || rest.starts_with('/')).then(|| format!("{}{rest}", r.new.trim_end_matches('/')))
        })
        .unwrap_or_else(|| file.to_owned());
    let read = if is_local_path(&path) { read_text(Path::new(&path)) } else { Err("not a file on disk".to_owned()) };
    let text = match (read, &carried) {
        (Ok(text), _) => text,
        (Err(_), Some(_)) => return carried.unwrap_or_else(|| none(None)),
        (Err(why), None) => {
            let hint = if roots.is_empty() && is_local_path(file) {
                format!(" (for a profile recorded elsewhere, {} OLD=NEW)", spelled("source_root"))
            } else {
                String::new()
            };
            let at = if path == file { String::new() } else { format!(" {}:", shown(&path)) };
            warn(&format!("no source for {}:{at} {why}{hint}", shown(file)));
            return none(Some(path));
        }
    };
    let source_lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let Some(why) = misfit(row, lines, &source_lines) else {
        return SourceText { origin: SourceOrigin::Disk, file: Some(path), lines: source_lines };
    };
    let instead =
        if carried.is_some() { "the text the profile carries is shown instead" } else { "its text is not shown" };
    warn(&format!("{}: {why}: it changed since the profile was recorded; {instead}", shown(&path)));
    carried.unwrap_or_else(|| none(Some(path)))
}

/// Why a script's `source` does not fit the profile's lines of `row`, if it does not: samples
/// past its end, or a named function not on the line the profile says it starts on.
fn misfit(row: &TopRow, lines: &cpuprof_analysis::FunctionLines, source: &[String]) -> Option<String> {
    let count = source.len();
    if let Some(last) = lines.lines.last().map(|l| l.line).filter(|l| *l as usize > count) {
        return Some(format!("it has {count} lines, but the profile has samples on line {last}"));
    }
    let def = row.line.filter(|l| *l as usize <= count && *l > 0)?;
    let name = row.plain_name();
    let word = name.rsplit(['.', ' ']).next().unwrap_or(name);
    let plain = !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    (plain && !source[def as usize - 1].contains(word)).then(|| {
        format!(
            "line {def} does not name {}, where the profile says the function starts",
            cpuprof_render::text::visible(word)
        )
    })
}

/// Whether `row` is code of a script (JavaScript, or a language a pprof profile names files of),
/// not native code or V8's own, whose file is a library or nothing.
fn has_script(row: &TopRow) -> bool {
    use cpuprof_model::FuncKind;
    let native = matches!(
        row.kind,
        FuncKind::Native | FuncKind::Cpp | FuncKind::SharedLib | FuncKind::Builtin | FuncKind::Regexp
    );
    !native && row.file.as_deref().is_some_and(|f| !f.is_empty())
}

/// Whether the model's name of a script is a path on this machine (not `node:internal/…`,
/// an `http://` url, or an eval's name).
fn is_local_path(file: &str) -> bool {
    file.starts_with('/') || file.as_bytes().get(1..3).is_some_and(|b| b[0] == b':' && (b[1] == b'/' || b[1] == b'\\'))
}

/// A script's text (invalid UTF-8 replaced), at most [`MAX_SCRIPT_BYTES`].
fn read_text(path: &Path) -> std::result::Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| io_reason(&e))?;
    let mut bytes = Vec::new();
    file.take(MAX_SCRIPT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io_reason(&e))?;
    if bytes.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(format!("larger than {} MiB, not read", MAX_SCRIPT_BYTES >> 20));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// An I/O error as a reason, without its OS error number.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "not found".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    }
}
