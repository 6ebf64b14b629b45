//! The terminal a report is shown on: its width, colour and working directory.

use cpuprof_render::Terminal;

/// The width text reports are fitted to when they go to stdout: `COLUMNS` when it is set (so a
/// pipe can ask), else the terminal's when stdout is one; else, and for files, `None`, so that
/// files and pipes get the same lines wherever they are written.
pub(crate) fn terminal_width(output: Option<&std::path::Path>) -> Option<usize> {
    if !output.is_none_or(crate::io::is_dash) {
        return None;
    }
    let asked = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|c| *c > 0);
    asked.or_else(|| {
        std::io::IsTerminal::is_terminal(&std::io::stdout())
            .then(terminal_size::terminal_size)
            .flatten()
            .map(|(terminal_size::Width(w), _)| usize::from(w))
    })
}

/// The terminal a text report written to `output` is shown on: its width (none with `wide`),
/// `cwd`, and colour only for a person at a terminal, never with `NO_COLOR`.
pub(crate) fn terminal<'c>(output: Option<&std::path::Path>, wide: bool, cwd: Option<&'c str>) -> Terminal<'c> {
    let color = output.is_none_or(crate::io::is_dash)
        && std::io::IsTerminal::is_terminal(&std::io::stdout())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    Terminal { width: terminal_width(output).filter(|_| !wide), cwd, color }
}

/// The directory tables show paths relative to when they must shorten them.
pub(crate) fn current_dir() -> Option<String> {
    std::env::current_dir().ok().and_then(|d| d.to_str().map(str::to_owned))
}
