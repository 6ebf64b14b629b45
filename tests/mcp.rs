//! The MCP server (`cpuprof mcp`) through a real client: `tests/mcp/client.mjs` drives it with
//! the official TypeScript SDK (pinned in tests/mcp/package-lock.json) and checks every tool's
//! answer against the command line's JSON for the same options, the function handles, the
//! budget, the session's cache and the error shapes.

use crate::common;

use common::{npm_ci, root};

#[test]
fn a_real_mcp_client_gets_the_command_lines_answers() {
    npm_ci("tests/mcp");
    let bin = assert_cmd::cargo::cargo_bin("cpuprof");
    let out = std::process::Command::new("node")
        .arg("tests/mcp/client.mjs")
        .arg(&bin)
        .current_dir(root())
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("node runs the MCP client");
    let report = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{report}");
    // Every check ran and held.
    assert!(!report.contains("not ok"), "{report}");
    assert!(report.matches("\nok - ").count() + usize::from(report.starts_with("ok - ")) >= 9, "{report}");
}
