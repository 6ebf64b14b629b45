//! Issue 21: the README's GitHub Actions recipe works as written. Its `run:` steps (all but the
//! install: the binary under test is on the `PATH` instead) are run with bash as the runner runs
//! them, in a workspace holding two checkouts of a small script, with `GITHUB_WORKSPACE` and
//! `GITHUB_STEP_SUMMARY` set as the runner sets them.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::root;
use yaml_rust2::{Yaml, YamlLoader};

/// The recipe: the YAML block after the README's `ci-recipe` marker.
fn recipe() -> Yaml {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let after = readme.split("<!-- ci-recipe").nth(1).expect("the ci-recipe marker");
    let block = after.split("```yaml\n").nth(1).and_then(|b| b.split("\n```").next()).expect("a yaml block");
    YamlLoader::load_from_str(block).expect("the recipe is YAML").remove(0)
}

/// A benchmark whose `hot` function runs `hot_rounds` rounds per call.
fn bench(hot_rounds: u32) -> String {
    format!(
        "function hot(n) {{ let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }}\n\
         function steady(n) {{ let x = 0; for (let i = 0; i < n; i++) x = (x + i * 7) % 999983; return x; }}\n\
         function main() {{ let s = 0; for (let k = 0; k < 20; k++) {{ s += hot({hot_rounds}); s += steady(2000000); }} return s; }}\n\
         console.log(main());\n"
    )
}

/// One recipe at a time: two at once would each slow the other's runs unevenly.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs the recipe's shell steps in `workspace`; the output of each step.
fn run_steps(workspace: &Path) -> Vec<(String, Output)> {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let recipe = recipe();
    let job = &recipe["jobs"]["profile"];
    let bin = assert_cmd::cargo::cargo_bin("cpuprof");
    let path = format!(
        "{}:{}",
        bin.parent().expect("the binary's folder").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut outputs = Vec::new();
    for step in job["steps"].as_vec().expect("steps") {
        let (Some(script), name) = (step["run"].as_str(), step["name"].as_str().unwrap_or("")) else { continue };
        if name == "Install cpuprof" {
            continue;
        }
        // As the runner runs a `run:` step: bash without profiles, stopping at the first failure.
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script]).current_dir(workspace);
        for (key, value) in job["env"].as_hash().expect("the job's env") {
            let value = match value {
                Yaml::Integer(i) => i.to_string(),
                v => v.as_str().expect("a string").to_owned(),
            };
            cmd.env(key.as_str().expect("a name"), value);
        }
        cmd.env("PATH", &path)
            .env("GITHUB_WORKSPACE", workspace)
            .env("GITHUB_STEP_SUMMARY", workspace.join("summary.md"))
            .env_remove("NODE_OPTIONS")
            .env_remove("COLUMNS");
        let output = cmd.output().expect("bash");
        let failed = !output.status.success();
        outputs.push((name.to_owned(), output));
        if failed {
            break;
        }
    }
    outputs
}

