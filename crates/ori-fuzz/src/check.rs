//! The properties every fuzz input must keep. Each check returns `Err` with
//! a description of the broken property; a panic inside ori is itself a
//! finding (libFuzzer reports it, and the smoke test fails on it).

use ori::ir::{Diagnostic, Severity};
use ori::Options;

/// Whether a diagnostic is an internal error (the verifier failed after a
/// pass, or a pass gave up): never acceptable, whatever the input.
fn internal(d: &Diagnostic) -> bool {
    d.severity == Severity::Fatal && d.message.contains("internal error")
}

fn opts(isa_strict: bool, compile_only: bool) -> Options {
    Options {
        verify: true,
        isa_strict,
        compile_only,
        ..Options::default()
    }
}

/// Any bytes as PTX, in both modes and under `-c`: no internal error, and
/// whatever compiles renders and lowers. (Panics surface as panics.)
pub fn any_ptx(data: &[u8]) -> Result<(), String> {
    let Ok(src) = std::str::from_utf8(data) else {
        return Ok(());
    };
    for (isa_strict, compile_only) in [(false, false), (true, false), (false, true)] {
        let c = ori::compile_ptx("fuzz.ptx", src, &opts(isa_strict, compile_only));
        if let Some(d) = c.diags.iter().find(|d| internal(d)) {
            return Err(format!("internal error: {}", d.message));
        }
        let source = ori::report::Source::new("fuzz.ptx", src);
        for d in &c.diags {
            let _ = ori::ir::render::render_ptxas(d);
            let _ = ori::report::render_human(d, Some(&source), ori::report::Style::Plain);
            let _ = ori::report::render_human(d, None, ori::report::Style::Color);
            let _ = ori::report::render_json(d, Some(&source));
            let _ = ori::report::render_json(d, None);
        }
        let file = ori::report::SarifFile {
            uri: "fuzz.ptx".into(),
            source: Some(&source),
            diags: &c.diags,
        };
        let _ = ori::report::sarif_log(&[file], &ori::explain::explain);
        if let Some(m) = &c.module {
            let _ = ori::lower::sass::emit_module(m);
            let _ = ori::fixit_ptx("fuzz.ptx", src, &c, &opts(isa_strict, compile_only));
        }
    }
    Ok(())
}

/// Any bytes as PTX through the host backend: every entry of what compiles
/// runs (two CTAs of two warpgroups, so that the scheduler, barriers and
/// parallel CTAs are exercised; a 4 KiB zeroed buffer per parameter, 4 KiB
/// of dynamic shared memory, a short step limit) and must stop with a
/// result or an error, never a panic. Kept here rather than in the fuzz target so that the
/// workspace build (CI, on stable) compiles it whenever the host API moves.
pub fn host_runs(data: &[u8]) {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let c = ori::compile_ptx("fuzz.ptx", src, &opts(false, false));
    let Some(m) = &c.module else {
        return;
    };
    for f in m.funcs.values().filter(|f| f.has_body) {
        let mut g = ori::host::GlobalMemory::new();
        let launch = ori::host::Launch {
            params: f.params.iter().map(|_| g.alloc(vec![0; 4096])).collect(),
            dynamic_shared: 4096,
            step_limit: 20_000,
            grid: [2, 1, 1],
            block: [256, 1, 1],
            ..Default::default()
        };
        let _ = ori::host::run(m, &f.name, &launch, &g);
    }
}

/// Any bytes as `.ori` text: no internal error; a module that parses and
/// verifies prints back to text that parses to the same text again.
pub fn any_ori(data: &[u8]) -> Result<(), String> {
    let Ok(src) = std::str::from_utf8(data) else {
        return Ok(());
    };
    if let Ok(m) = ori::ir::parse_module_verified(src) {
        let text = ori::ir::write::write_module(&m);
        match ori::ir::parse_module_verified(&text) {
            Ok(again) => {
                let text2 = ori::ir::write::write_module(&again);
                if text2 != text {
                    return Err("the .ori text does not round-trip".into());
                }
            }
            Err(e) => {
                return Err(format!(
                    "ori's own text does not parse back: {}",
                    e.first().map(|e| e.to_string()).unwrap_or_default()
                ))
            }
        }
    }
    for isa_strict in [false, true] {
        let c = ori::compile_ir("fuzz.ori", src, &opts(isa_strict, false));
        if let Some(d) = c.diags.iter().find(|d| internal(d)) {
            return Err(format!("internal error: {}", d.message));
        }
        if let Some(m) = &c.module {
            let _ = ori::lower::sass::emit_module(m);
        }
    }
    Ok(())
}

