//! When ptxas ignores `setmaxnreg`, and the advisory it prints for it
//! (rule R-setmaxnreg-ignored).
//!
//! `setmaxnreg` moves a warpgroup's register count from the count it
//! starts with, so ptxas honours it only where it knows that count and
//! where the whole kernel is compiled at once. Probes on ptxas 13.0.88
//! (`tests/corpus/c7508_*`, `c7504_*`, `clean_setmaxnreg_*`) give two cases:
//!
//! * **Whole program.** A kernel whose unit (the kernel and the functions
//!   it calls, inlined) holds a `setmaxnreg`, and whose count at entry is
//!   unknown (no `.maxnreg`, no `-maxrregcount`, and not a thread count
//!   with `.minnctapersm`: [`ori_ir::Function::register_count_at_entry_known`]),
//!   gets C7508 once, first among the unit's messages. Two kernels that
//!   call one such function get one each.
//! * **A thread count alone** (`.maxntid` or `.reqntid`, no
//!   `.minnctapersm`) fixes the count only when one CTA per SM is all
//!   that fits: two CTAs of that many threads (whole warps), at the
//!   registers the kernel's wgmma code needs rounded up to 8, would
//!   overflow the SM's 65,536 registers. Then the count at entry is the
//!   launch bound's. Bisected on a warp-specialized GEMM: 90 registers
//!   (n128) flip between 320 and 321 threads, 58 (n64) between 512 and
//!   513 (`c7508_setmaxnreg_maxntid_two_ctas_fit`,
//!   `clean_setmaxnreg_maxntid_one_cta_fits`).
//! * **`-c`.** Every function that itself holds a `setmaxnreg` gets C7504,
//!   first among its messages, whatever its bounds say.
//!
//! The message names no function.

use ori_ir::consts::{C7504_SETMAXNREG_SEPARATE, C7508_SETMAXNREG_UNKNOWN_ENTRY};
use ori_ir::{Diagnostic, Function, Severity};

/// Whether `f` holds a `setmaxnreg` (either direction).
pub fn has_setmaxnreg(f: &Function) -> bool {
    f.layout
        .all_insts()
        .any(|i| &*f.insts[i].name == "setmaxnreg")
}

/// C7508 for the unit of `kernel` made of `unit` (its reached functions,
/// the kernel included), if ptxas ignores a `setmaxnreg` in it.
pub fn unknown_entry_count(
    kernel: &Function,
    unit: &[&Function],
    maxrregcount: Option<u32>,
) -> Option<Diagnostic> {
    // The register need behind `one_cta_per_sm` is a liveness pass: asked
    // only of a unit that holds a `setmaxnreg`.
    let ignored = unit.iter().any(|f| has_setmaxnreg(f))
        && !kernel.register_count_at_entry_known(maxrregcount)
        && !one_cta_per_sm(kernel);
    ignored.then(|| advisory(C7508_SETMAXNREG_UNKNOWN_ENTRY))
}

/// C7504 for `f` compiled alone (`-c`), if it holds a `setmaxnreg`.
pub fn separate_compilation(f: &Function) -> Option<Diagnostic> {
    has_setmaxnreg(f).then(|| advisory(C7504_SETMAXNREG_SEPARATE))
}

/// ptxas 13.0.88's words for C7504 or C7508 (`None` for another code).
pub fn message(code: u32) -> Option<String> {
    let words = match code {
        C7504_SETMAXNREG_SEPARATE => "ignored to maintain compatibility across compilation units",
        C7508_SETMAXNREG_UNKNOWN_ENTRY => "ignored; unable to determine register count at entry",
        _ => return None,
    };
    Some(format!("Potential Performance Loss: 'setmaxnreg' {words}."))
}

fn advisory(code: u32) -> Diagnostic {
    Diagnostic::new(
        Severity::Info,
        Some(code),
        message(code).unwrap_or_default(),
    )
}

/// Registers in one SM's register file (sm_90).
const SM_REGISTERS: u64 = 65_536;

/// The most registers a thread may have (sm_90).
const MAX_REGISTERS_PER_THREAD: u64 = 255;

/// The per-thread register count `kernel` starts with, when ptxas knows
/// it: the lower of `.maxnreg` and `-maxrregcount`, else what its launch
/// bounds leave each thread of `.minnctapersm` CTAs (one, when only one
/// fits: [`one_cta_per_sm`]) sharing the SM's registers in whole warps,
/// rounded down to 8 and at most 255 (384 threads: 168; 256: 255).
/// `setmaxnreg` moves the count from there (R-function-pressure).
pub fn count_at_entry(kernel: &Function, maxrregcount: Option<u32>) -> Option<u32> {
    if let Some(n) = [kernel.max_regs, maxrregcount].into_iter().flatten().min() {
        return Some(n);
    }
    let threads = launch_bound(kernel, "reqntid").or_else(|| launch_bound(kernel, "maxntid"))?;
    let ctas = match launch_bound(kernel, "minnctapersm") {
        Some(n) => n.max(1),
        None if one_cta_per_sm(kernel) => 1,
        None => return None,
    };
    let per_thread = SM_REGISTERS / (threads.div_ceil(32) * 32 * ctas).max(1);
    Some((per_thread / 8 * 8).min(MAX_REGISTERS_PER_THREAD) as u32)
}

/// The product of a launch-bound directive's dimensions.
fn launch_bound(kernel: &Function, name: &str) -> Option<u64> {
    kernel
        .launch_bounds
        .iter()
        .find(|(n, _)| &**n == name)
        .map(|(_, v)| v.iter().map(|&x| u64::from(x)).product::<u64>())
}

/// Whether `kernel`'s thread count alone leaves room for only one CTA per
/// SM, by the registers ori counts for its wgmma code
/// ([`crate::fixup::budget::wgmma_register_need_over`]); without a wgmma ori
/// cannot tell, and says no.
fn one_cta_per_sm(kernel: &Function) -> bool {
    let bound = |name: &str| launch_bound(kernel, name);
    let Some(threads) = bound("reqntid").or_else(|| bound("maxntid")) else {
        return false;
    };
    let over = |need: u32| {
        let per_thread = u64::from(need).div_ceil(8) * 8;
        2 * threads.div_ceil(32) * 32 * per_thread > SM_REGISTERS
    };
    crate::fixup::budget::wgmma_register_need_over(kernel, over).unwrap_or(false)
}
