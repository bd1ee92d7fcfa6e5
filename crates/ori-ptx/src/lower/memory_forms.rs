//! What ptxas 13.0.88 checks of the open memory families' modifiers for
//! sm_90a (PTX ISA 9.0, 9.7.9.8-10 and 9.7.13.5-6; probed by the grammar
//! fuzzer): `ld`, `st`, `atom` and `red`.
//!
//! It exists because these families are open in the instruction table
//! and users' kernels are full of them. The rules:
//! * one type, no more, no less ("Unexpected instruction types");
//! * the cache hints and eviction priorities (`.L2::cache_hint`,
//!   `.L1::evict_*`, `.L2::evict_*`, `.L1::no_allocate`) and the prefetch
//!   sizes (`.L2::64B` ...) are for global memory (or a generic address)
//!   only; `.volatile` and the memory orders (`.relaxed`, `.acquire`,
//!   `.release`, `.acq_rel`) are not for `.local`, `.const` or `.param`;
//! * `.mmio` takes no vector; an `ld` with an L2 eviction priority must
//!   load `.v8.b32` or `.v4.b64`;
//! * one state space and one scope at most; on `ld` and `st` a scope
//!   comes with a memory order (not with `.volatile`), `.nc` with no
//!   order, `.weak` or `.volatile`, an L1 eviction priority with no cache
//!   operator;
//! * `atom` and `red` need an operation, `red` takes neither `.cas` nor
//!   `.exch`, and a 16-bit float (`.f16`, `.bf16`, their pairs) needs
//!   `.noftz` (and no other type takes it); they take only spaces,
//!   orders, scopes, vectors and a cache hint besides (not on `.cas`); a
//!   load does not release, a store or a reduction does not acquire;
//! * `ld` and `red` take two operands, `atom` three (`.cas` four), one
//!   more with `.L2::cache_hint`; ptxas also takes a fourth on a 32-bit
//!   bitwise or exchange `atom`.

use super::LowerCx;
use crate::ast;

const SPACES: &[&str] = &[
    "global",
    "shared",
    "shared::cta",
    "shared::cluster",
    "local",
    "const",
    "param",
    "param::entry",
    "param::func",
];
const OPERATIONS: &[&str] = &[
    "and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max",
];

/// Whether `m` is a cache hint or an eviction priority.
fn cache_word(m: &str) -> bool {
    m == "L2::cache_hint"
        || m.starts_with("L1::evict_")
        || m.starts_with("L2::evict_")
        || m == "L1::no_allocate"
}

/// How ptxas names a cache word in its message (`.evict_last`,
/// `.L2::cache_hint`).
fn cache_name(m: &str) -> &str {
    if m == "L2::cache_hint" {
        m
    } else {
        m.split_once("::").map_or(m, |(_, w)| w)
    }
}

