//! `cpuprof mcp`: the commands as Model Context Protocol tools, over stdio, for coding agents.
//!
//! A tool is a command. Its input schema is made from the command's clap arguments (one source
//! of truth: a flag added to the command is a property of the tool), a call's arguments become
//! that command line, checked by clap as typed ones are, and the command runs as the CLI runs it
//! with what it would print kept (see [`crate::session::captured`]). Profiles are read once per
//! session (`session.rs`'s profile cache); answers keep to a byte budget (the typed report is
//! cut as it is written: `Format::JsonWithin`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use anyhow::Result;
use clap::{Arg, ArgAction, CommandFactory, Parser};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::args::{Cli, McpArgs, DEFAULT_BUDGET};

/// A tool: its name, the command it runs, and what its answer's numbers mean.
struct ToolSpec {
    name: &'static str,
    command: &'static str,
    about: &'static str,
}

/// What every report's numbers are, said once for the tools' descriptions.
const UNITS: &str = "Amounts are ns of CPU time (`unit`: \"ns\"), or samples where `unit` is \"samples\"; \
    `*_pct` are percentages of `total`, the profile's counted time (idle left out unless include_idle). \
    `self`: time in the function's own code; `total`: time with it anywhere on the stack, counted once under recursion.";

const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "load",
        command: "top",
        about: "Read a profile (cached for the session; later calls on the same unchanged file answer at once) and \
            return a brief summary: duration, category split, top 10 functions by self time, the heaviest call paths, \
            the longest event-loop block and the reader's warnings; and `profile`, a handle every other tool takes \
            in place of the path. Start here.",
    },
    ToolSpec {
        name: "top",
        command: "top",
        about: "Functions (or files, packages, lines, categories: `by`) ranked by CPU time. `rows[].id` is a \
            function's stable handle: pass it as `pattern` to callers, callees, explain, or as focus/ignore.",
    },
    ToolSpec {
        name: "tree",
        command: "tree",
        about: "The call tree, top-down (callers above callees) or bottom-up; nodes under min_pct are pruned \
            (`pruned` says how much).",
    },
    ToolSpec {
        name: "callers",
        command: "callers",
        about: "Who calls a function (`pattern`: a handle from top, its name, name@file:line, or a regex): the part \
            of its total that comes through each caller (`pct`: share of the function's total).",
    },
    ToolSpec {
        name: "callees",
        command: "callees",
        about: "What a function calls: each callee's total under it, and the function's own time.",
    },
    ToolSpec {
        name: "explain",
        command: "explain",
        about: "A function's callers and callees together (the sandwich view).",
    },
    ToolSpec {
        name: "diff",
        command: "diff",
        about: "What changed between two profiles (or sets of runs: base/new): rows whose self or total time moved, \
            with a significance test over the runs' sampling noise (`significant`, `p_value` in [0, 1]); \
            `explain` adds the call paths each change came through; `fail_on` gives the CI gate's verdict.",
    },
    ToolSpec {
        name: "timeline",
        command: "timeline",
        about: "The profile over time: per bucket the busy, GC, idle and (program) shares, the category split and \
            the top self function; and the phases (startup, steady, ...) where the profile changes character.",
    },
    ToolSpec {
        name: "blocks",
        command: "blocks",
        about: "What blocked the event loop: stretches without idle samples longer than `min`, longest first, with \
            the entry that started each, its top self functions and the deepest frame common to most of it; \
            `summary` gives count, p50/p95/max and the share of wall time blocked.",
    },
    ToolSpec {
        name: "flamegraph",
        command: "flamegraph",
        about: "Write an interactive SVG flame graph (to `output`, default: beside the profile) and return its path.",
    },
    ToolSpec {
        name: "report",
        command: "report",
        about: "Write a self-contained HTML report (timeline, top, flame graph, callers/callees, blocks) to `output` \
            (default: beside the profile) and return its path.",
    },
    ToolSpec {
        name: "convert",
        command: "convert",
        about: "Rewrite a profile as pprof, .cpuprofile or folded stacks at `output` (the format from its \
            extension or output_format) and return its path.",
    },
];

/// The arguments that name the profiles read (where `load`'s handles stand for paths).
const INPUTS: &[&str] = &["inputs", "input", "pair", "base", "new"];

