//! Functions, virtual registers, blocks and modules: the definition tables.
//!
//! A `Function` owns `PrimaryMap`s of blocks, instructions and virtual
//! registers plus a `Layout` giving their order; analysis results that later
//! passes consume (phase 85's accumulator sets) hang off the function so the
//! text form can show them and the tests can snapshot them.

use crate::consts::REG_CLASS_TENSOR;
use crate::entities::{AccumSet, Block, FuncId, Inst, VReg};
use crate::instructions::InstData;
use crate::layout::Layout;
use crate::register_names::RegisterNames;
use crate::symbol::Symbol;
use compact_str::CompactString;
use cranelift_entity::{PrimaryMap, SecondaryMap};
use indexmap::IndexMap;
use smallvec::SmallVec;
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash with a final avalanche, for tables keyed by PTX names.
///
/// FxHash alone (fxhash 0.2) leaves the low bits of a short string's hash,
/// from which hashbrown picks the bucket, depending on little more than the
/// string's first bytes, so names that differ only in their trailing digits
/// (`%r1234`, `%r1299`, ...) pile into a few buckets: a function of a million
/// registers then spent seconds of its lowering in `memcmp`. The splitmix64
/// finalizer spreads every input bit over the whole hash.
#[derive(Default, Clone)]
pub struct NameHasher(fxhash::FxHasher);

impl Hasher for NameHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.0.write_u8(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.0.write_usize(i);
    }

    #[inline]
    fn finish(&self) -> u64 {
        let mut z = self.0.finish();
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e9b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A hash map keyed by names (registers, labels), hashed with [`NameHasher`].
pub type NameMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<NameHasher>>;

/// A hash set of names (labels, symbols), hashed with [`NameHasher`].
pub type NameSet<K> = std::collections::HashSet<K, BuildHasherDefault<NameHasher>>;

/// Register class of a virtual register. The numbers are ori's, except
/// `Tensor = 6`, which is ptxas's accumulator class (seed 003, `vreg+64 == 6`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum RegClass {
    /// `.pred`
    Pred = 1,
    /// 16-bit: `.b16`, `.u16`, `.s16`, `.f16`
    R16 = 2,
    /// 32-bit: `.b32`, `.u32`, `.s32`, `.f32`, `.f16x2`, `.bf16x2`
    R32 = 3,
    /// 64-bit: `.b64`, `.u64`, `.s64`, `.f64`
    R64 = 4,
    /// 128-bit: `.b128`
    R128 = 5,
    /// Tensor / accumulator registers of a wgmma (class 6 in ptxas).
    Tensor = REG_CLASS_TENSOR,
}

impl RegClass {
    /// Class of a PTX register type.
    pub fn of_ptx_type(ty: &str) -> Option<RegClass> {
        Some(match ty {
            "pred" => RegClass::Pred,
            "b8" | "u8" | "s8" | "b16" | "u16" | "s16" | "f16" | "bf16" => RegClass::R16,
            "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "e4m3x2" | "e5m2x2" => {
                RegClass::R32
            }
            "b64" | "u64" | "s64" | "f64" => RegClass::R64,
            "b128" => RegClass::R128,
            _ => return None,
        })
    }
    /// The class number.
    pub fn number(self) -> u8 {
        self as u8
    }
    /// Class from its number.
    pub fn from_number(n: u8) -> Option<RegClass> {
        Some(match n {
            1 => RegClass::Pred,
            2 => RegClass::R16,
            3 => RegClass::R32,
            4 => RegClass::R64,
            5 => RegClass::R128,
            6 => RegClass::Tensor,
            _ => return None,
        })
    }
}

/// A virtual register.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VRegData {
    /// The PTX name (`%r12`, `d0`): inline up to 24 bytes, so declaring a
    /// register allocates nothing.
    pub name: CompactString,
    /// The PTX type without the dot (`f32`), interned: a kernel has a
    /// million registers and a handful of types.
    pub ty: Symbol,
    /// Register class; wgmma accumulators are `Tensor`.
    pub class: RegClass,
}

/// A basic block.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct BlockData {
    /// The PTX label that starts it, if any.
    pub label: Option<Box<str>>,
    /// `.pragma "nounroll";` stands in this block: ptxas keeps a loop
    /// headed here whole (text form: `nounroll` after the block's label).
    pub nounroll: bool,
}

/// A parameter of a function.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Param {
    /// Name.
    pub name: Box<str>,
    /// Type and qualifiers as written (`.u64 .ptr .global .align 16`).
    pub ty: Box<str>,
}

/// Entry point or device function.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum FuncKind {
    /// `.entry`
    Entry,
    /// `.func`
    Func,
}

