//! What an advisory's culprit conflicts with, for the diagnostics' secondary
//! span.
//!
//! ptxas names one line; a kernel author also wants to see the other half of
//! the conflict: for an injected wait, a wgmma writing the accumulator the
//! culprit reads; for an injected arrive, the instruction that touched the
//! wgmma's registers since the last fence. These are found after the
//! decisions, for display only, and each label says only what is true of
//! the instruction it points at ("writes %f1"), not which dynamic instance
//! is in flight.

use super::by_register::ByRegister;
use ori_ir::{Function, Inst, Opcode, RegClass, VReg};
use smallvec::SmallVec;

/// How far back in its block an arrive's culprit is looked for; past it the
/// diagnostic has no secondary span (keeps huge blocks linear).
const ARRIVE_LOOKBACK: usize = 64;

/// An instruction's place in program order (`Layout::order_key`).
type Order = (u32, u32);

/// Every wgmma of a function by the accumulator registers it writes, in
/// program order: one flat list sorted by register (then program order),
/// not a heap list per register.
pub(super) struct Writers {
    by_reg: Vec<(VReg, Order, Inst)>,
}

impl Writers {
    /// Index `f`'s wgmma, `wgmmas` in layout order (once per function
    /// with advisories; the list, not a pass over every instruction).
    pub(super) fn new(f: &Function, wgmmas: &[Inst]) -> Self {
        let mut by_reg = Vec::new();
        for &i in wgmmas {
            debug_assert_eq!(f.insts[i].opcode, Opcode::WgmmaMmaAsync);
            let key = f.layout.order_key(i);
            by_reg.extend(f.insts[i].defs().into_iter().map(|r| (r, key, i)));
        }
        // Stable: each register's writers stay in program order. By
        // counting, registers being dense, not by a comparison sort.
        let by_reg = sorted_by_register(by_reg, f.vregs.len());
        Writers { by_reg }
    }

    /// The wgmma writing `r`, in program order.
    fn of(&self, r: VReg) -> &[(VReg, Order, Inst)] {
        let lo = self.by_reg.partition_point(|&(x, ..)| x < r);
        let hi = self.by_reg.partition_point(|&(x, ..)| x <= r);
        &self.by_reg[lo..hi]
    }

    /// A wgmma writing an accumulator `i` reads: the nearest before `i` in
    /// program order, else the last one (reaching `i` over a back edge).
    pub(super) fn read_by(&self, f: &Function, i: Inst) -> Option<(Inst, VReg)> {
        let key = f.layout.order_key(i);
        let mut best: Option<(Order, Inst, VReg, bool)> = None;
        for r in f.insts[i].uses() {
            if f.vregs[r].class != RegClass::Tensor {
                continue;
            }
            let ws = self.of(r);
            let Some(&(_, last_key, last)) = ws.last() else {
                continue;
            };
            let before = ws.partition_point(|&(_, k, _)| k < key);
            let (wk, w, earlier) = match before.checked_sub(1) {
                Some(k) => (ws[k].1, ws[k].2, true),
                None => (last_key, last, false),
            };
            let better = match best {
                None => true,
                Some((bk, _, _, be)) => (earlier, wk) > (be, bk),
            };
            if better {
                best = Some((wk, w, r, earlier));
            }
        }
        best.map(|(_, w, r, _)| (w, r))
    }
}

/// `writes` sorted by register, each register's in their order (counted
/// into a [`ByRegister`] table over the `regs` registers of the function).
fn sorted_by_register(writes: Vec<(VReg, Order, Inst)>, regs: usize) -> Vec<(VReg, Order, Inst)> {
    use cranelift_entity::EntityRef;
    let Some(&placeholder) = writes.first() else {
        return writes;
    };
    if writes.iter().any(|&(r, ..)| r.index() >= regs) {
        // A register the function does not declare (the verifier reports
        // it): sorted the slow way.
        let mut writes = writes;
        writes.sort_by_key(|&(r, ..)| r);
        return writes;
    }
    ByRegister::new(regs, placeholder, || writes.iter().map(|&w| (w.0, w))).into_items()
}

/// The nearest instruction before wgmma `i` in its block that is not GMMA
/// and touches one of its registers: what the injected arrive fences off.
pub(super) fn touched_before(f: &Function, i: Inst) -> Option<(Inst, VReg, bool)> {
    let b = f.layout.inst_block(i)?;
    let insts = f.layout.block_insts(b);
    let at = f.layout.index_in_block(i)?;
    let mut regs: SmallVec<[VReg; 16]> = f.insts[i].uses().into_iter().collect();
    regs.extend(f.insts[i].defs());
    for &j in insts[..at].iter().rev().take(ARRIVE_LOOKBACK) {
        let d = &f.insts[j];
        if d.opcode.is_gmma_family() {
            continue;
        }
        if let Some(r) = d.defs().into_iter().find(|r| regs.contains(r)) {
            return Some((j, r, true));
        }
        if let Some(r) = d.uses().into_iter().find(|r| regs.contains(r)) {
            return Some((j, r, false));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    /// Counting sort is the stable sort by register.
    #[test]
    fn counting_sort_is_the_stable_sort_by_register() {
        let writes: Vec<(VReg, Order, Inst)> = (0..200u32)
            .map(|k| {
                (
                    VReg::new((k * 7919 % 13) as usize),
                    (k / 10, k),
                    Inst::new(k as usize),
                )
            })
            .collect();
        let mut want = writes.clone();
        want.sort_by_key(|&(r, ..)| r);
        assert_eq!(sorted_by_register(writes.clone(), 13), want);
        // A register past the table: the comparison sort.
        assert_eq!(sorted_by_register(writes, 5), want);
    }
}
