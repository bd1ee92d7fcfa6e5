//! A forward dataflow analysis iterated to its fixpoint, and a cursor over
//! its results, after `rustc_mir_dataflow`'s `Analysis`, `Engine` and
//! `ResultsCursor`.
//!
//! An [`Analysis`] says what its domain is (a [`JoinSemiLattice`]), what
//! holds at the function's entry and what one instruction does to a state
//! (the transfer function), and optionally what an edge does. The engine
//! keeps one state per block entry, starts every block at bottom, and
//! visits the blocks whose entry grew, in an order it is given (reverse
//! postorder by default), joining each block's exit into its successors'
//! entries until nothing grows. With a monotone transfer function the
//! result is the least fixpoint, whatever the order (`tests` checks that
//! on every corpus kernel under random orders); the debug build asserts
//! the monotonicity where a block is walked again.

use super::lattice::JoinSemiLattice;
use cranelift_entity::SecondaryMap;
use ori_ir::{Block, ControlFlowGraph, Function, Inst};

/// A forward dataflow analysis over one function.
pub trait Analysis {
    /// The state at a program point.
    type Domain: JoinSemiLattice + Clone + std::fmt::Debug;

    /// The state at the function's entry (every other block starts at
    /// bottom).
    fn start_state(&self) -> Self::Domain;

    /// The effect of instruction `inst` on `state`.
    fn apply_instruction(&self, state: &mut Self::Domain, inst: Inst);

    /// What the edge `from -> to` does to the state `from` exits with
    /// (nothing, unless an analysis says otherwise).
    fn apply_edge(&self, _from: Block, _to: Block, _state: &mut Self::Domain) {}
}

/// The fixpoint: the state at each reachable block's entry.
pub struct Results<'f, A: Analysis> {
    /// The analysis the states are of.
    pub analysis: A,
    f: &'f Function,
    entry: SecondaryMap<Block, Option<A::Domain>>,
    /// Block visits it took.
    pub visits: usize,
}

impl<'f, A: Analysis> Results<'f, A> {
    /// The state at `b`'s entry (`None`: unreachable).
    pub fn entry(&self, b: Block) -> Option<&A::Domain> {
        self.entry[b].as_ref()
    }

    /// A cursor over these results.
    pub fn cursor(&self) -> ResultsCursor<'_, 'f, A> {
        ResultsCursor {
            results: self,
            state: None,
            at: None,
        }
    }
}

/// The state after `b`'s instructions, from `state` at its entry.
fn transfer_block<A: Analysis>(a: &A, f: &Function, b: Block, state: &mut A::Domain) {
    for &i in f.layout.block_insts(b) {
        a.apply_instruction(state, i);
    }
}

/// Iterate `analysis` over `f` to its fixpoint, visiting the blocks whose
/// entry grew in reverse postorder.
pub fn iterate_to_fixpoint<'f, A: Analysis>(
    analysis: A,
    f: &'f Function,
    cfg: &ControlFlowGraph,
) -> Results<'f, A> {
    iterate_in_order(analysis, f, cfg, cfg.rpo())
}

/// [`iterate_to_fixpoint`], the dirty blocks visited in `order` (every
/// reachable block once; any permutation gives the same fixpoint for a
/// monotone analysis, which the property tests use).
pub fn iterate_in_order<'f, A: Analysis>(
    analysis: A,
    f: &'f Function,
    cfg: &ControlFlowGraph,
    order: &[Block],
) -> Results<'f, A> {
    let mut entry: SecondaryMap<Block, Option<A::Domain>> = SecondaryMap::new();
    let mut dirty: SecondaryMap<Block, bool> = SecondaryMap::new();
    // The exit each block last had, for the monotonicity check.
    let mut last_exit: SecondaryMap<Block, Option<A::Domain>> = SecondaryMap::new();
    let mut visits = 0;
    if let Some(&start) = cfg.rpo().first() {
        entry[start] = Some(analysis.start_state());
        dirty[start] = true;
    }
    let mut pending = usize::from(!cfg.rpo().is_empty());
    while pending > 0 {
        for &b in order {
            if !std::mem::take(&mut dirty[b]) {
                continue;
            }
            pending -= 1;
            visits += 1;
            let Some(mut state) = entry[b].clone() else {
                continue;
            };
            transfer_block(&analysis, f, b, &mut state);
            if cfg!(debug_assertions) {
                assert_monotone::<A>(&mut last_exit[b], &state, b);
            }
            for &s in cfg.succs(b) {
                let mut out = state.clone();
                analysis.apply_edge(b, s, &mut out);
                let e = entry[s].get_or_insert_with(A::Domain::bottom);
                if e.join(&out) && !std::mem::replace(&mut dirty[s], true) {
                    pending += 1;
                }
            }
        }
    }
    Results {
        analysis,
        f,
        entry,
        visits,
    }
}

