//! The abstract state at a program point, its join, and the transfer of the
//! wgmma family's own instructions.
//!
//! Two halves, one per ISA rule family:
//!
//! * the *pipeline*: wgmmas issued but not committed (`open`), and the
//!   committed groups not known complete (`groups`, newest first). PTX ISA
//!   `wgmma.commit_group`: it "batches all prior wgmma.mma_async instructions
//!   ... not committed to any wgmma-group into the new wgmma-group" (an empty
//!   group when there are none); `wgmma.wait_group N`: it waits "until only
//!   N or fewer of the most recent wgmma-groups are pending and all the prior
//!   wgmma-groups committed by the executing threads are complete". So a
//!   wait keeps the N newest groups and retires the rest, and it never covers
//!   an uncommitted wgmma.
//! * the *fence marks*: per accumulator / A-fragment register, which
//!   accesses happened since the last fence, plus whether some path from the
//!   entry has not fenced yet (PTX ISA `wgmma.fence`, see `HazardKind::MissingFence`).
//!
//! The join is the union over paths. Groups are aligned from the newest, and
//! a group's position is read as a *lower bound* on its age: a wait retires
//! positions `>= N` for sure and keeps the rest, which stays sound when paths
//! of different depths meet, when groups beyond `cap` are merged into the
//! last position, and when a callee commits groups of its own (which only
//! makes the caller's older). Every component is finite and only grows under
//! join, so the fixpoint terminates.

use crate::bitset::BitSet;
use ori_ir::Inst;

/// Accesses to one register since the last fence (on some path).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Mark {
    /// A non-wgmma instruction wrote it.
    pub nw_write: Option<Inst>,
    /// A non-wgmma instruction read it.
    pub nw_read: Option<Inst>,
    /// Shapes (bit per interned shape id) of wgmmas that accessed it as accumulator.
    pub wg_acc_shapes: u128,
    /// One such wgmma.
    pub wg_acc: Option<Inst>,
    /// A wgmma that read it as an A fragment.
    pub wg_afrag: Option<Inst>,
}

fn join_opt(a: &mut Option<Inst>, b: Option<Inst>) -> bool {
    let n = match (*a, b) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) => Some(x.min(y)),
    };
    let ch = n != *a;
    *a = n;
    ch
}

impl Mark {
    fn join(&mut self, o: &Mark) -> bool {
        let mut ch = join_opt(&mut self.nw_write, o.nw_write);
        ch |= join_opt(&mut self.nw_read, o.nw_read);
        ch |= join_opt(&mut self.wg_acc, o.wg_acc);
        ch |= join_opt(&mut self.wg_afrag, o.wg_afrag);
        let s = self.wg_acc_shapes | o.wg_acc_shapes;
        ch |= s != self.wg_acc_shapes;
        self.wg_acc_shapes = s;
        ch
    }
}

/// The state at a program point.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct State {
    /// wgmmas (dense indices) issued since the last commit.
    pub open: BitSet,
    /// Committed groups not known complete; index 0 is the newest.
    pub groups: Vec<BitSet>,
    /// Some path from the entry reaches here without a fence.
    pub unfenced_entry: bool,
    /// Per tracked register (dense index), accesses since the last fence.
    pub marks: Vec<Mark>,
}

impl State {
    /// The state at function entry: nothing in flight, no fence yet.
    pub fn entry(n_wgmma: usize, n_regs: usize) -> State {
        State {
            open: BitSet::new(n_wgmma),
            groups: Vec::new(),
            unfenced_entry: true,
            marks: vec![Mark::default(); n_regs],
        }
    }

    /// Union with another path's state; returns whether `self` grew.
    pub fn join(&mut self, o: &State) -> bool {
        let mut ch = self.open.union_with(&o.open);
        ch |= join_groups(&mut self.groups, &o.groups);
        if o.unfenced_entry && !self.unfenced_entry {
            self.unfenced_entry = true;
            ch = true;
        }
        for (a, b) in self.marks.iter_mut().zip(&o.marks) {
            ch |= a.join(b);
        }
        ch
    }

