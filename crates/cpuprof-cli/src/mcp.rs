//! `cpuprof mcp`: the commands as Model Context Protocol tools, over stdio, for coding agents.
//!
//! A tool is a command, and a call is its request (`cpuprof_app`): the call's arguments are
//! deserialized into the request type the command line builds from its flags, whose JSON schema
//! is the tool's input schema ([`crate::mcp_requests`]). Profiles are read once per session
//! (`cpuprof_app::session`'s profile cache); answers keep to a byte budget (the report is cut as
//! it is written: `Format::JsonWithin`); the files a call writes are listed from its run
//! ([`crate::session::captured`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use anyhow::Result;
use clap::CommandFactory;

use crate::mcp_requests::Answer;

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
        name: "annotate",
        command: "annotate",
        about: "A function's source with each line's self time (`pattern` as for callers; or `top`: the N \
            functions with the most self time): `lines[]` has each line's `text`, `self`, `function_pct` (share of \
            the function's self) and, where the profile records call-site lines, `total` (else null); \
            `script.origin` says where the text came from (disk, script-source, sourcemap, none). Within a budget \
            the lightest lines go first.",
    },
    ToolSpec {
        name: "jit",
        command: "jit",
        about: "What V8 did to the hottest JavaScript functions (or one: `pattern` as for callers), from a tick log: \
            `tiers` (self time by tier: interpreted, sparkplug, maglev, turbofan), `code_objects`, \
            `first_optimized_ns`, `deopts[]` (reason, kind, position, inlined_at, count, `after`: self time in lower \
            tiers after them until re-optimized), `inlined[]`, `not_inlined[]` (hot callees no optimized code \
            inlined), a one-line `verdict` and its `finding` (deopts, unoptimized, not-inlined, or noise: deopts \
            costing < 1% of the profile). A .cpuprofile has none of this (a warning says so).",
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

/// The smallest budget a call may name: room for a report's head and its note.
const MIN_BUDGET: u64 = 2048;

/// The largest: clients read a message into a buffer of about 10 MB.
const MAX_BUDGET: u64 = 4 << 20;

pub(crate) fn run_mcp(args: &McpArgs) -> Result<()> {
    cpuprof_app::session::serve();
    // Messages name options as this server's tools name their arguments.
    cpuprof_app::spell_options(str::to_owned);
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
        arguments.retain(|_, v| !v.is_null());
        self.typed(spec, arguments, budget, context).await
    }
}

impl Server {
    /// A call: its arguments read into its command's request ([`crate::mcp_requests`]),
    /// answered off the protocol's thread.
    async fn typed(
        &self,
        spec: &ToolSpec,
        mut arguments: Map<String, Value>,
        budget: u64,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (properties, required) = typed_schema(spec);
        // Handles stand for their paths from here on.
        for id in INPUTS {
            if let Some(value) = arguments.get_mut(*id) {
                handles_to_paths(value).map_err(|e| McpError::invalid_params(e, None))?;
            }
        }
        let (call, shown) = crate::mcp_requests::read_call(spec.name, arguments, &properties, &required)
            .map_err(|e| McpError::invalid_params(e, None))?;
        let name = spec.name;
        let budget = usize::try_from(budget).unwrap_or(usize::MAX);
        let cancelled = Arc::new(AtomicBool::new(false));
        RUNNING.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::clone(&cancelled));
        let flag = Arc::clone(&cancelled);
        let call = tokio::task::spawn_blocking(move || {
            let ((result, captured), said) = cpuprof_app::said::collect(|| {
                crate::session::captured(Some(flag), || crate::mcp_requests::answer(&call, &shown, budget))
            });
            let said: Vec<String> = said.iter().map(|w| cpuprof_render::text::visible(w)).collect();
            let visible = |gate: Option<String>| gate.map(|g| cpuprof_render::text::visible(&g));
            match result {
                Ok(Answer::Text { text, .. }) if name == "load" => {
                    let input = crate::mcp_requests::inputs(&call).pop().unwrap_or_default();
                    Ok(loaded(&input.display().to_string(), text.as_bytes(), &said))
                }
                Ok(Answer::Text { text, gate }) => {
                    Ok(answer_text(text.as_bytes(), budget, visible(gate).as_deref(), &said))
                }
                Ok(Answer::Wrote { gate }) => Ok(wrote(&captured.files, visible(gate).as_deref(), &said, budget)),
                Err(e) => {
                    let code = if cpuprof_app::is_usage(&e) { 2 } else { 1 };
                    Err(error_answer(&format!("{e:#}"), code, &said, budget))
                }
            }
        });
        finish(call, cancelled, context, budget).await
    }
}

