//! ptxas's GMMA advisories, word for word (seed 003's table, checked against
//! ptxas 13.0.88 output recorded in `tests/corpus`). The serialization
//! messages and their help belong to `ori_ir::SerializationCode`.

/// C7519's text.
pub fn arrive_injected(line: u32, f: &str) -> String {
    format!("warpgroup.arrive is injected in around line {line} by compiler to allow use of registers in GMMA in function '{f}'")
}

/// C7517's text.
pub fn wait_injected(line: u32, f: &str) -> String {
    format!("warpgroup.wait is injected in around line {line} by compiler to allow use of registers defined by GMMA in function '{f}'")
}

/// Advice for a C7511 caused by an accumulator register written by another
/// instruction between wgmma accumulating into it, or by overlapping sets:
/// found by experiment on ptxas 13.0.88, where waiting does not help but a
/// set of its own does (`c7511_def_acc_between_mma`).
pub const C7511_SHARED_SET_HELP: &str = "give each wgmma accumulating into this register a set of its own, which no other instruction writes and no other wgmma shares in part (copy in, wgmma, wait, copy out): waiting earlier does not help; `ori compile --emit ptx` writes this";

/// ori's fix for an indirect call in a function with wgmma
/// (R-indirect-call): ptxas serializes it wherever the call stands.
pub const INDIRECT_CALL_HELP: &str = "an indirect call anywhere in a function that issues wgmma serializes it: call the possible targets directly (a switch over the function pointer's values), or make the indirect call from a function without wgmma";

/// ori's fix for a direct call to a function whose address is taken
/// (R-address-taken-callee): ptxas does not inline such a function.
pub const ADDRESS_TAKEN_HELP: &str = "ptxas does not inline a function whose address the module takes (even unused): call a copy whose address is not taken, or drop the unused address";
