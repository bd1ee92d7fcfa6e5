//! Handlers of the wgmma family and of the internal `_warpgroup.*` ops.
//!
//! `wgmma.mma_async` is ptxas's largest handler (seed 003: `sub_50AC70`):
//! shapes, types, operand forms, immediates and register types are all
//! checked here, with the wording ptxas 13.0.88 prints (each message below
//! was observed on the real tool). Accumulator registers become class 6.
//! `wgmma.fence` / `commit_group` / `wait_group` are thin wrappers producing
//! one Ori instruction each; `_warpgroup.arrive` / `wait` / `commit_batch`
//! are what phase 87 inserts, parsable so IR dumps round-trip.

use super::LowerCx;
use crate::ast;
use ori_ir::{ElemType, Family, FormError, InstData, Operand, Slot, WgmmaForm};

/// ptxas's name for the instruction in type-specific messages.
fn family_name(f: Family) -> &'static str {
    match f {
        Family::Half | Family::Tf32 | Family::Fp8 => "wgmma.mma_async with floating point types",
        Family::Int8 => "wgmma.mma_async with integer types",
        Family::Bit => "wgmma.mma_async with single bit types",
    }
}

fn mods(i: &ast::Instruction) -> Vec<&str> {
    i.modifiers.iter().map(String::as_str).collect()
}

/// Target and ISA-version checks shared by the family (wording from ptxas 13.0.88).
fn check_target(cx: &mut LowerCx<'_>, i: &ast::Instruction, what: &str) -> bool {
    if cx.version < (8, 0) {
        cx.error(
            i.span,
            "Feature 'WGMMA' requires PTX ISA .version 8.0 or later",
        );
        return false;
    }
    if !cx.is_sm90a() {
        let arch = cx.arch().to_string();
        cx.error(
            i.span,
            format!("Instruction '{what}' not supported on .target '{arch}'"),
        );
        return false;
    }
    true
}

fn check_sync(cx: &mut LowerCx<'_>, i: &ast::Instruction, name: &str) -> bool {
    // ptxas 13.0.88 requires `.sync`; a missing `.aligned` is accepted.
    if !i.has_modifier("sync") {
        cx.error(
            i.span,
            format!(".sync modifier required for instruction '{name}'"),
        );
        return false;
    }
    true
}

/// Register types ptxas accepts for an accumulator of this dtype (observed:
/// `.f32` takes f32/b32; `.s32` takes s32/u32/b32; `.f16` takes f16x2/b32).
fn acc_type_ok(dtype: ElemType, ty: &str) -> bool {
    match dtype {
        ElemType::F32 => matches!(ty, "f32" | "b32"),
        ElemType::S32 => matches!(ty, "s32" | "u32" | "b32"),
        ElemType::F16 => matches!(ty, "f16x2" | "b32"),
        _ => false,
    }
}

/// Register types accepted for an A fragment (observed for f16: b32/f16x2, not u32/f32/s32).
fn afrag_type_ok(atype: ElemType, ty: &str) -> bool {
    match atype {
        ElemType::F16 => matches!(ty, "f16x2" | "b32"),
        ElemType::Bf16 => matches!(ty, "bf16x2" | "b32"),
        ElemType::Tf32 => matches!(ty, "b32" | "f32"),
        ElemType::S8 | ElemType::U8 => matches!(ty, "b32" | "u32" | "s32"),
        _ => ty == "b32",
    }
}

fn reg_ty<'a>(cx: &'a LowerCx<'_>, op: &Operand) -> Option<&'a str> {
    match op {
        Operand::Reg(r) => Some(&cx.func.vregs[*r].ty),
        _ => None,
    }
}

