//! The register budget a wgmma needs under `-maxrregcount`.
//!
//! ori does no register allocation, but ptxas refuses a wgmma whose
//! registers cannot all be allocated within the per-thread limit, with a
//! fatal C7602 naming the first such instruction and the limit that would
//! do. Probes on ptxas 13.0.88 (corpus `err_c7602_*`, and n8/n16/n64/n256,
//! f16/f32 accumulators, descriptor and register A) give one rule: the
//! accumulators are allocated from R24 up, two more registers are needed
//! beside them, so a wgmma needs `26 + accumulator registers + A-fragment
//! registers`, plus one for the metadata of a sparse `wgmma.mma_async.sp`
//! (n8 f32: 31 with a descriptor, 35 with register A). Limits below 24 are
//! raised to 24 with a warning first.

use ori_ir::consts::C7602_INSUFFICIENT_REGISTERS;
use ori_ir::{Diagnostic, Module, Opcode, Severity, WgmmaForm};

/// Registers below the accumulators plus the two beside them (ptxas 13.0.88).
pub const WGMMA_REGISTER_OVERHEAD: u32 = 26;

/// The lowest per-thread register count ptxas accepts for sm_90a.
pub const MIN_REGISTERS_SM90: u32 = 24;

/// Registers one wgmma needs, from its form (`None` if it does not decode).
pub fn wgmma_registers(mods: &[impl AsRef<str>], a_in_regs: bool) -> Option<u32> {
    let w = WgmmaForm::decode(mods).ok()?;
    let a = if a_in_regs { w.a_fragment_regs() } else { 0 };
    let meta = usize::from(w.sparse);
    Some(WGMMA_REGISTER_OVERHEAD + (w.accumulator_regs() + a + meta) as u32)
}

/// Check every function of `m` against the limit `max`, as ptxas does:
/// the adjustment warning, then a fatal C7602 at the first wgmma (in
/// module, then program order) that does not fit.
pub fn check(m: &Module, arch: &str, max: u32) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut limit = max;
    if limit < MIN_REGISTERS_SM90 {
        out.push(Diagnostic::new(
            Severity::Warning,
            None,
            format!(
                "For profile {arch} adjusting per thread register count of {max} to lower bound of {MIN_REGISTERS_SM90}"
            ),
        ));
        limit = MIN_REGISTERS_SM90;
    }
    for f in m.funcs.values() {
        for i in f.layout.all_insts() {
            let d = &f.insts[i];
            if d.opcode != Opcode::WgmmaMmaAsync {
                continue;
            }
            let a_in_regs = matches!(
                d.slots.get(1).map(|s| &s.op),
                Some(ori_ir::Operand::Vector(_))
            );
            let Some(need) = wgmma_registers(&d.mods, a_in_regs) else {
                continue;
            };
            if need > limit {
                out.push(Diagnostic::new(
                    Severity::Fatal,
                    Some(C7602_INSUFFICIENT_REGISTERS),
                    format!(
                        "Insufficient registers ({limit}) to compile instruction at line {} in function {}. Try to compile with register target of {need} or higher.",
                        d.line, f.name
                    ),
                ));
                return out;
            }
        }
    }
    out
}
