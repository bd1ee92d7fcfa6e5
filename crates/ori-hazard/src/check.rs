//! The checker proper: a forward dataflow over the CFG to a fixpoint, then
//! one reporting walk per block from its solved entry state.
//!
//! Each round visits every reachable block once in reverse postorder and
//! costs, per instruction, its operand count plus (for wgmma-family
//! instructions) a few bitset word operations; fences reset the per-register
//! marks, whose number is the count of accumulator and A-fragment registers
//! of the function, not its size. Hazards are only looked for in the final
//! walk, where "which wgmma may be in flight and uses this register" is one
//! bitset intersection.

use crate::bitset::BitSet;
use crate::hazard::{Hazard, HazardKind};
use crate::roles::{accesses, wgmma_regs};
use crate::state::State;
use cranelift_entity::{EntityRef, SecondaryMap};
use ori_ir::{Block, ControlFlowGraph, Function, Inst, InstData, Opcode, VReg};

const NONE: u32 = u32::MAX;

/// A wgmma with its registers as dense indices.
struct Wgmma {
    inst: Inst,
    acc: Vec<u32>,
    afrag: Vec<u32>,
    shape_bit: u128,
}

/// Per-function tables built once.
struct Ctx {
    wgmmas: Vec<Wgmma>,
    wg_index: SecondaryMap<Inst, u32>,
    reg_index: SecondaryMap<VReg, u32>,
    regs: Vec<VReg>,
    /// For each tracked register, the wgmmas using it as accumulator.
    acc_users: Vec<BitSet>,
    /// For each tracked register, the wgmmas reading it as an A fragment.
    afrag_users: Vec<BitSet>,
    /// Most group positions kept: the largest `wait_group N` plus one.
    cap: usize,
}

impl Ctx {
    fn new(f: &Function) -> Ctx {
        let mut cx = Ctx {
            wgmmas: Vec::new(),
            wg_index: SecondaryMap::with_default(NONE),
            reg_index: SecondaryMap::with_default(NONE),
            regs: Vec::new(),
            acc_users: Vec::new(),
            afrag_users: Vec::new(),
            cap: 1,
        };
        let mut shapes: Vec<String> = Vec::new();
        for i in f.layout.all_insts() {
            let d = &f.insts[i];
            if d.opcode.is_wait() {
                let n = d.wait_count().unwrap_or(0).clamp(0, 1 << 16) as usize;
                cx.cap = cx.cap.max(n + 1);
            }
            if d.opcode != Opcode::WgmmaMmaAsync {
                continue;
            }
            let w = wgmma_regs(d);
            let sid = shapes
                .iter()
                .position(|s| *s == w.shape)
                .unwrap_or_else(|| {
                    shapes.push(w.shape.clone());
                    shapes.len() - 1
                });
            let mut dense = |r: VReg| -> u32 {
                if cx.reg_index[r] == NONE {
                    cx.reg_index[r] = cx.regs.len() as u32;
                    cx.regs.push(r);
                }
                cx.reg_index[r]
            };
            let acc = w.acc.iter().map(|r| dense(*r)).collect();
            let afrag = w.afrag.iter().map(|r| dense(*r)).collect();
            cx.wg_index[i] = cx.wgmmas.len() as u32;
            cx.wgmmas.push(Wgmma {
                inst: i,
                acc,
                afrag,
                // More than 128 distinct shapes in one function share the last bit.
                shape_bit: 1u128 << sid.min(127),
            });
        }
        let (nw, nr) = (cx.wgmmas.len(), cx.regs.len());
        cx.acc_users = vec![BitSet::new(nw); nr];
        cx.afrag_users = vec![BitSet::new(nw); nr];
        for (k, w) in cx.wgmmas.iter().enumerate() {
            for r in &w.acc {
                cx.acc_users[*r as usize].insert(k);
            }
            for r in &w.afrag {
                cx.afrag_users[*r as usize].insert(k);
            }
        }
        cx
    }

    fn tracked(&self, r: VReg) -> Option<usize> {
        let k = self.reg_index[r];
        (k != NONE).then_some(k as usize)
    }

    /// Apply instruction `i`; report its hazards into `sink` when given.
    fn transfer(&self, st: &mut State, i: Inst, d: &InstData, mut sink: Option<&mut Vec<Hazard>>) {
        let guarded = d.guard.is_some();
        match d.opcode {
            // A guarded fence or wait may not execute, and a wait of unknown
            // count may keep anything pending: no credit.
            op if op.is_arrive() => {
                if !guarded {
                    st.fence();
                }
            }
            op if op.is_wait() => {
                if let (false, Some(n)) = (guarded, d.wait_count()) {
                    st.wait(n.max(0) as usize);
                }
            }
            op if op.is_commit() => {
                if guarded {
                    st.maybe_commit(self.cap);
                } else {
                    st.commit(self.cap);
                }
            }
            Opcode::WgmmaMmaAsync => self.wgmma(st, i, d, sink),
            _ => {
                let (reads, writes) = accesses(d);
                let mut flight: Option<BitSet> = None;
                for (r, write) in reads.map(|r| (r, false)).chain(writes.map(|r| (r, true))) {
                    let Some(k) = self.tracked(r) else { continue };
                    if let Some(out) = sink.as_deref_mut() {
                        let fl = flight.get_or_insert_with(|| st.in_flight());
                        let mut report = |kind, w: usize| {
                            out.push(Hazard {
                                kind,
                                inst: i,
                                line: d.line,
                                reg: Some(r),
                                wgmma: self.wgmmas[w].inst,
                                prior: None,
                            })
                        };
                        if let Some(w) = fl.first_common(&self.acc_users[k]) {
                            report(HazardKind::AccumulatorAccessInFlight, w);
                        }
                        if let Some(w) = fl.first_common(&self.afrag_users[k]) {
                            let kind = if write {
                                HazardKind::AFragmentWriteInFlight
                            } else {
                                HazardKind::AFragmentReadInFlight
                            };
                            report(kind, w);
                        }
                    }
                    let m = &mut st.marks[k];
                    if write {
                        m.nw_write = Some(i);
                    } else {
                        m.nw_read = Some(i);
                    }
                }
            }
        }
    }

