//! Solve, then decide: the fixpoint of the walk state over the CFG, and the
//! visits over the solved states that make every decision.
//!
//! **R-first-visit.** ptxas 13.0.88 judges each block on its first pass,
//! with the state its forward edges bring (what it knows when it first
//! reaches a loop header), and again once the states converged; a decision
//! is never taken back. So there are two solutions, both computed before
//! any decision: the first-pass states (one pass in reverse postorder,
//! back edges not yet known) and the converged states. Found by experiment
//! on the corpus: deciding on the converged states only loses the C7514 of
//! `heldout_30`, `heldout3_17`, `heldout4_34` and `heldout5_20` (on the
//! converged state the set was also retired by the previous iteration's
//! group, which passes unchecked: R-undefined-write) and the C7517 of
//! `c7514_loop_pure_read_before_commit`, its unrolled twin and
//! `heldout3_19`, whose C7514 comes from the converged state.

use super::plan::Plan;
use super::state::State;
use super::walk::Walker;
use crate::in_flight::PipeState;
use cranelift_entity::SecondaryMap;
use ori_ir::{sized_map, Block};
use std::borrow::Cow;

/// More rounds than any function needs: each round makes some state grow
/// in a lattice of finite height (sets of the function's sets, registers
/// and instructions, ages capped), and the corpora converge within a few
/// rounds. Reaching it is an internal error, never a silent stop.
pub(super) const MAX_ROUNDS: usize = 1000;

/// The fixpoint did not converge.
#[derive(Debug)]
pub(super) struct NotConverged {
    pub(super) rounds: usize,
}

/// Which blocks' entries grew after the first pass walked them, and where
/// asked for, the entries it walked them with.
#[derive(PartialEq, Debug)]
pub(super) struct FirstEntries {
    /// The block's entry grew after the first pass walked it.
    pub(super) changed: SecondaryMap<Block, bool>,
    /// The first-pass entries of those blocks, where kept: `decide` reads
    /// them, the deciding visits after the first pass need only `changed`.
    kept: Option<SecondaryMap<Block, Option<Box<State>>>>,
}

impl FirstEntries {
    /// None changed yet, for `blocks` blocks; the entries kept or not.
    fn new(blocks: usize, keep: bool) -> FirstEntries {
        FirstEntries {
            changed: sized_map(blocks),
            kept: keep.then(|| sized_map(blocks)),
        }
    }

    /// Join `carried` into the entry of `s`, a block the first pass walked;
    /// whether it grew. The first time it grows, it is marked changed (and
    /// the entry the first pass walked it with kept, where asked for).
    pub(super) fn join_walked(
        &mut self,
        entry: &mut SecondaryMap<Block, Option<State>>,
        s: Block,
        carried: &State,
    ) -> bool {
        let Some(e) = entry[s].as_mut() else {
            unreachable!("the first pass gave every block it walked an entry")
        };
        let grew = match &mut self.kept {
            Some(kept) if !self.changed[s] => {
                let before = e.clone();
                let grew = e.join(carried);
                if grew {
                    kept[s] = Some(Box::new(before));
                }
                grew
            }
            _ => e.join(carried),
        };
        self.changed[s] |= grew;
        grew
    }
}

/// The solved walk states.
///
/// Sized once to the function's blocks (a map grown by doubling kept up to
/// twice the room: on the generated 1M-instruction matmul its three state
/// maps were 135 MB of phase 87's 235). The first-pass entry of a block is
/// kept apart only where the converged entry differs from it (a loop
/// header, which its back edge reached after the first pass walked it);
/// elsewhere the two are one state.
pub(super) struct Solution {
    /// The blocks whose entry changed after ptxas's first pass (forward
    /// edges only) walked them, and where kept, their entries on that
    /// pass; every other reachable block's first-pass entry is its
    /// converged one.
    pub(super) first: FirstEntries,
    /// Converged block entry states (`None`: unreachable).
    pub(super) entry: SecondaryMap<Block, Option<State>>,
    /// Converged block exit states' pipelines: what the late checks read
    /// of them (the whole states were 34 MB of the generated 1M matmul's
    /// peak for their in-flight sets alone).
    pub(super) outs: SecondaryMap<Block, Option<PipeState>>,
    /// The plan's [`Plan::epoch`] as the first pass began each block.
    pub(super) first_visit: SecondaryMap<Block, u32>,
    /// Whether the fixpoint's last walk of the block, a later round's
    /// (scratch plan), asked the plan nothing ([`Plan::asked`]) and found
    /// the pipeline unserialized.
    pub(super) quiet: SecondaryMap<Block, bool>,
}

impl Solution {
    /// Room for the states of a function of `blocks` blocks, none set yet.
    pub(super) fn sized(blocks: usize) -> Solution {
        Solution {
            first: FirstEntries::new(blocks, false),
            entry: sized_map(blocks),
            outs: sized_map(blocks),
            first_visit: sized_map(blocks),
            quiet: sized_map(blocks),
        }
    }

