//! The MCP tools as requests: a call's arguments are deserialized into the command's request
//! type (`cpuprof_app`), whose JSON schema is the tool's input schema; the request is executed,
//! and its answer rendered in the format asked (JSON by default, cut to the byte budget as it is
//! written) or written to the file asked. No command line is built or parsed, no output captured.

use std::path::{Path, PathBuf};

use cpuprof_app::annotate::AnnotateRequest;
use cpuprof_app::calls::{CallsRequest, Lists, TreeRequest};
use cpuprof_app::convert::ConvertRequest;
use cpuprof_app::diff::DiffRequest;
use cpuprof_app::fold::FlamegraphRequest;
use cpuprof_app::jit::JitRequest;
use cpuprof_app::report::ReportRequest;
use cpuprof_app::timeline::{BlocksRequest, TimelineRequest};
use cpuprof_app::top::TopRequest;
use cpuprof_app::ReadOptions;
use cpuprof_render::{Format, Terminal};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

/// The tools whose answer is a file they write (to `output`, or a default beside the profile).
pub(crate) const WRITERS: &[&str] = &["flamegraph", "report", "convert"];

/// The properties and required arguments of a request type's schema, subschemas inlined and
/// each property in the plain shapes clients read (an enum of names, a type or a list of them).
fn request_schema<T: JsonSchema>() -> (Map<String, Value>, Vec<Value>) {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let schema = schema.as_value();
    let mut properties = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    for property in properties.values_mut() {
        plain(property);
    }
    let required = schema.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    (properties, required)
}