/// What one generated pipeline did, for the smoke test's figures.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    /// ori serialized some function.
    pub serialized: bool,
    /// Waits and arrives injected (C7517, C7519).
    pub injected: usize,
    /// Hazards left in ptxas mode, each announced by a note.
    pub announced: usize,
}

/// A well-formed generated module (see [`crate::pipeline`]): ori accepts
/// it; in ISA-strict mode phase 87 leaves no hazard; in ptxas mode every
/// hazard it leaves is announced by a note on its line; the fix-it compiles
/// again and needs nothing more than what no rewrite removes (C7509 for
/// calls under `-c`).
pub fn pipeline(bytes: &[u8]) -> Result<Outcome, String> {
    let (src, compile_only) = crate::pipeline::generate(bytes);
    let fail = |what: String| Err(format!("{what}\n--- generated PTX ---\n{src}"));
    let mut outcome = Outcome::default();
    for isa_strict in [true, false] {
        let c = ori::compile_ptx("gen.ptx", &src, &opts(isa_strict, compile_only));
        if let Some(d) = c
            .diags
            .iter()
            .find(|d| matches!(d.severity, Severity::Error | Severity::Fatal))
        {
            return fail(format!(
                "ori rejects a well-formed kernel (isa_strict {isa_strict}): {}",
                d.message
            ));
        }
        let Some(m) = &c.module else {
            return fail("no module".into());
        };
        // Without `-c`, ptxas compiles (and ori reports) only the functions
        // a kernel reaches (R-kernel-units): a hazard in one no kernel
        // calls never runs and is announced nowhere.
        let graph = ori::gmma::report_order::CallGraph::of(m);
        let reached = graph.reached_from_kernels();
        let compiled =
            |name: &str| compile_only || graph.index.get(name).is_none_or(|&k| reached[k]);
        for (id, h) in ori_hazard::check_module(m) {
            if !h.kind.is_failing() || !compiled(&m.funcs[id].name) {
                continue;
            }
            let announced = c.diags.iter().any(|d| {
                d.severity == Severity::Note && d.culprit.as_ref().is_some_and(|n| n.line == h.line)
            });
            if isa_strict || !announced {
                return fail(format!(
                    "hazard after phase 87 (isa_strict {isa_strict}) in {}: {}",
                    m.funcs[id].name,
                    h.describe(&m.funcs[id])
                ));
            }
            outcome.announced += 1;
        }
        if isa_strict {
            continue;
        }
        outcome.serialized = m.funcs.values().any(|f| f.serialized.is_some());
        outcome.injected = c
            .diags
            .iter()
            .filter(|d| matches!(d.code, Some(7517 | 7519)))
            .count();
        let Some(fixed) = ori::fixit_ptx("gen.ptx", &src, &c, &opts(false, compile_only)) else {
            return fail("no fix-it for a module that compiled".into());
        };
        let again = ori::compile_ptx("gen.ptx", &fixed, &opts(false, compile_only));
        if let Some(d) = ori::fixit_needs_more(&again) {
            return fail(format!(
                "the fix-it needs more: {}\n--- fix-it ---\n{fixed}",
                ori::ir::render::render_ptxas(d)
            ));
        }
    }
    Ok(outcome)
}

