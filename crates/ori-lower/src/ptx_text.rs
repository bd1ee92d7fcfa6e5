//! PTX written from the IR alone, for modules that never were PTX text.
//!
//! The fix-it (`ptx`) edits the user's source and keeps every byte it does
//! not change; a compiler that builds its kernels with
//! [`ori_ir::builder`] has no source, so this writes the whole module:
//! header, module-scope variables, each function with its parameters, one
//! `.reg` per register, labels, and every instruction as PTX, phase 87's
//! injections included (an arrive as `wgmma.fence.sync.aligned`, a commit
//! as `wgmma.commit_group.sync.aligned`, a wait as
//! `wgmma.wait_group.sync.aligned N`), so that ptxas compiles the pipeline
//! ori legalized as ori left it.

use cranelift_entity::SecondaryMap;
use ori_ir::write::write_operand;
use ori_ir::{Block, FuncKind, Function, InstData, Module};
use std::fmt::Write;

/// What the IR does not keep, so that PTX cannot be written from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotWritable(pub String);

impl std::fmt::Display for NotWritable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotWritable {}

/// The module as PTX text. Fails, naming what is missing, where the front
/// end kept less than PTX needs: the initializer of a module-scope array
/// (kept as `= ...`, to save memory on large tables) and a call whose
/// arguments are function-local `.param` variables (the IR keeps registers,
/// not local declarations). Modules made with the builder have neither.
pub fn write_module(m: &Module) -> Result<String, NotWritable> {
    if let Some(g) = m.globals.iter().find(|g| g.ends_with("= ...")) {
        let name = g.split_whitespace().rev().nth(2).unwrap_or(g);
        return Err(NotWritable(format!(
            "the initializer of `{name}` is not kept in the IR"
        )));
    }
    for f in m.funcs.values() {
        for i in f.layout.all_insts() {
            let d = &f.insts[i];
            if d.is_indirect_call()
                && !matches!(
                    d.slots.last().map(|s| &s.op),
                    Some(ori_ir::Operand::Vector(_))
                )
            {
                return Err(NotWritable(format!(
                    "line {}: the .callprototype of an indirect call in '{}' is not kept in the IR",
                    d.line, f.name
                )));
            }
            let local_param = f.insts[i].slots.iter().any(|s| match &s.op {
                ori_ir::Operand::Args(a) => a.iter().any(|o| matches!(o, ori_ir::Operand::Sym(_))),
                _ => false,
            });
            if local_param {
                return Err(NotWritable(format!(
                    "line {}: call arguments in local .param variables of '{}' are not kept in the IR",
                    f.insts[i].line, f.name
                )));
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, ".version {}.{}", m.version.0, m.version.1);
    let _ = writeln!(out, ".target {}", m.target.join(", "));
    let _ = writeln!(out, ".address_size {}", m.address_size);
    for g in &m.globals {
        let _ = writeln!(out, "{g};");
    }
    for f in m.funcs.values() {
        out.push('\n');
        write_function(&mut out, f);
    }
    Ok(out)
}

fn write_params(out: &mut String, params: &[ori_ir::Param]) {
    for (k, p) in params.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        // The front end keeps `.align N` and an array's `[N]` in the type.
        let (mut align, mut ty, mut dims) = (String::new(), String::new(), String::new());
        let mut words = p.ty.split_whitespace();
        while let Some(w) = words.next() {
            if w == ".align" {
                let _ = write!(align, ".align {} ", words.next().unwrap_or("1"));
            } else if w.starts_with('[') {
                dims.push_str(w);
            } else {
                ty.push_str(w);
            }
        }
        let _ = write!(out, ".param {align}{ty} {}{dims}", p.name);
    }
}

/// One function as PTX.
pub fn write_function(out: &mut String, f: &Function) {
    if let Some(l) = &f.linkage {
        let _ = write!(out, ".{} ", l.trim_start_matches('.'));
    } else if f.kind == FuncKind::Entry {
        out.push_str(".visible ");
    }
    out.push_str(match f.kind {
        FuncKind::Entry => ".entry ",
        FuncKind::Func => ".func ",
    });
    if !f.ret_params.is_empty() {
        out.push('(');
        write_params(out, &f.ret_params);
        out.push_str(") ");
    }
    let _ = write!(out, "{}(", f.name);
    write_params(out, &f.params);
    out.push(')');
    if let Some(n) = f.max_regs {
        let _ = write!(out, " .maxnreg {n}");
    }
    for (name, values) in &f.launch_bounds {
        let values: Vec<String> = values.iter().map(u32::to_string).collect();
        let _ = write!(out, " .{name} {}", values.join(", "));
    }
    if !f.has_body {
        out.push_str(";\n");
        return;
    }
    out.push_str("\n{\n");
    for r in f.vregs.values() {
        let _ = writeln!(out, "\t.reg .{} {};", r.ty, r.name);
    }
    let targeted = branch_targets(f);
    let mut lists = 0;
    for (k, &b) in f.layout.blocks().iter().enumerate() {
        if k > 0 || targeted[b] {
            let _ = writeln!(out, "{}:", f.block_name(b));
        }
        if f.blocks[b].nounroll {
            out.push_str("\t.pragma \"nounroll\";\n");
        }
        for &i in f.layout.block_insts(b) {
            if f.insts[i].indexed_targets().is_some() {
                write_indexed_branch(out, f, &f.insts[i], lists);
                lists += 1;
                continue;
            }
            if f.insts[i].is_indirect_call() {
                write_indirect_call(out, f, &f.insts[i], lists);
                lists += 1;
                continue;
            }
            out.push('\t');
            write_inst(out, f, &f.insts[i]);
            out.push_str(";\n");
        }
    }
    out.push_str("}\n");
}

/// The blocks some branch names (they need a label even when first).
fn branch_targets(f: &Function) -> SecondaryMap<Block, bool> {
    let mut t = SecondaryMap::new();
    for i in f.layout.all_insts() {
        for b in f.insts[i].branch_targets() {
            t[b] = true;
        }
    }
    t
}

/// The name of the function's `n`th `.branchtargets` list (`$` keeps it
/// apart from every name the front end takes from PTX source, where a
/// list made by a compiler would not start so).
fn list_name(n: usize) -> String {
    format!("$ori_brx_{n}")
}

/// A `brx.idx` (the function's `n`th) with the `.branchtargets` list it
/// names declared right before it (PTX ISA: before its use, in the
/// function), both lines with their `;`.
fn write_indexed_branch(out: &mut String, f: &Function, d: &InstData, n: usize) {
    let name = list_name(n);
    let _ = write!(out, "\t{name}: .branchtargets ");
    write_list(out, f, d.indexed_targets().unwrap_or_default());
    out.push_str(";\n\t");
    write_guarded_mnemonic(out, f, d);
    out.push(' ');
    if let Some(s) = d.slots.first() {
        write_operand(out, f, &s.op);
    }
    let _ = writeln!(out, ", {name};");
}

/// `ops` separated by commas.
fn write_list(out: &mut String, f: &Function, ops: &[ori_ir::Operand]) {
    for (k, o) in ops.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        write_operand(out, f, o);
    }
}

