//! The race detector's shadow of one CTA's shared memory: for each 4-byte
//! word, its last write of each byte and the reads since, each an epoch
//! (agent, clock) with its line and thread ([`crate::races`] keeps the
//! clocks and decides what is ordered).
//!
//! Most shared-memory traffic of a tensor-core kernel moves whole 16-byte
//! granules (`cp.async` and TMA copies, wgmma operand reads, vector loads
//! and stores), and after such an access the granule's four words hold the
//! same accesses. So a granule is kept as one word while its four words
//! agree ([`Granule::Uniform`]) and split into four only when an access
//! covers part of it: an access of a whole uniform granule then costs one
//! word's check and update instead of four, and the shadow is a quarter of
//! the size. The answers are those of a plain word-by-word shadow: the
//! same race (the first word, in address order, that has one) and the same
//! accesses kept.

use crate::races::{Access, Race, VClock};
use smallvec::SmallVec;

/// One access as a word's shadow keeps it: the [`Access`] with the bytes
/// of the word it touched (bit `k`: byte `k`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    agent: u16,
    mask: u8,
    clock: u32,
    line: u32,
    thread: u32,
}

impl Entry {
    fn new(a: Access, mask: u8) -> Entry {
        Entry {
            agent: a.agent,
            mask,
            clock: a.clock,
            line: a.line,
            thread: a.thread,
        }
    }

    fn access(&self) -> Access {
        Access {
            agent: self.agent,
            clock: self.clock,
            line: self.line,
            thread: self.thread,
        }
    }
}

/// A word's accesses: the last write of each byte, and the reads since
/// (room for a warpgroup's four warps without a heap allocation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Word {
    writes: SmallVec<[Entry; 1]>,
    reads: SmallVec<[Entry; 4]>,
}

impl Word {
    /// The first access here that conflicts with a `write` (else a read)
    /// of bytes `mask` by `now`'s agent, whose clock is `clock`: one by
    /// another agent that the clock does not cover.
    fn conflict(
        &self,
        write: bool,
        mask: u8,
        now: &Access,
        clock: &VClock,
    ) -> Option<(Access, bool)> {
        let hit = |e: &&Entry| {
            e.mask & mask != 0 && e.agent != now.agent && e.clock > clock.get(e.agent.into())
        };
        if let Some(w) = self.writes.iter().find(hit) {
            return Some((w.access(), true));
        }
        if !write {
            return None;
        }
        self.reads.iter().find(hit).map(|r| (r.access(), false))
    }

    /// [`Word::access`] of the whole word (mask `0xf`; every entry kept
    /// has a byte) with no race found yet, in the few steps it needs.
    #[inline(always)]
    fn access_whole(&mut self, at: u64, write: bool, now: Access, clock: &VClock) -> Option<Race> {
        let hit = |e: &&Entry| e.agent != now.agent && e.clock > clock.get(e.agent.into());
        let earlier = match self.writes.iter().find(hit) {
            Some(w) => Some((w.access(), true)),
            None if write => self.reads.iter().find(hit).map(|r| (r.access(), false)),
            None => None,
        };
        let entry = Entry::new(now, 0xf);
        if write {
            self.writes.clear();
            self.reads.clear();
            self.writes.push(entry);
        } else {
            match self.reads.iter_mut().find(|r| r.agent == now.agent) {
                Some(r) => *r = entry,
                None => self.reads.push(entry),
            }
        }
        earlier.map(|(earlier, earlier_write)| Race {
            addr: at,
            write,
            earlier,
            earlier_write,
        })
    }

