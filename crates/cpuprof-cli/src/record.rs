//! `cpuprof record`: run a command with its Node processes profiled, or attach to a running
//! one; keep the profiles, then `top` (and the flame graph, the report) of them all, made by
//! the commands that make them from files.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use cpuprof_model::parse_duration_ns;
use cpuprof_record::attach::{attach, AttachOptions};
use cpuprof_record::command::{CommandOptions, Recorded, Recording, Thread};

use crate::args::{OutputArgs, RecordArgs};
use crate::signals::{react, Reaction};
use cpuprof_app::input::Loaded;
use cpuprof_app::UsageError;
use cpuprof_app::{FilterOptions, ReadOptions, WindowOptions};

/// The recorded command's exit status, which `record` exits with once its work is done.
#[derive(Debug)]
pub(crate) struct CommandExit(pub(crate) u8);

impl std::fmt::Display for CommandExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the recorded command exited with status {}", self.0)
    }
}

impl std::error::Error for CommandExit {}

/// How long a command stopped by --duration gets to write its profiles before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

pub(crate) fn run_record(args: &RecordArgs) -> Result<()> {
    let interval = duration(&args.interval, "--interval")?;
    if interval.is_zero() {
        return Err(UsageError("--interval must be more than 0".to_owned()).into());
    }
    let stop_after = args.duration.as_deref().map(|d| duration(d, "--duration")).transpose()?;
    if stop_after.is_some_and(|d| d < Duration::from_millis(1)) {
        return Err(UsageError("--duration must be at least 1ms".to_owned()).into());
    }
    check_outputs(args)?;
    let (kept, status) = if args.pid.is_some() || args.url.is_some() {
        (attached(args, interval, stop_after)?, None)
    } else {
        let (kept, status) = commanded(args, interval, stop_after)?;
        (kept, Some(status))
    };
    summarize(args, &kept)?;
    match status.map(exit_code) {
        Some(0) | None => Ok(()),
        Some(code) => Err(CommandExit(code).into()),
    }
}

/// `--interval 1ms`, `--duration 30s`: a duration as the other time options take them.
fn duration(text: &str, flag: &str) -> Result<Duration> {
    let ns = parse_duration_ns(text, true)
        .ok_or_else(|| UsageError(format!("{flag} {text}: expected a duration such as 1ms, 500us or 30s")))?;
    Ok(Duration::from_nanos(ns as u64))
}

/// Refuses, before anything runs, the outputs that could not be written after it: `-`, two
/// outputs at one path, a file in a directory that does not exist, a file the command reads.
fn check_outputs(args: &RecordArgs) -> Result<()> {
    let outputs: Vec<(&str, &Path)> = [
        ("-o", args.output.as_deref()),
        ("--flamegraph", args.flamegraph.as_deref()),
        ("--report", args.report.as_deref()),
    ]
    .into_iter()
    .filter_map(|(flag, path)| path.map(|p| (flag, p)))
    .collect();
    let usage = |message: String| -> Result<()> { Err(UsageError(message).into()) };
    if outputs.iter().any(|(_, p)| crate::io::is_dash(p)) {
        return usage("record writes files: - (stdout) is not one of them".to_owned());
    }
    if args.prof && args.output.as_deref().is_some_and(is_profile_file) {
        return usage("--prof keeps tick logs in a directory: give -o a directory".to_owned());
    }
    for (i, (flag, path)) in outputs.iter().enumerate() {
        if let Some((other, _)) = outputs[..i].iter().find(|(_, p)| p == path || crate::io::same_file(p, path)) {
            return usage(format!("{other} and {flag} name the same file, {}", path.display()));
        }
        let is_file = *flag != "-o" || is_profile_file(path);
        if !is_file && path.exists() && !path.is_dir() {
            return usage(format!(
                "-o {}: a file that is not a .cpuprofile; -o takes a directory or FILE.cpuprofile",
                path.display()
            ));
        }
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if is_file && !parent.is_dir() {
            return usage(format!("{flag} {}: the directory {} does not exist", path.display(), parent.display()));
        }
        let read = args.command.iter().flat_map(files_named).find(|f| crate::io::same_file(f, path));
        if let Some(read) = read {
            return usage(format!(
                "{flag} {} would replace {}, which the command is given",
                path.display(),
                read.display()
            ));
        }
    }
    Ok(())
}

