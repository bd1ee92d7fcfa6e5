//! The text form of the IR: what `--emit ir` and `--print-after` show and
//! what the snapshot tests compare.
//!
//! It reads like PTX (mnemonics and operands in PTX order) with the facts the
//! passes rely on made visible: `out` / `inout` mark written operands, `#N`
//! is the PTX source line, `!acc` shows phase 85's packed accumulator-set
//! words, `!fN` an operand's flag bits, and block headers list the
//! accumulator sets in flight at entry. `parse` reads this text back, and
//! `print(parse(print(f))) == print(f)` holds for every function.

use crate::function::{FuncKind, Function, Module};
use crate::instructions::{AddrBase, Imm, InstData, Operand, Role};
use cranelift_entity::EntityRef;
use std::fmt::Write;

/// Print an immediate as PTX writes it.
pub fn write_imm(out: &mut String, imm: Imm) {
    let _ = match imm {
        Imm::Int(v) => write!(out, "{v}"),
        Imm::Hex(v) => write!(out, "0x{v:X}"),
        Imm::F32(v) => write!(out, "0f{v:08X}"),
        Imm::F64(v) => write!(out, "0d{v:016X}"),
    };
}

/// Print one operand.
pub fn write_operand(out: &mut String, f: &Function, op: &Operand) {
    match op {
        Operand::Reg(r) => out.push_str(&f.vregs[*r].name),
        Operand::NotReg(r) => {
            out.push('!');
            out.push_str(&f.vregs[*r].name)
        }
        Operand::Special(s) | Operand::Sym(s) => out.push_str(s),
        Operand::Imm(i) => write_imm(out, *i),
        Operand::Addr { base, offset } => {
            out.push('[');
            match base {
                AddrBase::Reg(r) => out.push_str(&f.vregs[*r].name),
                AddrBase::Sym(s) => out.push_str(s),
                AddrBase::None => {}
            }
            match (base, *offset) {
                (AddrBase::None, o) => {
                    let _ = write!(out, "{o}");
                }
                (_, 0) => {}
                (_, o) if o > 0 => {
                    let _ = write!(out, "+{o}");
                }
                (_, o) => {
                    let _ = write!(out, "+{o}");
                }
            }
            out.push(']');
        }
        Operand::Block(b) => out.push_str(&f.block_name(*b)),
        Operand::Vector(v) | Operand::Args(v) => {
            let (open, close) = if matches!(op, Operand::Vector(_)) {
                ('{', '}')
            } else {
                ('(', ')')
            };
            out.push(open);
            for (k, o) in v.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_operand(out, f, o);
            }
            out.push(close);
        }
        Operand::PredPair(a, b) => {
            out.push_str(&f.vregs[*a].name);
            out.push('|');
            out.push_str(&f.vregs[*b].name);
        }
        Operand::Sink => out.push('_'),
    }
}

/// Print one instruction (without indentation or newline).
pub fn write_inst(out: &mut String, f: &Function, d: &InstData) {
    let _ = write!(out, "#{} ", d.line);
    if let Some(g) = d.guard {
        out.push('@');
        if g.negated {
            out.push('!');
        }
        out.push_str(&f.vregs[g.reg].name);
        out.push(' ');
    }
    d.write_mnemonic(out);
    for (k, s) in d.slots.iter().enumerate() {
        out.push_str(if k == 0 { " " } else { ", " });
        match s.role {
            Role::Def => out.push_str("out "),
            Role::DefUse => out.push_str("inout "),
            Role::Use => {}
        }
        write_operand(out, f, &s.op);
        if s.flags != 0 {
            let _ = write!(out, " !f{}", s.flags);
        }
    }
    if let Some(a) = d.accum {
        let _ = write!(out, " !acc 0x{:08X} 0x{:08X}", a.src_word(), a.dst_word());
    }
}

