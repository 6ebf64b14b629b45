//! `cargo run --example lookup -- FILE ADDRESS...`: the symbol at each file address.
#![allow(clippy::print_stdout)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: lookup FILE ADDRESS...")?;
    let t = std::time::Instant::now();
    let file = cpuprof_symbols::SymbolFile::open(std::path::Path::new(&path))?;
    println!("{} symbols, build id {:?}, read in {:?}", file.len(), file.build_id_hex(), t.elapsed());
    for a in args {
        let address = u64::from_str_radix(a.trim_start_matches("0x"), 16)?;
        match file.lookup(address) {
            Some(id) => println!("{a} {} [{}]", file.name(id), file.raw_name(id)),
            None => println!("{a} ?"),
        }
    }
    Ok(())
}
