//! Loops whose trip count ptxas cannot see, block by block.
//!
//! ptxas 13.0.88 unrolls a loop by four with a remainder when its trip count
//! is a run-time value, and then refuses a wait it had to inject into the
//! loop body (C7514: corpus `c7514_loop_read_acc_in_loop`,
//! `c7514_loop_pure_read_before_commit`, `c7514_loop_rmw_before_commit`);
//! a loop bounded by a constant is unrolled in full and its injected waits
//! are kept (`c7517_c7519_loop_constant_trip_count`). This module finds the
//! natural loops (a back edge `s -> h` with `h` dominating `s`) and marks
//! the blocks of those whose exit test does not compare against a constant.

use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, DominatorTree, Function, Opcode, Operand, Symbol};

/// The largest loop body (PTX instructions, all its blocks) ptxas 13.0.88
/// unrolls. Probed on `c7514_loop_pure_read_before_commit` padded with
/// stores: with 4 stores (12 instructions,
/// `c7514_loop_read_body_with_4_stores_unrolled`) the loop is unrolled and
/// its injected wait refused (C7514), with 8 stores (16,
/// `c7517_loop_read_body_with_8_stores_not_unrolled`) it is kept whole and
/// the wait stays (C7517 alone). Real compilers' loops
/// (Triton's K loops, hundreds of instructions) are never unrolled, so a
/// wait ptxas injects there is kept. (ptxas's own measure is of the code
/// after its optimizations: loads whose results die, or stores it can
/// vectorize, count for less; ori counts PTX instructions.)
pub const MAX_UNROLLED_BODY: usize = 14;

/// The largest constant-trip loop ptxas 13.0.88 unrolls in full, measured
/// as trip count x (PTX instructions of the body + accumulator registers of
/// its wgmmas). Probed with the toy compiler's K loop (`stages 3 peek`,
/// whose injected wait ptxas refuses, C7514, only where it unrolled the
/// loop) over tiles n8..n256 and 2..32 trips: unrolled up to 1568
/// (n8, 32 trips, 45 + 4), kept from 1880 (n256, 8 trips, 107 + 128);
/// corpus `toy_gemm_bf16_64x256_stages3_peek` (kept, C7517 alone) against
/// `toy_gemm_f16_64x64_stages1_peek` (unrolled, C7514). Neither the trip
/// count nor the body size alone separates the probes. Where the trip count
/// cannot be read (no constant start or step), a constant-bound loop counts
/// as unrolled, as before.
pub const MAX_FULL_UNROLL: u64 = 1700;

/// One natural loop: the back edge `latch -> header` and its blocks.
struct NaturalLoop {
    header: Block,
    latch: Block,
    /// The header, and every block that reaches the latch without passing
    /// through the header.
    body: Vec<Block>,
    /// PTX instructions in the body.
    size: usize,
    /// The latch's branch compares against a constant (`constant_bound`).
    constant: bool,
    /// The header holds `.pragma "nounroll"`.
    nounroll: bool,
}

impl NaturalLoop {
    /// A run-time trip count that ptxas unrolls by four with a remainder:
    /// a small body, and no `.pragma "nounroll"` in the header
    /// (R-nounroll: `c7517_f16x2_loop_nounroll_repacked_halves` keeps its
    /// injected wait, C7517 alone, where the same loop without the pragma
    /// is refused, C7514).
    fn unrolled(&self) -> bool {
        !self.constant && self.size <= MAX_UNROLLED_BODY && !self.nounroll
    }
}

