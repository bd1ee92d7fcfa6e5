//! Each instruction's registers, read once, and the registers phase 87
//! watches at all.
//!
//! The walk runs over every block many times (the fixpoint, then the two
//! deciding visits, then again for each round of hoisted waits), and its
//! queries scan forward in a block; each visit used to rebuild the
//! instruction's reads and writes from its operand slots (a recursive walk
//! over operands into a fresh vector): on a Triton kernel, a quarter of
//! phase 87's time. Here they are read once per run into one flat table.
//!
//! Most instructions of a real kernel (address arithmetic, loads, the
//! epilogue's conversions) touch no register the rules can ask about. A
//! register is **watched** when a rule may ask about it: it is in an
//! accumulator set or of the tensor class, a wgmma takes it (D, an A
//! fragment, sparse metadata), or a `mov` copies into or out of a watched
//! register (R-copy-is-no-write asks whether a copy's source was written
//! since the last arrive; R-copy-propagation follows an accumulator's
//! copy), closed over chains of `mov`. A plain instruction that touches no
//! watched register only ends the block's fresh arrive (`Walker::on_plain`),
//! and the walk state keeps only watched registers in its touched sets,
//! which nothing else reads.

use cranelift_entity::packed_option::ReservedValue;
use cranelift_entity::SecondaryMap;
use ori_ir::{sized_map, Function, Inst, Opcode, Symbol, VReg};

/// The registers of every instruction of a function.
pub(super) struct InstRegs {
    /// Where instruction `i`'s registers are in `regs`: writes first, then
    /// reads.
    span: SecondaryMap<Inst, (u32, u32, u32)>,
    /// Each instruction's opcode.
    opcode: SecondaryMap<Inst, Opcode>,
    regs: Vec<VReg>,
    /// Whether a rule may ask about the register (see the module's text).
    watched: SecondaryMap<VReg, bool>,
    /// Whether the instruction touches a watched register.
    inst_watched: SecondaryMap<Inst, bool>,
    /// A wgmma's accumulator registers (D) and A-fragment registers
    /// (`wgmma_fragment_regs`) in `wgmma_regs`: decoded once, asked on
    /// every visit.
    wgmma_span: SecondaryMap<Inst, (u32, u32, u32)>,
    wgmma_regs: Vec<VReg>,
}

impl InstRegs {
    /// The table of `f`; `kinds` says whether phase 85 put a register in
    /// an accumulator set and whether it is of the tensor class.
    ///
    /// One pass over the instructions reads all of it: on a kernel of a
    /// million instructions every pass over them waits on memory (152
    /// bytes an instruction), so the registers, the wgmma operands, the
    /// watched registers and the copies are read in one pass, not four.
    pub(super) fn compute(f: &Function, kinds: &super::walk::RegKinds) -> InstRegs {
        let n = f.insts.len();
        let mut span = sized_map(n);
        let mut opcode = sized_map(n);
        let mut wgmma_span = SecondaryMap::new();
        // Most instructions touch at most three registers.
        let mut regs = Vec::with_capacity(3 * n);
        let mut wgmma_regs = Vec::new();
        let mut watched = sized_map(f.vregs.len());
        let mut work: Vec<VReg> = Vec::new();
        let mark = |w: &mut SecondaryMap<VReg, bool>, r: VReg, work: &mut Vec<VReg>| {
            if !w[r] {
                w[r] = true;
                work.push(r);
            }
        };
        let tensor = |r: VReg| kinds.tensor(r);
        // The movs that write each register, for the closure below.
        let mut movs_writing: Vec<(VReg, Inst)> = Vec::new();
        let mov = Symbol::new("mov");
        for i in f.layout.all_insts() {
            let d = &f.insts[i];
            opcode[i] = d.opcode;
            let start = regs.len();
            d.for_each_def(|r| regs.push(r));
            let nd = regs.len() - start;
            d.for_each_use(|r| regs.push(r));
            let nu = regs.len() - start - nd;
            // Register operands are bounded by the input (at most 256 MiB
            // of text, at least two bytes each): their count fits `u32`.
            span[i] = (start as u32, nd as u32, nu as u32);
            let (defs, uses) = regs[start..].split_at(nd);
            for &r in defs.iter().chain(uses) {
                if kinds.in_a_set_or_tensor(r) {
                    mark(&mut watched, r, &mut work);
                }
            }
            if d.opcode == Opcode::WgmmaMmaAsync {
                let w = wgmma_regs.len();
                wgmma_regs.extend(super::walk::accumulator_regs(d));
                let na = wgmma_regs.len() - w;
                wgmma_regs.extend(super::walk::a_fragment_regs(d));
                let nf = wgmma_regs.len() - w - na;
                wgmma_span[i] = (w as u32, na as u32, nf as u32);
                // What the wgmma writes (D) and reads as a fragment.
                for &r in defs.iter().chain(&wgmma_regs[w + na..]) {
                    mark(&mut watched, r, &mut work);
                }
            }
            if d.name == mov {
                let from_tensor = uses.iter().any(|r| tensor(*r));
                for &r in defs {
                    movs_writing.push((r, i));
                    if from_tensor {
                        mark(&mut watched, r, &mut work);
                    }
                }
            }
        }
        let mut t = InstRegs {
            span,
            opcode,
            regs,
            watched: SecondaryMap::new(),
            inst_watched: sized_map(n),
            wgmma_span,
            wgmma_regs,
        };
        t.close_watched(f, movs_writing, watched, work);
        t
    }

