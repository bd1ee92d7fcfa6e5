//! The fixpoint of a large function on two threads: ptxas's first pass on
//! the caller's thread, the later rounds trailing it on a second.
//!
//! On the generated 1M-instruction matmul the sequential solver's first
//! round walks all 54,901 blocks (116 ms); its second and third walk each
//! tile's loop and loop exit again, 45,750 visits (125 ms). A loop's later
//! rounds need nothing from the blocks the first pass has not reached yet,
//! so they can run while the first pass goes on:
//!
//! * the caller's thread makes the first pass (R-first-visit) as `solve`'s
//!   first round does: every block in reverse postorder, walked with the
//!   join of what its forward edges bring, deciding into the plan. It hands
//!   each block's entry, and what each back edge brings, to the second
//!   thread in batches;
//! * the second thread keeps the converged entries. It takes the blocks in
//!   *closed runs*: stretches of the reverse postorder that no edge enters
//!   from further on (`closed_runs`), so a run's entries can only grow from
//!   the run itself and from runs before it. Once the first pass has walked
//!   a whole run, the second thread replays `solve`'s later rounds over it
//!   (scratch plan, blocks whose entry grew, in reverse postorder), round
//!   by round, until nothing in it grows; what a walk sends to a later run
//!   is kept with its round, and joined in when that run's replay reaches
//!   the round.
//!
//! The replay is exact, not merely another road to the same fixpoint: each
//! block is walked in the same rounds, from the same entries, joined in the
//! same order, as `solve` does. Found by experiment: the walk is not
//! monotone enough for the order not to matter. Iterating each run to its
//! own fixpoint, with what earlier runs sent joined at once, gave another
//! solution than `solve`'s (`tests/generated/pipelines/g1073.ptx`: two
//! committed groups in flight out of a loop instead of three, as a group
//! list's length follows the rounds that reached it). The replay depends only on the
//! first pass's results, never on how far the first pass has got, so every
//! run gives the same solution. The debug build checks each one against
//! the sequential solver's, entries included (`Walker::solve_and_decide`),
//! and `tests::two_threads_solve_what_one_does` compiles every function of
//! the repository's kernels both ways.

use super::plan::Plan;
use super::solve::{FirstEntries, NotConverged, Solution, MAX_ROUNDS};
use super::state::State;
use super::walk::Walker;
use crate::in_flight::PipeState;
use cranelift_entity::SecondaryMap;
use fxhash::FxHashMap;
use ori_ir::{sized_map, Block};
use std::sync::mpsc;

/// What the first pass hands to the second thread.
enum Step {
    /// A block walked, with the entry it was walked with and the
    /// pipeline out of it.
    Walked(Block, State, PipeState),
    /// What a back edge brings to a block already walked.
    BackEdge(Block, State),
}

/// Blocks per batch the first pass sends (each send may wake the other
/// thread: a few microseconds, against about 2 µs a block walk).
const BATCH: usize = 32;

/// Batches the first pass may be ahead of the second thread: at most
/// about 200 KB of states waiting. Unbounded, a function whose later
/// rounds take much longer than its first pass (one large loop walked many
/// times) would have every block's entry waiting in the channel at once,
/// as much again as the solution's table of entries. When the first pass
/// waits here, it waits for what it would wait for anyway, the second
/// thread's results. (On the generated 1M matmul, where the two shares are
/// close, 116 and 125 ms, the bound changes neither the time nor the
/// peak.)
const AHEAD: usize = 8;

/// Why the second thread stopped before the end.
enum Stop {
    NotConverged(NotConverged),
    /// What runs sent on to runs not taken yet came to more states than
    /// [`Walker::most_held`] allows: the sequential solver runs instead.
    /// The replay keeps each such state apart until its run (joining them
    /// early would change the order `solve` joins in), and a function
    /// whose many runs all branch to one far block (a common exit) would
    /// have them pile up there, up to one per walk.
    HeldTooMuch,
}

/// The parts of the solution the second thread makes: the converged
/// entries, which blocks' entries changed after the first pass, and
/// the converged exit pipelines.
struct Trailed {
    entry: SecondaryMap<Block, Option<State>>,
    first: FirstEntries,
    outs: SecondaryMap<Block, Option<PipeState>>,
    quiet: SecondaryMap<Block, bool>,
}

/// Positions in reverse postorder where a closed run starts, ascending,
/// with the number of blocks last: at each, no edge goes from a block at
/// or past it to one before it.
fn closed_runs(rpo: &[Block], pos: &SecondaryMap<Block, u32>, walker: &Walker<'_>) -> Vec<usize> {
    let mut starts = vec![rpo.len()];
    let mut least = u32::MAX;
    for (k, &b) in rpo.iter().enumerate().rev() {
        for &s in walker.an.cfg.succs(b) {
            least = least.min(pos[s]);
        }
        if least as usize >= k {
            starts.push(k);
        }
    }
    starts.reverse();
    starts
}

