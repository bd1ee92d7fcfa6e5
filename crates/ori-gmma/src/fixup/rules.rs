//! The ptxas behaviours phase 87 reproduces, one [`RuleId`] each.
//!
//! Every decision the pass makes (an injected arrive or wait, a moved
//! instruction, a serialization, an ori-only note) carries the rule that
//! made it: in the diagnostics (`"rule"` in JSON, a note in the human
//! form), in `--print-after FixupGmmaSequence`, and in the per-function
//! trace that `cargo xtask rules` counts over the corpora to write the rule
//! table of `tests/corpus/README.md`. Each rule's [`RuleInfo`] says what
//! ptxas 13.0.88 does, a corpus case recorded from ptxas that shows it, and
//! what the PTX ISA says; the precedence between rules that could claim
//! one instruction is stated once, in the ordered tables of `walk`.

use ori_ir::consts::*;

/// How a rule behaves under ISA-strict mode (`--isa-strict`).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Mode {
    /// ptxas 13.0.88's decisions, and notes where it leaves undefined behaviour.
    Ptxas,
    /// The same, plus the waits and arrives that make legal what ptxas leaves undefined.
    IsaStrict,
}

/// What one rule is, for people and for the generated table.
#[derive(Copy, Clone, Debug)]
pub struct RuleInfo {
    /// Stable name (`R-...`), as the corpus README and the diagnostics say it.
    pub name: &'static str,
    /// The message code the rule produces, if any (C7517 for a wait...).
    pub code: Option<u32>,
    /// What ptxas 13.0.88 does.
    pub ptxas: &'static str,
    /// A corpus case (file stem under `tests/`) recorded from ptxas that shows it.
    pub example: &'static str,
    /// What the PTX ISA says about the situation.
    pub isa: &'static str,
}

