//! Finding a script's source map (a `sourceMappingURL` comment, inline or not, a sibling
//! `.map`, or a file in `--source-map-dir`) and loading it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustc_hash::FxHashMap;

use sourcemap::{DecodedMap, SourceMap};
use url::Url;

use crate::text::{source_mapping_url, ScriptText};

/// A script with its source map, ready for lookups.
pub(crate) struct Script {
    pub(crate) map: SourceMap,
    /// The generated code, when the script itself was found (names are bound with it).
    pub(crate) text: Option<ScriptText>,
    /// Each source of the map, resolved against the map's url, as the profile should name it.
    pub(crate) sources: Vec<String>,
    /// The one original `(source, line)` of each generated line asked about, if it has one:
    /// a line can hold hundreds of thousands of mappings, and every line hit asks.
    pub(crate) line_places: Mutex<FxHashMap<u32, Option<(u32, u32)>>>,
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

/// Finds and loads the source map of the script the profile names `file`.
pub(crate) fn find(file: &str, dir: Option<&Path>) -> Found {
    let Some(url) = script_url(file) else { return Found::NotAScript };
    let name = file_name(&url).unwrap_or_default();
    let in_dir = dir.filter(|_| !name.is_empty()).map(|d| d.join(&name));
    let on_disk = (url.scheme() == "file").then(|| url.to_file_path().ok()).flatten();
    for path in in_dir.iter().chain(&on_disk) {
        if let Some(Ok(bytes)) = read_file(path) {
            return from_script(&url, path, bytes, dir, file_style(file));
        }
    }
    // Only the map, under the conventional name.
    if let Some(dir) = dir.filter(|_| !name.is_empty()) {
        let map = dir.join(format!("{name}.map"));
        if is_regular(&map) {
            return load_map(&map, &url, &format!("{name}.map"), None, file_style(file));
        }
    }
    Found::NoMap
}

/// The script and its map: what its `sourceMappingURL` says, else `<script>.map` beside it.
fn from_script(url: &Url, path: &Path, bytes: Vec<u8>, dir: Option<&Path>, style: FileStyle) -> Found {
    let text = ScriptText::new(
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    );
    let reference = source_mapping_url(text.as_str()).map(str::to_owned);
    let Some(reference) = reference else {
        let sibling = PathBuf::from(format!("{}.map", path.display()));
        let name = format!("{}.map", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
        if is_regular(&sibling) {
            return load_map(&sibling, url, &name, Some(text), style);
        }
        return Found::NoMap;
    };
    if reference.starts_with("data:") {
        return match sourcemap::decode_data_url(&reference) {
            Ok(map) => script(map, url, Some(text), style),
            Err(e) => Found::Broken(format!("{}: its inline source map cannot be read: {e}", path.display())),
        };
    }
    // The map's place on this disk: relative to where the script was found (or in --source-map-dir).
    let beside = absolute_file_url(path).and_then(|u| u.join(&reference).ok()).and_then(|u| u.to_file_path().ok());
    let in_dir = dir.zip(url.join(&reference).ok().as_ref().and_then(file_name)).map(|(d, name)| d.join(name));
    match beside.iter().chain(&in_dir).find(|p| is_regular(p)) {
        Some(map) => load_map(map, url, &reference, Some(text), style),
        None => Found::Broken(format!("{}: its source map {reference} was not found", path.display())),
    }
}

/// Reads and decodes the map at `path`; `reference` is where it lies relative to the script's
/// url, which is what its sources are relative to.
fn load_map(path: &Path, script_url: &Url, reference: &str, text: Option<ScriptText>, style: FileStyle) -> Found {
    let bytes = match read_file(path) {
        Some(Ok(bytes)) => bytes,
        Some(Err(e)) => return Found::Broken(format!("{}: {e}", path.display())),
        None => return Found::Broken(format!("{}: not a regular file", path.display())),
    };
    match sourcemap::decode_slice(&bytes) {
        Ok(map) => script(map, &script_url.join(reference).unwrap_or_else(|_| script_url.clone()), text, style),
        Err(e) => Found::Broken(format!("{}: not a usable source map: {e}", path.display())),
    }
}

fn script(map: DecodedMap, map_url: &Url, text: Option<ScriptText>, style: FileStyle) -> Found {
    let map = match map {
        DecodedMap::Regular(map) => map,
        DecodedMap::Index(index) => match index.flatten() {
            Ok(map) => map,
            Err(e) => return Found::Broken(format!("{map_url}: an index map that cannot be flattened: {e}")),
        },
        DecodedMap::Hermes(hermes) => (*hermes).clone(),
    };
    let sources = (0..map.get_source_count())
        .map(|i| {
            let source = map.get_source(i).unwrap_or_default();
            match map_url.join(source) {
                Ok(url) if style == FileStyle::Path && url.scheme() == "file" => {
                    url.to_file_path().map_or_else(|()| url.to_string(), |p| p.display().to_string())
                }
                Ok(url) => url.to_string(),
                Err(_) => source.to_owned(),
            }
        })
        .collect();
    Found::Map(Box::new(Script { map, text, sources, line_places: Mutex::default() }))
}

/// True for a regular file (or a link to one): never a device, FIFO or directory, which a
/// hostile profile or comment could name (`/dev/zero` would never end).
fn is_regular(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The bytes of a regular file; `None` when `path` is not one.
fn read_file(path: &Path) -> Option<std::io::Result<Vec<u8>>> {
    is_regular(path).then(|| std::fs::read(path))
}

/// How the profile names files: `file://` urls (`.cpuprofile`) or plain paths (tick logs).
#[derive(Clone, Copy, PartialEq, Eq)]
enum FileStyle {
    Url,
    Path,
}

fn file_style(file: &str) -> FileStyle {
    if file.contains("://") {
        FileStyle::Url
    } else {
        FileStyle::Path
    }
}

/// The url of a script as the profile names it: a url with a scheme, or a path (made absolute).
fn script_url(file: &str) -> Option<Url> {
    if file.is_empty() || file.starts_with("node:") {
        return None;
    }
    if file.contains("://") {
        return Url::parse(file).ok();
    }
    absolute_file_url(Path::new(file))
}

fn absolute_file_url(path: &Path) -> Option<Url> {
    Url::from_file_path(std::path::absolute(path).ok()?).ok()
}

/// The last segment of `url`'s path, decoded: what `--source-map-dir` looks for.
fn file_name(url: &Url) -> Option<String> {
    let segment = url.path_segments()?.next_back().filter(|s| !s.is_empty())?;
    Some(percent_encoding::percent_decode_str(segment).decode_utf8_lossy().into_owned())
}