/// Every loop fact phase 87 uses, from one discovery of the natural loops.
pub struct Loops {
    /// Blocks of loops with a run-time trip count.
    pub runtime: SecondaryMap<Block, bool>,
    /// Blocks of loops with a run-time trip count that ptxas unrolls (a body
    /// of at most [`MAX_UNROLLED_BODY`] instructions).
    pub unrolled_runtime: SecondaryMap<Block, bool>,
    /// Blocks of those unrolled run-time loops whose body holds a user
    /// `wgmma.wait_group`: a wait injected there comes, in the next copy of
    /// the unrolled body, after the user's wait of the copy before, which
    /// ptxas's late check refuses (R-unrolled-loop-wait). A loop with no
    /// wait of its own keeps its injected wait (`c7517_loop_read_no_user_wait`).
    pub waiting_unrolled: SecondaryMap<Block, bool>,
    /// Targets of back edges.
    pub header: SecondaryMap<Block, bool>,
    /// The back edges `(latch, header)` of loops ptxas keeps as loops: a
    /// run-time trip count and a body larger than [`MAX_UNROLLED_BODY`].
    /// ptxas's walk does not carry what it learnt at the end of such a
    /// loop's body back to its header (R-kept-loop-back-edge): a pure read
    /// before the wait inside such a loop gets its wait (C7517) each time,
    /// where in an unrolled loop the second copy sees the first copy's
    /// `wgmma.wait_group` and is refused (C7514, R-refuse-after-user-wait;
    /// `c7517_loop_read_body_with_8_stores_not_unrolled` against
    /// `c7514_loop_read_body_with_4_stores_unrolled`).
    pub kept_back_edges: fxhash::FxHashSet<(Block, Block)>,
    /// Heads of loops whose body commits a wgmma group. Only such a loop
    /// changes how old the groups in flight at its header are; a loop that
    /// commits nothing (an mbarrier spin-wait, `LAB_WAIT: ... bra
    /// LAB_WAIT;` in CUTLASS's and FA3's inline asm) leaves them as they
    /// came in (R-sticky-groups, FA3's forward and backward kernels).
    pub committing_header: SecondaryMap<Block, bool>,
    /// The back edges `(latch, header)` of the loops ptxas unrolls in full
    /// (see [`fully_unrolled_back_edges`]).
    pub fully_unrolled: Vec<(Block, Block)>,
}

impl Loops {
    /// Find the natural loops (a back edge `s -> h` with `h` dominating
    /// `s`) once and derive every map from them.
    pub fn compute(f: &Function, cfg: &ControlFlowGraph, dt: &DominatorTree) -> Loops {
        let loops = natural_loops(f, cfg, dt);
        let mut out = Loops {
            runtime: SecondaryMap::new(),
            unrolled_runtime: SecondaryMap::new(),
            waiting_unrolled: SecondaryMap::new(),
            header: SecondaryMap::new(),
            kept_back_edges: Default::default(),
            committing_header: SecondaryMap::new(),
            fully_unrolled: unrolled_back_edges(&loops),
        };
        for l in &loops {
            out.header[l.header] = true;
            let commits = l.body.iter().any(|b| {
                f.layout
                    .block_insts(*b)
                    .iter()
                    .any(|i| f.insts[*i].opcode.is_commit())
            });
            out.committing_header[l.header] |= commits;
            if l.constant {
                continue;
            }
            let waits = l.body.iter().any(|b| {
                f.layout
                    .block_insts(*b)
                    .iter()
                    .any(|i| f.insts[*i].opcode == Opcode::WgmmaWaitGroup)
            });
            for &b in &l.body {
                out.runtime[b] = true;
                out.unrolled_runtime[b] |= l.unrolled();
                out.waiting_unrolled[b] |= l.unrolled() && waits;
            }
        }
        for l in loops.iter().filter(|l| !l.constant) {
            let (h, s) = (l.header, l.latch);
            if !(out.unrolled_runtime[h] && out.unrolled_runtime[s]) {
                out.kept_back_edges.insert((s, h));
            }
        }
        out
    }
}

/// The bodies of the loops ptxas unrolls by four with a remainder
/// (`NaturalLoop::unrolled`), each with its header first. After that
/// unrolling some path runs past the body without entering it, which its
/// dead-code elimination sees (R-dead-wgmma, `crate::dead_wgmma`).
pub fn remainder_unrolled_bodies(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
) -> Vec<Vec<Block>> {
    natural_loops(f, cfg, dt)
        .into_iter()
        .filter(NaturalLoop::unrolled)
        .map(|l| l.body)
        .collect()
}

/// The back edges `(latch, header)` of the loops ptxas unrolls in full: a
/// constant bound within [`MAX_FULL_UNROLL`].
pub fn fully_unrolled_back_edges(
    f: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
) -> Vec<(Block, Block)> {
    unrolled_back_edges(&natural_loops(f, cfg, dt))
}

/// The back edges `(latch, header)` of those of `loops` ptxas unrolls in full.
fn unrolled_back_edges(loops: &[NaturalLoop]) -> Vec<(Block, Block)> {
    loops
        .iter()
        .filter(|l| l.constant)
        .map(|l| (l.latch, l.header))
        .collect()
}