    /// The watched registers closed over the movs that write them (a mov
    /// writing a watched register: its sources are watched too; `work`:
    /// the watched registers not followed yet), and each instruction marked
    /// where it touches one.
    fn close_watched(
        &mut self,
        f: &Function,
        movs_writing: Vec<(VReg, Inst)>,
        mut watched: SecondaryMap<VReg, bool>,
        mut work: Vec<VReg>,
    ) {
        let movs =
            super::by_register::ByRegister::new(f.vregs.len(), Inst::reserved_value(), || {
                movs_writing.iter().copied()
            });
        drop(movs_writing);
        while let Some(r) = work.pop() {
            for &i in &movs[r] {
                for &u in self.uses(i) {
                    if !std::mem::replace(&mut watched[u], true) {
                        work.push(u);
                    }
                }
            }
        }
        for i in f.layout.all_insts() {
            self.inst_watched[i] = self.defs(i).iter().chain(self.uses(i)).any(|r| watched[*r]);
        }
        self.watched = watched;
    }

    /// Instruction `i`'s opcode, from a table of one byte each (what most
    /// of the walk's questions start with, without reading the
    /// instruction).
    #[inline]
    pub(super) fn opcode(&self, i: Inst) -> Opcode {
        self.opcode[i]
    }

    /// The registers `i` writes ([`ori_ir::InstData::defs`]).
    #[inline]
    pub(super) fn defs(&self, i: Inst) -> &[VReg] {
        let (s, nd, _) = self.span[i];
        &self.regs[s as usize..][..nd as usize]
    }

    /// The registers `i` reads ([`ori_ir::InstData::uses`]: the guard and
    /// address bases included).
    #[inline]
    pub(super) fn uses(&self, i: Inst) -> &[VReg] {
        let (s, nd, nu) = self.span[i];
        &self.regs[s as usize + nd as usize..][..nu as usize]
    }

    /// A wgmma's accumulator registers, its D operand in order
    /// (`walk::accumulator_regs`); empty for other instructions.
    #[inline]
    pub(super) fn accs(&self, i: Inst) -> &[VReg] {
        let (s, na, _) = self.wgmma_span[i];
        &self.wgmma_regs[s as usize..][..na as usize]
    }

    /// A wgmma's A-fragment (and sparse metadata) registers
    /// (`walk::a_fragment_regs`); empty for other instructions.
    #[inline]
    pub(super) fn frags(&self, i: Inst) -> &[VReg] {
        let (s, na, nf) = self.wgmma_span[i];
        &self.wgmma_regs[s as usize + na as usize..][..nf as usize]
    }

    /// Whether a rule may ask about `r`.
    #[inline]
    pub(super) fn watched(&self, r: VReg) -> bool {
        self.watched[r]
    }

    /// Whether `i` touches a register a rule may ask about.
    #[inline]
    pub(super) fn inst_watched(&self, i: Inst) -> bool {
        self.inst_watched[i]
    }
}
