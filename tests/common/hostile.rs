//! The hostile names every output is tested with (tests/hostile.rs, tests/report.rs).

use serde_json::{json, Value};

/// Function names from other people's code, one each; name `i` gets `i + 1` samples.
pub(crate) const NAMES: &[&str] = &[
    "<script>alert(1)</script>",
    "semi;colon",
    "pipe|name",
    "back`tick`",
    "new\nline",
    "cr\rname",
    "tab\tname",
    "\u{1b}[31mred\u{1b}[0m\u{1b}]0;title\u{7}",
    "bidi\u{202e}gnp.exe",
    "\u{2066}isolate\u{2069}",
    "nul\u{0}byte",
    "quote\"and'apos",
    "amp&amp;lt;",
    "]]>cdata<!--",
    "back\\slash\\n",
    "trailing 12",
    "=cmd|' /C calc'!A0",
    "emoji 🔥 中文 café",
    "\u{feff}bom\u{200b}zero",
    "del\u{7f}c1\u{85}",
    "line\u{2028}sep",
    "\u{fffe}\u{ffff}",
    "*star* _u_ [l](u) ~~s~~ #h",
    "{{template}} ${x}",
    "(program)",
    "bs\\\nlf\\\u{1b}esc\\",
    "soft\u{ad}hy\u{2060}phen\u{e0041}",
];

/// The one name given no url, so that its label ends in its trailing number.
pub(crate) const NO_URL: &str = "trailing 12";

/// The url of every hostile function but [`NO_URL`].
pub(crate) const URL: &str = "file:///app/h\u{202e};|<b>`x\u{1b}.js";

/// The url a hostile function has.
pub(crate) fn url_of(name: &str) -> &'static str {
    if name == NO_URL {
        ""
    } else {
        URL
    }
}

/// A .cpuprofile with `(root) → main → each of NAMES`, name `i` sampled `scale × (i + 1)` times, 1 ms apart.
pub(crate) fn hostile_cpuprofile(scale: usize) -> Value {
    let frame = |name: &str, url: &str, line: usize| json!({"functionName": name, "scriptId": "1", "url": url, "lineNumber": line, "columnNumber": 0});
    let mut nodes = vec![
        json!({"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}, "children": [2]}),
        json!({"id": 2, "callFrame": frame("main", "file:///app/<main>;|.js", 0), "children": (3..3 + NAMES.len()).collect::<Vec<_>>()}),
    ];
    let mut samples = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        nodes.push(json!({"id": 3 + i, "callFrame": frame(name, url_of(name), i)}));
        samples.extend(std::iter::repeat_n(3 + i, scale * (i + 1)));
    }
    let deltas = vec![1000; samples.len()];
    json!({"nodes": nodes, "startTime": 0, "endTime": 1000 * samples.len(), "samples": samples, "timeDeltas": deltas})
}
