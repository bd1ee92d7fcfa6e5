//! Building Ori IR without PTX text.
//!
//! A compiler that embeds ori makes its kernels as IR, not as text for ori
//! to parse back. [`ModuleBuilder`] and [`FunctionBuilder`] (after
//! Cranelift's `FunctionBuilder`) keep the bookkeeping in one place: the
//! register classes follow from the PTX types (accumulators are class 6),
//! instructions go at the end of the current block, every operand gets its
//! role (read, written, or both for a wgmma accumulator), and a wgmma is
//! described by its named operands ([`Wgmma`]) instead of slot positions.
//! The result is the same IR the PTX front end makes, so it verifies
//! ([`crate::verify_function`]), runs through the passes, prints as `.ori`
//! text and lowers to SASS text, PTX and the host backend.
//!
//! ```
//! use ori_ir::builder::{ModuleBuilder, Wgmma, WgmmaA};
//! use ori_ir::{ElemType, FuncKind, Operand};
//!
//! let mut mb = ModuleBuilder::new("sm_90a");
//! let mut f = mb.function("k", FuncKind::Entry);
//! f.param("p_out", "u64");
//! let out = f.reg("out", "b64");
//! let (da, db) = (f.reg("da", "b64"), f.reg("db", "b64"));
//! let acc = f.accumulators("d", "f32", 4);
//! let entry = f.create_block(None);
//! f.switch_to_block(entry);
//! f.op("ld.param.u64", out, &[Operand::param("p_out")]);
//! f.op("mov.b64", da, &[Operand::int(0)]);
//! f.op("mov.b64", db, &[Operand::int(0)]);
//! f.wgmma_fence();
//! f.wgmma(&Wgmma::new((64, 8, 16), ElemType::F32, ElemType::F16, acc.clone(), WgmmaA::Desc(da), db));
//! f.wgmma_commit_group();
//! f.wgmma_wait_group(0);
//! f.store("st.global.f32", Operand::at(out, 0), acc[0].into());
//! f.ret();
//! let module = mb.finish(f);
//! assert_eq!(module.funcs.len(), 1);
//! for (_, func) in module.funcs.iter() {
//!     assert!(ori_ir::verify_function(func).is_empty());
//! }
//! ```

use crate::instructions::{AddrBase, Guard, Imm, InstData, Operand, Slot};
use crate::wgmma_form::ElemType;
use crate::{Block, FuncKind, Function, Inst, Module, Param, RegClass, Symbol, VReg};
use smallvec::SmallVec;

impl From<VReg> for Operand {
    fn from(r: VReg) -> Operand {
        Operand::Reg(r)
    }
}

impl Operand {
    /// An integer immediate.
    pub fn int(v: i64) -> Operand {
        Operand::Imm(Imm::Int(v))
    }
    /// A single-precision immediate (`0fXXXXXXXX` in PTX).
    pub fn f32(v: f32) -> Operand {
        Operand::Imm(Imm::F32(v.to_bits()))
    }
    /// `[r+offset]`
    pub fn at(r: VReg, offset: i64) -> Operand {
        Operand::Addr {
            base: AddrBase::Reg(r),
            offset,
        }
    }
    /// `[name]`: a kernel parameter or a variable, as `ld.param` reads it.
    pub fn param(name: &str) -> Operand {
        Operand::Addr {
            base: AddrBase::Sym(Symbol::new(name)),
            offset: 0,
        }
    }
    /// A variable's address as a value (`mov.u32 r, smem;`).
    pub fn symbol(name: &str) -> Operand {
        Operand::Sym(Symbol::new(name))
    }
    /// A special register (`%tid.x`, `%ctaid.y`).
    pub fn special(name: &str) -> Operand {
        Operand::Special(Symbol::new(name))
    }
}

/// A module under construction: its header and module-scope variables.
#[derive(Debug)]
pub struct ModuleBuilder {
    module: Module,
}

