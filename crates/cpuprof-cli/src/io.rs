//! Reading inputs (`-` = stdin) and writing outputs atomically.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use anyhow::{bail, Context, Result};

use crate::signals::TempFile;
use cpuprof_app::UsageError;

pub(crate) use cpuprof_app::read::is_dash;

/// Where a command writes its file when no `-o` names one: beside `input`, named as it is with
/// `extension` for its own (`app.cpuprofile` → `app.svg`), or `stem.extension` in the current
/// directory for stdin; never the input itself (`app.svg` → `app.cpuprof.svg`).
pub(crate) fn beside(input: &Path, stem: &str, extension: &str) -> PathBuf {
    if is_dash(input) {
        return PathBuf::from(format!("{stem}.{extension}"));
    }
    let path = input.with_extension(extension);
    if path == input {
        input.with_extension(format!("cpuprof.{extension}"))
    } else {
        path
    }
}

/// A regular file's identity, which hard links, symlinks, `/dev/stdin` and a redirection share:
/// its device and inode.
type FileId = (u64, u64);

fn file_id(meta: &Metadata) -> Option<FileId> {
    meta.is_file().then(|| (meta.dev(), meta.ino()))
}

/// Refuses `path` as a file to add to (a job summary) when it is one of `inputs`.
pub(crate) fn refuse_appending_to_input(path: &Path, what: &str, inputs: &[&Path]) -> Result<()> {
    let Some(id) = std::fs::metadata(path).ok().as_ref().and_then(file_id) else { return Ok(()) };
    for input in inputs {
        let input_id = if is_dash(input) {
            stream_metadata(io::stdin().as_fd()).as_ref().and_then(file_id)
        } else {
            std::fs::metadata(input).ok().as_ref().and_then(file_id)
        };
        if input_id == Some(id) {
            return Err(UsageError(format!(
                "refusing to add to the input {}: {what} names it",
                if is_dash(input) {
                    "on standard input".to_owned()
                } else {
                    cpuprof_render::text::visible(&input.display().to_string())
                }
            ))
            .into());
        }
    }
    Ok(())
}

/// Whether `a` and `b` name the same file (one that exists), or the same path.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    let id = |p: &Path| std::fs::metadata(p).ok().as_ref().and_then(file_id);
    a == b || id(a).is_some_and(|i| Some(i) == id(b))
}

/// What standard input or output is (`< app.cpuprofile`, `> report.txt`, a pipe).
fn stream_metadata(fd: BorrowedFd<'_>) -> Option<Metadata> {
    File::from(fd.try_clone_to_owned().ok()?).metadata().ok()
}

/// The identity of a place output goes to that two outputs cannot share: a file, a pipe or a
/// socket, not a device (`/dev/null` takes any number of outputs).
fn place_id(meta: &Metadata) -> Option<FileId> {
    let kind = meta.file_type();
    (!kind.is_char_device() && !kind.is_block_device()).then(|| (meta.dev(), meta.ino()))
}

/// The outputs of this run, so that no two go to one place.
static CLAIMED: Mutex<Vec<Claim>> = Mutex::new(Vec::new());

struct Claim {
    /// The run it belongs to: runs of the MCP server do not claim one another's outputs.
    run: u64,
    stdout: bool,
    /// Where a file is written (symlinks followed).
    path: Option<PathBuf>,
    /// What it is, when it exists.
    id: Option<FileId>,
}

impl Claim {
    fn collides(&self, other: &Claim) -> bool {
        self.run == other.run
            && ((self.stdout && other.stdout)
                || (self.path.is_some() && self.path == other.path)
                || (self.id.is_some() && self.id == other.id))
    }
}

/// Records `claim` as one of this run's outputs; a second output to the same place is refused.
fn claim(mut claim: Claim, shown: &str) -> Result<()> {
    claim.run = crate::session::run_number();
    let mut claimed = CLAIMED.lock().unwrap_or_else(PoisonError::into_inner);
    // A finished run's outputs are written: they no longer stand in another run's way.
    claimed.retain(|c| crate::session::live(c.run));
    if claimed.iter().any(|c| c.collides(&claim)) {
        return Err(UsageError(format!("refusing to write two outputs to {shown}")).into());
    }
    claimed.push(claim);
    Ok(())
}

/// Where output goes.
pub(crate) enum Output {
    Stdout,
    /// Standard output of a run whose output is kept (see [`crate::session::captured`]).
    Captured,
    /// A device or a pipe (`-o /dev/null`, `-o /dev/stdout`, a FIFO), written in place:
    /// renaming a file over it would replace the device with a file.
    InPlace(PathBuf),
    /// A regular file, new or replaced: written to `temp` beside `target` (the end of `path`'s
    /// symlinks), which is renamed over `target` once everything is written.
    File {
        path: PathBuf,
        target: PathBuf,
        temp: TempFile,
    },
}

