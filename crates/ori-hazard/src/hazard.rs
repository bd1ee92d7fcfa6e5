//! What the checker reports: hazards as data, each naming the instruction,
//! the register and the wgmma involved, with a one-line rendering.
//!
//! The kinds split into those a correct pipeline after phase 87 must never
//! show ([`HazardKind::is_failing`]) and informational ones: patterns the PTX
//! ISA calls undefined but ptxas 13.0.88 is known to accept as they are, kept
//! apart so the main check states what phase 87 must guarantee.

use ori_ir::{Function, Inst, VReg};
use std::fmt;

/// The kinds of hazard.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum HazardKind {
    /// A non-wgmma instruction reads or writes an accumulator register of a
    /// wgmma that may still be in flight (not covered by a `wait_group` of a
    /// committed group containing it). PTX ISA `wgmma.wait_group` (seeds
    /// 000/001): "Accessing the accumulator register ... of a wgmma.mma_async
    /// instruction without first performing a wgmma.wait_group instruction
    /// that waits on a wgmma-group including that wgmma.mma_async instruction
    /// is undefined behavior."
    AccumulatorAccessInFlight,
    /// A non-wgmma instruction writes an A-fragment register of a wgmma that
    /// may still be in flight (same ISA sentence, "the input register
    /// containing the fragments of matrix A").
    AFragmentWriteInFlight,
    /// A wgmma is reached on some path without a fence (`wgmma.fence` or an
    /// injected `_warpgroup.arrive`) since function entry, or since an access
    /// to its accumulator / A-fragment registers that conflicts with it.
    /// PTX ISA `wgmma.fence`: it "must be issued ... Before the first
    /// wgmma.mma_async operation in a warpgroup" and "Between a register
    /// access by a thread in the warpgroup and any wgmma.mma_async instruction
    /// that accesses the same registers, either as accumulator or input
    /// register containing fragments of matrix A, except when these are
    /// accumulator register accesses across multiple wgmma.mma_async
    /// instructions of the same shape."
    ///
    /// Conflicting means at least one side writes: a non-wgmma read or write
    /// of the wgmma's accumulator (which the wgmma writes), a non-wgmma
    /// write of its A fragment, an accumulator access by a wgmma of another
    /// shape, or a register moving between the accumulator and A-fragment
    /// roles of two wgmmas. A read of a fragment the wgmma only reads orders
    /// nothing ([`HazardKind::AFragmentReadUnfenced`]).
    MissingFence,
    /// Informational (ptxas accepts this): a non-wgmma instruction *reads* an
    /// A-fragment register of a wgmma that may be in flight. The ISA sentence
    /// quoted for [`HazardKind::AccumulatorAccessInFlight`] makes any access
    /// undefined, but a read cannot disturb an operand the wgmma only reads,
    /// and ptxas 13.0.88 inserts nothing for it.
    AFragmentReadInFlight,
    /// Informational (ptxas accepts this): a wgmma reads an A-fragment
    /// register that a non-wgmma instruction only *read* since the last
    /// fence. The `wgmma.fence` sentence says "a register access", reads
    /// included, but there is no write to order, and ptxas 13.0.88 injects
    /// no arrive for plain reads of A fragments.
    AFragmentReadUnfenced,
}

impl HazardKind {
    /// Whether a correct pipeline must never show this kind (the
    /// informational kinds are the ones ptxas is known to accept).
    pub fn is_failing(self) -> bool {
        !matches!(
            self,
            HazardKind::AFragmentReadInFlight | HazardKind::AFragmentReadUnfenced
        )
    }

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            HazardKind::AccumulatorAccessInFlight => "AccumulatorAccessInFlight",
            HazardKind::AFragmentWriteInFlight => "AFragmentWriteInFlight",
            HazardKind::MissingFence => "MissingFence",
            HazardKind::AFragmentReadInFlight => "AFragmentReadInFlight",
            HazardKind::AFragmentReadUnfenced => "AFragmentReadUnfenced",
        }
    }
}

impl fmt::Display for HazardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One hazard.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Hazard {
    /// What is wrong.
    pub kind: HazardKind,
    /// Where it shows: the accessing instruction for the in-flight kinds,
    /// the unfenced wgmma for [`HazardKind::MissingFence`] and
    /// [`HazardKind::AFragmentReadUnfenced`].
    pub inst: Inst,
    /// The PTX line of `inst` (0 when unknown).
    pub line: u32,
    /// The register involved; `None` for a missing fence since entry.
    pub reg: Option<VReg>,
    /// The wgmma involved: the one possibly in flight for the in-flight
    /// kinds, the unfenced one (same as `inst`) for the fence kinds.
    pub wgmma: Inst,
    /// For the fence kinds, an earlier access to `reg` with no fence since
    /// on some path (a non-wgmma instruction, or a wgmma of another shape
    /// or role); `None` for a missing fence since entry.
    pub prior: Option<Inst>,
}

impl Hazard {
    /// One line naming the kind, the line, the register and the other party.
    pub fn describe(&self, f: &Function) -> String {
        let line_of = |i: Inst| f.insts[i].line;
        let text = |i: Inst| {
            let mut s = String::new();
            ori_ir::write::write_inst(&mut s, f, &f.insts[i]);
            s
        };
        let reg = self
            .reg
            .map(|r| format!(" register {}", f.vregs[r].name))
            .unwrap_or_default();
        match self.kind {
            HazardKind::MissingFence | HazardKind::AFragmentReadUnfenced => {
                let why = match self.prior {
                    Some(p) => format!(
                        "after `{}` (line {}) with no fence since",
                        text(p),
                        line_of(p)
                    ),
                    None => "with no fence since function entry".to_string(),
                };
                format!(
                    "{}: line {}:{reg} `{}` {why}",
                    self.kind,
                    self.line,
                    text(self.inst)
                )
            }
            _ => format!(
                "{}: line {}:{reg} `{}` while `{}` (line {}) may be in flight",
                self.kind,
                self.line,
                text(self.inst),
                text(self.wgmma),
                line_of(self.wgmma)
            ),
        }
    }
}
