//! Scripts' text for the lines a report shows (`annotate`, the report page): read from disk
//! (through `--source-root` rules), else carried by the profile, and checked against it.

use std::path::Path;

use cpuprof_analysis::TopRow;
use cpuprof_model::{FuncKind, Profile, ScriptOrigin};
use cpuprof_render::{SourceOrigin, SourceText};

use crate::spelled;

/// A `--source-root` rule: scripts named below `old` are read below `new`.
pub(crate) struct SourceRoot<'a> {
    pub(crate) old: &'a str,
    pub(crate) new: &'a str,
}

/// The `--source-root` rules `rules` give (`OLD=NEW` each).
pub(crate) fn source_roots(rules: &[String]) -> anyhow::Result<Vec<SourceRoot<'_>>> {
    rules
        .iter()
        .map(|rule| match rule.split_once('=') {
            Some((old, new)) if !old.is_empty() && !new.is_empty() => Ok(SourceRoot { old, new }),
            _ => Err(crate::UsageError(format!(
                "{} {rule:?}: expected OLD=NEW, two folders (the scripts' as the profile names them, and where they are here)",
                spelled("source_root")
            ))
            .into()),
        })
        .collect()
}

/// Lines shown around each of a function's listed lines on the report page.
const PAGE_CONTEXT: u32 = 2;

/// The text the report page annotates: of the functions whose lines the page lists, the
/// heaviest [`cpuprof_analysis::defaults::REPORT_SOURCES`], their listed lines with
/// [`PAGE_CONTEXT`] lines around each, and their first line. Scripts not found are left out
/// without a word (the page has their lines' times all the same).
pub(crate) fn page_sources(
    profile: &Profile,
    data: &cpuprof_analysis::ReportData,
    roots: &[SourceRoot<'_>],
) -> Vec<cpuprof_report::FunctionSource> {
    let mut by_function: std::collections::BTreeMap<u32, (i64, Vec<u32>)> = std::collections::BTreeMap::new();
    for (function, line, weight) in &data.lines {
        let entry = by_function.entry(*function).or_default();
        entry.0 = entry.0.saturating_add(*weight);
        entry.1.push(*line);
    }
    let mut order: Vec<(u32, (i64, Vec<u32>))> = by_function.into_iter().collect();
    order.sort_by_key(|(f, (weight, _))| (std::cmp::Reverse(*weight), *f));
    order.truncate(cpuprof_analysis::defaults::REPORT_SOURCES);
    let mut out = Vec::new();
    for (function, (_, lines)) in order {
        let Some(f) = data.functions.get(function as usize) else { continue };
        let code = Code { name: &f.name, file: f.file.as_deref(), kind: f.kind };
        let (text, _) = script_text(profile, code, lines.iter().max().copied(), roots);
        let (Some(file), false) = (text.file.clone(), text.lines.is_empty()) else { continue };
        let count = u32::try_from(text.lines.len()).unwrap_or(u32::MAX);
        let mut wanted: Vec<u32> = lines
            .iter()
            .flat_map(|l| l.saturating_sub(PAGE_CONTEXT).max(1)..=l.saturating_add(PAGE_CONTEXT))
            .chain(f.line)
            .filter(|l| *l >= 1 && *l <= count)
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let lines = wanted.into_iter().map(|l| (l, text.lines[l as usize - 1].clone())).collect();
        out.push(cpuprof_report::FunctionSource { function, file, origin: text.origin.as_str(), lines });
    }
    out
}

/// The most bytes of a script read from disk.
const MAX_SCRIPT_BYTES: u64 = 64 << 20;

/// A function whose script's text is wanted: as `top` rows and the report's functions give it.
#[derive(Clone, Copy)]
pub(crate) struct Code<'a> {
    /// Its plain name.
    pub(crate) name: &'a str,
    pub(crate) file: Option<&'a str>,
    pub(crate) kind: FuncKind,
}

impl<'a> Code<'a> {
    pub(crate) fn of_row(row: &'a TopRow) -> Self {
        Code { name: row.plain_name(), file: row.file.as_deref(), kind: row.kind }
    }

    /// Whether it is code of a script (JavaScript, or a language a pprof profile names files
    /// of), not native code or V8's own, whose file is a library or nothing.
    pub(crate) fn has_script(&self) -> bool {
        let native = matches!(
            self.kind,
            FuncKind::Native | FuncKind::Cpp | FuncKind::SharedLib | FuncKind::Builtin | FuncKind::Regexp
        );
        !native && self.file.is_some_and(|f| !f.is_empty())
    }
}