impl ModuleBuilder {
    /// A module for `arch` (`sm_90a`), PTX ISA 8.0, 64-bit addresses.
    pub fn new(arch: &str) -> Self {
        ModuleBuilder {
            module: Module {
                version: (8, 0),
                target: vec![arch.into()],
                address_size: 64,
                ..Module::default()
            },
        }
    }

    /// Declare a module-scope variable, as PTX writes it without the `;`
    /// (`.shared .align 128 .b8 smem[16384]`).
    pub fn global(&mut self, decl: &str) {
        self.module.globals.push(decl.into());
    }

    /// Start a function; hand its builder back to [`ModuleBuilder::add`] or
    /// [`ModuleBuilder::finish`].
    pub fn function(&self, name: &str, kind: FuncKind) -> FunctionBuilder {
        FunctionBuilder::new(Function::new(name, kind))
    }

    /// Add a finished function.
    pub fn add(&mut self, f: FunctionBuilder) {
        self.module.add_function(f.func);
    }

    /// Add the last function and return the module.
    pub fn finish(mut self, f: FunctionBuilder) -> Module {
        self.add(f);
        self.module
    }

    /// The module so far, without adding another function.
    pub fn into_module(self) -> Module {
        self.module
    }
}

/// The operand A of a wgmma: a shared-memory matrix descriptor, or the
/// registers of a fragment.
#[derive(Clone, Debug)]
pub enum WgmmaA {
    /// A 64-bit matrix descriptor (`a-desc`).
    Desc(VReg),
    /// Registers holding the A fragment (`{a0, a1, a2, a3}`).
    Frag(Vec<VReg>),
}

/// A dense `wgmma.mma_async` by its named operands (PTX ISA 9.7.15.5.2):
/// `D = A * B + (scale-d ? D : 0)`, with the immediates given their
/// defaults by [`Wgmma::new`] (no negation, no transpose, scale-d 1).
#[derive(Clone, Debug)]
pub struct Wgmma {
    /// `(m, n, k)`: m is 64.
    pub shape: (u32, u32, u32),
    /// The accumulator type (`f32`, `f16`, `s32`).
    pub d_type: ElemType,
    /// The input type of A and B (`f16`, `bf16`, `tf32`, `e4m3`...).
    pub ab_type: ElemType,
    /// The accumulator registers, in fragment order.
    pub d: Vec<VReg>,
    /// A descriptor or fragment.
    pub a: WgmmaA,
    /// The B descriptor.
    pub b_desc: VReg,
    /// `scale-d`: a predicate register or the immediate 0/1 (0: D is not read).
    pub scale_d: Operand,
    /// `imm-scale-a`, `imm-scale-b`: 1 or -1 (half and tf32 types only).
    pub scale_ab: (i64, i64),
    /// `imm-trans-a`, `imm-trans-b`: 0 or 1 (f16/bf16 only; trans-a with a
    /// descriptor A only).
    pub trans: (i64, i64),
}

impl Wgmma {
    /// A wgmma with scale-d 1 (accumulate), scales 1 and no transpose.
    pub fn new(
        shape: (u32, u32, u32),
        d_type: ElemType,
        ab_type: ElemType,
        d: Vec<VReg>,
        a: WgmmaA,
        b_desc: VReg,
    ) -> Self {
        Wgmma {
            shape,
            d_type,
            ab_type,
            d,
            a,
            b_desc,
            scale_d: Operand::int(1),
            scale_ab: (1, 1),
            trans: (0, 0),
        }
    }

    /// The same with `scale-d` set (0: `D = A * B`, the first K step).
    pub fn scale_d(mut self, scale_d: Operand) -> Self {
        self.scale_d = scale_d;
        self
    }

    fn half(&self) -> bool {
        matches!(self.ab_type, ElemType::F16 | ElemType::Bf16)
    }