/// The files a word of the command may name: the word, the value after its first `=`
/// (`--input=data.cpuprofile`), and for each the files node loads for a script named so (`app`
/// for `app.js`, a directory for its `index.js`); those that exist.
fn files_named(word: &OsString) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = word.as_bytes();
    let mut names = vec![PathBuf::from(word)];
    if let Some(at) = bytes.iter().position(|b| *b == b'=') {
        names.push(PathBuf::from(std::ffi::OsStr::from_bytes(&bytes[at + 1..])));
    }
    let mut found = Vec::new();
    for name in names.into_iter().filter(|n| !n.as_os_str().is_empty()) {
        let mut candidates = vec![name.join("index.js"), name.join("index.json"), name.join("index.node")];
        for extension in [".js", ".json", ".node", ".mjs", ".cjs"] {
            let mut with = name.clone().into_os_string();
            with.push(extension);
            candidates.push(PathBuf::from(with));
        }
        candidates.insert(0, name);
        found.extend(candidates.into_iter().filter(|c| c.is_file()));
    }
    found
}

/// Whether `-o` names one profile file rather than a directory.
fn is_profile_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "cpuprofile")
}

/// Runs the command and keeps what its processes wrote; with the command's exit status.
fn commanded(
    args: &RecordArgs,
    interval: Duration,
    stop_after: Option<Duration>,
) -> Result<(Vec<PathBuf>, ExitStatus)> {
    let Some((program, rest)) = args.command.split_first() else {
        return Err(
            UsageError("give the command to record after --, e.g. cpuprof record -- node app.js".to_owned()).into()
        );
    };
    if args.prof && !Path::new(program).file_name().is_some_and(|n| n.to_string_lossy().starts_with("node")) {
        let message = "--prof asks V8 for a tick log on node's own command line (NODE_OPTIONS does not take it): record node itself, e.g. cpuprof record --prof -- node app.js";
        return Err(UsageError(message.to_owned()).into());
    }
    let options = CommandOptions {
        program: program.clone(),
        args: rest.to_vec(),
        interval,
        tick_log: args.prof,
        log_deopt: args.jit,
    };
    let (recording, mut command) = Recording::prepare(&options)?;
    let _listed = crate::signals::remove_on_signal(recording.dir());
    let shown = shown_command(&args.command);
    let mut child = command.spawn().with_context(|| format!("cannot run {shown}"))?;
    let status = {
        let _forwarding = react(Reaction::Forward { pid: child.id(), signals: 0 });
        wait(&mut child, stop_after, &shown)?
    };
    let recorded = recording.collect()?;
    let lost = recording.lost_workers();
    if lost > 0 {
        cpuprof_app::warn(&format!(
            "{} wrote no profile: stopped by worker.terminate(), or busy in synchronous code when its process exited",
            if lost == 1 { "1 worker thread".to_owned() } else { format!("{lost} worker threads") }
        ));
    }
    if recorded.is_empty() {
        use std::os::unix::process::ExitStatusExt;
        let ended = match status.signal() {
            Some(signal) => format!("was killed (signal {signal})"),
            None => format!("exited with status {}", exit_code(status)),
        };
        // Which cause it was: Node processes that ran with the preload and wrote nothing, or none
        // that loaded it at all.
        let why = match recording.loaded_processes() {
            0 if args.prof => "no Node process of it wrote a tick log".to_owned(),
            0 => "no Node process loaded cpuprof's preload (not a Node program, or one that starts node with an \
                  environment of its own, without NODE_OPTIONS)"
                .to_owned(),
            n => format!(
                "{} started under it but wrote no profile (killed, or ended before its exit handlers ran)",
                if n == 1 { "1 Node process".to_owned() } else { format!("{n} Node processes") }
            ),
        };
        return Err(anyhow!("nothing was recorded: {shown} {ended}; {why}"));
    }
    let default = format!("cpuprof-record-{}", child.id());
    match keep(args, &recorded, &default) {
        Ok(kept) => Ok((kept, status)),
        // Nothing lost: the profiles stay where they were written.
        Err(err) => {
            let dir = recording.keep();
            Err(err.context(format!("the profiles are left in {}", dir.display())))
        }
    }
}

/// The command as a shell would show it, for messages.
fn shown_command(command: &[OsString]) -> String {
    let words: Vec<String> = command.iter().map(|w| w.to_string_lossy().into_owned()).collect();
    format!("`{}`", words.join(" "))
}

