//! The sanitizer's mbarrier checks on small kernels: a parity wait two
//! phases behind (a producer lapped its consumer), and arrivals past what
//! a phase expects.

use ori_host::{run, Fault, GlobalMemory, HazardKind, Launch};

fn lower(body: &str) -> ori_ir::Module {
    let src = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.extern .shared .align 16 .b8 smem[];\n.visible .entry k()\n{{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n{body}\n}}\n"
    );
    let (ast, diags) = ori_ptx::parse_with_diags("s.ptx", &src);
    assert!(diags.is_empty(), "{diags:?}");
    let (m, diags) = ori_ptx::lower::lower_module_owned("s.ptx", ast);
    assert!(diags.is_empty(), "{diags:?}");
    m
}

fn launch() -> Launch {
    Launch {
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