    fn data(&self) -> InstData {
        let (m, n, k) = self.shape;
        let shape = format!("m{m}n{n}k{k}");
        let ab = self.ab_type.ptx();
        let mods = [
            "mma_async",
            "sync",
            "aligned",
            &shape,
            self.d_type.ptx(),
            ab,
            ab,
        ];
        let mut slots = vec![Slot::def_use(Operand::Vector(
            self.d.iter().map(|r| Operand::Reg(*r)).collect(),
        ))];
        let desc_a = match &self.a {
            WgmmaA::Desc(r) => {
                slots.push(Slot::use_(Operand::Reg(*r)));
                true
            }
            WgmmaA::Frag(regs) => {
                slots.push(Slot::use_(Operand::Vector(
                    regs.iter().map(|r| Operand::Reg(*r)).collect(),
                )));
                false
            }
        };
        slots.push(Slot::use_(Operand::Reg(self.b_desc)));
        slots.push(Slot::use_(self.scale_d.clone()));
        if self.half() || self.ab_type == ElemType::Tf32 {
            slots.push(Slot::use_(Operand::int(self.scale_ab.0)));
            slots.push(Slot::use_(Operand::int(self.scale_ab.1)));
        }
        if self.half() {
            if desc_a {
                slots.push(Slot::use_(Operand::int(self.trans.0)));
            }
            slots.push(Slot::use_(Operand::int(self.trans.1)));
        }
        InstData::new("wgmma", &mods, slots, 0)
    }
}

/// Builds one function: registers, blocks, and instructions appended at the
/// end of the current block.
#[derive(Debug)]
pub struct FunctionBuilder {
    func: Function,
    current: Option<Block>,
    line: u32,
}

impl FunctionBuilder {
    /// Build into an empty function.
    pub fn new(func: Function) -> Self {
        FunctionBuilder {
            func,
            current: None,
            line: 0,
        }
    }

    /// The function so far.
    pub fn func(&self) -> &Function {
        &self.func
    }

    /// The finished function.
    pub fn finish(self) -> Function {
        self.func
    }

    /// Add a parameter of PTX type `ty` (`u64`, `b32`).
    pub fn param(&mut self, name: &str, ty: &str) {
        self.func.params.push(Param {
            name: name.into(),
            ty: format!(".{}", ty.trim_start_matches('.')).into(),
        });
    }

    /// Declare a register of PTX type `ty` (`b32`, `f32`, `pred`); its class
    /// follows from the type. A name declared before gives that register.
    ///
    /// # Panics
    /// On a type that is no PTX register type (a programming error).
    pub fn reg(&mut self, name: &str, ty: &str) -> VReg {
        let ty = ty.trim_start_matches('.');
        let class = RegClass::of_ptx_type(ty)
            .unwrap_or_else(|| panic!("`{ty}` is not a PTX register type"));
        self.func.declare_reg(name, ty, class)
    }

    /// Declare `n` accumulator registers `{prefix}0..{prefix}{n-1}` of type
    /// `ty` (class 6, as the PTX front end makes a wgmma's D).
    pub fn accumulators(&mut self, prefix: &str, ty: &str, n: usize) -> Vec<VReg> {
        (0..n)
            .map(|k| {
                self.func
                    .declare_reg(&format!("{prefix}{k}"), ty, RegClass::Tensor)
            })
            .collect()
    }

    /// Create a block at the end of the layout (a label for branches to
    /// name, or `None`).
    pub fn create_block(&mut self, label: Option<&str>) -> Block {
        self.func.append_block(label)
    }

    /// Append instructions to `b` from now on.
    pub fn switch_to_block(&mut self, b: Block) {
        self.current = Some(b);
    }

    /// The source line the next instructions carry (diagnostics name it).
    pub fn set_line(&mut self, line: u32) {
        self.line = line;
    }