/// A property's schema in plain shapes: `oneOf` a list of constants becomes an `enum`, `T or
/// null` becomes `T` (null is always "left out"), and its description one line.
fn plain(property: &mut Value) {
    let Some(object) = property.as_object_mut() else { return };
    if let Some(Value::Array(choices)) = object.get("oneOf") {
        let names: Option<Vec<Value>> = choices.iter().map(|c| c.get("const").cloned()).collect();
        if let Some(names) = names {
            object.remove("oneOf");
            object.insert("type".to_owned(), json!("string"));
            object.insert("enum".to_owned(), Value::Array(names));
        }
    }
    if let Some(Value::Array(types)) = object.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
        if let [one] = kept.as_slice() {
            object.insert("type".to_owned(), one.clone());
        }
    }
    if let Some(Value::Array(choices)) = object.get("anyOf").cloned() {
        let kept: Vec<Value> =
            choices.into_iter().filter(|c| c.get("type").and_then(Value::as_str) != Some("null")).collect();
        if let [one] = kept.as_slice() {
            object.remove("anyOf");
            if let Some(fields) = one.as_object() {
                for (k, v) in fields {
                    object.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            plain(property);
            return;
        }
    }
    object.remove("default");
    if let Some(Value::String(about)) = object.get_mut("description") {
        *about = about.replace('\n', " ");
    }
}

/// A tool's input schema's properties and required arguments (without `budget`, which every
/// tool takes): its request's, with `format` (the values `formats` lists, when its command has
/// a `--format`) and `output`.
pub(crate) fn schema(tool: &str, formats: &[String]) -> (Map<String, Value>, Vec<Value>) {
    let file = |about: &str| json!({ "type": "string", "description": about });
    let (mut properties, mut required) = match tool {
        "load" => {
            let (mut properties, mut required) = request_schema::<ReadOptions>();
            let about = "The profile's path (.cpuprofile, tick log, Chrome trace, pprof, folded stacks; gzip is fine)";
            properties.insert("input".to_owned(), file(about));
            required.push(json!("input"));
            return (properties, required);
        }
        "top" => request_schema::<TopRequest>(),
        "tree" => request_schema::<TreeRequest>(),
        "annotate" => request_schema::<AnnotateRequest>(),
        "jit" => request_schema::<JitRequest>(),
        "timeline" => request_schema::<TimelineRequest>(),
        "blocks" => request_schema::<BlocksRequest>(),
        "diff" => {
            let (mut properties, required) = request_schema::<DiffRequest>();
            properties.insert(
                "flamegraph".to_owned(),
                file("Also write a differential flame graph (red grew, blue shrank) to this SVG file"),
            );
            properties.insert(
                "report".to_owned(),
                file("Also write the comparison as one self-contained HTML page to this file"),
            );
            (properties, required)
        }
        "flamegraph" => request_schema::<FlamegraphRequest>(),
        "report" => request_schema::<ReportRequest>(),
        "convert" => return request_schema::<ConvertRequest>(),
        _ => request_schema::<CallsRequest>(),
    };
    if !formats.is_empty() {
        let about = "The answer's format; this server's default is json";
        properties.insert("format".to_owned(), json!({ "type": "string", "enum": formats, "description": about }));
    }
    let about = if WRITERS.contains(&tool) {
        "The file to write (written atomically; default: beside the profile); the answer is its path"
    } else {
        "Write the answer to this file (written atomically) and answer with its path and beginning"
    };
    properties.insert("output".to_owned(), file(about));
    required.dedup();
    (properties, required)
}

/// How a call's answer is shown: its format's name, and the files it goes to.
pub(crate) struct Shown {
    pub(crate) format: Option<String>,
    pub(crate) output: Option<PathBuf>,
    /// A diff's flame graph and page.
    pub(crate) flamegraph: Option<PathBuf>,
    pub(crate) page: Option<PathBuf>,
}

/// A call, its arguments checked against its tool's schema and deserialized.
pub(crate) enum Call {
    Load(TopRequest),
    Top(TopRequest),
    Tree(TreeRequest),
    Calls(CallsRequest, Lists),
    Annotate(AnnotateRequest),
    Jit(JitRequest),
    Timeline(TimelineRequest),
    Blocks(BlocksRequest),
    Diff(Box<DiffRequest>),
    Flamegraph(FlamegraphRequest),
    Report(ReportRequest),
    Convert(ConvertRequest),
}

/// `arguments` deserialized into `T`, with what serde says on a mismatch.
fn request<T: DeserializeOwned>(arguments: Map<String, Value>) -> Result<T, String> {
    serde_json::from_value(Value::Object(arguments)).map_err(|e| e.to_string())
}

/// Each argument in the type its schema gives it, where it reads as one (`"3"` for an integer,
/// `2` for a string, a lone value for a list), and each named value one of its `enum`'s: a
/// mismatch is refused naming the argument.
fn coerce(arguments: &mut Map<String, Value>, properties: &Map<String, Value>) -> Result<(), String> {
    for (name, value) in arguments.iter_mut() {
        let Some(schema) = properties.get(name) else { continue };
        let kind = schema.get("type").and_then(Value::as_str).unwrap_or_default();
        if kind == "array" && !value.is_array() {
            *value = Value::Array(vec![value.take()]);
        }
        let item_schema = if kind == "array" { schema.get("items").unwrap_or(&Value::Null) } else { schema };
        let item_kind = item_schema.get("type").and_then(Value::as_str).unwrap_or_default();
        let items: Vec<&mut Value> = match value {
            Value::Array(items) if kind == "array" => items.iter_mut().collect(),
            other => vec![other],
        };
        for item in items {
            let coerced = match (item_kind, &*item) {
                ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
                ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
                ("integer", Value::String(s)) => s.trim().parse::<u64>().ok().map(Value::from),
                ("number", Value::String(s)) => {
                    s.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)
                }
                ("boolean", Value::String(s)) => s.parse::<bool>().ok().map(Value::Bool),
                _ => None,
            };
            if let Some(coerced) = coerced {
                *item = coerced;
            }
            if let (Some(Value::Array(names)), Value::String(given)) = (item_schema.get("enum"), &*item) {
                if !names.iter().any(|n| n.as_str() == Some(given)) {
                    let names: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
                    return Err(format!("{name}: invalid value '{given}' (expected one of {})", names.join(", ")));
                }
            }
            let fits = match item_kind {
                "string" => item.is_string(),
                "integer" => item.is_u64(),
                "number" => item.is_number(),
                "boolean" => item.is_boolean(),
                _ => true,
            };
            // A size may be given with its unit (`max_input_size: "500MB"`).
            let sized = name == "max_input_size" && item.is_string();
            if !(fits || sized) {
                let expected = match item_kind {
                    "integer" => "a whole number of at least 0",
                    "number" => "a number",
                    "boolean" => "true or false",
                    _ => "a string",
                };
                return Err(format!("{name}: expected {expected}, found {item}"));
            }
        }
    }
    Ok(())
}

