//! A stable-Rust fuzz loop for `ori run`'s property
//! (`ori_fuzz::check::host_launch`), for machines without cargo-fuzz:
//! mutations of the kernels under the given folders (`ori_fuzz::mutate`,
//! stacked up to four deep) under launches from random bytes, for the given
//! number of seconds. A panic or a broken property is written to
//! `fuzz/artifacts/run_kernel/` as the input bytes (replay them with the
//! `run_kernel` fuzz target or `host_launch`). No coverage feedback: the
//! inputs are random, not evolved.
//!
//! `cargo run --release -p ori-fuzz --example fuzz_run -- SECONDS SEED DIR...`

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

fn ptx_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(60);
    let mut x: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut files = Vec::new();
    for d in args.iter().skip(2) {
        ptx_files(std::path::Path::new(d), &mut files);
    }
    files.sort();
    assert!(!files.is_empty(), "no .ptx under the folders given");
    let mut next = move || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    std::panic::set_hook(Box::new(|_| {}));
    let _ = std::fs::create_dir_all("fuzz/artifacts/run_kernel");
    let start = Instant::now();
    let (mut runs, mut found) = (0u64, 0u64);
    while start.elapsed() < Duration::from_secs(secs) {
        let path = &files[(next() % files.len() as u64) as usize];
        let mut text = std::fs::read_to_string(path).unwrap_or_default();
        for _ in 0..next() % 5 {
            text = ori_fuzz::mutate::mutate(&text, &next().to_le_bytes());
        }
        let mut input: Vec<u8> = (0..ori_fuzz::check::LAUNCH_BYTES)
            .map(|_| next() as u8)
            .collect();
        input.extend_from_slice(text.as_bytes());
        runs += 1;
        // The input being run, for a process that aborts (an allocation
        // failure is not a panic): the wrapper keeps it.
        let _ = std::fs::write("fuzz/artifacts/run_kernel/current", &input);
        let verdict = catch_unwind(AssertUnwindSafe(|| ori_fuzz::check::host_launch(&input)));
        let why = match verdict {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => e,
            Err(p) => p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        };
        found += 1;
        let dir = std::path::Path::new("fuzz/artifacts/run_kernel");
        let _ = std::fs::create_dir_all(dir);
        let file = dir.join(format!(
            "crash-{runs}-{}",
            path.file_stem().unwrap_or_default().to_string_lossy()
        ));
        let _ = std::fs::write(&file, &input);
        eprintln!(
            "{}: {} ({})",
            file.display(),
            why.lines().next().unwrap_or(""),
            path.display()
        );
    }
    eprintln!(
        "{runs} inputs in {:.0} s, {found} failing",
        start.elapsed().as_secs_f64()
    );
}
