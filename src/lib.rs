//! `ori`: the embedding facade.
//!
//! One call takes PTX (or ori's IR text) through the front end, phases 85
//! and 87, and the back ends, and hands back the module, the diagnostics (as
//! data) and any requested IR dumps. The CLI is a thin shell over this; a
//! toy compiler embeds the same calls.
//!
//! # Example
//!
//! A wgmma's accumulator read before any `wgmma.wait_group`: ptxas 13.0.88
//! injects a wait and says so (`C7517 ... around line 14`, checked with
//! `ptxas -arch=sm_90a`); ori decides the same, names the rule, and its
//! fix-it writes the wait out.
//!
//! ```
//! use ori::ir::consts::C7517_WAIT_INJECTED;
//! use ori::ir::render::render_ptxas;
//!
//! let src = "\
//! .version 8.0
//! .target sm_90a
//! .address_size 64
//! .visible .entry k(.param .u64 p_out, .param .u64 p_da, .param .u64 p_db)
//! {
//!   .reg .f32 %f<5>;
//!   .reg .b64 a, b, ptr;
//!   ld.param.u64 ptr, [p_out];
//!   ld.param.u64 a, [p_da];
//!   ld.param.u64 b, [p_db];
//!   wgmma.fence.sync.aligned;
//!   wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, a, b, 0, 1, 1, 0, 0;
//!   wgmma.commit_group.sync.aligned;
//!   add.f32 %f4, %f0, %f1;
//!   st.global.f32 [ptr], %f4;
//!   ret;
//! }
//! ";
//! let opts = ori::Options::default();
//! let c = ori::compile_ptx("k.ptx", src, &opts);
//! assert!(!c.failed());
//! let wait = &c.diags[0];
//! assert_eq!(wait.code, Some(C7517_WAIT_INJECTED));
//! assert_eq!(wait.rule, Some("R-wait-before-read"));
//! assert_eq!(
//!     render_ptxas(wait),
//!     "ptxas info    : (C7517) warpgroup.wait is injected in around line 14 \
//!      by compiler to allow use of registers defined by GMMA in function 'k'"
//! );
//! // The fix-it: the same PTX with the wait made explicit before line 14.
//! let fixed = ori::fixit_ptx("k.ptx", src, &c, &opts).unwrap();
//! assert!(fixed.contains("wgmma.wait_group.sync.aligned 0;"));
//! assert!(ori::compile_ptx("k.ptx", &fixed, &opts).diags.is_empty());
//! ```

#![warn(missing_docs)]

pub use ori_gmma as gmma;
pub use ori_host as host;
pub use ori_ir as ir;
pub use ori_lower as lower;
pub use ori_ptx as ptx;
pub use ori_report as report;

pub mod explain;
pub mod rule_table;

use ori_ir::{Diagnostic, Module, Severity};
use ori_ptx::source_map::Locs;

/// What to run and what to dump.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Target architecture (default: the module's `.target`).
    pub arch: Option<String>,
    /// Pass names (or `all`) whose input IR to dump.
    pub print_before: Vec<String>,
    /// Pass names (or `all`) whose output IR to dump.
    pub print_after: Vec<String>,
    /// Run the verifier after every pass.
    pub verify: bool,
    /// `ptxas -c`: compile without linking; every callee counts as external.
    pub compile_only: bool,
    /// Phase 87 also makes legal what ptxas leaves undefined by the PTX ISA
    /// (writes to registers of a wgmma in flight); off by default, to stay
    /// with ptxas 13.0.88's decisions.
    pub isa_strict: bool,
    /// ptxas `-maxrregcount`: wgmma whose registers cannot fit get C7602.
    pub maxrregcount: Option<u32>,
    /// Threads for independent work: a module's functions
    /// ([`run_passes`]), or the files of [`compile_many`]. 0 or 1 (the
    /// default): everything runs on the calling thread. More: a pool of
    /// that many threads. The output is the same whatever the number.
    pub threads: usize,
}

