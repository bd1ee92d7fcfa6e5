//! The small functions of `cargo xtask fuzz-grammar`: the lexical grammar
//! around instructions, which single statements cannot reach.
//!
//! Each is a kernel of a few items (table statements, nested `{ }` scopes
//! with registers of their own, labels and branches, `.loc` and `.pragma`,
//! vector registers used by component, `WARP_SZ`, comments between tokens),
//! valid or with one near miss (a branch to no label, a label defined twice,
//! a scoped register used after its scope, `inlined_at` alone, a missing
//! `;`, a component of a scalar, `.pragma` without its string, `WARP_SZ`
//! written to).

use crate::fuzz_grammar::{valid_statement, Rng, Statement};
use ori_ptx::isa::Form;

/// What every batch of functions opens with (the `.file` the `.loc`s name,
/// the mbarrier the table statements use).
pub const MODULE_HEAD: &str = ".version 8.5
.target sm_90a
.address_size 64
.file 1 \"fuzz.cu\"
.shared .align 8 .b64 bar;
";

/// The registers every function declares.
const REGS: &str = ".reg .b16 %h<8>;
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
.reg .pred %p<8>;
.reg .f32 %f<8>;";

/// One item of a body: its lines.
fn item(rng: &mut Rng, forms: &[&'static Form], k: usize) -> Vec<String> {
    match rng.below(8) {
        0 => vec![
            "{".into(),
            format!(".reg .b32 s{k};"),
            format!("mov.u32 s{k}, {};", rng.below(100)),
            format!("add.u32 %r1, %r1, s{k};"),
            "}".into(),
        ],
        1 => vec![
            format!("setp.eq.u32 %p1, %r1, {};", rng.below(4)),
            format!("@%p1 bra L{k};"),
            "add.u32 %r1, %r1, 1;".into(),
            format!("L{k}:"),
        ],
        2 => vec![format!(".loc 1 {} {}", 1 + rng.below(90), 1 + rng.below(9))],
        3 => vec![".pragma \"nounroll\";".into()],
        4 => {
            let c = *rng.pick(&["x", "y", "r", "g"]);
            vec![
                format!(".reg .v2 .f32 v{k};"),
                format!("mov.f32 v{k}.{c}, 0f3F800000;"),
                format!("add.f32 %f1, %f1, v{k} .{c};"),
            ]
        }
        5 => vec![format!(
            "add.u32 %r1, %r1, WARP_SZ{};",
            *rng.pick(&["", "+1", "-2"])
        )],
        6 => vec![format!(
            "add /* c{k} */ .u32 %r2,{}%r1, %r1; // line comment",
            *rng.pick(&[" ", "\t", "\n"])
        )],
        _ => vec![valid_statement(rng, forms)],
    }
}

/// One near miss, made on the body's lines; its name.
fn mutate(rng: &mut Rng, lines: &mut Vec<String>, k: usize) -> &'static str {
    let at = rng.below(lines.len() + 1);
    let (line, how): (String, &'static str) = match rng.below(8) {
        0 => (format!("bra NOWHERE{k};"), "branch to no label"),
        1 => {
            lines.insert(at.min(lines.len()), format!("D{k}:"));
            (format!("D{k}:"), "label defined twice")
        }
        2 => {
            lines.insert(at, format!("{{ .reg .b32 t{k}; mov.u32 t{k}, 1; }}"));
            (
                format!("mov.u32 %r3, t{k};"),
                "scoped register used after its scope",
            )
        }
        3 => (".loc 1 3 4, inlined_at 1 3 4".into(), "inlined_at alone"),
        4 => ("mov.u32 %r2, %r1".into(), "missing semicolon"),
        5 => ("mov.u32 %r2, %r1.x;".into(), "component of a scalar"),
        6 => (".pragma;".into(), "pragma without its string"),
        _ => ("mov.u32 WARP_SZ, %r1;".into(), "WARP_SZ written to"),
    };
    let at = rng.below(lines.len() + 1);
    lines.insert(at, line);
    how
}

/// Function `k`: a kernel of two to six items, valid or with one near miss.
pub fn function(rng: &mut Rng, forms: &[&'static Form], k: usize) -> Statement {
    let mut lines: Vec<String> = Vec::new();
    for j in 0..2 + rng.below(5) {
        lines.extend(item(rng, forms, k * 10 + j));
    }
    let how = if rng.chance(50) {
        mutate(rng, &mut lines, k)
    } else {
        "valid function"
    };
    let text = format!(
        ".visible .entry f{k}(.param .u64 p0)\n{{\n{REGS}\n{}\nret;\n}}",
        lines.join("\n")
    );
    Statement {
        text,
        how,
        family: "function",
        function: true,
    }
}
