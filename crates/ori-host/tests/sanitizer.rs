//! The sanitizer's mbarrier checks on small kernels: a parity wait two
//! phases behind (a producer lapped its consumer), and arrivals past what
//! a phase expects; and a missing barrier between warpgroups, reported by
//! the race detector in any order and shown in the output by some seeded
//! random schedule, which replays.

use ori_host::{run, Fault, GlobalMemory, HazardKind, Launch};

fn lower(body: &str) -> ori_ir::Module {
    let src = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.extern .shared .align 16 .b8 smem[];\n.visible .entry k(.param .u64 out)\n{{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n{body}\n}}\n"
    );
    let (ast, diags) = ori_ptx::parse_with_diags("s.ptx", &src);
    assert!(diags.is_empty(), "{diags:?}");
    let (m, diags) = ori_ptx::lower::lower_module_owned("s.ptx", ast);
    assert!(diags.is_empty(), "{diags:?}");
    m
}

fn launch() -> Launch {
    Launch {
        params: vec![0],
        dynamic_shared: 1024,
        ..Launch::default()
    }
}

#[test]
fn a_parity_wait_two_phases_behind_is_reported() {
    // One thread completes two phases of a count-1 mbarrier, then every
    // thread waits for parity 0: phases 0 and 1 both completed, and parity
    // cannot say which the wait meant.
    let m = lower(
        "\tmov.u32 %r1, %tid.x;\n\tmov.b32 %r2, smem;\n\tsetp.eq.u32 %p1, %r1, 0;\n\
         \t@%p1 mbarrier.init.shared::cta.b64 [%r2], 1;\n\
         \t@%p1 mbarrier.arrive.shared::cta.b64 %rd1, [%r2];\n\
         \t@%p1 mbarrier.arrive.shared::cta.b64 %rd2, [%r2];\n\
         \tbar.sync 0;\n\
         \tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n\tret;",
    );
    // Reported once (every thread of the warpgroup waits there), and the
    // run goes on, here into a deadlock (the wait is for the phase in
    // progress, which nothing completes): the error keeps the report.
    let e = run(&m, "k", &launch(), &GlobalMemory::new()).unwrap_err();
    assert!(matches!(e.fault, Fault::Deadlock(_)), "{e}");
    let [h] = &e.hazards[..] else {
        panic!("{:?}", e.hazards)
    };
    assert_eq!((h.kind, h.line), (HazardKind::ParityAliased, 17), "{h}");
    assert!(
        h.message
            .contains("completed 2 phases since this warpgroup last saw it"),
        "{h}"
    );
    // Asked to stop at the first hazard, the run stops there.
    let stop = Launch {
        stop_on_hazard: true,
        ..launch()
    };
    let e = run(&m, "k", &stop, &GlobalMemory::new()).unwrap_err();
    assert_eq!(e.line, 17, "{e}");
    assert!(matches!(e.fault, Fault::Hazard(_)), "{e}");
    // Waiting after each phase is fine.
    let m = lower(
        "\tmov.u32 %r1, %tid.x;\n\tmov.b32 %r2, smem;\n\tsetp.eq.u32 %p1, %r1, 0;\n\
         \t@%p1 mbarrier.init.shared::cta.b64 [%r2], 1;\n\
         \t@%p1 mbarrier.arrive.shared::cta.b64 %rd1, [%r2];\n\
         \tbar.sync 0;\n\
         \tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n\
         \t@%p1 mbarrier.arrive.shared::cta.b64 %rd2, [%r2];\n\
         \tbar.sync 0;\n\
         \tmbarrier.try_wait.parity.shared::cta.b64 %p3, [%r2], 1;\n\tret;",
    );
    let stats = run(&m, "k", &launch(), &GlobalMemory::new()).unwrap();
    assert!(stats.hazards.is_empty(), "{:?}", stats.hazards);
}

#[test]
fn arrivals_past_a_phase_and_an_uninitialized_mbarrier_are_errors() {
    let m = lower("\tmov.b32 %r2, smem;\n\tmbarrier.init.shared::cta.b64 [%r2], 1;\n\tret;");
    run(&m, "k", &launch(), &GlobalMemory::new()).unwrap();
    // Three arrivals at once on a barrier whose phase expects two.
    let m = lower(
        "\tmov.u32 %r1, %tid.x;\n\tmov.b32 %r2, smem;\n\tsetp.eq.u32 %p1, %r1, 0;\n\
         \t@%p1 mbarrier.init.shared::cta.b64 [%r2], 2;\n\tbar.sync 0;\n\
         \t@%p1 mbarrier.arrive.shared::cta.b64 %rd1, [%r2], 3;\n\tret;",
    );
    let e = run(&m, "k", &launch(), &GlobalMemory::new()).unwrap_err();
    assert!(e.message.contains("arrival(s) where its phase"), "{e}");
    let m = lower("\tmov.b32 %r2, smem;\n\tmbarrier.arrive.shared::cta.b64 %rd1, [%r2];\n\tret;");
    let e = run(&m, "k", &launch(), &GlobalMemory::new()).unwrap_err();
    assert!(e.message.contains("no mbarrier was initialized"), "{e}");
}

/// Warpgroup 1 reads what warpgroup 0 writes, with or without a barrier
/// between: the output of each thread of warpgroup 1, for a schedule.
fn two_warpgroups(barrier: bool, schedule: ori_host::Schedule) -> (Vec<u8>, usize) {
    let sync = if barrier { "\tbar.sync 0;\n" } else { "" };
    let m = lower(&format!(
        "\tmov.u32 %r1, %tid.x;\n\tmov.b32 %r2, smem;\n\tshl.b32 %r3, %r1, 2;\n\
         \tsetp.lt.u32 %p1, %r1, 128;\n\
         \tand.b32 %r4, %r3, 511;\n\tadd.u32 %r5, %r2, %r4;\n\
         \tadd.u32 %r6, %r1, 1;\n\t@%p1 st.shared.u32 [%r5], %r6;\n{sync}\
         \tld.shared.u32 %r7, [%r5];\n\
         \tld.param.u64 %rd1, [out];\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
         \tst.global.u32 [%rd3], %r7;\n\tret;"
    ));
    let mut g = GlobalMemory::new();
    let out = g.alloc(vec![0; 4 * 256]);
    let launch = Launch {
        params: vec![out],
        block: [256, 1, 1],
        schedule,
        ..launch()
    };
    let stats = run(&m, "k", &launch, &g).unwrap();
    (g.buffer(out).unwrap(), stats.hazards.len())
}

#[test]
fn a_random_schedule_shows_a_missing_barrier_and_replays_by_seed() {
    use ori_host::Schedule::{Deterministic, Random};
    // With the barrier: the same output in every order, and no report.
    let (want, n) = two_warpgroups(true, Deterministic);
    assert_eq!(n, 0);
    for seed in 0..8 {
        assert_eq!(two_warpgroups(true, Random { seed }), (want.clone(), 0));
    }
    // Without: the race is reported whatever the order, and some seed
    // runs warpgroup 1's read before warpgroup 0's write.
    let (first, n) = two_warpgroups(false, Deterministic);
    assert_eq!((first.clone(), n), (want.clone(), 1));
    let differs = (0..64).find(|&seed| two_warpgroups(false, Random { seed }).0 != want);
    let seed = differs.expect("a seed whose order shows the missing barrier");
    // The same seed replays the same run.
    assert_eq!(
        two_warpgroups(false, Random { seed }),
        two_warpgroups(false, Random { seed })
    );
}
