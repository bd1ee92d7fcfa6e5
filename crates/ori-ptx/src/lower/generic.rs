//! Handlers for ordinary PTX instructions: exact def/use sets.
//!
//! Phase 87 decides conflicts from which registers an instruction reads and
//! writes, so these handlers get that right. Which operands an instruction
//! writes is the instruction table's (`crate::isa`, through `table_forms`):
//! a result comes first; `st`, `red`, `bar`, `prefetch`, the TMA and bulk
//! copies and friends define nothing; `setp` may define `p|q`; vector loads
//! define every register of the vector; `call` defines its return
//! parameters and uses its arguments.

use super::{table_forms, LowerCx};
use crate::ast;
use ori_ir::{InstData, Operand, Slot, Symbol};

/// The operands lowered, inline (an instruction's are rarely more than four).
type Operands = smallvec::SmallVec<[Operand; 4]>;

fn lower_operands(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<Operands> {
    let mut ops = Operands::new();
    let mut ok = true;
    for o in &i.operands {
        match cx.operand(o) {
            Some(x) => ops.push(x),
            None => ok = false,
        }
    }
    ok.then_some(ops)
}

/// The operand count of instructions that take exactly one (PTX ISA):
/// `mov d, a`; `add d, a, b`; `mad d, a, b, c`. A vector (`{a, b}`) is one
/// operand. Other counts are ptxas's `Arguments mismatch for instruction`
/// (probed on `mov`: `tests/bad_input/*__operand_{added,dropped}`).
/// Instructions with optional operands (`setp`, `cvt`, `lop3`, `min`/`max`
/// with three inputs, ...) are not listed.
fn fixed_arity(opcode: &str) -> Option<usize> {
    Some(match opcode {
        "mov" | "neg" | "not" | "cnot" | "abs" | "popc" | "clz" | "brev" => 2,
        "add" | "sub" | "mul" | "div" | "rem" | "and" | "or" | "xor" | "shl" | "shr" => 3,
        "mad" | "fma" | "selp" | "slct" => 4,
        _ => return None,
    })
}

/// `st [a], b` takes two operands, a third (the cache policy) only with
/// `.L2::cache_hint`; `st.async` and `st.bulk` have forms of their own.
/// ptxas 13.0.88's errors (`tests/bad_input/*__operand_{added,dropped}`).
fn check_st_arity(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let has = |m: &str| i.modifiers.iter().any(|x| x == m);
    if has("async") || has("bulk") {
        return true;
    }
    let hint = has("L2::cache_hint");
    let n = i.operands.len();
    if n == 3 && !hint {
        cx.error(
            i.span,
            ".L2::cache_hint modifier required for instruction 'st' with 3 arguments",
        );
    }
    if n == 2 + usize::from(hint) {
        return true;
    }
    cx.error(i.span, "Arguments mismatch for instruction 'st'");
    false
}

/// Modifiers the fixed-arity arithmetic and move instructions take (PTX
/// ISA: types, rounding, `.ftz`, `.sat`, `.wide`/`.lo`/`.hi`, `.cc`,
/// `.relu`, `.approx`/`.full`, ...). Anything else on them is ptxas's
/// `Unknown modifier` (`tests/bad_input/*__bad_modifier`).
fn arithmetic_modifier(m: &str) -> bool {
    const WORDS: &[&str] = &[
        "rn",
        "rz",
        "rm",
        "rp",
        "rna",
        "rni",
        "rzi",
        "rmi",
        "rpi",
        "rs",
        "ftz",
        "noftz",
        "sat",
        "satfinite",
        "wide",
        "lo",
        "hi",
        "cc",
        "relu",
        "approx",
        "full",
        "xorsign",
        "abs",
        "nan",
        "oob",
        "uni",
        "pred",
        "v2",
        "v4",
        "shiftamt",
        "clamp",
        "wrap",
    ];
    WORDS.contains(&m) || arithmetic_type(m)
}

/// The first of `mods` that is not an [`arithmetic_modifier`], found once
/// per distinct (interned) list.
fn first_non_arithmetic(cx: &mut LowerCx<'_>, mods: ori_ir::ModList) -> Option<ori_ir::Symbol> {
    *cx.mod_checks
        .entry(mods)
        .or_insert_with(|| mods.iter().find(|m| !arithmetic_modifier(m)).copied())
}

/// Modifiers `ld` and `st` take (PTX ISA 9.7.9.8/9.7.9.10): state spaces,
/// cache operators, memory-consistency qualifiers and scopes, cache
/// eviction hints, vectors and types. Anything else is ptxas's `Unknown
/// modifier` (fuzz input `ld.pgned 0;`: ptxas 13.0.88 says "Unknown
/// modifier '.pgned'", ori had let it through to an internal error).
fn memory_modifier(m: &str) -> bool {
    const WORDS: &[&str] = &[
        "global", "shared", "local", "param", "const", "generic", "cta", "cluster", "gpu", "sys",
        "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "volatile", "relaxed", "acquire",
        "release", "weak", "mmio", "unified", "v2", "v4", "v8",
    ];
    WORDS.contains(&m)
        || m.starts_with("shared::")
        || m.starts_with("param::")
        || m.starts_with("L1::")
        || m.starts_with("L2::")
        || arithmetic_type(m)
}

/// A PTX type modifier: b8..b128, s/u8..64, f16/f32/f64, bf16, f16x2,
/// bf16x2, tf32, the fp8 kinds.
fn arithmetic_type(m: &str) -> bool {
    let (base, rest) = m.split_at(m.find(|c: char| c.is_ascii_digit()).unwrap_or(m.len()));
    matches!(base, "b" | "s" | "u" | "f" | "bf" | "e" | "tf")
        && !rest.is_empty()
        && rest.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Whether a register operand of `i` (alone or in a vector) names nothing.
pub(super) fn has_unknown_operand(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    fn unknown(cx: &mut LowerCx<'_>, op: &ast::Operand) -> bool {
        use ast::OperandKind as K;
        match &op.kind {
            // A register found here is kept for the lowering of the same
            // operand (`LowerCx::name`): each name is looked up once.
            K::Reg(n) | K::Symbol(n) => match cx.lookup_reg(n) {
                Some(r) => {
                    cx.resolved.push((n.as_ptr() as usize, r));
                    false
                }
                None => !cx.knows_name(n),
            },
            K::NegPred(n) => !cx.knows_name(n),
            K::Vector(v) => v.iter().any(|o| unknown(cx, o)),
            _ => false,
        }
    }
    i.operands.iter().any(|o| unknown(cx, o))
}

/// ptxas's "Result register required" when `i` defines a value and its
/// first operand is of a kind `not_a_register` picks out (an immediate, a
/// negated predicate); whether the destination is acceptable.
pub(super) fn result_register_given(
    cx: &mut LowerCx<'_>,
    i: &ast::Instruction,
    not_a_register: impl Fn(&ast::OperandKind) -> bool,
) -> bool {
    // The operand first: the form is looked up only for the rare
    // instruction whose first operand is of such a kind.
    let bad = i.operands.first().is_some_and(|o| not_a_register(&o.kind))
        && table_forms::defines_result(table_forms::form_quiet(cx, i), i);
    if bad {
        cx.error(
            i.span,
            format!("Result register required for instruction '{}'", i.opcode),
        );
    }
    !bad
}

/// The modifiers of an `ld` or `st` of no closed table form are all
/// memory modifiers; each other one is reported as unknown (and, with no
/// type among them, the instruction as of no type, as ptxas does).
fn memory_modifiers_known(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    if i.modifiers.iter().all(|m| memory_modifier(m)) {
        return true;
    }
    for m in i.modifiers.iter().filter(|m| !memory_modifier(m)) {
        cx.error(i.span, format!("Unknown modifier '.{m}'"));
    }
    if !i.modifiers.iter().any(|m| arithmetic_type(m)) {
        cx.error(
            i.span,
            format!("Unexpected instruction types specified for '{}'", i.opcode),
        );
    }
    false
}

/// The checks of the open families (no closed form of the table): their
/// types and comparisons, `cvt`'s forms, the memory families' modifiers,
/// their operands' sizes and kinds. The first that fails reports.
/// The checks of types, comparisons and modifiers read only the opcode,
/// the modifiers and the operand count: a combination that passed once is
/// not checked again (a kernel repeats a few dozen of them thousands of
/// times); one that fails is checked, and reported, every time.
fn open_family_fits(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let key = (i.opcode, i.modifiers, i.operands.len());
    if !cx.open_forms_fit.contains(&key) {
        let memory = matches!(i.opcode.as_str(), "ld" | "st" | "atom" | "red");
        let fits = super::instruction_types::instruction_types_fit(cx, i)
            && (i.opcode != "cvt" || super::cvt_forms::cvt_fits(cx, i))
            && (!memory || super::memory_forms::memory_modifiers_fit(cx, i));
        if !fits {
            return false;
        }
        cx.open_forms_fit.insert(key);
    }
    super::operand_sizes::operand_sizes_fit(cx, i)
}

/// Any instruction without a handler of its own.
pub fn lower_generic(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    let form = table_forms::form_of(cx, i)?;
    if !form_fits(cx, i, form.filter(|f| !f.open)) {
        return None;
    }
    let arity = fixed_arity(&i.opcode);
    if (arity.is_some() || i.opcode == "st") && has_unknown_operand(cx, i) {
        // ptxas 13.0.88 types the operands before it resolves them: an
        // unknown name is an operand of no type, so the instruction's
        // arguments mismatch first, then the name is an unknown symbol
        // (`tests/bad_input/*__undeclared_register`, `*__reg_used_out_of_scope`).
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{}'", i.opcode),
        );
    }
    // A result must be written somewhere: an immediate as the destination
    // is no operand ptxas accepts for any instruction that defines one
    // (`tests/bad_input/hand_immediate_destination`).
    if !result_register_given(cx, i, |k| matches!(k, ast::OperandKind::Imm(_))) {
        return None;
    }
    if !table_forms::results_are_registers(cx, i, form) {
        return None;
    }
    let ops = lower_operands(cx, i)?;
    let mut slots: ori_ir::Slots = ops
        .into_iter()
        .zip(&i.operands)
        .enumerate()
        .map(|(k, (op, src))| {
            if table_forms::writes(form, k, &src.kind) {
                Slot::def(op)
            } else {
                Slot::use_(op)
            }
        })
        .collect();
    super::float_literals::convert_sources(&i.opcode, &i.modifiers, &mut slots);
    Some(InstData::interned(
        i.opcode,
        i.modifiers,
        slots,
        i.span.line,
    ))
}

/// Whether `i` fits its form of the table (a closed one's, `closed`) and
/// the checks of its family: modifiers, operand count, types, operand
/// kinds and sizes, vectors and literals; reports ptxas's first error and
/// returns false when not.
fn form_fits(
    cx: &mut LowerCx<'_>,
    i: &ast::Instruction,
    closed: Option<&crate::isa::Form>,
) -> bool {
    if let Some(f) = closed {
        if !table_forms::version_fits(cx, i, f) || !table_forms::operands_fit(cx, i, f) {
            return false;
        }
    }
    // A closed form of the table (`st.async`) has had its modifiers checked.
    let open_memory = (i.opcode == "ld" || i.opcode == "st") && closed.is_none();
    if open_memory && !memory_modifiers_known(cx, i) {
        return false;
    }
    if i.opcode == "st" && !check_st_arity(cx, i) {
        return false;
    }
    let arity = fixed_arity(&i.opcode);
    if arity.is_some() {
        if let Some(m) = first_non_arithmetic(cx, i.modifiers) {
            cx.error(i.span, format!("Unknown modifier '.{m}'"));
            return false;
        }
    }
    if arity.is_some_and(|n| n != i.operands.len()) {
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{}'", i.opcode),
        );
        return false;
    }
    if closed.is_none() && !open_family_fits(cx, i) {
        return false;
    }
    if i.opcode == "mov" && !super::mov_types::mov_types_fit(cx, i) {
        return false;
    }
    if !super::vectors::vector_sizes_fit(cx, i) {
        return false;
    }
    if !super::float_literals::literals_fit(cx, i) {
        return false;
    }
    true
}

/// `bra LABEL`.
pub fn lower_branch(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    if i.operands.len() != 1 {
        cx.error(i.span, "Arguments mismatch for instruction 'bra'");
        return None;
    }
    let t = cx.label_target(&i.operands[0])?;
    Some(InstData::interned(
        Symbol::new("bra"),
        i.modifiers,
        [Slot::use_(t)],
        i.span.line,
    ))
}

/// `ret` / `exit`.
pub fn lower_return(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    if !i.operands.is_empty() {
        cx.error(
            i.span,
            format!("Arguments mismatch for instruction '{}'", i.opcode),
        );
        return None;
    }
    Some(InstData::interned(i.opcode, i.modifiers, [], i.span.line))
}
