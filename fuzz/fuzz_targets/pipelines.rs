//! Fuzz target: the bytes drive `ori_fuzz::pipeline::generate`, which always
//! makes a well-formed kernel with a random wgmma pipeline (shapes, sets,
//! fences, commits, waits, accumulator reads and writes, loops, branches,
//! calls, `-c`), so every input reaches phases 85 and 87. The properties of
//! `ori_fuzz::check::pipeline` must hold: accepted, no internal error, no
//! hazard after phase 87 in ISA-strict mode, every hazard announced in
//! ptxas mode, a fix-it that needs nothing more. Failures of an understood
//! kind (`ori_fuzz::check::KNOWN_KINDS`) do not stop the run.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = ori_fuzz::check::pipeline(data) {
        let kind = ori_fuzz::check::kind(&e);
        if !ori_fuzz::check::KNOWN_KINDS.contains(&kind.as_str()) {
            panic!("{kind}: {e}");
        }
    }
});
