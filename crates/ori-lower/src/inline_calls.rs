//! Calls written out as the callee's body, in the PTX text, for the fix-it.
//!
//! ptxas 13.0.88 serializes a function's whole wgmma pipeline when the
//! function makes a call it does not inline (C7509: every call under `-c`,
//! and every call to a function without a body), or a call to a callee that
//! holds pipeline ops (C7510), wherever in the function the call is. No
//! placement of fences and waits cures that (the corpus's `c7509_*` and
//! `c7510_*` cases still get their message when written fully serialized);
//! taking the call away does. So where every call such a function makes
//! (and every call its callees make, transitively) goes to a function
//! defined in the module, the fix-it writes each call as the callee's body:
//!
//! ```text
//! { .reg .b32 %ori_inl3_a0; .reg .b32 %ori_inl3_r0; mov.b32 %ori_inl3_a0, arg;
//!   {                                       // (arguments and results in the
//!                                           // caller's scope)
//!     .reg .b32 x; .reg .b32 rv;            // the callee's formals
//!     mov.b32 x, %ori_inl3_a0;
//!     ...the callee's body, labels renamed, `ret` as a branch to the end...
//!   $ori_inl3_ret:
//!     mov.b32 %ori_inl3_r0, rv;
//!   }
//!   mov.b32 result, %ori_inl3_r0;
//! }
//! ```
//!
//! The nested scope lets the callee's declarations shadow the caller's
//! names, so only labels need renaming. Calls that cannot be written this
//! way (no body, recursion, `.param` formals, a guard, an indirect call)
//! leave the text as it is: the caller would stay serialized anyway.

use ori_ptx::{Function, Module, OperandKind, Stmt};

/// How many calls one module may have written out (a guard against blowup).
const MAX_INLINED_CALLS: usize = 4096;

/// How many rounds of writing out: one per level of calls inside inlined
/// bodies (a recursion guard).
const MAX_ROUNDS: usize = 32;

/// A call instruction found in a caller: byte range, callee, results, arguments.
struct CallSite {
    lo: usize,
    hi: usize,
    callee: String,
    rets: Vec<String>,
    args: Vec<String>,
    indent: String,
}

/// Every call the named functions make written out as the callee's body,
/// or `None` when some call cannot be (or there is none): see the module
/// documentation. `src` must parse.
pub fn inline_calls(file: &str, src: &str, callers: &[&str]) -> Option<String> {
    // Each round parses the text once and writes out every call the callers
    // make, the last first so that the earlier byte ranges stay valid: the
    // work is linear in the text per level of calls inside inlined bodies,
    // where one parse per call made it quadratic in the number of calls.
    let mut text = src.to_string();
    let mut inlined = 0;
    for _ in 0..MAX_ROUNDS {
        let m = ori_ptx::parse(file, &text).ok()?;
        let mut sites = Vec::new();
        for f in m.items.iter().filter_map(|it| match it {
            ori_ptx::Item::Function(f) if callers.contains(&f.name.as_str()) => Some(f),
            _ => None,
        }) {
            let mut found = Vec::new();
            all_calls(f.body.as_ref()?, &text, &mut found);
            for s in found {
                let s = s.ok()?;
                if s.callee == f.name {
                    return None;
                }
                sites.push(s);
            }
        }
        if sites.is_empty() {
            return (inlined > 0).then_some(text);
        }
        if inlined + sites.len() > MAX_INLINED_CALLS {
            return None;
        }
        sites.sort_by_key(|s| s.lo);
        let mut bodies = Vec::with_capacity(sites.len());
        for (k, s) in sites.iter().enumerate() {
            let callee = find_function(&m, &s.callee)?;
            bodies.push(inlined_body(&text, callee, s, inlined + k)?);
        }
        for (s, body) in sites.iter().zip(bodies).rev() {
            text.replace_range(s.lo..s.hi, &body);
        }
        inlined += sites.len();
    }
    None
}

fn find_function<'m>(m: &'m Module, name: &str) -> Option<&'m Function> {
    m.items.iter().find_map(|it| match it {
        ori_ptx::Item::Function(f) if f.name == name && f.body.is_some() => Some(f),
        _ => None,
    })
}

/// Every `call` in a body, in order: `Ok` if it can be written out, `Err`
/// if not.
fn all_calls(body: &[Stmt], src: &str, out: &mut Vec<Result<CallSite, ()>>) {
    for s in body {
        match s {
            Stmt::Scope { body, .. } => all_calls(body, src, out),
            Stmt::Inst(i) if i.opcode == "call" => out.push(call_site(i, src).ok_or(())),
            _ => {}
        }
    }
}

