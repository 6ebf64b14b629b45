//! `parse` with the format forced to `SourceFormat::Folded` (no sniffing).
#![no_main]

use cpuprof_parse::SourceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cpuprof_fuzz::run(data, Some(SourceFormat::Folded)));
