//! Shared helpers of the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub(crate) mod hostile;

/// The repository root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// The `cpuprof` binary under test, run from the repository root.
pub(crate) fn cpuprof() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("cpuprof").expect("cpuprof binary");
    // Tables are fitted to COLUMNS when it is set: tests see them as a pipe does.
    // A job summary file of the CI running the tests is not theirs to add to.
    cmd.current_dir(root()).env_remove("COLUMNS").env_remove("GITHUB_STEP_SUMMARY");
    cmd
}

/// Installs the npm packages an oracle in `dir` (relative to the root) needs, from its
/// package-lock.json, unless they are there: `cargo test` alone sets up what it needs
/// (`.ci/run` installs them up front). Once per test binary; npm's own lock serializes binaries.
pub(crate) fn npm_ci(dir: &str) {
    static DONE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if done.iter().any(|d| d == dir) {
        return;
    }
    let folder = root().join(dir);
    if !folder.join("node_modules/.package-lock.json").is_file() {
        let status = Command::new("npm")
            .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&folder)
            .status()
            .expect("npm (it comes with node) installs the oracle's packages");
        assert!(status.success(), "`npm ci` failed in {dir}");
    }
    done.push(dir.to_owned());
}

/// Runs the independent JavaScript oracle (`fixtures/oracle/top.js`) with node.
pub(crate) fn oracle(args: &[&str]) -> serde_json::Value {
    oracle_script("fixtures/oracle/top.js", args)
}

/// Runs one of the oracle scripts (`fixtures/oracle/*.js`) with node; it prints JSON.
#[allow(dead_code)] // not every test file uses every oracle
pub(crate) fn oracle_script(script: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new("node")
        .arg(script)
        .args(args)
        .current_dir(root())
        .output()
        .expect("node must be installed to run the oracle");
    assert!(out.status.success(), "oracle failed on {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("oracle prints JSON")
}

/// Sorted paths of the files in `dir` (relative to the root) whose names end in one of `exts`.
pub(crate) fn files(dir: &str, exts: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root().join(dir))
        .expect("fixture folder")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .filter(|name| exts.iter().any(|e| name.ends_with(e)))
        .map(|name| format!("{dir}/{name}"))
        .collect();
    out.sort();
    out
}

/// Differences between two `top --format json` reports, as readable lines (percentages
/// within 1e-9); `also` names header fields to compare besides the totals.
pub(crate) fn report_differences(ours: &Value, theirs: &Value, also: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for key in also.iter().copied().chain(["unit", "total", "samples", "duration_ns", "interval_ns"]) {
        if ours[key] != theirs[key] {
            out.push(format!("{key}: cpuprof {} vs oracle {}", ours[key], theirs[key]));
        }
    }
    let (a, b) = (ours["rows"].as_array().expect("rows"), theirs["rows"].as_array().expect("rows"));
    if a.len() != b.len() {
        out.push(format!("{} rows vs oracle {}", a.len(), b.len()));
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        for key in ["name", "file", "line", "column", "kind", "self", "self_samples", "total", "total_samples"] {
            if x[key] != y[key] {
                out.push(format!("row {i} {key}: cpuprof {} vs oracle {} (oracle row: {y})", x[key], y[key]));
            }
        }
        for key in ["self_pct", "total_pct"] {
            let (p, q) = (x[key].as_f64().unwrap_or(f64::NAN), y[key].as_f64().unwrap_or(f64::NAN));
            if (p - q).abs() > 1e-9 {
                out.push(format!("row {i} {key}: cpuprof {p} vs oracle {q}"));
            }
        }
    }
    out
}

/// `go`, if it is installed (`GO` names another one): `go tool pprof` is the pprof client the
/// tests check what `convert` writes with.
pub(crate) fn go() -> Option<PathBuf> {
    let go = PathBuf::from(std::env::var_os("GO").unwrap_or_else(|| "go".into()));
    let works = Command::new(&go).arg("version").output().is_ok_and(|o| o.status.success());
    works.then_some(go)
}

