//! The instruction table (`crate::isa`) applied to one instruction: its
//! form, its modifiers and operands checked against it, and which of its
//! operands it writes.
//!
//! Every instruction without a handler of its own goes through here, so
//! the registers an instruction defines come from the table, never from a
//! guess by position (a TMA reduce-store, `cp.reduce.async.bulk.tensor`,
//! writes memory through its tensor map and reads every register it
//! names). A modifier or operand list the table does not take is an error
//! at the instruction in ptxas's wording.

use super::LowerCx;
use crate::ast;
use crate::isa::{Form, Table};

/// An instruction's mnemonic, modifiers, and how many of them are written
/// with the mnemonic as one word (`ast::Instruction::joined`).
pub(super) type FormKey = (ori_ir::Symbol, ori_ir::ModList, u8);

/// The form an instruction takes (`None`: the default form), or ptxas's
/// messages for why it takes none.
pub(super) type Verdict = Result<Option<crate::isa::FormId>, Vec<String>>;

/// The form of `i`, from the per-function cache: `Some(None)` for an
/// opcode of the table's default form, `None` after reporting that no form
/// takes its modifiers.
pub(super) fn form_of(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<Option<&'static Form>> {
    match verdict(cx, i) {
        Ok(f) => Some(f),
        Err(messages) => {
            for m in messages {
                cx.error(i.span, m);
            }
            None
        }
    }
}

/// The form of `i` without reporting anything: `None` for the default
/// form and for modifiers no form takes (which [`form_of`] reports).
pub(super) fn form_quiet(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<&'static Form> {
    verdict(cx, i).ok().flatten()
}

fn verdict(
    cx: &mut LowerCx<'_>,
    i: &ast::Instruction,
) -> Result<Option<&'static Form>, Vec<String>> {
    let table = Table::get();
    cx.forms
        .entry((i.opcode, i.modifiers, i.joined))
        .or_insert_with(|| {
            let mods: Vec<&str> = i.modifiers.iter().map(|m| m.as_str()).collect();
            table
                .classify(i.opcode.as_str(), &mods, usize::from(i.joined))
                .map_err(|(family, why)| why.messages(&family))
        })
        .clone()
        .map(|k| k.map(|k| table.form(k)))
}

/// Check the module's PTX ISA version against the form's: ptxas's
/// `Feature '...' requires PTX ISA .version M.m or later`.
pub(super) fn version_fits(cx: &mut LowerCx<'_>, i: &ast::Instruction, form: &Form) -> bool {
    let need = form.effects.ptx;
    if cx.version >= need {
        return true;
    }
    let feature = match &form.effects.feature {
        Some(f) => format!("{} {f}", form.family),
        None => form.family.to_string(),
    };
    cx.error(
        i.span,
        format!(
            "Feature '{feature}' requires PTX ISA .version {}.{} or later",
            need.0, need.1
        ),
    );
    false
}

/// Check `i`'s operands against its form: their count and kinds. Reports
/// ptxas's `Arguments mismatch for instruction 'FAMILY'` and returns false
/// when they do not fit.
pub(super) fn operands_fit(cx: &mut LowerCx<'_>, i: &ast::Instruction, form: &Form) -> bool {
    if form.check_operands(&i.modifiers, &i.operands) && types_fit(cx, i, form) {
        return true;
    }
    cx.error(
        i.span,
        format!("Arguments mismatch for instruction '{}'", form.family),
    );
    false
}

