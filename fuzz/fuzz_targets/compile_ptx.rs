//! Fuzz target: the whole pipeline — parse, lower, phases 85 and 87 (in both
//! modes, with the verifier after each pass), the three diagnostic renderers
//! and both back ends — must never panic, whatever the input. Seeded with
//! the oracle corpus, so mutations start from real wgmma pipelines. Also
//! under `-c`, where the fix-it writes calls out as their callees' bodies,
//! and through the host backend (every entry, a 4 KiB buffer per parameter,
//! a short step limit): it must stop with an error, never panic. No input
//! may give an internal error (`ori_fuzz::check::any_ptx`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = ori_fuzz::check::any_ptx(data) {
        panic!("{e}");
    }
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let opts = ori::Options {
        verify: true,
        ..ori::Options::default()
    };
    let c = ori::compile_ptx("fuzz.ptx", src, &opts);
    if let Some(m) = &c.module {
        for f in m.funcs.values().filter(|f| f.has_body) {
            let mut g = ori::host::GlobalMemory::new();
            let launch = ori::host::Launch {
                params: f.params.iter().map(|_| g.alloc(vec![0; 4096])).collect(),
                dynamic_shared: 4096,
                step_limit: 20_000,
            };
            let _ = ori::host::run(m, &f.name, &launch, &mut g);
        }
    }
});
