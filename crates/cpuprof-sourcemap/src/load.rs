//! Finding a script's source map (a `sourceMappingURL` comment, inline or not, a sibling
//! `.map`, or a file in the folder given to `SourceMaps::new`) and loading it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use sourcemap::{DecodedMap, SourceMap};
use url::Url;

use crate::text::{source_mapping_url, ScriptText};
use crate::Declarations;

/// Scripts and maps larger than this are not read (1 GiB).
const MAX_FILE: u64 = 1 << 30;

/// At most this many trailing path segments are tried in the source map folder.
const MAX_DIR_DEPTH: usize = 32;

/// Index-map section offsets beyond this are refused: the decoder adds them to positions
/// without checking for overflow.
const MAX_SECTION_OFFSET: u32 = 1 << 30;

/// A script with its source map, ready for lookups.
pub(crate) struct Script {
    pub(crate) map: SourceMap,
    /// The generated code, when the script itself was found (names are bound with it).
    pub(crate) text: Option<ScriptText>,
    /// Each source of the map, resolved against the map's url, as the profile should name it;
    /// `None` for a source with no name (`null` or empty), whose mappings are not used.
    pub(crate) sources: Vec<Option<String>>,
    /// The one original `(source, line)` of each generated line asked about, if it has one:
    /// a line can hold hundreds of thousands of mappings, and every line hit asks.
    pub(crate) line_places: Mutex<FxHashMap<u32, Option<(u32, u32)>>>,
    /// The functions declared on each generated line asked about (for pprof's functions).
    pub(crate) declarations: Mutex<FxHashMap<u32, Arc<Declarations>>>,
    /// Mappings left out because they place code before line 1 or column 1 (the map's
    /// relative numbers went below 0), or at a generated column below 0.
    pub(crate) negative: usize,
}

/// What became of one script of the profile.
pub(crate) enum Found {
    /// Not a file that could have a map: `node:` internals, `eval` code, names without a url.
    NotAScript,
    /// Neither the script's map nor the script was found.
    NoMap,
    /// A map was found but cannot be used.
    Broken(String),
    /// The map, loaded.
    Map(Box<Script>),
}

/// How the profile names files: urls, POSIX paths or Windows paths (`C:\\app\\x.js` as a tick
/// log writes them, `C:/app/x.js` from a `.cpuprofile`'s `file:///C:/app/x.js`). Mapped sources
/// are named the same way, with the script's separator.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Url,
    Path,
    WindowsPath { backslash: bool },
}

/// A script as the profile names it.
struct ScriptName {
    /// What its map and sources resolve against.
    url: Url,
    /// The decoded segments of its path, for the source map folder.
    segments: Vec<String>,
    style: Style,
}

/// The folders where a map that a script's comment names may be read, besides the script's
/// own folder (and below): the source-map folder and the profile's folder. A comment may name
/// any path (`/etc/passwd`, `../../home/x/.ssh/id_rsa`); nothing outside these is read.
#[derive(Clone, Copy)]
struct Allowed<'a> {
    dir: Option<&'a Path>,
    near: Option<&'a Path>,
}

/// Finds and loads the source map of the script the profile names `file`: in `dir` first
/// (the script and what its comment names, else the map alone), then where the profile says
/// the script ran, then the same way as in `dir` in `near` (the profile's own folder, for a
/// profile kept beside a copy of the build it was recorded from).
pub(crate) fn find(file: &str, dir: Option<&Path>, near: Option<&Path>) -> Found {
    let Some(name) = script_name(file) else { return Found::NotAScript };
    let allowed = Allowed { dir, near };
    if let Some(found) = dir.and_then(|dir| find_in(&name, dir, allowed)) {
        return found;
    }
    let on_disk = match name.style {
        Style::WindowsPath { .. } => None,
        Style::Url | Style::Path => (name.url.scheme() == "file").then(|| name.url.to_file_path().ok()).flatten(),
    };
    if let Some(script) = on_disk {
        match read_file(&script) {
            Some(Ok(bytes)) => return from_script(&name, &script, bytes, dir, allowed),
            Some(Err(e)) => return Found::Broken(format!("{}: {e}", script.display())),
            None => {}
        }
    }
    near.and_then(|near| find_in(&name, near, allowed)).unwrap_or(Found::NoMap)
}

