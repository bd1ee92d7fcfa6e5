//! ptxas's paired conversions, placed where ptxas places them before phase 85.
//!
//! ptxas 13.0.88 fuses two conversions of accumulators to the same 16-bit
//! type with the same rounding (`cvt.rn.bf16.f32`, `cvt.rn.f16.f32`,
//! `cvt.rz...`) into one paired conversion (SASS `F2FP.*.PACK_AB`), whatever
//! reads their results (a select and a pack as in fla's epilogue, stores
//! apart) and whatever stands between them
//! (`c7514_loop_exit_cvt_pair_stores_apart`, `c7514_loop_exit_cvt_pair_apart`,
//! `c7514_loop_exit_f16_cvt_pair`, `c7514_loop_exit_rz_cvt_pair`). It
//! places the pair early, before phase 85: where that is ahead of a
//! `wgmma.wait_group`, the pair reads accumulators in flight and phase 87
//! waits for it (C7517) or serializes (C7514). This module moves each such
//! pair there, so that phase 87 sees the reads ptxas's does. Two places,
//! each from probes:
//!
//! - **After the first instruction of a loop's exit block**, for
//!   accumulators of a wgmma in a loop ptxas keeps (not unrolled in full):
//!   ahead of the exit block's wait when an instruction stands before it
//!   (C7514: `c7514_loop_exit_insn_before_wait_selp_cvt_pair_packed`,
//!   `c7514_fla_exit_block_insn_before_wait`,
//!   `c7514_loop_exit_cvt_pair_five_insns_after_wait`, even a
//!   `wgmma.wait_group 1`: `c7514_loop_exit_wait1_then_wait0_cvt_pair`),
//!   after it when the wait comes first (clean:
//!   `clean_loop_exit_wait_first_selp_cvt_pair_packed`,
//!   `clean_loop_exit_two_wait0_and_between_cvt_pair`). What ptxas folds
//!   away is no first instruction: a `mov` of a register or an immediate
//!   (`clean_loop_exit_mov_before_wait_cvt_pair`), a load of a kernel
//!   parameter (`clean_loop_exit_ld_param_before_wait_cvt_pair`). The exit
//!   block is ptxas's, with the short branches it if-converts
//!   (`c7514_loop_exit_join_insn_before_wait_cvt_pair`).
//! - **After the instruction that follows a wgmma that reads no
//!   accumulators** (`scale-d` 0, or accumulators that hold zero, set
//!   in its block or before it outside any loop:
//!   `c7517_zero_acc_mov_before_spin_loop_cvt_pair`), under that
//!   instruction's line, which C7517 names
//!   (`c7517_zero_acc_selp_cvt_pair_packed`,
//!   `c7517_loaded_acc_scale_d0_selp_cvt_pair_packed`,
//!   `c7517_zero_acc_insns_before_commit_cvt_pair`,
//!   `c7517_two_zero_acc_wgmma_cvt_pair`). Conversions of a wgmma that
//!   reads its accumulators are not paired
//!   (`clean_one_acc_selp_cvt_pair_packed`, `clean_loaded_acc_spin_loop_cvt_pair`).
//!
//! Not paired: mixed types (`clean_loop_exit_insn_before_wait_cvt_pair_mixed_kinds`),
//! an accumulator with another value (`clean_loop_exit_cvt_acc_with_loaded`),
//! one register twice (`clean_loop_exit_cvt_pair_same_source`), `.relu`
//! (`clean_loop_exit_relu_cvt_pair`), results converted back
//! (`clean_loop_exit_cvt_pair_converted_back`). A pair packed by one
//! `mov.b32 {lo, hi}`, directly or through copies, is fused at the pack,
//! after the wait (`clean_loop_exit_insn_before_wait_cvt_pair_packed_directly`,
//! `c7514_loop_exit_two_pairs_one_packed_directly`). Only pairs the move
//! takes across a `wgmma.wait_group` are moved: elsewhere the place changes
//! nothing phase 87 sees. Not modelled (listed known differences): guarded
//! conversions (ptxas converts unconditionally and selects:
//! `c7514_loop_exit_guarded_cvt_pair`), a pair taken back across a loop to
//! a zero-accumulator wgmma (`c7517_zero_acc_spin_loop_cvt_pair`).

use crate::block_merging::PtxasBlocks;
use crate::loops::fully_unrolled_back_edges;
use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, DominatorTree, Function, Imm, Inst, Opcode, Operand, VReg};

