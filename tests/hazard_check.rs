//! The independent hazard checker (`ori-hazard`) over the IR after phase 87,
//! on every corpus case and Triton kernel that compiles.
//!
//! The checker is written from the PTX ISA rules, not from the pass, so this
//! is a second opinion on phase 87's output: after it, no non-wgmma
//! instruction may touch an in-flight accumulator or A-fragment register and
//! every wgmma must follow a fence. Cases that ptxas or ori reject (the
//! `err_*` cases, a recorded non-zero exit) have no IR to check and are
//! skipped. Informational kinds (what ptxas is known to accept) do not fail.
//! In ISA-strict mode nothing may remain; in the default ptxas mode what
//! ptxas 13.0.88 leaves undefined remains, and each must carry an ori note.

mod common;

use std::path::Path;

/// Whether ptxas recorded an error for this case.
fn ptxas_failed(path: &Path) -> bool {
    std::fs::read_to_string(path.with_extension("expected"))
        .ok()
        .and_then(|t| ori_oracle::Expectation::parse(&t).ok())
        .is_some_and(|e| e.exit_code != 0)
}

/// Compile every corpus case and Triton kernel that compiles, run the
/// checker after phase 87, and hand each failing hazard to `judge` (with the
/// compilation's ori-only notes); returns (cases checked, Triton kernels
/// with wgmma, wgmma checked, failures reported by `judge`).
fn check_all(
    isa_strict: bool,
    mut judge: impl FnMut(&str, &[ori::ir::Diagnostic], u32) -> bool,
) -> (usize, usize, usize, Vec<String>) {
    let cases: Vec<_> = common::corpus_cases()
        .into_iter()
        .chain(common::triton_kernels())
        .collect();
    let (mut checked, mut triton, mut wgmmas) = (0, 0, 0);
    let mut bad = Vec::new();
    for path in &cases {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(path).unwrap();
        let mut opts = ori::case_options(&src);
        opts.isa_strict = isa_strict;
        let c = ori::compile_ptx(&name, &src, &opts);
        if c.failed() || ptxas_failed(path) {
            continue;
        }
        checked += 1;
        let m = c.module.as_ref().expect("compiled");
        let n = m
            .funcs
            .values()
            .flat_map(|f| f.insts.values())
            .filter(|d| d.opcode == ori::ir::Opcode::WgmmaMmaAsync)
            .count();
        wgmmas += n;
        if path.parent().is_some_and(|d| d.ends_with("triton")) && n > 0 {
            triton += 1;
        }
        for (id, h) in ori_hazard::check_module(m) {
            if !h.kind.is_failing() {
                continue;
            }
            let f = &m.funcs[id];
            if !judge(&name, &c.diags, h.line) {
                bad.push(format!("{name}: {}: {}", f.name, h.describe(f)));
            }
        }
    }
    (checked, triton, wgmmas, bad)
}

/// ISA-strict mode: no hazard at all, on every case that compiles.
#[test]
fn isa_strict_phase_87_leaves_no_hazard() {
    let (checked, triton, wgmmas, bad) = check_all(true, |_, _, _| false);
    println!(
        "ISA-strict: {checked} cases, {wgmmas} wgmma, {} hazards",
        bad.len()
    );
    assert!(checked >= 150, "only {checked} cases compiled");
    assert!(
        triton >= 17,
        "only {triton} Triton kernels with wgmma compiled"
    );
    assert!(
        bad.is_empty(),
        "hazards after phase 87:\n{}",
        bad.join("\n")
    );
}

/// ptxas mode (the default) keeps ptxas 13.0.88's decisions, which leave
/// some accesses the PTX ISA calls undefined (writes to registers of a wgmma
/// in flight, wgmma with no fence after a plain read of their registers).
/// None of them may pass silently: each hazard the checker finds must be
/// announced by an ori note naming its line.
#[test]
fn ptxas_mode_announces_every_hazard_it_leaves() {
    let mut announced = 0;
    let (checked, _, _, bad) = check_all(false, |_, diags, line| {
        let hit = diags.iter().any(|d| {
            d.severity == ori::ir::Severity::Note
                && d.culprit.as_ref().is_some_and(|c| c.line == line)
        });
        announced += usize::from(hit);
        hit
    });
    println!("ptxas mode: {checked} cases, {announced} hazards announced by ori notes");
    let (known, bad): (Vec<_>, Vec<_>) = bad
        .into_iter()
        .partition(|b| SILENT_KNOWN.iter().any(|k| b.starts_with(k)));
    assert!(bad.is_empty(), "hazards left silently:\n{}", bad.join("\n"));
    // The ratchet: a listed case that no longer leaves its hazard comes off.
    for k in SILENT_KNOWN {
        assert!(
            known.iter().any(|b| b.starts_with(k)),
            "{k} no longer leaves a hazard silently: take it off SILENT_KNOWN"
        );
    }
}

