//! Reading inputs (`-` = stdin) and writing outputs atomically.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cpuprof_model::Profile;
use cpuprof_parse::{Origin, ParseOptions};
use indicatif::{ProgressBar, ProgressStyle};

use crate::run::UsageError;

/// True when `path` means standard input/output.
pub(crate) fn is_dash(path: &Path) -> bool {
    path == Path::new("-")
}

/// Files at least this big get a progress bar (when stderr is a terminal).
const PROGRESS_MIN_BYTES: u64 = 64 << 20;

/// Reads and parses one profile.
pub(crate) fn read_profile(path: &Path, options: &ParseOptions) -> Result<Profile> {
    if is_dash(path) {
        return Ok(cpuprof_parse::parse(io::stdin(), &Origin::stdin(), options)?);
    }
    let origin = Origin(path.display().to_string());
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let size = file.metadata().map_or(0, |m| m.len());
    if size >= PROGRESS_MIN_BYTES && io::stderr().is_terminal() {
        let bar = ProgressBar::new(size).with_style(
            ProgressStyle::with_template("{msg} {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec})")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(format!("reading {}", path.display()));
        let profile = cpuprof_parse::parse(bar.wrap_read(file), &origin, options);
        bar.finish_and_clear();
        return Ok(profile?);
    }
    Ok(cpuprof_parse::parse(file, &origin, options)?)
}

/// Where output goes.
pub(crate) enum Output {
    Stdout,
    File(PathBuf),
}

impl Output {
    /// `None` or `-` is stdout. A file that is one of `inputs` is refused: a run must never
    /// destroy what it reads.
    pub(crate) fn new(path: Option<&Path>, inputs: &[&Path]) -> Result<Output> {
        let Some(path) = path.filter(|p| !is_dash(p)) else { return Ok(Output::Stdout) };
        if let Ok(target) = path.canonicalize() {
            for input in inputs.iter().filter(|p| !is_dash(p)) {
                if input.canonicalize().is_ok_and(|i| i == target) {
                    let message = format!("refusing to write the output over the input {}", input.display());
                    return Err(UsageError(message).into());
                }
            }
        }
        Ok(Output::File(path.to_owned()))
    }

    /// Writes `bytes` in full: to stdout, or to a temporary file beside the target that is
    /// renamed over it only once everything is written.
    pub(crate) fn write(&self, bytes: &[u8]) -> Result<()> {
        match self {
            Output::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()?;
                Ok(())
            }
            // Devices and pipes (`-o /dev/null`, `-o /dev/stdout`, a FIFO) are written in place:
            // renaming a temporary file over them would replace the device with a file.
            Output::File(path) if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) => {
                let mut file = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                file.write_all(bytes)
                    .and_then(|()| file.flush())
                    .with_context(|| format!("cannot write {}", path.display()))
            }
            Output::File(path) => {
                // Through a symlink, replace what it points to, not the link.
                let path = &path.canonicalize().unwrap_or_else(|_| path.clone());
                let dir = match path.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                let mut tmp = tempfile::Builder::new()
                    .prefix(".cpuprof-")
                    .tempfile_in(dir)
                    .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
                tmp.write_all(bytes)
                    .and_then(|()| tmp.flush())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                // The temporary file is private (0600); give the result the permissions of the
                // file it replaces, or those a new file gets (0666 less the umask).
                let permissions = std::fs::metadata(path)
                    .map_or_else(|_| std::fs::Permissions::from_mode(0o666 & !umask()), |m| m.permissions());
                tmp.as_file()
                    .set_permissions(permissions)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                tmp.persist(path).with_context(|| format!("cannot write {}", path.display()))?;
                Ok(())
            }
        }
    }
}

/// The process's file-creation mask, read from `/proc/self/status` (no system call wrapper in
/// std); 022 where that is not available.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|l| l.strip_prefix("Umask:").and_then(|v| u32::from_str_radix(v.trim(), 8).ok()))
        })
        .unwrap_or(0o022)
}
