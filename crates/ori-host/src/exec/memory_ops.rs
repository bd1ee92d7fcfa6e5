//! Moving bytes: `ld`/`st` in every state space, atomics and reductions,
//! `cp.async` and its groups, TMA and bulk copies through tensor maps,
//! `tensormap.replace`, and the warp-wide `ldmatrix`/`stmatrix`.

use super::alu::int_min_max;
use super::*;

impl Machine<'_> {
    /// Thread `t`'s part of an `ld` or `st`.
    pub(super) fn memory_op(&mut self, t: usize, x: &Access<'_>) -> Res<()> {
        let len = (x.bits / 8) as usize;
        let (_, addr) = self.address(t, x.addr_op)?;
        if !x.load && x.space == "global" && x.parts.len() > 1 && self.vector_store(t, x, addr) {
            return Ok(());
        }
        for (k, p) in x.parts.iter().enumerate() {
            let (space, a) = self.resolve(x.space, addr.wrapping_add((k * len) as u64))?;
            let thread = (self.wg.index * WARPGROUP + t) as u32;
            if space == "shared" && !x.synchronizing && x.load {
                self.race_access(thread, false, (a, len), false)?;
            }
            if x.load {
                if space == "shared" {
                    self.check_tma_ready("this load", t, a, len)?;
                }
                let v = self.load(space, a, len)?;
                self.set(t, p, v, x.bits)?;
            } else {
                let v = self.value_fast(t, p)?;
                if space == "shared" && !x.synchronizing {
                    self.race_write_value(thread, (a, len), v)?;
                }
                self.store(space, a, len, v)?;
                if space == "shared" {
                    self.note_generic_write(t, a, len);
                }
            }
        }
        Ok(())
    }

    /// A `st.global.v2`/`.v4` of thread `t` at `addr` as one span of
    /// bytes, when it lies inside a buffer (false, nothing written,
    /// otherwise: the element-wise path then stops where the ISA's order
    /// of writes would).
    fn vector_store(&self, t: usize, x: &Access<'_>, addr: u64) -> bool {
        let len = (x.bits / 8) as usize;
        let mut bytes = [0u8; 64];
        let n = len * x.parts.len();
        if n > bytes.len() {
            return false;
        }
        for (k, p) in x.parts.iter().enumerate() {
            let Ok(v) = self.value_fast(t, p) else {
                return false;
            };
            bytes[k * len..(k + 1) * len].copy_from_slice(&v.to_le_bytes()[..len]);
        }
        self.global.write_span(addr, &bytes[..n]).is_ok()
    }

    /// `atom` and `red` on global or shared memory, thread by thread in
    /// lane order (which is one of the orders the GPU may pick): `add`
    /// (integers, f32, f64, f16, bf16 and their x2 pairs, `.v2`/`.v4`
    /// vectors), `min`, `max`, `inc`, `dec`, `and`, `or`, `xor`, `exch`,
    /// `cas`. `atom` returns the old value.
    pub(super) fn atomic(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let mods: Vec<&str> = d.mods.iter().map(|m| &**m).collect();
        let what = [
            "add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas",
        ]
        .into_iter()
        .find(|o| mods.contains(o))
        .ok_or_else(|| format!("{}: no operation", d.mnemonic()))?;
        let ty = type_of(d);
        let bits = bits_of(ty);
        let len = (bits / 8) as usize;
        let space = if mods.iter().any(|m| m.starts_with("shared")) {
            "shared"
        } else if mods.contains(&"global") {
            "global"
        } else {
            ""
        };
        let is_atom = &*d.name == "atom";
        let (addr_k, val_k) = if is_atom { (1, 2) } else { (0, 1) };
        let unsupported = || {
            Fault::Unsupported(format!(
                "{} is not supported by the host backend",
                d.mnemonic()
            ))
        };
        // One element: the new value from the old one and the operand(s).
        let apply =
            |old: u64, b: u64, c: u64| atomic_result(what, ty, old, b, c).ok_or_else(unsupported);
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            let (_, addr) = self.address(t, op(d, addr_k)?)?;
            let vals: Vec<Operand> = match op(d, val_k)? {
                Operand::Vector(v) => v.to_vec(),
                o => vec![o.clone()],
            };
            let c = if what == "cas" {
                self.value(t, op(d, val_k + 1)?)?
            } else {
                0
            };
            let mut olds = Vec::with_capacity(vals.len());
            for (k, vo) in vals.iter().enumerate() {
                let (space, a) = self.resolve(space, addr.wrapping_add((k * len) as u64))?;
                let b = self.value(t, vo)?;
                let old = if space == "global" {
                    // Other CTAs may run at the same time: one at a time.
                    let g = self.global;
                    g.atomically(|| -> Res<u64> {
                        let old = g.read(a, len)?;
                        g.write(a, len, apply(old, b, c)?)?;
                        Ok(old)
                    })?
                } else {
                    let old = self.load(space, a, len)?;
                    let new = apply(old, b, c)?;
                    self.store(space, a, len, new)?;
                    old
                };
                if space == "shared" {
                    self.note_generic_write(t, a, len);
                }
                olds.push(old);
            }
            if is_atom {
                match op(d, 0)?.clone() {
                    Operand::Vector(parts) => {
                        for (p, old) in parts.iter().zip(olds) {
                            self.set(t, p, old, bits)?;
                        }
                    }
                    o => self.set(t, &o, olds[0], bits)?,
                }
            }
        }
        Ok(())
    }

    /// Copy bytes between an address of `space` (`"generic"`, `"global"`,
    /// `"shared"`) and a buffer.
    pub(super) fn read_bytes(&mut self, space: &str, addr: u64, out: &mut [u8]) -> Res<()> {
        for (k, b) in out.iter_mut().enumerate() {
            *b = self.load(space, addr.wrapping_add(k as u64), 1)? as u8;
        }
        Ok(())
    }

    pub(super) fn write_bytes(&mut self, space: &str, addr: u64, bytes: &[u8]) -> Res<()> {
        for (k, b) in bytes.iter().enumerate() {
            self.store(space, addr.wrapping_add(k as u64), 1, u64::from(*b))?;
        }
        Ok(())
    }

    /// `cp.async.bulk`: TMA tensor copies (`.tensor.Nd`, tiled, through a
    /// tensor map; see [`crate::tensor_map`]) and plain bulk copies, in
    /// either direction, for each active thread. A load lands at once and
    /// completes its bytes on its mbarrier; a store is written at once, so
    /// `commit_group` / `wait_group` have nothing left to wait for.
    pub(super) fn bulk_copy(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let mods: Vec<&str> = d.mods.iter().map(|m| &**m).collect();
        if mods
            .iter()
            .any(|m| matches!(*m, "commit_group" | "wait_group" | "prefetch"))
        {
            return Ok(());
        }
        let tensor = mods.contains(&"tensor");
        // Multicast: tensor loads only (see `tensor_copy`).
        if mods
            .iter()
            .any(|m| (m.starts_with("multicast") && !tensor) || *m == "im2col")
        {
            return Err(Fault::Unsupported(format!(
                "{} is not supported by the host backend",
                d.mnemonic()
            )));
        }
        let shared_at = mods.iter().position(|m| m.starts_with("shared"));
        let global_at = mods.iter().position(|m| *m == "global");
        let load = match (shared_at, global_at) {
            (Some(s), Some(g)) => s < g,
            _ => return Err(fault!("{}: no direction (shared and global)", d.mnemonic())),
        };
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            if tensor {
                self.tensor_copy(t, d, load)?;
            } else {
                self.plain_bulk_copy(t, d, load)?;
            }
        }
        Ok(())
    }

    /// One thread's plain (not tensor) `cp.async.bulk`: `n` bytes between
    /// global and shared memory (`load`: into shared memory, completing
    /// on the mbarrier operand).
    fn plain_bulk_copy(&mut self, t: usize, d: &InstData, load: bool) -> Res<()> {
        let (_, dst) = self.address(t, op(d, 0)?)?;
        let (_, src) = self.address(t, op(d, 1)?)?;
        let n = self.value(t, op(d, 2)?)?;
        if n % 16 != 0 || n > MAX_SHARED {
            return Err(fault!(
                "{}: a bulk copy of {n} bytes (a multiple of 16, at most the {MAX_SHARED} bytes of shared memory)",
                d.mnemonic()
            ));
        }
        let n = n as usize;
        let mut buf = vec![0u8; n];
        if !load {
            self.check_async_read("this bulk copy", t, src, n)?;
        } else if self.locate(dst)?.0.is_some() {
            return Err(Fault::Unsupported(format!(
                "{}: a bulk copy into a peer CTA's shared memory is not supported by the host backend",
                d.mnemonic()
            )));
        }
        let (from, to) = if load {
            ("global", "shared")
        } else {
            ("shared", "global")
        };
        let thread = (self.wg.index * WARPGROUP + t) as u32;
        if load {
            self.race_copy_issued(t, dst)?;
            self.race_access(thread, true, (dst, n), true)?;
        } else {
            self.race_access(thread, false, (src, n), false)?;
        }
        self.read_bytes(from, src, &mut buf)?;
        self.write_bytes(to, dst, &buf)?;
        if load {
            self.proxy.async_write(dst, n);
            let (_, mbar) = self.address(t, op(d, 3)?)?;
            let phase = self.mbarriers.phase(mbar)?;
            self.fills.landed(
                dst,
                n,
                Fill {
                    mbar,
                    phase,
                    line: self.line,
                },
            );
            self.mbarriers.complete_tx(mbar, n as i64)?;
            self.race_copy_complete(mbar, phase);
        }
        Ok(())
    }

    /// The `[tensor map, {coordinates}]` operand of one thread's
    /// `cp.async.bulk.tensor`: the map, read and decoded from memory, and
    /// the box's coordinates, one per dimension of the map.
    fn tensor_operand(
        &mut self,
        t: usize,
        d: &InstData,
        map_op: &Operand,
        load: bool,
    ) -> Res<(TensorMap, Vec<i64>)> {
        let Operand::Vector(parts) = map_op else {
            return Err(fault!(
                "{}: no [tensor map, {{coordinates}}] operand",
                d.mnemonic()
            ));
        };
        let map_addr = self.value(t, &parts[0])?;
        let coords: Vec<i64> = match parts.get(1) {
            Some(Operand::Vector(c)) => c
                .iter()
                .map(|o| self.value(t, o).map(|v| i64::from(v as u32 as i32)))
                .collect::<Res<_>>()?,
            Some(o) => vec![i64::from(self.value(t, o)? as u32 as i32)],
            None => return Err(fault!("{}: no coordinates", d.mnemonic())),
        };
        let mut bytes = [0u8; 128];
        self.read_bytes("generic", map_addr, &mut bytes)?;
        let tm = TensorMap::decode(&bytes);
        if let Some(why) = tm.unsupported() {
            return Err(fault!("{}: the tensor map at {map_addr:#x} has {why}, which the host backend does not support", d.mnemonic()));
        }
        // A tf32 map rounds what it loads (numbers::tma_round_tf32, probed
        // on the device); what it stores and its NaN fill were not probed.
        if tm.tf32 && (!load || tm.oob_nan) {
            return Err(fault!(
                "{}: tf32 tensor maps are supported for loads with zero fill only",
                d.mnemonic()
            ));
        }
        if coords.len() != tm.rank {
            return Err(fault!(
                "{}: {} coordinates for a rank-{} tensor map",
                d.mnemonic(),
                coords.len(),
                tm.rank
            ));
        }
        Ok((tm, coords))
    }

    /// One thread's `cp.async.bulk.tensor`: the box at the coordinates,
    /// between global memory and shared memory (swizzled as the map says;
    /// out-of-bounds elements read as zero or NaN and are not written).
    /// A load with `.multicast::cluster` lands in every CTA of the cluster
    /// whose rank bit its `ctaMask` sets, at the same offset, and completes
    /// its bytes on each one's mbarrier at the same offset (PTX ISA,
    /// cp.async.bulk.tensor); each CTA's sanitizer sees its own fill.
    pub(super) fn tensor_copy(&mut self, t: usize, d: &InstData, load: bool) -> Res<()> {
        let (map_op, mem_op) = if load {
            (op(d, 1)?, op(d, 0)?)
        } else {
            (op(d, 0)?, op(d, 1)?)
        };
        let (tm, coords) = self.tensor_operand(t, d, map_op, load)?;
        let (_, smem) = self.address(t, mem_op)?;
        if !load {
            let thread = (self.wg.index * WARPGROUP + t) as u32;
            self.race_access(thread, false, (smem, tm.box_bytes()), false)?;
            return self.tensor_store(&tm, &coords, smem);
        }
        let (_, mbar) = self.address(t, op(d, 2)?)?;
        let (dst_rank, dst) = self.locate(smem)?;
        let (bar_rank, bar) = self.locate(mbar)?;
        let dst_rank = dst_rank.unwrap_or(self.rank);
        if d.mods.iter().any(|m| m.starts_with("multicast")) {
            let mask = self.value(t, op(d, 3)?)? & 0xffff;
            let n = self.peers.len();
            if mask >> n != 0 {
                return Err(fault!(
                    "{}: ctaMask {mask:#x} names a CTA outside the cluster of {n}",
                    d.mnemonic()
                ));
            }
            for r in (0..n).filter(|r| mask >> r & 1 == 1) {
                self.race_copy_issued(t, cluster::cluster_address(r, dst))?;
                self.on_cta(r, |m| m.tensor_load(&tm, &coords, (dst, bar), t))?;
            }
            return Ok(());
        }
        if bar_rank.unwrap_or(self.rank) != dst_rank {
            return Err(fault!(
                "{}: the destination and the mbarrier are in different CTAs",
                d.mnemonic()
            ));
        }
        self.race_copy_issued(t, cluster::cluster_address(dst_rank, dst))?;
        self.on_cta(dst_rank, |m| m.tensor_load(&tm, &coords, (dst, bar), t))
    }

    /// A TMA load's box into the running CTA's shared memory at `smem`,
    /// completing its bytes on the mbarrier at `mbar` (both offsets in it).
    /// Lane `t` of the running warpgroup issued it.
    fn tensor_load(
        &mut self,
        tm: &TensorMap,
        coords: &[i64],
        (smem, mbar): (u64, u64),
        t: usize,
    ) -> Res<()> {
        let thread = (self.wg.index * WARPGROUP + t) as u32;
        self.race_access(thread, true, (smem, tm.box_bytes()), true)?;
        let fill = Fill {
            mbar,
            phase: self.mbarriers.phase(mbar)?,
            line: self.line,
        };
        let esz = crate::tensor_map::elem_bytes(tm.elem_code).unwrap_or(1);
        let n: Vec<usize> = (0..tm.dims_used()).map(|k| tm.box_elems(k)).collect();
        let total: usize = n.iter().product();
        let nan: u64 = match tm.elem_code {
            6 | 10 => 0x7fff,
            7 | 8 => 0x7fff_ffff,
            9 => 0x7fff_ffff_ffff_ffff,
            _ => 0,
        };
        for idx in 0..total {
            let at = tm.box_element(coords, &n, idx, esz);
            let saddr = tm.swizzled(smem, (idx * esz) as u64);
            let v = match at {
                Some(gaddr) if tm.tf32 => u64::from(crate::numbers::tma_round_tf32(
                    self.global.read(gaddr, esz)? as u32,
                )),
                Some(gaddr) => self.global.read(gaddr, esz)?,
                None if tm.oob_nan => nan,
                None => 0,
            };
            self.shared.write(saddr, esz, v)?;
            self.proxy.async_write(saddr, esz);
            self.fills.landed(saddr, esz, fill);
        }
        self.mbarriers.complete_tx(mbar, tm.box_bytes() as i64)?;
        self.race_copy_complete(mbar, fill.phase);
        Ok(())
    }

    /// A TMA store of the box at `smem` (the running CTA's shared memory).
    fn tensor_store(&mut self, tm: &TensorMap, coords: &[i64], smem: u64) -> Res<()> {
        let esz = crate::tensor_map::elem_bytes(tm.elem_code).unwrap_or(1);
        let n: Vec<usize> = (0..tm.dims_used()).map(|k| tm.box_elems(k)).collect();
        let total: usize = n.iter().product();
        for idx in 0..total {
            let saddr = tm.swizzled(smem, (idx * esz) as u64);
            self.check_async_read("this TMA store", 0, saddr, esz)?;
            if let Some(gaddr) = tm.box_element(coords, &n, idx, esz) {
                let v = self.shared.read(saddr, esz)?;
                self.global.write(gaddr, esz, v)?;
            }
        }
        Ok(())
    }

    /// `tensormap.replace.tile.FIELD [map], {ord,} value` (on a map in
    /// shared or global memory) and `tensormap.cp_fenceproxy [dst], [src],
    /// size` (the copy of a map to global memory), for each active thread.
    pub(super) fn tensormap_op(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let what = d.mods.first().map_or("", |m| &**m);
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            match what {
                "replace" => {
                    let field = d.mods.get(2).map_or("", |m| &**m);
                    let (_, at) = self.address(t, op(d, 0)?)?;
                    let (ord, v) = if d.slots.len() > 2 {
                        (
                            self.value(t, op(d, 1)?)? as usize,
                            self.value(t, op(d, 2)?)?,
                        )
                    } else {
                        (0, self.value(t, op(d, 1)?)?)
                    };
                    let mut bytes = [0u8; 128];
                    let space = map_space(d);
                    self.read_bytes(space, at, &mut bytes)?;
                    crate::tensor_map::replace(&mut bytes, field, ord, v)?;
                    self.write_bytes(space, at, &bytes)?;
                }
                "cp_fenceproxy" => {
                    let (_, dst) = self.address(t, op(d, 0)?)?;
                    let (_, src) = self.address(t, op(d, 1)?)?;
                    let n = self.value(t, op(d, 2)?)?;
                    if n != 128 {
                        return Err(fault!(
                            "{}: a tensor map is 128 bytes, not {n}",
                            d.mnemonic()
                        ));
                    }
                    let n = n as usize;
                    let mut buf = vec![0u8; n];
                    // `.global.shared::cta`: to global from shared.
                    self.read_bytes("shared", src, &mut buf)?;
                    self.write_bytes("global", dst, &buf)?;
                }
                _ => {
                    return Err(Fault::Unsupported(format!(
                        "{} is not supported by the host backend",
                        d.mnemonic()
                    )))
                }
            }
        }
        Ok(())
    }

    /// `cp.async`: copies (read now, landing at a wait), `commit_group`,
    /// `wait_group N`, `wait_all` (see [`crate::async_copy`]).
    pub(super) fn async_copy(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let what = d.mods.get(1).map_or("", |m| &**m);
        let everyone = self.all_live(act);
        let retire_to = match what {
            "commit_group" | "wait_group" | "wait_all" if !everyone => {
                return Err(fault!(
                    "{} with some threads of the warpgroup inactive: the host backend keeps one group list per warpgroup",
                    d.mnemonic()
                ))
            }
            "commit_group" => {
                self.wg.copies.commit();
                return Ok(());
            }
            "wait_group" => {
                let n = match op(d, 0)? {
                    Operand::Imm(i) => i.as_i64().filter(|n| *n >= 0),
                    _ => None,
                };
                n.ok_or("cp.async.wait_group takes a non-negative immediate")? as usize
            }
            "wait_all" => {
                self.wg.copies.commit();
                0
            }
            // `cp.async.mbarrier.arrive.b64 [mbar]`: the mbarrier sees an
            // arrive when this thread's earlier copies complete; without
            // `.noinc` the pending count was raised by one first, so the
            // arrive changes nothing (PTX ISA 9.7.9.25.3.3). The copies
            // may complete at any point from their issue on: here, now.
            "mbarrier" if !d.has_mod("noinc") => {
                let base = (self.wg.index * WARPGROUP) as u32;
                let landed = self
                    .wg
                    .copies
                    .take_threads(|t| t >= base && act[(t - base) as usize]);
                self.sync_proxy_order();
                let done = self.land_copies(&landed);
                self.wg.copies.recycle(landed);
                return done;
            }
            "ca" | "cg" => return self.issue_copies(&CopyShape::of(self.f, d)?, act),
            _ => {
                return Err(Fault::Unsupported(format!(
                    "{} is not supported by the host backend",
                    d.mnemonic()
                )))
            }
        };
        // `wait_group n` / `wait_all`: the groups but the newest `n` land,
        // oldest first, each where it is (no gathering into one list).
        self.sync_proxy_order();
        while let Some(group) = self.wg.copies.retire_oldest(retire_to) {
            let done = self.land_copies(&group);
            self.wg.copies.recycle(group);
            done?;
        }
        Ok(())
    }

    /// The copies `landed` write shared memory, in order: each a write by
    /// its issuing thread at its line (the race detector, the TMA-fill
    /// and proxy checks see it as such).
    fn land_copies(&mut self, landed: &[PendingCopy]) -> Res<()> {
        let line = self.line;
        for c in landed {
            let bytes = c.bytes();
            if self.races.is_some() {
                // A write of the issuing warp, at the copy's line.
                self.line = c.line;
                let raced = self.race_access(c.thread, false, (c.dst, bytes.len()), true);
                self.line = line;
                raced?;
            }
            self.shared.write_bytes(c.dst, bytes)?;
            // cp.async writes through the generic proxy.
            self.fills.overwritten(c.dst, bytes.len());
            self.proxy
                .generic_write(c.dst, bytes.len(), c.line, c.thread, true);
        }
        Ok(())
    }

    /// `cp.async.{ca,cg}` by the threads in `act`: each thread's copy read
    /// and issued into the warpgroup's open group. Every thread's source
    /// address is found once, and its line asked for before any is read,
    /// so that the reads overlap their cache misses.
    fn issue_copies(&mut self, shape: &CopyShape<'_>, act: &[bool]) -> Res<()> {
        let mut srcs = [None; WARPGROUP];
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            if let Ok((_, src)) = self.address(t, shape.src) {
                self.global.prefetch(src);
                srcs[t] = Some(src);
            }
        }
        for t in (0..WARPGROUP).filter(|t| act[*t]) {
            self.read_copy(t, shape, srcs[t])?;
        }
        Ok(())
    }

    /// Thread `t`'s `cp.async.{ca,cg}.shared.global [dst], [src], cp-size
    /// {, src-size | ignore-src}`: its bytes, read from global memory now,
    /// issued into the warpgroup's open group (`src`: the source address,
    /// where it was found already).
    pub(super) fn read_copy(
        &mut self,
        t: usize,
        shape: &CopyShape<'_>,
        src: Option<u64>,
    ) -> Res<()> {
        let (_, dst) = self.address(t, shape.dst)?;
        let src = match src {
            Some(s) => s,
            None => self.address(t, shape.src)?.1,
        };
        let size = shape.size;
        let read = match shape.limit {
            None => size,
            // `ignore-src`: a predicate; true reads nothing.
            Some((o, true)) => {
                if self.value_fast(t, o)? & 1 == 1 {
                    0
                } else {
                    size
                }
            }
            Some((o, false)) => {
                let n = self.value_fast(t, o)? as usize;
                if n > size {
                    return Err(fault!(
                        "cp.async: src-size {n} is larger than the copy ({size})"
                    ));
                }
                n
            }
        };
        let mut data = [0u8; 16];
        if read == 16 {
            data = self.global.read16(src)?.to_le_bytes();
        } else if read > 0 {
            self.global.read_into(src, &mut data[..read])?;
        }
        // The copy may write from its issue on (it lands here at its
        // wait): what it overwrites must be ordered before the issue.
        let thread = (self.wg.index * WARPGROUP + t) as u32;
        self.race_access(thread, false, (dst, size), true)?;
        self.wg.copies.issue(PendingCopy {
            dst,
            data,
            len: size as u8,
            line: self.line,
            thread,
        });
        Ok(())
    }

    /// `ldmatrix` / `stmatrix` `.m8n8.{x1,x2,x4}{.trans}.shared.b16`: warp by
    /// warp, lanes `8i..8i+7` give matrix `i`'s row addresses (see
    /// [`crate::matrix_fragments`]).
    pub(super) fn matrix_move(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let load = &*d.name == "ldmatrix";
        let has = |m: &str| d.has_mod(m);
        if !has("m8n8") || !has("b16") {
            return Err(Fault::Unsupported(format!(
                "{} is not supported by the host backend (m8n8 .b16 only)",
                d.mnemonic()
            )));
        }
        if !act.iter().all(|a| *a) {
            return Err(fault!(
                "{} with inactive threads (it is .aligned)",
                d.mnemonic()
            ));
        }
        let num = [("x1", 1), ("x2", 2), ("x4", 4)]
            .iter()
            .find(|(m, _)| has(m))
            .map(|(_, n)| *n)
            .ok_or("ldmatrix/stmatrix without .x1, .x2 or .x4")?;
        let trans = has("trans");
        let (regs_op, _) = if load {
            (op(d, 0)?, op(d, 1)?)
        } else {
            (op(d, 1)?, op(d, 0)?)
        };
        let regs: Vec<Operand> = match regs_op {
            Operand::Vector(v) => v.to_vec(),
            o => vec![o.clone()],
        };
        if regs.len() != num {
            return Err(fault!("{} registers for .x{num}", regs.len()));
        }
        for warp in 0..WARPGROUP / 32 {
            for (i, reg) in regs.iter().enumerate() {
                let addrs = self.matrix_rows(d, warp * 32 + 8 * i, load)?;
                if load && !self.fills.empty() {
                    for (j, a) in addrs.into_iter().enumerate() {
                        let what = format!("this {}", d.mnemonic());
                        self.check_tma_ready(&what, warp * 32 + 8 * i + j, a, 16)?;
                    }
                }
                let mut rows: Rows = [[0; 16]; 8];
                for (row, a) in rows.iter_mut().zip(addrs) {
                    match self
                        .shared
                        .bytes()
                        .get(a as usize..(a as usize).saturating_add(16))
                    {
                        Some(b) if a < 1 << crate::memory::GLOBAL_SHIFT => row.copy_from_slice(b),
                        // Outside shared memory: the byte-wise read says where.
                        _ => {
                            for (k, b) in row.iter_mut().enumerate() {
                                *b = self.shared.read(a + k as u64, 1)? as u8;
                            }
                        }
                    }
                }
                for lane in 0..32 {
                    let t = warp * 32 + lane;
                    if load {
                        let v = matrix_fragments::fragment(&rows, lane, trans);
                        self.set(t, reg, u64::from(v), 32)?;
                    } else {
                        let v = self.value(t, reg)? as u32;
                        matrix_fragments::scatter(&mut rows, lane, trans, v);
                    }
                }
                if !load {
                    for (j, (row, a)) in rows.iter().zip(addrs).enumerate() {
                        for (k, b) in row.iter().enumerate() {
                            self.shared.write(a + k as u64, 1, u64::from(*b))?;
                        }
                        self.note_generic_write(warp * 32 + 8 * i + j, a, 16);
                    }
                }
            }
        }
        Ok(())
    }
}

