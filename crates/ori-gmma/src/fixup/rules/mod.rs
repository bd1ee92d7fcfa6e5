//! The ptxas behaviours phase 87 reproduces, one item each.
//!
//! Every decision the pass makes (an injected arrive or wait, a moved
//! instruction, a serialization, an ori-only note) carries the rule that
//! made it: in the diagnostics (`"rule"` in JSON, a note in the human
//! form), in `--print-after FixupGmmaSequence`, and in the per-function
//! trace that `cargo xtask docs` counts over the corpora to write
//! `docs/rules.md`.
//!
//! A rule is a type of its family's module (`arrive`, `read`, `kill`,
//! `wait`, `divergence`, `call`, `budget`), as a rustc lint is an item with
//! its pass: its [`RuleInfo`] (what ptxas 13.0.88 does, a corpus case
//! recorded from ptxas that shows it, what the PTX ISA says), and beside it,
//! in the same file, the predicate that finds where it applies and the
//! action it takes there. [`RuleId`] names the rules in the table's order;
//! its variants are made from the rule types, so a rule without a type or a
//! type without an id does not compile. Where several rules could claim one
//! instruction, [`PRECEDENCE`] states once, for each point of the walk,
//! which is asked first; a rule placed at no point is a compile error.

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

/// A rule of phase 87: a type with its id and its metadata; its predicate
/// and action are its family's, in the same module.
pub trait Rule {
    /// The rule's id (the variant of [`RuleId`] named after the type).
    const ID: RuleId;
    /// What the rule is.
    const INFO: RuleInfo;
    /// Whether its decisions are ori's ISA-strict additions only (ptxas
    /// leaves the access as it is; ori notes it).
    const ISA_STRICT_ONLY: bool;
    /// What the instruction the rule's injection goes before has to do with
    /// it, where the rule says more than its family's default (the note at
    /// the culprit of its advisory).
    const CULPRIT: Option<&'static str>;
}