/// Move every pair of conversions ptxas fuses to where ptxas places it.
pub fn pair_conversions(f: &mut Function) {
    if !f.insts.values().any(|d| d.opcode == Opcode::WgmmaMmaAsync) {
        return;
    }
    let cfg = ControlFlowGraph::compute(f);
    let dt = DominatorTree::compute(&cfg);
    let unrolled = fully_unrolled_back_edges(f, &cfg, &dt);
    let ptxas_blocks = PtxasBlocks::compute_from(f, &cfg, &unrolled);
    let zeroed = zeroed_registers(f, &cfg, &dt);
    let mut moves = Vec::new();
    for (first, insts) in segments(f, &ptxas_blocks) {
        let exited = exited_loop(f, &cfg, &dt, &unrolled, first);
        moves.extend(pairs_in(f, &insts, exited.as_deref(), &zeroed));
    }
    for (pair, anchor) in moves {
        move_pair(f, pair, anchor);
    }
}

/// The blocks as ptxas sees them ([`PtxasBlocks`]: a PTX block merged into
/// its predecessor, a branch around a few instructions if-converted), each
/// as its first PTX block and its instructions in layout order
/// (`c7514_loop_exit_join_insn_before_wait_cvt_pair` pairs across such a join).
fn segments(f: &Function, ptxas_blocks: &PtxasBlocks) -> Vec<(Block, Vec<Inst>)> {
    let mut out: Vec<(Block, Vec<Inst>)> = Vec::new();
    for &b in f.layout.blocks() {
        let insts = f.layout.block_insts(b);
        match out.last_mut() {
            Some((_, all)) if !ptxas_blocks.starts_block(b) => all.extend_from_slice(insts),
            _ => out.push((b, insts.to_vec())),
        }
    }
    out
}

/// Where a conversion's source comes from, as far as placement goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Origin {
    /// Written inside the loop the block exits.
    Loop,
    /// Last written, in the block, by this wgmma, which does not read it.
    Wgmma(Inst),
}

/// A conversion ptxas may pair: `cvt.{rn,rz}.{bf16,f16}.f32 d, s`.
#[derive(Clone, Copy, Debug)]
struct Conversion {
    at: Inst,
    dst: VReg,
    src: VReg,
    /// Rounding and destination type: a pair converts alike.
    kind: (bool, bool),
    origin: Origin,
}

/// The pairs of one of ptxas's blocks (`insts`) to move, each with the
/// instruction it goes after.
fn pairs_in(
    f: &Function,
    insts: &[Inst],
    exited: Option<&[Block]>,
    zeroed: &SecondaryMap<VReg, bool>,
) -> Vec<([Inst; 2], Inst)> {
    let mut pending: Vec<Conversion> = Vec::new();
    let mut out = Vec::new();
    for (k, &i) in insts.iter().enumerate() {
        let Some(c) = conversion(f, i).and_then(|(dst, src, kind)| {
            let origin = origin(f, &insts[..k], src, exited, zeroed)?;
            Some(Conversion {
                at: i,
                dst,
                src,
                kind,
                origin,
            })
        }) else {
            continue;
        };
        if round_trip(f, insts, c.dst) {
            continue;
        }
        match pending
            .iter()
            .position(|p| p.kind == c.kind && p.src != c.src)
        {
            Some(n) => {
                let first = pending.remove(n);
                if let Some(anchor) = place(f, insts, &first, &c) {
                    out.push(([first.at, c.at], anchor));
                }
            }
            None => pending.push(c),
        }
    }
    out
}

/// `(dst, src, kind)` when `i` is an unguarded `cvt.{rn,rz}.{bf16,f16}.f32`
/// of a register.
fn conversion(f: &Function, i: Inst) -> Option<(VReg, VReg, (bool, bool))> {
    let d = &f.insts[i];
    if &*d.name != "cvt" || d.guard.is_some() || d.slots.len() != 2 || d.mods.len() != 3 {
        return None;
    }
    let m: Vec<&str> = d.mods.iter().map(|m| &**m).collect();
    let kind = match (m[0], m[1], m[2]) {
        (r @ ("rn" | "rz"), t @ ("bf16" | "f16"), "f32") => (r == "rn", t == "bf16"),
        _ => return None,
    };
    match (&d.slots[0].op, &d.slots[1].op) {
        (Operand::Reg(dst), Operand::Reg(src)) if dst != src => Some((*dst, *src, kind)),
        _ => None,
    }
}