impl Machine<'_> {
    /// The 8 row addresses of an `ldmatrix`/`stmatrix` matrix that lanes
    /// `first..first + 8` give: offsets in the running CTA's shared memory
    /// (a generic address of it too), each row an access of its lane.
    fn matrix_rows(&mut self, d: &InstData, first: usize, load: bool) -> Res<[u64; 8]> {
        let addr_op = if load { op(d, 1)? } else { op(d, 0)? };
        let mut addrs = [0u64; 8];
        for (j, a) in addrs.iter_mut().enumerate() {
            let t = first + j;
            *a = match self.locate(self.address(t, addr_op)?.1)? {
                (None, off) => off,
                (Some(r), _) => {
                    return Err(fault!(
                        "{}: an address in CTA rank {r}'s shared memory (ldmatrix and stmatrix reach their own CTA's only)",
                        d.mnemonic()
                    ))
                }
            };
            let thread = (self.wg.index * WARPGROUP + t) as u32;
            self.race_access(thread, false, (*a, 16), !load)?;
        }
        Ok(addrs)
    }
}

/// What an `ld` or `st` is, read once for all its threads.
pub(super) struct Access<'a> {
    /// Element width.
    pub(super) bits: u32,
    /// State space (`generic` when none is written).
    pub(super) space: &'a str,
    /// `ld` (else `st`).
    pub(super) load: bool,
    /// The registers (or values) moved, one per vector element.
    pub(super) parts: &'a [Operand],
    /// The address operand.
    pub(super) addr_op: &'a Operand,
    /// `.volatile`, `.relaxed`, `.acquire` or `.release`: a flag other
    /// threads poll, not data the race detector looks at.
    pub(super) synchronizing: bool,
}