/// The arguments a tool never takes: the terminal's, and the one the server sets itself.
const NOT_FOR_TOOLS: &[&str] = &["help", "version", "wide", "color", "budget"];

/// The smallest budget a call may name: room for a report's head and its note.
const MIN_BUDGET: u64 = 2048;

/// The largest: clients read a message into a buffer of about 10 MB.
const MAX_BUDGET: u64 = 4 << 20;

pub(crate) fn run_mcp(args: &McpArgs) -> Result<()> {
    crate::session::serve();
    let server = Server { budget: args.budget.clamp(MIN_BUDGET, MAX_BUDGET) };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let session = runtime.block_on(async {
        // Standard input closed: the calls still running are cancelled.
        let (wire, writing) = crate::mcp_wire::start(cancel_all);
        let service = server.serve(wire).await?;
        service.waiting().await?;
        // What was answered is written out (a call the end of input cancelled is not waited for).
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writing).await;
        anyhow::Ok(())
    });
    // The session is over; the process does not wait for a call still finishing.
    cancel_all();
    runtime.shutdown_background();
    session
}

fn cancel_all() {
    for cancelled in RUNNING.lock().unwrap_or_else(PoisonError::into_inner).iter() {
        cancelled.store(true, Ordering::SeqCst);
    }
}

/// The cancel flags of the calls running.
static RUNNING: Mutex<Vec<Arc<AtomicBool>>> = Mutex::new(Vec::new());

struct Server {
    budget: u64,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cpuprof", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "cpuprof answers questions about CPU profiles of Node.js/V8 programs (.cpuprofile, V8 tick logs, \
                 Chrome traces, pprof, folded stacks). Call `load` on a profile first; then top, callers/callees, \
                 tree, timeline, blocks, diff. Every answer keeps to `budget` bytes (default {DEFAULT_BUDGET}), \
                 leaving rows out with a note that says how many. {UNITS}"
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools().to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let spec = TOOLS
            .iter()
            .find(|t| t.name == request.name)
            .ok_or_else(|| McpError::invalid_params(format!("no tool named {}", request.name), None))?;
        let mut arguments = request.arguments.unwrap_or_default();
        let budget = match arguments.remove("budget") {
            None | Some(Value::Null) => self.budget,
            Some(v) => v
                .as_u64()
                .ok_or_else(|| McpError::invalid_params("budget: expected a number of bytes", None))?
                .clamp(MIN_BUDGET, MAX_BUDGET),
        };
        // The gate's verdict joins a diff's report: room is kept for it.
        let gated = arguments.get("fail_on").is_some_and(|v| !v.is_null());
        let argv = command_line(spec, arguments).map_err(|e| McpError::invalid_params(e, None))?;
        let cli =
            Cli::try_parse_from(&argv).map_err(|e| McpError::invalid_params(crate::usage::clap_message(&e), None))?;
        let writes = matches!(spec.command, "flamegraph" | "report" | "convert");
        let name = spec.name;
        let budget = usize::try_from(budget).unwrap_or(usize::MAX);
        let report_budget = budget - if gated { GATE_ROOM } else { 0 };
        // The command runs off the protocol's thread; its JSON report is cut to the budget as
        // it is made (`Format::JsonWithin`), so that an answer costs what making it costs.
        let cancelled = Arc::new(AtomicBool::new(false));
        RUNNING.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::clone(&cancelled));
        let flag = Arc::clone(&cancelled);
        let call = tokio::task::spawn_blocking(move || {
            // What the run says on stderr is its own list (the reports carry it as `warnings`);
            // answers without a report get it from there.
            let ((result, captured), said) = crate::warnings::collect(|| {
                crate::session::captured(Some(report_budget), Some(flag), || crate::run::run(cli.command))
            });
            let said: Vec<String> = said.iter().map(|w| cpuprof_render::text::visible(w)).collect();
            match result {
                Ok(()) if name == "load" => Ok(loaded(&argv, &captured.stdout, &said)),
                // A file written (a flame graph, a page, `top` with an output): where it went.
                Ok(()) if writes || captured.stdout.is_empty() => Ok(wrote(&captured.files, &said, budget)),
                Ok(()) => Ok(answer_text(&captured.stdout, budget, None, &said)),
                // The gate's verdict is an answer, not a failure: the report, and what tripped it.
                Err(e) if e.downcast_ref::<crate::diff::GateTripped>().is_some() => {
                    let gate = cpuprof_render::text::visible(&e.to_string());
                    Ok(answer_text(&captured.stdout, budget, Some(&gate), &said))
                }
                Err(e) => {
                    let code = if crate::usage::is_usage(&e) { 2 } else { 1 };
                    Err(error_answer(&format!("{e:#}"), code, &said, budget))
                }
            }
        });
        // A cancelled call stops reading and is answered no more (the client has moved on).
        let answer = tokio::select! {
            answer = call => answer,
            () = context.ct.cancelled() => {
                cancelled.store(true, Ordering::SeqCst);
                Ok(Err(error_answer("the call was cancelled", 1, &[], budget)))
            }
        };
        RUNNING.lock().unwrap_or_else(PoisonError::into_inner).retain(|c| !Arc::ptr_eq(c, &cancelled));
        let answer = answer.map_err(|e| McpError::internal_error(format!("the command stopped: {e}"), None))?;
        Ok(match answer {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(text) => CallToolResult::error(vec![ContentBlock::text(text)]),
        }
        .into())
    }
}

