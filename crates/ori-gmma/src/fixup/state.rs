//! The walk state of phase 87: a product of join-semilattices.
//!
//! The pipeline part (`PipeState`, phase 85's lattice) says which sets are
//! in flight; the rest is what ptxas tracks beside it to decide arrives and
//! waits. Each field's join is one of: union of sets (may on some path),
//! or of flags (`or`), intersection of flags (`and`: must on every path),
//! first-wins (the wgmma a message names, which no decision depends on),
//! a multiset maximum (wgmma per set in this block), and a flat lattice
//! (one shape per register, 0 = paths disagree). Every field is finite
//! over a function (sets, registers and instructions of the function,
//! ages capped), so the fixpoint exists; `solve` reports an internal error
//! when it is not reached.

use super::reg_set::RegSet;
use crate::in_flight::PipeState;
use ori_ir::{AccumSet, Block, Inst, InstData, VReg};
use smallvec::SmallVec;

/// Walk state at a program point.
///
/// The solver keeps one per block entry, so the lists most states leave
/// empty or short (A fragments, shapes, rewritten registers, copies) keep
/// two entries inline, not eight: 488 bytes a state instead of 616, with
/// no more instructions retired on the Triton and DeepGEMM kernels.
#[derive(Default, PartialEq, Eq, Debug)]
pub(super) struct State {
    pub(super) pipe: PipeState,
    /// Registers accessed by non-wgmma instructions since the last arrive.
    pub(super) touched: RegSet,
    /// No arrive (fence) seen yet on some path.
    pub(super) no_arrive: bool,
    /// No arrive since the start of this ptxas block on some path (what an
    /// empty group's dummy wgmma asks; R-arrive-kept does not apply).
    pub(super) block_no_arrive: bool,
    /// The wgmma that last wrote each in-flight set (for messages).
    pub(super) last_wgmma: Option<Inst>,
    /// A partial `wait_group N > 0` left committed groups in flight.
    pub(super) partial_wait: bool,
    /// Sets in flight on some incoming paths and retired on others.
    pub(super) mixed: SmallVec<[AccumSet; 4]>,
    /// Sets written by a group a wait retired, while others stay in flight.
    pub(super) retired: SmallVec<[AccumSet; 4]>,
    /// A wgmma since the last commit or wait, in this ptxas block.
    pub(super) block_wgmma: bool,
    /// An arrive after the last plain instruction, in this ptxas block.
    pub(super) fresh_arrive: bool,
    /// Destination sets of the wgmma of the open stage, one entry per wgmma,
    /// in this ptxas block.
    pub(super) block_issues: SmallVec<[AccumSet; 8]>,
    /// A-fragment registers of wgmmas that may be in flight (until a wait
    /// retires everything).
    /// With the number of commits since the wgmma that reads each (capped),
    /// so that a wait retiring that group releases it (`heldout5_15`:
    /// double-buffered fragments under `wait_group 1`).
    pub(super) a_frags: SmallVec<[(VReg, u32); 2]>,
    /// Accumulator registers read by non-wgmma instructions since the last
    /// arrive (the ISA orders them before a later wgmma; ptxas does not).
    pub(super) read_touched: RegSet,
    /// The last wait on some path here was in divergent code.
    pub(super) divergent_wait: bool,
    /// A wgmma issued since the last arrive, on some path.
    pub(super) wgmma_since_arrive: bool,
    /// A `wgmma.wait_group` of the user's ran on some path from the entry.
    pub(super) user_waited: bool,
    /// Accumulator sets wgmma wrote since the last arrive.
    pub(super) wgmma_sets_since_arrive: SmallVec<[AccumSet; 4]>,
    /// Accumulators rewritten in place (with a wait) since the last user
    /// commit, and taken by a wgmma since.
    pub(super) rmw_regs: SmallVec<[VReg; 2]>,
    /// Committed groups that came into the header of a loop that commits in
    /// flight: ptxas cannot count how old they are, so only a `wait_group 0`
    /// retires them (`heldout5_20`: a store of such a set after `wait_group
    /// 1` is C7514). A loop that commits nothing keeps their age.
    pub(super) sticky: SmallVec<[AccumSet; 4]>,
    /// Live copies `(dst, src)` made by `mov dst, src` of an accumulator in
    /// flight. ptxas propagates such copies before phase 87 (a copy between
    /// the last wgmma and the commit, stored after the wait, compiles clean:
    /// `heldout_14`), so the copy is no read; its uses are.
    pub(super) aliases: SmallVec<[(VReg, VReg); 2]>,
    /// A fence in divergent code arrived on some path here: an arrive injected
    /// for the other paths depends on divergent control flow (C7520).
    pub(super) divergent_fence: bool,
    /// The block of the last arrive (fence or injected), where every path
    /// agrees (R-arrive-kept).
    pub(super) arrive_block: ArriveAt,
    /// Shape (`m << 20 | n << 8 | k`) of the wgmma that last used each
    /// accumulator register since the last arrive; 0 where paths disagree.
    /// Sorted by register (looked up by binary search: a wgmma of a
    /// 256-wide tile has 128 accumulator registers, each looked up here).
    pub(super) shapes: SmallVec<[(VReg, u32); 2]>,
    /// A `wgmma.wait_group` ran on some path from the entry (never
    /// forgotten round a loop, unlike `user_waited`).
    pub(super) seen_wait: bool,
    /// R-unwaited-sets-in-flight: a wgmma was issued with no
    /// `wgmma.wait_group` on any path before it, and nothing has waited
    /// since: every register of every accumulator set counts as in flight,
    /// but those in `unwaited_cleared`.
    pub(super) unwaited: bool,
    /// Set registers written since that wgmma (their new values are not
    /// in flight).
    pub(super) unwaited_cleared: RegSet,
}