/// `wgmma.mma_async` (seed 003: handler `sub_50AC70`).
pub fn lower_mma_async(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    let form = match WgmmaForm::decode(&i.modifiers[1..]) {
        Ok(f) => f,
        Err(FormError::UnknownModifier(m)) => {
            cx.error(i.span, format!("Unknown modifier '.{m}'"));
            return None;
        }
        Err(FormError::MissingShape) => {
            cx.error(
                i.span,
                "Shape modifier required for instruction 'wgmma.mma_async'",
            );
            return None;
        }
        Err(FormError::BadShape(s)) => {
            // A syntactically valid shape outside this type's table.
            let fam = guess_family(i);
            match fam {
                Some(f) if s.starts_with("m64") => cx.error(
                    i.span,
                    format!(
                        "Illegal matrix shape '.{s}' for instruction '{}'",
                        family_name(f)
                    ),
                ),
                _ => cx.error(
                    i.span,
                    "Arguments mismatch for instruction 'wgmma.mma_async'",
                ),
            }
            return None;
        }
        Err(FormError::BadTypes(_)) => {
            cx.error(
                i.span,
                "Unexpected instruction types specified for 'wgmma.mma_async'",
            );
            return None;
        }
    };
    if !check_target(cx, i, family_name(form.family)) || !check_sync(cx, i, "wgmma.mma_async") {
        return None;
    }
    if form.atype != form.btype && form.family == Family::Int8 && cx.version < (8, 4) {
        cx.error(
            i.span,
            "Arguments mismatch for instruction 'wgmma.mma_async'",
        );
        return None;
    }
    let mismatch = |cx: &mut LowerCx<'_>| {
        cx.error(
            i.span,
            "Arguments mismatch for instruction 'wgmma.mma_async'",
        );
    };
    let mut ops = Vec::with_capacity(i.operands.len());
    for o in &i.operands {
        ops.push(cx.operand(o)?);
    }
    let a_regs = matches!(ops.get(1), Some(Operand::Vector(_)));
    if ops.len() != form.operand_count(a_regs) {
        mismatch(cx);
        return None;
    }
    // D: a vector of accumulator registers of the right type and count.
    let Operand::Vector(d) = &ops[0] else {
        mismatch(cx);
        return None;
    };
    if d.iter()
        .any(|o| reg_ty(cx, o).is_none_or(|t| !acc_type_ok(form.dtype, t)))
    {
        mismatch(cx);
        return None;
    }
    if d.len() != form.accumulator_regs() {
        cx.error(
            i.span,
            format!(
                "Argument vector size mismatch for instruction '{}'",
                family_name(form.family)
            ),
        );
        return None;
    }
    // A: descriptor (64-bit integer register) or fragment vector.
    match &ops[1] {
        Operand::Vector(a) => {
            if a.iter()
                .any(|o| reg_ty(cx, o).is_none_or(|t| !afrag_type_ok(form.atype, t)))
            {
                mismatch(cx);
                return None;
            }
            if a.len() != form.a_fragment_regs() {
                cx.error(
                    i.span,
                    format!(
                        "Argument vector size mismatch for instruction '{}'",
                        family_name(form.family)
                    ),
                );
                return None;
            }
        }
        o if is_desc(cx, o) => {}
        _ => {
            mismatch(cx);
            return None;
        }
    }
    if !is_desc(cx, &ops[2]) {
        mismatch(cx);
        return None;
    }
    // scale-d: predicate or the immediate 0/1.
    match &ops[3] {
        Operand::Reg(r) | Operand::NotReg(r)
            if cx.func.vregs[*r].class == ori_ir::RegClass::Pred => {}
        Operand::Imm(v) => match v.as_i64() {
            Some(0 | 1) => {}
            _ => {
                let text = imm_text(v);
                cx.error(
                    i.span,
                    format!("Argument 3 of instruction '{}': unexpected value '{text}', expected to be 0 or 1", family_name(form.family)),
                );
                return None;
            }
        },
        _ => {
            mismatch(cx);
            return None;
        }
    }
    // imm-scale-a/b in {-1, 1}; imm-trans-a/b in {0, 1}.
    for (k, op) in ops.iter().enumerate().skip(4) {
        let Operand::Imm(v) = op else {
            mismatch(cx);
            return None;
        };
        let is_scale = k <= 5;
        let ok = match v.as_i64() {
            Some(x) if is_scale => x == -1 || x == 1,
            Some(x) => x == 0 || x == 1,
            None => false,
        };
        if !ok {
            let expect = if is_scale { "-1 or 1" } else { "0 or 1" };
            cx.error(
                i.span,
                format!(
                    "Argument {k} of instruction '{}': unexpected value '{}', expected to be {expect}",
                    family_name(form.family),
                    imm_text(v)
                ),
            );
            return None;
        }
    }
    let mut it = ops.into_iter();
    let d = it.next()?;
    cx.make_tensor(&d);
    let mut slots = vec![Slot::def_use(d)];
    slots.extend(it.map(Slot::use_));
    Some(InstData::new("wgmma", &mods(i), slots, i.span.line))
}