    /// Every wgmma possibly in flight: open or in a pending group.
    pub fn in_flight(&self) -> BitSet {
        let mut s = self.open.clone();
        for g in &self.groups {
            s.union_with(g);
        }
        s
    }

    /// A fence: orders every prior register access before later wgmmas.
    pub fn fence(&mut self) {
        self.unfenced_entry = false;
        self.marks.iter_mut().for_each(|m| *m = Mark::default());
    }

    /// `commit_group`: the open wgmmas become the newest group. Groups past
    /// `cap` merge into the last position (ages there are `>= cap - 1`).
    pub fn commit(&mut self, cap: usize) {
        let mut fresh = self.open.clone();
        fresh.clear();
        let g = std::mem::replace(&mut self.open, fresh);
        self.groups.insert(0, g);
        if self.groups.len() > cap.max(1) {
            if let Some(last) = self.groups.pop() {
                if let Some(l) = self.groups.last_mut() {
                    l.union_with(&last);
                }
            }
        }
    }

    /// A commit that may or may not execute (a guarded one).
    pub fn maybe_commit(&mut self, cap: usize) {
        let mut c = self.clone();
        c.commit(cap);
        // Keep the uncommitted wgmmas open as well: they are open on one outcome.
        let open = self.open.clone();
        join_groups(&mut self.groups, &c.groups);
        self.open = open;
    }

    /// `wait_group n`: the `n` newest groups may stay pending, the rest are complete.
    pub fn wait(&mut self, n: usize) {
        self.groups.truncate(n);
    }
}

fn join_groups(a: &mut Vec<BitSet>, b: &[BitSet]) -> bool {
    let mut ch = false;
    for (k, g) in b.iter().enumerate() {
        if k < a.len() {
            ch |= a[k].union_with(g);
        } else {
            a.push(g.clone());
            ch = true;
        }
    }
    ch
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(n: usize, ks: &[usize]) -> BitSet {
        let mut s = BitSet::new(n);
        for k in ks {
            s.insert(*k);
        }
        s
    }

    #[test]
    fn wait_keeps_the_newest_groups() {
        let mut s = State::entry(4, 0);
        s.open.insert(0);
        s.commit(3);
        s.open.insert(1);
        s.commit(3);
        s.open.insert(2);
        s.wait(1);
        assert_eq!(s.groups, vec![set(4, &[1])]);
        assert!(s.in_flight().contains(2), "uncommitted stays in flight");
        s.wait(0);
        assert!(!s.in_flight().contains(1));
        assert!(s.in_flight().contains(2));
    }

    #[test]
    fn capped_groups_merge_into_the_oldest_position() {
        let mut s = State::entry(4, 0);
        for k in 0..3 {
            s.open.insert(k);
            s.commit(2);
        }
        assert_eq!(s.groups, vec![set(4, &[2]), set(4, &[0, 1])]);
        s.wait(1);
        assert_eq!(s.groups, vec![set(4, &[2])]);
    }

    #[test]
    fn join_aligns_groups_from_the_newest() {
        let mut a = State::entry(4, 0);
        a.open.insert(0);
        a.commit(4);
        let mut b = State::entry(4, 0);
        b.open.insert(1);
        b.commit(4);
        b.open.insert(2);
        b.commit(4);
        assert!(a.join(&b));
        assert_eq!(a.groups, vec![set(4, &[0, 2]), set(4, &[1])]);
        assert!(!a.join(&b));
    }

    #[test]
    fn guarded_commit_joins_both_outcomes() {
        let mut s = State::entry(2, 0);
        s.open.insert(0);
        s.maybe_commit(4);
        assert!(s.open.contains(0));
        assert_eq!(s.groups, vec![set(2, &[0])]);
    }
}