/// Field by field, each list copied as one `memcpy` (`SmallVec`'s own
/// `clone` copies element by element; the fixpoint clones a state at
/// every block it visits, 100,000 times on the generated 1M matmul).
impl Clone for State {
    fn clone(&self) -> State {
        State {
            pipe: self.pipe.clone(),
            touched: self.touched.clone(),
            no_arrive: self.no_arrive,
            block_no_arrive: self.block_no_arrive,
            last_wgmma: self.last_wgmma,
            partial_wait: self.partial_wait,
            mixed: SmallVec::from_slice(&self.mixed),
            retired: SmallVec::from_slice(&self.retired),
            block_wgmma: self.block_wgmma,
            fresh_arrive: self.fresh_arrive,
            block_issues: SmallVec::from_slice(&self.block_issues),
            a_frags: SmallVec::from_slice(&self.a_frags),
            read_touched: self.read_touched.clone(),
            divergent_wait: self.divergent_wait,
            wgmma_since_arrive: self.wgmma_since_arrive,
            user_waited: self.user_waited,
            wgmma_sets_since_arrive: SmallVec::from_slice(&self.wgmma_sets_since_arrive),
            rmw_regs: SmallVec::from_slice(&self.rmw_regs),
            sticky: SmallVec::from_slice(&self.sticky),
            aliases: SmallVec::from_slice(&self.aliases),
            divergent_fence: self.divergent_fence,
            arrive_block: self.arrive_block,
            shapes: SmallVec::from_slice(&self.shapes),
            seen_wait: self.seen_wait,
            unwaited: self.unwaited,
            unwaited_cleared: self.unwaited_cleared.clone(),
        }
    }
}

/// Where the last arrive was, as a flat lattice over the function's blocks.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(super) enum ArriveAt {
    /// No path brought an arrive yet.
    #[default]
    Unset,
    /// Every path's last arrive was in this block.
    At(Block),
    /// Paths disagree.
    Mixed,
}

impl ArriveAt {
    /// `self ⊔ o`; returns whether `self` changed.
    fn join(&mut self, o: ArriveAt) -> bool {
        let new = match (*self, o) {
            (x, ArriveAt::Unset) => x,
            (ArriveAt::Unset, y) => y,
            (ArriveAt::At(a), ArriveAt::At(b)) if a == b => ArriveAt::At(a),
            _ => ArriveAt::Mixed,
        };
        std::mem::replace(self, new) != new
    }
}

/// A wgmma's shape as one number (`m << 20 | n << 8 | k`), 0 if unknown.
pub(super) fn wgmma_shape(d: &InstData) -> u32 {
    d.wgmma_form()
        .map(|w| (w.m << 20) | (w.n << 8) | w.k)
        .unwrap_or(0)
}

/// Add `src` to `dst`; returns whether `dst` grew.
/// The shape `shapes` (sorted by register) records for `r`.
pub(super) fn shape_of(shapes: &[(VReg, u32)], r: VReg) -> Option<u32> {
    shapes
        .binary_search_by_key(&r, |e| e.0)
        .ok()
        .map(|k| shapes[k].1)
}

/// Record shape `s` for `r` in `shapes`, kept sorted by register.
pub(super) fn set_shape(shapes: &mut SmallVec<[(VReg, u32); 2]>, r: VReg, s: u32) {
    match shapes.binary_search_by_key(&r, |e| e.0) {
        Ok(k) => shapes[k].1 = s,
        Err(k) => shapes.insert(k, (r, s)),
    }
}

pub(super) fn add_all<A: smallvec::Array>(
    dst: &mut SmallVec<A>,
    src: impl IntoIterator<Item = A::Item>,
) -> bool
where
    A::Item: PartialEq,
{
    let mut ch = false;
    for s in src {
        if !dst.contains(&s) {
            dst.push(s);
            ch = true;
        }
    }
    ch
}

/// `dst |= src`; returns whether `dst` changed.
fn or_into(dst: &mut bool, src: bool) -> bool {
    let ch = src && !*dst;
    *dst |= src;
    ch
}

/// `dst &= src`; returns whether `dst` changed.
fn and_into(dst: &mut bool, src: bool) -> bool {
    let ch = *dst && !src;
    *dst &= src;
    ch
}

impl State {
    /// The state at the function's entry: no arrive seen yet.
    pub(super) fn at_function_entry() -> State {
        State {
            no_arrive: true,
            block_no_arrive: true,
            ..State::default()
        }
    }