/// The result of a compilation.
#[derive(Debug, Default)]
pub struct Compilation {
    /// The module after the passes, when the input was well formed.
    pub module: Option<Module>,
    /// Diagnostics in the order ptxas would print them.
    pub diags: Vec<Diagnostic>,
    /// IR dumps requested by `print_before` / `print_after`.
    pub dumps: Vec<String>,
    /// The `.loc` positions of a PTX input, where the front end took them
    /// as it read the input ([`Locs::source_map`] is what
    /// [`ori_ptx::source_map::build`] finds); `None` where it did not (IR
    /// text): a caller that shows the diagnostics on the user's source
    /// then builds them from the text.
    pub locs: Option<Locs>,
}

impl Compilation {
    /// Whether an error or fatal diagnostic was reported so far.
    fn failed_early(&self) -> bool {
        self.diags
            .iter()
            .any(|d| matches!(d.severity, Severity::Error | Severity::Fatal))
    }

    /// Whether any error was reported.
    pub fn failed(&self) -> bool {
        self.module.is_none()
            || self
                .diags
                .iter()
                .any(|d| matches!(d.severity, Severity::Error | Severity::Fatal))
    }
}

/// Convert a front-end diagnostic into the shared data type.
fn from_ptx_diag(d: &ori_ptx::Diag) -> Diagnostic {
    // Line 0: a whole-file diagnostic, which ptxas prints with no location.
    let mut out = if d.line == 0 {
        Diagnostic::new(Severity::Error, None, d.message.clone())
    } else {
        Diagnostic::error_at(&d.file, d.line, d.col, d.message.clone())
    };
    out.severity = d.severity;
    out
}

/// ptxas's closing line after input errors.
fn aborted() -> Diagnostic {
    Diagnostic::new(Severity::Fatal, None, "Ptx assembly aborted due to errors")
}

/// Parse and lower PTX to IR, without running passes.
pub fn ptx_to_ir(file: &str, src: &str) -> Result<Module, Vec<Diagnostic>> {
    ptx_to_ir_for(file, src, None)
}

/// Parse and lower PTX to IR for the architecture `arch` (ptxas `-arch`):
/// a `.target` that `arch` cannot run is refused as ptxas refuses it.
///
/// Each function body is lowered as it is parsed, so that its whole
/// syntax tree never exists at once ([`ori_ptx::lower::parse_and_lower`]);
/// where that cannot vouch for the whole-tree front end's result, the
/// module is parsed and lowered as a whole instead. The result (module and
/// diagnostics) is the same either way. The warnings ptxas prints for
/// input it compiles are dropped: [`ptx_to_ir_warned`] keeps them.
pub fn ptx_to_ir_for(file: &str, src: &str, arch: Option<&str>) -> Result<Module, Vec<Diagnostic>> {
    ptx_to_ir_warned(file, src, arch).map(|(m, _)| m)
}

/// What the front end made of a module: the IR, the parser's and the
/// lowering's diagnostics, the `-arch` check's, the warnings ptxas prints
/// when it compiles the module (`ori_ptx::directive_warnings`), and the
/// `.loc` positions it read.
struct FrontEnd {
    module: Module,
    parse: Vec<ori_ptx::Diag>,
    lower: Vec<ori_ptx::Diag>,
    arch: Option<ori_ptx::Diag>,
    warnings: Vec<ori_ptx::Diag>,
    locs: Locs,
}

/// Run the front end, streamed where it can vouch for the result.
fn front_end(file: &str, src: &str, arch: Option<&str>) -> FrontEnd {
    let warned = |ast: &ori_ptx::Module| {
        let (mut located, late) = ori_ptx::directive_warnings::warnings(file, src, ast);
        located.extend(late);
        located
    };
    match ori_ptx::lower::parse_and_lower(file, src) {
        Some(s) => FrontEnd {
            arch: arch.and_then(|a| ori_ptx::check_arch(file, &s.ast, a)),
            warnings: warned(&s.ast),
            module: s.module,
            parse: Vec::new(),
            lower: s.diags,
            locs: s.locs,
        },
        None => {
            let (ast, parse) = ori_ptx::parse_with_diags(file, src);
            // Decided from the `.target` alone, before the tree is consumed.
            let arch = arch.and_then(|a| ori_ptx::check_arch(file, &ast, a));
            let warnings = warned(&ast);
            let locs = ori_ptx::source_map::locs_of(&ast);
            let (module, lower) = ori_ptx::lower::lower_module_owned(file, ast);
            FrontEnd {
                module,
                parse,
                lower,
                arch,
                warnings,
                locs,
            }
        }
    }
}