/// The monotonicity of the transfer function, where a block is walked
/// again from a larger entry: its new exit is at least its last one.
fn assert_monotone<A: Analysis>(last: &mut Option<A::Domain>, exit: &A::Domain, b: Block) {
    if let Some(before) = last.as_ref() {
        let mut joined = exit.clone();
        assert!(
            !joined.join(before),
            "{b}: the transfer function is not monotone: exit {exit:?} after {before:?}"
        );
    }
    *last = Some(exit.clone());
}

/// Where a [`ResultsCursor`] stands: in block `.0`, before its `.1`-th
/// instruction.
type Position = (Block, usize);

/// Reads the fixed point at any instruction, moving forward from the
/// nearest block entry (`rustc_mir_dataflow::ResultsCursor`).
pub struct ResultsCursor<'r, 'f, A: Analysis> {
    results: &'r Results<'f, A>,
    state: Option<A::Domain>,
    at: Option<Position>,
}

impl<A: Analysis> ResultsCursor<'_, '_, A> {
    /// The state at `b`'s entry (`None`: unreachable).
    pub fn seek_to_block_start(&mut self, b: Block) -> Option<&A::Domain> {
        self.seek(b, 0)
    }

    /// The state before instruction `i` (`None`: not in a reachable block).
    pub fn seek_before(&mut self, i: Inst) -> Option<&A::Domain> {
        let f = self.results.f;
        let b = f.layout.inst_block(i)?;
        let k = f.layout.block_insts(b).iter().position(|&x| x == i)?;
        self.seek(b, k)
    }

    /// The state at `b`'s exit.
    pub fn seek_to_block_end(&mut self, b: Block) -> Option<&A::Domain> {
        let n = self.results.f.layout.block_insts(b).len();
        self.seek(b, n)
    }

    /// The state before the `k`-th instruction of `b`: from where the
    /// cursor stands when that is earlier in the same block, else from the
    /// block's entry.
    fn seek(&mut self, b: Block, k: usize) -> Option<&A::Domain> {
        let reuse = matches!(self.at, Some((cb, ck)) if cb == b && ck <= k);
        if !reuse {
            self.state = Some(self.results.entry(b)?.clone());
            self.at = Some((b, 0));
        }
        let from = self.at.map_or(0, |(_, ck)| ck);
        let insts = self.results.f.layout.block_insts(b);
        let state = self.state.as_mut()?;
        for &i in &insts[from..k] {
            self.results.analysis.apply_instruction(state, i);
        }
        self.at = Some((b, k));
        self.state.as_ref()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::dataflow::lattice::tests::Rng;
    use crate::dataflow::{Flat, Max, MaySet, MustFlag};
    use ori_ir::{Opcode, VReg};

    /// Facts of each of the lattices, with a monotone transfer: registers
    /// written on some path, a fence on every path, committed groups not
    /// yet waited for (capped), the last GMMA op where paths agree.
    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Facts {
        written: MaySet<VReg>,
        fenced: MustFlag,
        open: Max<u8>,
        last: Flat<Opcode>,
    }

    impl JoinSemiLattice for Facts {
        fn bottom() -> Self {
            Facts {
                written: MaySet::bottom(),
                fenced: MustFlag::bottom(),
                open: Max::bottom(),
                last: Flat::bottom(),
            }
        }

        fn join(&mut self, other: &Self) -> bool {
            crate::join_fields!(self, other; written, fenced, open, last)
        }
    }

    struct Pipeline<'f>(&'f Function);