/// The kind of a broken property of [`pipeline`], as `tests/fuzz_known.txt`
/// names it: `fixit-C75xx` (the fix-it's output still gets that code),
/// `hazard-strict`, `hazard-unannounced`, or `other`.
pub fn kind(e: &str) -> String {
    if let Some(rest) = e.strip_prefix("the fix-it needs more: ") {
        let code = rest.split(['(', ')']).nth(1).unwrap_or("?");
        return format!("fixit-{code}");
    }
    if e.starts_with("hazard after phase 87 (isa_strict true)") {
        return "hazard-strict".into();
    }
    if e.starts_with("hazard after phase 87 (isa_strict false)") {
        return "hazard-unannounced".into();
    }
    "other".into()
}

/// Failure kinds that are understood and listed (`tests/fuzz_known.txt`):
/// the libFuzzer target does not stop on them, so that a run finds new ones.
/// None now: the fix-it family (`fixit-C7511`, `fixit-C7517`,
/// `fixit-C7519`) is cured by R-fixit-fixpoint (`ori::fixit_ptx`).
pub const KNOWN_KINDS: &[&str] = &[];

/// How many leading bytes of a [`host_launch`] input choose the launch.
pub const LAUNCH_BYTES: usize = 16;

/// Bytes as `ori run` sees them: the first [`LAUNCH_BYTES`] choose the
/// launch (grid, block, cluster, dynamic shared memory, each parameter a
/// 4 KiB buffer, a null pointer, a small integer or a pointer past a
/// buffer, the step limit, the schedule and its seed, whether to stop at
/// the first hazard), the rest is the kernel as PTX, run through ori's
/// passes or as written. Every entry runs and must stop with a result or
/// a typed error, never a panic; an error must name a line when it is about
/// an instruction (what `ori run` prints).
pub fn host_launch(data: &[u8]) -> Result<(), String> {
    let (head, text) = data.split_at(data.len().min(LAUNCH_BYTES));
    let mut b = [0u8; LAUNCH_BYTES];
    b[..head.len()].copy_from_slice(head);
    let Ok(src) = std::str::from_utf8(text) else {
        return Ok(());
    };
    let passes = b[15] & 1 == 0;
    let m = if passes {
        ori::compile_ptx("fuzz.ptx", src, &opts(false, false)).module
    } else {
        ori::ptx_to_ir("fuzz.ptx", src).ok()
    };
    let Some(m) = &m else {
        return Ok(());
    };
    let pick = |v: u8, of: &[u32]| of[usize::from(v) % of.len()];
    for f in m.funcs.values().filter(|f| f.has_body) {
        let mut g = ori::host::GlobalMemory::new();
        let params = f
            .params
            .iter()
            .enumerate()
            .map(|(k, _)| match (b[8 + k % 4] >> (2 * (k / 4 % 4))) & 3 {
                0 => g.alloc(vec![0; 4096]),
                1 => 0,
                2 => u64::from(b[12]) * 16,
                _ => g.alloc(vec![0; 64]) + 64,
            })
            .collect();
        let cluster = [pick(b[4], &[1, 1, 2, 4]), 1, 1];
        let launch = ori::host::Launch {
            params,
            dynamic_shared: u64::from(pick(b[0], &[0, 1024, 4096, 65536])),
            step_limit: 20_000,
            grid: [cluster[0] * pick(b[1], &[1, 2]), pick(b[2], &[1, 1, 2]), 1],
            block: [pick(b[3], &[32, 128, 256, 384, 96, 1024]), 1, 1],
            cluster,
            stop_on_hazard: b[5] & 1 == 1,
            race_check: b[5] & 2 == 0,
            check_proxy: b[5] & 4 == 0,
            schedule: if b[6] & 1 == 1 {
                ori::host::Schedule::Random {
                    seed: u64::from(b[7]),
                }
            } else {
                ori::host::Schedule::Deterministic
            },
            ..Default::default()
        };
        if let Err(e) = ori::host::run(m, &f.name, &launch, &g) {
            let about_an_instruction = matches!(
                e.fault,
                ori::host::Fault::OutOfBounds { .. }
                    | ori::host::Fault::NullPointer { .. }
                    | ori::host::Fault::Hazard(_)
            );
            if about_an_instruction && e.line == 0 {
                return Err(format!(
                    "an error about an instruction without its line: {e}"
                ));
            }
        }
    }
    Ok(())
}
