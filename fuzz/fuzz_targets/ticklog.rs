//! `parse` with the format forced to `InputFormat::TickLog` (no sniffing).
#![no_main]

use cpuprof_parse::InputFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cpuprof_fuzz::run(data, Some(InputFormat::TickLog)));