/// The script's copy in `dir` (see [`in_dir`]) and its map, or the map alone there; `None`
/// when `dir` holds neither.
fn find_in(name: &ScriptName, dir: &Path, allowed: Allowed<'_>) -> Option<Found> {
    for script in in_dir(dir, &name.segments) {
        match read_file(&script) {
            Some(Ok(bytes)) => {
                return match from_script(name, &script, bytes, Some(dir), allowed) {
                    Found::NoMap => None,
                    found => Some(found),
                }
            }
            Some(Err(e)) => return Some(Found::Broken(format!("{}: {e}", script.display()))),
            None => {}
        }
        let map = PathBuf::from(format!("{}.map", script.display()));
        if is_regular(&map) {
            let reference = format!("{}.map", name.segments.last().map_or("", String::as_str));
            return Some(load_map(&map, name, &reference, None));
        }
    }
    None
}

/// Where `dir` may hold a copy of the script whose path is `segments`, most specific first:
/// `dir/<the path's last k segments>` for every k (`dist/routes/users.js` is found as
/// `DIR/routes/users.js` before `DIR/users.js`). A script under `node_modules/` is looked
/// for only with its package's path (`DIR/node_modules/pkg/index.js`), never as a bare
/// `DIR/index.js`, which is the app's more often than not.
fn in_dir(dir: &Path, segments: &[String]) -> Vec<PathBuf> {
    if !segments.iter().all(|s| is_plain_segment(s)) {
        return Vec::new();
    }
    let shortest = segments.iter().rposition(|s| s == "node_modules").unwrap_or(segments.len().saturating_sub(1));
    let longest = segments.len().saturating_sub(MAX_DIR_DEPTH);
    (longest..=shortest).map(|k| segments[k..].iter().fold(dir.to_path_buf(), |path, s| path.join(s))).collect()
}

