//! sm_90a SASS-like text in the layout of `cuobjdump -sass`.
//!
//! The GMMA family is written as ptxas 13.0.88 writes it (observed on the
//! corpus): `HGMMA.64x128x16.F32.BF16` for f16/bf16/tf32 (no input suffix
//! for f16), `QGMMA.64x64x32.F32.E4M3.E5M2` for fp8, `IGMMA.64x64x32.S8.U8`
//! (`.SAT` with `.satfinite`) for integers, `BGMMA.64x64x256.AND.POPC` for
//! b1; `.SP` after the opcode for `wgmma.mma_async.sp`
//! (`HGMMA.SP.64x128x32.F32`), whose metadata register follows the
//! accumulator input and, for HGMMA only, the selector as `0xN`
//! (`R24, gdesc[UR4], RZ, !UPT, R28, 0x1, gsb0`; QGMMA and IGMMA have none);
//! `RZ, !UPT` when scale-d is false; `gsb0` on the last wgmma before a
//! commit or wait; `WARPGROUP.ARRIVE` for fences and injected arrives;
//! `WARPGROUP.DEPBAR.LE gsb0, 0xN` for waits. Other instructions get the
//! SASS mnemonic a reader expects. The blocks come in ptxas's layout
//! order (`ori_gmma::block_order`). No register allocation or scheduling
//! is done: virtual registers keep their PTX names.

use ori_gmma::block_merging::PtxasBlocks;
use ori_ir::{
    Block, ElemType, Family, Function, InstData, Module, Opcode, Operand, WgmmaA, WgmmaForm,
};
use std::fmt::Write;

/// Upper-case SASS spelling of a wgmma type.
fn ty(t: ElemType) -> &'static str {
    match t {
        ElemType::F16 => "F16",
        ElemType::Bf16 => "BF16",
        ElemType::Tf32 => "TF32",
        ElemType::E4m3 => "E4M3",
        ElemType::E5m2 => "E5M2",
        ElemType::S8 => "S8",
        ElemType::U8 => "U8",
        ElemType::B1 => "B1",
        ElemType::F32 => "F32",
        ElemType::S32 => "S32",
    }
}

/// The opcode token of a wgmma: `HGMMA.64x8x16.F32.BF16` and friends.
pub fn gmma_opcode(d: &InstData) -> Option<String> {
    let form = WgmmaForm::decode(d.mods.get(1..)?).ok()?;
    let sp = if form.sparse { ".SP" } else { "" };
    let mut s = format!(
        "{}{sp}.{}x{}x{}",
        form.sass_opcode(),
        form.m,
        form.n,
        form.k
    );
    match form.family {
        Family::Half | Family::Tf32 => {
            s.push('.');
            s.push_str(ty(form.dtype));
            if form.atype != ElemType::F16 {
                s.push('.');
                s.push_str(ty(form.atype));
            }
        }
        Family::Fp8 => {
            let _ = write!(
                s,
                ".{}.{}.{}",
                ty(form.dtype),
                ty(form.atype),
                ty(form.btype)
            );
        }
        Family::Int8 => {
            let _ = write!(s, ".{}.{}", ty(form.atype), ty(form.btype));
            if form.satfinite {
                s.push_str(".SAT");
            }
        }
        Family::Bit => s.push_str(".AND.POPC"),
    }
    Some(s)
}

/// Negations and transposes, as ptxas 13.0.88 writes them (checked with
/// cuobjdump): `-R28` for a negated register A, and `.negA.negB.tnspA.tnspB`
/// after the descriptor operand (`gdesc[UR8].negB.tnspB` in the register-A
/// form). Returns (prefix of register A, suffix of the descriptor).
fn gmma_modifiers(d: &InstData) -> (&'static str, String) {
    let Some(w) = d.wgmma_operands() else {
        return ("", String::new());
    };
    let a_regs = matches!(w.a, WgmmaA::Fragment(_));
    let (neg_a, neg_b) = (w.negate_a(), w.negate_b());
    let (tnsp_a, tnsp_b) = (w.transpose_a(), w.transpose_b());
    let mut suffix = String::new();
    for (on, text) in [
        (neg_a && !a_regs, ".negA"),
        (neg_b, ".negB"),
        (tnsp_a, ".tnspA"),
        (tnsp_b, ".tnspB"),
    ] {
        if on {
            suffix.push_str(text);
        }
    }
    (if neg_a && a_regs { "-" } else { "" }, suffix)
}

