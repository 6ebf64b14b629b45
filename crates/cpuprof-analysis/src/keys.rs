use cpuprof_model::{Func, FuncKind, Profile};

const MARKER: &str = "/node_modules/";

/// What one row of a top table stands for (`function`, `file`, … in requests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum GroupBy {
    /// A function: name, file, line and column (and kind). The default.
    #[default]
    Function,
    /// The file (script url) a function lives in.
    File,
    /// The npm package a file lives in; `(node)` for node internals, `(app)` for the rest.
    Package,
    /// A source line, using V8's line-level ticks where the profile has them.
    Line,
    /// A [`crate::Category`]: the user's code, dependencies, node, native, GC, idle, program.
    Category,
}

/// The label of a pseudo-function's own group (`(program)`, …), or `None` for code.
fn meta_label(kind: FuncKind) -> Option<&'static str> {
    match kind {
        FuncKind::Program => Some("(program)"),
        FuncKind::Gc => Some("(garbage collector)"),
        FuncKind::Idle => Some("(idle)"),
        FuncKind::Root => Some("(root)"),
        FuncKind::Native => Some("(native)"),
        FuncKind::Builtin => Some("(builtins)"),
        FuncKind::Regexp => Some("(regexp)"),
        FuncKind::Unknown => Some("(unaccounted)"),
        FuncKind::Js | FuncKind::Other | FuncKind::Cpp | FuncKind::SharedLib => None,
    }
}

/// The row label of `func` grouped by file (`by_package == false`) or by package.
pub(crate) fn group_label(profile: &Profile, func: &Func, by_package: bool) -> String {
    if let Some(label) = meta_label(func.kind) {
        return label.to_owned();
    }
    if let Some(library) = func.library {
        // Native code: the executable or library is both its file and its package.
        let path = profile.strings.get(profile.libraries[library].path);
        let base = path.rsplit('/').next().unwrap_or(path);
        return if by_package { format!("{base} (native)") } else { path.to_owned() };
    }
    let url = profile.strings.get(func.file);
    if by_package {
        package_of(url).to_owned()
    } else if url.is_empty() {
        "(eval)".to_owned()
    } else {
        url.to_owned()
    }
}

/// The package a script url belongs to: the name after the last `/node_modules/`
/// (`@scope/name` for scoped packages, which also covers pnpm's
/// `node_modules/.pnpm/x@1.0.0/node_modules/x/…`), `(node)` for `node:` internals, and
/// `(app)` for everything else.
///
/// ```
/// use cpuprof_analysis::package_of;
/// assert_eq!(package_of("file:///srv/node_modules/@acme/money/index.js"), "@acme/money");
/// assert_eq!(package_of("file:///srv/node_modules/.pnpm/lodash.merge@4.6.2/node_modules/lodash.merge/index.js"), "lodash.merge");
/// assert_eq!(package_of("node:internal/main/run_main_module"), "(node)");
/// assert_eq!(package_of("file:///srv/src/app.js"), "(app)");
/// ```
pub fn package_of(url: &str) -> &str {
    if url.starts_with("node:") {
        return "(node)";
    }
    let Some(at) = url.rfind(MARKER) else { return "(app)" };
    let rest = &url[at + MARKER.len()..];
    let mut parts = rest.splitn(3, '/');
    let first = parts.next().unwrap_or("");
    let end = if first.starts_with('@') {
        match parts.next() {
            Some(second) if !second.is_empty() => first.len() + 1 + second.len(),
            _ => first.len(),
        }
    } else {
        first.len()
    };
    let name = &rest[..end];
    if name.is_empty() {
        "(app)"
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages() {
        assert_eq!(package_of("file:///a/node_modules/left-pad/index.js"), "left-pad");
        assert_eq!(package_of("file:///a/node_modules/x/node_modules/@s/y/lib/z.js"), "@s/y");
        assert_eq!(package_of("file:///a/node_modules/@s"), "@s");
        assert_eq!(package_of("file:///a/node_modules/"), "(app)");
        assert_eq!(package_of("node:crypto"), "(node)");
        assert_eq!(package_of(""), "(app)");
    }
}