    impl Analysis for Pipeline<'_> {
        type Domain = Facts;

        fn start_state(&self) -> Facts {
            Facts {
                fenced: MustFlag(false),
                ..Facts::bottom()
            }
        }

        fn apply_instruction(&self, s: &mut Facts, i: Inst) {
            let d = &self.0.insts[i];
            for r in d.defs() {
                s.written.insert(r);
            }
            match d.opcode {
                Opcode::WgmmaFence => s.fenced = MustFlag(true),
                Opcode::WgmmaCommitGroup => s.open = Max((s.open.0 + 1).min(8)),
                Opcode::WgmmaWaitGroup => s.open = Max(0),
                _ => {}
            }
            if d.opcode.is_gmma_family() {
                s.last = Flat::Elem(d.opcode);
            }
        }
    }

    /// The `.ptx` files below `dir`.
    fn ptx_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                ptx_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
    }

    /// Every function with a body of every kernel of the repository's
    /// tests, with its module's facts.
    pub(crate) fn corpus_functions() -> Vec<(String, Function, ori_ir::ModuleInfo)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
        let mut files = Vec::new();
        ptx_files(&root, &mut files);
        files.sort();
        let mut out = Vec::new();
        for p in &files {
            let name = p.display().to_string();
            let Ok(src) = std::fs::read_to_string(p) else {
                continue;
            };
            let (ast, diags) = ori_ptx::parse_with_diags(&name, &src);
            if diags.iter().any(|d| d.severity.is_error()) {
                continue;
            }
            let (m, diags) = ori_ptx::lower::lower_module_owned(&name, ast);
            if diags.iter().any(|d| d.severity.is_error()) {
                continue;
            }
            out.extend(
                m.funcs
                    .values()
                    .filter(|f| f.has_body)
                    .map(|f| (name.clone(), f.clone(), ori_ir::ModuleInfo::of(&m))),
            );
        }
        out
    }

    #[test]
    fn the_fixpoint_does_not_depend_on_the_visiting_order() {
        let mut rng = Rng(41);
        let funcs = corpus_functions();
        assert!(funcs.len() > 1000, "only {} functions", funcs.len());
        for (name, f, _) in &funcs {
            let cfg = ControlFlowGraph::compute(f);
            let rpo = iterate_to_fixpoint(Pipeline(f), f, &cfg);
            for _ in 0..3 {
                let mut order = cfg.rpo().to_vec();
                for k in (1..order.len()).rev() {
                    order.swap(k, rng.below(k + 1));
                }
                let other = iterate_in_order(Pipeline(f), f, &cfg, &order);
                for &b in cfg.rpo() {
                    assert_eq!(rpo.entry(b), other.entry(b), "{name}: {}, {b}", f.name);
                }
            }
        }
    }

    #[test]
    fn the_cursor_reads_what_a_walk_from_the_entry_computes() {
        for (name, f, _) in corpus_functions().iter().take(200) {
            let cfg = ControlFlowGraph::compute(f);
            let results = iterate_to_fixpoint(Pipeline(f), f, &cfg);
            let mut cursor = results.cursor();
            for &b in cfg.rpo() {
                let mut walked = results.entry(b).cloned().expect("reachable");
                for &i in f.layout.block_insts(b) {
                    assert_eq!(cursor.seek_before(i), Some(&walked), "{name}: {i}");
                    results.analysis.apply_instruction(&mut walked, i);
                }
                assert_eq!(cursor.seek_to_block_end(b), Some(&walked), "{name}: {b}");
                let entry = results.entry(b).cloned();
                assert_eq!(cursor.seek_to_block_start(b).cloned(), entry);
            }
        }
    }
}