/// Where `src`, read after `before` in its block, comes from: a wgmma in the
/// loop the block exits (`exited`, its body), or a wgmma earlier in the
/// block that does not read it; `None` for anything else.
fn origin(
    f: &Function,
    before: &[Inst],
    src: VReg,
    exited: Option<&[Block]>,
    zeroed: &SecondaryMap<VReg, bool>,
) -> Option<Origin> {
    let writer = before
        .iter()
        .rev()
        .find(|&&j| f.insts[j].defs().contains(&src));
    match writer {
        Some(&w) => (f.insts[w].opcode == Opcode::WgmmaMmaAsync
            && reads_no_accumulators(f, before, w, zeroed))
        .then_some(Origin::Wgmma(w)),
        None => exited?
            .iter()
            .flat_map(|&l| f.layout.block_insts(l))
            .any(|&j| {
                f.insts[j].opcode == Opcode::WgmmaMmaAsync && f.insts[j].defs().contains(&src)
            })
            .then_some(Origin::Loop),
    }
}

/// Whether wgmma `w` (in `before`, its block's instructions ahead of a
/// read) does not read its accumulators: `scale-d` is 0, or each holds
/// zero, last set by a `mov` in the block or [`zeroed_registers`] (ptxas
/// folds `D + A*B` with a zero D to `A*B`:
/// `c7517_zero_acc_selp_cvt_pair_packed`,
/// `c7517_zero_acc_mov_before_spin_loop_cvt_pair`).
fn reads_no_accumulators(
    f: &Function,
    before: &[Inst],
    w: Inst,
    zeroed: &SecondaryMap<VReg, bool>,
) -> bool {
    let Some(ops) = f.insts[w].wgmma_operands() else {
        return false;
    };
    if ops.scale_d_is_zero() {
        return true;
    }
    let k = before.iter().position(|&j| j == w).unwrap_or(0);
    ops.d.iter().all(|o| match o {
        Operand::Reg(r) => {
            before[..k]
                .iter()
                .rev()
                .find(|&&j| f.insts[j].defs().contains(r))
                .is_some_and(|&j| zero_mov(f, j))
                || zeroed[*r]
        }
        _ => false,
    })
}

/// Registers that hold zero when their one wgmma reads them: written only
/// by a `mov` of zero and by that wgmma, the `mov` ahead of it on every
/// path, and the wgmma in no loop (so the `mov` is all that reaches it).
fn zeroed_registers(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
) -> SecondaryMap<VReg, bool> {
    let in_loop = loop_blocks(f, cfg, dt);
    let mut defs: SecondaryMap<VReg, (u32, Option<Inst>, Option<Inst>)> = SecondaryMap::new();
    for i in f.layout.all_insts() {
        let wgmma = f.insts[i].opcode == Opcode::WgmmaMmaAsync;
        f.insts[i].for_each_def(|r| {
            let e = &mut defs[r];
            e.0 += 1;
            if wgmma {
                e.2 = Some(i);
            } else if zero_mov(f, i) {
                e.1 = Some(i);
            }
        });
    }
    let mut out = SecondaryMap::new();
    for (r, &(n, z, w)) in defs.iter() {
        let (Some(z), Some(w)) = (z, w) else {
            continue;
        };
        let (bz, bw) = (f.layout.inst_block(z), f.layout.inst_block(w));
        let (Some(bz), Some(bw)) = (bz, bw) else {
            continue;
        };
        let ahead = if bz == bw {
            f.layout.precedes(z, w)
        } else {
            dt.dominates(bz, bw)
        };
        out[r] = n == 2 && ahead && !in_loop[bw];
    }
    out
}

/// The blocks of every natural loop.
fn loop_blocks(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
) -> SecondaryMap<Block, bool> {
    let mut out = SecondaryMap::new();
    for &latch in f.layout.blocks() {
        for &header in cfg.succs(latch) {
            if dt.dominates(header, latch) {
                for b in loop_body(f, cfg, latch, header) {
                    out[b] = true;
                }
            }
        }
    }
    out
}

/// Whether `i` is an unguarded `mov` of the immediate zero.
fn zero_mov(f: &Function, i: Inst) -> bool {
    let d = &f.insts[i];
    &*d.name == "mov"
        && d.guard.is_none()
        && d.slots.len() == 2
        && matches!(
            d.slots[1].op,
            Operand::Imm(Imm::Int(0) | Imm::Hex(0) | Imm::F32(0) | Imm::F64(0))
        )
}