/// Whether each register operand has the size its spec's type asks for
/// (ptxas 13.0.88: a `.b64` register where `shfl` reads a `.b32` is
/// `Arguments mismatch`), and each immediate a value it takes (a bulk
/// copy's size a multiple of 16, a phase parity 0 or 1).
fn types_fit(cx: &mut LowerCx<'_>, i: &ast::Instruction, form: &Form) -> bool {
    use ori_ir::RegClass as C;
    let b64 = i.modifiers.iter().any(|m| m == "b64");
    // `cp.async`'s src-size may not exceed its cp-size.
    let mut cp_size = 16;
    // An integer immediate is no `.f32`/`.f64` value (`st.async.f32 [a], 13, [m]`).
    let float = i.modifiers.iter().any(|m| m == "f32" || m == "f64");
    let specs = form.present(&i.modifiers, i.operands.len());
    for (op, spec) in i.operands.iter().zip(specs) {
        let want = match spec.ty {
            Some("b16") => Some(C::R16),
            Some(
                "b32" | "size16" | "parity" | "barid" | "nthreads" | "nthreads1" | "srcsize"
                | "count",
            ) => Some(C::R32),
            Some("b64" | "rb64") => Some(C::R64),
            Some("rb32") => Some(C::R32),
            Some("pred") => Some(C::Pred),
            Some("bty") => Some(if b64 { C::R64 } else { C::R32 }),
            _ => None,
        };
        let ok = match &op.kind {
            // The cp-size of `cp.async` is an immediate only.
            _ if matches!(spec.ty, Some("cpsize" | "cpsize16")) => match &op.kind {
                ast::OperandKind::Imm(v) => {
                    cp_size = imm_int(v).unwrap_or(0);
                    imm_fits(spec.ty, v, cp_size)
                }
                _ => false,
            },
            // An alignment, a lookup table and a cache line size are
            // immediates only.
            ast::OperandKind::Reg(_) if matches!(spec.ty, Some("align" | "lut" | "imm128")) => {
                false
            }
            ast::OperandKind::Reg(n) => match (want, cx.reg_class(n)) {
                (Some(w), Some(c)) => c == w,
                _ => true,
            },
            ast::OperandKind::Imm(v) if float && matches!(spec.ty, Some("b32" | "b64")) => {
                imm_int(v).is_none()
            }
            ast::OperandKind::Imm(v) => imm_fits(spec.ty, v, cp_size),
            _ => true,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// An integer immediate's value.
fn imm_int(v: &ast::Imm) -> Option<i64> {
    match *v {
        ast::Imm::Int(x) => Some(x),
        ast::Imm::UInt(x) => i64::try_from(x).ok(),
        _ => None,
    }
}

/// Whether an immediate may stand where type `ty` is read.
fn imm_fits(ty: Option<&str>, v: &ast::Imm, cp_size: i64) -> bool {
    let int = imm_int(v);
    match ty {
        Some("size16") => int.is_some_and(|x| x % 16 == 0),
        Some("parity") => matches!(int, Some(0 | 1)),
        Some("barid") => int.is_some_and(|x| (0..16).contains(&x)),
        Some("nthreads") => int.is_some_and(|x| x % 32 == 0),
        Some("nthreads1") => int.is_some_and(|x| x % 32 == 0 && x != 0),
        Some("srcsize") => int.is_some_and(|x| (0..=cp_size).contains(&x)),
        Some("cpsize") => matches!(int, Some(4 | 8 | 16)),
        Some("cpsize16") => int == Some(16),
        Some("count") => int.is_some_and(|x| x > 0),
        Some("align") => int.is_some_and(|x| x > 0 && x.count_ones() == 1),
        Some("lut") => int.is_some_and(|x| (0..256).contains(&x)),
        Some("imm128") => int == Some(128),
        Some("rb32" | "rb64") => false,
        _ => true,
    }
}

/// Whether operand `k` of `i` is written: by its form, or, for the
/// default form (`add d, a, b`), the first operand unless it is an address.
pub(super) fn writes(form: Option<&Form>, k: usize, op: &ast::OperandKind) -> bool {
    match form {
        Some(f) => f.writes_operand(k, op),
        None => k == 0 && !matches!(op, ast::OperandKind::Address { .. }),
    }
}

/// Whether `i` writes a register at all.
pub(super) fn defines_result(form: Option<&Form>, i: &ast::Instruction) -> bool {
    i.operands.first().is_some_and(|o| writes(form, 0, &o.kind))
}

/// ptxas's check that a written operand is a register (or a vector of
/// registers, a predicate pair, the sink): a symbol or an address-list
/// there is `Arguments mismatch`, never a write the IR cannot hold.
pub(super) fn results_are_registers(
    cx: &mut LowerCx<'_>,
    i: &ast::Instruction,
    form: Option<&Form>,
) -> bool {
    use ast::OperandKind as K;
    fn writable(o: &K) -> bool {
        match o {
            K::Reg(_) | K::PredPair(_) | K::Sink => true,
            K::Vector(v) => v.iter().all(|x| writable(&x.kind)),
            _ => false,
        }
    }
    // An immediate or a negation there is ptxas's "Result register
    // required" (`generic::result_register_given`), reported before; a
    // name that names nothing is its "Unknown symbol", reported after.
    let mut bad = false;
    for (k, o) in i.operands.iter().enumerate() {
        let reported = match &o.kind {
            K::Imm(_) | K::NegPred(_) => true,
            K::Symbol(n) => !cx.knows_name(n),
            _ => false,
        };
        bad |= writes(form, k, &o.kind) && !writable(&o.kind) && !reported;
    }
    if bad {
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{}'", i.opcode),
        );
    }
    !bad
}
