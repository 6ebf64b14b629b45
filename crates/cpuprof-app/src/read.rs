//! Reading one profile from a file or standard input (`-`), with a progress bar on a terminal
//! for big files, refusing what a session's channel is, and stopping once cancelled.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use cpuprof_model::Profile;
use cpuprof_parse::{Origin, ParseOptions};
use indicatif::{ProgressBar, ProgressStyle};

use crate::usage::UsageError;

/// True when `path` means standard input/output.
pub fn is_dash(path: &Path) -> bool {
    path == Path::new("-")
}

/// Every progress bar of a run, drawn together: inputs read in parallel (`merge`, `diff`) and the
/// job's own bar each keep a line of their own instead of overwriting one another.
pub fn progress(bar: ProgressBar) -> ProgressBar {
    static BARS: std::sync::OnceLock<indicatif::MultiProgress> = std::sync::OnceLock::new();
    BARS.get_or_init(indicatif::MultiProgress::new).add(bar)
}

/// Files at least this big get a progress bar (when stderr is a terminal).
const PROGRESS_MIN_BYTES: u64 = 64 << 20;

/// Reads and parses one profile.
pub fn read_profile(path: &Path, options: &ParseOptions) -> Result<Profile> {
    if is_dash(path) && crate::session::serving() {
        return Err(UsageError("standard input carries the MCP session: give the profile's path".to_owned()).into());
    }
    if is_dash(path) {
        return Ok(cpuprof_parse::parse(io::stdin(), &Origin::stdin(), options)?);
    }
    let origin = Origin(path.display().to_string());
    let file = if crate::session::serving() {
        // What was opened is checked, not the path (a link swapped in between would pass), and
        // opened without waiting: a FIFO's open would block until someone writes to it.
        use std::os::unix::fs::OpenOptionsExt;
        let opened = OpenOptions::new()
            .read(true)
            .custom_flags(i32::try_from(rustix::fs::OFlags::NONBLOCK.bits()).unwrap_or(0))
            .open(path);
        // A socket cannot be opened at all: say what can.
        let regular = match &opened {
            Ok(file) => file.metadata().is_ok_and(|m| m.is_file()),
            Err(_) => std::fs::metadata(path).is_ok_and(|m| m.is_file()) || std::fs::metadata(path).is_err(),
        };
        if regular {
            opened.with_context(|| format!("cannot open {}", path.display()))?
        } else {
            // `/dev/stdin`, `/proc/self/fd/0`, a pipe: it may be the session's own channel.
            return Err(UsageError(format!(
                "{}: the MCP server reads regular files only (standard input carries the session)",
                path.display()
            ))
            .into());
        }
    } else {
        File::open(path).with_context(|| format!("cannot open {}", path.display()))?
    };
    let cancelled = crate::session::cancelled();
    if let Some(cancelled) = cancelled {
        return Ok(cpuprof_parse::parse(Cancellable { inner: file, cancelled }, &origin, options)?);
    }
    let size = file.metadata().map_or(0, |m| m.len());
    if size >= PROGRESS_MIN_BYTES && io::stderr().is_terminal() {
        let bar = progress(
            ProgressBar::new(size).with_style(
                // The name last, cut to what the terminal leaves: a wrapped line would break the bars.
                ProgressStyle::with_template("{bar:24} {bytes:>10}/{total_bytes:<10} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
        );
        bar.set_message(format!("reading {}", cpuprof_render::text::visible(&path.display().to_string())));
        let profile = cpuprof_parse::parse(bar.wrap_read(file), &origin, options);
        bar.finish_and_clear();
        return Ok(profile?);
    }
    Ok(cpuprof_parse::parse(file, &origin, options)?)
}

/// A reader that fails once its run is cancelled.
struct Cancellable<R> {
    inner: R,
    cancelled: std::sync::Arc<AtomicBool>,
}

impl<R: io::Read> io::Read for Cancellable<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancelled.load(Ordering::Relaxed) {
            return Err(io::Error::other("the call was cancelled"));
        }
        self.inner.read(buf)
    }
}