/// The bytes of a budget kept for the gate's verdict in a gated diff's answer.
const GATE_ROOM: usize = 1024;

/// The tools, their schemas made once from the commands' arguments.
fn tools() -> &'static [Tool] {
    static TOOL_LIST: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOL_LIST.get_or_init(|| {
        let cli = Cli::command();
        TOOLS
            .iter()
            .filter_map(|spec| {
                let command = cli.find_subcommand(spec.command)?;
                let about = command.get_about().map(ToString::to_string).unwrap_or_default();
                let description = if spec.name == "load" {
                    spec.about.to_owned()
                } else {
                    format!("{about}. {} {UNITS}", spec.about)
                };
                let schema = schema(spec, command);
                Some(Tool::new(spec.name, description, Arc::new(schema)))
            })
            .collect()
    })
}

/// The arguments of `command` a tool takes, as clap knows them.
fn tool_args<'c>(spec: &ToolSpec, command: &'c clap::Command) -> impl Iterator<Item = &'c Arg> {
    let load = spec.name == "load";
    command.get_arguments().filter(move |arg| {
        let id = arg.get_id().as_str();
        // `load` reads: it takes how to read (and its own `input`), not the report's options.
        let reading = arg.get_help_heading() == Some("Input") && !matches!(id, "format" | "output");
        !arg.is_hide_set() && !NOT_FOR_TOOLS.contains(&id) && (!load || reading)
    })
}

/// The JSON schema of a tool's arguments: a property per argument of its command.
fn schema(spec: &ToolSpec, command: &clap::Command) -> Map<String, Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    if spec.name == "load" {
        let about = "The profile's path (.cpuprofile, tick log, Chrome trace, pprof, folded stacks; gzip is fine)";
        properties.insert("input".to_owned(), json!({ "type": "string", "description": about }));
        required.push(json!("input"));
    }
    for arg in tool_args(spec, command) {
        let id = arg.get_id().as_str().to_owned();
        if arg.is_required_set() {
            required.push(Value::from(id.clone()));
        }
        properties.insert(id, property(arg));
    }
    properties.insert(
        "budget".to_owned(),
        json!({
            "type": "integer",
            "minimum": MIN_BUDGET,
            "description": format!(
                "The most bytes the answer may take (default {DEFAULT_BUDGET}, at most {MAX_BUDGET}): rows beyond it \
                 are left out, the deepest and lightest first, with a count per list in `left_out`"
            ),
        }),
    );
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), Value::Object(properties));
    schema.insert("required".to_owned(), Value::Array(required));
    schema.insert("additionalProperties".to_owned(), json!(false));
    schema
}

