//! `parse` with the format forced to `SourceFormat::PreprocessJson` (the JSON of
//! `node --prof-process --preprocess`, no sniffing).
//!
//! Seeds (scripts/fuzz.sh makes them): fixtures/ticklog/*.preprocess.json.gz is 7 MB unzipped,
//! so it is cut as the Chromium trace is: the first 40 ticks and the `code` entries their
//! stacks name, renumbered, with their `functions`. Its dictionary is the JSON one (the
//! `.cpuprofile` and trace keys).
#![no_main]

use cpuprof_parse::SourceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cpuprof_fuzz::run(data, Some(SourceFormat::PreprocessJson)));