/// What every thread's `cp.async.{ca,cg}` needs of the instruction, read
/// once: its address operands, the copy size, and the operand that limits
/// what is read (`true`: an `ignore-src` predicate, else a `src-size`).
pub(super) struct CopyShape<'a> {
    dst: &'a Operand,
    src: &'a Operand,
    size: usize,
    limit: Option<(&'a Operand, bool)>,
}

impl<'a> CopyShape<'a> {
    fn of(f: &Function, d: &'a InstData) -> Res<Self> {
        let size = match op(d, 2)? {
            Operand::Imm(i) => i.as_i64().filter(|n| matches!(n, 4 | 8 | 16)),
            _ => None,
        }
        .ok_or("cp.async: the copy size must be the immediate 4, 8 or 16")?
            as usize;
        let limit = d.slots.get(3).map(|s| {
            let pred =
                matches!(&s.op, Operand::Reg(r) | Operand::NotReg(r) if &*f.vregs[*r].ty == "pred");
            (&s.op, pred)
        });
        Ok(CopyShape {
            dst: op(d, 0)?,
            src: op(d, 1)?,
            size,
            limit,
        })
    }
}

/// `x + y` in the float type `elem` (one rounding), as raw bits; `None` for
/// a type that is not a float.
fn float_add(elem: &str, x: u64, y: u64) -> Option<u64> {
    Some(match elem {
        "f16" => u64::from(
            half::f16::from_f32(
                half::f16::from_bits(x as u16).to_f32() + half::f16::from_bits(y as u16).to_f32(),
            )
            .to_bits(),
        ),
        "bf16" => u64::from(
            half::bf16::from_f32(
                half::bf16::from_bits(x as u16).to_f32() + half::bf16::from_bits(y as u16).to_f32(),
            )
            .to_bits(),
        ),
        "f32" => u64::from((as_f32(x) + as_f32(y)).to_bits()),
        "f64" => (f64::from_bits(x) + f64::from_bits(y)).to_bits(),
        _ => return None,
    })
}

