//! Instructions and operands.
//!
//! The GMMA family gets its own opcodes (with the Ori numbers the passes key
//! on); every other PTX instruction is kept generically — mnemonic, dotted
//! modifiers, and operands that each know whether they are defined, used or
//! both — which is all phases 85 and 87 need to see of them.

use crate::consts::*;
use crate::entities::{AccumSet, Block, VReg};
use crate::modifiers::ModList;
use crate::symbol::Symbol;
use smallvec::SmallVec;

/// What kind of instruction this is, as far as the passes care
/// (`Default`: [`Opcode::Generic`], so that a table of opcodes can be a
/// `SecondaryMap`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum Opcode {
    /// `wgmma.mma_async` (Ori 309).
    WgmmaMmaAsync,
    /// `wgmma.fence` written by the programmer (lowers to `WARPGROUP.ARRIVE`).
    WgmmaFence,
    /// `wgmma.commit_group` written by the programmer.
    WgmmaCommitGroup,
    /// `wgmma.wait_group N` written by the programmer (lowers to `WARPGROUP.DEPBAR.LE`).
    WgmmaWaitGroup,
    /// `_warpgroup.arrive`, created by phase 87 (Ori 271 | arrive variant).
    WarpgroupArrive,
    /// `_warpgroup.wait`, created by phase 87 (Ori 271 | wait variant).
    WarpgroupWait,
    /// `_warpgroup.commit_batch`, created by phase 87 (Ori 323).
    WarpgroupCommitBatch,
    /// `call` (Ori 236).
    Call,
    /// `bra`: a jump, conditional when predicated.
    Branch,
    /// `brx.idx INDEX, {TARGETS}`: a jump to the block its index picks
    /// from a list (a `.branchtargets` list in PTX), conditional when
    /// predicated.
    IndexedBranch,
    /// `ret` / `exit`.
    Return,
    /// Any other PTX instruction.
    #[default]
    Generic,
}

impl Opcode {
    /// The Ori opcode number, where the seed gives one.
    pub fn ori_number(self) -> Option<u32> {
        match self {
            Opcode::WgmmaMmaAsync => Some(ORI_OP_WGMMA_MMA_ASYNC),
            Opcode::WarpgroupCommitBatch | Opcode::WgmmaCommitGroup => {
                Some(ORI_OP_WARPGROUP_COMMIT_BATCH)
            }
            Opcode::WarpgroupArrive | Opcode::WgmmaFence => {
                Some(ORI_OP_WARPGROUP_SYNC | ORI_VARIANT_ARRIVE)
            }
            Opcode::WarpgroupWait | Opcode::WgmmaWaitGroup => {
                Some(ORI_OP_WARPGROUP_SYNC | ORI_VARIANT_WAIT)
            }
            Opcode::Call => Some(ORI_OP_CALL),
            _ => None,
        }
    }

    /// True for an arrive-like instruction (fence or injected arrive).
    pub fn is_arrive(self) -> bool {
        matches!(self, Opcode::WgmmaFence | Opcode::WarpgroupArrive)
    }

    /// True for a wait-like instruction (wait_group or injected wait).
    pub fn is_wait(self) -> bool {
        matches!(self, Opcode::WgmmaWaitGroup | Opcode::WarpgroupWait)
    }

    /// True for a commit-like instruction.
    pub fn is_commit(self) -> bool {
        matches!(
            self,
            Opcode::WgmmaCommitGroup | Opcode::WarpgroupCommitBatch
        )
    }

    /// True for the GMMA family (the wgmma itself and its sync ops).
    pub fn is_gmma_family(self) -> bool {
        self == Opcode::WgmmaMmaAsync || self.is_arrive() || self.is_wait() || self.is_commit()
    }