/// Which registers the function names: in an instruction (a use, a
/// definition or a guard) or in an accumulator set. Only those are declared
/// in the text: a PTX front end declares `%r<1000>` where a kernel uses a
/// few dozen, and a dump of every declared name would bury the code.
fn used_registers(f: &Function) -> Vec<bool> {
    let mut used = vec![false; f.vregs.len()];
    for &b in f.layout.blocks() {
        for &i in f.layout.block_insts(b) {
            let d = &f.insts[i];
            d.for_each_use(|r| used[r.index()] = true);
            d.for_each_def(|r| used[r.index()] = true);
        }
    }
    if let Some(g) = &f.gmma {
        for (_, set) in g.sets.iter() {
            for r in set.iter() {
                used[r.index()] = true;
            }
        }
    }
    used
}

/// Print a function.
pub fn write_function(out: &mut String, f: &Function) {
    let kind = match f.kind {
        FuncKind::Entry => "entry",
        FuncKind::Func => "func",
    };
    let _ = write!(out, "function {} {kind}", f.name);
    if let Some(l) = &f.linkage {
        let _ = write!(out, " linkage {l}");
    }
    if !f.has_body {
        out.push_str(" nobody");
    }
    if let Some(n) = f.max_regs {
        let _ = write!(out, " maxnreg {n}");
    }
    for (name, values) in &f.launch_bounds {
        let values: Vec<String> = values.iter().map(u32::to_string).collect();
        let _ = write!(out, " {name} {}", values.join(","));
    }
    if let Some(z) = f.serialized {
        let _ = write!(out, " serialized {}", z.code);
        if z.shared_accumulators {
            out.push_str(" shared-accumulators");
        }
    }
    let _ = writeln!(out, " line {} {{", f.line);
    for p in &f.ret_params {
        let _ = writeln!(out, "  retparam {} {}", p.name, quote(&p.ty));
    }
    for p in &f.params {
        let _ = writeln!(out, "  param {} {}", p.name, quote(&p.ty));
    }
    let used = used_registers(f);
    for (v, r) in f.vregs.iter() {
        if used[v.index()] {
            let _ = writeln!(out, "  reg {} {} class {}", r.name, r.ty, r.class.number());
        }
    }
    if let Some(g) = &f.gmma {
        let _ = writeln!(out, "  maxactive {}", g.max_active);
        for (k, set) in g.sets.iter() {
            let _ = write!(out, "  accset {} = {{", k.as_u32());
            for (j, r) in set.iter().enumerate() {
                if j > 0 {
                    out.push_str(", ");
                }
                out.push_str(&f.vregs[*r].name);
            }
            out.push_str("}\n");
        }
    }
    for &b in f.layout.blocks() {
        let _ = write!(out, "{}:", f.block_name(b));
        if f.blocks[b].nounroll {
            out.push_str(" nounroll");
        }
        if let Some(g) = &f.gmma {
            out.push_str(" inflight {");
            for (k, s) in g.in_flight_at_entry[b].iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{}", s.as_u32());
            }
            out.push('}');
        }
        out.push('\n');
        for &i in f.layout.block_insts(b) {
            out.push_str("  ");
            write_inst(out, f, &f.insts[i]);
            out.push('\n');
        }
    }
    out.push_str("}\n");
}

/// Print a module.
pub fn write_module(m: &Module) -> String {
    let mut out = String::new();
    let _ = write!(out, "module version {}.{} target", m.version.0, m.version.1);
    for t in &m.target {
        let _ = write!(out, " {t}");
    }
    let _ = writeln!(out, " address_size {}", m.address_size);
    for g in &m.globals {
        let _ = writeln!(out, "global {}", quote(g));
    }
    for (_, f) in m.funcs.iter() {
        out.push('\n');
        write_function(&mut out, f);
    }
    out
}

/// Print one function to a string.
pub fn function_to_string(f: &Function) -> String {
    let mut s = String::new();
    write_function(&mut s, f);
    s
}

/// `s` in double quotes, with `\` and `"` escaped by a backslash: what
/// `parse.rs`'s `unquote` reads back.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        if matches!(c, '\\' | '"') {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}