/// Cases where ori leaves a hazard unannounced because it misses what
/// ptxas does there, each listed in `tests/corpus/known_differences.txt`
/// (none left: the list can only shrink).
const SILENT_KNOWN: [&str; 0] = [];

/// Cases where ptxas waits before reading a register no wgmma has in
/// flight (a later wgmma's accumulator, set before the one in flight:
/// R-unwaited-sets-in-flight), or for a read its own scheduling moved
/// before the wait: a wait of its own, with no hazard in the input for the
/// checker to find.
const CAUTIOUS_WAITS: [&str; 20] = [
    "c7517_read_future_acc_loaded_before_wgmma.ptx",
    "c7517_c7519_copy_future_acc_between_wgmma.ptx",
    "c7517_c7519_copy_future_acc_other_constant.ptx",
    "c7517_c7519_copy_other_future_acc_into_wgmma.ptx",
    "c7517_copy_future_acc_sunk_to_fence.ptx",
    "c7517_copy_future_acc_sunk_to_wait.ptx",
    "c7517_read_future_acc_after_branch.ptx",
    "c7517_read_future_acc_after_commit.ptx",
    "c7517_read_future_acc_after_second_wgmma_of_stage.ptx",
    "c7517_read_future_acc_after_spin_loop.ptx",
    "c7517_read_future_acc_other_register_rewritten.ptx",
    "c7517_read_future_acc_then_rewrite_before_commit.ptx",
    "c7517_read_undefined_future_acc.ptx",
    // ptxas fuses two f32 -> 16-bit conversions of accumulators read after
    // the wait into one and schedules it before the wait, then waits for
    // it: the input reads nothing in flight.
    "c7517_zero_acc_selp_cvt_pair_packed.ptx",
    "c7517_loaded_acc_scale_d0_selp_cvt_pair_packed.ptx",
    "c7517_two_zero_acc_wgmma_cvt_pair.ptx",
    "c7517_zero_acc_commit_then_insns_cvt_pair.ptx",
    "c7517_zero_acc_insns_before_commit_cvt_pair.ptx",
    "c7517_zero_acc_mov_before_spin_loop_cvt_pair.ptx",
    "c7517_zero_acc_spin_loop_cvt_pair.ptx",
];

/// The checker is not vacuous: on the input of every case where ptxas
/// injected a wait (C7517), before phase 87 runs, it sees an accumulator
/// touched while in flight (but in [`CAUTIOUS_WAITS`]).
#[test]
fn inputs_that_ptxas_fixes_with_a_wait_have_hazards() {
    let mut seen = 0;
    let mut missed = Vec::new();
    for path in common::corpus_cases() {
        let Ok(exp) = std::fs::read_to_string(path.with_extension("expected")) else {
            continue;
        };
        if !exp.contains("(C7517)") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if CAUTIOUS_WAITS.contains(&name.as_str()) {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        // Waits ptxas puts before an exit (a `ret`, or a branch to one) guard no
        // access: nothing to find there.
        let at_exit = |line: usize| {
            src.lines()
                .nth(line - 1)
                .is_some_and(|l| l.contains("ret;") || l.contains(" bra "))
        };
        let wait_lines: Vec<usize> = exp
            .lines()
            .filter(|l| l.contains("(C7517)"))
            .filter_map(|l| {
                l.split("around line ")
                    .nth(1)?
                    .split(' ')
                    .next()?
                    .parse()
                    .ok()
            })
            .collect();
        if wait_lines.iter().all(|l| at_exit(*l)) {
            continue;
        }
        let m = ori::ptx_to_ir(&name, &src).unwrap_or_else(|d| panic!("{name}: {d:?}"));
        seen += 1;
        let found = ori_hazard::check_module(&m)
            .iter()
            .any(|(_, h)| h.kind == ori_hazard::HazardKind::AccumulatorAccessInFlight);
        if !found {
            missed.push(name);
        }
    }
    assert!(seen >= 15, "only {seen} C7517 cases");
    assert!(missed.is_empty(), "no in-flight access found in {missed:?}");
}
