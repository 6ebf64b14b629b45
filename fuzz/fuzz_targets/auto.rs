//! `parse` with no format given: sniffing (`cpuprof_parse::sniff`), gzip detection, then
//! whichever parser the sniffer picks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cpuprof_fuzz::run(data, None));