/// [`ptx_to_ir_for`], with the warnings ptxas prints for the input when it
/// compiles it (performance directives it ignores or adjusts, pragmas it
/// does not know), in its order: they come before any phase's message.
/// With an error, ptxas prints none of those that come after parsing.
pub fn ptx_to_ir_warned(
    file: &str,
    src: &str,
    arch: Option<&str>,
) -> Result<(Module, Vec<Diagnostic>), Vec<Diagnostic>> {
    ptx_to_ir_warned_mapped(file, src, arch).0
}

/// [`ptx_to_ir_for`], with the text's `.loc` positions as the front end
/// found them while it read the text (their [`Locs::source_map`] is what
/// [`ori_ptx::source_map::build`] finds reading it again); `None` where
/// the front end did not read it (an unknown `-arch`).
pub fn ptx_to_ir_mapped(
    file: &str,
    src: &str,
    arch: Option<&str>,
) -> (Result<Module, Vec<Diagnostic>>, Option<Locs>) {
    let (module, locs) = ptx_to_ir_warned_mapped(file, src, arch);
    (module.map(|(m, _)| m), locs)
}

/// The front end's module with its warnings, or its diagnostics in
/// ptxas's order where it found an error; and the `.loc` positions.
pub type WarnedMapped = (
    Result<(Module, Vec<Diagnostic>), Vec<Diagnostic>>,
    Option<Locs>,
);

/// [`ptx_to_ir_warned`] and [`ptx_to_ir_mapped`] in one reading.
pub fn ptx_to_ir_warned_mapped(file: &str, src: &str, arch: Option<&str>) -> WarnedMapped {
    // An unknown `-arch` value: ptxas stops before reading the input.
    if let Some(d) = arch.and_then(|a| ori_ptx::check_arch_value(file, a)) {
        return (Err(vec![from_ptx_diag(&d)]), None);
    }
    let fe = front_end(file, src, arch);
    let warnings = fe.warnings.iter().map(from_ptx_diag).collect();
    let module = checked(fe.module, &fe.parse, &fe.lower, fe.arch);
    (module.map(|m| (m, warnings)), Some(fe.locs))
}

/// The front end's module, or its diagnostics in ptxas's order where it
/// found an error.
fn checked(
    m: Module,
    diags: &[ori_ptx::Diag],
    ldiags: &[ori_ptx::Diag],
    arch_diag: Option<ori_ptx::Diag>,
) -> Result<Module, Vec<Diagnostic>> {
    let mut out: Vec<Diagnostic> = diags.iter().map(from_ptx_diag).collect();
    // A fatal input error (a syntax error, an unsupported or missing
    // `.target`) ends ptxas's reading there: the statements before it are
    // still checked (`err_wgmma_and_parse_errors_together`), none after
    // (`tests/bad_input/*__reg_bad_type`, `*__target_unknown`).
    let fatal_line = out
        .iter()
        .filter(|d| d.severity == Severity::Fatal)
        .filter_map(|d| d.line)
        .min()
        .unwrap_or(u32::MAX);
    if !out.is_empty() {
        // ptxas goes on to check the statements it could parse: their errors
        // come too, all in line order (`wgmma` vector sizes beside a syntax
        // error further down, say).
        for d in ldiags
            .iter()
            .filter(|d| d.severity != ori_ptx::Severity::Warning && d.line < fatal_line)
        {
            let d = from_ptx_diag(d);
            if !out
                .iter()
                .any(|o| o.line == d.line && o.message == d.message)
            {
                out.push(d);
            }
        }
        out.sort_by_key(|d| d.line.unwrap_or(u32::MAX));
        out.push(aborted());
        return Err(out);
    }
    out.extend(ldiags.iter().map(from_ptx_diag));
    let errors = out
        .iter()
        .any(|d| matches!(d.severity, Severity::Error | Severity::Fatal));
    if let Some(d) = arch_diag.filter(|_| !errors) {
        // ptxas stops here without its "aborted" line.
        return Err(vec![from_ptx_diag(&d)]);
    }
    if out
        .iter()
        .any(|d| matches!(d.severity, Severity::Error | Severity::Fatal))
    {
        out.push(aborted());
        return Err(out);
    }
    Ok(m)
}