fn imm_text(v: &ori_ir::Imm) -> String {
    let mut s = String::new();
    ori_ir::write::write_imm(&mut s, *v);
    s
}

fn is_desc(cx: &LowerCx<'_>, o: &Operand) -> bool {
    matches!(reg_ty(cx, o), Some("b64" | "u64" | "s64"))
}

fn guess_family(i: &ast::Instruction) -> Option<Family> {
    let types: Vec<ElemType> = i
        .modifiers
        .iter()
        .filter_map(|m| ElemType::from_ptx(m))
        .collect();
    Some(match types.get(1)? {
        ElemType::F16 | ElemType::Bf16 => Family::Half,
        ElemType::Tf32 => Family::Tf32,
        ElemType::E4m3 | ElemType::E5m2 => Family::Fp8,
        ElemType::S8 | ElemType::U8 => Family::Int8,
        ElemType::B1 => Family::Bit,
        _ => return None,
    })
}

fn no_operands(cx: &mut LowerCx<'_>, i: &ast::Instruction, name: &str) -> Option<InstData> {
    if !check_target(cx, i, name) || !check_sync(cx, i, name) {
        return None;
    }
    if !i.operands.is_empty() {
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{name}'"),
        );
        return None;
    }
    Some(InstData::new(&i.opcode, &mods(i), [], i.span.line))
}

/// `wgmma.fence` (seed 003: handler `sub_4DA380`).
pub fn lower_fence(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    no_operands(cx, i, "wgmma.fence")
}

/// `wgmma.commit_group` (seed 003: handler `sub_4DA4B0`).
pub fn lower_commit_group(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    no_operands(cx, i, "wgmma.commit_group")
}

/// `wgmma.wait_group N` (seed 003: handler `sub_4DA5E0`); N an integer constant.
pub fn lower_wait_group(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    if !check_target(cx, i, "wgmma.wait_group") || !check_sync(cx, i, "wgmma.wait_group") {
        return None;
    }
    let n = match i.operands.as_slice() {
        [o] => match &o.kind {
            ast::OperandKind::Imm(ast::Imm::Int(v)) if *v >= 0 => ori_ir::Imm::Int(*v),
            ast::OperandKind::Imm(ast::Imm::UInt(v)) => ori_ir::Imm::Hex(*v),
            _ => {
                cx.error(
                    i.span,
                    "Arguments mismatch for instruction 'wgmma.wait_group'",
                );
                return None;
            }
        },
        _ => {
            cx.error(
                i.span,
                "Arguments mismatch for instruction 'wgmma.wait_group'",
            );
            return None;
        }
    };
    Some(InstData::new(
        &i.opcode,
        &mods(i),
        [Slot::use_(Operand::Imm(n))],
        i.span.line,
    ))
}

/// `_warpgroup.arrive`, `_warpgroup.wait N`, `_warpgroup.commit_batch`: the
/// compiler-internal ops phase 87 creates (registered separately in ptxas).
pub fn lower_internal(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    let is_wait = i.modifiers.first().is_some_and(|m| m == "wait");
    let want = usize::from(is_wait);
    if i.operands.len() != want {
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{}'", i.mnemonic()),
        );
        return None;
    }
    let mut slots = Vec::new();
    for o in &i.operands {
        match cx.operand(o)? {
            op @ Operand::Imm(_) => slots.push(Slot::use_(op)),
            _ => {
                cx.error(
                    i.span,
                    format!("Arguments mismatch for instruction '{}'", i.mnemonic()),
                );
                return None;
            }
        }
    }
    Some(InstData::new(&i.opcode, &mods(i), slots, i.span.line))
}