/// One argument's schema: its type, allowed values, default and help.
fn property(arg: &Arg) -> Value {
    if matches!(arg.get_action(), ArgAction::SetTrue) {
        return json!({ "type": "boolean", "description": help(arg) });
    }
    let mut item = Map::new();
    let parser = arg.get_value_parser();
    let possible: Vec<String> =
        arg.get_possible_values().iter().filter(|v| !v.is_hide_set()).map(|v| v.get_name().to_owned()).collect();
    let integers = [
        std::any::TypeId::of::<u64>(),
        std::any::TypeId::of::<u32>(),
        std::any::TypeId::of::<usize>(),
        std::any::TypeId::of::<i64>(),
        std::any::TypeId::of::<u16>(),
    ];
    let kind = if !possible.is_empty() || parser.type_id() == std::any::TypeId::of::<bool>() {
        "string"
    } else if integers.iter().any(|t| parser.type_id() == *t) {
        "integer"
    } else if parser.type_id() == std::any::TypeId::of::<f64>() {
        "number"
    } else {
        "string"
    };
    item.insert("type".to_owned(), json!(kind));
    if !possible.is_empty() {
        item.insert("enum".to_owned(), json!(possible));
    }
    let fixed = arg.get_num_args().filter(|n| n.min_values() > 1 && n.min_values() == n.max_values());
    let mut property = if let Some(n) = fixed {
        json!({ "type": "array", "items": Value::Object(item), "minItems": n.min_values(), "maxItems": n.max_values() })
    } else if takes_many(arg) {
        json!({ "type": "array", "items": Value::Object(item) })
    } else {
        Value::Object(item)
    };
    let defaults: Vec<String> = arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
    let mut description = help(arg);
    if let [default] = defaults.as_slice() {
        description.push_str(&format!(" (default: {default})"));
    }
    if arg.get_id() == "format" {
        description.push_str("; this server's default is json");
    }
    if let Some(p) = property.as_object_mut() {
        p.insert("description".to_owned(), json!(description));
    }
    property
}

/// Whether an argument takes several values (an array).
fn takes_many(arg: &Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.max_values() > 1) || matches!(arg.get_action(), ArgAction::Append)
}

/// An argument's help, with its flag for reference.
fn help(arg: &Arg) -> String {
    let text = arg.get_long_help().or_else(|| arg.get_help()).map(ToString::to_string).unwrap_or_default();
    match arg.get_long() {
        Some(long) => format!("{text} [--{long}]"),
        None => text,
    }
}