/// Phase 85's results: the interned accumulator register sets and what is in
/// flight at each block's entry (set indices).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct GmmaFacts {
    /// Accumulator register sets, each sorted by register.
    pub sets: crate::AccumSetPool,
    /// Sets in flight (issued, not yet covered by a wait) at block entry.
    pub in_flight_at_entry: SecondaryMap<Block, SmallVec<[AccumSet; 4]>>,
    /// Maximum number of simultaneously active accumulator live ranges seen.
    pub max_active: u32,
}

/// Why phase 87 serialized a function's wgmma pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Serialization {
    /// The reason (its message code, words and help).
    pub code: crate::serialization::SerializationCode,
    /// C7511 from an accumulator register shared: written by another
    /// instruction between wgmma accumulating into it, or in sets that
    /// overlap. Waiting does not cure it (the fix-it gives each wgmma a set
    /// of its own); too many registers in flight is the other C7511.
    pub shared_accumulators: bool,
}

/// One decision a pass made, with the rule that made it (phase 87's
/// `R-...` names): what `--print-after` shows under the function and what
/// `cargo xtask docs` counts over the corpora (docs/rules.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleUse {
    /// The rule's name (`R-wait-before-read`).
    pub rule: &'static str,
    /// What was decided (`wait`, `arrive`, `serialize C7514`...).
    pub what: &'static str,
    /// The PTX line of the instruction it was decided at (0: the function).
    pub line: u32,
}

/// A function.
#[derive(Clone, Debug)]
pub struct Function {
    /// Name.
    pub name: Box<str>,
    /// `.entry` or `.func`.
    pub kind: FuncKind,
    /// Linkage (`visible`, `extern`, `weak`) if written.
    pub linkage: Option<Box<str>>,
    /// Return parameters.
    pub ret_params: Vec<Param>,
    /// Parameters.
    pub params: Vec<Param>,
    /// Whether a body was given (an `.extern .func` prototype has none).
    pub has_body: bool,
    /// Virtual registers.
    pub vregs: PrimaryMap<VReg, VRegData>,
    /// Blocks.
    pub blocks: PrimaryMap<Block, BlockData>,
    /// Instructions.
    pub insts: PrimaryMap<Inst, InstData>,
    /// Order of blocks and instructions.
    pub layout: Layout,
    /// PTX source line of the function header.
    pub line: u32,
    /// Phase 85's facts, once it ran.
    pub gmma: Option<GmmaFacts>,
    /// `.maxnreg N`: the function's per-thread register limit, if it sets one.
    pub max_regs: Option<u32>,
    /// The launch bounds besides `.maxnreg`: `.maxntid`, `.reqntid` and
    /// `.minnctapersm` with their values, as written (names without the dot).
    pub launch_bounds: Vec<(Box<str>, Vec<u32>)>,
    /// Set by phase 87 when it serialized the wgmma pipeline, with why.
    pub serialized: Option<Serialization>,
    /// The decisions of the passes that ran, in the order they were applied.
    pub decisions: Vec<RuleUse>,
    names: RegisterNames,
}

impl Function {
    /// An empty function.
    pub fn new(name: &str, kind: FuncKind) -> Self {
        Function {
            name: name.into(),
            kind,
            linkage: None,
            ret_params: Vec::new(),
            params: Vec::new(),
            has_body: true,
            vregs: PrimaryMap::new(),
            blocks: PrimaryMap::new(),
            insts: PrimaryMap::new(),
            layout: Layout::new(),
            line: 0,
            gmma: None,
            max_regs: None,
            launch_bounds: Vec::new(),
            serialized: None,
            decisions: Vec::new(),
            names: RegisterNames::default(),
        }
    }

    /// Whether ptxas can tell the per-thread register count this function
    /// starts with, which `setmaxnreg` changes: from `.maxnreg`, from
    /// `-maxrregcount`, or from a thread count (`.maxntid` or `.reqntid`)
    /// together with `.minnctapersm`; either bound alone does not fix it
    /// (`tests/corpus/c7508_*`, `clean_setmaxnreg_*`).
    pub fn register_count_at_entry_known(&self, maxrregcount: Option<u32>) -> bool {
        let has = |name: &str| self.launch_bounds.iter().any(|(n, _)| &**n == name);
        self.max_regs.is_some()
            || maxrregcount.is_some()
            || ((has("maxntid") || has("reqntid")) && has("minnctapersm"))
    }

    /// Declare a register; returns the existing one if the name is taken.
    pub fn declare_reg(&mut self, name: &str, ty: &str, class: RegClass) -> VReg {
        if let Some(r) = self.names.get(name) {
            return r;
        }
        let r = self.vregs.push(VRegData {
            name: name.into(),
            ty: Symbol::new(ty),
            class,
        });
        self.names.insert(name, r);
        r
    }

