//! ptxas's GMMA messages, word for word (seed 003's table, checked against
//! ptxas 13.0.88 output recorded in `tests/corpus`).
//!
//! Note the double space in C7514's "registers of  a wgmma": ptxas 13.0.88
//! prints it that way, so ori does too.

use ori_ir::consts::*;

const SERIALIZED: &str =
    "Potential Performance Loss: wgmma.mma_async instructions are serialized due to";

/// The serialization message of a code, for function `f`.
pub fn serialization_message(code: u32, f: &str) -> String {
    let why = match code {
        C7509_EXTERN_CALLS => format!("the presence of Extern calls in the function '{f}'"),
        C7510_CROSSES_CALL => format!("wgmma pipeline crossing function boundary at a function call in the function '{f}'"),
        C7511_PIPELINE_REGISTERS => format!("insufficient register resources for the wgmma pipeline in the function '{f}'"),
        C7512_FUNCTION_REGISTERS => format!("insufficient register resources for the function '{f}'"),
        C7513_DEFINES_INPUTS => format!("non wgmma instructions defining input registers of a wgmma between start and end of the pipeline stage in the function '{f}'"),
        C7514_READS_ACCUMULATORS => format!("non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function '{f}'"),
        C7515_DEFINES_ACCUMULATORS => format!("non wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline stage in the function '{f}'"),
        C7516_ILL_FORMED => format!("ill formed pipeline stage in the function '{f}'"),
        C7518_WGDP_DIVERGENT => format!("program dependence on compiler-inserted WG.DP in divergent path in the function '{f}'"),
        C7520_WGAR_DIVERGENT => format!("program dependence on compiler-inserted WG.AR in divergent path in the function '{f}'"),
        _ => format!("an unknown reason ({code}) in the function '{f}'"),
    };
    format!("{SERIALIZED} {why}")
}

/// C7519's text.
pub fn arrive_injected(line: u32, f: &str) -> String {
    format!("warpgroup.arrive is injected in around line {line} by compiler to allow use of registers in GMMA in function '{f}'")
}

/// C7517's text.
pub fn wait_injected(line: u32, f: &str) -> String {
    format!("warpgroup.wait is injected in around line {line} by compiler to allow use of registers defined by GMMA in function '{f}'")
}

/// A suggested fix for each serialization code (ori's addition, from seed 003's "Fix" notes).
pub fn help(code: u32) -> &'static str {
    match code {
        C7509_EXTERN_CALLS => "make the callee visible (inline it or define it in this module), or move the call out of any function that issues wgmma",
        C7510_CROSSES_CALL => "keep each fence..commit..wait sequence inside one function; move the call before the fence or after the wait",
        C7511_PIPELINE_REGISTERS => "fewer accumulator registers in flight at once: smaller N, fewer distinct accumulator sets per group, or wait earlier",
        C7512_FUNCTION_REGISTERS => "reduce register pressure outside the pipeline",
        C7513_DEFINES_INPUTS => "compute every wgmma input (A fragments, descriptors) before wgmma.fence, in registers not rewritten inside the stage",
        C7514_READS_ACCUMULATORS => "read accumulators only after wgmma.commit_group + wgmma.wait_group covering their wgmma",
        C7515_DEFINES_ACCUMULATORS => "initialize accumulators before wgmma.fence (or use scale-d = 0), never while their wgmma is in flight",
        C7516_ILL_FORMED => "match each fence with one commit_group and wait_group on every path; keep stages in straight-line code",
        C7518_WGDP_DIVERGENT => "wait (wgmma.wait_group) before the divergent branch, in uniform control flow",
        C7520_WGAR_DIVERGENT => "issue wgmma.fence in uniform control flow before the divergent region",
        _ => "",
    }
}

/// Advice for a C7511 caused by an accumulator register written by another
/// instruction between wgmma accumulating into it, or by overlapping sets:
/// found by experiment on ptxas 13.0.88, where waiting does not help but a
/// set of its own does (`c7511_def_acc_between_mma`).
pub const C7511_SHARED_SET_HELP: &str = "give each wgmma accumulating into this register a set of its own, which no other instruction writes and no other wgmma shares in part (copy in, wgmma, wait, copy out): waiting earlier does not help; `ori compile --emit ptx` writes this";