    /// A read of the whole word at byte `at` by each of `nows` (with its
    /// agent's clock) in turn: [`Word::access`] of mask `0xf` (every entry
    /// kept has a byte) for each, in the few steps such reads need. Each
    /// race found goes to `found` with the index of its reader. Reads do
    /// not conflict with reads, so the checks come first and the keeping
    /// after; where the word's reads are those of the same readers in the
    /// same order (a warpgroup reading its operands again), each is
    /// replaced in place.
    /// `entries`: each reader's entry of mask `0xf` (the same for every
    /// word of a batch, made once). `clean`: a write epoch (agent, clock)
    /// none of the readers races with, found at an earlier word of the
    /// batch (the readers' clocks do not change within it): a word whose
    /// only write has that epoch needs no check, which is most words, as
    /// a warp's copies of one instruction share their epoch.
    #[inline(always)]
    fn read_all(
        &mut self,
        at: u64,
        (nows, entries): (&[(Access, &VClock)], &[Entry]),
        clean: &mut Option<(u16, u32)>,
        found: &mut Vec<(usize, Race)>,
    ) {
        let writes = self.writes.as_slice();
        let known_clean = matches!(writes, [w] if *clean == Some((w.agent, w.clock)));
        if !writes.is_empty() && !known_clean {
            let before = found.len();
            for (i, (now, clock)) in nows.iter().enumerate() {
                let hit = |e: &&Entry| e.agent != now.agent && e.clock > clock.get(e.agent.into());
                if let Some(w) = writes.iter().find(hit) {
                    let race = Race {
                        addr: at,
                        write: false,
                        earlier: w.access(),
                        earlier_write: true,
                    };
                    found.push((i, race));
                }
            }
            if let ([w], true) = (writes, found.len() == before) {
                *clean = Some((w.agent, w.clock));
            }
        }
        let reads = self.reads.as_mut_slice();
        if reads.len() == entries.len()
            && reads.iter().zip(entries).all(|(r, e)| r.agent == e.agent)
        {
            // A warpgroup's four readers: a fixed-size move, not a call.
            match (
                <&mut [Entry; 4]>::try_from(reads),
                <&[Entry; 4]>::try_from(entries),
            ) {
                (Ok(r4), Ok(e4)) => *r4 = *e4,
                _ => self.reads.copy_from_slice(entries),
            }
            return;
        }
        for entry in entries {
            match self.reads.iter_mut().find(|r| r.agent == entry.agent) {
                Some(r) => *r = *entry,
                None => self.reads.push(*entry),
            }
        }
    }

    /// Keep the access `now` of bytes `mask`.
    fn record(&mut self, write: bool, mask: u8, now: Access) {
        if write {
            if mask == 0xf {
                // Every earlier access of the word is overwritten.
                self.writes.clear();
                self.reads.clear();
            } else {
                for e in self.writes.iter_mut().chain(self.reads.iter_mut()) {
                    e.mask &= !mask;
                }
                self.writes.retain(|e| e.mask != 0);
                self.reads.retain(|e| e.mask != 0);
            }
            self.writes.push(Entry::new(now, mask));
        } else if let Some(r) = self
            .reads
            .iter_mut()
            .find(|r| r.agent == now.agent && r.mask & !mask == 0)
        {
            *r = Entry::new(now, mask);
        } else {
            self.reads.push(Entry::new(now, mask));
        }
    }

    /// Check then keep one access of bytes `mask` of the word at byte
    /// `at`: the race it makes, if any (`found`: one was already found at
    /// a lower word, and only the keeping is left).
    fn access(
        &mut self,
        at: u64,
        (write, mask): (bool, u8),
        now: Access,
        clock: &VClock,
        found: bool,
    ) -> Option<Race> {
        let race = match found {
            true => None,
            false => self
                .conflict(write, mask, &now, clock)
                .map(|(earlier, earlier_write)| Race {
                    addr: at,
                    write,
                    earlier,
                    earlier_write,
                }),
        };
        self.record(write, mask, now);
        race
    }
}

/// The bytes of the word at byte `at` that `[addr, end)` covers (bit `k`:
/// byte `at + k`); the two ranges overlap.
fn word_mask(at: u64, addr: u64, end: u64) -> u8 {
    let lo = addr.max(at) - at;
    let hi = end.min(at + 4) - at;
    ((1u8 << hi) - 1) & !((1u8 << lo) - 1)
}

/// The four words of a 16-byte granule: one word standing for all four
/// while they hold the same accesses, else each its own.
#[derive(Clone, Debug)]
enum Granule {
    Uniform(Word),
    Split(Box<[Word; 4]>),
}

