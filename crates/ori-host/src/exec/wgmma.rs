//! `wgmma.mma_async` as the GPU runs it: the result computed at issue
//! (`wgmma_math`), pending in its group until a wait retires it, chained
//! through later wgmmas on the same accumulators.

use super::operand_cache::OperandKey;
use super::*;

impl Machine<'_> {
    /// Issue a wgmma: compute its result now, make it pending in the open group.
    pub(super) fn mma(&mut self, d: &InstData) -> Res<()> {
        if self.wg.live < WARPGROUP {
            return Err(fault!(
                "wgmma.mma_async needs the 128 threads of a warpgroup; warpgroup {} of this CTA has {}",
                self.wg.index, self.wg.live
            ));
        }
        let w = d
            .wgmma_operands()
            .ok_or("a wgmma.mma_async whose operands do not fit its form")?;
        let form = w.form;
        let dregs = registers(w.d, "a wgmma")?;
        let a_regs = match w.a {
            WgmmaA::Fragment(frag) => Some(registers(frag, "a wgmma")?),
            WgmmaA::Descriptor(_) => None,
        };
        self.inputs_not_in_flight(d)?;
        let uniform = |op: &Operand, what: &str| self.uniform(op, what);
        let scale_d = uniform(w.scale_d, "scale-d")? & 1 == 1;
        let b_desc = uniform(w.b_desc, "the B descriptor")?;
        // C: a chain's previous values as they are, else gathered.
        let gathered;
        let c: &[u32] = match chained(&self.wg.committed, &self.wg.open, &dregs) {
            Some(values) => values,
            None => {
                gathered = self.accumulators_before(&dregs);
                &gathered
            }
        };
        let a_vals: Vec<u32>;
        let a = match &a_regs {
            Some(ar) => {
                a_vals = (0..WARPGROUP)
                    .flat_map(|t| ar.iter().map(move |r| (t, *r)))
                    .map(|(t, r)| self.wg.regs.get(t, r) as u32)
                    .collect();
                AOperand::Regs(&a_vals, ar.len())
            }
            None => match w.a {
                WgmmaA::Descriptor(desc) => AOperand::Desc(uniform(desc, "the A descriptor")?),
                WgmmaA::Fragment(_) => unreachable!("a fragment has its registers above"),
            },
        };
        let mma = Mma {
            form,
            a,
            b_desc,
            scale_d,
            negate_a: w.negate_a(),
            negate_b: w.negate_b(),
            trans_a: w.transpose_a(),
            trans_b: w.transpose_b(),
        };
        let checked = ProxyChecked {
            shared: &self.shared,
            proxy: &self.proxy,
            found: std::cell::Cell::new(None),
            fills: &self.fills,
            seen: &self.wg.seen,
            unready: std::cell::Cell::new(None),
            read: self.races.as_ref().map(|_| Default::default()),
        };
        let version = self.shared.version();
        let cache = (&mut self.wg.operands, &mut self.wg.spare_values);
        let values = compute_cached(cache, version, &mma, c, &checked)?;
        let (unready, found) = (checked.unready.get(), checked.found.get());
        let mut read = checked.read.map(|r| r.into_inner()).unwrap_or_default();
        self.sanitizer_findings(unready, found)?;
        in_order_once(&mut read);
        self.race_wgmma_reads(&read)?;
        self.make_pending(d.line, dregs, values, read)
    }

    /// The wgmma of `line` writes `values` into the accumulators `dregs`
    /// when a wait retires it: they are in flight until then, and it is
    /// pending in the open group (with the shared-memory granules it read).
    fn make_pending(
        &mut self,
        line: u32,
        dregs: Vec<VReg>,
        values: Vec<u32>,
        reads: Vec<u32>,
    ) -> Res<()> {
        let mut unique = dregs.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() != dregs.len() {
            return Err("a register appears twice among the accumulators".into());
        }
        for r in &dregs {
            self.wg.in_flight.insert(*r, line);
        }
        self.wg.open.push(PendingMma {
            span: register_span(&dregs),
            regs: dregs,
            values,
            line,
            reads,
        });
        self.stats.wgmma += 1;
        Ok(())
    }

    /// Inputs must not be in flight; the accumulators may (chaining).
    fn inputs_not_in_flight(&self, d: &InstData) -> Res<()> {
        for op in d.slots.iter().skip(1).map(|s| &s.op) {
            let mut bad = None;
            op.for_each_reg(&mut |r| {
                if self.wg.in_flight.contains(&r) {
                    bad = Some(r);
                }
            });
            if let Some(r) = bad {
                return Err(fault!(
                    "wgmma reads {} while the wgmma of line {} that writes it is in flight",
                    self.name(r),
                    self.wg.in_flight.get(&r).unwrap_or_default()
                ));
            }
        }
        Ok(())
    }

    /// An operand every thread of the warpgroup must give alike (`what`
    /// names it in the error).
    fn uniform(&self, op: &Operand, what: &str) -> Res<u64> {
        if let Operand::Reg(r) = op {
            // A register: its row, compared in one pass.
            let row = self.wg.regs.row(r.index() as u32);
            return match row.iter().all(|v| *v == row[0]) {
                true => Ok(row[0]),
                false => Err(fault!("{what} differs between threads of the warpgroup")),
            };
        }
        let first = self.value(0, op)?;
        for t in 1..WARPGROUP {
            if self.value(t, op)? != first {
                return Err(fault!("{what} differs between threads of the warpgroup"));
            }
        }
        Ok(first)
    }

    /// What the sanitizer found in a wgmma's shared-memory reads: a TMA
    /// fill not yet seen complete, a generic write with no proxy fence.
    fn sanitizer_findings(
        &mut self,
        unready: Option<(u64, Fill)>,
        found: Option<crate::proxy_fence::Unfenced>,
    ) -> Res<()> {
        if let Some((at, f)) = unready {
            self.unready("this wgmma", 0, at, f)?;
        }
        if let Some(u) = found.filter(|_| self.check_proxy) {
            self.unfenced("this wgmma", 0, u)?;
        }
        Ok(())
    }

    /// C of a wgmma writing `dregs`, register-major (see
    /// `wgmma_math::compute`): each accumulator's newest pending value,
    /// else its register.
    fn accumulators_before(&self, dregs: &[VReg]) -> Vec<u32> {
        // C: the newest pending value of each accumulator, else the
        // register (the source of each of `dregs`, found once for all threads).
        let pending: Vec<&PendingMma> = self
            .wg
            .committed
            .iter()
            .flatten()
            .chain(&self.wg.open)
            .collect();
        // A pipeline chains wgmma on the same accumulator list, so the
        // newest pending wgmma whose register span meets this one's is
        // usually the source of all of them; otherwise each register is
        // looked up on its own.
        let span = register_span(dregs);
        let newest = pending
            .iter()
            .enumerate()
            .rev()
            .find(|(_, p)| p.span.0 <= span.1 && span.0 <= p.span.1);
        let source: Vec<Option<(usize, usize)>> = match newest {
            None => vec![None; dregs.len()],
            Some((k, p)) if p.regs == *dregs => (0..dregs.len()).map(|j| Some((k, j))).collect(),
            Some(_) => dregs
                .iter()
                .map(|r| {
                    pending
                        .iter()
                        .enumerate()
                        .rev()
                        .find_map(|(k, p)| p.regs.iter().position(|x| x == r).map(|j| (k, j)))
                })
                .collect(),
        };
        // Register-major (see `wgmma_math::compute`).
        let mut c: Vec<u32> = Vec::with_capacity(WARPGROUP * dregs.len());
        for (r, src) in dregs.iter().zip(&source) {
            match *src {
                Some((k, j)) => {
                    c.extend_from_slice(&pending[k].values[j * WARPGROUP..(j + 1) * WARPGROUP])
                }
                None => c.extend(self.wg.regs.row(r.index() as u32).iter().map(|v| *v as u32)),
            }
        }
        c
    }

    pub(super) fn retire(&mut self, group: Vec<PendingMma>) {
        for (k, p) in group.iter().enumerate() {
            // A later wgmma of the group on the same registers (a chain)
            // writes every one of them again: only the last write shows.
            if group[k + 1..].iter().any(|q| q.regs == p.regs) {
                continue;
            }
            for (r, vals) in p.regs.iter().zip(p.values.chunks_exact(WARPGROUP)) {
                let row = self.wg.regs.row_mut(r.index() as u32);
                for (x, v) in row.iter_mut().zip(vals) {
                    *x = u64::from(*v);
                }
            }
        }
        // Their value lists serve later wgmma's results.
        for p in group {
            if self.wg.spare_values.len() < SPARE_VALUES {
                self.wg.spare_values.push(p.values);
            }
        }
        // Rebuild what is still in flight from the groups that remain.
        self.wg.in_flight.clear();
        for p in self.wg.committed.iter().flatten().chain(&self.wg.open) {
            for r in &p.regs {
                self.wg.in_flight.insert(*r, p.line);
            }
        }
        self.stats.groups_retired += 1;
    }
}

