//! The pass trait and the pass manager.
//!
//! Like rustc's MIR passes, each pass is one type behind a small trait (name,
//! Ori phase number, run); the manager runs a pipeline over every function
//! with a body, dumps the IR before/after the passes asked for, and runs the
//! verifier after each pass when asked to (always in tests and debug builds).

use crate::diagnostics::Diagnostic;
use crate::function::NameMap;
use crate::function::{Function, Module};
use crate::verify::{format_errors, verify_function};
use crate::write::function_to_string;

/// What a pass may know about the rest of the module.
#[derive(Clone, Debug, Default)]
pub struct ModuleInfo {
    /// Target architecture (`sm_90a`).
    pub arch: String,
    /// Whether the target has wgmma.
    pub has_wgmma: bool,
    /// Per function name, what a caller's pass may ask of it.
    pub funcs: NameMap<String, FuncFacts>,
    /// `ptxas -c`: every callee is treated as external.
    pub compile_only: bool,
    /// `ptxas -maxrregcount=N`.
    pub maxrregcount: Option<u32>,
}

impl ModuleInfo {
    /// Gather the module facts passes consult.
    pub fn of(m: &Module) -> Self {
        let taken = address_taken(m);
        let funcs = m
            .funcs
            .values()
            .map(|f| {
                let facts = FuncFacts {
                    has_body: f.has_body,
                    holds_pipeline_ops: holds_pipeline_ops(f),
                    address_taken: taken.contains(&*f.name),
                };
                (f.name.to_string(), facts)
            })
            .collect();
        ModuleInfo {
            arch: m.arch().to_string(),
            has_wgmma: m.has_wgmma(),
            funcs,
            compile_only: false,
            maxrregcount: None,
        }
    }
}

/// What the rest of a module may know of one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuncFacts {
    /// Defined in the module (not an `.extern` declaration).
    pub has_body: bool,
    /// Holds a wgmma or a commit ([`holds_pipeline_ops`]).
    pub holds_pipeline_ops: bool,
    /// Its address is taken somewhere in the module ([`address_taken`]).
    pub address_taken: bool,
}

/// The functions whose address the module takes: named by an instruction
/// other than as a direct call's callee or in an indirect call's
/// `.calltargets` list (`mov.u64 %rd, f`), or in a module-scope
/// variable's initializer (`.global .u64 tbl[2] = {f, g};`). ptxas 13.0.88
/// does not inline such a function: a direct call to it is an extern call
/// (C7509) even when the address goes unused
/// (`corpus/c7509_call_to_address_taken_func*`), while a function only
/// listed in `.calltargets` is inlined as any other
/// (`corpus/clean_call_to_func_in_calltargets`).
pub fn address_taken(m: &Module) -> fxhash::FxHashSet<Box<str>> {
    let defined: fxhash::FxHashSet<&str> = m.funcs.values().map(|f| &*f.name).collect();
    let mut out = fxhash::FxHashSet::default();
    let mut note = |n: &str| {
        if defined.contains(n) {
            out.insert(Box::<str>::from(n));
        }
    };
    // A call names functions as its callee or its `.calltargets` list:
    // neither takes an address.
    let insts = m.funcs.values().flat_map(|f| f.insts.values());
    for d in insts.filter(|d| d.opcode != crate::Opcode::Call) {
        for s in &d.slots {
            named_symbols(&s.op, &mut note);
        }
    }
    for g in &m.globals {
        if let Some((_, init)) = g.split_once('=') {
            init.split(|c: char| !(c.is_ascii_alphanumeric() || "_$%".contains(c)))
                .for_each(&mut note);
        }
    }
    out
}

/// Calls `note` on every symbol `op` names (as a value or an address base).
fn named_symbols(op: &crate::Operand, note: &mut impl FnMut(&str)) {
    use crate::{AddrBase, Operand};
    match op {
        Operand::Sym(n)
        | Operand::Addr {
            base: AddrBase::Sym(n),
            ..
        } => note(n),
        Operand::Vector(v) | Operand::Args(v) => v.iter().for_each(|o| named_symbols(o, note)),
        _ => {}
    }
}

/// Whether `f` holds a wgmma or a commit: what makes a call to it cross a
/// pipeline. A callee with only fences is not inlined and counts as a
/// plain call (`heldout3_25`: C7519 in the caller, no C7510); nor does one
/// with only waits (`c7519_call_to_wait_only_callee_in_pipeline`: ptxas
/// 13.0.88 prints no C7510 for a call to a function holding just
/// `wgmma.wait_group`, whatever its count).
pub fn holds_pipeline_ops(f: &Function) -> bool {
    f.insts
        .values()
        .any(|d| d.opcode.is_gmma_family() && !d.opcode.is_arrive() && !d.opcode.is_wait())
}

/// Context handed to a running pass.
pub struct PassContext<'a> {
    /// Module facts.
    pub module: &'a ModuleInfo,
    /// Diagnostics produced so far (passes append).
    pub diags: Vec<Diagnostic>,
}

