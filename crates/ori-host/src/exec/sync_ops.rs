//! Synchronization and the sanitizer's memory checks: CTA barriers (an
//! arrival the scheduler counts), the `mbarrier` family, and the proxy and
//! TMA-readiness checks every shared-memory access goes through.

use super::*;

impl Machine<'_> {
    /// `bar{.cta}.sync|arrive a{, b}` and `barrier{.cta}.sync{.aligned}|arrive`:
    /// an arrival the scheduler in `run_cta` counts (see [`crate::barriers`]).
    /// `bar.warp.sync` passes; `barrier.cluster` is the cluster's (see
    /// [`Machine::cluster_barrier`]).
    pub(super) fn barrier(&mut self, d: &InstData, act: &[bool]) -> Res<Flow> {
        let mods: Vec<&str> = d.mods.iter().map(|m| &**m).collect();
        if mods.first() == Some(&"warp") {
            return Ok(Flow::Next);
        }
        if !act.iter().any(|a| *a) {
            // Guarded off for every thread: not executed.
            return Ok(Flow::Next);
        }
        if mods.first() == Some(&"cluster") {
            return self.cluster_barrier(d, act);
        }
        let wait = if mods.contains(&"sync") {
            true
        } else if mods.contains(&"arrive") {
            false
        } else {
            return Err(Fault::Unsupported(format!(
                "{} is not supported by the host backend",
                d.mnemonic()
            )));
        };
        let uniform = |k: usize| -> Res<Option<u32>> {
            let Some(o) = d.slots.get(k).map(|s| &s.op) else {
                return Ok(None);
            };
            let mut v = None;
            for t in (0..WARPGROUP).filter(|t| act[*t]) {
                let x = self.value(t, o)? as u32;
                if v.is_some_and(|y| y != x) {
                    return Err(fault!(
                        "{}: operand {} differs between threads",
                        d.mnemonic(),
                        k + 1
                    ));
                }
                v = Some(x);
            }
            Ok(v)
        };
        let id = uniform(0)?.unwrap_or(0);
        let count = uniform(1)?;
        let warps = (0..WARPGROUP / 32)
            .filter(|w| act[w * 32..w * 32 + 32].iter().any(|a| *a))
            .fold(0u32, |m, w| m | 1 << w);
        Ok(Flow::Barrier(Arrival {
            id,
            count,
            threads: 32 * warps.count_ones(),
            wait,
            warps,
        }))
    }

    /// The `mbarrier` family (see [`crate::mbarrier`]), for each active
    /// thread: `init`, `inval`, `expect_tx`, `complete_tx`, `arrive`
    /// (`.expect_tx`, a count, `arrive_drop`), `try_wait` / `test_wait`
    /// (`.parity` or a state token). A wait that fails yields. `arrive`,
    /// `expect_tx` and `complete_tx` reach a peer CTA's mbarrier through a
    /// shared::cluster address (see [`cluster`]); the others take the
    /// running CTA's only.
    pub(super) fn mbarrier_op(&mut self, d: &InstData, act: &[bool]) -> Res<Flow> {
        let what = d.mods.first().map_or("", |m| &**m);
        let mut incomplete = false;
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            let addr = |m: &Self, k: usize| -> Res<u64> { Ok(m.address(t, op(d, k)?)?.1) };
            match what {
                "init" => {
                    let a = self.local_mbarrier(addr(self, 0)?, "mbarrier.init")?;
                    let n = self.value(t, op(d, 1)?)?;
                    self.mbarriers.init(a, n as u32)?;
                }
                "inval" => {
                    let a = self.local_mbarrier(addr(self, 0)?, "mbarrier.inval")?;
                    self.mbarriers.inval(a);
                }
                "expect_tx" | "complete_tx" => {
                    let (a, n) = (addr(self, 0)?, self.value(t, op(d, 1)?)? as i64);
                    if what == "expect_tx" {
                        self.mbarrier_at(a, |m, a| Ok(m.expect_tx(a, n)?))?;
                    } else {
                        self.race_mbarrier_release(t, a)?;
                        self.mbarrier_at(a, |m, a| Ok(m.complete_tx(a, n)?))?;
                    }
                }
                "arrive" | "arrive_drop" => {
                    let a = addr(self, 1)?;
                    let mut count = 1;
                    let mut tx = None;
                    if d.has_mod("expect_tx") {
                        tx = Some(self.value(t, op(d, 2)?)? as i64);
                    } else if d.slots.len() > 2 {
                        count = self.value(t, op(d, 2)?)? as u32;
                    }
                    let drop = what == "arrive_drop";
                    self.race_mbarrier_release(t, a)?;
                    let token = self.mbarrier_at(a, |m, a| {
                        if let Some(n) = tx {
                            m.expect_tx(a, n)?;
                        }
                        Ok(m.arrive(a, count, drop)?)
                    })?;
                    let dst = op(d, 0)?.clone();
                    self.set(t, &dst, token, 64)?;
                }
                "try_wait" | "test_wait" => {
                    let a = self.local_mbarrier(addr(self, 1)?, d.mnemonic().as_str())?;
                    let done = self.mbarrier_wait(t, d, a)?;
                    incomplete |= !done;
                    let dst = op(d, 0)?.clone();
                    self.set(t, &dst, u64::from(done), 1)?;
                }
                _ => {
                    return Err(Fault::Unsupported(format!(
                        "{} is not supported by the host backend",
                        d.mnemonic()
                    )))
                }
            }
        }
        Ok(if incomplete { Flow::Yield } else { Flow::Next })
    }

    /// Lane `t`'s `try_wait`/`test_wait` (`.parity` or a state token) on
    /// the running CTA's mbarrier at offset `a`: whether its phase
    /// completed. A parity wait phases behind is reported; a wait that
    /// succeeds is what the TMA check and the race detector see.
    fn mbarrier_wait(&mut self, t: usize, d: &InstData, a: u64) -> Res<bool> {
        let x = self.value(t, op(d, 2)?)?;
        let completed = self.mbarriers.phase(a)?;
        let done = if d.has_mod("parity") {
            if let Some(message) = parity_aliased(a, completed, &self.wg.seen) {
                self.report(hazards::Finding {
                    kind: HazardKind::ParityAliased,
                    other_line: 0,
                    lane: t,
                    other_thread: None,
                    addr: Some(a),
                    message,
                })?;
            }
            self.mbarriers.parity_done(a, x)?
        } else {
            self.mbarriers.token_done(a, x)?
        };
        if done {
            let e = self.wg.seen.entry(a).or_insert(0);
            *e = (*e).max(completed);
            self.race_mbarrier_acquire(t, a, completed);
        } else {
            self.wg.waits_on = Some(a);
        }
        Ok(done)
    }

    /// Bring the proxy tracker's count of ordering events (CTA barriers and
    /// mbarrier phases completed) up to date.
    pub(super) fn sync_proxy_order(&mut self) {
        self.proxy.barriers = self.cta_barriers + self.mbarriers.completed;
    }

    /// Thread `t` of the running warpgroup wrote shared memory through the
    /// generic proxy.
    pub(super) fn note_generic_write(&mut self, t: usize, addr: u64, len: usize) {
        let addr = match self.locate(addr) {
            Ok((None, a)) => a,
            Ok((Some(r), a)) => return self.on_cta(r, |m| m.note_generic_write(t, a, len)),
            // Not shared memory (the access itself said so).
            Err(_) => return,
        };
        self.fills.overwritten(addr, len);
        self.sync_proxy_order();
        let thread = (self.wg.index * WARPGROUP + t) as u32;
        self.proxy
            .generic_write(addr, len, self.line, thread, false);
    }
}
