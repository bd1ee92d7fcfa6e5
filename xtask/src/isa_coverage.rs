//! `cargo xtask isa-coverage`: the PTX ISA's instructions against ori's
//! instruction table, judged by ptxas 13.0.88.
//!
//! It exists so that the front end's coverage of the ISA is a measured
//! table, not a claim. `xtask/isa_coverage.txt` lists every instruction of
//! the PTX ISA 9.0 that ptxas takes for sm_90a with one valid statement
//! each; this command puts each statement in a kernel, asks ptxas and ori
//! whether they accept it, and records how ori's table takes it: by a
//! form of a family (its modifiers and operands checked, its written
//! operands given), or by the default form (a register result first, then
//! values read). It writes `docs/isa-coverage.md`.

use crate::oracle;
use ori_ptx::isa::Table;
use std::fmt::Write as _;
use std::process::{Command, ExitCode};

/// The kernel each statement is put in: registers of every kind, an
/// mbarrier, a texture and a surface, a device function to call, a branch
/// target list and a label after the statement.
pub const HEAD: &str = ".version 8.5
.target sm_90a
.address_size 64
.global .texref tex0;
.global .surfref surf0;
.func fn()
{
ret;
}
.visible .entry k(.param .u64 p0)
{
.reg .b16 %h<8>;
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
.reg .f32 %f<8>;
.reg .f64 %fd<8>;
.reg .pred %p<8>;
.shared .align 8 .b64 bar;
$L_targets: .branchtargets $L_end, $L_end;
";

const TAIL: &str = "$L_end:\nret;\n}\n";

/// One line of the list.
pub struct Entry {
    pub section: String,
    pub name: String,
    pub statement: String,
}

/// The list, from `xtask/isa_coverage.txt`.
pub fn entries() -> Result<Vec<Entry>, String> {
    let path = oracle::root().join("xtask").join("isa_coverage.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.splitn(3, '|').map(str::trim).collect();
        let [section, name, statement] = parts[..] else {
            return Err(format!(
                "{}:{}: SECTION | NAME | STATEMENT",
                path.display(),
                n + 1
            ));
        };
        out.push(Entry {
            section: section.into(),
            name: name.into(),
            statement: statement.into(),
        });
    }
    Ok(out)
}

/// The kernel holding `statement`.
pub fn source(statement: &str) -> String {
    format!("{HEAD}{statement}\n{TAIL}")
}

/// How ori takes a statement.
pub struct OriView {
    /// `form of FAMILY`, `default form`, `handler` (an instruction with a
    /// lowering of its own: branches, calls, wgmma), or the table's
    /// messages.
    pub table: String,
    /// The operands the lowered instruction writes, by position (`0`,
    /// `0, 1`, `none`), from the IR ori makes of it.
    pub writes: String,
    /// Whether ori compiles the kernel without an error, and its first one.
    pub accepts: Result<(), String>,
}

/// ori's view of `statement`, in process.
pub fn ori_view(statement: &str) -> OriView {
    let src = source(statement);
    let (ast, _) = ori_ptx::parse_with_diags("isa.ptx", &src);
    let inst = ast.items.iter().find_map(|item| match item {
        ori_ptx::ast::Item::Function(f) if f.name == "k" => {
            f.body.iter().flatten().find_map(|s| match s {
                ori_ptx::ast::Stmt::Inst(i) => Some(i.clone()),
                _ => None,
            })
        }
        _ => None,
    });
    let table = inst.map_or_else(|| "not parsed".into(), |i| table_view(&i));
    let opts = ori::Options {
        arch: Some("sm_90a".into()),
        ..Default::default()
    };
    let c = ori::compile_ptx("isa.ptx", &src, &opts);
    let error = c.diags.iter().find(|d| {
        matches!(
            d.severity,
            ori::ir::Severity::Error | ori::ir::Severity::Fatal
        )
    });
    OriView {
        table,
        writes: written(&src),
        accepts: error.map_or(Ok(()), |d| Err(d.message.clone())),
    }
}

/// How the table takes `i`.
fn table_view(i: &ori_ptx::ast::Instruction) -> String {
    if matches!(
        i.opcode.as_str(),
        "bra" | "brx" | "call" | "ret" | "exit" | "wgmma"
    ) {
        return "handler".into();
    }
    let table = Table::get();
    let mods: Vec<&str> = i.modifiers.iter().map(|m| m.as_str()).collect();
    match table.classify(i.opcode.as_str(), &mods, usize::from(i.joined)) {
        Ok(Some(k)) if table.form(k).open => {
            format!("form of `{}` (operand roles)", table.form(k).family)
        }
        Ok(Some(k)) => format!("form of `{}`", table.form(k).family),
        Ok(None) => "default form".into(),
        Err((family, why)) => why.messages(&family).join("; "),
    }
}

/// The positions of the operands the first instruction of kernel `k`
/// writes in the IR ori lowers `src` to (`-` if it lowers none).
fn written(src: &str) -> String {
    let Ok(m) = ori::ptx_to_ir_for("isa.ptx", src, Some("sm_90a")) else {
        return "-".into();
    };
    let Some(f) = m.by_name.get("k").map(|&id| &m.funcs[id]) else {
        return "-".into();
    };
    let Some(first) = f.layout.all_insts().next() else {
        return "-".into();
    };
    let defs: Vec<String> = f.insts[first]
        .slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.role != ori::ir::Role::Use)
        .map(|(k, _)| k.to_string())
        .collect();
    if defs.is_empty() {
        "none".into()
    } else {
        defs.join(", ")
    }
}