/// A path cleaned as Go's `filepath.Clean` cleans it (on Unix), which pprof does to file names.
pub(crate) fn clean(path: &str) -> String {
    if path.is_empty() {
        return String::new();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if rooted => {}
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// Runs a browser check (`node SCRIPT ARGS…`, a script of tests/browser that drives headless
/// Chromium); `None` when no Chromium is installed (exit 77), which only outside CI is a skip.
pub(crate) fn browser_check(script: &str, args: &[&std::ffi::OsStr]) -> Option<std::process::Output> {
    let out =
        Command::new("node").arg(script).args(args).current_dir(root()).output().expect("node runs the browser check");
    if out.status.code() == Some(77) {
        assert!(std::env::var_os("CI").is_none(), "CI must have Chromium: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(out)
}

/// `cpuprof ARGS --format json`, asked of the library rather than the binary: the command line's
/// words become the command's request (positionals its inputs, pattern and input; `--flag
/// value` and `--switch` its fields, as an MCP call names them), which is executed and rendered
/// as the binary would. For the oracle tests, which check analyses, not processes. Errors: the
/// exit code the command line would give (2 for usage, else 1) and the message.
#[allow(dead_code)] // not every test file asks the library
pub(crate) fn library_json(args: &[&str]) -> Result<Value, (i32, String)> {
    use cpuprof_app::calls::Lists;
    const SWITCHES: &[&str] = &[
        "include_idle",
        "all",
        "split_tiers",
        "source_maps",
        "bottom_up",
        "no_fold_chains",
        "collapse_recursion",
        "full",
    ];
    let (command, words) = args.split_first().expect("a command");
    let mut fields = serde_json::Map::new();
    let mut positionals = Vec::new();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        let Some(flag) = word.strip_prefix("--").or((*word == "-n").then_some("limit")) else {
            positionals.push((*word).to_owned());
            continue;
        };
        let field = flag.replace('-', "_");
        let value = if SWITCHES.contains(&field.as_str()) {
            Value::Bool(true)
        } else if field == "between" {
            let (a, b) = (words.next().expect("A"), words.next().expect("B"));
            serde_json::json!([a, b])
        } else {
            Value::String((*words.next().unwrap_or_else(|| panic!("{word} takes a value"))).to_owned())
        };
        fields.insert(field, value);
    }
    let path = |p: &str| Value::String(if p == "-" { p.to_owned() } else { root().join(p).display().to_string() });
    match (*command, positionals.as_slice()) {
        ("top", inputs) => {
            fields.insert("inputs".to_owned(), inputs.iter().map(|p| path(p)).collect());
        }
        ("tree" | "timeline" | "blocks" | "annotate" | "jit", [input]) => {
            fields.insert("input".to_owned(), path(input));
        }
        // `jit FILE PATTERN` takes them the other way round.
        ("callers" | "callees" | "explain" | "annotate", [pattern, input]) | ("jit", [input, pattern]) => {
            fields.insert("pattern".to_owned(), Value::String(pattern.clone()));
            fields.insert("input".to_owned(), path(input));
        }
        // Not a request of these (yet): the binary answers.
        _ => {
            let out = cpuprof().args(args).args(["--format", "json"]).output().expect("run cpuprof");
            if !out.status.success() {
                return Err((out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned()));
            }
            return Ok(serde_json::from_slice(&out.stdout).expect("cpuprof prints JSON"));
        }
    }
    let json = cpuprof_render::Format::Json;
    let terminal = cpuprof_render::Terminal { width: None, cwd: None, color: false };
    let (answer, _) = cpuprof_app::said::collect(|| -> Result<String, (i32, String)> {
        let failed = |e: anyhow::Error| (if cpuprof_app::is_usage(&e) { 2 } else { 1 }, format!("{e:#}"));
        Ok(match *command {
            "top" => {
                let request: cpuprof_app::top::TopRequest = request(fields)?;
                cpuprof_render::render_top(&request.execute().map_err(failed)?.document(terminal), json)
            }
            "tree" => {
                let request: cpuprof_app::calls::TreeRequest = request(fields)?;
                request.execute(|a| cpuprof_render::render_tree(&a.document(None), json)).map_err(failed)?
            }
            "timeline" => {
                let request: cpuprof_app::timeline::TimelineRequest = request(fields)?;
                cpuprof_render::render_timeline(&request.execute().map_err(failed)?.document(None, false), json)
            }
            "blocks" => {
                let request: cpuprof_app::timeline::BlocksRequest = request(fields)?;
                cpuprof_render::render_blocks(&request.execute().map_err(failed)?.document(None), json)
            }
            "annotate" => {
                let request: cpuprof_app::annotate::AnnotateRequest = request(fields)?;
                request.execute(|a| cpuprof_render::render_annotate(&a.document(terminal), json)).map_err(failed)?
            }
            "jit" => {
                let request: cpuprof_app::jit::JitRequest = request(fields)?;
                request.execute(|a| cpuprof_render::render_jit(&a.document(terminal), json)).map_err(failed)?
            }
            calls => {
                let lists = match calls {
                    "callers" => Lists::Callers,
                    "callees" => Lists::Callees,
                    _ => Lists::Both,
                };
                let request: cpuprof_app::calls::CallsRequest = request(fields)?;
                request.execute(lists, |a| cpuprof_render::render_calls(&a.document(None), json)).map_err(failed)?
            }
        })
    });
    Ok(serde_json::from_str(&answer?).expect("cpuprof renders JSON"))
}

/// The request of `fields` ([`library_json`]), each number typed as the request's schema says it is.
fn request<T: serde::de::DeserializeOwned + schemars::JsonSchema>(
    mut fields: serde_json::Map<String, Value>,
) -> Result<T, (i32, String)> {
    let schema = schemars::schema_for!(T);
    let properties = schema.as_value().get("properties").cloned().unwrap_or(Value::Null);
    // A word the request does not take would be dropped by serde (flattened requests cannot
    // deny unknown fields): an oracle test must not pass while ignoring an option.
    if let Some(unknown) = fields.keys().find(|k| properties.get(k.as_str()).is_none()) {
        panic!("library_json: the request takes no {unknown}");
    }
    for (name, value) in &mut fields {
        let kind = properties[name.as_str()]["type"].to_string();
        if let Value::String(text) = value {
            if kind.contains("integer") {
                *value = text.parse::<u64>().map_or_else(|_| value.clone(), Value::from);
            } else if kind.contains("number") {
                *value = text.parse::<f64>().map_or_else(|_| value.clone(), Value::from);
            }
        }
    }
    serde_json::from_value(Value::Object(fields)).map_err(|e| (2, e.to_string()))
}
