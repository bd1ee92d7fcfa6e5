//! The shapes of kernel `cargo xtask bench` scales, beyond the pipelined
//! matmul of `bench.rs`: each stresses one way a pass can turn quadratic.
//!
//! Issue #15 found two costs the matmul generator hid, because it makes short
//! blocks and few branches: editing one huge block (Layout insertions were
//! linear in the block) and many branches (the verifier looked every target
//! up in a list). These generators make the worst case of each dimension a
//! compiler meets: one straight-line block with an injection in every few
//! instructions, thousands of small loops, thousands of functions, and a deep
//! call graph whose number of paths is exponential in its depth (so a walk
//! that follows paths instead of edges shows at once). Every kernel is valid
//! PTX that ptxas 13.0.88 compiles.

use std::fmt::Write as _;

/// A kernel shape, as named on the command line (`--shapes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Triton-like pipelined matmul tiles (`bench.rs`).
    Matmul,
    /// One basic block; every unit is a wgmma whose accumulator is written
    /// before it without a fence (phase 87 injects an arrive) and read after
    /// it while in flight (a wait): two insertions per nine instructions.
    Block,
    /// Many small loops, each a wgmma stage with a back edge.
    Loops,
    /// Many `.func`s, each with its own small wgmma pipeline.
    Functions,
    /// A call graph of `.func`s where function i calls i+1 and i+2: as deep
    /// as it has functions, with Fibonacci-many paths from the entry.
    Calls,
}

/// Every shape, in table order.
pub const SHAPES: [Shape; 5] = [
    Shape::Matmul,
    Shape::Block,
    Shape::Loops,
    Shape::Functions,
    Shape::Calls,
];

impl Shape {
    /// The name on the command line and in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Matmul => "matmul",
            Shape::Block => "block",
            Shape::Loops => "loops",
            Shape::Functions => "functions",
            Shape::Calls => "calls",
        }
    }

    /// The shape of that name.
    pub fn parse(s: &str) -> Option<Shape> {
        SHAPES.into_iter().find(|k| k.name() == s.trim())
    }

    /// One line saying what the shape is, for the report.
    pub fn describe(self) -> &'static str {
        match self {
            Shape::Matmul => "pipelined matmul tiles: mainloops with back edges, several accumulator sets, wait_group 1 overlap",
            Shape::Block => "one straight-line block; every wgmma gets an injected arrive and wait",
            Shape::Loops => "many small loops, each one wgmma stage with a back edge",
            Shape::Functions => "many .func, each with its own wgmma pipeline",
            Shape::Calls => "call graph i -> i+1, i+2 (depth = functions, Fibonacci-many paths)",
        }
    }
}

use crate::bench::Generated;

const HEADER: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n\n";

/// Appends `\tTEXT;\n` and counts one instruction.
fn inst(out: &mut String, n: &mut usize, text: std::fmt::Arguments<'_>) {
    *n += 1;
    out.push('\t');
    let _ = out.write_fmt(text);
    out.push_str(";\n");
}

const WGMMA: &str =
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d0, d1, d2, d3}, a, b, 1, 1, 1, 0, 0";

/// One block of about `target` instructions (see [`Shape::Block`]).
///
/// Each unit has registers of its own and a descriptor of its own, and
/// initialises its accumulator with 1.0, not 0: ptxas's earlier phases fold
/// a zeroed accumulator into the wgmma (scale-d off, no register read, so no
/// arrive), merge a wgmma that repeats an earlier one and delete a store
/// that a later one overwrites, and phase 87 would then see less than the
/// text says. As written, ptxas 13.0.88 injects one arrive (C7519) and one
/// wait (C7517) per unit, as ori does.
pub fn block(target: usize) -> Generated {
    const UNIT: usize = 9;
    let units = (target.saturating_sub(5) / UNIT).max(1);
    let mut body = String::with_capacity(target * 48);
    let mut n = 4;
    for u in 0..units {
        let e: Vec<String> = (0..4).map(|i| format!("e{}", 4 * u + i)).collect();
        inst(
            &mut body,
            &mut n,
            format_args!("add.s64 x{u}, a, {}", (u % 4096) * 2),
        );
        for r in &e {
            inst(&mut body, &mut n, format_args!("mov.f32 {r}, 0f3F800000"));
        }
        inst(
            &mut body,
            &mut n,
            format_args!(
                "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {{{}}}, x{u}, b, 1, 1, 1, 0, 0",
                e.join(", ")
            ),
        );
        inst(
            &mut body,
            &mut n,
            format_args!("wgmma.commit_group.sync.aligned"),
        );
        inst(
            &mut body,
            &mut n,
            format_args!("add.f32 s{u}, {}, {}", e[0], e[1]),
        );
        inst(
            &mut body,
            &mut n,
            format_args!("st.global.f32 [ptr+{}], s{u}", (u % 4096) * 4),
        );
    }
    n += 1; // ret
    let mut ptx = String::with_capacity(body.len() + 512);
    let _ = write!(
        ptx,
        "// Generated by `cargo xtask bench --shapes block`: {units} units, {n} instructions.\n{HEADER}\
         .visible .entry k(.param .u64 p_out, .param .u64 p_da, .param .u64 p_db)\n{{\n\
         \t.reg .f32 e<{}>, s<{units}>;\n\t.reg .b64 a, b, ptr, x<{units}>;\n\
         \tld.param.u64 ptr, [p_out];\n\tld.param.u64 a, [p_da];\n\tld.param.u64 b, [p_db];\n\
         \twgmma.fence.sync.aligned;\n",
        4 * units
    );
    ptx.push_str(&body);
    ptx.push_str("\tret;\n}\n");
    Generated {
        ptx,
        insts: n,
        tiles: units,
    }
}