/// Whether `i` (an `ld`, `st`, `atom` or `red` of no closed form) has
/// modifiers ptxas takes; reports its error and returns false when not.
pub(super) fn memory_modifiers_fit(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> bool {
    let mods: smallvec::SmallVec<[&str; 8]> = i.modifiers.iter().map(|m| m.as_str()).collect();
    if mods.iter().any(|m| matches!(*m, "async" | "bulk")) {
        return true;
    }
    let error = memory_error(i.opcode.as_str(), &mods).or_else(|| {
        (!count_fits(i.opcode.as_str(), &mods, i.operands.len()))
            .then(|| format!("Arguments mismatch for instruction '{}'", i.opcode))
    });
    // ptxas gives some errors as several lines.
    for line in error.iter().flat_map(|e| e.lines()) {
        cx.error(i.span, line.to_string());
    }
    error.is_none()
}

/// ptxas's first error on `opcode` with `mods`.
fn memory_error(opcode: &str, mods: &[&str]) -> Option<String> {
    let types: smallvec::SmallVec<[&str; 2]> = mods
        .iter()
        .copied()
        .filter(|m| super::float_literals::is_type(m))
        .collect();
    if types.len() != 1 {
        return Some(format!(
            "Unexpected instruction types specified for '{opcode}'"
        ));
    }
    if let Some(e) = combination_error(opcode, mods).or_else(|| space_error(opcode, mods)) {
        return Some(e);
    }
    let has = |w: &str| mods.contains(&w);
    if let Some(v) = mods.iter().find(|m| matches!(**m, "v2" | "v4" | "v8")) {
        if has("mmio") {
            return Some(format!(
                "Modifier '.mmio' cannot be combined with modifier '.{v}'"
            ));
        }
    }
    let ty = types[0];
    if opcode == "ld" {
        if let Some(m) = mods.iter().find(|m| m.starts_with("L2::evict_")) {
            let wide = (has("v8") && ty.ends_with("32")) || (has("v4") && ty.ends_with("64"));
            if !wide {
                return Some(format!(
                    "Instruction 'ld' requires '.v8.b32/.v4.b64' type with '.{m}' modifier."
                ));
            }
        }
    }
    // A load does not release, a store or a reduction does not acquire.
    let foreign = match opcode {
        "ld" => &["release", "acq_rel"][..],
        "st" | "red" => &["acquire", "acq_rel"][..],
        _ => &[][..],
    };
    if let Some(m) = mods.iter().find(|m| foreign.contains(m)) {
        return Some(format!(
            "Illegal modifier '.{m}' for instruction '{opcode}'"
        ));
    }
    if matches!(opcode, "atom" | "red") {
        return atomic_error(opcode, mods, ty);
    }
    None
}

/// The operand count of `ld` (2), `atom` (3, 4 for `.cas`) and `red`
/// (2), one more with `.L2::cache_hint`; `st` has its own check.
fn count_fits(opcode: &str, mods: &[&str], n: usize) -> bool {
    let base = match opcode {
        "ld" | "red" => 2,
        "atom" if mods.contains(&"cas") => 4,
        "atom" => 3,
        _ => return true,
    };
    let n_want = base + usize::from(mods.contains(&"L2::cache_hint"));
    // ptxas 13.0.88 also takes a fourth operand on a 32-bit bitwise or
    // exchange `atom` without a cache hint (found by the grammar fuzzer:
    // `atom.or.b32 d, [a], b, c`; not on `.b64`, not on arithmetic).
    let extra = opcode == "atom"
        && n_want == 3
        && mods.contains(&"b32")
        && mods
            .iter()
            .any(|m| matches!(*m, "and" | "or" | "xor" | "exch"));
    n == n_want || (extra && n == 4)
}

/// The combinations ptxas refuses: two state spaces or two scopes; on
/// `ld` and `st`, a scope without a memory order or with `.volatile`, an
/// order or `.weak`/`.volatile` with `.nc`, an L1 eviction priority with
/// a cache operator.
fn combination_error(opcode: &str, mods: &[&str]) -> Option<String> {
    let count = |set: &[&str]| mods.iter().filter(|m| set.contains(m)).count();
    if count(SPACES) > 1 {
        return Some(format!(
            "Unexpected number of state spaces specified in instruction '{opcode}'"
        ));
    }
    const SCOPES: &[&str] = &["cta", "cluster", "gpu", "sys"];
    if count(SCOPES) > 1 {
        return Some("Multiple scope modifiers specified".into());
    }
    if !matches!(opcode, "ld" | "st") {
        return None;
    }
    let find = |set: &[&str]| mods.iter().copied().find(|m| set.contains(m));
    let order = find(&["relaxed", "acquire", "release"]);
    if let Some(scope) = find(SCOPES) {
        if mods.contains(&"volatile") {
            return Some(format!(
                "Modifier '.volatile' cannot be combined with modifier '.{scope}'"
            ));
        }
        if order.is_none() {
            return Some(format!(
                "Modifier '.{scope}' requires memory order with '{opcode}' instruction"
            ));
        }
    }
    let unordered = find(&["relaxed", "acquire", "release", "weak", "volatile"]);
    if let (Some(m), true) = (unordered, mods.contains(&"nc")) {
        return Some(format!(
            "Modifier '.{m}' cannot be combined with modifier '.nc'"
        ));
    }
    let evict = mods
        .iter()
        .find(|m| m.starts_with("L1::evict_") || **m == "L1::no_allocate");
    let cop = find(&["ca", "cg", "cs", "lu", "cv", "wb", "wt"]);
    match (evict, cop) {
        (Some(e), Some(c)) => Some(format!(
            "Modifier '.{}' cannot be combined with modifier '.{c}'",
            cache_name(e)
        )),
        _ => None,
    }
}

/// The state-space rules of the cache words, prefetch sizes, `.volatile`
/// and the memory orders.
fn space_error(opcode: &str, mods: &[&str]) -> Option<String> {
    let space = mods.iter().copied().find(|m| SPACES.contains(m))?;
    if space == "global" {
        return None;
    }
    if let Some(m) = mods.iter().find(|m| cache_word(m)) {
        return Some(format!(
            "Modifier '.{}' cannot be applied to '.{space}' space for instruction '{opcode}'",
            cache_name(m)
        ));
    }
    if mods
        .iter()
        .any(|m| matches!(*m, "L2::64B" | "L2::128B" | "L2::256B"))
    {
        return Some("State space incorrect for feature 'cache prefetching'".into());
    }
    let strict = space == "local" || space == "const" || space.starts_with("param");
    let order = mods.iter().find(|m| {
        matches!(
            **m,
            "volatile" | "relaxed" | "acquire" | "release" | "acq_rel"
        )
    });
    match order {
        Some(m) if strict => Some(format!(
            "Modifier '.{m}' cannot be applied to '.{space}' space"
        )),
        _ => None,
    }
}

/// `atom` and `red`: an operation, one `red` takes, `.noftz` on 16-bit
/// floats.
fn atomic_error(opcode: &str, mods: &[&str], ty: &str) -> Option<String> {
    let Some(op) = mods.iter().find(|m| OPERATIONS.contains(m)) else {
        return Some(format!(
            "Illegal operation '' for instruction '{opcode}'\n\
             Operation  requires  type for instruction '{opcode}'\n\
             Reduction operation is required for instruction '{opcode}'"
        ));
    };
    if opcode == "red" && matches!(*op, "cas" | "exch") {
        return Some(format!(
            "Illegal operation '.{op}' for instruction 'red'\n\
             Operation .{op} requires  type for instruction 'red'"
        ));
    }
    let half = matches!(ty, "f16" | "bf16" | "f16x2" | "bf16x2");
    let foreign = mods.iter().find(|m| {
        !(super::float_literals::is_type(m)
            || SPACES.contains(m)
            || OPERATIONS.contains(m)
            || matches!(
                **m,
                "relaxed"
                    | "acquire"
                    | "release"
                    | "acq_rel"
                    | "cta"
                    | "cluster"
                    | "gpu"
                    | "sys"
                    | "v2"
                    | "v4"
                    | "v8"
                    | "L2::cache_hint"
            )
            || (**m == "noftz" && half))
    });
    if let Some(m) = foreign {
        return Some(format!(
            "Illegal modifier '.{m}' for instruction '{opcode}'"
        ));
    }
    if *op == "cas" && mods.contains(&"L2::cache_hint") {
        return Some(format!(
            "Illegal modifier '.L2::cache_hint' for instruction '{opcode}'"
        ));
    }
    if half && !mods.contains(&"noftz") {
        return Some(format!(
            "'.noftz' modifier required for instruction '{opcode}' with type '.{ty}'"
        ));
    }
    None
}