    /// Classify a PTX base mnemonic (the part before the first dot).
    pub fn classify(base: &str, first_modifier: Option<&str>) -> Opcode {
        match (base, first_modifier) {
            ("wgmma", Some("mma_async")) => Opcode::WgmmaMmaAsync,
            ("wgmma", Some("fence")) => Opcode::WgmmaFence,
            ("wgmma", Some("commit_group")) => Opcode::WgmmaCommitGroup,
            ("wgmma", Some("wait_group")) => Opcode::WgmmaWaitGroup,
            ("_warpgroup", Some("arrive")) => Opcode::WarpgroupArrive,
            ("_warpgroup", Some("wait")) => Opcode::WarpgroupWait,
            ("_warpgroup", Some("commit_batch")) => Opcode::WarpgroupCommitBatch,
            ("call", _) => Opcode::Call,
            ("bra", _) => Opcode::Branch,
            ("brx", Some("idx")) => Opcode::IndexedBranch,
            ("ret", _) | ("exit", _) => Opcode::Return,
            _ => Opcode::Generic,
        }
    }

    /// Whether the instruction ends its block.
    pub fn is_terminator(self) -> bool {
        matches!(
            self,
            Opcode::Branch | Opcode::IndexedBranch | Opcode::Return
        )
    }

    /// Whether the instruction jumps to a block it names (`bra`, `brx.idx`).
    pub fn is_branch(self) -> bool {
        matches!(self, Opcode::Branch | Opcode::IndexedBranch)
    }
}

/// The mnemonics [`Opcode::classify`] tells apart (any other is
/// [`Opcode::Generic`]), interned once: the front end builds every
/// instruction through [`InstData::interned`], and most are generic, which
/// comparing symbols finds with no text read.
fn classified_by_name() -> &'static [Symbol; 7] {
    static NAMES: std::sync::OnceLock<[Symbol; 7]> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        ["wgmma", "_warpgroup", "call", "bra", "brx", "ret", "exit"].map(Symbol::new)
    })
}

/// An immediate value, kept in the form PTX wrote it so printing is exact.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Imm {
    /// A (signed) integer, decimal in the text.
    Int(i64),
    /// An unsigned integer written in hex (`0x...`).
    Hex(u64),
    /// A `0fXXXXXXXX` single-precision bit pattern.
    F32(u32),
    /// A `0dXXXXXXXXXXXXXXXX` double-precision bit pattern.
    F64(u64),
}

impl Imm {
    /// The integer value, if the immediate is an integer.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Imm::Int(v) => Some(v),
            Imm::Hex(v) => Some(v as i64),
            _ => None,
        }
    }
}

/// Base of an address operand.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum AddrBase {
    /// `[%rd1+8]`
    Reg(VReg),
    /// `[smem+8]`, `[param]`
    Sym(Symbol),
    /// `[8]`: an absolute address.
    None,
}

/// One operand.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Operand {
    /// A virtual register.
    Reg(VReg),
    /// A predicate register used as a value, possibly negated (`!%p`).
    NotReg(VReg),
    /// A special register such as `%tid.x`, `%ctaid.y`, `%laneid`.
    Special(Symbol),
    /// An immediate.
    Imm(Imm),
    /// `[base+offset]`; the state space is in the modifiers.
    Addr {
        /// What the address is relative to: a register, a symbol, or nothing
        /// (an absolute address).
        base: AddrBase,
        /// The signed byte offset added to `base` (`-8` in `[%rd1-8]`; 0 when
        /// none is written); the whole address when `base` is `None`.
        offset: i64,
    },
    /// A block (label) target.
    Block(Block),
    /// A symbol: parameter, global variable, function name.
    Sym(Symbol),
    /// `{a, b, ...}`: a register vector (a boxed slice, not a `Vec`: 16
    /// bytes instead of 24 make every operand 24 bytes instead of 32).
    Vector(Box<[Operand]>),
    /// `(a, b, ...)`: a call argument list.
    Args(Box<[Operand]>),
    /// `p|q`: the two predicate results of `setp`.
    PredPair(VReg, VReg),
    /// `_`: a sink.
    Sink,
}

