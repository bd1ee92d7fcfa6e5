//! Phase 87, FixupGmmaSequence: make the wgmma pipeline legal, or serialize it.
//!
//! The orchestrator (seed 003: `sub_AE4F70`) runs the steps in ptxas's
//! order, one module each:
//!
//! 1. **Solve** (`solve`): the walk state (`state`, a product of
//!    join-semilattices) iterated over the CFG to its fixpoint, with the
//!    transfer function of `walk`; no decision is kept from a state that may
//!    still move, and failing to converge is an internal error. On a large
//!    function the rounds after the first run on a second thread, trailing
//!    the first pass (`trailing_rounds`).
//! 2. **Decide** (`solve`, R-first-visit): one visit over ptxas's
//!    first-pass states (the fixpoint's first pass) and one over the
//!    converged states (where it differs from the first) ask the rules
//!    (`rules`, one [`RuleId`] per ptxas behaviour, their precedence stated
//!    once in `walk`) where a `_warpgroup.arrive` or `_warpgroup.wait` goes,
//!    or why the pipeline must be serialized (`plan`). The failures the
//!    walk finds itself (calls, injections into divergent code: C7509,
//!    C7518, C7520) end its injections; the later checks' failures keep
//!    them, as ptxas prints those advisories.
//! 3. **Late checks** (`late`): fresh values joining a stage in flight
//!    (C7515), exits behind a branch, waits injected into loops ptxas
//!    unrolls (C7514), the function's register pressure (C7512).
//! 4. **Apply** (`apply`): advisories (C7519, then C7517, each in program
//!    order), ori's own notes on what the ISA calls undefined, the
//!    injections, and on failure the serialization fallback (`sub_AE47B0`,
//!    [`serialize`]): every wgmma gets its own arrive, commit and wait.
//!
//! ptxas's phase 87 sees optimized code, so the walk models what it can
//! name of that: blocks as ptxas keeps them (`block_merging`), copies it
//! propagates, reads it schedules below a read-modify-write, callees it
//! inlines, guarded GMMA ops it branches around (front end). Every rule was
//! found on ptxas 13.0.88 and has corpus cases; `cargo xtask rules` writes
//! the table of `tests/corpus/README.md` from [`RuleId::info`] with the
//! number of cases each rule decides.

mod analyses;
mod apply;
mod budget;
mod by_register;
mod conflicts;
mod inst_regs;
mod late;
mod plan;
mod queries;
mod reg_set;
pub mod rules;
mod solve;
mod state;
mod trailing_rounds;
mod walk;

pub use apply::serialize;
pub use budget::{in_flight_budget, LIMIT_MARGIN, MAX_IN_FLIGHT_ACCUMULATOR_REGS};
pub use plan::Failure;
pub use rules::{Mode, RuleId, RuleInfo};

use ori_ir::consts::PHASE_FIXUP_GMMA_SEQUENCE;
use ori_ir::{Diagnostic, Function, ModuleInfo, Opcode, Operand, Pass, PassContext, Severity};

/// The pass, as ptxas 13.0.88 runs it: where ptxas leaves an access that
/// the PTX ISA calls undefined (a write to a register of a wgmma still in
/// flight), ori leaves it too and says so in an ori-only note.
pub struct FixupGmmaSequence;

/// The pass in ISA-strict mode: the same decisions and messages as
/// [`FixupGmmaSequence`], plus the waits and arrives that make legal what
/// ptxas leaves undefined (each announced in an ori-only note). Every
/// function it leaves unserialized passes the independent hazard checker.
pub struct IsaStrictFixupGmmaSequence;

impl Pass for FixupGmmaSequence {
    fn name(&self) -> &'static str {
        "FixupGmmaSequence"
    }

    fn phase(&self) -> u32 {
        PHASE_FIXUP_GMMA_SEQUENCE
    }

    fn run(&self, f: &mut Function, cx: &mut PassContext<'_>) {
        run_fixup(f, cx, Mode::Ptxas)
    }
}

