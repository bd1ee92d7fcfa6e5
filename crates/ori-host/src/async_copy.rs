//! `cp.async`: the non-bulk asynchronous copies from global to shared
//! memory, and their commit groups (PTX ISA 9.7.9.25).
//!
//! Every Triton matmul that does not use TMA fills its shared-memory ring
//! with `cp.async.cg.shared.global [dst], [src], 16, src_size;`, commits a
//! group per stage and waits with `cp.async.wait_group N` before the wgmma
//! that reads the stage. The copy is asynchronous, so it is modelled as
//! the hardware allows the worst case to be: the source is read when the
//! copy is issued, and the bytes land in shared memory only when a wait
//! retires the copy's group. A kernel that reads the destination before
//! waiting sees the old bytes here, as it may on the GPU.
//!
//! `src-size` (bytes actually read, the rest of `cp-size` zero-filled) is
//! how compilers mask the edge of a tile; the `ignore-src` predicate form
//! reads nothing and fills zeros.

use std::collections::VecDeque;

/// One copy: where it lands in shared memory, and the bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingCopy {
    /// Shared-memory address of the destination.
    pub dst: u64,
    /// The bytes to write: the first `len` (`cp-size`: 4, 8 or 16).
    pub data: [u8; 16],
    /// See `data`.
    pub len: u8,
    /// The line that issued it and the issuing CTA thread (the writer, for
    /// the sanitizer's proxy check: `cp.async` writes through the generic
    /// proxy).
    pub line: u32,
    /// See `line`.
    pub thread: u32,
}

impl PendingCopy {
    /// The bytes to write.
    pub fn bytes(&self) -> &[u8] {
        &self.data[..usize::from(self.len)]
    }
}

/// The copies a CTA has issued and not yet seen land.
#[derive(Clone, Debug, Default)]
pub struct AsyncCopies {
    open: Vec<PendingCopy>,
    committed: VecDeque<Vec<PendingCopy>>,
    /// Emptied group lists given back ([`AsyncCopies::recycle`]), reused
    /// as open groups so that a pipeline's copies reuse their memory.
    spare: Vec<Vec<PendingCopy>>,
}

impl AsyncCopies {
    /// Issue a copy into the open (uncommitted) group.
    pub fn issue(&mut self, c: PendingCopy) {
        self.open.push(c);
    }

    /// `cp.async.commit_group`: close the open group (an empty one too: the
    /// ISA counts empty groups, and Triton commits them at the tail of its
    /// prologue).
    pub fn commit(&mut self) {
        let next = self.spare.pop().unwrap_or_default();
        let g = std::mem::replace(&mut self.open, next);
        self.committed.push_back(g);
    }

    /// Give back a list [`AsyncCopies::wait`] returned, once its copies landed.
    pub fn recycle(&mut self, mut done: Vec<PendingCopy>) {
        if self.spare.len() < 8 {
            done.clear();
            self.spare.push(done);
        }
    }

    /// `cp.async.wait_group n`: the copies of every group but the `n` most
    /// recent, oldest first, for the caller to write.
    pub fn wait(&mut self, n: usize) -> Vec<PendingCopy> {
        let mut done = self.retire_oldest(n).unwrap_or_default();
        while let Some(g) = self.retire_oldest(n) {
            done.extend_from_slice(&g);
            self.recycle(g);
        }
        done
    }

    /// One step of `cp.async.wait_group n`: the oldest committed group,
    /// while more than `n` are committed (else `None`). Calling it until
    /// `None` lands the same copies in the same order as
    /// [`AsyncCopies::wait`], a group at a time, without gathering them
    /// into one list; give each group back with [`AsyncCopies::recycle`].
    pub fn retire_oldest(&mut self, n: usize) -> Option<Vec<PendingCopy>> {
        if self.committed.len() > n {
            self.committed.pop_front()
        } else {
            None
        }
    }

    /// Every copy, committed or not, that a thread `of` says issued (in
    /// issue order), taken out of its group (`cp.async.mbarrier.arrive`:
    /// those copies complete now). The groups stay, perhaps empty.
    pub fn take_threads(&mut self, of: impl Fn(u32) -> bool) -> Vec<PendingCopy> {
        let mut done = Vec::new();
        for g in self
            .committed
            .iter_mut()
            .chain(std::iter::once(&mut self.open))
        {
            g.retain(|c| {
                if of(c.thread) {
                    done.push(c.clone());
                    false
                } else {
                    true
                }
            });
        }
        done
    }

    /// `cp.async.wait_all`: commit, then wait for everything.
    pub fn wait_all(&mut self) -> Vec<PendingCopy> {
        self.commit();
        self.wait(0)
    }

    /// Copies issued or committed and not yet landed.
    pub fn pending(&self) -> usize {
        self.open.len() + self.committed.iter().map(Vec::len).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(dst: u64) -> PendingCopy {
        PendingCopy {
            dst,
            data: [dst as u8; 16],
            len: 4,
            line: 1,
            thread: 0,
        }
    }

    #[test]
    fn a_threads_copies_can_be_taken_from_every_group() {
        let mut a = AsyncCopies::default();
        let mut mine = c(0);
        mine.thread = 7;
        a.issue(mine.clone());
        a.issue(c(4));
        a.commit();
        mine.dst = 8;
        a.issue(mine);
        let got: Vec<u64> = a.take_threads(|t| t == 7).iter().map(|p| p.dst).collect();
        assert_eq!(got, vec![0, 8]);
        // The group keeps its count and its other copy.
        assert_eq!(a.pending(), 1);
        let got: Vec<u64> = a.wait(0).iter().map(|p| p.dst).collect();
        assert_eq!(got, vec![4]);
    }

    #[test]
    fn groups_land_oldest_first_and_keep_the_newest_n() {
        let mut a = AsyncCopies::default();
        a.issue(c(0));
        a.commit();
        a.commit(); // an empty group still counts
        a.issue(c(4));
        a.commit();
        a.issue(c(8)); // open: never retired by wait_group
        let got: Vec<u64> = a.wait(1).iter().map(|p| p.dst).collect();
        assert_eq!(got, vec![0]);
        assert_eq!(a.pending(), 2);
        let got: Vec<u64> = a.wait(0).iter().map(|p| p.dst).collect();
        assert_eq!(got, vec![4]);
        let got: Vec<u64> = a.wait_all().iter().map(|p| p.dst).collect();
        assert_eq!(got, vec![8]);
        assert_eq!(a.pending(), 0);
    }
}
