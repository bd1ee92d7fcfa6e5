//! What ptxas checks about declarations and calls before it compiles
//! anything: each function defined once, each `.reg` name declared once per
//! scope, `.align` a power of two, no more initializers than elements, and
//! calls that match their callee (a device function, the right number of
//! arguments, each argument as large as its formal). Every message and its
//! line are ptxas 13.0.88's (probed one by one: the `err_decl_*` and `err_call_*` cases of `tests/corpus`).

use crate::ast;
use crate::diag::{Diag, Severity, Span};
use ori_ir::NameMap;

/// The signature of a function of the module, as calls see it.
#[derive(Clone, Debug)]
pub struct Signature {
    /// `true` for an `.entry` (a kernel, which a `call` may not target),
    /// `false` for a `.func`.
    pub is_entry: bool,
    /// Sizes in bytes of the parameters (`None` where it cannot be told).
    pub params: Vec<(String, Option<u64>)>,
    /// The return parameters of a `.func (.param .b32 r) f(...)`, as name
    /// and size in bytes like `params`; empty when there are none.
    pub ret_params: Vec<(String, Option<u64>)>,
}

/// Bytes of one element of a PTX type (`b32` -> 4, `pred` -> none).
pub fn type_bytes(ty: &str) -> Option<u64> {
    let bits: u64 = ty
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()?;
    (bits.is_multiple_of(8) && bits > 0).then_some(bits / 8)
}

fn param_bytes(p: &ast::Param) -> Option<u64> {
    let elem = type_bytes(&p.ty)?;
    Some(match p.array {
        Some(0) => return None,
        Some(n) => elem * n,
        None => elem,
    })
}

/// Take function `f`'s signature into `out`, the module's signatures so
/// far (a name's first one counts), in source order; a second definition
/// (a body) of one name is `Duplicate definition of function` at its line
/// (`defined`: the names with a body so far).
pub fn add_signature(
    file: &str,
    f: &ast::Function,
    defined: &mut fxhash::FxHashSet<String>,
    out: &mut NameMap<String, Signature>,
    diags: &mut Vec<Diag>,
) {
    if f.body.is_some() && !defined.insert(f.name.clone()) {
        diags.push(Diag::new(
            file,
            f.span,
            Severity::Error,
            format!("Duplicate definition of function '{}'", f.name),
        ));
    }
    out.entry(f.name.clone())
        .or_insert_with(|| Signature::of(f.is_entry, &f.ret_params, &f.params));
}

impl Signature {
    /// The signature of a function (or of a `.callprototype`) with these
    /// return parameters and parameters.
    pub fn of(is_entry: bool, ret_params: &[ast::Param], params: &[ast::Param]) -> Signature {
        let sizes = |ps: &[ast::Param]| {
            ps.iter()
                .map(|p| (p.name.clone(), param_bytes(p)))
                .collect()
        };
        Signature {
            is_entry,
            params: sizes(params),
            ret_params: sizes(ret_params),
        }
    }
}

/// `.align N` with N not a power of two.
pub fn check_align(file: &str, align: Option<u32>, span: Span, diags: &mut Vec<Diag>) {
    if align.is_some_and(|a| !a.is_power_of_two()) {
        diags.push(Diag::new(
            file,
            span,
            Severity::Error,
            "Alignment must be a power of two",
        ));
    }
}

/// One variable declaration: alignment, and no more initializers than
/// elements (ptxas makes that one fatal).
pub fn check_var(file: &str, v: &ast::VarDecl, diags: &mut Vec<Diag>) {
    check_align(file, v.align, v.span, diags);
    if let Some(init) = &v.init {
        if too_many_elements(init, &v.dims) {
            diags.push(Diag::new(
                file,
                v.span,
                Severity::Fatal,
                "Greater number of elements in array initializer",
            ));
        }
    }
}

fn too_many_elements(init: &ast::Init, dims: &[Option<u64>]) -> bool {
    match (init, dims.split_first()) {
        (ast::Init::List(items), Some((d, rest))) => {
            let count: usize = items.iter().map(ast::Init::element_count).sum();
            d.is_some_and(|n| count as u64 > n) || items.iter().any(|i| too_many_elements(i, rest))
        }
        // A list for a scalar is a vector's or a struct's: not counted here.
        _ => false,
    }
}

/// A call against its callee's signature: `args` are the sizes of the
/// return arguments and of the arguments (`None` where unknown).
pub fn check_call(
    file: &str,
    span: Span,
    callee: &Signature,
    rets: &[Option<u64>],
    args: &[Option<u64>],
    diags: &mut Vec<Diag>,
) {
    if callee.is_entry {
        diags.push(Diag::new(
            file,
            span,
            Severity::Error,
            "Illegal call target, device function expected",
        ));
        return;
    }
    if rets.len() != callee.ret_params.len() || args.len() != callee.params.len() {
        diags.push(Diag::new(
            file,
            span,
            Severity::Error,
            "Call has wrong number of parameters",
        ));
        return;
    }
    check_formals(file, span, &callee.ret_params, rets, diags);
    check_formals(file, span, &callee.params, args, diags);
}

/// One side of an indirect call (its return list or its arguments, sizes
/// in bytes) against the formals of one target: a count that differs is
/// `Call has wrong number of parameters`, each argument of another size a
/// type and an alignment error naming the formal.
pub fn check_formals(
    file: &str,
    span: Span,
    formals: &[(String, Option<u64>)],
    actual: &[Option<u64>],
    diags: &mut Vec<Diag>,
) {
    if formals.len() != actual.len() {
        let msg = "Call has wrong number of parameters";
        diags.push(Diag::new(file, span, Severity::Error, msg));
        return;
    }
    for ((name, want), got) in formals.iter().zip(actual) {
        if let (Some(w), Some(g)) = (want, got) {
            if w != g {
                for what in ["Type", "Alignment"] {
                    diags.push(Diag::new(
                        file,
                        span,
                        Severity::Error,
                        format!("{what} of argument does not match formal parameter '{name}'"),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_sizes() {
        assert_eq!(type_bytes("b32"), Some(4));
        assert_eq!(type_bytes("u64"), Some(8));
        assert_eq!(type_bytes("f16x2"), None);
        assert_eq!(type_bytes("pred"), None);
        assert_eq!(type_bytes("b8"), Some(1));
    }
}