/// The pass pipeline with the given options.
pub fn pipeline(opts: &Options) -> ori_ir::PassManager {
    let mut pm = if opts.isa_strict {
        ori_gmma::pipeline_isa_strict()
    } else {
        ori_gmma::pipeline()
    };
    pm.dumps.before = opts.print_before.clone();
    pm.dumps.after = opts.print_after.clone();
    pm.verify |= opts.verify;
    pm.arch = opts.arch.clone();
    pm.compile_only = opts.compile_only;
    pm.maxrregcount = opts.maxrregcount;
    pm
}

/// Run the pipeline over a module: its functions one after the other, or
/// with [`Options::threads`] above 1, on a pool of threads; the same
/// module, diagnostics and dumps either way.
pub fn run_passes(mut m: Module, opts: &Options) -> Compilation {
    let mut c = Compilation::default();
    let (ran, dumps) = run_functions(&mut m, opts, &mut c.diags);
    match ran {
        Ok(()) => {
            // Per kernel, callees first, kernels last to first; one C7510 per kernel.
            c.diags = ori_gmma::report_order::order_like_ptxas(
                &m,
                std::mem::take(&mut c.diags),
                opts.compile_only,
                opts.maxrregcount,
            );
            // Register allocation comes after phase 87 in ptxas: its fatal
            // C7602 follows the pipeline's messages.
            if let Some(max) = opts.maxrregcount {
                let arch = opts
                    .arch
                    .clone()
                    .or_else(|| m.target.first().map(|t| t.to_string()))
                    .unwrap_or_default();
                c.diags
                    .extend(ori_gmma::register_budget::check(&m, &arch, max));
            }
            if c.failed_early() {
                c.diags.push(aborted());
            } else {
                c.module = Some(m);
            }
        }
        Err(e) => {
            let msg = format!("internal error: {e}");
            c.diags.push(Diagnostic::new(Severity::Fatal, None, msg));
        }
    }
    c.dumps = dumps;
    c
}

/// The pipeline over every function of `m` with a body, its diagnostics
/// appended to `diags`, and its dumps. Functions are independent (each
/// reads only the module's facts, `ModuleInfo`): with `opts.threads`
/// above 1 they run on a pool of threads, and their diagnostics and dumps
/// are put back in function order; where a function fails verification,
/// the functions after it give none, as in a run on one thread, which
/// stops there.
fn run_functions(
    m: &mut Module,
    opts: &Options,
    diags: &mut Vec<Diagnostic>,
) -> (Result<(), ori_ir::PipelineError>, Vec<String>) {
    let pm = pipeline(opts);
    let mut dumps = Vec::new();
    if opts.threads <= 1 {
        let ran = pm.run(m, diags, &mut |s| dumps.push(s));
        return (ran, dumps);
    }
    let info = pm.module_info(m);
    let funcs: Vec<&mut ori_ir::Function> = m.funcs.values_mut().filter(|f| f.has_body).collect();
    let runs = parallel_map(opts.threads, funcs, |f| {
        let (mut d, mut dumped) = (Vec::new(), Vec::new());
        let ran = pipeline(opts).run_function(f, &info, &mut d, &mut |s| dumped.push(s));
        (ran, d, dumped)
    });
    for (ran, mut d, mut dumped) in runs {
        diags.append(&mut d);
        dumps.append(&mut dumped);
        if ran.is_err() {
            return (ran, dumps);
        }
    }
    (Ok(()), dumps)
}