fn call_site(i: &ori_ptx::Instruction, src: &str) -> Option<CallSite> {
    if i.pred.is_some() {
        return None;
    }
    let names = |o: &ori_ptx::Operand| -> Option<Vec<String>> {
        match &o.kind {
            OperandKind::CallArgs(v) => v.iter().map(|a| Some(operand_text(a, src))).collect(),
            _ => None,
        }
    };
    let mut ops = i.operands.iter().peekable();
    let rets = match ops.peek() {
        Some(o) if matches!(o.kind, OperandKind::CallArgs(_)) => names(ops.next()?)?,
        _ => Vec::new(),
    };
    let callee = match &ops.next()?.kind {
        OperandKind::Symbol(s) => s.to_string(),
        _ => return None,
    };
    let args = match ops.next() {
        Some(o) => names(o)?,
        None => Vec::new(),
    };
    if ops.next().is_some() {
        return None; // a prototype or target list: an indirect call
    }
    let (lo, hi) = (i.span.lo as usize, i.span.hi as usize);
    let line_start = src[..lo].rfind('\n').map_or(0, |p| p + 1);
    let indent = src[line_start..lo]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    Some(CallSite {
        lo,
        hi,
        callee,
        rets,
        args,
        indent,
    })
}

fn operand_text(o: &ori_ptx::Operand, src: &str) -> String {
    src[o.span.lo as usize..o.span.hi as usize]
        .trim()
        .to_string()
}

/// The text standing for call `s` to `callee` (the `n`th written out).
fn inlined_body(src: &str, callee: &Function, s: &CallSite, n: usize) -> Option<String> {
    if callee.params.len() != s.args.len() || callee.ret_params.len() != s.rets.len() {
        return None;
    }
    let formals = callee.params.iter().chain(&callee.ret_params);
    if formals
        .clone()
        .any(|p| p.space != "reg" || p.array.is_some())
    {
        return None;
    }
    let (lo, hi) = (callee.span.lo as usize, callee.span.hi as usize);
    let whole = &src[lo..hi];
    let open = whole.find('{')? + 1;
    let close = whole.rfind('}')?;
    let body = &whole[open..close];
    let mut labels = Vec::new();
    collect_labels(callee.body.as_deref()?, &mut labels);
    let prefix = format!("%ori_inl{n}");
    let ret_label = format!("$ori_inl{n}_ret");
    let body = rewrite_body(body, &labels, n, &ret_label);
    let ind = &s.indent;
    let arg = |k: usize| format!("{prefix}_a{k}");
    let ret = |k: usize| format!("{prefix}_r{k}");
    // The first line declares and passes the arguments, so that what the
    // fix-it puts before the call goes before the scope.
    let mut out = "{".to_string();
    for (k, p) in callee.params.iter().enumerate() {
        out += &format!(" .reg .{} {};", p.ty, arg(k));
    }
    for (k, p) in callee.ret_params.iter().enumerate() {
        out += &format!(" .reg .{} {};", p.ty, ret(k));
    }
    for (k, p) in callee.params.iter().enumerate() {
        out += &format!(" mov.{} {}, {};", p.ty, arg(k), s.args[k]);
    }
    out += &format!(" // ori: inlined call to {}\n{ind}{{\n", callee.name);
    for p in callee.params.iter().chain(&callee.ret_params) {
        out += &format!("{ind}.reg .{} {};\n", p.ty, p.name);
    }
    for (k, p) in callee.params.iter().enumerate() {
        out += &format!("{ind}mov.{} {}, {};\n", p.ty, p.name, arg(k));
    }
    out += body.trim_matches('\n');
    out += &format!("\n{ret_label}:\n");
    for (k, p) in callee.ret_params.iter().enumerate() {
        out += &format!("{ind}mov.{} {}, {};\n", p.ty, ret(k), p.name);
    }
    out += &format!("{ind}}}\n");
    for (k, p) in callee.ret_params.iter().enumerate() {
        out += &format!("{ind}mov.{} {}, {};\n", p.ty, s.rets[k], ret(k));
    }
    // A block comment: a line comment would swallow what follows the call
    // on its line (a kernel written on one line).
    out += &format!("{ind}}} /* ori: end of inlined call to {} */", callee.name);
    Some(out)
}