impl Operand {
    /// Calls `f` on every register this operand names (vectors, addresses, pairs included).
    pub fn for_each_reg(&self, f: &mut impl FnMut(VReg)) {
        match self {
            Operand::Reg(r) | Operand::NotReg(r) => f(*r),
            Operand::Addr {
                base: AddrBase::Reg(r),
                ..
            } => f(*r),
            Operand::Vector(v) | Operand::Args(v) => v.iter().for_each(|o| o.for_each_reg(f)),
            Operand::PredPair(a, b) => {
                f(*a);
                f(*b)
            }
            _ => {}
        }
    }

    /// Whether this operand names a block (vectors and argument lists
    /// included).
    pub fn names_block(&self) -> bool {
        match self {
            Operand::Block(_) => true,
            Operand::Vector(v) | Operand::Args(v) => v.iter().any(Operand::names_block),
            _ => false,
        }
    }

    /// Replaces every block this operand names (vectors and argument lists
    /// included) by `f` of it.
    pub fn map_blocks(&mut self, f: &impl Fn(Block) -> Block) {
        match self {
            Operand::Block(b) => *b = f(*b),
            Operand::Vector(v) | Operand::Args(v) => v.iter_mut().for_each(|o| o.map_blocks(f)),
            _ => {}
        }
    }

    /// The registers of this operand, in order.
    pub fn regs(&self) -> SmallVec<[VReg; 4]> {
        let mut out = SmallVec::new();
        self.for_each_reg(&mut |r| out.push(r));
        out
    }

    /// The Ori operand tag `(operand >> 28) & 7` this operand would carry.
    pub fn ori_tag(&self) -> u32 {
        match self {
            Operand::Reg(_) | Operand::NotReg(_) | Operand::Vector(_) | Operand::PredPair(..) => {
                OPERAND_TAG_REGISTER
            }
            Operand::Imm(_) => OPERAND_TAG_IMMEDIATE,
            _ => 0,
        }
    }
}

/// How an instruction touches an operand.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Role {
    /// Read only.
    Use,
    /// Written only.
    Def,
    /// Read and written (a wgmma accumulator).
    DefUse,
}

impl Role {
    /// Whether the operand is written.
    pub fn defines(self) -> bool {
        matches!(self, Role::Def | Role::DefUse)
    }
    /// Whether the operand is read.
    pub fn uses(self) -> bool {
        matches!(self, Role::Use | Role::DefUse)
    }
}

/// An operand with its role and the seed's per-operand flag bits.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Slot {
    /// The operand.
    pub op: Operand,
    /// Whether it is read, written or both.
    pub role: Role,
    /// `OPERAND_FLAG_*` bits (arrive processed, wait processed, needs a boundary).
    pub flags: u8,
}

impl Slot {
    /// A read operand.
    pub fn use_(op: Operand) -> Slot {
        Slot {
            op,
            role: Role::Use,
            flags: 0,
        }
    }
    /// A written operand.
    pub fn def(op: Operand) -> Slot {
        Slot {
            op,
            role: Role::Def,
            flags: 0,
        }
    }
    /// A read-and-written operand.
    pub fn def_use(op: Operand) -> Slot {
        Slot {
            op,
            role: Role::DefUse,
            flags: 0,
        }
    }
}

/// A guard predicate `@p` / `@!p`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Guard {
    /// The predicate register.
    pub reg: VReg,
    /// `@!p`
    pub negated: bool,
}

/// The accumulator sets phase 85 attaches to a wgmma: the one it reads (D
/// as an input; empty with `scale-d` 0) and the one it writes.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct AccumSets {
    /// The set the wgmma reads.
    pub src: AccumSet,
    /// The set the wgmma writes.
    pub dst: AccumSet,
}

impl AccumSets {
    /// ptxas's packed word for the set read: `0x90000000 | idx` (seed 003).
    pub fn src_word(self) -> u32 {
        ACCUM_SRC_TAG | (self.src.as_u32() & ACCUM_INDEX_MASK)
    }

    /// ptxas's packed word for the set written: `0x10000000 | idx`.
    pub fn dst_word(self) -> u32 {
        ACCUM_DST_TAG | (self.dst.as_u32() & ACCUM_INDEX_MASK)
    }

