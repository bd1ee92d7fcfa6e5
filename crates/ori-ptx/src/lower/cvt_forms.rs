//! The forms of `cvt` (PTX ISA 9.0, 9.7.9.21), as ptxas 13.0.88 takes them
//! for sm_90a: which rounding each pair of types needs or refuses, the
//! modifiers `cvt` takes at all, and the operand count of the packed forms.
//!
//! It exists because `cvt` is open in the instruction table and every code
//! generator writes many of them; ptxas checks (probed type pair by type
//! pair by the grammar fuzzer):
//! * two types, destination first; `.tf32` only from `.f32`;
//! * a float from a wider float or from an integer needs a float rounding (`.rn .rz .rm .rp`); an
//!   integer from a float needs an integer rounding (`.rni .rzi .rmi
//!   .rpi`); a float of its own type takes an integer rounding or none; a
//!   float from one of another type of its size, or widened from `.bf16`,
//!   takes a float rounding or none; any other pair takes none
//!   ("Rounding modifier required", "Illegal rounding modifier");
//! * `.ftz` only where `.f32` is one of the types; `.relu` only into
//!   16-bit floats or their pairs from `.f32`, never with `.sat`; `.sat` neither into `.bf16` nor between integers where the
//!   destination holds every source value;
//! * the packed forms from two `.f32` (`.f16x2`, `.bf16x2`, `.e4m3x2`,
//!   `.e5m2x2`) take three operands, the others two; they need `.rn`
//!   (or `.rz` into 16-bit floats), the fp8 ones also `.satfinite`; a
//!   pair of fp8 values unpacks into `.f16x2` with `.rn`, two operands.

use super::LowerCx;
use crate::ast;

const FLOAT_ROUNDING: &[&str] = &["rn", "rz", "rm", "rp", "rna"];
const INT_ROUNDING: &[&str] = &["rni", "rzi", "rmi", "rpi"];
/// The other modifiers `cvt` takes.
const OTHER: &[&str] = &["ftz", "sat", "relu", "satfinite"];

fn is_float(t: &str) -> bool {
    t.starts_with('f') || t.starts_with("bf") || t.starts_with('e') || t == "tf32"
}

fn bits(t: &str) -> u32 {
    match t {
        "f16x2" | "bf16x2" | "tf32" => 32,
        "e4m3x2" | "e5m2x2" => 16,
        _ => t
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
            .unwrap_or(32),
    }
}

/// Which roundings the pair `d` from `a` takes: (float roundings
/// allowed, integer roundings allowed, one required).
fn roundings(d: &str, a: &str) -> (bool, bool, bool) {
    match (is_float(d), is_float(a)) {
        (true, true) if d == a => (false, true, false),
        (true, true) if bits(d) < bits(a) || d == "tf32" => (true, false, true),
        (true, true) if bits(d) == bits(a) || a == "bf16" => (true, false, false),
        (true, true) => (false, false, false),
        (true, false) => (true, false, true),
        (false, true) => (false, true, true),
        (false, false) => (false, false, false),
    }
}

/// Whether `i`, a `cvt` of no packing (`.pack` forms are not checked),
/// is one ptxas takes; reports its error and returns false when not.
pub(super) fn cvt_fits(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let mods: smallvec::SmallVec<[&str; 6]> = i.modifiers.iter().map(|m| m.as_str()).collect();
    if mods.contains(&"pack") {
        return true;
    }
    match cvt_error(&mods, i.operands.len()) {
        None => true,
        Some(e) => {
            cx.error(i.span, e);
            false
        }
    }
}

/// Whether `.sat` means something on `cvt.d.a`: not to or from `.bf16`
/// nor into pairs (they have `.relu` and `.satfinite`), not between integers where `d` holds
/// every value of `a` (`cvt.sat.s32.u16`, `cvt.sat.s64.s64`).
fn saturates(d: &str, a: &str) -> bool {
    if d.starts_with("bf") || a == "bf16" || d.ends_with("x2") {
        return false;
    }
    if is_float(d) || is_float(a) {
        return true;
    }
    let signed = |t: &str| t.starts_with('s');
    let holds = (signed(d) == signed(a) && bits(d) >= bits(a))
        || (signed(d) && !signed(a) && bits(d) > bits(a));
    !holds
}

