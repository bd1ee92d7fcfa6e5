//! Fuzz target: `ori run` on any kernel with any launch. The first bytes
//! choose the launch (grid, block, cluster, shared memory, parameters that
//! are buffers, null pointers or pointers past a buffer, the schedule, the
//! sanitizer's options), the rest is PTX (seed with `tests/real` and
//! `tests/corpus`, prefixed by 16 bytes). The host backend must stop with a
//! result or a typed error naming its line, never panic
//! (`ori_fuzz::check::host_launch`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = ori_fuzz::check::host_launch(data) {
        panic!("{e}");
    }
});