    /// Declare `name`, which is not declared yet ([`Function::reg`] finds
    /// nothing), with an interned type: what [`Function::declare_reg`]
    /// does for a new name, without looking it up again.
    pub fn declare_new_reg(&mut self, name: &str, ty: Symbol, class: RegClass) -> VReg {
        debug_assert!(self.names.get(name).is_none(), "{name} declared twice");
        let r = self.vregs.push(VRegData {
            name: name.into(),
            ty,
            class,
        });
        self.names.insert(name, r);
        r
    }

    /// Declare registers `prefix0` .. `prefix{count-1}` of a range noted
    /// with [`Function::declare_range`], in order, skipping names already
    /// declared: the same registers as [`Function::declare_reg`] for each
    /// name, at a fraction of the cost.
    pub fn declare_range_regs(&mut self, prefix: &str, count: u64, ty: &str, class: RegClass) {
        let ty = Symbol::new(ty);
        let vregs = &mut self.vregs;
        self.names.fill_range(prefix, count, |name, _| {
            vregs.push(VRegData {
                name: name.into(),
                ty,
                class,
            })
        });
    }

    /// Note a `.reg` range `prefix<count>` (declaring none of its
    /// registers): its members' names are then kept in a dense table, so
    /// that looking them up stays in cache however many there are
    /// ([`RegisterNames`]).
    pub fn declare_range(&mut self, prefix: &str, count: u64) {
        self.names.declare_range(prefix, count);
    }

    /// Look a register up by name.
    #[inline]
    pub fn reg(&self, name: &str) -> Option<VReg> {
        self.names.get(name)
    }

    /// Create a block and append it to the layout.
    pub fn append_block(&mut self, label: Option<&str>) -> Block {
        let b = self.blocks.push(BlockData {
            label: label.map(Into::into),
            nounroll: false,
        });
        self.layout.append_block(b);
        b
    }

    /// Renumber the blocks: `order[k]` becomes block `k`. `order` holds
    /// every block once. Branch targets follow their blocks; the layout
    /// (which block comes after which, and the instructions of each) stays
    /// as it was. A front end that creates blocks in another order than the
    /// one it promises (the streamed lowering makes a label's block when it
    /// meets the label, the whole-tree one before the body) calls this once
    /// at the end.
    pub fn renumber_blocks(&mut self, order: &[Block]) {
        let all = self.insts.keys();
        self.renumber(order, all);
    }

    /// [`Function::renumber_blocks`] where the caller knows which
    /// instructions name blocks (`users`; the others are not read): the
    /// PTX front end lists them as it makes them, so that on a function of
    /// a million instructions the renumbering reads the branches, not every
    /// instruction.
    ///
    /// # Panics
    /// If `order` is not a permutation of the blocks.
    pub fn renumber_blocks_named_by(&mut self, order: &[Block], users: &[Inst]) {
        self.renumber(order, users.iter().copied());
    }

    fn renumber(&mut self, order: &[Block], users: impl IntoIterator<Item = Inst>) {
        use cranelift_entity::packed_option::ReservedValue;
        use cranelift_entity::EntityRef;
        assert_eq!(
            order.len(),
            self.blocks.len(),
            "renumber_blocks: not a permutation"
        );
        if order
            .iter()
            .enumerate()
            .all(|(k, b)| b.as_u32() as usize == k)
        {
            return;
        }
        let mut new_of = vec![Block::reserved_value(); order.len()];
        let mut blocks = PrimaryMap::with_capacity(order.len());
        for &old in order {
            new_of[old.index()] = blocks.push(std::mem::take(&mut self.blocks[old]));
        }
        assert!(
            new_of.iter().all(|b| !b.is_reserved_value()),
            "renumber_blocks: not a permutation"
        );
        self.blocks = blocks;
        let map = |b: Block| new_of[b.index()];
        for i in users {
            for slot in self.insts[i].slots.iter_mut() {
                slot.op.map_blocks(&map);
            }
        }
        self.layout.renumber_blocks(map);
    }

    /// Create an instruction and append it to a block.
    pub fn append_inst(&mut self, b: Block, data: InstData) -> Inst {
        let i = self.insts.push(data);
        self.layout.append_inst(i, b);
        i
    }

    /// Create an instruction and insert it before another.
    pub fn insert_before(&mut self, before: Inst, data: InstData) -> Inst {
        let i = self.insts.push(data);
        self.layout.insert_before(i, before);
        i
    }

