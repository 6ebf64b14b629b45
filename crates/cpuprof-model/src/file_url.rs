//! One spelling of a script on disk: its path. V8 names scripts in a `.cpuprofile` by
//! `file://` url (`file:///srv/my%20app/a.js`), tick logs and `node --prof-process` by path
//! (`/srv/my app/a.js`); the model holds the path, so that every output, filter and diff sees
//! one spelling whatever the input ([`crate::ProfileBuilder::func`] turns urls into paths).

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};
use std::borrow::Cow;

/// The path a `file://` url names, as Node's `url.fileURLToPath` gives it on POSIX
/// (percent-decoded; query and fragment dropped; `file://localhost/` as `file:///`), and
/// `file:///C:/x.js` as `C:/x.js`. `None` when `url` is not a `file://` url, or names no
/// local path: a host, an encoded `/` (`%2F`), or bytes that are not UTF-8 once decoded.
pub fn path_of_file_url(url: &str) -> Option<String> {
    let rest = url.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").filter(|r| r.starts_with('/')).unwrap_or(rest);
    if !rest.starts_with(['/', '\\']) {
        return None;
    }
    // As a url parser reads it: the path ends at `?` or `#`, and `\` separates as `/` does.
    let encoded = rest.split(['?', '#']).next().unwrap_or_default().replace('\\', "/");
    if encoded.contains("%2F") || encoded.contains("%2f") {
        return None;
    }
    let path = percent_decode_str(&encoded).decode_utf8().ok()?;
    Some(match path.as_bytes() {
        [b'/', drive, b':', b'/' | b'\\', ..] if drive.is_ascii_alphabetic() => path[1..].to_owned(),
        _ => path.into_owned(),
    })
}

/// `file` as the model holds it: the path of a `file://` url (see [`path_of_file_url`]),
/// anything else as it is.
pub fn script_path(file: &str) -> Cow<'_, str> {
    match path_of_file_url(file) {
        Some(path) => Cow::Owned(path),
        None => Cow::Borrowed(file),
    }
}

/// What a url's path may not hold raw (the WHATWG path percent-encode set, and `%`, which
/// would read as an escape, and `\`, which a url parser reads as `/`): as Node's
/// `url.pathToFileURL` writes it.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\');

/// The `file://` url of an absolute path (`/srv/a.js`, `C:/a.js`, `C:\a.js`), as V8 names
/// scripts in a `.cpuprofile`; `None` for anything else (`node:fs`, a url, a relative path).
pub fn file_url_of_path(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let windows = matches!(bytes, [drive, b':', b'/' | b'\\', ..] if drive.is_ascii_alphabetic());
    if windows {
        return Some(format!("file:///{}", utf8_percent_encode(&path.replace('\\', "/"), PATH)));
    }
    (path.starts_with('/') && !path.starts_with("//")).then(|| format!("file://{}", utf8_percent_encode(path, PATH)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_urls_are_paths() {
        let cases = [
            ("file:///srv/app.js", Some("/srv/app.js")),
            ("file:///srv/my%20app/%C3%A9t%C3%A9.js", Some("/srv/my app/été.js")),
            ("file://localhost/srv/a.js", Some("/srv/a.js")),
            ("file:///srv/a.mjs?v=3#x", Some("/srv/a.mjs")),
            ("file:///C:/ci/app.js", Some("C:/ci/app.js")),
            ("file:///srv/a%25b.js", Some("/srv/a%b.js")),
            ("file://server/share/a.js", None),
            ("file:///srv/a%2Fb.js", None),
            ("file:///srv/%FF.js", None),
            ("/srv/app.js", None),
            ("node:fs", None),
            ("https://example.com/a.js", None),
        ];
        for (url, path) in cases {
            assert_eq!(path_of_file_url(url).as_deref(), path, "{url}");
        }
        assert_eq!(script_path("node:internal/timers"), "node:internal/timers");
    }

    #[test]
    fn paths_are_file_urls_and_back() {
        for path in ["/srv/app.js", "/srv/my app/été.js", "/a%b/#1?.js", "C:/ci/app.js", "/x/\"<{`}>\".js", "/a\\b.js"]
        {
            let url = file_url_of_path(path).unwrap();
            assert!(!url[7..].contains([' ', '#', '?', '"']), "{url}");
            assert_eq!(path_of_file_url(&url).as_deref(), Some(path), "{url}");
        }
        assert_eq!(file_url_of_path("/srv/my app/a.js").as_deref(), Some("file:///srv/my%20app/a.js"));
        assert_eq!(file_url_of_path("C:\\ci\\a.js").as_deref(), Some("file:///C:/ci/a.js"));
        for other in ["node:fs", "https://x/a.js", "app.js", "//host/a.js", ""] {
            assert_eq!(file_url_of_path(other), None, "{other}");
        }
    }
}