    /// The entry state of `b` on ptxas's first pass (`None`: unreachable),
    /// from a solution that kept the first-pass entries.
    fn first_entry(&self, b: Block) -> Option<&State> {
        debug_assert!(
            self.first.kept.is_some(),
            "the first-pass entries were not kept"
        );
        let kept = self.first.kept.as_ref().and_then(|k| k[b].as_deref());
        kept.or(self.entry[b].as_ref())
    }
}

impl Walker<'_> {
    /// Solve, then decide (R-first-visit): the fixpoint's first pass visits
    /// every block with its first-pass entry in reverse postorder, which is
    /// the first deciding visit, so it records into the plan; then the
    /// converged states are visited.
    ///
    /// A converged visit is skipped where it would repeat the first one:
    /// the block's converged entry is its first-pass entry, and neither the
    /// failure nor any decision at one of its instructions changed since
    /// its first visit began. The walk is a function of its entry state
    /// and of those facts, and every decision it records is idempotent, so
    /// that visit would decide nothing new.
    ///
    /// A converged visit is also skipped where it would repeat the
    /// fixpoint's last walk of the block, which had the same entry, and
    /// that walk asked the plan nothing ([`Plan::asked`]: no decision, not
    /// even one already recorded) with the pipeline unserialized, while no
    /// decision at the block's instructions and no failure has ever been
    /// recorded in the deciding plan. The walk then reads the same answers
    /// from both plans (no decision stands at its instructions, the walk
    /// still injects), so it takes the same course and asks nothing of
    /// this plan either. On the generated 1M matmul this skips 36,600 of
    /// its 36,601 converged visits; the debug build checks every plan
    /// against the one of both visits in full (below).
    ///
    /// Where a first-pass walk's state followed a decision already recorded
    /// ([`Plan::state_from_plan`]), the fixpoint is solved again with
    /// scratch plans only, and both deciding visits are made in full.
    pub(super) fn solve_and_decide(&self) -> Result<(Solution, Plan), NotConverged> {
        let mut plan = Plan::default();
        let sol = self.solve(&mut plan, false)?;
        if plan.state_from_plan {
            let sol = self.solve(&mut Plan::scratch(), true)?;
            let plan = self.decide(&sol);
            return Ok((sol, plan));
        }
        for &b in self.an.cfg.rpo() {
            let Some(entry) = sol.entry[b].as_ref() else {
                continue;
            };
            let insts = self.f.layout.block_insts(b);
            if !sol.first.changed[b] && plan.unchanged_since(insts, sol.first_visit[b]) {
                continue;
            }
            if sol.quiet[b] && plan.unchanged_since(insts, 0) {
                continue;
            }
            self.walk_block(b, entry.clone(), &mut plan);
        }
        if cfg!(debug_assertions) {
            // The first pass's plan left the fixpoint as it is, and the
            // skipped visits change nothing: the solution is the scratch
            // walks' and the plan the one of both visits in full.
            let reference = self.solve(&mut Plan::scratch(), true)?;
            debug_assert!(
                sol.outs == reference.outs,
                "the first pass moved the fixpoint"
            );
            // The same entries, both kinds.
            debug_assert!(sol.entry == reference.entry, "the converged entries differ");
            debug_assert!(
                sol.first.changed == reference.first.changed,
                "the first-pass entries differ"
            );
            let full = self.decide(&reference);
            debug_assert_eq!(plan.decisions(), full.decisions());
        }
        Ok((sol, plan))
    }

    /// Iterate the walk over the CFG (loops included) to its fixpoint. The
    /// first pass records its decisions in `first_pass` (a scratch plan
    /// keeps none); the later rounds' go to a scratch plan: none is kept
    /// from a state that may still move. The first-pass entries of the
    /// blocks whose entry changed are kept where `keep_first` asks (for
    /// `decide`).
    fn solve(&self, first_pass: &mut Plan, keep_first: bool) -> Result<Solution, NotConverged> {
        self.solve_in_order(first_pass, keep_first, self.an.cfg.rpo())
    }

    /// [`Walker::solve`], its rounds after the first (ptxas's first pass,
    /// in reverse postorder) visiting the blocks whose entry grew in
    /// `later` (any permutation of the reachable blocks).
    pub(super) fn solve_in_order(
        &self,
        first_pass: &mut Plan,
        keep_first: bool,
        later: &[Block],
    ) -> Result<Solution, NotConverged> {
        let blocks = self.f.blocks.len();
        let mut sol = Solution::sized(blocks);
        if keep_first {
            sol.first = FirstEntries::new(blocks, true);
        }
        let Some(&start) = self.an.cfg.rpo().first() else {
            return Ok(sol);
        };
        sol.entry[start] = Some(State::at_function_entry());
        // Blocks whose entry changed since their last walk: a round walks
        // only these (in reverse postorder), since a walk is a function of
        // the entry state alone. Round 1 walks every reachable block.
        let mut dirty: SecondaryMap<Block, bool> = sized_map(blocks);
        // The blocks the first pass (round 1) walked.
        let mut walked: SecondaryMap<Block, bool> = sized_map(blocks);
        let mut scratch = Plan::scratch();
        dirty[start] = true;
        let mut pending = 1usize;
        let mut rounds = 0;
        while pending > 0 {
            if rounds == MAX_ROUNDS {
                return Err(NotConverged { rounds });
            }
            rounds += 1;
            let order = if rounds == 1 {
                self.an.cfg.rpo()
            } else {
                later
            };
            for &b in order {
                if !std::mem::take(&mut dirty[b]) {
                    continue;
                }
                pending -= 1;
                let Some(entry) = sol.entry[b].clone() else {
                    continue;
                };
                let plan = if rounds == 1 {
                    walked[b] = true;
                    sol.first_visit[b] = first_pass.epoch();
                    &mut *first_pass
                } else {
                    &mut scratch
                };
                let (out, quiet) = self.walk_quietly(b, entry, plan);
                if rounds > 1 {
                    sol.quiet[b] = quiet;
                }
                let first = &mut sol.first;
                for s in self.propagate(b, &out, &mut sol.entry, &walked, first) {
                    if !std::mem::replace(&mut dirty[s], true) {
                        pending += 1;
                    }
                }
                sol.outs[b] = Some(out.pipe);
            }
        }
        Ok(sol)
    }

    /// [`Walker::transfer_block`], and whether the walk asked `plan`
    /// nothing ([`Plan::asked`]) with the pipeline unserialized (see
    /// `Solution::quiet`).
    pub(super) fn walk_quietly(&self, b: Block, entry: State, plan: &mut Plan) -> (State, bool) {
        let (asked, unserialized) = (plan.asked(), plan.failure().is_none());
        let out = self.transfer_block(b, entry, plan);
        (out, unserialized && plan.asked() == asked)
    }

    /// The state out of block `b`, with what only matters inside a block
    /// dropped (`exposed`).
    pub(super) fn transfer_block(&self, b: Block, entry: State, plan: &mut Plan) -> State {
        let mut out = self.walk_block(b, entry, plan);
        let ex = &self.tables.exposed;
        out.touched.retain(|r| ex[*r]);
        out.read_touched.retain(|r| ex[*r]);
        out.shapes.retain(|(r, _)| ex[*r]);
        out
    }

    /// Join `out` into the entries of `b`'s successors; the successors whose
    /// entry grew. A successor the first pass already walked is marked in
    /// `first` the first time it grows.
    fn propagate(
        &self,
        b: Block,
        out: &State,
        entry: &mut SecondaryMap<Block, Option<State>>,
        walked: &SecondaryMap<Block, bool>,
        first: &mut FirstEntries,
    ) -> smallvec::SmallVec<[Block; 2]> {
        let mut grew = smallvec::SmallVec::new();
        for &s in self.an.cfg.succs(b) {
            let carried = self.carried(b, s, out);
            let changed = match &mut entry[s] {
                Some(_) if walked[s] => first.join_walked(entry, s, &carried),
                Some(e) => e.join(&carried),
                slot @ None => {
                    let mut e = carried.into_owned();
                    e.canonicalize();
                    *slot = Some(e);
                    true
                }
            };
            if changed {
                grew.push(s);
            }
        }
        grew
    }

    /// What `out`, the state out of `b`, brings along the edge to `s`.
    /// R-kept-loop-back-edge: what the user's waits taught the walk does
    /// not go round a loop ptxas keeps (see `loops`).
    pub(super) fn carried<'s>(&self, b: Block, s: Block, out: &'s State) -> Cow<'s, State> {
        let kept_back = self.an.loops.kept_back_edges.contains(&(b, s));
        if kept_back && out.user_waited {
            let mut o = out.clone();
            o.user_waited = false;
            Cow::Owned(o)
        } else {
            Cow::Borrowed(out)
        }
    }

    /// Decide (R-first-visit) in full: one visit over the first-pass
    /// states, then one over the converged states, in reverse postorder.
    fn decide(&self, sol: &Solution) -> Plan {
        let mut plan = Plan::default();
        for first_pass in [true, false] {
            for &b in self.an.cfg.rpo() {
                let entry = if first_pass {
                    sol.first_entry(b)
                } else {
                    sol.entry[b].as_ref()
                };
                if let Some(entry) = entry {
                    self.walk_block(b, entry.clone(), &mut plan);
                }
            }
        }
        plan
    }
}
