//! Runs `ori_fuzz::check::pipeline` on crash inputs of the `pipelines` fuzz
//! target and prints each one's failure kind and first line:
//! `cargo run -p ori-fuzz --example classify -- fuzz/artifacts/pipelines/*`.
//! Files ending in `.ori` or under `compile_ori/` are checked as `.ori`
//! text instead (`ori_fuzz::check::any_ori`).

fn main() {
    for path in std::env::args().skip(1) {
        if path.ends_with(".ori") || path.contains("compile_ori/") {
            let bytes = std::fs::read(&path).unwrap_or_default();
            match ori_fuzz::check::any_ori(&bytes) {
                Ok(()) => println!("{path}\tpasses"),
                Err(e) => println!("{path}\t{e}"),
            }
            continue;
        }
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        match ori_fuzz::check::pipeline(&bytes) {
            Ok(_) => println!("{path}\tpasses"),
            Err(e) => println!(
                "{path}\t{}\t{}",
                ori_fuzz::check::kind(&e),
                e.lines().next().unwrap_or_default()
            ),
        }
    }
}