fn collect_labels(body: &[Stmt], out: &mut Vec<String>) {
    for s in body {
        match s {
            // A `.branchtargets` or `.calltargets` list and a
            // `.callprototype` are named like a label: inlined twice, the
            // name would be defined twice.
            Stmt::Label { name, .. }
            | Stmt::BranchTargets { name, .. }
            | Stmt::CallTargets { name, .. }
            | Stmt::CallPrototype { name, .. } => out.push(name.clone()),
            Stmt::Scope { body, .. } => collect_labels(body, out),
            _ => {}
        }
    }
}

/// Whether what `out` holds since the last statement boundary is at most
/// a guard (`@p `, `@!p `): a token there is an opcode.
fn at_statement_start(out: &str) -> bool {
    let tail = out
        .rfind(['\n', ';', '{', '}', ':'])
        .map_or(out, |p| &out[p + 1..])
        .trim();
    tail.is_empty() || (tail.starts_with('@') && !tail.contains(char::is_whitespace))
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%')
}

/// The callee's body with its labels renamed for call number `n` and each
/// `ret` turned into a branch to `ret_label` (comments kept as they are).
fn rewrite_body(body: &str, labels: &[String], n: usize, ret_label: &str) -> String {
    let mut out = String::with_capacity(body.len() + 64);
    for line in body.split_inclusive('\n') {
        let (code, comment) = match line.find("//") {
            Some(p) => line.split_at(p),
            None => (line, ""),
        };
        let mut tok = String::new();
        let flush = |tok: &mut String, out: &mut String| {
            if labels.contains(tok) {
                out.push_str(&format!("{tok}_ori_inl{n}"));
            } else if (tok == "ret" || tok == "ret.uni") && at_statement_start(out) {
                // `ret.uni` stays uniform; a plain or guarded `ret` is a plain branch.
                out.push_str(if tok == "ret" { "bra " } else { "bra.uni " });
                out.push_str(ret_label);
            } else {
                out.push_str(tok);
            }
            tok.clear();
        };
        for c in code.chars() {
            if is_ident_char(c) || (c == '.' && !tok.is_empty() && tok.starts_with("ret")) {
                tok.push(c);
                continue;
            }
            flush(&mut tok, &mut out);
            out.push(c);
        }
        flush(&mut tok, &mut out);
        out.push_str(comment);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n\
        .func (.reg .b32 rv) f(.reg .b32 x)\n{\n  setp.eq.u32 p, x, 0;\n  @p bra L1;\n  add.u32 rv, x, 1;\n  ret;\nL1:\n  mov.u32 rv, 7;\n  ret;\n}\n\
        .visible .entry k()\n{\n  .reg .b32 r<4>;\n  mov.u32 r0, 1;\n  call (r1), f, (r0);\n  ret;\n}\n";

    #[test]
    fn a_call_becomes_the_callees_body_in_a_scope() {
        let out = inline_calls("t.ptx", SRC, &["k"]).expect("inlinable");
        assert!(!out.contains("call (r1)"), "{out}");
        assert!(out.contains("mov.b32 %ori_inl0_a0, r0;"), "{out}");
        assert!(out.contains("@p bra L1_ori_inl0;"), "{out}");
        assert!(out.contains("L1_ori_inl0:"), "{out}");
        assert!(out.contains("bra $ori_inl0_ret;"), "{out}");
        assert!(out.contains("mov.b32 r1, %ori_inl0_r0;"), "{out}");
        // The result parses, and the kernel makes no call any more.
        let m = ori_ptx::parse("t.ptx", &out).expect("parses");
        let body = m
            .items
            .iter()
            .find_map(|it| match it {
                ori_ptx::Item::Function(f) if f.name == "k" => f.body.as_ref(),
                _ => None,
            })
            .expect("k has a body");
        let mut calls = Vec::new();
        all_calls(body, &out, &mut calls);
        assert!(calls.is_empty());
    }

    #[test]
    fn calls_without_a_body_or_recursive_are_left_alone() {
        let ext = ".version 8.0\n.target sm_90a\n.address_size 64\n\
            .extern .func (.reg .b32 rv) g(.reg .b32 x);\n\
            .visible .entry k()\n{\n  .reg .b32 r<4>;\n  call (r1), g, (r0);\n  ret;\n}\n";
        assert_eq!(inline_calls("t.ptx", ext, &["k"]), None);
        let rec = ".version 8.0\n.target sm_90a\n.address_size 64\n\
            .func h()\n{\n  call h, ();\n  ret;\n}\n\
            .visible .entry k()\n{\n  call h, ();\n  ret;\n}\n";
        assert_eq!(inline_calls("t.ptx", rec, &["k"]), None);
        assert_eq!(inline_calls("t.ptx", SRC, &["f"]), None, "no call in f");
    }
}
