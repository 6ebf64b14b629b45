//! clap's errors, said as every usage error is said.

/// clap's error on one line, as every usage error is said: the values it quotes from the
/// command line escaped (a value holding `\n::error::` must not start a line of a CI log), its
/// tips after a `;`, without its usage block and its pointer to `--help`.
pub(crate) fn clap_message(err: &clap::Error) -> String {
    let mut text = err.to_string();
    // The values quoted from the command line, escaped first: the newlines left are clap's own.
    for (_, value) in err.context() {
        let values = match value {
            clap::error::ContextValue::String(v) => std::slice::from_ref(v),
            clap::error::ContextValue::Strings(v) => v.as_slice(),
            _ => &[],
        };
        for v in values {
            let shown = cpuprof_render::text::visible(v);
            if shown != *v {
                text = text.replace(v.as_str(), &shown);
            }
        }
    }
    let mut parts = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("Usage:") {
            // The usage block runs to the next blank line, which `lines` has dropped: its
            // lines are indented; clap's pointer to --help is the one line after it.
            break;
        }
        if line.starts_with("For more information") {
            continue;
        }
        parts.push(line.strip_prefix("error: ").unwrap_or(line));
    }
    // `…not provided:` then what was not: one sentence.
    let mut message = String::new();
    for part in parts {
        if !message.is_empty() {
            message.push_str(if message.ends_with(':') { " " } else { "; " });
        }
        message.push_str(part);
    }
    message
}