/// Defines rule types, each with its [`RuleInfo`]; `(isa_strict_only)`
/// after the name marks a rule whose decisions apply in ISA-strict mode
/// only, `culprit: "..."` after its ISA sentence gives [`Rule::CULPRIT`].
macro_rules! rules {
    ($( $(#[$doc:meta])* $id:ident $(($strict:ident))? => $name:literal, $code:expr,
        $ptxas:literal, $example:literal, $isa:expr $(, culprit: $culprit:literal)?; )*) => {
        $(
            $(#[$doc])*
            #[derive(Copy, Clone, Debug)]
            pub struct $id;

            impl $crate::fixup::rules::Rule for $id {
                const ID: $crate::fixup::rules::RuleId = $crate::fixup::rules::RuleId::$id;
                const INFO: $crate::fixup::rules::RuleInfo = $crate::fixup::rules::RuleInfo {
                    name: $name,
                    code: $code,
                    ptxas: $ptxas,
                    example: $example,
                    isa: $isa,
                };
                const ISA_STRICT_ONLY: bool = rules!(@strict $($strict)?);
                const CULPRIT: Option<&'static str> = rules!(@culprit $($culprit)?);
            }
        )*
    };
    (@strict) => { false };
    (@strict isa_strict_only) => { true };
    (@culprit) => { None };
    (@culprit $c:literal) => { Some($c) };
}

// The families, after the macro they define their rules with.
mod arrive;
mod budget;
mod call;
mod chained;
mod divergence;
mod kill;
pub(super) mod read;
mod wait;

/// Makes [`RuleId`] of the rule types, in the table's order.
macro_rules! rule_ids {
    ($( $fam:ident :: $id:ident ),* $(,)?) => {
        /// One ptxas behaviour of phase 87: the id of a rule type (see
        /// [`RuleId::info`] for each).
        #[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub enum RuleId {
            $(
                #[doc = concat!("The rule `", stringify!($fam), "::", stringify!($id),
                                "` (see [`RuleId::info`]).")]
                $id,
            )*
        }

        impl RuleId {
            /// Every rule, in table order.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$id),*];

            /// What the rule is.
            pub fn info(self) -> RuleInfo {
                match self {
                    $(RuleId::$id => <$fam::$id as Rule>::INFO,)*
                }
            }

            /// What the instruction the rule's injection goes before has to
            /// do with it ([`Rule::CULPRIT`]), where the rule says.
            pub fn culprit(self) -> Option<&'static str> {
                match self {
                    $(RuleId::$id => <$fam::$id as Rule>::CULPRIT,)*
                }
            }

            /// Whether the rule's decisions are ISA-strict additions only.
            fn isa_strict_only(self) -> bool {
                match self {
                    $(RuleId::$id => <$fam::$id as Rule>::ISA_STRICT_ONLY,)*
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

rule_ids! {
    arrive::ArriveAfterWrite,
    arrive::ArriveMissing,
    arrive::EmptyGroup,
    divergence::DivergentArrive,
    wait::WaitBeforeRead,
    wait::HoistCommit,
    wait::WaitAtExit,
    call::WaitAtCall,
    wait::WaitBeforeCopiedOverwrite,
    wait::WaitBeforeCopyIntoWgmma,
    wait::UnpackSinksToWait,
    wait::JoinWaitLevels,
    wait::ImplicitCommit,
    read::ReadBeforeRmw,
    chained::ReadChainedCommitted,
    read::CopyPropagation,
    read::ReadBetweenWgmma,
    read::ReadUnsureGroup,
    divergence::ReadAfterDivergentWait,
    divergence::DivergentHoist,
    divergence::DivergentStoreRun,
    read::RefuseAfterUserWait,
    read::CopiedOverwriteInStage,
    call::CallAfterPartialWait,
    kill::KillBeforeChain,
    kill::KillAfterChain,
    kill::RmwTwice,
    kill::OverlappingSets,
    kill::FragmentFromWgmma,
    kill::LoopCarriedFragment,
    budget::InFlightBudget,
    call::ExternCall,
    call::IndirectCall,
    call::AddressTakenCallee,
    call::ExternCallInStage,
    call::ArriveAfterExternCall,
    call::CallCrossesPipeline,
    wait::UnrolledLoopWait,
    budget::FunctionPressure,
    kill::ZeroTripJoin,
    read::UndefinedWrite,
    arrive::UndefinedArrive,
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
        !self.isa_strict_only() || mode == Mode::IsaStrict
    }
}

/// A point of the walk where rules are asked.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Point {
    /// A `wgmma.mma_async`.
    Wgmma,
    /// A user's `commit_group` or `wait_group`.
    Sync,
    /// A `ret`.
    Exit,
    /// A `call`.
    Call,
    /// Any other instruction touching a watched register, before and after
    /// the read rules.
    Plain,
    /// A plain instruction reading an accumulator in flight: the first rule
    /// of the read family's `READ_ORDER` that applies decides (the walk asks them
    /// through that very list).
    Read,
    /// The end of a block (its branch).
    BlockEnd,
    /// The checks after the walk (`late`).
    Late,
}

/// Precedence, stated once: at each point of the walk, the rules in the
/// order they are asked (an earlier one that fails or injects there
/// decides). A rule may be asked at several points; every rule is asked at
/// one at least, which the compiler checks ([`placed`]).
pub const PRECEDENCE: &[(Point, &[RuleId])] = &[
    (
        Point::Wgmma,
        &[
            RuleId::OverlappingSets,
            RuleId::FragmentFromWgmma,
            RuleId::CopiedOverwriteInStage,
            RuleId::WaitBeforeCopiedOverwrite,
            RuleId::WaitBeforeCopyIntoWgmma,
            RuleId::UndefinedArrive,
            RuleId::DivergentArrive,
            RuleId::ArriveMissing,
            RuleId::ArriveAfterWrite,
            RuleId::InFlightBudget,
        ],
    ),
    (
        Point::Sync,
        &[
            RuleId::DivergentArrive,
            RuleId::ArriveAfterExternCall,
            RuleId::EmptyGroup,
            RuleId::ImplicitCommit,
        ],
    ),
    (
        Point::Exit,
        &[RuleId::ReadAfterDivergentWait, RuleId::WaitAtExit],
    ),
    (
        Point::Call,
        &[
            RuleId::CallAfterPartialWait,
            RuleId::WaitAtCall,
            RuleId::CallCrossesPipeline,
            RuleId::ExternCallInStage,
            RuleId::IndirectCall,
            RuleId::ExternCall,
        ],
    ),
    (
        Point::Plain,
        &[
            RuleId::CopyPropagation,
            RuleId::UnpackSinksToWait,
            RuleId::KillBeforeChain,
            RuleId::KillAfterChain,
            // Then the read rules (`Point::Read`), then:
            RuleId::LoopCarriedFragment,
            RuleId::UndefinedWrite,
        ],
    ),
    (Point::Read, read::READ_ORDER),
    (Point::BlockEnd, &[RuleId::JoinWaitLevels]),
    (
        Point::Late,
        &[
            RuleId::FunctionPressure,
            RuleId::AddressTakenCallee,
            RuleId::WaitAtExit,
            RuleId::UnrolledLoopWait,
            RuleId::ZeroTripJoin,
        ],
    ),
];

/// The rules a read rule's action may decide in its place: a wait that
/// cannot be hoisted (R-divergent-hoist), an in-place rewrite taken twice
/// (R-rmw-twice), a user's commit moved up to the wait (R-hoist-commit),
/// a read after a divergent wait (R-read-after-divergent-wait).
pub const DECIDED_BY_READ_ACTIONS: [RuleId; 4] = [
    RuleId::DivergentHoist,
    RuleId::RmwTwice,
    RuleId::HoistCommit,
    RuleId::ReadAfterDivergentWait,
];

/// Whether `id` is placed in [`PRECEDENCE`] (or decided by a read rule's
/// action, [`DECIDED_BY_READ_ACTIONS`]).
pub const fn placed(id: RuleId) -> bool {
    let mut p = 0;
    while p < PRECEDENCE.len() {
        if contains(PRECEDENCE[p].1, id) {
            return true;
        }
        p += 1;
    }
    contains(&DECIDED_BY_READ_ACTIONS, id)
}

const fn contains(list: &[RuleId], id: RuleId) -> bool {
    let mut k = 0;
    while k < list.len() {
        if list[k] as usize == id as usize {
            return true;
        }
        k += 1;
    }
    false
}

// Every rule is placed: adding a rule without a place in the precedence
// does not compile.
const _: () = {
    let mut k = 0;
    while k < RuleId::ALL.len() {
        assert!(
            placed(RuleId::ALL[k]),
            "a rule of phase 87 has no place in rules::PRECEDENCE"
        );
        k += 1;
    }
};

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

/// What the function's first wgmma leaves in flight before any wait.
pub const UNWAITED_SETS: RuleInfo = RuleInfo {
    name: "R-unwaited-sets-in-flight",
    code: None,
    ptxas: "counts, from a wgmma issued with no wgmma.wait_group before it (on any path, or earlier in its block order) until the next wait of any level, every register of every accumulator set of the function as in flight, but those written after the issue: a read of one waits (C7517) and its copies are propagated (R-unpack-sinks-to-wait, R-wait-before-copy-into-wgmma); ori keeps this to the wgmma's block",
    example: "corpus/c7517_read_future_acc_loaded_before_wgmma",
    isa: "a wgmma.mma_async reads and writes only its own accumulator and A-fragment registers: these waits are ptxas's caution, not the ISA's",
};

/// The precedence between the walk's failures and the late checks'.
pub const WALK_FAILURE_FIRST: RuleInfo = RuleInfo {
    name: "R-walk-failure-first",
    code: None,
    ptxas: "reports a divergence or extern-call failure found anywhere in its walk rather than a late-check failure (C7510, C7511, C7513-C7515) the walk met first: those checks run after the walk",
    example: "corpus/c7520_after_join_read_of_unsure_group",
    isa: "-",
};

/// The order of ptxas's blocks (`crate::block_order`).
pub const BLOCK_ORDER: RuleInfo = RuleInfo {
    name: "R-block-order",
    code: None,
    ptxas: "lays out a function's blocks, reports their injected arrives and waits, and looks for a user's earlier wait (R-refuse-after-user-wait) in a post-order of a backward walk over forward edges from the exits that visits a block's branching predecessors, the last in the PTX first, before the one placed right before it, a latch right after its last forward predecessor: a block placed after the ret that runs first comes before the block it branches to",
    example: "corpus/c7519_block_order_late_block_first",
    isa: "-",
};

/// ptxas's dead-code elimination of wgmma before its GMMA passes
/// (`crate::dead_wgmma`).
pub const DEAD_WGMMA: RuleInfo = RuleInfo {
    name: "R-dead-wgmma",
    code: None,
    ptxas: "deletes before its GMMA passes a wgmma none of whose accumulators is read before being written again (a scale-d 0 wgmma or plain writes), on every path, counting a path past each loop it unrolls by four with a remainder; the deleted wgmma gets no arrive or wait, and its commit may close an empty group",
    example: "corpus/c7519_dead_wgmma_chain_before_scale_d_zero",
    isa: "a wgmma whose results are never read has no effect on the registers; the PTX ISA does not say a compiler keeps it",
};

/// When ptxas ignores `setmaxnreg` (`crate::setmaxnreg`).
pub const SETMAXNREG_IGNORED: RuleInfo = RuleInfo {
    name: "R-setmaxnreg-ignored",
    code: Some(ori_ir::consts::C7508_SETMAXNREG_UNKNOWN_ENTRY),
    ptxas: "ignores setmaxnreg, with C7508 first in the kernel's messages, when it cannot tell the kernel's register count at entry: no .maxnreg, no -maxrregcount, no .minnctapersm with a thread count, and a thread count (.maxntid/.reqntid) alone that leaves room for two CTAs per SM at the registers the wgmma code needs; under -c it ignores every setmaxnreg, with C7504 first in its function's messages",
    example: "corpus/c7508_setmaxnreg_maxntid_two_ctas_fit",
    isa: "setmaxnreg.inc/.dec change the warp's register count from the count it starts with; the count at entry is the kernel's launch register count",
};

/// The rules that decide no injection themselves but when and where the
/// others are asked: the solver's, the loop analysis's, the uniformity
/// analysis's, and those of inlined calls, hoisted waits and failure
/// precedence.
pub const ANALYSIS_RULES: [RuleInfo; 12] = [
    FIRST_VISIT,
    NOUNROLL,
    UNIFORM_AT_USE,
    CALL_ENDS_BLOCK,
    INLINED_CALLEE,
    HOISTED_WAIT_RETIRES,
    WALK_FAILURE_FIRST,
    ARRIVE_KEPT,
    SETMAXNREG_IGNORED,
    BLOCK_ORDER,
    UNWAITED_SETS,
    DEAD_WGMMA,
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
    fn each_point_asks_a_rule_once() {
        for (point, rules) in PRECEDENCE {
            let mut seen = rules.to_vec();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), rules.len(), "{point:?} lists a rule twice");
        }
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