/// Waits for the command; after `stop_after`, sends it SIGINT (as Ctrl-C would), and kills it
/// when it has not ended [`STOP_GRACE`] later. A command that ends of the SIGINT sent to stop it
/// (130) ended as asked: its status is success.
fn wait(child: &mut std::process::Child, stop_after: Option<Duration>, shown: &str) -> Result<ExitStatus> {
    use std::os::unix::process::ExitStatusExt;
    let started = Instant::now();
    let mut stopped_at: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait().context("cannot wait for the recorded command")? {
            let interrupted = exit_code(status) == 128 + rustix::process::Signal::INT.as_raw() as u8;
            return Ok(if stopped_at.is_some() && interrupted { ExitStatus::from_raw(0) } else { status });
        }
        match (stop_after, stopped_at) {
            (Some(limit), None) if started.elapsed() >= limit => {
                crate::say(&format!("{shown}: stopping it after {limit:?} (SIGINT to it and the processes under it)"));
                for pid in cpuprof_record::command::process_tree(child.id()) {
                    crate::signals::send(pid, rustix::process::Signal::INT);
                }
                stopped_at = Some(Instant::now());
            }
            (_, Some(at)) if at.elapsed() >= STOP_GRACE => {
                cpuprof_app::warn(&format!(
                    "{shown} did not end {STOP_GRACE:?} after SIGINT: killing it (its profiles may be lost)"
                ));
                for pid in cpuprof_record::command::process_tree(child.id()) {
                    crate::signals::send(pid, rustix::process::Signal::KILL);
                }
                return child.wait().context("cannot wait for the recorded command");
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process's exit status as a shell gives it: its code, or 128 + the signal that killed it.
fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => (128 + signal) as u8,
        (None, None) => 1,
    }
}

/// Attaches to the running process and keeps what it recorded.
fn attached(args: &RecordArgs, interval: Duration, stop_after: Option<Duration>) -> Result<Vec<PathBuf>> {
    let options = AttachOptions {
        pid: args.pid,
        inspect_port: args.inspect_port,
        url: args.url.clone(),
        interval,
        duration: stop_after,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let attached = {
        let _stopping = react(Reaction::Stop(Arc::clone(&stop)));
        attach(&options, &stop, &mut |message| crate::say(message))?
    };
    for note in &attached.notes {
        cpuprof_app::warn(note);
    }
    if attached.profiles.is_empty() {
        return Err(anyhow!("nothing was recorded"));
    }
    // The profiles go where a command's would, named alike.
    let dir =
        tempfile::Builder::new().prefix("cpuprof-attach-").tempdir().context("cannot make a temporary directory")?;
    let _listed = crate::signals::remove_on_signal(dir.path());
    let pid = args.pid.map_or_else(|| "inspector".to_owned(), |p| p.to_string());
    let mut recorded = Vec::new();
    for profile in &attached.profiles {
        let (thread, file_name) = match profile.thread_id {
            Some(id) if id > 0 => (Thread::Worker(id), format!("attached.{pid}.worker-{id}.cpuprofile")),
            _ => (Thread::Main, format!("attached.{pid}.main.cpuprofile")),
        };
        let path = dir.path().join(&file_name);
        std::fs::write(&path, &profile.json).with_context(|| format!("cannot write {}", path.display()))?;
        let command = args.pid.map(command_line).unwrap_or_default();
        recorded.push(Recorded { path, pid: args.pid.unwrap_or(0), thread, argv: command, file_name });
    }
    keep(args, &recorded, &format!("cpuprof-record-{pid}")).map_err(|err| {
        let dir = dir.keep();
        err.context(format!("the profiles are left in {}", dir.display()))
    })
}

/// A process's command line from /proc (empty where it cannot be read), for its profiles' labels.
fn command_line(pid: u32) -> Vec<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    bytes.split(|b| *b == 0).filter(|w| !w.is_empty()).map(|w| String::from_utf8_lossy(w).into_owned()).collect()
}

/// Copies the recorded profiles to where `-o` says (`default`, a directory, when it says
/// nothing); the paths kept.
fn keep(args: &RecordArgs, recorded: &[Recorded], default: &str) -> Result<Vec<PathBuf>> {
    let target = args.output.clone().unwrap_or_else(|| PathBuf::from(default));
    if is_profile_file(&target) {
        return keep_in_file(recorded, &target);
    }
    std::fs::create_dir_all(&target).with_context(|| format!("cannot make the directory {}", target.display()))?;
    let mut kept = Vec::new();
    for one in recorded {
        let path = target.join(&one.file_name);
        let bytes = std::fs::read(&one.path).with_context(|| format!("cannot read {}", one.path.display()))?;
        crate::io::Output::new(Some(&path), &[])?.write(&bytes)?;
        kept.push(path);
    }
    let processes: std::collections::BTreeSet<u32> = recorded.iter().map(|r| r.pid).collect();
    crate::say(&format!(
        "{} kept in {}/ ({} from {} process{}):",
        plural(recorded.len(), "profile"),
        target.display(),
        recorded.len(),
        processes.len(),
        if processes.len() == 1 { "" } else { "es" }
    ));
    for (one, path) in recorded.iter().zip(&kept) {
        crate::say(&format!("  {}  {}", path.file_name().unwrap_or_default().to_string_lossy(), one.label()));
    }
    Ok(kept)
}

/// `-o FILE.cpuprofile`: the one profile, or the merge of several (`cpuprof merge`).
fn keep_in_file(recorded: &[Recorded], target: &Path) -> Result<Vec<PathBuf>> {
    if let [one] = recorded {
        let bytes = std::fs::read(&one.path).with_context(|| format!("cannot read {}", one.path.display()))?;
        crate::io::Output::new(Some(target), &[])?.write(&bytes)?;
        crate::say(&format!("profile kept in {}: {}", target.display(), one.label()));
    } else {
        let paths: Vec<&Path> = recorded.iter().map(|r| r.path.as_path()).collect();
        let merged = cpuprof_app::convert::merged(&paths, &ReadOptions::default(), &WindowOptions::default())?;
        let written =
            cpuprof_render::render_cpuprofile(&merged).map_err(|e| anyhow!("cannot write a .cpuprofile: {e}"))?;
        for note in &written.notes {
            cpuprof_app::warn(note);
        }
        crate::io::Output::new(Some(target), &[])?.write(&written.json)?;
        crate::say(&format!("{} merged into {}:", plural(recorded.len(), "profile"), target.display()));
        for one in recorded {
            crate::say(&format!("  {}", one.label()));
        }
    }
    Ok(vec![target.to_owned()])
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `top` of the kept profiles (each one's total when there are several), then the flame graph
/// and the report when asked: what those commands make of the same files, asked of them
/// directly; several profiles are merged once, in memory, for the graph and the page.
fn summarize(args: &RecordArgs, kept: &[PathBuf]) -> Result<()> {
    if !args.quiet {
        let mut top = cpuprof_app::top::TopRequest::new(kept.to_vec());
        top.rows = args.rows.options();
        crate::run::show_top(&top, &OutputArgs { format: args.format, output: None, wide: false })?;
    }
    if args.flamegraph.is_none() && args.report.is_none() {
        return Ok(());
    }
    let merged = if kept.len() == 1 {
        None
    } else {
        let paths: Vec<&Path> = kept.iter().map(PathBuf::as_path).collect();
        Some(cpuprof_app::convert::merged(&paths, &ReadOptions::default(), &WindowOptions::default())?)
    };
    // What the graph and the page name their input: the file, or the merge.
    let input = match (kept, &merged) {
        ([one], _) => one.clone(),
        _ => PathBuf::from(format!("{} profiles, merged", kept.len())),
    };
    let loaded = |timed: bool| -> Result<Loaded> {
        match &merged {
            Some(profile) => Ok(Loaded { profile: profile.clone(), window: None }),
            None => cpuprof_app::input::load_read(
                &input,
                &ReadOptions::default(),
                &FilterOptions::default(),
                &WindowOptions::default(),
                false,
                timed,
            ),
        }
    };
    if let Some(svg) = &args.flamegraph {
        let output = crate::io::Output::new(Some(svg), &[input.as_path()])?;
        let graph = cpuprof_app::fold::FlamegraphRequest::new(input.clone());
        crate::fold::flamegraph_of(&graph, loaded(false)?, output)?;
    }
    if let Some(page) = &args.report {
        let output = crate::io::Output::new(Some(page), &[])?;
        let source = cpuprof_app::input::source_name(&input);
        // A merged recording is the one in memory; else the page reads the file as `cpuprof
        // report` does (a tick log's lines and JIT records included).
        let request = cpuprof_app::report::ReportRequest::new(input.clone());
        let html = match &merged {
            Some(_) => request.execute(Some((loaded(true)?, source)))?,
            None => request.execute(None)?,
        };
        crate::report::write_page(&html, output, page)?;
    }
    Ok(())
}
