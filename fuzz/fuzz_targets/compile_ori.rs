//! Fuzz target: any bytes as ori's `.ori` text form. Text that parses and
//! verifies prints back to the same text; any text compiles (both modes,
//! verifier after every pass) with no panic and no internal error: a
//! malformed module is the input's error, with its line. Seed it with `.ori`
//! dumps of the corpus (`fuzz/README.md`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = ori_fuzz::check::any_ori(data) {
        panic!("{e}");
    }
});