    /// A wait covered everything: nothing is in flight any more.
    pub(super) fn retire_all(&mut self) {
        self.pipe = PipeState::default();
        self.aliases.clear();
        self.partial_wait = false;
        self.mixed.clear();
        self.a_frags.clear();
        self.end_unwaited();
    }

    /// A wait for the committed groups only (R-read-chained-committed): the
    /// open stage stays in flight.
    pub(super) fn retire_committed(&mut self) {
        self.pipe.groups.clear();
        self.partial_wait = false;
        let open = &self.pipe.open;
        self.mixed.retain(|s| open.contains(s));
        self.end_unwaited();
    }

    /// A wait of any level ends R-unwaited-sets-in-flight.
    pub(super) fn end_unwaited(&mut self) {
        self.unwaited = false;
        self.unwaited_cleared.clear();
    }

    /// Join of R-unwaited-sets-in-flight's registers: in flight on some
    /// path (a register stays cleared only where every path cleared it).
    fn join_unwaited(&mut self, o: &State) -> bool {
        match (self.unwaited, o.unwaited) {
            (false, true) => {
                self.unwaited = true;
                self.unwaited_cleared = o.unwaited_cleared.clone();
                true
            }
            (true, true) => {
                let before = self.unwaited_cleared.len();
                self.unwaited_cleared
                    .retain(|r| o.unwaited_cleared.contains(r));
                before != self.unwaited_cleared.len()
            }
            _ => false,
        }
    }

    pub(super) fn join(&mut self, o: &State) -> bool {
        let (mine, theirs) = (self.pipe.all(), o.pipe.all());
        let differ = mine
            .iter()
            .filter(|s| !theirs.contains(s))
            .chain(theirs.iter().filter(|s| !mine.contains(s)))
            .copied()
            .collect::<SmallVec<[AccumSet; 4]>>();
        let mut ch = add_all(&mut self.mixed, differ);
        ch |= add_all(&mut self.mixed, o.mixed.iter().copied());
        ch |= add_all(&mut self.retired, o.retired.iter().copied());
        ch |= self.pipe.join(&o.pipe);
        for r in o.touched.iter() {
            ch |= self.touched.insert(*r);
        }
        ch |= or_into(&mut self.no_arrive, o.no_arrive);
        ch |= or_into(&mut self.block_no_arrive, o.block_no_arrive);
        ch |= add_all(&mut self.aliases, o.aliases.iter().copied());
        ch |= add_all(
            &mut self.wgmma_sets_since_arrive,
            o.wgmma_sets_since_arrive.iter().copied(),
        );
        ch |= add_all(&mut self.sticky, o.sticky.iter().copied());
        ch |= add_all(&mut self.rmw_regs, o.rmw_regs.iter().copied());
        ch |= or_into(&mut self.user_waited, o.user_waited);
        ch |= or_into(&mut self.seen_wait, o.seen_wait);
        ch |= self.join_unwaited(o);
        ch |= or_into(&mut self.wgmma_since_arrive, o.wgmma_since_arrive);
        ch |= or_into(&mut self.divergent_wait, o.divergent_wait);
        ch |= or_into(&mut self.divergent_fence, o.divergent_fence);
        ch |= self.arrive_block.join(o.arrive_block);
        ch |= or_into(&mut self.partial_wait, o.partial_wait);
        if self.last_wgmma.is_none() && o.last_wgmma.is_some() {
            self.last_wgmma = o.last_wgmma;
        }
        ch |= and_into(&mut self.block_wgmma, o.block_wgmma);
        ch |= and_into(&mut self.fresh_arrive, o.fresh_arrive);
        for r in o.read_touched.iter() {
            ch |= self.read_touched.insert(*r);
        }
        for &(r, s) in &o.shapes {
            match self.shapes.binary_search_by_key(&r, |e| e.0) {
                Ok(k) if self.shapes[k].1 != s && self.shapes[k].1 != 0 => {
                    self.shapes[k].1 = 0;
                    ch = true;
                }
                Ok(_) => {}
                Err(k) => {
                    self.shapes.insert(k, (r, s));
                    ch = true;
                }
            }
        }
        ch |= add_all(&mut self.a_frags, o.a_frags.iter().copied());
        for s in &o.block_issues {
            let (mine, theirs) = (
                self.block_issues.iter().filter(|x| *x == s).count(),
                o.block_issues.iter().filter(|x| *x == s).count(),
            );
            if theirs > mine {
                self.block_issues.push(*s);
                ch = true;
            }
        }
        self.canonicalize();
        ch
    }

    /// The lists that are sets (or a multiset), sorted: a block's entry
    /// then does not depend on the order its paths were joined in.
    pub(super) fn canonicalize(&mut self) {
        self.mixed.sort_unstable();
        self.retired.sort_unstable();
        self.block_issues.sort_unstable();
        self.a_frags.sort_unstable();
        self.wgmma_sets_since_arrive.sort_unstable();
        self.rmw_regs.sort_unstable();
        self.sticky.sort_unstable();
        self.aliases.sort_unstable();
    }
}