impl Default for Granule {
    fn default() -> Granule {
        Granule::Uniform(Word::default())
    }
}

/// The shadow of one CTA's shared memory, grown as far as accesses reach.
#[derive(Clone, Debug, Default)]
pub struct Shadow {
    granules: Vec<Granule>,
}

impl Shadow {
    /// Whether nothing was ever accessed.
    pub fn is_empty(&self) -> bool {
        self.granules.is_empty()
    }

    /// `now` accesses the bytes `[addr, addr + len)` (`len` at least 1; a
    /// write or a read), its agent's clock being `clock`: the first race
    /// it makes, in address order, if any. The access is kept.
    #[inline]
    pub fn access(
        &mut self,
        (addr, len): (u64, u64),
        write: bool,
        now: Access,
        clock: &VClock,
    ) -> Option<Race> {
        if len == 16 && addr.is_multiple_of(16) {
            // One whole granule (a copy's, a vector access'), kept as one
            // word: that word's access.
            if let Some(Granule::Uniform(w)) = self.granules.get_mut((addr / 16) as usize) {
                return w.access_whole(addr, write, now, clock);
            }
        }
        self.access_by_granules((addr, len), write, now, clock)
    }

    /// [`Shadow::access`] of any bytes, granule by granule (the shadow
    /// grown to hold them): apart from the whole uniform granule, which
    /// stays inline in the caller, so that a copy's access does not pay
    /// for this one's frame.
    #[inline(never)]
    fn access_by_granules(
        &mut self,
        (addr, len): (u64, u64),
        write: bool,
        now: Access,
        clock: &VClock,
    ) -> Option<Race> {
        let end = addr + len;
        let (first, last) = ((addr / 16) as usize, ((end - 1) / 16) as usize);
        if self.granules.len() <= last {
            self.granules.resize(last + 1, Granule::default());
        }
        let mut found = None;
        for (k, g) in self.granules[first..=last].iter_mut().enumerate() {
            let base = (first + k) as u64 * 16;
            let whole = addr <= base && end >= base + 16;
            let race = match g {
                Granule::Uniform(w) if whole => {
                    w.access(base, (write, 0xf), now, clock, found.is_some())
                }
                _ => granule_by_words(g, base, (addr, end), (write, now, clock), found.is_some()),
            };
            found = found.or(race);
        }
        found
    }
}

impl Shadow {
    /// Each of `nows` (with its agent's clock) reads the 16-byte granule
    /// at `base` in turn: the race each makes, as [`Shadow::access`]
    /// answers them one by one.
    pub fn read_granule<const N: usize>(
        &mut self,
        base: u64,
        nows: [(Access, &VClock); N],
    ) -> [Option<Race>; N] {
        let k = (base / 16) as usize;
        if self.granules.len() <= k {
            self.granules.resize(k + 1, Granule::default());
        }
        match &mut self.granules[k] {
            Granule::Uniform(w) if base.is_multiple_of(16) => {
                nows.map(|(now, clock)| w.access(base, (false, 0xf), now, clock, false))
            }
            _ => nows.map(|(now, clock)| self.access((base, 16), false, now, clock)),
        }
    }
}

impl Shadow {
    /// Each of `nows` (with its agent's clock) reads each of the 16-byte
    /// granules at `bases` (multiples of 16, in increasing order): for
    /// each granule in turn, each reader in turn, as [`Shadow::access`]
    /// answers them one by one. Each race found goes to `found` with the
    /// index of its reader in `nows`.
    pub fn read_granules(
        &mut self,
        bases: &[u32],
        nows: &[(Access, &VClock)],
        found: &mut Vec<(usize, Race)>,
    ) {
        let Some(&last) = bases.last() else {
            return;
        };
        let k = (last / 16) as usize;
        if self.granules.len() <= k {
            self.granules.resize(k + 1, Granule::default());
        }
        let entries: SmallVec<[Entry; 4]> = nows.iter().map(|(n, _)| Entry::new(*n, 0xf)).collect();
        let mut clean = None;
        for base in bases.iter().map(|b| u64::from(*b)) {
            match &mut self.granules[(base / 16) as usize] {
                Granule::Uniform(w) if base.is_multiple_of(16) => {
                    w.read_all(base, (nows, &entries), &mut clean, found)
                }
                _ => {
                    for (i, (now, clock)) in nows.iter().enumerate() {
                        if let Some(r) = self.access((base, 16), false, *now, clock) {
                            found.push((i, r));
                        }
                    }
                }
            }
        }
    }
}

