//! The warp collectives (`shfl.sync`, `vote`, `elect.sync`, `activemask`,
//! `redux.sync`), computed warp by warp over the active lanes.

use super::*;

impl Machine<'_> {
    /// The warp collectives, warp by warp over the active lanes:
    /// `shfl.sync` (see [`crate::warp_shuffle`]), `vote.sync.{all,any,uni,
    /// ballot}`, `elect.sync` (the lowest active lane of the member mask),
    /// `activemask`, `redux.sync.{add,min,max,and,or,xor}`.
    pub(super) fn warp_collective(&mut self, d: &InstData, act: &[bool]) -> Res<()> {
        let name = &*d.name;
        // Each operation's member-mask operand.
        let mask_at = match name {
            "shfl" => Some(4),
            "vote" | "redux" => Some(2),
            "elect" => Some(1),
            _ => None,
        };
        for warp in 0..WARPGROUP / 32 {
            let lanes: Vec<usize> = (0..32).map(|l| warp * 32 + l).collect();
            let active: u32 = lanes
                .iter()
                .enumerate()
                .filter(|(_, t)| act[**t])
                .fold(0, |m, (l, _)| m | (1 << l));
            if active == 0 {
                continue;
            }
            let lane_of = |t: usize| (t % 32) as u32;
            if let Some(k) = mask_at {
                for &t in lanes.iter().filter(|t| act[**t]) {
                    let member = self.value(t, op(d, k)?)? as u32;
                    if member & (1 << lane_of(t)) == 0 {
                        return Err(fault!(
                            "{}: thread {} runs it outside its member mask {member:#x}",
                            d.mnemonic(),
                            self.wg.index * WARPGROUP + t
                        ));
                    }
                }
            }
            match name {
                "shfl" => self.shuffle(d, act, &lanes, active)?,
                "vote" => self.vote(d, act, &lanes, active)?,
                "elect" => self.elect(d, act, &lanes, active)?,
                "activemask" => self.active_mask(d, act, &lanes, active)?,
                _ => self.reduce(d, act, &lanes, active)?,
            }
        }
        Ok(())
    }

    /// `shfl.sync` (see [`crate::warp_shuffle`]): each active lane reads its source lane's value.
    fn shuffle(&mut self, d: &InstData, act: &[bool], lanes: &[usize], active: u32) -> Res<()> {
        let lane_of = |t: usize| (t % 32) as u32;
        let mode = d
            .mods
            .get(1)
            .and_then(|m| crate::warp_shuffle::Mode::parse(m))
            .ok_or_else(|| format!("{}: no shuffle mode", d.mnemonic()))?;
        let src = op(d, 1)?;
        let a: Vec<u64> = lanes
            .iter()
            .map(|&t| if act[t] { self.value(t, src) } else { Ok(0) })
            .collect::<Res<_>>()?;
        for &t in lanes.iter().filter(|t| act[**t]) {
            let b = self.value(t, op(d, 2)?)? as u32;
            let c = self.value(t, op(d, 3)?)? as u32;
            let (j, ok) = crate::warp_shuffle::source_lane(mode, lane_of(t), b, c);
            if active & (1 << j) == 0 {
                return Err(fault!(
                    "{}: lane {} reads lane {j}, which is not active",
                    d.mnemonic(),
                    lane_of(t)
                ));
            }
            match op(d, 0)? {
                Operand::PredPair(r, p) => {
                    let (r, p) = (*r, *p);
                    self.set(t, &Operand::Reg(r), a[j as usize], 32)?;
                    self.set(t, &Operand::Reg(p), u64::from(ok), 1)?;
                }
                o => {
                    let o = o.clone();
                    self.set(t, &o, a[j as usize], 32)?;
                }
            }
        }
        Ok(())
    }

    /// `vote.sync.{all,any,uni,ballot}` over the active lanes.
    fn vote(&mut self, d: &InstData, act: &[bool], lanes: &[usize], active: u32) -> Res<()> {
        let lane_of = |t: usize| (t % 32) as u32;
        let mut ballot = 0u32;
        for &t in lanes.iter().filter(|t| act[**t]) {
            if self.value(t, op(d, 1)?)? & 1 == 1 {
                ballot |= 1 << lane_of(t);
            }
        }
        let kind = d.mods.get(1).map_or("", |m| &**m);
        let v = match kind {
            "ballot" => u64::from(ballot),
            "all" => u64::from(ballot == active),
            "any" => u64::from(ballot != 0),
            "uni" => u64::from(ballot == 0 || ballot == active),
            _ => {
                return Err(Fault::Unsupported(format!(
                    "{} is not supported by the host backend",
                    d.mnemonic()
                )))
            }
        };
        let bits = if kind == "ballot" { 32 } else { 1 };
        let dst = op(d, 0)?.clone();
        for &t in lanes.iter().filter(|t| act[**t]) {
            self.set(t, &dst, v, bits)?;
        }
        Ok(())
    }

    /// `elect.sync`: the lowest active lane of the member mask.
    fn elect(&mut self, d: &InstData, act: &[bool], lanes: &[usize], active: u32) -> Res<()> {
        let lane_of = |t: usize| (t % 32) as u32;
        let leader = active.trailing_zeros();
        let dst = op(d, 0)?.clone();
        for &t in lanes.iter().filter(|t| act[**t]) {
            let me = u64::from(lane_of(t) == leader);
            match &dst {
                Operand::PredPair(r, p) => {
                    self.set(t, &Operand::Reg(*r), u64::from(leader), 32)?;
                    self.set(t, &Operand::Reg(*p), me, 1)?;
                }
                o => self.set(t, o, me, 1)?,
            }
        }
        Ok(())
    }

    /// `activemask`: the active lanes.
    fn active_mask(&mut self, d: &InstData, act: &[bool], lanes: &[usize], active: u32) -> Res<()> {
        let dst = op(d, 0)?.clone();
        for &t in lanes.iter().filter(|t| act[**t]) {
            self.set(t, &dst, u64::from(active), 32)?;
        }
        Ok(())
    }

    /// `redux.sync.{add,min,max,and,or,xor}` over the active lanes.
    fn reduce(&mut self, d: &InstData, act: &[bool], lanes: &[usize], _active: u32) -> Res<()> {
        // redux.sync.op.type: over the active lanes.
        let ty = type_of(d);
        let signed = ty.starts_with('s');
        let vals: Vec<u64> = lanes
            .iter()
            .filter(|t| act[**t])
            .map(|&t| self.value(t, op(d, 1)?).map(|v| v & 0xffff_ffff))
            .collect::<Res<_>>()?;
        let key = |v: u64| {
            if signed {
                i64::from(v as u32 as i32)
            } else {
                v as i64
            }
        };
        let v = match d.mods.first().map_or("", |m| &**m) {
            "add" => vals.iter().fold(0u64, |a, v| a.wrapping_add(*v)) & 0xffff_ffff,
            "min" => *vals.iter().min_by_key(|v| key(**v)).unwrap_or(&0),
            "max" => *vals.iter().max_by_key(|v| key(**v)).unwrap_or(&0),
            "and" => vals.iter().fold(0xffff_ffff, |a, v| a & v),
            "or" => vals.iter().fold(0, |a, v| a | v),
            "xor" => vals.iter().fold(0, |a, v| a ^ v),
            _ => {
                return Err(Fault::Unsupported(format!(
                    "{} is not supported by the host backend",
                    d.mnemonic()
                )))
            }
        };
        let dst = op(d, 0)?.clone();
        for &t in lanes.iter().filter(|t| act[**t]) {
            self.set(t, &dst, v, 32)?;
        }
        Ok(())
    }
}
