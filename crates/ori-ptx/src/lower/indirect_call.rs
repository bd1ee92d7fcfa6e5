//! `call`: direct calls, and indirect calls through a register with the
//! `.calltargets` list or `.callprototype` they name.
//!
//! PTX ISA 9.0, `call`: `call{.uni} [(ret),] func, [(params),] [flist |
//! fproto];`, where `func` is a function's name or, for an indirect call,
//! a register holding its address, and an indirect call names last either
//! `flist: .calltargets f1, f2, ...;` (every function it may reach) or
//! `fproto: .callprototype [(ret)] _ [(params)];` (their signature), both
//! declared earlier in the function. The IR keeps an indirect call's list
//! as a vector of the functions' names and a prototype as its name.
//!
//! ptxas 13.0.88 checks an indirect call's return list against every
//! target (or the prototype) and then its arguments against every target,
//! each a `Call has wrong number of parameters` or a pair of type and
//! alignment errors per argument. Its errors on what is not a call it can
//! make (`tests/bad_input/icall_*`): a register callee with no list, `Label
//! expected for argument 0` then a fatal `Call target not recognized`; a
//! list naming what is not a function, `Illegal call target, device
//! function expected` at the list and the same fatal at the call; a
//! function's name with a list, `Argument N of instruction 'call': must be
//! register`; a list not declared in an enclosing scope, `Unknown symbol`
//! and `Arguments mismatch`, and at the end of the function `Unknown
//! symbol` again (or, declared later, a fatal forward reference).

use super::declarations::{self, Signature};
use super::LowerCx;
use crate::ast;
use crate::diag::{Diag, Severity, Span};
use ori_ir::{InstData, Operand, Slot, Symbol};

const MISMATCH: &str = "Arguments mismatch for instruction 'call'";

/// What an indirect call may name last.
#[derive(Clone, Debug)]
pub(crate) enum CallList {
    /// A `.calltargets` list: its functions, or `None` when it names what
    /// is not a function (ptxas then refuses every call through it).
    Targets(Option<Box<[Symbol]>>),
    /// A `.callprototype`: its signature.
    Prototype(Signature),
}

/// `name: .calltargets funcs;`: each name must be a function of the module.
pub(super) fn declare_targets(cx: &mut LowerCx<'_>, name: &str, funcs: &[(String, Span)]) {
    let mut ok = true;
    for (f, span) in funcs {
        if !cx.sigs.contains_key(f.as_str()) {
            cx.error(*span, "Illegal call target, device function expected");
            ok = false;
        }
    }
    let list = ok.then(|| funcs.iter().map(|(f, _)| Symbol::new(f)).collect());
    declare(cx, name, CallList::Targets(list));
}

/// `list` named `name` in the innermost scope.
fn declare(cx: &mut LowerCx<'_>, name: &str, list: CallList) {
    let scope = cx.scope_path.last().copied().unwrap_or(0);
    cx.call_lists.insert(name.to_string(), (scope, list));
}

/// `name: .callprototype [(ret)] _ [(params)];`.
pub(super) fn declare_prototype(
    cx: &mut LowerCx<'_>,
    name: &str,
    ret_params: &[ast::Param],
    params: &[ast::Param],
) {
    let sig = Signature::of(false, ret_params, params);
    declare(cx, name, CallList::Prototype(sig));
}

/// Where a call's parts stand among its operands.
struct Shape {
    rets: Option<usize>,
    callee: usize,
    args: Option<usize>,
    list: Option<usize>,
}

impl Shape {
    /// `[(rets),] callee [, (args)] [, list]`; `None` when the operands
    /// have no callee or more than a list after the arguments.
    fn of(ops: &[ast::Operand]) -> Option<Shape> {
        let is_list = |k: usize| {
            matches!(
                ops.get(k).map(|o| &o.kind),
                Some(ast::OperandKind::CallArgs(_))
            )
        };
        let rets = is_list(0).then_some(0);
        let callee = rets.map_or(0, |_| 1);
        if callee >= ops.len() || is_list(callee) {
            return None;
        }
        let args = is_list(callee + 1).then_some(callee + 1);
        let next = args.unwrap_or(callee) + 1;
        let list = (next < ops.len()).then_some(next);
        if ops.len() > next + 1 || list.is_some_and(is_list) {
            return None;
        }
        Some(Shape {
            rets,
            callee,
            args,
            list,
        })
    }
}

/// `call [(rets),] f [, (args)] [, list]`.
pub fn lower_call(cx: &mut LowerCx<'_>, i: &ast::Instruction) -> Option<InstData> {
    let Some(shape) = Shape::of(&i.operands) else {
        if i.operands.len() > 4 {
            // `call (r), fp, (a), proto, list`: ptxas's grammar ends a call
            // at its one list.
            let d = Diag::new(
                cx.file,
                i.span,
                Severity::Fatal,
                "Parsing error near ',': syntax error",
            );
            cx.diags.push(d);
        } else {
            cx.error(i.span, MISMATCH);
        }
        return None;
    };
    let callee_name = match &i.operands[shape.callee].kind {
        ast::OperandKind::Reg(n) | ast::OperandKind::Symbol(n) => Some(n.as_str()),
        _ => None,
    };
    if let Some(sig) = callee_name.and_then(|n| cx.sigs.get(n)).cloned() {
        let data = build(cx, i, &shape, None)?;
        if shape.list.is_some() {
            let k = shape.callee;
            cx.error(
                i.span,
                format!("Argument {k} of instruction 'call': must be register"),
            );
        }
        let (rets, args) = arg_sizes(cx, i, &shape);
        let file = cx.file;
        declarations::check_call(file, i.span, &sig, &rets, &args, &mut cx.diags);
        return shape.list.is_none().then_some(data);
    }
    let callee = cx.operand(&i.operands[shape.callee])?;
    if !matches!(callee, Operand::Reg(_)) {
        cx.error(i.span, MISMATCH);
        return None;
    }
    let list = indirect_list(cx, i, &shape)?;
    build(cx, i, &shape, Some(list))
}