/// An access of the bytes `[addr, end)` of granule `g` at byte `base`,
/// word by word (splitting a uniform granule first); a write of the whole
/// granule leaves it uniform again.
fn granule_by_words(
    g: &mut Granule,
    base: u64,
    (addr, end): (u64, u64),
    (write, now, clock): (bool, Access, &VClock),
    mut found: bool,
) -> Option<Race> {
    if let Granule::Uniform(w) = g {
        let w = std::mem::take(w);
        *g = Granule::Split(Box::new([w.clone(), w.clone(), w.clone(), w]));
    }
    let Granule::Split(words) = g else {
        return None;
    };
    let mut race = None;
    for (i, w) in words.iter_mut().enumerate() {
        let at = base + 4 * i as u64;
        if at >= end || at + 4 <= addr {
            continue;
        }
        let r = w.access(at, (write, word_mask(at, addr, end)), now, clock, found);
        found |= r.is_some();
        race = race.or(r);
    }
    if write && addr <= base && end >= base + 16 {
        // Each word now holds this write alone.
        let [w, ..] = std::mem::take(&mut **words);
        *g = Granule::Uniform(w);
    }
    race
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain word-by-word shadow, what [`Shadow`] must answer as.
    fn by_words(
        words: &mut Vec<Word>,
        (addr, len): (u64, u64),
        write: bool,
        now: Access,
        clock: &VClock,
    ) -> Option<Race> {
        let end = addr + len;
        let (first, last) = ((addr / 4) as usize, ((end - 1) / 4) as usize);
        if words.len() <= last {
            words.resize(last + 1, Word::default());
        }
        let mut found = None;
        for (k, w) in words[first..=last].iter_mut().enumerate() {
            let at = (first + k) as u64 * 4;
            let r = w.access(
                at,
                (write, word_mask(at, addr, end)),
                now,
                clock,
                found.is_some(),
            );
            found = found.or(r);
        }
        found
    }

    /// [`Shadow::read_granules`] of the granules at `base` and `base + 16`
    /// by `nows` answers as `by_words` one reader and granule at a time.
    fn batch_as_words(
        shadow: &mut Shadow,
        words: &mut Vec<Word>,
        base: u64,
        nows: &[(Access, &VClock)],
    ) -> usize {
        let bases = [base as u32, base as u32 + 16];
        let mut want = Vec::new();
        for b in bases.map(u64::from) {
            for (i, (now, c)) in nows.iter().enumerate() {
                if let Some(r) = by_words(words, (b, 16), false, *now, c) {
                    want.push((i, r));
                }
            }
        }
        let mut got = Vec::new();
        shadow.read_granules(&bases, nows, &mut got);
        assert_eq!(got, want, "granules from {base}");
        got.len()
    }

    /// Random accesses of random sizes and alignments by four agents whose
    /// clocks advance and join at random: the granule shadow finds the
    /// same races as the word-by-word one.
    #[test]
    fn granules_answer_as_words_do() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut clocks: Vec<VClock> = (0..8)
            .map(|a| {
                let mut c = VClock::new(8);
                c.tick(a);
                c
            })
            .collect();
        let (mut shadow, mut words) = (Shadow::default(), Vec::new());
        let mut races = 0;
        for step in 0..20_000u32 {
            let agent = next(8) as usize;
            if next(8) == 0 {
                clocks[agent].tick(agent);
                let other = clocks[next(8) as usize].clone();
                clocks[agent].join(&other);
            }
            let len = [1, 2, 4, 8, 16, 32, 3][next(7) as usize];
            let addr = if next(2) == 0 {
                16 * next(16)
            } else {
                next(256)
            };
            let now = Access {
                agent: agent as u16,
                clock: clocks[agent].get(agent),
                line: step,
                thread: 32 * agent as u32,
            };
            let write = next(3) == 0;
            if !write && next(4) == 0 {
                // Four agents (those of one of two warpgroups) read a
                // granule together.
                let (base, group) = (16 * next(16), 4 * next(2) as usize);
                let nows: [(Access, &VClock); 4] = std::array::from_fn(|a| {
                    let a = group + a;
                    let now = Access {
                        agent: a as u16,
                        clock: clocks[a].get(a),
                        line: step,
                        thread: 32 * a as u32,
                    };
                    (now, &clocks[a])
                });
                if step % 2 == 1 {
                    // The batch form, on this granule and the next.
                    batch_as_words(&mut shadow, &mut words, base, &nows);
                    continue;
                }
                let want: Vec<_> = nows
                    .iter()
                    .map(|(now, c)| by_words(&mut words, (base, 16), false, *now, c))
                    .collect();
                let got = shadow.read_granule(base, nows).to_vec();
                assert_eq!(got, want, "step {step}: granule {base}");
                continue;
            }
            let want = by_words(&mut words, (addr, len), write, now, &clocks[agent]);
            let got = shadow.access((addr, len), write, now, &clocks[agent]);
            assert_eq!(got, want, "step {step}: {len} bytes at {addr}");
            races += u32::from(got.is_some());
        }
        // Both answers occur often.
        assert!((2_000..18_000).contains(&races), "{races} races");
    }

    /// A batch read skips the check of a word whose only write has the
    /// epoch of one found clean at an earlier word: not after a race (the
    /// next word with that epoch races too), and not for another agent's
    /// write of the same clock.
    #[test]
    fn a_batch_rechecks_what_it_has_not_seen_clean() {
        let n = 8;
        let clocks: Vec<VClock> = (0..n)
            .map(|a| {
                let mut c = VClock::new(n);
                c.tick(a);
                c
            })
            .collect();
        let mut covering = clocks[4].clone();
        covering.join(&clocks[0]);
        let (mut shadow, mut words) = (Shadow::default(), Vec::new());
        let write = |shadow: &mut Shadow, words: &mut Vec<Word>, agent: usize, base: u64| {
            let now = Access {
                agent: agent as u16,
                clock: clocks[agent].get(agent),
                line: 1,
                thread: 32 * agent as u32,
            };
            let want = by_words(words, (base, 16), true, now, &clocks[agent]);
            assert_eq!(shadow.access((base, 16), true, now, &clocks[agent]), want);
        };
        // Agent 0 writes granules 0 and 1, agent 1 (the same own clock)
        // granules 2 and 3.
        for (agent, base) in [(0, 0), (0, 16), (1, 32), (1, 48)] {
            write(&mut shadow, &mut words, agent, base);
        }
        let reader = |agent: usize, clock: &'static VClock| {
            let now = Access {
                agent: agent as u16,
                clock: clock.get(agent),
                line: 2,
                thread: 32 * agent as u32,
            };
            (now, clock)
        };
        let covering: &'static VClock = Box::leak(Box::new(covering));
        let plain: &'static VClock = Box::leak(Box::new(clocks[5].clone()));
        let mut batch = |base: u64, nows: &[(Access, &VClock)]| {
            batch_as_words(&mut shadow, &mut words, base, nows)
        };
        // Agent 4 has seen agent 0's writes, agent 5 has not: both
        // granules of agent 0 race for agent 5.
        assert_eq!(batch(0, &[reader(4, covering), reader(5, plain)]), 2);
        // Agent 4 alone: clean on agent 0's epoch at both (the second
        // skipped), then agent 1's write of the same clock races.
        assert_eq!(batch(0, &[reader(4, covering)]), 0);
        assert_eq!(batch(16, &[reader(4, covering)]), 1);
        assert_eq!(batch(32, &[reader(4, covering)]), 2);
    }
}
