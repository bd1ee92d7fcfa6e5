//! The scheduler's order (see [`Schedule`]): the default runs each
//! warpgroup until it blocks, round robin; `Random` picks among the ready
//! warpgroups and preempts after a few steps, from a seed, so that an
//! order-dependent bug (a missing barrier whose effect depends on which
//! warp writes first) can show up in the outputs, and a seed that shows it
//! replays.

use super::Schedule;

/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): small, and the same
/// stream on every machine.
#[derive(Clone, Debug)]
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The order of one cluster's run.
pub(super) enum Order {
    RoundRobin,
    Random(Rng),
}

/// The most steps a warpgroup runs before a random schedule picks again.
const MAX_SLICE: u64 = 64;

impl Order {
    /// The order for the cluster of linear index `cluster`.
    pub(super) fn new(schedule: Schedule, cluster: u64) -> Order {
        match schedule {
            Schedule::Deterministic => Order::RoundRobin,
            Schedule::Random { seed } => {
                let mut r = Rng(seed ^ cluster.wrapping_mul(0xd1b5_4a32_d192_ed03));
                r.next();
                Order::Random(r)
            }
        }
    }

    /// Steps the next warpgroup may run before the scheduler picks again.
    pub(super) fn slice(&mut self) -> u64 {
        match self {
            Order::RoundRobin => u64::MAX,
            Order::Random(r) => 1 + r.below(MAX_SLICE),
        }
    }

    /// Which of `n` ready warpgroups runs (`None`: the round robin's own
    /// choice).
    pub(super) fn choose(&mut self, n: usize) -> Option<usize> {
        match self {
            Order::RoundRobin => None,
            Order::Random(r) => Some(r.below(n as u64) as usize),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_the_same_order_and_another_seed_another() {
        let draw = |seed| {
            let mut o = Order::new(Schedule::Random { seed }, 3);
            (0..16)
                .map(|_| (o.slice(), o.choose(4)))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        assert!(draw(7)
            .iter()
            .all(|(s, c)| (1..=MAX_SLICE).contains(s) && c.is_some_and(|c| c < 4)));
        let mut d = Order::new(Schedule::Deterministic, 0);
        assert_eq!((d.slice(), d.choose(4)), (u64::MAX, None));
    }
}