/// A typed tool's schema: its properties and required arguments, made once.
fn typed_schema(spec: &ToolSpec) -> (Map<String, Value>, Vec<Value>) {
    let tool = tools().iter().find(|t| t.name == spec.name);
    let schema = tool.map(|t| t.input_schema.as_ref().clone()).unwrap_or_default();
    let mut properties = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    properties.remove("budget");
    let required = schema.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    (properties, required)
}

/// The value of an input argument with each handle `load` gave replaced by its path.
fn handles_to_paths(value: &mut Value) -> Result<(), String> {
    let mut words: Vec<&mut String> = match value {
        Value::String(word) => vec![word],
        Value::Array(items) => items
            .iter_mut()
            .filter_map(|v| match v {
                Value::String(word) => Some(word),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for word in &mut words {
        if let Some(path) = loaded_path(word)? {
            **word = path;
        }
    }
    Ok(())
}

/// Waits for a call's answer, or for the client to cancel it; the answer as a tool result.
async fn finish(
    call: tokio::task::JoinHandle<Result<String, String>>,
    cancelled: Arc<AtomicBool>,
    context: RequestContext<RoleServer>,
    budget: usize,
) -> Result<CallToolResponse, McpError> {
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
                let schema = tool_schema(spec, command);
                Some(Tool::new(spec.name, description, Arc::new(schema)))
            })
            .collect()
    })
}

/// A tool's input schema: its request type's, with `budget`.
fn tool_schema(spec: &ToolSpec, command: &clap::Command) -> Map<String, Value> {
    // The formats its command offers (one list: the command line's `--format`), but `github`,
    // which appends to the file $GITHUB_STEP_SUMMARY names: a CI job's, which no call names.
    let formats: Vec<String> = command
        .get_arguments()
        .find(|a| a.get_id() == "format")
        .map(|a| a.get_possible_values().iter().map(|v| v.get_name().to_owned()).filter(|f| f != "github").collect())
        .unwrap_or_default();
    let (mut properties, required) = crate::mcp_requests::schema(spec.name, &formats);
    properties.insert("budget".to_owned(), budget_property());
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), Value::Object(properties));
    schema.insert("required".to_owned(), Value::Array(required));
    schema.insert("additionalProperties".to_owned(), json!(false));
    schema
}

/// The `budget` argument every tool takes.
fn budget_property() -> Value {
    json!({
        "type": "integer",
        "minimum": MIN_BUDGET,
        "description": format!(
            "The most bytes the answer may take (default {DEFAULT_BUDGET}, at most {MAX_BUDGET}): rows beyond it \
             are left out, the deepest and lightest first, with a count per list in `left_out`"
        ),
    })
}

/// The profiles `load` gave handles to in this session: handle → path as given, and the
/// file as it was then.
static LOADED: Mutex<Vec<(String, String, Option<cpuprof_app::session::Key>)>> = Mutex::new(Vec::new());

/// `load`'s answer: the profile's handle and path, the brief summary, and the warnings.
fn loaded(input: &str, brief: &[u8], said: &[String]) -> String {
    let input = input.to_owned();
    let handle = profile_handle(Path::new(&input)).unwrap_or_default();
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    if !loaded.iter().any(|(h, _, _)| *h == handle) {
        loaded.push((handle.clone(), input.clone(), cpuprof_app::session::Key::of(Path::new(&input), "")));
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
        Some((_, path, then)) if cpuprof_app::session::Key::of(Path::new(path), "") != *then => Err(format!(
            "{word}: {} changed since load (load it again for a handle to what it holds now)",
            cpuprof_render::text::visible(path)
        )),
        Some((_, path, _)) => Ok(Some(path.clone())),
        None => Err(format!("{word}: no profile of this session has that handle (load gives them)")),
    }
}

/// A profile's handle: the same for the same file unchanged (path, size, time of change).
fn profile_handle(path: &Path) -> Option<String> {
    let key = cpuprof_app::session::Key::of(path, "")?;
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
        let gate = json!(cut(gate, crate::mcp_requests::GATE_ROOM - 32)).to_string();
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
fn wrote(files: &[PathBuf], gate: Option<&str>, said: &[String], budget: usize) -> String {
    let mut fields = Map::new();
    if let Some(gate) = gate {
        fields.insert("gate".to_owned(), json!(cut(gate, crate::mcp_requests::GATE_ROOM - 32)));
    }
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