/// A transformation or analysis over one function.
pub trait Pass {
    /// The ptxas name of the pass (`OriPropagateGmma`).
    fn name(&self) -> &'static str;
    /// The ptxas phase number (85).
    fn phase(&self) -> u32;
    /// Run over one function.
    fn run(&self, f: &mut Function, cx: &mut PassContext<'_>);
}

/// Which dumps to produce.
#[derive(Clone, Debug, Default)]
pub struct DumpOptions {
    /// Pass names (or `all`) to dump before.
    pub before: Vec<String>,
    /// Pass names (or `all`) to dump after.
    pub after: Vec<String>,
}

impl DumpOptions {
    fn wants(list: &[String], name: &str) -> bool {
        list.iter()
            .any(|p| p == "all" || p.eq_ignore_ascii_case(name))
    }
}

/// A pipeline failure: the verifier rejected a pass's output.
#[derive(Clone, Debug)]
pub struct PipelineError {
    /// The pass after which verification failed.
    pub pass: &'static str,
    /// The verifier's report.
    pub report: String,
}

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IR invalid after {}:\n{}", self.pass, self.report)
    }
}

impl std::error::Error for PipelineError {}

/// Runs passes in order.
#[derive(Default)]
pub struct PassManager {
    passes: Vec<Box<dyn Pass>>,
    /// Verify after every pass.
    pub verify: bool,
    /// Dumps to produce.
    pub dumps: DumpOptions,
    /// Compile for this architecture instead of the module's `.target` (the SM gate reads it).
    pub arch: Option<String>,
    /// `ptxas -c`: treat every callee as external.
    pub compile_only: bool,
    /// `ptxas -maxrregcount=N`.
    pub maxrregcount: Option<u32>,
}

impl PassManager {
    /// An empty pipeline; verification on in debug builds.
    pub fn new() -> Self {
        PassManager {
            passes: Vec::new(),
            verify: cfg!(debug_assertions),
            dumps: DumpOptions::default(),
            arch: None,
            compile_only: false,
            maxrregcount: None,
        }
    }

    /// Append a pass.
    pub fn add(&mut self, p: Box<dyn Pass>) -> &mut Self {
        self.passes.push(p);
        self
    }

    /// The pipeline as (phase, name).
    pub fn pipeline(&self) -> Vec<(u32, &'static str)> {
        self.passes.iter().map(|p| (p.phase(), p.name())).collect()
    }

    /// Whether a pass of this name is in the pipeline.
    pub fn knows(&self, name: &str) -> bool {
        name == "all"
            || self
                .passes
                .iter()
                .any(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// The module facts every function's passes read, with this pipeline's
    /// options.
    pub fn module_info(&self, m: &Module) -> ModuleInfo {
        let mut info = ModuleInfo::of(m);
        info.compile_only = self.compile_only;
        info.maxrregcount = self.maxrregcount;
        if let Some(a) = &self.arch {
            info.has_wgmma = info.has_wgmma && a == "sm_90a";
            info.arch = a.clone();
        }
        info
    }

    /// Run the pipeline over every function with a body. Dumps go to `dump`.
    pub fn run(
        &self,
        m: &mut Module,
        diags: &mut Vec<Diagnostic>,
        dump: &mut dyn FnMut(String),
    ) -> Result<(), PipelineError> {
        let info = self.module_info(m);
        for f in m.funcs.values_mut().filter(|f| f.has_body) {
            self.run_function(f, &info, diags, dump)?;
        }
        Ok(())
    }

    /// Run the pipeline over `f`, a function with a body of the module
    /// `info` describes ([`PassManager::module_info`]). A function's passes
    /// read nothing of the others but `info`, so functions may run in any
    /// order, or at once.
    pub fn run_function(
        &self,
        f: &mut Function,
        info: &ModuleInfo,
        diags: &mut Vec<Diagnostic>,
        dump: &mut dyn FnMut(String),
    ) -> Result<(), PipelineError> {
        for p in &self.passes {
            if DumpOptions::wants(&self.dumps.before, p.name()) {
                dump(format!(
                    "; IR before {} (phase {})\n{}",
                    p.name(),
                    p.phase(),
                    function_to_string(f)
                ));
            }
            let decided = f.decisions.len();
            let mut cx = PassContext {
                module: info,
                diags: Vec::new(),
            };
            p.run(f, &mut cx);
            diags.append(&mut cx.diags);
            if self.verify {
                let errs = verify_function(f);
                if !errs.is_empty() {
                    return Err(PipelineError {
                        pass: p.name(),
                        report: format_errors(f, &errs),
                    });
                }
            }
            if DumpOptions::wants(&self.dumps.after, p.name()) {
                dump(format!(
                    "; IR after {} (phase {})\n{}{}",
                    p.name(),
                    p.phase(),
                    function_to_string(f),
                    decisions_to_string(&f.decisions[decided..]),
                ));
            }
        }
        Ok(())
    }
}

/// The decisions a pass made, as comments under its dump (the text form
/// skips `;` lines, so the dump still parses): one line each, with the
/// rule that made it.
fn decisions_to_string(decisions: &[crate::function::RuleUse]) -> String {
    let mut s = String::new();
    for d in decisions {
        let at = match d.line {
            0 => "the function".to_string(),
            l => format!("line {l}"),
        };
        s.push_str(&format!("; decision: {} at {at} ({})\n", d.what, d.rule));
    }
    s
}