impl Output {
    /// `None` or `-` is stdout. An output that is one of `inputs` (the same file, however named:
    /// a symlink, a hard link, `-` when stdin is that file) is refused, as is a second output of
    /// this run to the same place: a run must never destroy what it reads or one of its outputs
    /// with another. Callers make every output with this before reading any input, so that
    /// nothing is read for a run that cannot write.
    ///
    /// A file is written through a temporary file beside it, made here: a folder that cannot
    /// take it fails the run before the inputs are read.
    pub(crate) fn new(path: Option<&Path>, inputs: &[&Path]) -> Result<Output> {
        let inputs: Vec<(FileId, &Path)> = inputs
            .iter()
            .filter_map(|&input| {
                let id = if is_dash(input) {
                    stream_metadata(io::stdin().as_fd()).as_ref().and_then(file_id)
                } else {
                    std::fs::metadata(input).ok().as_ref().and_then(file_id)
                };
                Some((id?, input))
            })
            .collect();
        let input_is = |id: FileId| inputs.iter().find(|(i, _)| *i == id).map(|(_, input)| *input);

        let Some(path) = path.filter(|p| !is_dash(p)) else {
            if crate::session::run_number() != 0 {
                claim(Claim { run: 0, stdout: true, path: None, id: None }, "standard output")?;
                return Ok(Output::Captured);
            }
            let stdout = stream_metadata(io::stdout().as_fd());
            // `cpuprof top app.cpuprofile >> app.cpuprofile`
            if let Some(input) = stdout.as_ref().and_then(file_id).and_then(input_is) {
                let message = if is_dash(input) {
                    "refusing to write the output over the input: standard output and standard input are the same file"
                        .to_owned()
                } else {
                    format!(
                        "refusing to write the output over the input {}: standard output is that file",
                        input.display()
                    )
                };
                return Err(UsageError(message).into());
            }
            claim(
                Claim { run: 0, stdout: true, path: None, id: stdout.as_ref().and_then(place_id) },
                "standard output",
            )?;
            return Ok(Output::Stdout);
        };
        let (target, id) = match std::fs::metadata(path) {
            Ok(meta) if !meta.is_file() && cpuprof_app::session::serving() => {
                // A device or pipe may be the session's own standard output.
                return Err(UsageError(format!(
                    "refusing to write {}: the MCP server writes regular files only",
                    path.display()
                ))
                .into());
            }
            Ok(meta) if !meta.is_file() => {
                // `-o /dev/stdout --flamegraph /dev/stdout` into a pipe: refused; `/dev/null` twice is fine.
                claim(Claim { run: 0, stdout: false, path: None, id: place_id(&meta) }, &path.display().to_string())?;
                return Ok(Output::InPlace(path.to_owned()));
            }
            Ok(meta) => {
                let id = file_id(&meta);
                if let Some(input) = id.and_then(input_is) {
                    let message = if is_dash(input) {
                        format!(
                            "refusing to write the output over the input: {} is the file on standard input",
                            path.display()
                        )
                    } else {
                        format!("refusing to write the output over the input {}", input.display())
                    };
                    return Err(UsageError(message).into());
                }
                // Through a symlink, replace what it points to, not the link.
                let target = path.canonicalize().with_context(|| format!("cannot write {}", path.display()))?;
                (target, id)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => (new_file_target(path)?, None),
            Err(e) => return Err(e).with_context(|| format!("cannot write {}", path.display())),
        };
        claim(Claim { run: 0, stdout: false, path: Some(target.clone()), id }, &path.display().to_string())?;
        let dir = target.parent().unwrap_or(Path::new("/"));
        let temp =
            TempFile::new_in(dir).with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
        Ok(Output::File { path: path.to_owned(), target, temp })
    }

    /// Writes `bytes` in full: to stdout, in place, or to the temporary file that is then
    /// renamed over the target.
    pub(crate) fn write(self, bytes: &[u8]) -> Result<()> {
        match self {
            Output::Captured => {
                crate::session::capture(|c| c.stdout.extend_from_slice(bytes));
                Ok(())
            }
            Output::Stdout => {
                // Straight to file descriptor 1: std's handle takes a descriptor not open for
                // writing (EBADF) for success, and the report would be lost with exit 0.
                let mut out = File::from(io::stdout().as_fd().try_clone_to_owned().context("cannot write to stdout")?);
                out.write_all(bytes).context("cannot write to stdout")
            }
            Output::InPlace(path) => {
                let mut file = OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                file.write_all(bytes)
                    .and_then(|()| file.flush())
                    .with_context(|| format!("cannot write {}", path.display()))
            }
            Output::File { path, target, temp } => {
                // The temporary file is private (0600); give the result the permissions of the
                // file it replaces, or those a new file gets (0666 less the umask).
                let permissions = std::fs::metadata(&target)
                    .map_or_else(|_| std::fs::Permissions::from_mode(0o666 & !umask()), |m| m.permissions());
                temp.fill(bytes, permissions).with_context(|| format!("cannot write {}", path.display()))?;
                temp.persist(&target).with_context(|| format!("cannot write {}", path.display()))?;
                crate::session::capture(|c| c.files.push(path));
                Ok(())
            }
        }
    }
}

/// Where `path`, which does not exist, is created: at the end of its symlinks (a dangling link
/// is followed, as a live one is: its target is created), in a folder that must exist.
fn new_file_target(path: &Path) -> Result<PathBuf> {
    let mut end = path.to_owned();
    for _ in 0..40 {
        let Ok(next) = std::fs::read_link(&end) else { break };
        // A relative target is relative to the link's folder.
        end = match end.parent() {
            Some(dir) => dir.join(next),
            None => next,
        };
    }
    let shown = || {
        if end == path {
            format!("cannot write {}", path.display())
        } else {
            format!("cannot write {} (a symlink to {})", path.display(), end.display())
        }
    };
    if std::fs::symlink_metadata(&end).is_ok_and(|m| m.file_type().is_symlink()) {
        bail!("{}: too many levels of symbolic links", shown());
    }
    let Some(name) = end.file_name() else { bail!("{}: not a file name", shown()) };
    let dir = match end.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = dir.canonicalize().with_context(|| format!("{}: folder {}", shown(), dir.display()))?;
    Ok(dir.join(name))
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