/// `f` over `items` on a pool of `threads` threads (on the calling thread
/// where `threads` is at most 1 or no pool can be made), the results in
/// the items' order.
fn parallel_map<T: Send, R: Send>(
    threads: usize,
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    if threads > 1 {
        if let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
            // One task per item: rayon otherwise runs runs of items as one
            // sequential leaf, and a thread that runs out of work cannot
            // take the rest of another's leaf (measured on `ori scan`: one
            // thread idle for the last eighth of the run).
            return pool.install(|| items.into_par_iter().with_max_len(1).map(f).collect());
        }
    }
    items.into_iter().map(f).collect()
}

/// Compile each of `inputs` (a file name and its text) as
/// [`compile_source`] does, and hand each compilation to `each` with its
/// input's index, on the thread that made it (so that what a caller keeps
/// of it, not the whole module, waits for the rest). The files are
/// independent: with [`Options::threads`] above 1 they are compiled on a
/// pool of threads (each file's functions one after the other on its
/// thread). The results come in the inputs' order, the same whatever the
/// number of threads.
pub fn compile_many<N, S, R>(
    inputs: &[(N, S)],
    opts: &Options,
    each: impl Fn(usize, Compilation) -> R + Sync + Send,
) -> Vec<R>
where
    N: AsRef<str> + Sync,
    S: AsRef<str> + Sync,
    R: Send,
{
    let one = Options {
        threads: 1,
        ..opts.clone()
    };
    let mut items: Vec<(usize, &(N, S))> = inputs.iter().enumerate().collect();
    if opts.threads > 1 {
        // The largest inputs first: the pool's last tasks are then small
        // ones, where in the inputs' order a large kernel near the end
        // could leave one thread compiling it alone.
        items.sort_by_key(|&(k, (_, src))| (std::cmp::Reverse(src.as_ref().len()), k));
    }
    let mut done = parallel_map(opts.threads, items, |(k, (name, src))| {
        (
            k,
            each(k, compile_source(name.as_ref(), src.as_ref(), &one)),
        )
    });
    done.sort_unstable_by_key(|&(k, _)| k);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Compile PTX source.
pub fn compile_ptx(file: &str, src: &str, opts: &Options) -> Compilation {
    let (module, locs) = ptx_to_ir_warned_mapped(file, src, opts.arch.as_deref());
    let c = match module {
        Ok((m, warnings)) => match address_of_extern(&m, file, opts) {
            Some(fatal) => Compilation {
                diags: vec![fatal],
                ..Compilation::default()
            },
            None => with_warnings(run_passes(m, opts), warnings),
        },
        Err(diags) => Compilation {
            diags,
            ..Compilation::default()
        },
    };
    Compilation { locs, ..c }
}

/// ptxas 13.0.88 compiles a whole program unless `-c`: there, taking the
/// address of a function the module only declares is fatal, with no line
/// (`tests/bad_input/icall_address_of_extern_func*`). ori names the
/// instruction that takes it, where one does.
fn address_of_extern(m: &Module, file: &str, opts: &Options) -> Option<Diagnostic> {
    // Most modules declare no function without a body: then there is
    // nothing to look for (the pass manager computes the set again for
    // phase 87's ModuleInfo).
    if opts.compile_only || m.funcs.values().all(|f| f.has_body) {
        return None;
    }
    let taken = ori_ir::pass::address_taken(m);
    let f = m
        .funcs
        .values()
        .find(|f| !f.has_body && taken.contains(&*f.name))?;
    let msg = format!("Cannot take address of function '{}'", f.name);
    let mut d = Diagnostic::new(Severity::Fatal, None, msg);
    d.file = Some(file.to_string());
    d.culprit = m.funcs.values().find_map(|g| {
        let i = g.layout.all_insts().find(|&i| {
            let d = &g.insts[i];
            d.opcode != ori_ir::Opcode::Call
                && d.slots
                    .iter()
                    .any(|s| matches!(&s.op, ori_ir::Operand::Sym(n) if **n == *f.name))
        })?;
        Some(ori_ir::Note {
            line: g.insts[i].line,
            inst: None,
            span: g.insts[i].src,
            text: "takes the address of a function the module only declares".into(),
        })
    });
    Some(d)
}

/// `c` with the front end's `warnings` before its messages, where ptxas
/// prints them.
pub fn with_warnings(mut c: Compilation, warnings: Vec<Diagnostic>) -> Compilation {
    c.diags.splice(0..0, warnings);
    c
}

/// Compile ori IR text.
pub fn compile_ir(file: &str, src: &str, opts: &Options) -> Compilation {
    // Verified before any pass: malformed IR text is the input's error (with
    // the text's line), not an internal error after a pass.
    match ori_ir::parse_module_verified(src) {
        Ok(m) => run_passes(m, opts),
        Err(errs) => Compilation {
            diags: errs
                .into_iter()
                .map(|e| Diagnostic::error_at(file, e.line, e.col, e.message))
                .collect(),
            ..Compilation::default()
        },
    }
}

/// Compile a file by its extension: `.ori` is IR text, anything else PTX.
pub fn compile_source(file: &str, src: &str, opts: &Options) -> Compilation {
    if file.ends_with(".ori") {
        compile_ir(file, src, opts)
    } else {
        compile_ptx(file, src, opts)
    }
}

/// How many rounds the fix-it takes at most (see [`fixit_ptx`]); each round
/// only makes explicit what the previous one's text still left. Every
/// corpus case settles in one; generated pipeline seed 3 needs two.
const FIXIT_ROUNDS: usize = 4;

/// The fix-it (`ori compile --emit ptx`): `src`, compiled as `c` with
/// `opts`, printed back with every decision of the passes explicit (`None`
/// when `c` did not compile).
///
/// **R-fixit-fixpoint.** The fix-it checks its own output: where ori,
/// compiling that text again, would still make something explicit (an
/// arrive or wait to inject, or a serialization other than C7509 and C7512,
/// which no rewrite removes; see [`fixit_needs_more`]), the fix-it is
/// applied to its own text again, up to `FIXIT_ROUNDS` (4) rounds. One round
/// can expose what the next must handle: serializing a function for one
/// reason (C7520: an arrive in divergent code) leaves a register another
/// instruction kills between two wgmma, which ptxas gives C7511 however
/// many waits surround it, and writing a call out brings the callee's
/// registers into the caller. A statement an earlier round injected and a
/// later round removes leaves no trace in the text.
pub fn fixit_ptx(file: &str, src: &str, c: &Compilation, opts: &Options) -> Option<String> {
    let mut text = fixit_round(file, src, c)?;
    let opts = Options {
        print_before: Vec::new(),
        print_after: Vec::new(),
        ..opts.clone()
    };
    for _ in 1..FIXIT_ROUNDS {
        let again = compile_ptx(file, &text, &opts);
        if again.failed() || fixit_needs_more(&again).is_none() {
            break;
        }
        match fixit_round(file, &text, &again) {
            Some(next) if next != text => text = next,
            _ => break,
        }
    }
    Some(text)
}

/// Whether the fix-it must remove `d` from its output: a message ptxas
/// prints, other than C7509 (a call to a function without a body), C7512
/// (the register limit), C7504 and C7508 (`setmaxnreg` ignored under `-c`
/// or for want of launch bounds, which are the author's choice) and the
/// C7510 of an indirect call (R-indirect-call), which no rewrite of the
/// wgmma code removes, and the warnings (ignored performance directives and
/// pragmas, `ori_ptx::directive_warnings`).
pub fn fixit_removes(d: &Diagnostic) -> bool {
    use ori_ir::consts::*;
    let kept = [
        C7504_SETMAXNREG_SEPARATE,
        C7508_SETMAXNREG_UNKNOWN_ENTRY,
        C7509_EXTERN_CALLS,
        C7512_FUNCTION_REGISTERS,
    ];
    let indirect = ori_gmma::fixup::rules::RuleId::IndirectCall.name();
    ori_ir::render::ptxas_prints(d)
        && d.severity != Severity::Warning
        && !d.code.is_some_and(|c| kept.contains(&c))
        && d.rule != Some(indirect)
}

/// What ori would still make explicit in the text `c` compiled: its first
/// message the fix-it must remove ([`fixit_removes`]); `None` for the
/// fix-it's settled output.
pub fn fixit_needs_more(c: &Compilation) -> Option<&Diagnostic> {
    c.diags.iter().find(|d| fixit_removes(d))
}

/// One round of the fix-it: `src` printed back with every decision of the
/// passes explicit, from `c`, its compilation (`None` when `c` did not
/// compile).
///
/// Where a function was serialized for a call (C7509, C7510; C7520 for a
/// call inside an open stage under `-c`) and every call it makes can be
/// written out as the callee's body (`ori_lower::inline_calls`), the calls
/// are written out in the fix-it text, so each callee comes in with its own
/// decisions explicit, as ptxas inlines a callee it has already fixed
/// (`c7510_commit_wait_in_callee`: the callee's empty group keeps its dummy
/// wgmma). The caller is written serialized, so nothing is in flight at
/// any call: the callee's code starts from an empty pipeline, as it was
/// analysed.
fn fixit_round(file: &str, src: &str, c: &Compilation) -> Option<String> {
    use ori_ir::SerializationCode::{CrossesCall, ExternCalls, WgarDivergent};
    let m = c.module.as_ref()?;
    let fixed = ori_lower::ptx::emit_module(m, src);
    // C7520 also comes from divergence: then the function has no call to
    // write out.
    let for_call = |f: &ori_ir::Function| {
        f.serialized
            .is_some_and(|z| [ExternCalls, CrossesCall, WgarDivergent].contains(&z.code))
    };
    // Writing a callee's calls out gives it their pipelines: then its own
    // callers' calls cross a pipeline too (ptxas names only the first such
    // function per kernel, R-kernel-units), so they are written out as well.
    let graph = ori_gmma::report_order::CallGraph::of(m);
    // Functions that hold pipeline ops or call, transitively, one that does.
    let mut reaches: Vec<bool> = graph
        .funcs
        .iter()
        .map(|f| ori_ir::pass::holds_pipeline_ops(f))
        .collect();
    graph.mark_callers(&mut reaches);
    // Written out: the calls of functions serialized for a call, and of
    // functions serialized for another reason (a late check such as C7514
    // outranks C7510) whose calls reach a pipeline: kept, such a call would
    // bring C7510 back. Then the callers of those, transitively.
    let mut out: Vec<bool> = graph
        .funcs
        .iter()
        .enumerate()
        .map(|(i, f)| {
            for_call(f) || (f.serialized.is_some() && graph.callees[i].iter().any(|&c| reaches[c]))
        })
        .collect();
    graph.mark_callers(&mut out);
    let by_call: Vec<&str> = graph
        .funcs
        .iter()
        .zip(&out)
        .filter(|(_, &o)| o)
        .map(|(f, _)| &*f.name)
        .collect();
    if !by_call.is_empty() {
        if let Some(inlined) = ori_lower::inline_calls::inline_calls(file, &fixed, &by_call) {
            return Some(inlined);
        }
    }
    Some(fixed)
}

/// The ptxas flags a corpus case's header asks for (`// oracle-flags: -c
/// -arch=sm_90 -maxrregcount=N`), as ori options (verifier on), so that
/// ori runs a case the way `cargo xtask oracle record` ran ptxas.
pub fn case_options(src: &str) -> Options {
    let mut o = Options {
        verify: true,
        ..Options::default()
    };
    for line in src.lines().take(30) {
        let Some(c) = line.trim().strip_prefix("//") else {
            break;
        };
        if let Some(flags) = c.trim().strip_prefix("oracle-flags:") {
            for f in flags.split_whitespace() {
                if f == "-c" {
                    o.compile_only = true;
                } else if let Some(a) = f.strip_prefix("-arch=") {
                    o.arch = Some(a.to_string());
                } else if let Some(n) = f.strip_prefix("-maxrregcount=") {
                    o.maxrregcount = n.parse().ok();
                }
            }
        }
    }
    o
}
