//! `brx.idx`: each thread jumps to the block its index picks from the
//! instruction's list (PTX ISA 9.0: `pc = tlist[index]`).
//!
//! Threads that pick different blocks split several ways at once: as for a
//! divergent `bra` ([`super::diverge`]), the frame on top becomes the join
//! at the block's immediate post-dominator and each group runs from its
//! target until it gets there, the groups in the list's order (the first
//! on top). The ISA leaves an index past the list undefined; the host
//! backend stops there with a typed fault naming the index, the list's
//! length and the thread, rather than jump anywhere. `.uni` promises one
//! target for all: threads that pick several are refused as a divergent
//! `bra.uni` is.

use super::{Flow, Machine, Res};
use crate::reconvergence::{Frame, LaneMask};
use ori_ir::{Block, InstData, Operand};
use smallvec::SmallVec;

/// The threads going to each block, in the order the list first names it.
pub(super) type Sides = SmallVec<[(Block, LaneMask); 4]>;

impl Machine<'_> {
    /// Run a `brx.idx`: a jump when every live thread picks one block and
    /// none falls through, a split otherwise.
    pub(super) fn indexed_branch(&mut self, d: &InstData) -> Res<Flow> {
        let list = d
            .indexed_targets()
            .ok_or("brx.idx without a list of blocks")?;
        let index = d
            .slots
            .first()
            .map(|s| &s.op)
            .ok_or("brx.idx without an index")?;
        let act = self.active(d);
        let mut sides = Sides::new();
        for (t, _) in act.iter().enumerate().filter(|(_, a)| **a) {
            let k = self.value(t, index)? as u32 as usize;
            let Some(Operand::Block(b)) = list.get(k) else {
                return Err(format!(
                    "brx.idx index {k} is past its list of {} targets (thread {t})",
                    list.len()
                )
                .into());
            };
            match sides.iter_mut().find(|(x, _)| x == b) {
                Some((_, m)) => *m |= 1 << t,
                None => sides.push((*b, 1 << t)),
            }
        }
        let lanes = self.wg.lanes();
        let taken = sides.iter().fold(0, |m, (_, s)| m | s);
        if d.has_mod("uni") && (sides.len() > 1 || (taken != 0 && taken != lanes)) {
            return Err(
                "brx.idx.uni taken to several targets: it promises a uniform branch".into(),
            );
        }
        Ok(match sides.as_slice() {
            [] => Flow::Next,
            [(b, m)] if *m == lanes => Flow::Jump(*b),
            _ => Flow::Scatter(sides),
        })
    }
}

/// The threads of a `brx.idx` at the end of block `b` split into `sides`
/// (those not in any, their guard false, fall through); all meet at `b`'s
/// immediate post-dominator, as at a divergent `bra`.
pub(super) fn scatter(mach: &mut Machine<'_>, b: Block, sides: &Sides) {
    let f = mach.f;
    let join = mach.pdom.ipdom(b);
    let fall = f.layout.next_block(b);
    let Some(top) = mach.wg.stack.last_mut() else {
        return;
    };
    let rest = top.lanes & !sides.iter().fold(0, |m, (_, s)| m | s);
    if join.is_some() && top.until == join {
        mach.wg.stack.pop();
    } else if let Some(j) = join {
        top.at = (j, 0);
    }
    match fall {
        Some(fb) if rest != 0 && Some(fb) != join => mach.wg.stack.push(Frame {
            at: (fb, 0),
            lanes: rest,
            until: join,
        }),
        None if rest != 0 => mach.wg.exit(rest),
        _ => {}
    }
    // Pushed last to first, so that the list's first target runs first.
    for &(target, lanes) in sides.iter().rev() {
        if Some(target) != join {
            mach.wg.stack.push(Frame {
                at: (target, 0),
                lanes,
                until: join,
            });
        }
    }
}