/// [`wgmma_math::compute`] (shared memory at `version`), with the
/// operands read through descriptors taken from (and kept in) the
/// warpgroup's `cache` while shared memory is unchanged, and the result in
/// a `spare` value list of a retired wgmma when there is one.
fn compute_cached(
    (cache, spare): (&mut OperandCache, &mut Vec<Vec<u32>>),
    version: u64,
    mma: &Mma<'_>,
    c: &[u32],
    checked: &ProxyChecked<'_>,
) -> Res<Vec<u32>> {
    wgmma_math::check_form(&mma.form)?;
    let clean_now = || checked.found.get().is_none() && checked.unready.get().is_none();
    let a = match mma.a {
        AOperand::Desc(desc) => {
            let before = clean_now();
            let key = OperandKey::a(mma, desc);
            cache.get(
                key,
                version,
                checked,
                |s| wgmma_math::operand_a(mma, s),
                || before && clean_now(),
            )?
        }
        AOperand::Regs(..) => std::rc::Rc::new(wgmma_math::operand_a(mma, checked)?),
    };
    let before = clean_now();
    let bt = cache.get(
        OperandKey::b(mma),
        version,
        checked,
        |s| wgmma_math::operand_b(mma, s),
        || before && clean_now(),
    )?;
    Ok(wgmma_math::accumulate(
        mma,
        &a,
        &bt,
        c,
        spare.pop().unwrap_or_default(),
    )?)
}

