//! Prints the kernel `ori_fuzz::pipeline::generate` makes for a seed (a
//! little-endian u32, as the smoke test numbers them) or for a file's bytes
//! (a libFuzzer crash input): `cargo run -p ori-fuzz --example generate -- 72`.

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "0".into());
    let bytes = match arg.parse::<u32>() {
        Ok(seed) => seed.to_le_bytes().to_vec(),
        Err(_) => std::fs::read(&arg).unwrap_or_else(|e| {
            eprintln!("{arg}: {e}");
            std::process::exit(1)
        }),
    };
    let (ptx, compile_only) = ori_fuzz::pipeline::generate(&bytes);
    if compile_only {
        println!("// oracle-flags: -c");
    }
    print!("{ptx}");
}