impl Walker<'_> {
    /// The fixpoint on two threads (see the module's doc), for a function
    /// of at least `two_threads_from` instructions; `None` where the
    /// function is smaller, no thread starts, or the second thread held
    /// too much for later runs (then `solve` runs; in the last case
    /// `first_pass` is a fresh plan again).
    pub(super) fn solve_on_two_threads(
        &self,
        first_pass: &mut Plan,
    ) -> Option<Result<Solution, NotConverged>> {
        if self.f.insts.len() < self.two_threads_from {
            return None;
        }
        let rpo = self.an.cfg.rpo();
        let &start = rpo.first()?;
        let mut sol = self.room_for_solution();
        let parts = Trailed {
            entry: std::mem::take(&mut sol.entry),
            first: std::mem::replace(&mut sol.first, FirstEntries::none()),
            outs: std::mem::take(&mut sol.outs),
            quiet: std::mem::take(&mut sol.quiet),
        };
        let lane = self.lane();
        let (tx, rx) = mpsc::sync_channel::<Vec<Step>>(AHEAD);
        let trailed = std::thread::scope(|scope| {
            let second = std::thread::Builder::new()
                .name("ori-rounds".into())
                .spawn_scoped(scope, move || lane.trail(rx, parts))
                .ok()?;
            self.first_pass(start, first_pass, &mut sol, tx);
            Some(match second.join() {
                Ok(trailed) => trailed,
                Err(panic) => std::panic::resume_unwind(panic),
            })
        })?;
        match trailed {
            Ok(parts) => {
                sol.entry = parts.entry;
                sol.first = parts.first;
                sol.outs = parts.outs;
                sol.quiet = parts.quiet;
                Some(Ok(sol))
            }
            Err(Stop::NotConverged(e)) => Some(Err(e)),
            Err(Stop::HeldTooMuch) => {
                // The sequential solver starts over, deciding afresh.
                *first_pass = Plan::default();
                None
            }
        }
    }

    /// `solve`'s first round: every block in reverse postorder, from the
    /// join of what its forward edges bring, deciding into `plan`; each
    /// block's entry and each back edge's state sent on `tx`.
    fn first_pass(
        &self,
        start: Block,
        plan: &mut Plan,
        sol: &mut Solution,
        tx: mpsc::SyncSender<Vec<Step>>,
    ) {
        let mut pending: FxHashMap<Block, State> = FxHashMap::default();
        pending.insert(start, State::at_function_entry());
        let mut walked: SecondaryMap<Block, bool> = sized_map(self.f.blocks.len());
        let mut batch = Vec::with_capacity(2 * BATCH);
        let mut blocks_in_batch = 0;
        for &b in self.an.cfg.rpo() {
            // Every block in reverse postorder has a predecessor before it.
            let Some(entry) = pending.remove(&b) else {
                continue;
            };
            walked[b] = true;
            sol.first_visit[b] = plan.epoch();
            let out = self.transfer_block(b, entry.clone(), plan);
            batch.push(Step::Walked(b, entry, out.pipe.clone()));
            for &s in self.an.cfg.succs(b) {
                let carried = self.carried(b, s, &out);
                if walked[s] {
                    batch.push(Step::BackEdge(s, carried.into_owned()));
                } else if let Some(e) = pending.get_mut(&s) {
                    e.join(&carried);
                } else {
                    pending.insert(s, carried.into_owned());
                }
            }
            blocks_in_batch += 1;
            // A block's steps stay in one batch: the second thread takes a
            // run once it has its last block's back edges.
            if blocks_in_batch == BATCH {
                blocks_in_batch = 0;
                if tx.send(std::mem::take(&mut batch)).is_err() {
                    // The second thread stopped early (it gave the
                    // fixpoint back, or panicked): its join says why.
                    return;
                }
            }
        }
        let _ = tx.send(batch);
    }

    /// The second thread: the converged entries, from the first pass's
    /// steps on `rx` (see the module's doc).
    fn trail(self, rx: mpsc::Receiver<Vec<Step>>, parts: Trailed) -> Result<Trailed, Stop> {
        let rpo = self.an.cfg.rpo();
        let mut pos: SecondaryMap<Block, u32> = sized_map(self.f.blocks.len());
        for (k, &b) in rpo.iter().enumerate() {
            pos[b] = k as u32;
        }
        let runs = closed_runs(rpo, &pos, &self);
        let mut replay = Replay {
            parts,
            pos,
            dirty: sized_map(self.f.blocks.len()),
            later: FxHashMap::default(),
            held: 0,
            most_held: self.most_held.unwrap_or(self.f.blocks.len()),
            scratch: Plan::scratch(),
        };
        let mut received = 0;
        let mut all_in = false;
        let mut run = 0;
        while run + 1 < runs.len() {
            let (lo, hi) = (runs[run], runs[run + 1]);
            if received < hi && !all_in {
                // The first pass has not walked the whole run yet; once it
                // is done, every block it walked has come.
                match rx.recv() {
                    Ok(batch) => received += replay.take(batch),
                    Err(_) => all_in = true,
                }
                continue;
            }
            replay.run(&self, &rpo[lo..hi], hi)?;
            run += 1;
        }
        Ok(replay.parts)
    }
}