/// The source of `code`'s script, in order: the file on disk (through the `roots`) when it
/// fits the profile's lines (the last with samples: `last_line`), the text the profile carries
/// (a tick log's `script-source`, a source map's `sourcesContent`), else none; and what to say
/// of it: why there is none, or that the file on disk does not fit the profile.
pub(crate) fn script_text(
    profile: &Profile,
    code: Code<'_>,
    last_line: Option<u32>,
    roots: &[SourceRoot<'_>],
) -> (SourceText, Option<String>) {
    let none = |file: Option<String>, missing: &str| SourceText {
        origin: SourceOrigin::None,
        file,
        lines: Vec::new(),
        missing: Some(missing.to_owned()),
    };
    // A library's path is no source to show (C++, shared libraries, builtins).
    let Some(file) = code.file.filter(|_| code.has_script()) else {
        return (SourceText { origin: SourceOrigin::None, file: None, lines: Vec::new(), missing: None }, None);
    };
    let carried = profile.script(file).map(|script| SourceText {
        origin: match script.origin {
            ScriptOrigin::ScriptSource => SourceOrigin::ScriptSource,
            ScriptOrigin::SourceMap => SourceOrigin::SourceMap,
        },
        file: Some(file.to_owned()),
        lines: v8_lines(&script.text),
        missing: None,
    });
    let shown = |s: &str| cpuprof_render::text::visible(s);
    let rooted = roots.iter().find_map(|r| {
        let rest = file.strip_prefix(r.old.trim_end_matches(['/', '\\']))?;
        (rest.is_empty() || rest.starts_with(['/', '\\']))
            .then(|| format!("{}{rest}", r.new.trim_end_matches(['/', '\\'])))
    });
    // A rule's folder may be relative (`/srv/app=.`): read from the current directory.
    let local = rooted.is_some() || is_local_path(file);
    let path = rooted.unwrap_or_else(|| file.to_owned());
    let read = if local { read_text(Path::new(&path)) } else { Err(Unread::Other("not a file on disk".to_owned())) };
    let (text, carried) = match (read, carried) {
        (Ok(text), carried) => (text, carried),
        (Err(_), Some(carried)) => return (carried, None),
        (Err(why), None) => {
            let hint = if roots.is_empty() && is_local_path(file) && matches!(why, Unread::NotFound) {
                format!(" (for a profile recorded elsewhere, {} OLD=NEW)", spelled("source_root"))
            } else {
                String::new()
            };
            let why = why.to_string();
            let at = if path == file { String::new() } else { format!(" {}:", shown(&path)) };
            return (none(Some(path), &why), Some(format!("no source for {}:{at} {why}{hint}", shown(file))));
        }
    };
    let source_lines = v8_lines(&text);
    // The text V8 compiled, where the log carries it, is what its positions count in: a file
    // on disk that differs from it would put the time on the wrong lines.
    if let Some(carried) = carried.as_ref().filter(|c| c.origin == SourceOrigin::ScriptSource) {
        if carried.lines != source_lines {
            let said = format!(
                "{}: not the script the profile recorded (its text differs): the recorded text is shown",
                shown(&path)
            );
            return (carried.clone(), Some(said));
        }
    }
    let Some(why) = misfit(code, last_line, &source_lines) else {
        return (SourceText { origin: SourceOrigin::Disk, file: Some(path), lines: source_lines, missing: None }, None);
    };
    let instead =
        if carried.is_some() { "the text the profile carries is shown instead" } else { "its text is not shown" };
    let said = format!("{}: {why}: it changed since the profile was recorded; {instead}", shown(&path));
    let missing = format!("{why}: it changed since the profile was recorded");
    (carried.unwrap_or_else(|| none(Some(path), &missing)), Some(said))
}

/// `text`'s lines as V8 numbers them (`String::CalculateLineEnds`): ended by LF, CR LF, a CR
/// alone, U+2028 or U+2029 (a script with a U+2028 in a string has its later lines one further
/// down than an editor shows).
fn v8_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\u{2028}' | '\u{2029}' => lines.push(std::mem::take(&mut line)),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut line));
            }
            c => line.push(c),
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Why a script's `source` does not fit the profile's lines of `code` (the last with samples:
/// `last_line`), if it does not: samples past its end, or the function's name nowhere in it.
fn misfit(code: Code<'_>, last_line: Option<u32>, source: &[String]) -> Option<String> {
    let count = source.len();
    if let Some(last) = last_line.filter(|l| *l as usize > count) {
        return Some(format!("it has {count} lines, but the profile has samples on line {last}"));
    }
    // A named function whose name is nowhere in the file was renamed or is not there (V8's
    // start line may not hold it: a class's constructor, `const f =` above `(n) => {`).
    let word = code.name.rsplit(['.', ' ']).next().unwrap_or(code.name);
    let plain = !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    (plain && !source.iter().any(|line| line.contains(word)))
        .then(|| format!("it does not name {}", cpuprof_render::text::visible(word)))
}

/// Whether the model's name of a script is a path on this machine (not `node:internal/…`,
/// an `http://` url, or an eval's name).
fn is_local_path(file: &str) -> bool {
    file.starts_with('/') || file.as_bytes().get(1..3).is_some_and(|b| b[0] == b':' && (b[1] == b'/' || b[1] == b'\\'))
}

/// Why a script was not read.
enum Unread {
    NotFound,
    Other(String),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::NotFound => f.write_str("not found"),
            Unread::Other(why) => f.write_str(why),
        }
    }
}

/// A script's text (invalid UTF-8 replaced), from a regular file (not a FIFO, a device or a
/// folder, which may never end or mean nothing) of at most [`MAX_SCRIPT_BYTES`].
fn read_text(path: &Path) -> Result<String, Unread> {
    use std::io::Read;
    let reason = |e: &std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => Unread::NotFound,
        std::io::ErrorKind::PermissionDenied => Unread::Other("permission denied".to_owned()),
        kind => Unread::Other(kind.to_string()),
    };
    let meta = std::fs::metadata(path).map_err(|e| reason(&e))?;
    if !meta.is_file() {
        return Err(Unread::Other("not a regular file".to_owned()));
    }
    let file = std::fs::File::open(path).map_err(|e| reason(&e))?;
    let mut bytes = Vec::new();
    file.take(MAX_SCRIPT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| reason(&e))?;
    if bytes.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(Unread::Other(format!("larger than {} MiB, not read", MAX_SCRIPT_BYTES >> 20)));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