impl Pass for IsaStrictFixupGmmaSequence {
    fn name(&self) -> &'static str {
        "FixupGmmaSequence"
    }

    fn phase(&self) -> u32 {
        PHASE_FIXUP_GMMA_SEQUENCE
    }

    fn run(&self, f: &mut Function, cx: &mut PassContext<'_>) {
        run_fixup(f, cx, Mode::IsaStrict)
    }
}

/// Whether phase 87 has anything to do in `f`: a GMMA op of its own, or
/// (not under `-c`, where ptxas 13.0.88 keeps callees apart,
/// `clean_func_with_pipeline_c`) a call to a function with a pipeline.
fn needs_fixup(f: &Function, module: &ModuleInfo) -> bool {
    if f.insts.values().any(|d| d.opcode.is_gmma_family()) {
        return true;
    }
    !module.compile_only
        && f.insts.values().any(|d| {
            d.opcode == Opcode::Call
                && d.slots.iter().any(|s| {
                    matches!(&s.op, Operand::Sym(n) if module.funcs.get(&**n).is_some_and(|x| x.1))
                })
        })
}

/// The most rounds of R-hoisted-wait-retires (each adds the waits the round
/// before hoisted; the corpora need one).
const MAX_HOIST_ROUNDS: usize = 4;

/// Functions of at least this many instructions make their analyses and
/// the walk's tables on two threads (`prepare`), and free the walk's tables
/// on a third while the edits run: a thread costs tens of microseconds to
/// start, and on a function this size each part takes milliseconds.
const PREPARE_ON_TWO_THREADS_FROM: usize = 1 << 16;