/// The second thread's state as it replays the later rounds run by run.
struct Replay {
    /// The solution's parts it makes.
    parts: Trailed,
    /// Each block's place in reverse postorder.
    pos: SecondaryMap<Block, u32>,
    /// Blocks whose entry grew since their last walk.
    dirty: SecondaryMap<Block, bool>,
    /// What earlier runs' walks sent to blocks of runs not taken yet, with
    /// the round of each walk, in the order made.
    later: FxHashMap<Block, Vec<(usize, State)>>,
    /// How many states `later` holds, and the most it may.
    held: usize,
    most_held: usize,
    scratch: Plan,
}

impl Replay {
    /// Take the first pass's `batch`; how many blocks it walked.
    fn take(&mut self, batch: Vec<Step>) -> usize {
        let p = &mut self.parts;
        let mut walked = 0;
        for step in batch {
            match step {
                Step::Walked(b, e, out) => {
                    p.entry[b] = Some(e);
                    p.outs[b] = Some(out);
                    walked += 1;
                }
                Step::BackEdge(s, st) => {
                    self.dirty[s] |= p.first.join_walked(&mut p.entry, s, &st);
                }
            }
        }
        walked
    }

    /// `solve`'s later rounds, as they go over the run `blocks` (which
    /// ends at position `end`): in round `r`, what earlier runs' walks of
    /// round `r` sent, then the run's blocks whose entry grew, in reverse
    /// postorder; until nothing in the run grows and nothing more was sent.
    fn run(&mut self, w: &Walker<'_>, blocks: &[Block], end: usize) -> Result<(), Stop> {
        // What came from earlier runs, by round; the last such round.
        let mut sent: FxHashMap<Block, Vec<(usize, State)>> = FxHashMap::default();
        let mut last_sent = 1;
        for &b in blocks {
            if let Some(mut from) = self.later.remove(&b) {
                self.held -= from.len();
                // Runs were taken in order, each through all its rounds: a
                // stable sort by round gives `solve`'s order.
                from.sort_by_key(|(round, _)| *round);
                last_sent = last_sent.max(from.last().map_or(1, |(r, _)| *r));
                from.reverse();
                sent.insert(b, from);
            }
        }
        let mut round = 1;
        loop {
            round += 1;
            if round > MAX_ROUNDS {
                return Err(Stop::NotConverged(NotConverged { rounds: MAX_ROUNDS }));
            }
            let p = &mut self.parts;
            for (&b, from) in sent.iter_mut() {
                while from.last().is_some_and(|(r, _)| *r == round) {
                    if let Some((_, st)) = from.pop() {
                        self.dirty[b] |= p.first.join_walked(&mut p.entry, b, &st);
                    }
                }
            }
            for &b in blocks {
                if std::mem::take(&mut self.dirty[b]) {
                    self.walk(w, b, end, round)?;
                }
            }
            let grew = blocks.iter().any(|&b| self.dirty[b]);
            if !grew && round >= last_sent {
                return Ok(());
            }
        }
    }

    /// Walk `b` in `round` and send its exit state on: joined into the
    /// entries of its run (which ends at position `end`), kept for later
    /// runs.
    fn walk(&mut self, w: &Walker<'_>, b: Block, end: usize, round: usize) -> Result<(), Stop> {
        let p = &mut self.parts;
        let Some(e) = p.entry[b].clone() else {
            return Ok(());
        };
        let (out, quiet) = w.walk_quietly(b, e, &mut self.scratch);
        p.quiet[b] = quiet;
        for &s in w.an.cfg.succs(b) {
            let carried = w.carried(b, s, &out);
            if (self.pos[s] as usize) < end {
                self.dirty[s] |= p.first.join_walked(&mut p.entry, s, &carried);
                continue;
            }
            let from = self.later.entry(s).or_default();
            from.push((round, carried.into_owned()));
            self.held += 1;
            if self.held > self.most_held {
                return Err(Stop::HeldTooMuch);
            }
        }
        p.outs[b] = Some(out.pipe);
        Ok(())
    }
}