/// The instruction the fused pair of `a` and `b` goes after, when that
/// takes it across a `wgmma.wait_group` and moving it keeps the program's
/// meaning; `None` when the pair stays.
fn place(f: &Function, insts: &[Inst], a: &Conversion, b: &Conversion) -> Option<Inst> {
    let start = match (a.origin, b.origin) {
        (Origin::Loop, Origin::Loop) => 0,
        (Origin::Wgmma(x), Origin::Wgmma(y)) => {
            let last = position(insts, x)?.max(position(insts, y)?);
            last + 1
        }
        _ => return None,
    };
    let anchor = start + insts[start..].iter().position(|&i| !folded_copy(f, i))?;
    let first = position(insts, a.at)?;
    if anchor >= first
        || f.insts[insts[anchor]].opcode.is_terminator()
        || packed_directly(f, insts, a, b)
    {
        return None;
    }
    let between = &insts[anchor + 1..position(insts, b.at)?];
    let crosses_wait = between
        .iter()
        .any(|&i| f.insts[i].opcode == Opcode::WgmmaWaitGroup);
    let safe = between
        .iter()
        .filter(|&&i| i != a.at)
        .all(|&i| independent(f, i, a) && independent(f, i, b));
    (crosses_wait && safe).then_some(insts[anchor])
}

/// Whether a conversion back reads `dst`: ptxas folds the round trip
/// rather than pair it (`clean_loop_exit_cvt_pair_converted_back`).
fn round_trip(f: &Function, insts: &[Inst], dst: VReg) -> bool {
    insts
        .iter()
        .any(|&i| &*f.insts[i].name == "cvt" && f.insts[i].uses().contains(&dst))
}

/// Whether `i` neither touches `c`'s result nor writes its source.
fn independent(f: &Function, i: Inst, c: &Conversion) -> bool {
    let d = &f.insts[i];
    let defs = d.defs();
    !defs.contains(&c.dst) && !defs.contains(&c.src) && !d.uses().contains(&c.dst)
}

/// Whether the pair's results go straight, or through copies, into one
/// `mov.b32 {lo, hi}`, where ptxas fuses the pair instead
/// (`clean_loop_exit_insn_before_wait_cvt_pair_packed_directly`).
fn packed_directly(f: &Function, insts: &[Inst], a: &Conversion, b: &Conversion) -> bool {
    let (ca, cb) = (copies(f, insts, a.dst), copies(f, insts, b.dst));
    insts.iter().any(|&i| {
        let d = &f.insts[i];
        &*d.name == "mov"
            && d.slots.len() == 2
            && match &d.slots[1].op {
                Operand::Vector(v) => {
                    let holds = |c: &[VReg]| {
                        v.iter()
                            .any(|o| matches!(o, Operand::Reg(r) if c.contains(r)))
                    };
                    v.len() == 2 && holds(&ca) && holds(&cb)
                }
                _ => false,
            }
    })
}

/// `r` and the registers copied from it by plain `mov`s, in `insts`' order.
fn copies(f: &Function, insts: &[Inst], r: VReg) -> Vec<VReg> {
    let mut out = vec![r];
    for &i in insts {
        let d = &f.insts[i];
        if let (true, Some(Operand::Reg(dst)), Some(Operand::Reg(src))) = (
            folded_copy(f, i),
            d.slots.first().map(|s| &s.op),
            d.slots.get(1).map(|s| &s.op),
        ) {
            if out.contains(src) {
                out.push(*dst);
            }
        }
    }
    out
}

/// Whether ptxas folds `i` away before pairing: an unguarded `mov` of a
/// register or an immediate (`clean_loop_exit_mov_before_wait_cvt_pair`), or a
/// load of a parameter, which becomes a constant-bank operand
/// (`clean_loop_exit_ld_param_before_wait_cvt_pair`).
fn folded_copy(f: &Function, i: Inst) -> bool {
    let d = &f.insts[i];
    let copy = &*d.name == "mov"
        && d.slots.len() == 2
        && matches!(d.slots[1].op, Operand::Reg(_) | Operand::Imm(_));
    let param = &*d.name == "ld" && d.has_mod("param");
    d.guard.is_none() && (copy || param)
}

fn position(insts: &[Inst], i: Inst) -> Option<usize> {
    insts.iter().position(|&j| j == i)
}

/// Put the pair right after `anchor`, in order, under `anchor`'s line.
fn move_pair(f: &mut Function, pair: [Inst; 2], anchor: Inst) {
    let line = f.insts[anchor].line;
    let mut after = anchor;
    for i in pair {
        f.layout.remove_inst(i);
        f.layout.insert_after(i, after);
        f.insts[i].line = line;
        after = i;
    }
}

