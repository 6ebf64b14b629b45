//! `parse` with the format forced to `SourceFormat::PreprocessJson` (the JSON of
//! `node --prof-process --preprocess`, no sniffing).
//!
//! Seeds (scripts/fuzz.sh does not make them yet): fixtures/ticklog/*.preprocess.json.gz is
//! 7 MB unzipped, so cut it as the Chromium trace is cut: the first 40 ticks and the `code`
//! entries their stacks name, renumbered, with their `functions`; plus a hand-made file of
//! every entry type (`JS`, `CODE`, `CPP`, `SHARED_LIB`) and `-1` frames. No dictionary yet
//! (fuzz/dict/json.dict holds the `.cpuprofile` and trace keys).
#![no_main]

use cpuprof_parse::SourceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cpuprof_fuzz::run(data, Some(SourceFormat::PreprocessJson)));
