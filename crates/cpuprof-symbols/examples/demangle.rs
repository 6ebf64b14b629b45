//! `… | cargo run --example demangle`: each stdin line demangled as cpuprof shows it (to
//! compare with `c++filt` or `nm -C`).
#![allow(clippy::print_stdout)]

use std::io::BufRead;

fn main() -> std::io::Result<()> {
    for line in std::io::stdin().lock().lines() {
        println!("{}", cpuprof_symbols::demangle(&line?));
    }
    Ok(())
}
