//! Baseline for `scripts/bench-top.sh`: the plainest typed parse of a V8 `.cpuprofile` with `serde_json`.
//!
//! It reads the whole file, deserializes it into `#[derive(Deserialize)]` structs (strings borrowed from the
//! input where they have no escapes) and prints the node count, the sample count and the sum of `timeDeltas`.
//! No interning, no model, no aggregation: this is the floor that a typed serde parse sets, which `cpuprof top`
//! (parse + aggregate + render) is compared with.
//!
//! ```text
//! cargo build --release --example serde_baseline -p cpuprof-parse
//! target/release/examples/serde_baseline big.cpuprofile
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::borrow::Cow;
use std::process::ExitCode;

use serde::Deserialize;

// Fields are parsed so that the cost is real, but only counts are printed.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Profile<'a> {
    #[serde(borrow)]
    nodes: Vec<Node<'a>>,
    start_time: i64,
    end_time: i64,
    #[serde(default)]
    samples: Vec<u64>,
    #[serde(default)]
    time_deltas: Vec<i64>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Node<'a> {
    id: u64,
    #[serde(borrow)]
    call_frame: CallFrame<'a>,
    #[serde(default)]
    hit_count: u64,
    /// Omitted on leaves.
    #[serde(default)]
    children: Vec<u64>,
    #[serde(default)]
    position_ticks: Vec<PositionTick>,
}

/// `Cow` rather than `&str`: a name such as `RegExp: ^\/users\/(?<id>[^/]+)$` is written with JSON escapes,
/// and a borrowed `&str` cannot hold the unescaped text.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallFrame<'a> {
    #[serde(borrow)]
    function_name: Cow<'a, str>,
    #[serde(borrow)]
    script_id: Cow<'a, str>,
    #[serde(borrow)]
    url: Cow<'a, str>,
    line_number: i64,
    column_number: i64,
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct PositionTick {
    line: i64,
    ticks: u64,
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        eprintln!("usage: serde_baseline FILE.cpuprofile");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("serde_baseline: error: {}: {err}", path.to_string_lossy());
            return ExitCode::FAILURE;
        }
    };
    let profile: Profile<'_> = match serde_json::from_slice(&bytes) {
        Ok(profile) => profile,
        Err(err) => {
            eprintln!("serde_baseline: error: {}: {err}", path.to_string_lossy());
            return ExitCode::FAILURE;
        }
    };
    let sum_deltas: i64 = profile.time_deltas.iter().sum();
    println!("nodes {}", profile.nodes.len());
    println!("samples {}", profile.samples.len());
    println!("sum_time_deltas_us {sum_deltas}");
    ExitCode::SUCCESS
}