/// Many small loops (see [`Shape::Loops`]).
pub fn loops(target: usize) -> Generated {
    let mut body = String::with_capacity(target * 48);
    let mut n = 4;
    let mut units = 0;
    while units == 0 || n + 9 <= target.saturating_sub(1) {
        inst(&mut body, &mut n, format_args!("mov.u32 k, 0"));
        let _ = writeln!(body, "$L{units}:");
        for text in [
            "wgmma.fence.sync.aligned",
            WGMMA,
            "wgmma.commit_group.sync.aligned",
            "wgmma.wait_group.sync.aligned 0",
        ] {
            inst(&mut body, &mut n, format_args!("{text}"));
        }
        inst(&mut body, &mut n, format_args!("add.s32 k, k, 1"));
        inst(&mut body, &mut n, format_args!("setp.lt.s32 p, k, iters"));
        inst(&mut body, &mut n, format_args!("@p bra $L{units}"));
        inst(&mut body, &mut n, format_args!("st.global.f32 [ptr], d0"));
        units += 1;
    }
    n += 1; // ret
    let mut ptx = String::with_capacity(body.len() + 512);
    let _ = write!(
        ptx,
        "// Generated by `cargo xtask bench --shapes loops`: {units} loops, {n} instructions.\n{HEADER}\
         .visible .entry k(.param .u64 p_out, .param .u64 p_da, .param .u64 p_db, .param .u32 p_n)\n{{\n\
         \t.reg .pred p;\n\t.reg .f32 d<4>;\n\t.reg .b32 k, iters;\n\t.reg .b64 a, b, ptr;\n\
         \tld.param.u64 ptr, [p_out];\n\tld.param.u64 a, [p_da];\n\tld.param.u64 b, [p_db];\n\
         \tld.param.u32 iters, [p_n];\n"
    );
    ptx.push_str(&body);
    ptx.push_str("\tret;\n}\n");
    Generated {
        ptx,
        insts: n,
        tiles: units,
    }
}

/// The body of one `.func` with a wgmma pipeline; `calls` are the functions it calls.
fn func(out: &mut String, n: &mut usize, name: &str, calls: &[String]) {
    let _ = write!(
        out,
        ".func {name}(.param .u64 p_a)\n{{\n\t.reg .f32 d<4>;\n\t.reg .b64 a, b, ptr;\n"
    );
    inst(out, n, format_args!("ld.param.u64 a, [p_a]"));
    inst(out, n, format_args!("add.s64 b, a, 64"));
    inst(out, n, format_args!("add.s64 ptr, a, 128"));
    for r in 0..4 {
        inst(out, n, format_args!("mov.f32 d{r}, 0f00000000"));
    }
    inst(out, n, format_args!("wgmma.fence.sync.aligned"));
    inst(out, n, format_args!("{WGMMA}"));
    inst(out, n, format_args!("wgmma.commit_group.sync.aligned"));
    inst(out, n, format_args!("wgmma.wait_group.sync.aligned 0"));
    inst(out, n, format_args!("st.global.f32 [ptr], d0"));
    for c in calls {
        call(out, n, c);
    }
    inst(out, n, format_args!("ret"));
    out.push_str("}\n\n");
}

/// A call passing `a` through a `.param` in a scope of its own (two instructions).
fn call(out: &mut String, n: &mut usize, callee: &str) {
    let _ = writeln!(out, "\t{{\n\t.param .u64 q;");
    inst(out, n, format_args!("st.param.u64 [q], a"));
    inst(out, n, format_args!("call {callee}, (q)"));
    out.push_str("\t}\n");
}

/// Instructions of one `.func` of [`func`] with this many calls.
const FUNC_INSTS: usize = 13;