/// `d`'s guard (`@p `, `@!p `), if any, and its mnemonic.
fn write_guarded_mnemonic(out: &mut String, f: &Function, d: &InstData) {
    if let Some(g) = d.guard {
        let bang = if g.negated { "!" } else { "" };
        let _ = write!(out, "@{bang}{} ", f.vregs[g.reg].name);
    }
    d.write_mnemonic(out);
}

/// An indirect `call` (the function's `n`th list) with the `.calltargets`
/// list of its functions declared right before it (the IR keeps the list
/// as a vector of their names as the call's last operand).
fn write_indirect_call(out: &mut String, f: &Function, d: &InstData, n: usize) {
    let name = format!("$ori_calls_{n}");
    let Some((list, rest)) = d.slots.split_last() else {
        return;
    };
    let _ = write!(out, "\t{name}: .calltargets ");
    if let ori_ir::Operand::Vector(funcs) = &list.op {
        write_list(out, f, funcs);
    }
    out.push_str(";\n\t");
    write_guarded_mnemonic(out, f, d);
    for (k, s) in rest.iter().enumerate() {
        out.push_str(if k == 0 { " " } else { ", " });
        write_operand(out, f, &s.op);
    }
    let _ = writeln!(out, ", {name};");
}

/// One instruction as PTX, without the `;`.
pub fn write_inst(out: &mut String, f: &Function, d: &InstData) {
    if let Some(t) = crate::ptx::injected_ptx(d) {
        out.push_str(&t);
        return;
    }
    write_guarded_mnemonic(out, f, d);
    for (k, s) in d.slots.iter().enumerate() {
        out.push_str(if k == 0 { " " } else { ", " });
        match &s.op {
            // The front end keeps a tensor operand `[tmap, {c0, c1}]` as a
            // vector holding a vector: the only nesting PTX writes, inside brackets.
            ori_ir::Operand::Vector(v)
                if v.iter().any(|o| matches!(o, ori_ir::Operand::Vector(_))) =>
            {
                out.push('[');
                for (j, o) in v.iter().enumerate() {
                    if j > 0 {
                        out.push_str(", ");
                    }
                    write_operand(out, f, o);
                }
                out.push(']');
            }
            op => write_operand(out, f, op),
        }
    }
}