fn reg_name(f: &Function, op: &Operand) -> String {
    let mut s = String::new();
    match op {
        Operand::Vector(v) => match v.first() {
            Some(first) => s.push_str(&reg_name(f, first)),
            None => s.push_str("RZ"),
        },
        o => ori_ir::write::write_operand(&mut s, f, o),
    }
    s
}

/// Whether the wgmma at position `k` of `insts` is the last one before a
/// commit, wait or arrive, or the last one of its block (ptxas 13.0.88 closes
/// the scoreboard at the block's end too: `c7519_commit_in_uniform_branch`).
fn carries_gsb0(f: &Function, blocks: &PtxasBlocks, b: Block, k: usize) -> bool {
    // The block as ptxas sees it: PTX blocks it merged or if-converted run on
    // (`heldout3_10`, `heldout4_23`: one stage across a short branch).
    let order = f.layout.blocks();
    let mut pos = order.iter().position(|x| *x == b).unwrap_or(0);
    let mut from = k + 1;
    loop {
        for &i in &f.layout.block_insts(order[pos])[from..] {
            let op = f.insts[i].opcode;
            if op == Opcode::WgmmaMmaAsync {
                return false;
            }
            // An injected wait with no commit before it waits for the
            // committed groups only: the stage runs on past it
            // (R-read-chained-committed).
            if op == Opcode::WarpgroupWait {
                continue;
            }
            if op.is_commit() || op.is_wait() || op.is_arrive() {
                return true;
            }
        }
        pos += 1;
        if pos >= order.len() || blocks.starts_block(order[pos]) {
            return true;
        }
        from = 0;
    }
}

fn wgmma_text(f: &Function, d: &InstData, gsb0: bool) -> String {
    let Some(op) = gmma_opcode(d) else {
        return format!("{} ", d.mnemonic());
    };
    let dreg = d
        .slots
        .first()
        .map_or("RZ".to_string(), |s| reg_name(f, &s.op));
    let mut s = format!("{op} {dreg}, ");
    let (a_prefix, desc_suffix) = gmma_modifiers(d);
    if let Some(Operand::Vector(_)) = d.slots.get(1).map(|s| &s.op) {
        let _ = write!(s, "{a_prefix}{}, ", reg_name(f, &d.slots[1].op));
    }
    let desc = d.slots.get(
        if matches!(d.slots.get(1).map(|s| &s.op), Some(Operand::Vector(_))) {
            2
        } else {
            1
        },
    );
    let _ = write!(
        s,
        "gdesc[{}]{desc_suffix}, ",
        desc.map_or("URZ".into(), |x| reg_name(f, &x.op))
    );
    let w = d.wgmma_operands();
    match w.filter(|w| !w.scale_d_is_zero()) {
        Some(w) => {
            s.push_str(&dreg);
            if let Operand::Reg(p) | Operand::NotReg(p) = w.scale_d {
                let neg = matches!(w.scale_d, Operand::NotReg(_));
                let _ = write!(s, ", {}{}", if neg { "!" } else { "" }, f.vregs[*p].name);
            }
        }
        None => s.push_str("RZ, !UPT"),
    }
    // Sparse: the metadata register, then (HGMMA only) the selector.
    if let Some(meta) = w.and_then(|w| w.sparse_metadata) {
        let _ = write!(s, ", {}", reg_name(f, meta));
        let sel = w.and_then(|w| w.sparse_selector_value());
        if let (Some(sel), true) = (sel, op.starts_with("HGMMA")) {
            let _ = write!(s, ", {sel:#x}");
        }
    }
    if gsb0 {
        s.push_str(", gsb0");
    }
    s
}