/// The sizes in bytes of a call's return arguments and arguments.
fn arg_sizes(
    cx: &mut LowerCx<'_>,
    i: &ast::Instruction,
    shape: &Shape,
) -> (Vec<Option<u64>>, Vec<Option<u64>>) {
    let mut sizes = |at: Option<usize>| match at.map(|k| &i.operands[k].kind) {
        Some(ast::OperandKind::CallArgs(v)) => v.iter().map(|o| cx.arg_bytes(o)).collect(),
        _ => Vec::new(),
    };
    let rets = sizes(shape.rets);
    (rets, sizes(shape.args))
}

/// The list an indirect call names, checked against the call: the IR's
/// last operand (the functions as a vector, or the prototype's name).
fn indirect_list(cx: &mut LowerCx<'_>, i: &ast::Instruction, shape: &Shape) -> Option<Operand> {
    let fatal = |cx: &mut LowerCx<'_>| {
        let d = Diag::new(
            cx.file,
            i.span,
            Severity::Fatal,
            "Call target not recognized",
        );
        cx.diags.push(d);
    };
    let Some(at) = shape.list else {
        cx.error(
            i.span,
            "Label expected for argument 0 of instruction 'call'",
        );
        fatal(cx);
        return None;
    };
    let op = &i.operands[at];
    let (ast::OperandKind::Reg(n) | ast::OperandKind::Symbol(n)) = &op.kind else {
        cx.error(i.span, MISMATCH);
        return None;
    };
    let declared = cx.call_lists.get(n.as_str()).cloned();
    let in_scope = declared
        .as_ref()
        .is_some_and(|(s, _)| *s == 0 || cx.scope_path.contains(s));
    let Some((_, list)) = declared.filter(|_| in_scope) else {
        if cx.sigs.contains_key(n.as_str()) {
            fatal(cx);
            return None;
        }
        cx.error(op.span, format!("Unknown symbol '{n}'"));
        cx.error(i.span, MISMATCH);
        if cx.call_lists.contains_key(n.as_str()) {
            // Declared in a scope that does not enclose the call.
            cx.undefined.push((n.to_string(), op.span));
        } else {
            cx.list_refs.push((n.to_string(), op.span));
        }
        return None;
    };
    let (rets, args) = arg_sizes(cx, i, shape);
    match list {
        CallList::Targets(None) => {
            fatal(cx);
            None
        }
        CallList::Targets(Some(funcs)) => {
            let sigs: Vec<Signature> = funcs
                .iter()
                .filter_map(|f| cx.sigs.get(f.as_str()).cloned())
                .collect();
            check_against(cx, i.span, &sigs, &rets, &args);
            Some(Operand::Vector(
                funcs.iter().cloned().map(Operand::Sym).collect(),
            ))
        }
        CallList::Prototype(sig) => {
            check_against(cx, i.span, std::slice::from_ref(&sig), &rets, &args);
            Some(Operand::Sym(Symbol::new(n)))
        }
    }
}

/// An indirect call's return list against every signature, then its
/// arguments against every signature (ptxas 13.0.88's order,
/// `tests/bad_input/icall_two_targets_both_wrong`).
fn check_against(
    cx: &mut LowerCx<'_>,
    span: Span,
    sigs: &[Signature],
    rets: &[Option<u64>],
    args: &[Option<u64>],
) {
    let file = cx.file;
    for sig in sigs {
        declarations::check_formals(file, span, &sig.ret_params, rets, &mut cx.diags);
    }
    for sig in sigs {
        declarations::check_formals(file, span, &sig.params, args, &mut cx.diags);
    }
}

/// The call's IR: its return list written, its callee, arguments and (for
/// an indirect call) list read.
fn build(
    cx: &mut LowerCx<'_>,
    i: &ast::Instruction,
    shape: &Shape,
    list: Option<Operand>,
) -> Option<InstData> {
    let mut slots = ori_ir::Slots::new();
    if let Some(k) = shape.rets {
        slots.push(Slot::def(cx.operand(&i.operands[k])?));
    }
    slots.push(Slot::use_(cx.operand(&i.operands[shape.callee])?));
    if let Some(k) = shape.args {
        slots.push(Slot::use_(cx.operand(&i.operands[k])?));
    }
    if let Some(l) = list {
        slots.push(Slot::use_(l));
    }
    Some(InstData::interned(
        Symbol::new("call"),
        i.modifiers,
        slots,
        i.span.line,
    ))
}