    /// The sets of two packed words, if each carries its tag (the `.ori`
    /// text's `!acc 0xSRC 0xDST`).
    pub fn from_words(src: u32, dst: u32) -> Option<AccumSets> {
        let index = |w: u32, tag: u32| {
            (w & !ACCUM_INDEX_MASK == tag).then(|| AccumSet::from_u32(w & ACCUM_INDEX_MASK))
        };
        Some(AccumSets {
            src: index(src, ACCUM_SRC_TAG)?,
            dst: index(dst, ACCUM_DST_TAG)?,
        })
    }
}

/// An instruction's operand list: three inline, more on the heap.
pub type Slots = SmallVec<[Slot; 3]>;

/// The data of one instruction.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct InstData {
    /// Classification.
    pub opcode: Opcode,
    /// Base mnemonic as written (`add`, `wgmma`, `_warpgroup`), interned.
    pub name: Symbol,
    /// Dotted modifiers without the dots (`["mma_async", "sync", ...]`),
    /// the whole list interned ([`ModList`]).
    pub mods: ModList,
    /// Guard predicate.
    pub guard: Option<Guard>,
    /// Operands in PTX order.
    pub slots: Slots,
    /// PTX source line (0 when unknown or compiler-created).
    pub line: u32,
    /// The statement's byte range `[lo, hi)` in the PTX source (`None` for
    /// compiler-created instructions and IR-text input): the fix-it edits
    /// the source by statement, not by line.
    pub src: Option<(u32, u32)>,
    /// Phase 85's accumulator sets (wgmma only).
    pub accum: Option<AccumSets>,
}

impl InstData {
    /// A new instruction; the opcode is derived from the mnemonic.
    pub fn new(
        name: &str,
        mods: &[&str],
        slots: impl IntoIterator<Item = Slot>,
        line: u32,
    ) -> Self {
        let opcode = Opcode::classify(name, mods.first().copied());
        InstData {
            opcode,
            name: Symbol::new(name),
            mods: ModList::from_strs(mods),
            guard: None,
            slots: slots.into_iter().collect(),
            line,
            src: None,
            accum: None,
        }
    }

    /// A new instruction from interned parts (what the PTX front end has
    /// already interned); the opcode is derived from the mnemonic.
    pub fn interned(
        name: Symbol,
        mods: ModList,
        slots: impl IntoIterator<Item = Slot>,
        line: u32,
    ) -> Self {
        let opcode = if classified_by_name().contains(&name) {
            Opcode::classify(name.as_str(), mods.first().map(|m| m.as_str()))
        } else {
            Opcode::Generic
        };
        InstData {
            opcode,
            name,
            mods,
            guard: None,
            slots: slots.into_iter().collect(),
            line,
            src: None,
            accum: None,
        }
    }

    /// `name.mod1.mod2...`
    pub fn mnemonic(&self) -> String {
        let mut s = String::new();
        self.write_mnemonic(&mut s);
        s
    }

    /// Append the full dotted mnemonic to `out` (no allocation of its own).
    pub fn write_mnemonic(&self, out: &mut String) {
        out.push_str(self.name.as_str());
        for m in &self.mods {
            out.push('.');
            out.push_str(m);
        }
    }

    /// Whether a modifier is present.
    pub fn has_mod(&self, m: &str) -> bool {
        self.mods.iter().any(|x| x.as_str() == m)
    }

    /// Registers this instruction reads (guard included).
    pub fn uses(&self) -> SmallVec<[VReg; 8]> {
        let mut out = SmallVec::new();
        self.for_each_use(|r| out.push(r));
        out
    }

    /// Calls `f` on each register [`InstData::uses`] lists, in its order,
    /// without collecting them (a wgmma reads up to 128).
    pub fn for_each_use(&self, mut f: impl FnMut(VReg)) {
        if let Some(g) = self.guard {
            f(g.reg);
        }
        for s in &self.slots {
            match (&s.op, s.role) {
                // An address operand always *reads* its base, even in a defining slot.
                (
                    Operand::Addr {
                        base: AddrBase::Reg(r),
                        ..
                    },
                    _,
                ) => f(*r),
                (op, role) if role.uses() => op.for_each_reg(&mut f),
                _ => {}
            }
        }
    }