/// SASS mnemonic for a generic PTX instruction.
/// SASS opcode of a `cvt.DST.SRC` (rounding modifiers ignored).
fn cvt_mnemonic(d: &InstData) -> &'static str {
    let types: Vec<&str> = d
        .mods
        .iter()
        .map(|m| &**m)
        .filter(|m| m.len() >= 2 && matches!(m.as_bytes()[0], b'f' | b's' | b'u' | b'b'))
        .filter(|m| {
            m[1..].chars().next().is_some_and(|c| c.is_ascii_digit()) || m.starts_with("bf16")
        })
        .collect();
    let float = |t: &str| t.starts_with('f') || t.starts_with("bf");
    match types.as_slice() {
        [dst, _] if dst.ends_with("x2") => "F2FP.PACK_AB",
        [dst, src] if float(dst) && float(src) => "F2F",
        [dst, src] if float(dst) && !float(src) => "I2F",
        [dst, src] if !float(dst) && float(src) => "F2I",
        _ => "I2I",
    }
}

fn generic_mnemonic(d: &InstData) -> String {
    let has = |m: &str| d.has_mod(m);
    let fty =
        has("f32") || has("f64") || has("f16") || has("f16x2") || has("bf16") || has("bf16x2");
    let base = match &*d.name {
        "add" | "sub" if fty => "FADD",
        "add" | "sub" => "IADD3",
        "mul" if fty => "FMUL",
        "mul" | "mad" if has("wide") => "IMAD.WIDE",
        "mul" | "mad" => "IMAD",
        "fma" => "FFMA",
        "mov" => "MOV",
        "ld" if has("global") => "LDG.E",
        "ld" if has("shared") || has("shared::cta") => "LDS",
        "ld" if has("param") => "LDC",
        "ld" if has("const") => "LDC",
        "ld" if has("local") => "LDL",
        "ld" => "LD.E",
        "st" if has("global") => "STG.E",
        "st" if has("shared") || has("shared::cta") => "STS",
        "st" if has("local") => "STL",
        "st" => "ST.E",
        "setp" if fty => "FSETP",
        "setp" => "ISETP",
        "selp" => "SEL",
        "and" | "or" | "xor" | "not" => "LOP3.LUT",
        "shl" | "shr" => "SHF",
        // cvt: the SASS conversion family by source and destination types
        // (`cvt.DST.SRC`), packing of two f32 into f16x2/bf16x2 included.
        "cvt" => cvt_mnemonic(d),
        "cvta" => "MOV",
        "bar" | "barrier" => "BAR.SYNC",
        "bra" => "BRA",
        "ret" => "RET.REL.NODEC",
        "exit" => "EXIT",
        "call" => "CALL.REL.NOINC",
        "max" if fty => "FMNMX",
        "min" if fty => "FMNMX",
        "max" | "min" => "IMNMX",
        "fence" if has("proxy") => "FENCE.VIEW.ASYNC.S",
        "membar" | "fence" => "MEMBAR",
        "cp" => "LDGSTS",
        "shfl" => "SHFL",
        "mbarrier" => "SYNCS",
        "ex2" | "lg2" | "rcp" | "rsqrt" | "sqrt" | "sin" | "cos" | "tanh" => "MUFU",
        "neg" | "abs" => "FADD",
        other => return other.to_uppercase(),
    };
    base.to_string()
}

fn generic_text(f: &Function, d: &InstData) -> String {
    let mut s = String::new();
    if let Some(g) = d.guard {
        let _ = write!(
            s,
            "@{}{} ",
            if g.negated { "!" } else { "" },
            f.vregs[g.reg].name
        );
    }
    // A kernel ends in EXIT, a callee returns (as cuobjdump shows them).
    if &*d.name == "ret" && f.kind == ori_ir::FuncKind::Entry {
        s.push_str("EXIT");
    } else {
        s.push_str(&generic_mnemonic(d));
    }
    for (k, slot) in d.slots.iter().enumerate() {
        s.push_str(if k == 0 { " " } else { ", " });
        ori_ir::write::write_operand(&mut s, f, &slot.op);
    }
    s
}