/// Many independent functions (see [`Shape::Functions`]); the entry calls the first.
pub fn functions(target: usize) -> Generated {
    let count = (target / FUNC_INSTS).max(1);
    let mut ptx = String::with_capacity(target * 48);
    let _ = write!(
        ptx,
        "// Generated by `cargo xtask bench --shapes functions`: {count} functions.\n{HEADER}"
    );
    let mut n = 0;
    for i in 0..count {
        func(&mut ptx, &mut n, &format!("f{i}"), &[]);
    }
    entry(&mut ptx, &mut n, "f0");
    Generated {
        ptx,
        insts: n,
        tiles: count,
    }
}

/// A call graph where function i calls i+1 and i+2 (see [`Shape::Calls`]).
pub fn calls(target: usize) -> Generated {
    // Two calls of two instructions each (st.param, call).
    let count = (target / (FUNC_INSTS + 4)).max(1);
    let mut ptx = String::with_capacity(target * 48);
    let _ = write!(
        ptx,
        "// Generated by `cargo xtask bench --shapes calls`: {count} functions, f_i calls f_i+1 and f_i+2.\n{HEADER}"
    );
    let mut n = 0;
    // Callees first: PTX wants a function declared before its calls.
    for i in (0..count).rev() {
        let callees: Vec<String> = [i + 1, i + 2]
            .into_iter()
            .filter(|&c| c < count)
            .map(|c| format!("f{c}"))
            .collect();
        func(&mut ptx, &mut n, &format!("f{i}"), &callees);
    }
    entry(&mut ptx, &mut n, "f0");
    Generated {
        ptx,
        insts: n,
        tiles: count,
    }
}

fn entry(out: &mut String, n: &mut usize, callee: &str) {
    let _ = write!(
        out,
        ".visible .entry k(.param .u64 p_a)\n{{\n\t.reg .b64 a;\n"
    );
    inst(out, n, format_args!("ld.param.u64 a, [p_a]"));
    call(out, n, callee);
    inst(out, n, format_args!("ret"));
    out.push_str("}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape parses and lowers with no diagnostic, counts its
    /// instructions right, and goes through both passes with the verifier.
    #[test]
    fn every_shape_compiles_and_counts_its_instructions() {
        for (shape, text) in [
            (Shape::Block, block(2000)),
            (Shape::Loops, loops(2000)),
            (Shape::Functions, functions(2000)),
            (Shape::Calls, calls(2000)),
        ] {
            let (ast, d) = ori_ptx::parse_with_diags("bench.ptx", &text.ptx);
            assert!(
                d.is_empty(),
                "{shape:?}: {:?}",
                d.first().map(|d| &d.message)
            );
            let (mut m, d) = ori_ptx::lower::lower_module("bench.ptx", &ast);
            assert!(
                d.is_empty(),
                "{shape:?}: {:?}",
                d.first().map(|d| &d.message)
            );
            let insts: usize = m.funcs.values().map(|f| f.inst_count()).sum();
            assert_eq!(insts, text.insts, "{shape:?}");
            assert!((1900..=2100).contains(&insts), "{shape:?}: {insts}");
            let mut pm = ori_gmma::pipeline();
            pm.verify = true;
            let mut diags = Vec::new();
            pm.run(&mut m, &mut diags, &mut |_| {}).expect("verifies");
            let diags = ori_gmma::report_order::order_like_ptxas(&m, diags, false, None);
            let c7510 = diags
                .iter()
                .filter(|d| d.code == Some(ori_ir::consts::C7510_CROSSES_CALL))
                .count();
            if matches!(shape, Shape::Functions | Shape::Calls) {
                // ptxas 13.0.88: the kernel's calls cross the callees'
                // pipelines, one C7510 for the kernel.
                assert_eq!(c7510, 1, "{shape:?}: {diags:?}");
            } else {
                assert!(
                    m.funcs.values().all(|f| f.serialized.is_none()),
                    "{shape:?}: {diags:?}"
                );
            }
        }
    }

    #[test]
    fn the_block_gets_an_arrive_and_a_wait_per_unit() {
        let text = block(500);
        let (ast, _) = ori_ptx::parse_with_diags("bench.ptx", &text.ptx);
        let (mut m, _) = ori_ptx::lower::lower_module("bench.ptx", &ast);
        let mut diags = Vec::new();
        ori_gmma::pipeline()
            .run(&mut m, &mut diags, &mut |_| {})
            .expect("verifies");
        let f = m.funcs.values().find(|f| f.has_body).unwrap();
        assert_eq!(f.layout.blocks().len(), 1);
        // ptxas 13.0.88 prints one C7517 and one C7519 per unit for this kernel.
        let count = |code| diags.iter().filter(|d| d.code == Some(code)).count();
        assert_eq!(count(ori_ir::consts::C7517_WAIT_INJECTED), text.tiles);
        assert_eq!(count(ori_ir::consts::C7519_ARRIVE_INJECTED), text.tiles);
        assert!(f.serialized.is_none());
    }
}