/// The script and its map: what its `sourceMappingURL` says, else `<script>.map` beside it.
/// A map the comment names is looked for beside the script and by its file name in `dir`, and
/// read only from the script's folder (or below) or an `allowed` folder.
fn from_script(name: &ScriptName, path: &Path, bytes: Vec<u8>, dir: Option<&Path>, allowed: Allowed<'_>) -> Found {
    let text = ScriptText::new(
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    );
    let reference = source_mapping_url(text.as_str()).map(str::to_owned);
    let Some(reference) = reference else {
        let sibling = PathBuf::from(format!("{}.map", path.display()));
        if is_regular(&sibling) {
            let reference = format!("{}.map", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
            return load_map(&sibling, name, &reference, Some(text));
        }
        return Found::NoMap;
    };
    if reference.get(..5).is_some_and(|scheme| scheme.eq_ignore_ascii_case("data:")) {
        return match inline_map(&reference) {
            Ok(map) => script(map, &name.url, Some(text), name.style),
            Err(e) => Found::Broken(format!("{}: its inline source map cannot be read: {e}", path.display())),
        };
    }
    // The map's place on this disk: relative to where the script was found; an absolute or
    // remote reference is looked for by its file name in the source map folder.
    let beside = absolute_file_url(path).and_then(|u| u.join(&reference).ok()).and_then(|u| u.to_file_path().ok());
    let by_name = name.url.join(&reference).ok().as_ref().and_then(file_name).filter(|n| is_plain_segment(n));
    let in_dir = dir.zip(by_name).map(|(d, n)| d.join(n));
    let roots: Vec<PathBuf> = [path.parent(), allowed.dir, allowed.near]
        .into_iter()
        .flatten()
        .filter_map(|r| r.canonicalize().ok())
        .collect();
    let mut outside = false;
    for map in beside.iter().chain(&in_dir) {
        // Resolved (links included) before anything is read: it must lie in one of the roots.
        let Ok(real) = map.canonicalize() else { continue };
        if !roots.iter().any(|root| real.starts_with(root)) {
            outside = true;
        } else if is_regular(&real) {
            return load_map(&real, name, &reference, Some(text));
        }
    }
    let why = if outside {
        "is outside the script's folder, the source-map folder and the profile's folder: not read"
    } else {
        "was not found (or is no regular file)"
    };
    Found::Broken(format!("{}: its source map {} {why}", path.display(), crate::shortened(&reference, 80)))
}

/// One path segment that stays where it is joined: not empty, `.`, `..`, nor holding a separator.
fn is_plain_segment(segment: &str) -> bool {
    !(segment.is_empty() || segment == "." || segment == ".." || segment.contains(['/', '\\']))
}

/// Decodes a `data:` url: JSON, base64 or percent-encoded, whatever its charset says.
fn inline_map(url: &str) -> Result<DecodedMap, String> {
    let (meta, payload) = url["data:".len()..].split_once(',').ok_or("a data: url without a comma")?;
    let mut params = meta.split(';').map(str::trim);
    let media = params.next().unwrap_or_default().to_ascii_lowercase();
    if !(media.is_empty() || media.ends_with("json")) {
        return Err("its media type is not JSON".to_owned());
    }
    let mut bytes: Vec<u8> = percent_encoding::percent_decode_str(payload).collect();
    if params.any(|p| p.eq_ignore_ascii_case("base64")) {
        bytes.retain(|b| !b.is_ascii_whitespace());
        let unpadded = bytes.strip_suffix(b"==").or_else(|| bytes.strip_suffix(b"=")).unwrap_or(&bytes);
        bytes = data_encoding::BASE64_NOPAD.decode(unpadded).map_err(|e| format!("bad base64: {e}"))?;
    }
    decode(&bytes).map_err(|e| describe(&e))
}

/// What is wrong with a map, without a word of its content: the decoder's messages quote it
/// (a JSON value of the wrong type, an index map's section url, a bad base64 character), and
/// a comment can name any file.
fn describe(error: &sourcemap::Error) -> String {
    use sourcemap::Error;
    match error {
        Error::BadJson(e) => {
            let what = match e.classify() {
                serde_json::error::Category::Io => "it cannot be read",
                serde_json::error::Category::Syntax => "invalid JSON",
                serde_json::error::Category::Data => "JSON that is not a source map's",
                serde_json::error::Category::Eof => "JSON cut short",
            };
            format!("{what} (line {}, column {})", e.line(), e.column())
        }
        Error::Io(e) => format!("it cannot be read ({})", e.kind()),
        Error::Utf8(_) => "it is not UTF-8".to_owned(),
        Error::InvalidBase64(_) => "its mappings hold a character that is not base64".to_owned(),
        Error::CannotFlatten(_) => "an index map with a section that has no map".to_owned(),
        Error::InvalidDataUrl => "an invalid data: url".to_owned(),
        Error::InvalidRangeMappingIndex(_) => "its range mappings are invalid".to_owned(),
        // The other messages are fixed texts and numbers.
        other => other.to_string(),
    }
}

/// Decodes a map, which may start with a byte order mark.
fn decode(bytes: &[u8]) -> sourcemap::Result<DecodedMap> {
    sourcemap::decode_slice(bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes))
}

/// True when every section of an index map (and of the index maps inside it, at most 8 deep)
/// starts within [`MAX_SECTION_OFFSET`].
fn offsets_in_range(index: &sourcemap::SourceMapIndex, depth: u32) -> bool {
    depth < 8
        && index.sections().all(|section| {
            let (line, column) = section.get_offset();
            line < MAX_SECTION_OFFSET
                && column < MAX_SECTION_OFFSET
                && match section.get_sourcemap() {
                    Some(DecodedMap::Index(inner)) => offsets_in_range(inner, depth + 1),
                    _ => true,
                }
        })
}

/// Reads and decodes the map at `path`; `reference` is where it lies relative to the script's
/// url, which is what its sources are relative to.
fn load_map(path: &Path, name: &ScriptName, reference: &str, text: Option<ScriptText>) -> Found {
    let bytes = match read_file(path) {
        Some(Ok(bytes)) => bytes,
        Some(Err(e)) => return Found::Broken(format!("{}: {e}", path.display())),
        None => return Found::Broken(format!("{}: not a regular file with content", path.display())),
    };
    match decode(&bytes) {
        Ok(map) => script(map, &name.url.join(reference).unwrap_or_else(|_| name.url.clone()), text, name.style),
        Err(e) => Found::Broken(format!("{}: not a usable source map: {}", path.display(), describe(&e))),
    }
}