/// How many retired value lists a warpgroup keeps for reuse (a pipeline
/// group's worth).
const SPARE_VALUES: usize = 16;

/// Shared memory as wgmma reads it, noting the first byte an unfenced
/// generic write left (see [`crate::proxy_fence`]).
pub(super) struct ProxyChecked<'a> {
    pub(super) shared: &'a Shared,
    pub(super) proxy: &'a GenericWrites,
    pub(super) found: std::cell::Cell<Option<crate::proxy_fence::Unfenced>>,
    /// The TMA check: fills, what the warpgroup has seen, the first read
    /// of a fill it may not read yet.
    pub(super) fills: &'a TmaFills,
    pub(super) seen: &'a Seen,
    pub(super) unready: std::cell::Cell<Option<(u64, Fill)>>,
    /// The granules read, for the race detector (when it runs).
    pub(super) read: Option<std::cell::RefCell<Vec<u32>>>,
}

impl wgmma_math::SharedMemory for ProxyChecked<'_> {
    fn granule(&self, addr: u32) -> Result<[u8; 16], String> {
        let a = u64::from(addr);
        if self.found.get().is_none() {
            self.found.set(self.proxy.check(a, 16));
        }
        if self.unready.get().is_none() {
            self.unready.set(self.fills.unready(a, 16, self.seen));
        }
        if let Some(r) = &self.read {
            r.borrow_mut().push(addr);
        }
        self.shared.granule(addr)
    }

    fn plain(&self) -> Option<&[u8]> {
        // Nothing to find at any granule: no unfenced generic write, no
        // TMA fill in progress (the granules read are still noted).
        (self.proxy.clean() && self.fills.empty()).then(|| self.shared.bytes())
    }

    fn read_log(&self) -> Option<&std::cell::RefCell<Vec<u32>>> {
        self.read.as_ref()
    }
}

/// The registers wgmma in flight will write, with the line of the newest
/// such wgmma: a dense table by register (checked at nearly every step
/// while a pipeline runs) and the list of those set, to clear.
#[derive(Default)]
pub(super) struct InFlight {
    /// Line + 1 by register; 0: not in flight.
    lines: Vec<u32>,
    set: Vec<VReg>,
}