/// Reads a call: the arguments (nulls already left out, handles already replaced by their
/// paths) checked against the tool's schema, split into the request and how it is shown.
pub(crate) fn read_call(
    tool: &str,
    mut arguments: Map<String, Value>,
    properties: &Map<String, Value>,
    required: &[Value],
) -> Result<(Call, Shown), String> {
    if let Some(unknown) = arguments.keys().find(|k| !properties.contains_key(k.as_str())) {
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        return Err(format!("{tool} takes no argument {unknown}; it takes {}", names.join(", ")));
    }
    for name in required.iter().filter_map(Value::as_str) {
        if !arguments.contains_key(name) {
            return Err(format!("{tool}: the argument {name} is required"));
        }
    }
    let text = |name: &str, arguments: &mut Map<String, Value>| match arguments.remove(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("{name}: expected a string, found {other}")),
    };
    let format = text("format", &mut arguments)?;
    if format.as_deref() == Some("github") {
        // It appends to the file $GITHUB_STEP_SUMMARY names, which no call names.
        return Err("format github is for CI jobs, not this server: use json or markdown".to_owned());
    }
    if let Some(format) = format.as_deref() {
        let offered = properties.get("format").and_then(|f| f.get("enum")).and_then(Value::as_array);
        if !offered.is_some_and(|o| o.iter().any(|v| v.as_str() == Some(format))) {
            return Err(format!("format: invalid value '{format}'"));
        }
    }
    let output = text("output", &mut arguments)?.map(PathBuf::from);
    if output.as_deref() == Some(Path::new("-")) {
        return Err("output: a file path (standard output carries the session)".to_owned());
    }
    let (flamegraph, page) = if tool == "diff" {
        (text("flamegraph", &mut arguments)?.map(PathBuf::from), text("report", &mut arguments)?.map(PathBuf::from))
    } else {
        (None, None)
    };
    for (name, path) in [("flamegraph", &flamegraph), ("report", &page)] {
        if path.as_deref() == Some(Path::new("-")) {
            return Err(format!("{name}: a file path (standard output carries the session)"));
        }
    }
    coerce(&mut arguments, properties)?;
    let call = match tool {
        "load" => {
            let input = text("input", &mut arguments)?.unwrap_or_default();
            let reading: ReadOptions = request(arguments)?;
            let mut top = TopRequest::new(vec![PathBuf::from(input)]);
            top.reading = reading;
            Call::Load(top)
        }
        "top" => Call::Top(request(arguments)?),
        "tree" => Call::Tree(request(arguments)?),
        "callers" => Call::Calls(request(arguments)?, Lists::Callers),
        "callees" => Call::Calls(request(arguments)?, Lists::Callees),
        "explain" => Call::Calls(request(arguments)?, Lists::Both),
        "annotate" => Call::Annotate(request(arguments)?),
        "jit" => Call::Jit(request(arguments)?),
        "timeline" => Call::Timeline(request(arguments)?),
        "blocks" => Call::Blocks(request(arguments)?),
        "diff" => Call::Diff(Box::new(request(arguments)?)),
        "flamegraph" => Call::Flamegraph(request(arguments)?),
        "report" => Call::Report(request(arguments)?),
        "convert" => {
            // The output is the request's own: its name says the format.
            if let Some(path) = &output {
                arguments.insert("output".to_owned(), json!(path));
            }
            Call::Convert(request(arguments)?)
        }
        other => return Err(format!("no tool named {other}")),
    };
    Ok((call, Shown { format, output, flamegraph, page }))
}

/// The inputs a call reads (its outputs may be none of them).
pub(crate) fn inputs(call: &Call) -> Vec<PathBuf> {
    match call {
        Call::Load(r) | Call::Top(r) => r.inputs.clone(),
        Call::Tree(r) => vec![r.input.clone()],
        Call::Calls(r, _) => vec![r.input.clone()],
        Call::Annotate(r) => vec![r.input.clone()],
        Call::Jit(r) => vec![r.input.clone()],
        Call::Timeline(r) => vec![r.input.clone()],
        Call::Blocks(r) => vec![r.input.clone()],
        Call::Diff(r) => r.pair.iter().chain(&r.base).chain(&r.new).cloned().collect(),
        Call::Flamegraph(r) => vec![r.fold.input.clone()],
        Call::Report(r) => vec![r.input.clone()],
        Call::Convert(r) => vec![r.input.clone()],
    }
}

/// The report format `name` names (default JSON, within `budget` bytes).
fn format(name: Option<&str>, budget: usize) -> Format {
    match name {
        Some("table" | "chart") => Format::Table,
        Some("csv") => Format::Csv,
        Some("markdown") => Format::Markdown,
        _ => Format::JsonWithin(budget),
    }
}

/// The bytes of a budget kept for the gate's verdict in a gated diff's answer.
pub(crate) const GATE_ROOM: usize = 1024;

/// A call's answer: what it says, or that it wrote its files.
pub(crate) enum Answer {
    /// The report, with a diff's gate verdict when the gate tripped.
    Text { text: String, gate: Option<String> },
    /// Its files were written (the run's captured list says which), with a diff's verdict.
    Wrote { gate: Option<String> },
}

/// The usage errors of a call's request (before its outputs are claimed).
fn check(call: &Call) -> anyhow::Result<()> {
    match call {
        Call::Load(request) => request.check(true),
        Call::Top(request) => request.check(false),
        Call::Tree(request) => request.check(),
        Call::Calls(request, _) => request.check(),
        Call::Annotate(request) => request.check(),
        Call::Jit(request) => request.check(),
        Call::Timeline(request) => request.check(),
        Call::Blocks(request) => request.check(),
        Call::Diff(request) => request.check().map(drop),
        Call::Flamegraph(request) => request.check(),
        Call::Report(request) => request.check(),
        Call::Convert(request) => request.check(),
    }
}