macro_rules! rules {
    ($( $(#[$doc:meta])* $id:ident => $name:literal, $code:expr, $ptxas:literal, $example:literal, $isa:expr; )*) => {
        /// One ptxas behaviour of phase 87 (see [`RuleInfo`] for each).
        #[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub enum RuleId {
            $( $(#[$doc])* $id, )*
        }

        impl RuleId {
            /// Every rule, in table order.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$id),*];

            /// What the rule is.
            pub fn info(self) -> RuleInfo {
                match self {
                    $(RuleId::$id => RuleInfo {
                        name: $name,
                        code: $code,
                        ptxas: $ptxas,
                        example: $example,
                        isa: $isa,
                    },)*
                }
            }
        }
    };
}

/// The ISA's sentence on accumulator and fragment accesses (PTX ISA,
/// `wgmma.mma_async`), which most rules apply.
const ISA_ASYNC_ACCESS: &str =
    "accessing the accumulator or A-fragment registers of a wgmma.mma_async \
     before a wgmma.wait_group that covers it is undefined";
/// The ISA's sentence on `wgmma.fence`.
const ISA_FENCE: &str = "wgmma.fence must order register accesses before a wgmma.mma_async that \
     uses them (except accumulator accesses across wgmma of the same shape)";

rules! {
    /// An arrive before a wgmma whose registers were written since the last arrive.
    ArriveAfterWrite => "R-arrive-after-write", Some(C7519_ARRIVE_INJECTED),
        "injects warpgroup.arrive before a wgmma when its accumulator or A-fragment registers, or any accumulator after a wgmma of the stage, were written since the last arrive; reads do not count",
        "corpus/c7519_def_other_set_between_mma",
        "wgmma.fence is required before a wgmma whose registers were modified";
    /// An arrive before the first wgmma of a ptxas block with no arrive in it.
    ArriveMissing => "R-arrive-missing", Some(C7519_ARRIVE_INJECTED),
        "injects an arrive before a wgmma with no arrive since the start of its block (ptxas forgets the arrive state at every block boundary it keeps, after if-conversion and full unrolling) or since a call",
        "corpus/c7519_no_fence",
        "wgmma.fence is required before the first wgmma.mma_async";
    /// The dummy wgmma of an empty group, and its arrive.
    EmptyGroup => "R-empty-group", Some(C7519_ARRIVE_INJECTED),
        "gives a commit with no wgmma before it in its block a dummy HGMMA.64x8x16.F16 and, unless an arrive follows the block's last plain instruction, an injected arrive at the commit; serialization keeps the dummy",
        "corpus/c7519_empty_commit",
        "an empty commit_group makes an empty wgmma-group";
    /// An arrive needed in divergent code.
    DivergentArrive => "R-divergent-arrive", Some(C7520_WGAR_DIVERGENT),
        "serializes when an arrive must be injected in divergent code, or around a fence in divergent code, of a kernel (.entry); in a .func it injects the arrive",
        "corpus/c7520_divergent_empty_commit",
        "wgmma.fence is a .aligned warpgroup instruction: every thread must execute it";
    /// A wait before an instruction that reads an accumulator in flight.
    WaitBeforeRead => "R-wait-before-read", Some(C7517_WAIT_INJECTED),
        "injects commit (when the stage is open) and warpgroup.wait 0 before a non-wgmma instruction reading or rewriting in place an accumulator in flight, hoisted to uniform code but naming the reader's line",
        "corpus/c7517_c7519_read_then_rmw_between_mma",
        ISA_ASYNC_ACCESS;
    /// The user's commit moved up to the wait its reads get.
    HoistCommit => "R-hoist-commit", Some(C7517_WAIT_INJECTED),
        "moves the user's commit_group that follows plain reads of the open stage up to the wait the reads get, instead of committing an empty group later",
        "corpus/c7517_read_acc_before_commit",
        "commit_group closes all prior uncommitted wgmma into one group";
    /// A wait before `ret` with accumulators in flight.
    WaitAtExit => "R-wait-at-exit", Some(C7517_WAIT_INJECTED),
        "waits before an exit reached with anything in flight (the dummy wgmma of an empty group included); a branch to a block holding only ret becomes a predicated exit, so the wait goes before the branch",
        "corpus/c7517_exit_branch_to_bare_ret",
        ISA_ASYNC_ACCESS;
    /// A wait at a call passing accumulators in flight to an inlined callee.
    WaitAtCall => "R-wait-at-call", Some(C7517_WAIT_INJECTED),
        "inlines a defined callee, whose body reads the arguments at the call's line: accumulators passed in flight get a wait at the call",
        "corpus/heldout_35_call_helper_with_acc_args_before_wait",
        ISA_ASYNC_ACCESS;
    /// A wgmma overwriting an accumulator whose copy is still live.
    WaitBeforeCopiedOverwrite => "R-wait-before-copied-overwrite", Some(C7517_WAIT_INJECTED),
        "propagates copies of in-flight accumulators; a wgmma overwriting a copied accumulator of a committed group waits first",
        "corpus/c7517_read_acc_after_commit_then_mma",
        ISA_ASYNC_ACCESS;
    /// A copy whose value lives out of its block sinks to the user's wait.
    UnpackSinksToWait => "R-unpack-sinks-to-wait", Some(C7517_WAIT_INJECTED),
        "sinks a copy (an f16x2 unpack) of an in-flight accumulator whose value lives out of its block to the block's wait_group 0 and waits there; C7517 names the line before the user's wait",
        "corpus/c7517_f16x2_loop_nounroll_repacked_halves",
        ISA_ASYNC_ACCESS;
    /// The wait at a join of arms that waited at different levels.
    JoinWaitLevels => "R-join-wait-levels", Some(C7517_WAIT_INJECTED),
        "waits at the end of a join of uniform arms that each end in a wait of a different level, naming its branch, when some path then touches the sets before waiting itself",
        "corpus/heldout4_30_loop_last_iter_wait0_else_wait1_uniform_diamond_then_read",
        ISA_ASYNC_ACCESS;
    /// A wait reached with the stage still open closes it.
    ImplicitCommit => "R-wait-closes-stage", None,
        "closes a stage left open at a user's wait_group (the last HGMMA carries gsb0); ori writes the commit out",
        "corpus/attempt_c7516_no_commit",
        "wait_group waits for committed groups only; uncommitted wgmma are not covered";
    /// A pure read of the open stage followed by a read-modify-write.
    ReadBeforeRmw => "R-read-before-rmw", Some(C7517_WAIT_INJECTED),
        "waits before a pure read of the open stage when a read-modify-write of the stage follows it before the next wgmma (the RMW needs the wait anyway), naming the read's line; without the RMW the read is C7514 (R-read-between-wgmma)",
        "corpus/c7517_c7519_add_read_then_rmw_between_mma",
        ISA_ASYNC_ACCESS;
    /// A copy of an in-flight accumulator is no read; its uses are.
    CopyPropagation => "R-copy-propagation", None,
        "propagates mov copies (and mov.b32 {lo, hi} unpacks) of in-flight accumulators before phase 87: the copy is no read, its uses are; ori moves the copy down to its first use",
        "corpus/heldout_14_e4m3_f16acc_read_before_commit",
        ISA_ASYNC_ACCESS;
    /// A pure read between two wgmma of a stage.
    ReadBetweenWgmma => "R-read-between-wgmma", Some(C7514_READS_ACCUMULATORS),
        "serializes a pure read of an open set with more wgmma of the stage to come: no wait can split the stage",
        "corpus/c7514_pure_read_acc_between_mma",
        ISA_ASYNC_ACCESS;
    /// A read of a group a partial wait left in flight, or in flight on some paths only.
    ReadUnsureGroup => "R-read-unsure-group", Some(C7514_READS_ACCUMULATORS),
        "does not strengthen a user's wait_group N>0, nor wait for a set in flight on some incoming paths only: a read there serializes",
        "corpus/c7514_read_acc_wait1_inflight",
        ISA_ASYNC_ACCESS;
    /// The same read when the wait it depends on was divergent.
    ReadAfterDivergentWait => "R-read-after-divergent-wait", Some(C7518_WGDP_DIVERGENT),
        "serializes with C7518 when the wait a read or an exit needs depends on a wait in divergent code",
        "corpus/c7518_divergent_wait_then_exit",
        "wgmma.wait_group is a .aligned warpgroup instruction";
    /// A wait in divergent code that cannot be hoisted to uniform code.
    DivergentHoist => "R-divergent-hoist", Some(C7518_WGDP_DIVERGENT),
        "serializes with C7518 when a read needing a wait stands in divergent code and the wait, hoisted to the nearest uniform dominator, would leave a run-time loop holding the read or come before the wgmma it waits for",
        "corpus/c7518_divergent_loop_read_only",
        "wgmma.wait_group is a .aligned warpgroup instruction";
    /// A run of stores under one divergent predicate.
    DivergentStoreRun => "R-divergent-store-run", Some(C7518_WGDP_DIVERGENT),
        "turns a run of stores under one divergent predicate into a branch around them, so the wait they need would be divergent",
        "corpus/heldout_26_divergent_predicated_store_inflight",
        "wgmma.wait_group is a .aligned warpgroup instruction";
    /// A user wait refuses later injected waits.
    RefuseAfterUserWait => "R-refuse-after-user-wait", Some(C7514_READS_ACCUMULATORS),
        "refuses to add a wait for a pure read after a wgmma.wait_group of the user's on some path from the entry, or earlier in the layout",
        "corpus/heldout3_19_loop_const4_pure_read_before_wait",
        ISA_ASYNC_ACCESS;
    /// A wgmma overwriting an accumulator copied in the open stage.
    CopiedOverwriteInStage => "R-copied-overwrite-in-stage", Some(C7514_READS_ACCUMULATORS),
        "serializes a wgmma of the open stage that overwrites an accumulator whose copy is still live",
        "corpus/c7514_mov_read_d0_between_mma",
        ISA_ASYNC_ACCESS;
    /// Accumulators passed to an inlined callee after a partial wait.
    CallAfterPartialWait => "R-call-after-partial-wait", Some(C7514_READS_ACCUMULATORS),
        "does not strengthen a partial wait for an inlined callee's reads of accumulators passed to it",
        "corpus/heldout3_24_helper_with_inflight_acc_args_after_wait1",
        ISA_ASYNC_ACCESS;
    /// A write killing an accumulator a later wgmma of the block chains on.
    KillBeforeChain => "R-kill-before-chain", Some(C7511_PIPELINE_REGISTERS),
        "runs out of pipeline registers (C7511) when a write kills an accumulator written by one wgmma and a later wgmma of the block accumulates into it, even across commits and waits",
        "corpus/c7511_def_acc_between_mma",
        ISA_ASYNC_ACCESS;
    /// A write killing an accumulator two wgmma of the open stage chained into.
    KillAfterChain => "R-kill-after-chain", Some(C7515_DEFINES_ACCUMULATORS),
        "serializes a write that kills an open accumulator after two or more wgmma of the stage chained into it; after one, the write moves past the wait",
        "corpus/c7515_kill_after_chained_mma",
        ISA_ASYNC_ACCESS;
    /// The same accumulator rewritten in place twice in one chain.
    RmwTwice => "R-rmw-twice", Some(C7515_DEFINES_ACCUMULATORS),
        "serializes when the same accumulator is rewritten in place a second time in one chain, after a wgmma took the first rewrite",
        "corpus/heldout5_33_const3_loop_mma_then_in_place_mul_of_acc_commit_after_loop",
        ISA_ASYNC_ACCESS;
    /// Accumulator sets overlapping without starting at the same register.
    OverlappingSets => "R-overlapping-sets", Some(C7511_PIPELINE_REGISTERS),
        "cannot allocate in place a set overlapping an in-flight set without starting at its lowest register",
        "corpus/heldout5_22_partially_overlapping_n16_and_n32_sets_one_stage",
        "accumulator registers of wgmma in flight may not be reused";
    /// An A fragment written by a wgmma since the last arrive.
    FragmentFromWgmma => "R-fragment-from-wgmma", Some(C7513_DEFINES_INPUTS),
        "serializes a wgmma whose A fragment (or sparse metadata) a wgmma wrote since the last arrive: no injected arrive can order it",
        "corpus/heldout5_28_f16acc_set_used_as_rega_of_next_wgmma_same_stage_no_wait",
        ISA_FENCE;
    /// An A fragment rewritten in a run-time loop while its wgmma may be in flight.
    LoopCarriedFragment => "R-loop-carried-fragment", Some(C7513_DEFINES_INPUTS),
        "serializes an A fragment rewritten, in a run-time loop, after the wgmma of its own block that reads it while that may be in flight",
        "corpus/heldout2_13_fa3_softmax_overlaps_o_gemm_wait1_rewrites_p_in_flight",
        ISA_ASYNC_ACCESS;
    /// Too many accumulator registers in flight.
    InFlightBudget => "R-in-flight-budget", Some(C7511_PIPELINE_REGISTERS),
        "serializes when more than 240 accumulator registers (limit - 15 under .maxnreg/-maxrregcount) are in flight; this C7511 replaces a C7514 found earlier",
        "corpus/c7511_fresh_set_per_wgmma_read_between_scale_d1",
        "registers are a per-thread resource";
    /// Calls ptxas cannot inline.
    ExternCall => "R-extern-call", Some(C7509_EXTERN_CALLS),
        "serializes a function calling an external (or, under -c, any) function outside an open stage",
        "corpus/c7509_extern_call_after_wait",
        "wgmma pipelines may not cross calls the compiler cannot see";
    /// An extern call inside an open stage.
    ExternCallInStage => "R-extern-call-in-stage", Some(C7520_WGAR_DIVERGENT),
        "serializes with C7520 (not C7509) a function calling an external function between two wgmma of an open stage",
        "corpus/c7520_extern_call_in_pipeline",
        "wgmma pipelines may not cross calls the compiler cannot see";
    /// A callee with a pipeline of its own.
    CallCrossesPipeline => "R-call-crosses-pipeline", Some(C7510_CROSSES_CALL),
        "serializes a caller whose inlined callee holds a wgmma, commit or wait; the callee's commits close the caller's stage",
        "corpus/c7510_func_with_pipeline",
        "wgmma pipelines may not cross function boundaries";
    /// A wait injected into a loop ptxas unrolls with a remainder.
    UnrolledLoopWait => "R-unrolled-loop-wait", Some(C7514_READS_ACCUMULATORS),
        "refuses, in a late check, a wait injected into a small loop with a run-time trip count, which it unrolls with a remainder, when the loop holds a wgmma.wait_group of its own (the next copy of the body then waits after it)",
        "corpus/c7514_loop_read_acc_in_loop",
        ISA_ASYNC_ACCESS;
    /// Live accumulator and fragment registers over the function's limit.
    FunctionPressure => "R-function-pressure", Some(C7512_FUNCTION_REGISTERS),
        "serializes when accumulator and A-fragment registers live at once plus the 26 a wgmma needs exceed .maxnreg/-maxrregcount (raised by setmaxnreg.inc)",
        "corpus/c7512_two_sets_live_under_maxrreg140",
        "registers are a per-thread resource";
    /// A fresh value joining a group in flight.
    ZeroTripJoin => "R-zero-trip-join", Some(C7515_DEFINES_ACCUMULATORS),
        "serializes where a path that never issued a set brings a plain write of its registers to a join with the group in flight on another path",
        "triton2/accread_partial_fp16_64x128x64_s3_w4",
        ISA_ASYNC_ACCESS;
    /// A write to a register of a wgmma still in flight, left alone by ptxas.
    UndefinedWrite => "R-undefined-write", None,
        "leaves a write to a register of a wgmma that may still be in flight (and, after a partial wait, a read of a set a retired group also wrote) as it is; ori notes it, and waits first in ISA-strict mode",
        "corpus/heldout_04_interleaved_sets_wait1_store_inflight",
        ISA_ASYNC_ACCESS;
    /// A fence the ISA wants and ptxas does not give.
    UndefinedArrive => "R-undefined-arrive", None,
        "gives no arrive before a wgmma whose registers were only read, or used by a wgmma of another shape, since the last arrive; ori notes it, and arrives in ISA-strict mode",
        "corpus/c7517_read_after_commit_no_arrive",
        ISA_FENCE;
}

impl RuleId {
    /// The rule's stable name (`R-...`).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Whether the rule's decisions apply in `mode` (the ori-only notes
    /// become waits and arrives only in ISA-strict mode; every ptxas rule
    /// applies in both).
    pub fn injects_in(self, mode: Mode) -> bool {
        match self {
            RuleId::UndefinedWrite | RuleId::UndefinedArrive => mode == Mode::IsaStrict,
            _ => true,
        }
    }
}

/// The solver's rule, which is not a decision of its own but decides when
/// the others are asked.
pub const FIRST_VISIT: RuleInfo = RuleInfo {
    name: "R-first-visit",
    code: None,
    ptxas: "decides on its first pass over each block, with the state its forward edges bring (back edges not yet known), and again on the converged state; a decision is never taken back",
    example: "corpus/heldout_30_loop_runtime_read_inflight_after_wait1",
    isa: "-",
};

/// The loop analysis's rule: which loops ptxas keeps whole.
pub const NOUNROLL: RuleInfo = RuleInfo {
    name: "R-nounroll",
    code: None,
    ptxas: "keeps whole a loop whose header holds .pragma \"nounroll\", so a wait injected there stands (no R-unrolled-loop-wait) and what the user's waits taught the walk does not go round it",
    example: "corpus/c7517_f16x2_loop_nounroll_repacked_halves",
    isa: "the nounroll pragma disables loop unrolling of the loop whose header block holds it",
};

/// The uniformity analysis's rule: where a register is divergent.
pub const UNIFORM_AT_USE: RuleInfo = RuleInfo {
    name: "R-uniform-at-use",
    code: None,
    ptxas: "judges a branch or guard predicate by the definitions that reach it, not by its name: a predicate register redefined from %tid later in the kernel leaves an earlier branch on its uniform value uniform, so the arrives and waits there are injected, not serialized",
    example: "corpus/c7519_pred_redefined_divergent_later_wgmma",
    isa: "a register holds one value per thread; it is divergent where the threads' values may differ",
};

/// The walk's rule for inlined calls.
pub const CALL_ENDS_BLOCK: RuleInfo = RuleInfo {
    name: "R-call-ends-block",
    code: None,
    ptxas: "ends its block at an inlined call, so a commit right after the call closes an empty group (dummy HGMMA, and the arrive R-empty-group gives it)",
    example: "corpus/c7519_commit_after_inlined_call",
    isa: "-",
};

/// The reporting rule for device functions compiled inlined.
pub const INLINED_CALLEE: RuleInfo = RuleInfo {
    name: "R-inlined-callee",
    code: None,
    ptxas: "compiles a device function inlined into each kernel (without -c), in the kernel's context: a walk failure inside it is the unit's one serialization message, named after the kernel when the kernel issues a wgmma or a commit after the call; its late-check failures are not printed",
    example: "corpus/c7520_inlined_callee_divergent_empty_commit",
    isa: "-",
};

/// The walk's rule for waits hoisted out of divergent code.
pub const HOISTED_WAIT_RETIRES: RuleInfo = RuleInfo {
    name: "R-hoisted-wait-retires",
    code: None,
    ptxas: "retires, with a wait hoisted out of divergent code to the end of a uniform block, the groups on every path out of that block: no second wait after the join",
    example: "corpus/c7517_divergent_read_after_loop_one_wait",
    isa: "wgmma.wait_group waits for the groups of the executing warpgroup, whatever path follows",
};

/// When an arrive survives a block boundary.
pub const ARRIVE_KEPT: RuleInfo = RuleInfo {
    name: "R-arrive-kept",
    code: None,
    ptxas: "keeps an arrive across a block boundary when no wgmma was issued since and the block is control-equivalent to the arrive's (dominated by it and post-dominating it) outside any run-time loop, so a fence before a spin loop serves the wgmma after it; a loop header forgets it for its own instructions, and an empty group's dummy wgmma always asks for an arrive of its own block",
    example: "corpus/clean_fence_then_loop_then_wgmma",
    isa: "wgmma.fence orders the register accesses before it against every later wgmma.mma_async of the warpgroup",
};

/// The precedence between the walk's failures and the late checks'.
pub const WALK_FAILURE_FIRST: RuleInfo = RuleInfo {
    name: "R-walk-failure-first",
    code: None,
    ptxas: "reports a divergence or extern-call failure found anywhere in its walk rather than a late-check failure (C7510, C7511, C7513-C7515) the walk met first: those checks run after the walk",
    example: "corpus/c7520_after_join_read_of_unsure_group",
    isa: "-",
};

/// The rules that decide no injection themselves but when and where the
/// others are asked: the solver's, the loop analysis's, the uniformity
/// analysis's, and those of inlined calls, hoisted waits and failure
/// precedence.
pub const ANALYSIS_RULES: [RuleInfo; 8] = [
    FIRST_VISIT,
    NOUNROLL,
    UNIFORM_AT_USE,
    CALL_ENDS_BLOCK,
    INLINED_CALLEE,
    HOISTED_WAIT_RETIRES,
    WALK_FAILURE_FIRST,
    ARRIVE_KEPT,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut names: Vec<&str> = RuleId::ALL.iter().map(|r| r.name()).collect();
        names.extend(ANALYSIS_RULES.iter().map(|r| r.name));
        for n in &names {
            assert!(n.starts_with("R-") && !n.contains(' '), "{n}");
        }
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "duplicate rule names");
    }

    #[test]
    fn every_example_is_a_recorded_case() {
        let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
        for info in RuleId::ALL.iter().map(|r| r.info()).chain(ANALYSIS_RULES) {
            let ptx = tests.join(format!("{}.ptx", info.example));
            assert!(ptx.is_file(), "{}: no case {}", info.name, ptx.display());
        }
    }
}