    fn wgmma(&self, st: &mut State, i: Inst, d: &InstData, sink: Option<&mut Vec<Hazard>>) {
        let k = self.wg_index[i] as usize;
        let w = &self.wgmmas[k];
        if let Some(out) = sink {
            let mut report = |kind, reg: Option<usize>, prior: Option<Inst>| {
                out.push(Hazard {
                    kind,
                    inst: i,
                    line: d.line,
                    reg: reg.map(|r| self.regs[r]),
                    wgmma: i,
                    prior,
                })
            };
            if st.unfenced_entry {
                report(HazardKind::MissingFence, None, None);
            }
            for &r in &w.acc {
                let m = &st.marks[r as usize];
                // Any non-wgmma access conflicts with the accumulator (the wgmma writes it).
                let prior = m
                    .nw_write
                    .or(m.nw_read)
                    // wgmma accumulator accesses of another shape are not exempt.
                    .or(m.wg_acc.filter(|_| m.wg_acc_shapes & !w.shape_bit != 0))
                    // Nor is overwriting what an earlier wgmma read as its A fragment.
                    .or(m.wg_afrag);
                if let Some(p) = prior {
                    report(HazardKind::MissingFence, Some(r as usize), Some(p));
                }
            }
            for &r in &w.afrag {
                let m = &st.marks[r as usize];
                // A write to the fragment, or its use as some wgmma's accumulator
                // (the same-shape exception covers accumulator accesses only).
                if let Some(p) = m.nw_write.or(m.wg_acc) {
                    report(HazardKind::MissingFence, Some(r as usize), Some(p));
                } else if let Some(p) = m.nw_read {
                    report(HazardKind::AFragmentReadUnfenced, Some(r as usize), Some(p));
                }
            }
        }
        for &r in &w.acc {
            let m = &mut st.marks[r as usize];
            m.wg_acc_shapes |= w.shape_bit;
            m.wg_acc = Some(i);
        }
        for &r in &w.afrag {
            st.marks[r as usize].wg_afrag = Some(i);
        }
        // A guarded wgmma may or may not issue; counting it as issued covers both.
        st.open.insert(k);
    }

    fn walk(&self, f: &Function, b: Block, st: &mut State, mut sink: Option<&mut Vec<Hazard>>) {
        for &i in f.layout.block_insts(b) {
            self.transfer(st, i, &f.insts[i], sink.as_deref_mut());
        }
    }
}

/// Solve the dataflow: the state at the entry of every reachable block.
fn solve(cx: &Ctx, f: &Function, cfg: &ControlFlowGraph) -> SecondaryMap<Block, Option<State>> {
    let mut entry: SecondaryMap<Block, Option<State>> = SecondaryMap::new();
    let Some(&first) = cfg.rpo().first() else {
        return entry;
    };
    entry[first] = Some(State::entry(cx.wgmmas.len(), cx.regs.len()));
    let mut changed = true;
    while changed {
        changed = false;
        for &b in cfg.rpo() {
            let Some(mut st) = entry[b].clone() else {
                continue;
            };
            cx.walk(f, b, &mut st, None);
            for &s in cfg.succs(b) {
                match &mut entry[s] {
                    Some(e) => changed |= e.join(&st),
                    slot => {
                        *slot = Some(st.clone());
                        changed = true;
                    }
                }
            }
        }
    }
    entry
}

/// Check one function; hazards come sorted by program order, then kind, without duplicates.
pub fn check_function(f: &Function) -> Vec<Hazard> {
    if !f.has_body {
        return Vec::new();
    }
    let cx = Ctx::new(f);
    if cx.wgmmas.is_empty() {
        // Nothing can be in flight and no wgmma needs a fence.
        return Vec::new();
    }
    let cfg = ControlFlowGraph::compute(f);
    let entry = solve(&cx, f, &cfg);
    let mut out = Vec::new();
    for &b in cfg.rpo() {
        if let Some(mut st) = entry[b].clone() {
            cx.walk(f, b, &mut st, Some(&mut out));
        }
    }
    out.sort_by_key(|h| {
        (
            f.layout.order_key(h.inst),
            h.kind,
            h.reg.map_or(0, |r| r.index() + 1),
        )
    });
    out.dedup_by(|a, b| (a.inst, a.kind, a.reg) == (b.inst, b.kind, b.reg));
    out
}