fn script(map: DecodedMap, map_url: &Url, text: Option<ScriptText>, style: Style) -> Found {
    let map = match map {
        DecodedMap::Regular(map) => map,
        DecodedMap::Index(index) => {
            if !offsets_in_range(&index, 0) {
                return Found::Broken(format!("{map_url}: an index map with a section offset out of range"));
            }
            match index.flatten() {
                Ok(map) => map,
                Err(e) => {
                    return Found::Broken(format!("{map_url}: an index map that cannot be flattened: {}", describe(&e)))
                }
            }
        }
        DecodedMap::Hermes(hermes) => (*hermes).clone(),
    };
    let sources = (0..map.get_source_count())
        .map(|i| {
            let source = map.get_source(i).filter(|s| !s.is_empty())?;
            if is_windows_path(source) {
                return Some(source.to_owned());
            }
            Some(match map_url.join(source) {
                Ok(url) if url.scheme() == "file" && style == Style::Path => {
                    url.to_file_path().map_or_else(|()| url.to_string(), |p| p.display().to_string())
                }
                Ok(url) if url.scheme() == "file" => match style {
                    Style::WindowsPath { backslash } => windows_path(&url, backslash),
                    _ => url.to_string(),
                },
                Ok(url) => url.to_string(),
                Err(_) => source.to_owned(),
            })
        })
        .collect();
    // The decoder adds each mapping's relative numbers modulo 2^32: one that goes below 0
    // comes out near 2^32, which no script has.
    let negative = map
        .tokens()
        .filter(|t| {
            !in_range(t.get_dst_col()) || t.has_source() && !(in_range(t.get_src_line()) && in_range(t.get_src_col()))
        })
        .count();
    Found::Map(Box::new(Script {
        map,
        text,
        sources,
        line_places: Mutex::default(),
        declarations: Mutex::default(),
        negative,
    }))
}

/// A decoded line or column that did not go below 0 (see [`Script::negative`]).
pub(crate) fn in_range(value: u32) -> bool {
    value < 1 << 31
}