/// The wgmma ptxas issues for a commit of an empty group.
pub const EMPTY_GROUP_HGMMA: &str = "HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0";

/// Whether a wgmma precedes instruction `k` of block `b` since the last
/// commit or user wait (a wait closes the open stage, as in ptxas: probe
/// n10; an injected wait has its commit before it, or leaves the stage
/// open: R-read-chained-committed),
/// within the block as ptxas sees it (PTX blocks it merged count as one).
fn wgmma_since_commit(f: &Function, blocks: &PtxasBlocks, b: Block, k: usize) -> bool {
    let order = f.layout.blocks();
    let mut pos = order.iter().position(|x| *x == b).unwrap_or(0);
    let mut upto = k;
    loop {
        let blk = order[pos];
        for &i in f.layout.block_insts(blk)[..upto].iter().rev() {
            let op = f.insts[i].opcode;
            if op == Opcode::WgmmaMmaAsync {
                return true;
            }
            // A call ends ptxas's block (R-call-ends-block): the commit
            // after it closes an empty group.
            if op.is_commit() || op == Opcode::WgmmaWaitGroup || op == Opcode::Call {
                return false;
            }
        }
        if blocks.starts_block(blk) || pos == 0 {
            return false;
        }
        pos -= 1;
        upto = f.layout.block_insts(order[pos]).len();
    }
}

/// One function's SASS-like text.
pub fn emit_function(out: &mut String, f: &Function) {
    let _ = writeln!(out, "\t\tFunction : {}", f.name);
    let _ = writeln!(
        out,
        "\t.headerflags\t@\"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\" // ori: no register allocation or scheduling; virtual registers keep their PTX names{}",
        if f.serialized.is_some() { "; wgmma pipeline serialized" } else { "" }
    );
    let cfg = ori_ir::ControlFlowGraph::compute(f);
    let blocks = PtxasBlocks::compute(f, &cfg);
    let mut addr = 0u32;
    let mut line = |out: &mut String, text: String| {
        let _ = writeln!(out, "        /*{addr:04x}*/                   {text} ;");
        addr += 0x10;
    };
    // ptxas's block order, not the PTX's (R-block-order).
    let dt = ori_ir::DominatorTree::compute(&cfg);
    for b in ori_gmma::block_order::ptxas_block_order(f, &cfg, &dt) {
        if let Some(l) = &f.blocks[b].label {
            let _ = writeln!(out, ".{}:", l.trim_start_matches('$'));
        }
        let insts = f.layout.block_insts(b);
        for (k, &i) in insts.iter().enumerate() {
            let d = &f.insts[i];
            match d.opcode {
                Opcode::WgmmaMmaAsync => {
                    line(out, wgmma_text(f, d, carries_gsb0(f, &blocks, b, k)))
                }
                op if op.is_arrive() => line(out, "WARPGROUP.ARRIVE".into()),
                op if op.is_wait() => line(
                    out,
                    format!(
                        "WARPGROUP.DEPBAR.LE gsb0, 0x{:x}",
                        d.wait_count().unwrap_or(0)
                    ),
                ),
                // A commit closing a group with no wgmma of its own block: ptxas
                // 13.0.88 issues a dummy HGMMA so that the group exists (seen in
                // `cuobjdump -sass` of the corpus case `c7519_empty_commit`).
                Opcode::WgmmaCommitGroup if !wgmma_since_commit(f, &blocks, b, k) => {
                    line(out, EMPTY_GROUP_HGMMA.into())
                }
                op if op.is_commit() => {}
                _ => line(out, generic_text(f, d)),
            }
        }
    }
    out.push('\n');
}

/// The whole module.
pub fn emit_module(m: &Module) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n\tcode for {}", m.arch());
    for f in m.funcs.values().filter(|f| f.has_body) {
        emit_function(&mut out, f);
    }
    out
}