/// What `atom`/`red` operation `what` on type `ty` leaves in memory, from
/// the `old` value and the operands `b` (and `c` for `cas`); `None` for a
/// type the operation does not take here.
fn atomic_result(what: &str, ty: &str, old: u64, b: u64, c: u64) -> Option<u64> {
    let bits = bits_of(ty);
    let m = mask(bits);
    Some(match what {
        "add" => match ty {
            "f16x2" | "bf16x2" => {
                let e = &ty[..ty.len() - 2];
                let lo = float_add(e, old & 0xffff, b & 0xffff)?;
                let hi = float_add(e, old >> 16, b >> 16)?;
                (hi << 16) | lo
            }
            t if t.starts_with('f') || t == "bf16" => float_add(t, old, b)?,
            _ => old.wrapping_add(b) & m,
        },
        "min" | "max" if ty.starts_with('f') => {
            let (x, y) = (as_f32(old), as_f32(b));
            u64::from(if what == "min" { x.min(y) } else { x.max(y) }.to_bits())
        }
        "min" | "max" => int_min_max(what == "min", old, b, bits, ty.starts_with('s')),
        "inc" => {
            if old & m >= b & m {
                0
            } else {
                (old + 1) & m
            }
        }
        "dec" => {
            if old & m == 0 || old & m > b & m {
                b & m
            } else {
                (old - 1) & m
            }
        }
        "and" => old & b,
        "or" => old | b,
        "xor" => old ^ b,
        "exch" => b & m,
        // cas
        _ => {
            if old & m == b & m {
                c & m
            } else {
                old & m
            }
        }
    })
}

/// The state space of a `tensormap.replace`'s map: `.shared::cta`,
/// `.global`, else a generic address.
fn map_space(d: &InstData) -> &'static str {
    if d.mods.iter().any(|m| m.starts_with("shared")) {
        "shared"
    } else if d.has_mod("global") {
        "global"
    } else {
        "generic"
    }
}