impl InFlight {
    pub(super) fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// The line of the wgmma in flight that writes `r`.
    pub(super) fn get(&self, r: &VReg) -> Option<u32> {
        match self.lines.get(r.index()) {
            Some(&l) if l > 0 => Some(l - 1),
            _ => None,
        }
    }

    pub(super) fn contains(&self, r: &VReg) -> bool {
        self.get(r).is_some()
    }

    pub(super) fn insert(&mut self, r: VReg, line: u32) {
        if self.lines.len() <= r.index() {
            self.lines.resize(r.index() + 1, 0);
        }
        if self.lines[r.index()] == 0 {
            self.set.push(r);
        }
        self.lines[r.index()] = line + 1;
    }

    pub(super) fn clear(&mut self) {
        for r in self.set.drain(..) {
            self.lines[r.index()] = 0;
        }
    }
}

/// The values of the newest pending wgmma (in `committed`, then `open`)
/// whose registers meet `dregs`, when it writes exactly `dregs`: the C of
/// the next wgmma of a chain, as [`Machine::accumulators_before`] would
/// gather them.
fn chained<'w>(
    committed: &'w VecDeque<Vec<PendingMma>>,
    open: &'w [PendingMma],
    dregs: &[VReg],
) -> Option<&'w [u32]> {
    let span = register_span(dregs);
    let newest = committed
        .iter()
        .flatten()
        .chain(open)
        .rev()
        .find(|p| p.span.0 <= span.1 && span.0 <= p.span.1)?;
    (newest.regs == dregs).then_some(&newest.values[..])
}

/// `granules` (shared-memory addresses of 16-byte granules) in increasing
/// order, each once, as sorting and removing repeats would leave them: by
/// a bitmap over the span they cover where they are dense in it (a
/// wgmma's operands), else by sorting.
fn in_order_once(granules: &mut Vec<u32>) {
    let (Some(&lo), Some(&hi)) = (granules.iter().min(), granules.iter().max()) else {
        return;
    };
    let span = ((hi - lo) / 16) as usize + 1;
    if span > 64 * granules.len() || granules.iter().any(|g| g % 16 != 0) {
        granules.sort_unstable();
        granules.dedup();
        return;
    }
    let mut bits = vec![0u64; span.div_ceil(64)];
    for g in granules.iter() {
        let i = ((g - lo) / 16) as usize;
        bits[i / 64] |= 1 << (i % 64);
    }
    granules.clear();
    for (w, word) in bits.iter().enumerate() {
        let mut word = *word;
        while word != 0 {
            let i = w as u32 * 64 + word.trailing_zeros();
            granules.push(lo + 16 * i);
            word &= word - 1;
        }
    }
}

/// The lowest and highest of `regs` (an empty list spans nothing).
fn register_span(regs: &[VReg]) -> (VReg, VReg) {
    match (regs.iter().min(), regs.iter().max()) {
        (Some(lo), Some(hi)) => (*lo, *hi),
        _ => (VReg::from_u32(u32::MAX), VReg::from_u32(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::in_order_once;

    /// The bitmap gives what sorting and removing repeats gives, on dense
    /// and sparse granule lists with repeats (and on addresses that are
    /// not granules', which take the sort).
    #[test]
    fn granules_in_order_once_as_sorting_gives_them() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(n)) as u32
        };
        for trial in 0..2_000 {
            let (count, spread, unit) = match trial % 4 {
                0 => (384, 512, 16),
                1 => (40, 100_000, 16),
                2 => (1 + next(64), 1 + next(4096), 16),
                _ => (1 + next(64), 1 + next(4096), 4),
            };
            let base = 16 * next(1000);
            let mut got: Vec<u32> = (0..count).map(|_| base + unit * next(spread)).collect();
            let mut want = got.clone();
            want.sort_unstable();
            want.dedup();
            in_order_once(&mut got);
            assert_eq!(got, want, "trial {trial}");
        }
        let mut none: Vec<u32> = Vec::new();
        in_order_once(&mut none);
        assert!(none.is_empty());
    }
}
