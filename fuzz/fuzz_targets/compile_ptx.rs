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
    ori_fuzz::check::host_runs(data);
});