/// The command line a call runs: its tool's command with the arguments as flags, checked
/// against the schema (an unknown or mistyped argument is refused with what was expected).
fn command_line(spec: &ToolSpec, mut arguments: Map<String, Value>) -> Result<Vec<String>, String> {
    let cli = Cli::command();
    let command = cli.find_subcommand(spec.command).ok_or_else(|| format!("no command {}", spec.command))?;
    let known: Vec<&Arg> = tool_args(spec, command).collect();
    let load_input = match arguments.remove("input") {
        Some(Value::String(input)) if spec.name == "load" => Some(input),
        Some(_) if spec.name == "load" => return Err("input: expected the profile's path".to_owned()),
        None if spec.name == "load" => return Err("load needs input: the profile's path".to_owned()),
        Some(other) => {
            arguments.insert("input".to_owned(), other);
            None
        }
        None => None,
    };
    if let Some(unknown) = arguments.keys().find(|k| !known.iter().any(|a| a.get_id() == k.as_str())) {
        let names: Vec<&str> = known.iter().map(|a| a.get_id().as_str()).collect();
        return Err(format!("{} takes no argument {unknown}; it takes {}", spec.name, names.join(", ")));
    }
    let mut argv = vec!["cpuprof".to_owned(), spec.command.to_owned()];
    if spec.name == "load" {
        argv.extend(["--format".to_owned(), "brief".to_owned()]);
    } else if known.iter().any(|a| a.get_id() == "format") && !arguments.contains_key("format") {
        argv.extend(["--format".to_owned(), "json".to_owned()]);
    }
    // Handles stand for their paths from here on: a flame graph goes beside the profile.
    for id in INPUTS {
        match arguments.get_mut(*id) {
            Some(Value::String(word)) => {
                if let Some(path) = loaded_path(word)? {
                    *word = path;
                }
            }
            Some(Value::Array(words)) => {
                for word in words {
                    if let Value::String(word) = word {
                        if let Some(path) = loaded_path(word)? {
                            *word = path;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let writes = matches!(spec.command, "flamegraph" | "report" | "convert");
    if writes && arguments.get("output").and_then(Value::as_str) == Some("-") {
        return Err("output: a file path (standard output carries the session)".to_owned());
    }
    if spec.command == "flamegraph" && arguments.get("output").is_none_or(Value::is_null) {
        if let Some(Value::String(input)) = arguments.get("input") {
            let beside = crate::io::beside(Path::new(input), "flamegraph", "svg");
            arguments.insert("output".to_owned(), Value::String(beside.display().to_string()));
        }
    }
    let mut positionals = Vec::new();
    for arg in known {
        let id = arg.get_id().as_str();
        let Some(value) = arguments.remove(id) else { continue };
        if value.is_null() {
            continue;
        }
        let values = values_of(id, &value, arg)?;
        if arg.get_id() == "format" && values.iter().any(|v| v == "github") {
            // It appends to the file $GITHUB_STEP_SUMMARY names, which no call names.
            return Err("format github is for CI jobs, not this server: use json or markdown".to_owned());
        }
        if arg.is_positional() {
            positionals.push((arg.get_index().unwrap_or(0), values));
            continue;
        }
        let Some(long) = arg.get_long() else { continue };
        if matches!(arg.get_action(), ArgAction::SetTrue) {
            if value.as_bool() == Some(true) {
                argv.push(format!("--{long}"));
            }
        } else if let Some(n) = arg.get_num_args().map(|n| n.min_values()).filter(|n| *n > 1) {
            // Several values in one occurrence (`--between A B`): exactly as many, none a flag.
            if values.len() != n || values.iter().any(|v| v.starts_with('-')) {
                return Err(format!("{id}: expected {n} values, none starting with -"));
            }
            argv.push(format!("--{long}"));
            argv.extend(values);
        } else {
            argv.extend(values.into_iter().map(|v| format!("--{long}={v}")));
        }
    }
    positionals.sort_by_key(|(index, _)| *index);
    positionals.extend(load_input.map(|input| (0, vec![input])));
    argv.push("--".to_owned());
    argv.extend(positionals.into_iter().flat_map(|(_, values)| values));
    Ok(argv)
}

/// An argument's value(s) as command-line words.
fn values_of(id: &str, value: &Value, arg: &Arg) -> Result<Vec<String>, String> {
    let word = |v: &Value| match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(format!("{id}: expected a string or a number, found {v}")),
    };
    match value {
        Value::Bool(_) if matches!(arg.get_action(), ArgAction::SetTrue) => Ok(Vec::new()),
        _ if matches!(arg.get_action(), ArgAction::SetTrue) => Err(format!("{id}: expected true or false")),
        Value::Array(items) if takes_many(arg) => items.iter().map(word).collect(),
        Value::Array(_) => Err(format!("{id}: expected one value, not a list")),
        v => Ok(vec![word(v)?]),
    }
}

/// The profiles `load` gave handles to in this session: handle → path as given, and the
/// file as it was then.
static LOADED: Mutex<Vec<(String, String, Option<crate::session::Key>)>> = Mutex::new(Vec::new());

/// `load`'s answer: the profile's handle and path, the brief summary, and the warnings.
fn loaded(argv: &[String], brief: &[u8], said: &[String]) -> String {
    let input = argv.last().cloned().unwrap_or_default();
    let handle = profile_handle(Path::new(&input)).unwrap_or_default();
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    if !loaded.iter().any(|(h, _, _)| *h == handle) {
        loaded.push((handle.clone(), input.clone(), crate::session::Key::of(Path::new(&input), "")));
    }
    json!({ "profile": handle, "path": input, "summary": String::from_utf8_lossy(brief), "warnings": said }).to_string()
}

/// The path of the profile `word` names when it is a handle `load` gave (`None`: not a handle).
/// A handle stands for the file as it was loaded: one changed since is refused, never read
/// in its new form under the old handle.
fn loaded_path(word: &str) -> Result<Option<String>, String> {
    let is_handle =
        word.strip_prefix("profile:").is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if !is_handle {
        return Ok(None);
    }
    let loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    match loaded.iter().find(|(h, _, _)| h == word) {
        Some((_, path, then)) if crate::session::Key::of(Path::new(path), "") != *then => Err(format!(
            "{word}: {} changed since load (load it again for a handle to what it holds now)",
            cpuprof_render::text::visible(path)
        )),
        Some((_, path, _)) => Ok(Some(path.clone())),
        None => Err(format!("{word}: no profile of this session has that handle (load gives them)")),
    }
}

/// A profile's handle: the same for the same file unchanged (path, size, time of change).
fn profile_handle(path: &Path) -> Option<String> {
    let key = crate::session::Key::of(path, "")?;
    let mut hash = Sha256::new();
    hash.update(key.path.as_os_str().as_encoded_bytes());
    hash.update(key.len.to_le_bytes());
    hash.update(format!("{:?}", key.modified).as_bytes());
    let digest = hash.finalize();
    let first: [u8; 8] = digest[..8].try_into().ok()?;
    Some(format!("profile:{:016x}", u64::from_be_bytes(first)))
}

/// What a report's rows left out say when a text answer is cut.
fn cut_note(budget: usize) -> String {
    format!("rows left out to keep the answer within its budget of {budget} bytes (the budget argument raises it)")
}

/// A command's printed answer: a JSON report (already within the budget; with the gate's
/// verdict added in the room kept for it), or text (a table, Markdown, CSV) with the run's
/// warnings first, cut at a line's end.
fn answer_text(printed: &[u8], budget: usize, gate: Option<&str>, said: &[String]) -> String {
    let text = String::from_utf8_lossy(printed);
    if let Some(fields) = text.strip_prefix('{') {
        let Some(gate) = gate else { return text.into_owned() };
        let gate = json!(cut(gate, GATE_ROOM - 32)).to_string();
        return format!("{{\"gate\":{gate}{}{fields}", if fields.starts_with('}') { "" } else { "," });
    }
    let mut warned = String::new();
    for line in gate.iter().map(|g| (*g).to_owned()).chain(said.iter().map(|w| format!("warning: {w}"))) {
        warned.push_str(&line);
        warned.push('\n');
    }
    warned.push_str(&text);
    fit_text(&warned, budget, &cut_note(budget))
}

/// `text` cut to at most `max` bytes at a character's end, `…` marking the cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// An answer of a few fields and the run's warnings, within `budget`: the warnings that do not
/// fit are left out, the last first, with their count.
fn small_answer(mut fields: Map<String, Value>, said: &[String], budget: usize) -> String {
    let mut warnings = said.to_vec();
    loop {
        let left = said.len() - warnings.len();
        fields.insert("warnings".to_owned(), json!(warnings));
        if left > 0 {
            fields.insert("warnings_left_out".to_owned(), json!(left));
        }
        let text = Value::Object(fields.clone()).to_string();
        if text.len() <= budget || warnings.pop().is_none() {
            return text;
        }
    }
}

/// A tool error's answer: the message (cut to half the budget), the exit code the command
/// line would give, and the warnings, within `budget`.
fn error_answer(error: &str, code: i32, said: &[String], budget: usize) -> String {
    let error = cut(&cpuprof_render::text::visible(error), budget / 2);
    let mut fields = Map::new();
    fields.insert("error".to_owned(), json!(error));
    fields.insert("exit_code".to_owned(), json!(code));
    small_answer(fields, said, budget)
}

/// The answer of a run that wrote files: their paths and sizes, and for a report written to a
/// file its beginning (a table's header and first rows, a JSON report's head).
fn wrote(files: &[PathBuf], said: &[String], budget: usize) -> String {
    let mut fields = Map::new();
    fields.insert("wrote".to_owned(), json!(files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>()));
    let sizes: Vec<Option<u64>> = files.iter().map(|p| std::fs::metadata(p).ok().map(|m| m.len())).collect();
    fields.insert("bytes".to_owned(), json!(sizes));
    let report = |p: &PathBuf| !matches!(p.extension().and_then(|e| e.to_str()), Some("svg" | "html" | "gz" | "pb"));
    if let [file] = files {
        if report(file) {
            let mut head = Vec::new();
            if let Ok(f) = std::fs::File::open(file) {
                let _ = std::io::Read::read_to_end(&mut std::io::Read::take(f, (budget / 4) as u64), &mut head);
            }
            let head = String::from_utf8_lossy(&head);
            // Whole lines only.
            let summary = if head.len() >= budget / 4 { head.rsplit_once('\n').map_or("", |(a, _)| a) } else { &head };
            fields.insert("summary".to_owned(), json!(summary));
        }
    }
    small_answer(fields, said, budget)
}

/// A text answer cut to `budget` bytes at a line's end, with a last line saying how many went.
fn fit_text(text: &str, budget: usize, note: &str) -> String {
    if text.len() <= budget {
        return text.to_owned();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let last = format!("… {} more lines: {note}\n", lines.len() - i);
        if out.len() + line.len() + 1 + last.len() > budget {
            out.push_str(&last);
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