    /// Registers this instruction writes.
    pub fn defs(&self) -> SmallVec<[VReg; 8]> {
        let mut out = SmallVec::new();
        self.for_each_def(|r| out.push(r));
        out
    }

    /// Calls `f` on each register [`InstData::defs`] lists, in its order,
    /// without collecting them.
    pub fn for_each_def(&self, mut f: impl FnMut(VReg)) {
        for s in &self.slots {
            if s.role.defines() && !matches!(s.op, Operand::Addr { .. }) {
                s.op.for_each_reg(&mut f);
            }
        }
    }

    /// Branch target, if this is a branch.
    pub fn branch_target(&self) -> Option<Block> {
        if self.opcode != Opcode::Branch {
            return None;
        }
        self.slots.iter().find_map(|s| match s.op {
            Operand::Block(b) => Some(b),
            _ => None,
        })
    }

    /// The blocks a `brx.idx` chooses from, in index order (`None` for
    /// another instruction, or one whose list is not a vector of blocks).
    pub fn indexed_targets(&self) -> Option<&[Operand]> {
        if self.opcode != Opcode::IndexedBranch {
            return None;
        }
        match &self.slots.get(1)?.op {
            Operand::Vector(v) if v.iter().all(|o| matches!(o, Operand::Block(_))) => Some(v),
            _ => None,
        }
    }

    /// Every block a branch may jump to (`bra`: its target; `brx.idx`:
    /// its list, each block once, in the list's order); empty for another
    /// instruction.
    pub fn branch_targets(&self) -> SmallVec<[Block; 2]> {
        let mut out: SmallVec<[Block; 2]> = SmallVec::new();
        if let Some(list) = self.indexed_targets() {
            for o in list {
                if let Operand::Block(b) = o {
                    if !out.contains(b) {
                        out.push(*b);
                    }
                }
            }
        } else if let Some(t) = self.branch_target() {
            out.push(t);
        }
        out
    }

    /// What a `call` calls: the operand after its return list (a symbol
    /// for a direct call, a register for an indirect one); `None` for
    /// another instruction.
    pub fn callee_operand(&self) -> Option<&Operand> {
        if self.opcode != Opcode::Call {
            return None;
        }
        self.slots
            .iter()
            .find(|s| !(matches!(s.op, Operand::Args(_)) && s.role == Role::Def))
            .map(|s| &s.op)
    }

    /// The function a direct `call` names (`call (r), f, (a)`); `None` for
    /// an indirect call or another instruction.
    pub fn direct_callee(&self) -> Option<&Symbol> {
        match self.callee_operand()? {
            Operand::Sym(n) => Some(n),
            _ => None,
        }
    }

    /// Whether this is an indirect `call`: through a register, naming a
    /// `.calltargets` list (kept as a vector of the functions) or a
    /// `.callprototype` (kept as its name) last.
    pub fn is_indirect_call(&self) -> bool {
        matches!(self.callee_operand(), Some(Operand::Reg(_)))
    }

    /// Whether this is a sparse `wgmma.mma_async.sp`.
    pub fn is_sparse_wgmma(&self) -> bool {
        self.opcode == Opcode::WgmmaMmaAsync
            && match self.wgmma_form() {
                Some(w) => w.sparse,
                None => self.has_mod("sp"),
            }
    }

    /// The form of a wgmma (`None` for another instruction, or modifiers
    /// that do not decode), decoded once per modifier list.
    pub fn wgmma_form(&self) -> Option<crate::WgmmaForm> {
        if self.opcode != Opcode::WgmmaMmaAsync {
            return None;
        }
        crate::WgmmaForm::of_list(self.mods).ok()
    }