    /// Create an instruction and insert it after another.
    pub fn insert_after(&mut self, after: Inst, data: InstData) -> Inst {
        let i = self.insts.push(data);
        self.layout.insert_after(i, after);
        i
    }

    /// The name used for a block in the text form: its label, else `bbN`
    /// with N its position in the layout (stable across a print/parse round trip).
    pub fn block_name(&self, b: Block) -> String {
        match &self.blocks[b].label {
            Some(l) => l.to_string(),
            None => format!("bb{}", self.layout.block_position(b)),
        }
    }

    /// Number of laid-out instructions.
    pub fn inst_count(&self) -> usize {
        self.layout
            .blocks()
            .iter()
            .map(|b| self.layout.block_insts(*b).len())
            .sum()
    }
}

/// A PTX module: header, module-scope declarations and functions.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// `.version` major, minor.
    pub version: (u32, u32),
    /// `.target` list (`sm_90a`, ...).
    pub target: Vec<Box<str>>,
    /// `.address_size`.
    pub address_size: u32,
    /// Module-scope declarations kept verbatim (one per line, without `;`).
    pub globals: Vec<Box<str>>,
    /// Functions in declaration order.
    pub funcs: PrimaryMap<FuncId, Function>,
    /// Function lookup by name, in declaration order.
    pub by_name: IndexMap<Box<str>, FuncId>,
}

impl Module {
    /// Add a function; a later definition of a declared name replaces the declaration.
    pub fn add_function(&mut self, f: Function) -> FuncId {
        if let Some(id) = self.by_name.get(&f.name).copied() {
            if !self.funcs[id].has_body {
                self.funcs[id] = f;
                return id;
            }
        }
        let name = f.name.clone();
        let id = self.funcs.push(f);
        self.by_name.insert(name, id);
        id
    }

    /// Whether the target list names an architecture with wgmma (`sm_90a`).
    pub fn has_wgmma(&self) -> bool {
        self.target.iter().any(|t| &**t == "sm_90a")
    }

    /// The architecture named by `.target`.
    pub fn arch(&self) -> &str {
        self.target
            .iter()
            .find(|t| t.starts_with("sm_"))
            .map_or("", |t| t)
    }
}

#[cfg(test)]
mod tests {
    use crate::builder::ModuleBuilder;
    use crate::{Block, FuncKind, Function};
    use cranelift_entity::EntityRef;

    /// Four blocks, each branching to the next; `ret` at the end.
    fn chain() -> Function {
        let mb = ModuleBuilder::new("sm_90a");
        let mut fb = mb.function("k", FuncKind::Entry);
        let r = fb.reg("r", "b32");
        let blocks: Vec<_> = (0..4).map(|_| fb.create_block(None)).collect();
        for (k, &b) in blocks.iter().enumerate() {
            fb.switch_to_block(b);
            fb.op("add.s32", r, &[r.into(), r.into()]);
            match blocks.get(k + 1) {
                Some(&next) => fb.bra(next, None),
                None => fb.ret(),
            };
        }
        fb.finish()
    }

    /// Renumbering from the branches alone gives what renumbering from
    /// every instruction gives: targets follow their blocks, the layout
    /// keeps its order, and the function verifies.
    #[test]
    fn renumbering_from_the_branches_alone_is_renumbering() {
        let order: Vec<Block> = [2, 0, 3, 1].into_iter().map(Block::new).collect();
        let mut all = chain();
        let before = all.layout.blocks().to_vec();
        all.renumber_blocks(&order);
        let mut named = chain();
        let users: Vec<_> = named
            .insts
            .iter()
            .filter(|(_, d)| d.slots.iter().any(|s| s.op.names_block()))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(users.len(), 3);
        named.renumber_blocks_named_by(&order, &users);
        assert_eq!(
            crate::function_to_string(&all),
            crate::function_to_string(&named)
        );
        // Old block 2 is block 0 now, and so on; the layout is the same
        // blocks in the same order.
        let new_of = |b: Block| Block::new(order.iter().position(|o| *o == b).unwrap());
        let renamed: Vec<Block> = before.iter().map(|b| new_of(*b)).collect();
        assert_eq!(named.layout.blocks(), &renamed[..]);
        for &b in named.layout.blocks() {
            for &i in named.layout.block_insts(b) {
                assert_eq!(named.layout.inst_block(i), Some(b));
            }
            assert_eq!(
                named.layout.block_position(b),
                renamed.iter().position(|x| *x == b).unwrap() as u32
            );
        }
        let first = named.layout.block_insts(renamed[0])[1];
        assert_eq!(named.insts[first].branch_target(), Some(renamed[1]));
        assert!(crate::verify_function(&named).is_empty());
    }
}