/// ptxas's first error on a `cvt` with `mods` and `n` operands.
fn cvt_error(mods: &[&str], n: usize) -> Option<String> {
    let types: smallvec::SmallVec<[&str; 2]> = mods
        .iter()
        .copied()
        .filter(|m| super::float_literals::is_type(m))
        .collect();
    if let Some(m) = mods.iter().find(|m| {
        !super::float_literals::is_type(m)
            && !FLOAT_ROUNDING.contains(m)
            && !INT_ROUNDING.contains(m)
            && !OTHER.contains(m)
    }) {
        return Some(format!("Illegal modifier '.{m}' for instruction 'cvt'"));
    }
    let &[d, a] = types.as_slice() else {
        return Some("Unexpected instruction types specified for 'cvt'".into());
    };
    // A pair of fp8 values unpacks into `.f16x2` only.
    let unpack = a.starts_with('e') && a.ends_with("x2");
    let other_pair = a.ends_with("x2") && !(unpack && d == "f16x2");
    if (d == "tf32" && a != "f32") || a == "tf32" || other_pair {
        return Some("Unexpected instruction types specified for 'cvt'".into());
    }
    // `.bf16` from an 8-bit integer is no conversion ptxas has.
    let byte = |t: &str| bits(t) == 8 && !is_float(t);
    if (d == "bf16" && byte(a)) || (a == "bf16" && byte(d)) {
        return Some("Arguments mismatch for instruction 'cvt'".into());
    }
    let packed = d.ends_with("x2") && a == "f32";
    if n != if packed { 3 } else { 2 } {
        return Some("Arguments mismatch for instruction 'cvt'".into());
    }
    let has = |w: &str| mods.contains(&w);
    // `.relu` is for 16-bit floats (and their pairs) made from `.f32`.
    let half = matches!(d, "f16" | "bf16") || packed;
    if has("relu") && !(half && a == "f32") {
        return Some("Unexpected instruction types specified for 'cvt'".into());
    }
    if has("relu") && has("sat") {
        return Some("Modifier '.relu' cannot be combined with modifier '.sat'".into());
    }
    if packed && d.starts_with('e') && !has("satfinite") {
        return Some(format!(
            "'.satfinite' modifier required for instruction 'cvt' with destination type '.{d}'"
        ));
    }
    if has("sat") && !saturates(d, a) {
        return Some("Illegal modifier '.sat' for instruction 'cvt'".into());
    }
    if has("ftz") && d != "f32" && a != "f32" {
        return Some("Modifier '.ftz' does not apply to this type of convert operation".into());
    }
    rounding_error(mods, d, a, packed)
}

/// The rounding of `cvt.d.a`: ptxas's error, if any.
fn rounding_error(mods: &[&str], d: &str, a: &str, packed: bool) -> Option<String> {
    let given: smallvec::SmallVec<[&str; 1]> = mods
        .iter()
        .copied()
        .filter(|m| FLOAT_ROUNDING.contains(m) || INT_ROUNDING.contains(m))
        .collect();
    let (float_ok, int_ok, required) = if packed || d == "f16x2" {
        (true, false, true)
    } else {
        roundings(d, a)
    };
    match given.as_slice() {
        [] if required => Some("Rounding modifier required for instruction 'cvt'".into()),
        [] => None,
        [r] => {
            // `.rna` is tf32's rounding only.
            let fits = if packed {
                *r == "rn" || (*r == "rz" && !d.starts_with('e'))
            } else {
                (float_ok && FLOAT_ROUNDING.contains(r) && (*r != "rna" || d == "tf32"))
                    || (int_ok && INT_ROUNDING.contains(r))
            };
            (!fits).then(|| "Illegal rounding modifier for instruction 'cvt'".into())
        }
        _ => Some("Multiple rounding modifiers specified".into()),
    }
}