/// The analyses of `f` and the walk's tables, which do not depend on each
/// other: on a large function, made at once on two threads (on the
/// generated 1M matmul, 57 and 87 ms; they were 27% of phase 87), the
/// analyses' thread then making room for the fixpoint's states (its pages
/// faulted in there, 10 ms, not on the solver's thread). Where no thread
/// can be started, one after the other, and the solver makes its room.
fn prepare(
    f: &Function,
    sets: &ori_ir::AccumSetPool,
    maxrregcount: Option<u32>,
    two_threads_from: usize,
) -> (analyses::Analyses, walk::Tables, Option<solve::Solution>) {
    if f.insts.len() >= two_threads_from {
        let all = std::thread::scope(|s| {
            let an = std::thread::Builder::new()
                .name("ori-analyses".into())
                .spawn_scoped(s, || {
                    let an = analyses::Analyses::compute(f);
                    (an, solve::Solution::sized(f.blocks.len()))
                })
                .ok()?;
            let tables = walk::Tables::compute(f, sets, maxrregcount);
            match an.join() {
                Ok((an, room)) => Some((an, tables, Some(room))),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        if let Some(all) = all {
            return all;
        }
    }
    (
        analyses::Analyses::compute(f),
        walk::Tables::compute(f, sets, maxrregcount),
        None,
    )
}

fn run_fixup(f: &mut Function, cx: &mut PassContext<'_>, mode: Mode) {
    run_fixup_with(f, cx, mode, PREPARE_ON_TWO_THREADS_FROM, None)
}

/// [`run_fixup`], on two threads from `two_threads_from` instructions on,
/// the fixpoint's second thread keeping at most `most_held` states for
/// later runs (`Walker::most_held`).
fn run_fixup_with(
    f: &mut Function,
    cx: &mut PassContext<'_>,
    mode: Mode,
    two_threads_from: usize,
    most_held: Option<usize>,
) {
    let Some(facts) = f.gmma.clone() else { return };
    if !needs_fixup(f, cx.module) {
        return;
    }
    let (an, tables, room) = prepare(f, &facts.sets, cx.module.maxrregcount, two_threads_from);
    let mut walker = walk::Walker::new(f, &facts.sets, tables, &an, cx.module, mode);
    walker.spare_solution.set(room);
    walker.two_threads_from = two_threads_from;
    walker.most_held = most_held;
    let not_converged = |e: solve::NotConverged, name: &str| {
        let msg = format!(
            "internal error: FixupGmmaSequence did not converge in {} rounds in function '{name}'",
            e.rounds
        );
        Diagnostic::new(Severity::Fatal, None, msg)
    };
    let (mut sol, mut plan) = match walker.solve_and_decide() {
        Ok(solved) => solved,
        Err(e) => return cx.diags.push(not_converged(e, &f.name)),
    };
    // R-hoisted-wait-retires: the waits hoisted out of divergent code retire
    // on every path out of their uniform block, and commit the stage open
    // there; another round makes them there, until a round hoists no wait
    // the one before did not (a few rounds: each adds hoisted waits).
    for _ in 0..MAX_HOIST_ROUNDS {
        let Some(hoisted) = apply::hoisted_waits(f, &an, &plan) else {
            break;
        };
        let mut grew = false;
        for (b, ws) in hoisted.iter() {
            for w in ws {
                if !walker.hoisted[b].iter().any(|x| x.at == w.at) {
                    walker.hoisted[b].push(*w);
                    grew = true;
                }
            }
        }
        if !grew {
            break;
        }
        (sol, plan) = match walker.solve_and_decide() {
            Ok(solved) => solved,
            Err(e) => return cx.diags.push(not_converged(e, &f.name)),
        };
    }
    walker.late_checks(&sol, &mut plan, cx.module.maxrregcount);
    // The walk's tables and states are freed before the edits, which
    // allocate their own (on the generated 1M matmul, 20 MB off the
    // process's peak); on a large function, by a thread of its own while
    // the edits run (8 ms there).
    let (wgmmas, owned) = walker.into_owned();
    let freed = (owned, sol);
    if f.insts.len() >= PREPARE_ON_TWO_THREADS_FROM {
        // Where no thread starts, the closure and what it holds are
        // dropped here.
        let _ = std::thread::Builder::new()
            .name("ori-free".into())
            .spawn(move || drop(freed));
    } else {
        drop(freed);
    }
    apply::apply(f, cx, &an, plan, mode, &wgmmas);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    /// A kernel of `tiles` pipelined tiles: each a loop of one wgmma (with no
    /// fence: phase 87 injects the arrive) under
    /// `wait_group 1`, then `wait_group 0` and a store of the accumulators.
    fn tiled_kernel(tiles: usize) -> String {
        let mut s = String::from(
            ".version 8.0\n.target sm_90a\n.address_size 64\n\
             .visible .entry k(.param .u64 p_a, .param .u32 p_k)\n{\n",
        );
        let n = tiles + 1;
        let _ = writeln!(
            s,
            ".reg .pred %p<{n}>;\n.reg .b32 %r<{}>;\n.reg .b64 %rd<2>;\n.reg .f32 %f<{}>;",
            2 * n,
            8 * n
        );
        s.push_str("ld.param.u64 %rd0, [p_a];\nld.param.u32 %r0, [p_k];\n");
        for t in 0..tiles {
            let f = 8 * t;
            for k in 0..8 {
                let _ = writeln!(s, "mov.f32 %f{}, 0f00000000;", f + k);
            }
            let (i, out) = (2 * t + 1, 2 * t + 2);
            let _ = writeln!(s, "mov.u32 %r{i}, 0;\n$L{t}:");
            let acc: Vec<String> = (0..8).map(|k| format!("%f{}", f + k)).collect();
            let _ = writeln!(
                s,
                "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{{}}}, %rd0, %rd0, 1, 1, 1, 0, 0;",
                acc.join(", ")
            );
            let _ = writeln!(
                s,
                "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 1;\n\
                 add.s32 %r{i}, %r{i}, 1;\nsetp.lt.s32 %p{t}, %r{i}, %r0;\n@%p{t} bra $L{t};\n\
                 wgmma.wait_group.sync.aligned 0;\ncvt.rn.f16x2.f32 %r{out}, %f{}, %f{f};\n\
                 st.global.b32 [%rd0], %r{out};",
                f + 1
            );
        }
        s.push_str("ret;\n}\n");
        s
    }

    /// Phase 87 over `m`'s function `f` (phase 85 run first), with its
    /// threads from `two_threads_from` instructions on: the IR and the
    /// diagnostics.
    fn fixup_function(
        m: &ori_ir::Module,
        f: &Function,
        mode: Mode,
        two_threads_from: usize,
        most_held: Option<usize>,
    ) -> (String, String) {
        let info = ModuleInfo::of(m);
        let mut f = f.clone();
        let mut cx = PassContext {
            module: &info,
            diags: Vec::new(),
        };
        crate::OriPropagateGmma.run(&mut f, &mut cx);
        run_fixup_with(&mut f, &mut cx, mode, two_threads_from, most_held);
        (ori_ir::function_to_string(&f), format!("{:?}", cx.diags))
    }

    /// Phase 87 over `m`'s one large function.
    fn fixup(
        m: &ori_ir::Module,
        two_threads_from: usize,
        most_held: Option<usize>,
    ) -> (String, String) {
        let f = m.funcs.values().next().expect("one function");
        assert!(f.insts.len() >= PREPARE_ON_TWO_THREADS_FROM);
        fixup_function(m, f, Mode::Ptxas, two_threads_from, most_held)
    }

    /// The `.ptx` files below `dir`, sorted.
    fn ptx_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                ptx_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
        out.sort();
    }

    /// Every function of every kernel in the repository's tests (the
    /// corpora, the real kernels, Triton's, the generated ones), through
    /// phase 87 on one thread and with its threads from the first
    /// instruction on (the preparation, and the fixpoint's later rounds
    /// trailing its first pass: `trailing_rounds`): the same IR and the same
    /// diagnostics (ISA-strict mode differs in what the walk decides, not in
    /// how the fixpoint is solved). The debug build also checks each
    /// two-thread solution against the sequential solver's
    /// (`Walker::solve_and_decide`).
    #[test]
    fn two_threads_solve_what_one_does() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
        let mut files = Vec::new();
        ptx_files(&root, &mut files);
        let mut compared = 0;
        for p in &files {
            let name = p.display().to_string();
            let Ok(src) = std::fs::read_to_string(p) else {
                continue;
            };
            let (ast, diags) = ori_ptx::parse_with_diags(&name, &src);
            if diags.iter().any(|d| d.severity.is_error()) {
                continue;
            }
            let (m, diags) = ori_ptx::lower::lower_module_owned(&name, ast);
            if diags.iter().any(|d| d.severity.is_error()) {
                continue;
            }
            for f in m.funcs.values() {
                let one = fixup_function(&m, f, Mode::Ptxas, usize::MAX, None);
                let two = fixup_function(&m, f, Mode::Ptxas, 0, None);
                assert!(one.1 == two.1, "{name}: the diagnostics differ");
                assert!(one.0 == two.0, "{name}: the IR differs");
                compared += 1;
            }
        }
        assert!(compared > 1000, "only {compared} functions compared");
    }

    #[test]
    fn two_threads_prepare_what_one_does() {
        let src = tiled_kernel(4000);
        let (ast, diags) = ori_ptx::parse_with_diags("tiles.ptx", &src);
        assert!(diags.is_empty(), "{diags:?}");
        let (m, diags) = ori_ptx::lower::lower_module_owned("tiles.ptx", ast);
        assert!(diags.is_empty(), "{diags:?}");
        let (one_ir, one_diags) = fixup(&m, usize::MAX, None);
        let (two_ir, two_diags) = fixup(&m, 0, None);
        assert!(one_ir.contains("_warpgroup"), "phase 87 injected nothing");
        assert_eq!(one_diags, two_diags);
        assert!(one_ir == two_ir, "the IR differs");
        // Each tile's loop sends its exit state on to the next tile's run:
        // with no room for it, the fixpoint's second thread gives up at
        // once and the sequential solver decides afresh.
        let (held_ir, held_diags) = fixup(&m, 0, Some(0));
        assert_eq!(one_diags, held_diags);
        assert!(one_ir == held_ir, "the IR differs after the fallback");
    }
}