/// A workspace with the base and the pull request checked out as `base/` and `pr/`.
fn workspace(base_rounds: u32, pr_rounds: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (side, rounds) in [("base", base_rounds), ("pr", pr_rounds)] {
        std::fs::create_dir_all(dir.path().join(side).join("bench")).expect("mkdir");
        std::fs::write(dir.path().join(side).join("bench/load.js"), bench(rounds)).expect("write");
    }
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_ci_recipe_gates_a_regression_and_annotates_its_line() {
    let dir = workspace(2_000_000, 8_000_000);
    let steps = run_steps(dir.path());
    let names: Vec<&str> = steps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Profile both sides", "Compare"], "the recipe's shell steps");
    let (_, profile) = &steps[0];
    assert!(profile.status.success(), "{}", text(&profile.stderr));
    for side in ["base", "pr"] {
        let runs = std::fs::read_dir(dir.path().join("profiles").join(side)).expect("profiles").count();
        assert_eq!(runs, 5, "RUNS profiles of {side}");
    }
    let (_, compare) = &steps[1];
    let stdout = text(&compare.stdout);
    assert_eq!(compare.status.code(), Some(3), "the gate trips:\n{stdout}\n{}", text(&compare.stderr));
    // `hot` got 4× slower: a warning on its line, the path relative to the repository.
    let hot = stdout.lines().find(|l| l.starts_with("::warning title=cpuprof%3A hotter hot,")).expect(&stdout);
    assert!(hot.contains(",file=bench/load.js,line=1::hot (bench/load.js:1) self +"), "{hot}");
    assert!(stdout.lines().all(|l| l.starts_with("::warning ") || l.starts_with("::notice ")), "{stdout}");
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).expect("the job summary");
    assert!(summary.starts_with("**cpuprof diff**: 1 hotter"), "{summary}");
    assert!(summary.contains("| ▲ **hotter** | `hot` |"), "{summary}");
    assert!(text(&compare.stderr).contains("regression: hot (bench/load.js:1) self +"), "{}", text(&compare.stderr));
    assert!(dir.path().join("diff.svg").exists(), "the flame graph to upload");
}

#[test]
fn the_ci_recipe_passes_the_same_code() {
    let dir = workspace(2_000_000, 2_000_000);
    let steps = run_steps(dir.path());
    let (_, compare) = steps.last().expect("steps");
    let stdout = text(&compare.stdout);
    assert!(compare.status.success(), "{stdout}\n{}", text(&compare.stderr));
    assert!(!stdout.contains("::warning"), "{stdout}");
    // The runs alternate, so a machine slowing down hits both sides (one side run after the other
    // came out 23% cooler here while another job ran).
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).expect("the job summary");
    assert!(summary.starts_with("**cpuprof diff**: 0 hotter, 0 new, "), "{summary}");
}

#[test]
fn the_job_summary_is_never_an_input_and_github_is_for_diff() {
    let input = "fixtures/cpuprofile/auth-sync.cpuprofile";
    let before = std::fs::read(root().join(input)).expect("fixture");
    let out = common::cpuprof()
        .args(["diff", input, "fixtures/cpuprofile/auth-async.cpuprofile", "--format", "github"])
        .env("GITHUB_STEP_SUMMARY", root().join(input))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("refusing to add to the input"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(root().join(input)).expect("fixture"), before, "the input is untouched");
    // Nor on standard input.
    let out = Command::new(assert_cmd::cargo::cargo_bin("cpuprof"))
        .current_dir(root())
        .args(["diff", "-", "fixtures/cpuprofile/auth-async.cpuprofile", "--format", "github"])
        .env("GITHUB_STEP_SUMMARY", root().join(input))
        .stdin(std::fs::File::open(root().join(input)).expect("fixture"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(root().join(input)).expect("fixture"), before, "the input is untouched");
    // No other output of the run replaces the summary.
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier steps\n").expect("write");
    let out = common::cpuprof()
        .args(["diff", input, "fixtures/cpuprofile/auth-async.cpuprofile", "--format", "github", "--flamegraph"])
        .arg(&summary)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&summary).expect("summary"), "earlier steps\n");
    let out = common::cpuprof().args(["top", input, "--format", "github"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    // Not offered (`top -h` does not list it), so refused as any unknown value is.
    assert!(text(&out.stderr).contains("invalid value 'github' for '--format"), "{}", text(&out.stderr));
    // Refused before any input is read (a missing one is not what the user hears of first).
    for command in ["top", "tree", "callers", "blocks"] {
        let mut args = vec![command, "no-such.cpuprofile"];
        if command == "callers" {
            args.push("main");
        }
        let out = common::cpuprof().args(&args).args(["--format", "github"]).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains("invalid value 'github' for '--format"), "{command}: {}", text(&out.stderr));
    }
}