/// Whether ptxas 13.0.88 accepts `statement` for sm_90a, and its first
/// error.
fn ptxas_accepts(dir: &std::path::Path, statement: &str) -> Result<Result<(), String>, String> {
    let path = dir.join("isa.ptx");
    std::fs::write(&path, source(statement)).map_err(|e| e.to_string())?;
    let out = Command::new(oracle::tool("ptxas"))
        .args(["-arch=sm_90a", "-o", "/dev/null"])
        .arg(&path)
        .output()
        .map_err(|e| format!("cannot run ptxas: {e} (cargo xtask oracle install)"))?;
    if out.status.success() {
        return Ok(Ok(()));
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let first = text.lines().find(|l| l.contains("error")).unwrap_or("");
    let message = first.rsplit_once(" : ").map_or(first, |(_, m)| m);
    Ok(Err(message.trim().to_string()))
}

/// `cargo xtask isa-coverage`: write `docs/isa-coverage.md`; fails when
/// ptxas and ori disagree on a statement.
pub fn run(args: &[&str]) -> Result<ExitCode, String> {
    if let Some(a) = args.first() {
        return Err(format!("unknown option {a}"));
    }
    let dir = oracle::root().join("target").join("isa-coverage");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for e in entries()? {
        let ptxas = ptxas_accepts(&dir, &e.statement)?;
        let ori = ori_view(&e.statement);
        rows.push(Row {
            entry: e,
            ptxas,
            ori,
        });
    }
    let doc = render(&rows);
    let path = oracle::root().join("docs").join("isa-coverage.md");
    std::fs::write(&path, doc).map_err(|e| format!("{}: {e}", path.display()))?;
    let disagree = rows.iter().filter(|r| !r.agrees()).count();
    println!(
        "isa-coverage: {} instructions, ptxas and ori disagree on {disagree}; wrote {}",
        rows.len(),
        path.display()
    );
    Ok(if disagree == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// One instruction's verdicts.
struct Row {
    entry: Entry,
    ptxas: Result<(), String>,
    ori: OriView,
}

impl Row {
    fn agrees(&self) -> bool {
        self.ptxas.is_ok() == self.ori.accepts.is_ok()
    }
}

/// The document.
fn render(rows: &[Row]) -> String {
    let verdict = |r: &Result<(), String>| match r {
        Ok(()) => "accepts".to_string(),
        Err(m) => format!("rejects: {}", m.replace('|', "\\|")),
    };
    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    let n = rows.len();
    let ptxas = count(&|r| r.ptxas.is_ok());
    let ori = count(&|r| r.ori.accepts.is_ok());
    let agree = count(&|r| r.agrees());
    let closed = count(&|r| r.ori.table.starts_with("form of") && !r.ori.table.contains("roles"));
    let open = count(&|r| r.ori.table.contains("roles"));
    let default = count(&|r| r.ori.table == "default form");
    let handler = count(&|r| r.ori.table == "handler");
    let mut s = String::new();
    let _ = write!(
        s,
        "# The PTX ISA's instructions in ori's front end\n\n\
         Written by `cargo xtask isa-coverage` (do not edit): every instruction of the PTX ISA 9.0\n\
         (section 9.7) that ptxas 13.0.88 takes for sm_90a, one valid statement each\n\
         (`xtask/isa_coverage.txt`), put in a kernel and given to ptxas and to ori. *Table* is how\n\
         ori's instruction table (`crates/ori-ptx/src/isa/table.txt`) takes it: a form of a family\n\
         (modifiers and operands checked against the ISA's sets), a form of an open family (operand\n\
         roles from the table, modifiers checked by the lowering), or the default form (a register\n\
         result first, then values read); branches, calls and wgmma have lowerings of their own\n\
         (*handler*). *Writes* are the operands the instruction ori lowers it to defines, by\n\
         position in that instruction.\n\
         ori names an instruction the ISA does not have as ptxas does, at its file, line and\n\
         column (`Not a name of any known instruction: 'NAME'`).\n\n\
         {n} instructions: ptxas accepts {ptxas}, ori accepts {ori}, they agree on {agree}.\n\
         Table: {closed} by a family's form, {open} by an open family's operand roles,\n\
         {default} by the default form, {handler} by a handler.\n\n\
         | section | instruction | statement | ptxas | ori | table | writes |\n\
         |---|---|---|---|---|---|---|\n"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | `{}` | {} | {} | {} | {} |",
            r.entry.section,
            r.entry.name,
            r.entry.statement.replace('|', "\\|"),
            verdict(&r.ptxas),
            verdict(&r.ori.accepts),
            r.ori.table.replace('|', "\\|"),
            r.ori.writes
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instructions of the list ori rejects though ptxas 13.0.88 takes
    /// them (`docs/isa-coverage.md`): a video instruction with byte and
    /// half-word selectors (`%r2.b0`). A ratchet: one that ori starts
    /// taking must leave the list.
    const REJECTED: &[&str] = &["vadd"];

    /// Without ptxas: ori accepts every statement of the list (each is
    /// valid PTX for sm_90a, as ptxas 13.0.88 judged it when it was
    /// written) except those of [`REJECTED`], and rejects those.
    #[test]
    fn ori_accepts_every_instruction_of_the_list_but_the_known_ones() {
        let mut wrong = Vec::new();
        for e in entries().expect("the list reads") {
            let v = ori_view(&e.statement);
            let known = REJECTED.contains(&e.name.as_str());
            match (v.accepts, known) {
                (Err(m), false) => wrong.push(format!("{} {}: {m}", e.section, e.statement)),
                (Ok(()), true) => wrong.push(format!("{} is accepted now: off REJECTED", e.name)),
                _ => {}
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
