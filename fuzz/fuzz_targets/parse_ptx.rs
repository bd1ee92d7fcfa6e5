//! Fuzz target: the PTX parser must never panic, on any UTF-8 input, and a
//! successful parse must come with no error diagnostics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        let (_m, diags) = ori_ptx::parse_with_diags("fuzz.ptx", src);
        for d in &diags {
            let _ = d.render_ptxas();
        }
        let _ = ori_ptx::parse("fuzz.ptx", src);
    }
});