/// True for a regular file (or a link to one) with content: never a device, FIFO or
/// directory, nor a `/proc` file (they say they are empty), which a hostile profile or
/// comment could name (`/dev/zero` or `/proc/kmsg` would never end).
fn is_regular(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// The bytes of a regular file, at most as many as it had when asked; `None` when `path` is
/// not one. Files over [`MAX_FILE`] are refused (a sparse file can claim any size).
fn read_file(path: &Path) -> Option<std::io::Result<Vec<u8>>> {
    let metadata = std::fs::metadata(path).ok().filter(|m| m.is_file() && m.len() > 0)?;
    if metadata.len() > MAX_FILE {
        let message = format!("{} bytes, more than the {} a script or map may have", metadata.len(), MAX_FILE);
        return Some(Err(std::io::Error::new(std::io::ErrorKind::InvalidData, message)));
    }
    Some(std::fs::File::open(path).and_then(|file| {
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(usize::try_from(metadata.len()).unwrap_or(usize::MAX))?;
        file.take(metadata.len()).read_to_end(&mut bytes)?;
        Ok(bytes)
    }))
}

/// `C:\dir\file.js` or `C:/dir/file.js`, or a UNC path.
fn is_windows_path(file: &str) -> bool {
    let bytes = file.as_bytes();
    (bytes.len() > 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && matches!(bytes[2], b'\\' | b'/'))
        || file.starts_with("\\\\")
}

/// A `file:///C:/dir/file.ts` url as the Windows path `C:\dir\file.ts`, and
/// `file://server/share/file.ts` as `\\server\share\file.ts`; with `/` in place of `\`
/// unless `backslash`.
fn windows_path(url: &Url, backslash: bool) -> String {
    let path = percent_encoding::percent_decode_str(url.path()).decode_utf8_lossy();
    let separator = if backslash { "\\" } else { "/" };
    match url.host_str().filter(|h| !h.is_empty()) {
        Some(host) => format!("\\\\{host}{}", path.replace('/', "\\")),
        None => path.trim_start_matches('/').replace('/', separator),
    }
}

/// The script the profile names `file`: a url with a scheme, a Windows path, or a path (made
/// absolute); `None` for what cannot have a map.
fn script_name(file: &str) -> Option<ScriptName> {
    if file.is_empty() || file.starts_with("node:") {
        return None;
    }
    let (url, style) = if let Some(unc) = file.strip_prefix("\\\\") {
        (Url::parse(&format!("file://{}", unc.replace('\\', "/"))).ok()?, Style::WindowsPath { backslash: true })
    } else if is_windows_path(file) {
        let backslash = file.contains('\\');
        (Url::parse(&format!("file:///{}", file.replace('\\', "/"))).ok()?, Style::WindowsPath { backslash })
    } else if file.contains("://") {
        (Url::parse(file).ok()?, Style::Url)
    } else {
        (absolute_file_url(Path::new(file))?, Style::Path)
    };
    let segments = url
        .path_segments()
        .map(|s| {
            s.filter(|s| !s.is_empty())
                .map(|s| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned())
        })
        .into_iter()
        .flatten()
        .collect();
    Some(ScriptName { url, segments, style })
}

fn absolute_file_url(path: &Path) -> Option<Url> {
    Url::from_file_path(std::path::absolute(path).ok()?).ok()
}

/// The last segment of `url`'s path, decoded.
fn file_name(url: &Url) -> Option<String> {
    let segment = url.path_segments()?.next_back().filter(|s| !s.is_empty())?;
    Some(percent_encoding::percent_decode_str(segment).decode_utf8_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_in_the_map_folder_most_specific_first() {
        let name = script_name("file:///srv/app/dist/routes/users.js").unwrap();
        let dir = Path::new("/maps");
        let expected = [
            "srv/app/dist/routes/users.js",
            "app/dist/routes/users.js",
            "dist/routes/users.js",
            "routes/users.js",
            "users.js",
        ];
        assert_eq!(in_dir(dir, &name.segments), expected.map(|p| dir.join(p)));
        let package = script_name("/srv/app/node_modules/@scope/pkg/index.js").unwrap();
        assert_eq!(in_dir(dir, &package.segments).last().unwrap(), &dir.join("node_modules/@scope/pkg/index.js"));
        let windows = script_name(r"C:\Users\dev\proj\dist\app.min.js").unwrap();
        assert!(windows.style == Style::WindowsPath { backslash: true });
        assert_eq!(in_dir(dir, &windows.segments).last().unwrap(), &dir.join("app.min.js"));
        assert_eq!(windows_path(&windows.url.join("../src/a b.ts").unwrap(), true), r"C:\Users\dev\proj\src\a b.ts");
        // From a `.cpuprofile`'s url the model holds `C:/…`: its sources keep the `/`.
        let slashed = script_name("C:/Users/dev/my proj/dist/app.min.js").unwrap();
        assert!(slashed.style == Style::WindowsPath { backslash: false });
        let source = slashed.url.join("../node_modules/fast-deep-equal/index.js").unwrap();
        assert_eq!(windows_path(&source, false), "C:/Users/dev/my proj/node_modules/fast-deep-equal/index.js");
        let unc = script_name(r"\\fileserver\share\app\dist\app.js").unwrap();
        assert_eq!(
            windows_path(&unc.url.join("../src/pricing.ts").unwrap(), true),
            r"\\fileserver\share\app\src\pricing.ts"
        );
        let deep = script_name(&format!("/{}x.js", "d/".repeat(10_000))).unwrap();
        assert_eq!(in_dir(dir, &deep.segments).len(), MAX_DIR_DEPTH);
        let spaced = script_name("file:///srv/my%20app/a.js").unwrap();
        assert_eq!(in_dir(dir, &spaced.segments)[0], dir.join("srv/my app/a.js"));
        assert!(script_name("node:internal/main").is_none());
    }

    #[test]
    fn inline_maps_in_every_spelling() {
        let json = r#"{"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA"}"#;
        let percent = percent_encoding::percent_encode(json.as_bytes(), percent_encoding::NON_ALPHANUMERIC).to_string();
        for url in [
            format!("data:application/json,{json}"),
            format!("data:application/json;charset=UTF-8,{percent}"),
            "data:application/json;charset=UTF-8;base64,eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpbImEudHMiXSwibmFtZXMiOltdLCJtYXBwaW5ncyI6IkFBQUEifQ==".to_owned(),
            "data:application/json;base64,eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpbImEudHMiXSwibmFtZXMiOltdLCJtYXBwaW5ncyI6IkFBQUEifQ==".to_owned(),
        ] {
            let map = inline_map(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert!(matches!(map, DecodedMap::Regular(m) if m.get_source(0) == Some("a.ts")), "{url}");
        }
        assert!(inline_map("data:text/html,<b>").is_err());
        assert!(inline_map("data:application/json").is_err());
    }
}