    /// The operands of a wgmma by name (`None` for another instruction or
    /// a malformed wgmma); see [`crate::WgmmaOperands`].
    pub fn wgmma_operands(&self) -> Option<crate::WgmmaOperands<'_>> {
        crate::WgmmaOperands::of(self)
    }

    /// The `sp-meta` operand of a sparse wgmma: a 32-bit register, or a
    /// vector of them (ptxas 13.0.88 takes both).
    pub fn wgmma_sparse_metadata(&self) -> Option<&Operand> {
        self.wgmma_operands()?.sparse_metadata
    }

    /// Registers a wgmma reads that ptxas 13.0.88 orders like the A
    /// fragment: the A-fragment vector of the register-A form, and the
    /// sparse metadata. A write of either after a wgmma of the stage needs an
    /// arrive before the next wgmma that reads it (C7519; corpus
    /// `c7519_def_rega_between_mma`, `sparse_c7519_def_meta_between_mma`),
    /// and one a wgmma wrote since the last arrive serializes (C7513).
    /// Descriptors and `scale-d` are ordinary reads.
    pub fn wgmma_fragment_regs(&self) -> SmallVec<[VReg; 4]> {
        self.wgmma_operands()
            .map(|w| w.fragment_regs())
            .unwrap_or_default()
    }

    /// The integer immediate of `wgmma.wait_group N` / `_warpgroup.wait N`.
    pub fn wait_count(&self) -> Option<i64> {
        self.slots.first().and_then(|s| match s.op {
            Operand::Imm(i) => i.as_i64(),
            _ => None,
        })
    }
}
#[cfg(test)]
mod accum_tests {
    use super::*;
    use cranelift_entity::EntityRef;

    #[test]
    fn words_carry_the_seed_tags() {
        let s = AccumSets {
            src: AccumSet::new(5),
            dst: AccumSet::new(0x23_4567),
        };
        assert_eq!((s.src_word(), s.dst_word()), (0x9000_0005, 0x1023_4567));
        assert_eq!(AccumSets::from_words(s.src_word(), s.dst_word()), Some(s));
        // Each word must carry its own tag.
        assert_eq!(AccumSets::from_words(0x1000_0005, 0x1000_0005), None);
        assert_eq!(AccumSets::from_words(0x9000_0005, 0x9000_0005), None);
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// A kernel of a million instructions holds a million `InstData`: their
    /// size is most of ori's memory (issue 12 measured 256 bytes, 268 MB at
    /// 1M). Boxed-slice vectors made operands 24 bytes, and the interned
    /// modifier list (`ModList`) took the modifiers from 40 bytes to 4; this
    /// keeps it so.
    #[test]
    fn instructions_stay_small() {
        assert_eq!(std::mem::size_of::<Operand>(), 24);
        assert_eq!(std::mem::size_of::<Slot>(), 32);
        assert_eq!(std::mem::size_of::<crate::ModList>(), 4);
        assert!(std::mem::size_of::<InstData>() <= 152);
    }

    /// A mnemonic outside `classified_by_name` is generic with any first
    /// modifier, so `InstData::interned` may skip `Opcode::classify` for it.
    #[test]
    fn only_the_classified_names_have_opcodes_of_their_own() {
        let names = [
            "wgmma",
            "_warpgroup",
            "call",
            "bra",
            "brx",
            "ret",
            "exit",
            "mov",
            "ld",
            "st",
            "setp",
            "cp",
            "mbarrier",
            "barrier",
            "fence",
        ];
        let mods = [
            None,
            Some("mma_async"),
            Some("fence"),
            Some("commit_group"),
            Some("wait_group"),
            Some("arrive"),
            Some("wait"),
            Some("commit_batch"),
            Some("uni"),
            Some("idx"),
            Some("u32"),
        ];
        for name in names {
            let listed = super::classified_by_name().contains(&Symbol::new(name));
            for m in mods {
                let generic = Opcode::classify(name, m) == Opcode::Generic;
                assert!(listed || generic, "{name} {m:?}");
            }
            assert_eq!(listed, !generic_always(name, &mods), "{name}");
        }
    }

    fn generic_always(name: &str, mods: &[Option<&str>]) -> bool {
        mods.iter()
            .all(|&m| Opcode::classify(name, m) == Opcode::Generic)
    }
}