fn natural_loops(f: &Function, cfg: &ControlFlowGraph, dt: &DominatorTree) -> Vec<NaturalLoop> {
    let mut loops = Vec::new();
    // Which back edge last visited each block (0: none), so that one map
    // serves every loop.
    let mut seen: SecondaryMap<Block, u32> = SecondaryMap::new();
    let mut stamp = 0;
    for &s in cfg.rpo() {
        for &h in cfg.succs(s) {
            if !dt.dominates(h, s) {
                continue;
            }
            stamp += 1;
            seen[h] = stamp;
            let mut body = vec![h];
            let mut work = vec![s];
            while let Some(b) = work.pop() {
                if seen[b] == stamp {
                    continue;
                }
                seen[b] = stamp;
                body.push(b);
                work.extend(cfg.preds(b).iter().copied());
            }
            let size = body.iter().map(|b| f.layout.block_insts(*b).len()).sum();
            let constant = constant_bound(f, s) && unrolled_in_full(f, cfg, &body, s, size);
            loops.push(NaturalLoop {
                header: h,
                latch: s,
                body,
                size,
                constant,
                nounroll: f.blocks[h].nounroll,
            });
        }
    }
    loops
}

/// Whether ptxas unrolls a constant-bound loop in full ([`MAX_FULL_UNROLL`]).
fn unrolled_in_full(
    f: &Function,
    cfg: &ControlFlowGraph,
    body: &[Block],
    latch: Block,
    size: usize,
) -> bool {
    let Some(trips) = trip_count(f, cfg, body, body[0], latch) else {
        return true;
    };
    let acc: usize = body
        .iter()
        .flat_map(|b| f.layout.block_insts(*b))
        .filter(|i| f.insts[**i].opcode == Opcode::WgmmaMmaAsync)
        .map(|i| f.insts[*i].slots.first().map_or(0, |s| s.op.regs().len()))
        .sum();
    trips.saturating_mul((size + acc) as u64) <= MAX_FULL_UNROLL
}

/// The trip count of a loop whose latch ends `setp.lt/le/ne r, N; @p bra`
/// with `r` stepped by an immediate in the body and set from an immediate
/// in the block that enters the loop.
fn trip_count(
    f: &Function,
    cfg: &ControlFlowGraph,
    body: &[Block],
    header: Block,
    latch: Block,
) -> Option<u64> {
    let imm = |o: &Operand| match o {
        Operand::Imm(i) => i.as_i64(),
        _ => None,
    };
    let insts = f.layout.block_insts(latch);
    let br = &f.insts[*insts.last()?];
    let guard = br.guard?;
    let setp = insts
        .iter()
        .rev()
        .map(|i| &f.insts[*i])
        .find(|x| x.name.starts_with("setp") && x.defs().contains(&guard.reg))?;
    let reg = match setp.slots.get(1).map(|s| &s.op) {
        Some(Operand::Reg(r)) => *r,
        _ => return None,
    };
    let bound = setp.slots.get(2).and_then(|s| imm(&s.op))?;
    let inclusive = match setp.mods.first().map(|m| &**m) {
        Some("lt") | Some("ne") if !guard.negated => false,
        Some("le") if !guard.negated => true,
        _ => return None,
    };
    let defs = |i: &ori_ir::Inst| f.insts[*i].defs().contains(&reg);
    let mut step = None;
    for i in body
        .iter()
        .flat_map(|b| f.layout.block_insts(*b))
        .filter(|i| defs(i))
    {
        let x = &f.insts[*i];
        if &*x.name != "add" || step.is_some() {
            return None;
        }
        step = x.slots.get(2).and_then(|s| imm(&s.op));
    }
    let step = step.filter(|s| *s > 0)?;
    // The start: the last write of `r` in the one block entering the loop
    // (looked at alone, so that the cost stays that block's size).
    let mut entering = cfg.preds(header).iter().filter(|p| !body.contains(p));
    let pre = *entering.next()?;
    if entering.next().is_some() {
        return None;
    }
    let start = f.layout.block_insts(pre).iter().rev().find(|i| defs(i))?;
    if &*f.insts[*start].name != "mov" {
        return None;
    }
    let start = f.insts[*start].slots.get(1).and_then(|s| imm(&s.op))?;
    let end = bound + i64::from(inclusive);
    Some(if end <= start {
        1
    } else {
        ((end - start + step - 1) / step) as u64
    })
}

/// Whether the branch ending block `s` tests a predicate set by comparing
/// against an immediate in the same block (`setp.lt.u32 p, i, 4; @p bra`).
pub fn constant_bound(f: &Function, s: Block) -> bool {
    let insts = f.layout.block_insts(s);
    let Some(&br) = insts.last() else {
        return false;
    };
    let d = &f.insts[br];
    let Some(guard) = d.guard.as_ref().filter(|_| d.opcode == Opcode::Branch) else {
        return false;
    };
    let setp = Symbol::new("setp");
    insts.iter().rev().skip(1).any(|&i| {
        let x = &f.insts[i];
        x.name == setp
            && x.defs().contains(&guard.reg)
            && x.slots.iter().any(|s| matches!(s.op, Operand::Imm(_)))
    })
}
