//! `parse` with the format forced to `SourceFormat::PerfScript` (`perf script` text, no
//! sniffing).
//!
//! Seeds (scripts/fuzz.sh makes them): fixtures/perf/*.perf-script.txt, cut at line ends into
//! a 16 KB head (the `#` header and the first samples) and a 16 KB tail, as the tick-log seeds
//! are. The target is named as `--input-format` names the format; a crash kept
//! as fixtures/fuzz/perf-script-WHAT.txt needs tests/bad_input.rs to match the name against
//! the format names (it splits at the first `-`).
#![no_main]

use cpuprof_parse::SourceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cpuprof_fuzz::run(data, Some(SourceFormat::PerfScript)));