/// Executes a call: its answer rendered, or its files written. Usage errors come first, then
/// the outputs are claimed before any input is read, as the command line does.
pub(crate) fn answer(call: &Call, shown: &Shown, budget: usize) -> anyhow::Result<Answer> {
    if let (Call::Top(request), Some("brief")) = (call, shown.format.as_deref()) {
        request.check(true)?;
    } else {
        check(call)?;
    }
    let inputs = inputs(call);
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let claim = |path: &Path| crate::io::Output::new(Some(path), &inputs);
    let name = shown.format.as_deref();
    let format = format(name, budget);
    let terminal = Terminal { width: None, cwd: None, color: false };
    // A report written to `output` (when asked), or answered.
    let output = match call {
        Call::Diff(_) | Call::Flamegraph(_) | Call::Report(_) | Call::Convert(_) => None,
        _ => shown.output.as_deref().map(claim).transpose()?,
    };
    let text = match call {
        Call::Load(request) => cpuprof_render::render_brief(&request.brief()?.document(terminal)),
        Call::Top(request) if name == Some("brief") => {
            cpuprof_render::render_brief(&request.brief()?.document(terminal))
        }
        Call::Top(request) => cpuprof_render::render_top(&request.execute()?.document(terminal), format),
        Call::Tree(request) => request.execute(|a| cpuprof_render::render_tree(&a.document(None), format))?,
        Call::Calls(request, lists) => {
            request.execute(*lists, |a| cpuprof_render::render_calls(&a.document(None), format))?
        }
        Call::Annotate(request) => {
            request.execute(|a| cpuprof_render::render_annotate(&a.document(terminal), format))?
        }
        Call::Jit(request) => request.execute(|a| cpuprof_render::render_jit(&a.document(terminal), format))?,
        Call::Timeline(request) => {
            let answer = request.execute()?;
            cpuprof_render::render_timeline(&answer.document(None, name == Some("table")), format)
        }
        Call::Blocks(request) => cpuprof_render::render_blocks(&request.execute()?.document(None), format),
        Call::Diff(request) => return diff(request, shown, budget),
        Call::Flamegraph(request) => {
            let beside = || crate::io::beside(&request.fold.input, "flamegraph", "svg");
            let output = claim(&shown.output.clone().unwrap_or_else(beside))?;
            output.write(&request.execute(None)?)?;
            return Ok(Answer::Wrote { gate: None });
        }
        Call::Report(request) => {
            let path = match &shown.output {
                Some(path) => path.clone(),
                None => crate::report::default_report_path(&request.input)
                    .ok_or_else(|| cpuprof_app::UsageError("output: give the page's path".to_owned()))?,
            };
            let output = claim(&path)?;
            output.write(request.execute(None)?.as_bytes())?;
            return Ok(Answer::Wrote { gate: None });
        }
        Call::Convert(request) => {
            let output = claim(&request.target.output)?;
            output.write(&request.execute()?)?;
            return Ok(Answer::Wrote { gate: None });
        }
    };
    match output {
        Some(output) => {
            output.write(text.as_bytes())?;
            Ok(Answer::Wrote { gate: None })
        }
        None => Ok(Answer::Text { text, gate: None }),
    }
}

/// A diff's answer: the report within the budget (room kept for the gate's verdict), its flame
/// graph and page written when asked.
fn diff(request: &DiffRequest, shown: &Shown, budget: usize) -> anyhow::Result<Answer> {
    let name = shown.format.as_deref();
    let checked = request.check()?;
    let inputs: Vec<&Path> = checked.inputs().into_iter().map(PathBuf::as_path).collect();
    let claim = |path: &Option<PathBuf>| path.as_deref().map(|p| crate::io::Output::new(Some(p), &inputs)).transpose();
    let (output, svg, html) = (claim(&shown.output)?, claim(&shown.flamegraph)?, claim(&shown.page)?);
    let seen = cpuprof_app::diff::Shown { flamegraph: svg.is_some(), page: html.is_some(), csv: name == Some("csv") };
    let answer = checked.execute(request, seen)?;
    let doc = answer.document(Terminal { width: None, cwd: None, color: false });
    let gated = !request.fail_on.is_empty();
    let text = cpuprof_render::render_diff(&doc, format(name, budget - if gated { GATE_ROOM } else { 0 }));
    if let (Some(svg), Some(drawn)) = (svg, &answer.flame_svg) {
        svg.write(drawn.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?)?;
    }
    if let Some(html) = html {
        html.write(answer.page(&doc)?.as_bytes())?;
    }
    let gate = (!answer.crossed.is_empty()).then(|| format!("regression: {}", answer.crossed.join("; ")));
    match output {
        Some(output) => {
            output.write(text.as_bytes())?;
            Ok(Answer::Wrote { gate })
        }
        None => Ok(Answer::Text { text, gate }),
    }
}