/// The body of the loop kept by ptxas that block `b` is an exit of: `b`
/// follows the loop's latch and is outside the loop.
fn exited_loop(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    unrolled: &[(Block, Block)],
    b: Block,
) -> Option<Vec<Block>> {
    cfg.preds(b).iter().find_map(|&latch| {
        let header = cfg
            .succs(latch)
            .iter()
            .copied()
            .find(|&h| h != b && dt.dominates(h, latch) && !unrolled.contains(&(latch, h)))?;
        let body = loop_body(f, cfg, latch, header);
        (!body.contains(&b)).then_some(body)
    })
}

/// The blocks of the natural loop of back edge `latch -> header`.
fn loop_body(f: &Function, cfg: &ControlFlowGraph, latch: Block, header: Block) -> Vec<Block> {
    let mut seen: SecondaryMap<Block, bool> = SecondaryMap::with_capacity(f.layout.blocks().len());
    seen[header] = true;
    let mut body = vec![header];
    let mut work = vec![latch];
    while let Some(x) = work.pop() {
        if std::mem::replace(&mut seen[x], true) {
            continue;
        }
        body.push(x);
        work.extend(cfg.preds(x).iter().copied());
    }
    body
}

#[cfg(test)]
mod tests {
    use super::pair_conversions;
    use ori_ir::Function;

    /// fla's loop exit, reduced: an instruction ahead of the wait, then the
    /// conversions and `tail`.
    fn loop_exit(tail: &str) -> Function {
        let src = format!(
            ".version 8.7\n.target sm_90a\n.address_size 64\n\
             .visible .entry k(.param .u64 p_out, .param .u32 p_n)\n{{\n\
             .reg .f32 b<4>;\n.reg .b32 n, i, x, tid;\n.reg .b16 s<4>;\n\
             .reg .b64 da, out;\n.reg .pred p;\n\
             ld.param.u64 out, [p_out];\nld.param.u32 n, [p_n];\n\
             mov.u32 tid, %tid.x;\nmov.b64 da, 4611686293305294848;\nmov.u32 i, 0;\n\
             $L:\nwgmma.fence.sync.aligned;\n\
             wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {{b0,b1,b2,b3}}, da, da, 1, 1, 1, 0, 0;\n\
             wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 1;\n\
             add.u32 i, i, 1;\nsetp.lt.u32 p, i, n;\n@p bra $L;\n\
             and.b32 x, tid, 96;\nwgmma.wait_group.sync.aligned 0;\n{tail}\
             st.global.u32 [out+1024], x;\nret;\n}}\n"
        );
        let (ast, diags) = ori_ptx::parse_with_diags("t.ptx", &src);
        assert!(diags.is_empty(), "{diags:?}");
        let (m, diags) = ori_ptx::lower::lower_module_owned("t.ptx", ast);
        assert!(diags.iter().all(|d| !d.severity.is_error()), "{diags:?}");
        m.funcs.values().next().unwrap().clone()
    }

    /// The exit block's mnemonics after pairing, from the `and` on.
    fn exit_order(mut f: Function) -> Vec<String> {
        pair_conversions(&mut f);
        assert!(ori_ir::verify::verify_function(&f).is_empty());
        let names: Vec<String> = f
            .layout
            .all_insts()
            .map(|i| f.insts[i].name.to_string())
            .collect();
        let from = names.iter().position(|n| n == "and").unwrap();
        names[from..].to_vec()
    }

    #[test]
    fn a_pair_moves_ahead_of_the_wait() {
        let f = loop_exit(
            "cvt.rn.bf16.f32 s0, b0;\ncvt.rn.bf16.f32 s1, b1;\n\
             st.global.u16 [out], s0;\nst.global.u16 [out+64], s1;\n",
        );
        assert_eq!(
            exit_order(f)[..4],
            ["and", "cvt", "cvt", "wgmma"].map(String::from)
        );
    }

    #[test]
    fn a_pair_whose_result_is_read_before_it_stays() {
        let f = loop_exit(
            "st.global.u16 [out+8], s0;\ncvt.rn.bf16.f32 s0, b0;\ncvt.rn.bf16.f32 s1, b1;\n\
             st.global.u16 [out], s0;\nst.global.u16 [out+64], s1;\n",
        );
        assert_eq!(exit_order(f)[..3], ["and", "wgmma", "st"].map(String::from));
    }

    #[test]
    fn a_lone_conversion_stays() {
        let f = loop_exit("cvt.rn.bf16.f32 s0, b0;\nst.global.u16 [out], s0;\n");
        assert_eq!(
            exit_order(f)[..3],
            ["and", "wgmma", "cvt"].map(String::from)
        );
    }
}