    /// Append an instruction: `mnemonic` is dotted (`add.s32`,
    /// `ld.global.f32`), `slots` its operands with their roles.
    ///
    /// # Panics
    /// When no block was selected with [`FunctionBuilder::switch_to_block`].
    pub fn inst(&mut self, mnemonic: &str, slots: Vec<Slot>) -> Inst {
        let mut parts = mnemonic.split('.');
        let name = parts.next().unwrap_or_default();
        let mods: SmallVec<[&str; 8]> = parts.collect();
        let data = InstData::new(name, &mods, slots, self.line);
        self.push(data)
    }

    fn push(&mut self, mut data: InstData) -> Inst {
        let b = self
            .current
            .expect("FunctionBuilder: switch_to_block before adding instructions");
        data.line = self.line;
        self.func.append_inst(b, data)
    }

    /// `mnemonic dst, srcs...;`: the common shape (one result first).
    pub fn op(&mut self, mnemonic: &str, dst: VReg, srcs: &[Operand]) -> Inst {
        let mut slots = vec![Slot::def(Operand::Reg(dst))];
        slots.extend(srcs.iter().cloned().map(Slot::use_));
        self.inst(mnemonic, slots)
    }

    /// The same under a guard (`@p` / `@!p`).
    pub fn op_if(&mut self, guard: Guard, mnemonic: &str, dst: VReg, srcs: &[Operand]) -> Inst {
        let i = self.op(mnemonic, dst, srcs);
        self.func.insts[i].guard = Some(guard);
        i
    }

    /// Put instruction `i` under a guard (`@p` / `@!p`).
    pub fn set_guard(&mut self, i: Inst, guard: Guard) {
        self.func.insts[i].guard = Some(guard);
    }

    /// `st... [addr], value;`
    pub fn store(&mut self, mnemonic: &str, addr: Operand, value: Operand) -> Inst {
        self.inst(mnemonic, vec![Slot::use_(addr), Slot::use_(value)])
    }

    /// `bra target;`, or `@guard bra target;`.
    pub fn bra(&mut self, target: Block, guard: Option<Guard>) -> Inst {
        let i = self.inst("bra", vec![Slot::use_(Operand::Block(target))]);
        self.func.insts[i].guard = guard;
        i
    }

    /// `brx.idx index, {targets}` (`.uni` when `uniform`): a jump to
    /// `targets[index]`.
    pub fn brx_idx(
        &mut self,
        index: Operand,
        targets: &[Block],
        uniform: bool,
        guard: Option<Guard>,
    ) -> Inst {
        let list = targets.iter().map(|&b| Operand::Block(b)).collect();
        let name = if uniform { "brx.idx.uni" } else { "brx.idx" };
        let slots = vec![Slot::use_(index), Slot::use_(Operand::Vector(list))];
        let i = self.inst(name, slots);
        self.func.insts[i].guard = guard;
        i
    }

    /// `ret;`
    pub fn ret(&mut self) -> Inst {
        self.inst("ret", vec![])
    }

    /// `bar.sync 0;`
    pub fn bar_sync(&mut self) -> Inst {
        self.inst("bar.sync", vec![Slot::use_(Operand::int(0))])
    }

    /// `wgmma.fence.sync.aligned;`
    pub fn wgmma_fence(&mut self) -> Inst {
        self.inst("wgmma.fence.sync.aligned", vec![])
    }

    /// `wgmma.commit_group.sync.aligned;`
    pub fn wgmma_commit_group(&mut self) -> Inst {
        self.inst("wgmma.commit_group.sync.aligned", vec![])
    }

    /// `wgmma.wait_group.sync.aligned n;`
    pub fn wgmma_wait_group(&mut self, n: i64) -> Inst {
        self.inst(
            "wgmma.wait_group.sync.aligned",
            vec![Slot::use_(Operand::int(n))],
        )
    }

    /// `wgmma.mma_async...`: the accumulators are read and written.
    pub fn wgmma(&mut self, w: &Wgmma) -> Inst {
        self.push(w.data())
    }
}
