//! The fuzz targets' properties, run for a bounded number of inputs on
//! stable Rust (the CI's short fuzz run; `fuzz/` runs the same checks under
//! libFuzzer for as long as asked, see its README).
//!
//! Three streams, each deterministic so that a failure reproduces:
//! generated well-formed pipelines (`ori_fuzz::pipeline`: accepted, no
//! internal error, no hazard left after phase 87 in ISA-strict mode, every
//! hazard announced in ptxas mode, a fix-it that needs nothing more),
//! mutations of the corpus kernels as PTX, and mutations of their `.ori`
//! dumps (no panic, no internal error, the text form round-trips).

mod common;

/// Generated pipelines: every seed's kernel keeps the properties, except
/// the seeds listed in `tests/fuzz_known.txt` with the kind of their
/// failure (a ratchet: a listed seed that passes must be taken off).
#[test]
fn generated_pipelines_keep_the_properties() {
    let known_text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_known.txt"),
    )
    .expect("tests/fuzz_known.txt");
    let known: std::collections::BTreeMap<u32, String> = known_text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split('\t');
            let seed = f.next().unwrap().parse().expect("seed");
            (seed, f.next().expect("kind").to_string())
        })
        .collect();
    let (mut serialized, mut injected, mut announced) = (0, 0, 0);
    let mut bad = Vec::new();
    const RUNS: u32 = 400;
    for seed in 0..RUNS {
        let result = ori_fuzz::check::pipeline(&seed.to_le_bytes());
        match (&result, known.get(&seed)) {
            (Ok(o), None) => {
                serialized += usize::from(o.serialized);
                injected += o.injected;
                announced += o.announced;
            }
            (Ok(_), Some(k)) => bad.push(format!(
                "seed {seed} is listed as {k} but keeps the properties: take it off tests/fuzz_known.txt"
            )),
            (Err(e), Some(k)) if *k == ori_fuzz::check::kind(e) => {}
            (Err(e), _) => bad.push(format!("seed {seed} ({}): {e}", ori_fuzz::check::kind(e))),
        }
    }
    println!(
        "{RUNS} generated kernels ({} listed): {serialized} serialized, {injected} injections, {announced} announced hazards",
        known.len()
    );
    if std::env::var_os("FUZZ_SMOKE_ALL").is_some() {
        for b in &bad {
            println!("{}", b.lines().next().unwrap_or_default());
        }
    }
    assert!(bad.is_empty(), "{} failures, first:\n{}", bad.len(), bad[0]);
    // Not vacuous: the generator reaches both of phase 87's outcomes.
    assert!(serialized > 0 && injected > 0);
}

/// Mutations of every corpus kernel, as PTX.
#[test]
fn mutated_corpus_ptx_never_breaks_ori() {
    let mut bad = Vec::new();
    let mut runs = 0;
    for path in common::corpus_cases().iter().step_by(3) {
        let src = std::fs::read_to_string(path).unwrap();
        for k in 0u32..4 {
            let text = ori_fuzz::mutate::mutate(&src, &k.to_le_bytes());
            runs += 1;
            if let Err(e) = ori_fuzz::check::any_ptx(text.as_bytes()) {
                bad.push(format!("{} mutation {k}: {e}", path.display()));
            }
            if k == 0 {
                // The fuzz target's host-backend leg: stops, never panics.
                ori_fuzz::check::host_runs(text.as_bytes());
            }
        }
    }
    println!("{runs} mutated kernels");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Mutations of the `.ori` dumps of corpus kernels.
#[test]
fn mutated_ori_text_never_breaks_ori() {
    let mut bad = Vec::new();
    let mut runs = 0;
    for path in common::corpus_cases().iter().step_by(5) {
        let src = std::fs::read_to_string(path).unwrap();
        let c = ori::compile_ptx("case.ptx", &src, &ori::Options::default());
        let Some(m) = &c.module else { continue };
        let text = ori::ir::write::write_module(m);
        if let Err(e) = ori_fuzz::check::any_ori(text.as_bytes()) {
            bad.push(format!("{}: unmutated: {e}", path.display()));
        }
        for k in 0u32..4 {
            let t = ori_fuzz::mutate::mutate(&text, &k.to_le_bytes());
            runs += 1;
            if let Err(e) = ori_fuzz::check::any_ori(t.as_bytes()) {
                bad.push(format!("{} mutation {k}: {e}", path.display()));
            }
        }
    }
    println!("{runs} mutated .ori modules");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Inputs the `pipelines` fuzz target found (`tests/fuzz_found/pipelines`,
/// the raw bytes libFuzzer saved): a file named `ok-*` keeps every property
/// (its failure was fixed; the name says what it was), one named
/// `KIND-*` (`fixit-C7519-...`) must still fail with exactly that kind, a
/// ratchet like `tests/fuzz_known.txt`: once it passes it is renamed `ok-`.
#[test]
fn found_pipeline_inputs_keep_their_verdict() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_found/pipelines");
    let mut bad = Vec::new();
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/fuzz_found/pipelines") {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        n += 1;
        let (kind, _hash) = name.rsplit_once('-').expect("KIND-HASH");
        let result = ori_fuzz::check::pipeline(&bytes);
        match result {
            Ok(_) if kind.starts_with("ok") => {}
            Ok(_) => bad.push(format!("{name} passes now: rename it ok-{kind}-...")),
            Err(e) if kind.starts_with("ok") => bad.push(format!(
                "{name} ({}): {}",
                ori_fuzz::check::kind(&e),
                e.lines().next().unwrap_or_default()
            )),
            Err(e) if ori_fuzz::check::kind(&e) == kind => {}
            Err(e) => bad.push(format!(
                "{name} fails as {}, not {kind}",
                ori_fuzz::check::kind(&e)
            )),
        }
    }
    assert!(n >= 10, "only {n} inputs in {}", dir.display());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `ori run`'s fuzz property (`ori_fuzz::check::host_launch`, the
/// `run_kernel` target) on mutations of real kernels, each under a launch
/// its 16 leading bytes choose: no panic, and an error about an
/// instruction names its line.
#[test]
fn mutated_kernels_under_random_launches_never_panic_ori_run() {
    let mut bad = Vec::new();
    let mut runs = 0;
    let kernels: Vec<_> = common::real_kernels().into_iter().step_by(40).collect();
    for (i, path) in kernels.iter().enumerate() {
        let src = std::fs::read_to_string(path).unwrap();
        for k in 0u32..2 {
            let seed = (i as u32) * 7 + k;
            let text = if k == 0 {
                src.clone()
            } else {
                ori_fuzz::mutate::mutate(&src, &seed.to_le_bytes())
            };
            // The launch bytes: a fixed stream of the seed (splitmix).
            let mut x = u64::from(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut input: Vec<u8> = (0..ori_fuzz::check::LAUNCH_BYTES)
                .map(|_| {
                    x ^= x >> 31;
                    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    (x >> 24) as u8
                })
                .collect();
            input.extend_from_slice(text.as_bytes());
            runs += 1;
            if let Err(e) = ori_fuzz::check::host_launch(&input) {
                bad.push(format!("{} input {k}: {e}", path.display()));
            }
        }
    }
    println!("{runs} kernels run under random launches");
    assert!(runs >= 20, "{runs}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
