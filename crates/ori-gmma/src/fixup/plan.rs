//! What the primary fixup decided, each decision with the rule that made it.
//!
//! The walk records here; one decision feeds back into the walk state
//! (R-first-visit: a read covered by a wait an earlier visit decided,
//! [`Plan::state_from_plan`]), so the solver runs the fixpoint's later
//! rounds with a scratch plan and the decisions come from the first pass
//! and the visit over the converged states (`solve`).
//!
//! The plan also says when each decision last changed ([`Plan::epoch`]):
//! a converged visit whose entry and whose plan facts are those of the
//! block's first visit repeats that visit exactly, and is skipped.

use super::rules::RuleId;
use crate::in_flight::PipeState;
use cranelift_entity::SecondaryMap;
use ori_ir::{Block, Inst, SerializationCode, VReg};

/// How an injected wait closes the wgmmas still open (uncommitted) before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Close {
    /// Nothing is open.
    Nothing,
    /// Insert a `_warpgroup.commit_batch` before the wait.
    CommitBatch,
    /// Move the user's `wgmma.commit_group` that follows (past plain reads
    /// only) up to the wait (R-hoist-commit): a commit carries the open
    /// accumulators, so ptxas's scheduler may move accumulator reads below
    /// it but not writes.
    Hoist(Inst),
}

impl Close {
    /// A commit before the wait when wgmma are still open.
    pub(super) fn for_open(pipe: &PipeState) -> Close {
        if pipe.open.is_empty() {
            Close::Nothing
        } else {
            Close::CommitBatch
        }
    }
}

/// One injected wait: before `at`, whose line the advisory names.
#[derive(Clone, Copy, Debug)]
pub(super) struct WaitAt {
    pub(super) at: Inst,
    pub(super) close: Close,
    /// The line C7517 names when it is not `at`'s (R-unpack-sinks-to-wait).
    pub(super) line: Option<u32>,
    pub(super) rule: RuleId,
}

/// Kinds of decision, for [`Plan::first`]: one of each kind per instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(super) enum Seen {
    Arrive,
    UbArrive,
    EmptyCommit,
    ImplicitCommit,
    CopySink,
    UbWrite,
    Wait,
}

// `Plan::seen` keeps one bit per kind in a byte.
const _: () = assert!((Seen::Wait as u8) < 8);

/// Why the pipeline was serialized, and where.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The rule that serialized (its code is the message's).
    pub rule: RuleId,
    /// The culprit instruction.
    pub inst: Option<Inst>,
    /// The register involved.
    pub reg: Option<VReg>,
    /// The wgmma it conflicts with.
    pub wgmma: Option<Inst>,
}

impl Failure {
    /// The serialization code (C75xx).
    pub fn code(&self) -> SerializationCode {
        self.rule
            .info()
            .code
            .and_then(SerializationCode::from_code)
            .expect("a serializing rule names a serialization code (rules::tests)")
    }

    /// C7511 from a shared accumulator register rather than from too many
    /// registers in flight (see `ori_ir::Serialization`): its advice differs.
    pub fn shared_accumulators(&self) -> bool {
        matches!(self.rule, RuleId::KillBeforeChain | RuleId::OverlappingSets)
    }
}

/// Decisions of the primary fixup.
#[derive(Default, Debug)]
pub(super) struct Plan {
    /// A scratch plan (the fixpoint's walks): records nothing, since its
    /// decisions are thrown away; keeps a walk of a huge block from
    /// filling a table no one reads.
    scratch: bool,
    /// Decisions already recorded: per instruction, one bit per [`Seen`]
    /// kind. Dense, not a hash table: the walk records in program order, so
    /// a huge block's decisions stay in cache (a table keyed by `(kind,
    /// inst)` cost a cache miss per decision once it outgrew the cache:
    /// 48x the time for 8x the instructions on the one-block bench shape).
    seen: SecondaryMap<Inst, u8>,
    /// Where each recorded wait went in `waits`.
    wait_place: SecondaryMap<Inst, u32>,
    /// Where each recorded undefined write went in `ub_writes`.
    ub_write_place: SecondaryMap<Inst, u32>,
    /// Arrives to inject before these wgmmas (or empty commits).
    pub(super) arrives: Vec<(Inst, RuleId)>,
    /// Waits to inject.
    pub(super) waits: Vec<WaitAt>,
    /// The user's commits that close an empty group (ptxas gives each a dummy wgmma).
    pub(super) empty_commits: Vec<Inst>,
    /// Copies of in-flight accumulators moved down to where their value is
    /// first needed: (copy, the instruction it goes before, rule).
    pub(super) copy_sinks: Vec<(Inst, Inst, RuleId)>,
    /// User waits reached with wgmmas still open on some path: ptxas closes
    /// the stage there (the last HGMMA carries `gsb0`); ori adds the commit.
    pub(super) implicit_commits: Vec<Inst>,
    /// Writes to registers of a wgmma that may still be in flight, which
    /// ptxas 13.0.88 leaves as they are (undefined behaviour by the PTX ISA):
    /// (instruction, register, close needed for a wait).
    pub(super) ub_writes: Vec<(Inst, VReg, Close)>,
    /// wgmmas the ISA wants an arrive before and ptxas 13.0.88 gives none.
    pub(super) ub_arrives: Vec<Inst>,
    /// Blocks holding only a `ret`, reached with accumulators in flight: ptxas
    /// turns a branch to such a block into a predicated exit at the branch, so
    /// the wait goes before the branches of the in-flight predecessors
    /// (resolved after the fixpoint, from the predecessors' exit states).
    pub(super) bare_exits: Vec<Block>,
    /// Why the pipeline is serialized: change it with [`Plan::set_failure`].
    failure: Option<Failure>,
    /// How many times a decision changed so far (see `changed`): at most a
    /// few per instruction, so within `u32` for any input ori reads.
    epoch: u32,
    /// Per instruction, the `epoch` of the last change to a decision at it
    /// (0: never).
    changed: SecondaryMap<Inst, u32>,
    /// The `epoch` of the last change to `failure`.
    failure_changed: u32,
    /// Whether a walk's state followed a decision already recorded here
    /// (R-first-visit in `Walker::read_rules`): then this walk's state is
    /// not the fixpoint's, whose walks see no decision.
    pub(super) state_from_plan: bool,
    /// How many times a walk asked to decide something (recorded or not,
    /// scratch plan or not): a walk that leaves it as it was decided
    /// nothing, whatever plan it had (see [`Plan::asked`]).
    asked: u32,
}

impl Plan {
    /// Why the pipeline is serialized, if it is.
    pub(super) fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Set or clear the failure.
    fn set_failure(&mut self, failure: Option<Failure>) {
        self.epoch += 1;
        self.failure_changed = self.epoch;
        self.failure = failure;
    }

    /// The decisions, written out (for comparing two plans' decisions).
    pub(super) fn decisions(&self) -> String {
        format!(
            "{:?}",
            (
                &self.arrives,
                &self.waits,
                &self.empty_commits,
                &self.copy_sinks,
                &self.implicit_commits,
                &self.ub_writes,
                &self.ub_arrives,
                &self.bare_exits,
                &self.failure,
            )
        )
    }

    /// How many times a walk asked to decide (every call that may change
    /// a decision counts, in a scratch plan too). A walk during which it
    /// stays the same made only the plan's reads: which decisions stand at
    /// its instructions ([`Plan::has_wait`], [`Plan::has_arrive`]) and
    /// whether the pipeline is serialized ([`Plan::injecting`]).
    pub(super) fn asked(&self) -> u32 {
        self.asked
    }

    /// The changes made so far: a mark to compare with [`Plan::unchanged_since`].
    pub(super) fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Whether neither the failure nor any decision at one of `insts`
    /// changed after `mark` (an [`Plan::epoch`]).
    pub(super) fn unchanged_since(&self, insts: &[Inst], mark: u32) -> bool {
        self.failure_changed <= mark && insts.iter().all(|&i| self.changed[i] <= mark)
    }

    /// Note a change to a decision at `i`.
    fn mark(&mut self, i: Inst) {
        self.epoch += 1;
        self.changed[i] = self.epoch;
    }

    /// Block `b`, whose first instruction is the `ret` `i`, is a bare exit.
    pub(super) fn bare_exit(&mut self, b: Block, i: Inst) {
        self.asked += 1;
        if !self.bare_exits.contains(&b) {
            self.bare_exits.push(b);
            self.mark(i);
        }
    }

    /// Whether the primary walk still records injections. A failure the primary
    /// fixup detects itself (calls, divergence) ends its walk, so ptxas 13.0.88
    /// prints no advisory for later points; the register-resource and
    /// accumulator-read failures (C7511, C7514, C7515) come from the later
    /// validation steps, after every injection of the walk was made and
    /// announced; so does C7510, which ptxas finds on the inlined callee.
    ///
    /// **R-hoist-failure-continues**: a wait that cannot be hoisted to
    /// uniform code (R-divergent-hoist) ends the waits' injection only: ptxas
    /// still announces the walk's later arrives
    /// (`c7518_divergent_loop_read_then_arrive_at_join`), not its later waits.
    pub(super) fn injecting(&self) -> bool {
        self.failure
            .as_ref()
            .is_none_or(|f| !Plan::ends_walk(f.rule))
    }

    /// Whether the walk still records waits (see [`Plan::injecting`]).
    fn injecting_waits(&self) -> bool {
        self.failure
            .as_ref()
            .is_none_or(|f| Plan::is_late_code(f.rule))
    }

    /// **R-hoisted-wait-after-walk.** ptxas places the waits it hoists out
    /// of divergent code after its walk, so a failure the walk finds itself
    /// or a failed hoist leaves them unannounced
    /// (`c7520_divergent_read_then_arrive`), where a wait before a reader in
    /// uniform code still is (`c7520_uniform_read_then_divergent_arrive`).
    /// `hoisted` says whether a wait decided before an instruction goes
    /// elsewhere.
    pub(super) fn drop_hoisted_waits(&mut self, hoisted: impl Fn(Inst) -> bool) {
        if !self.injecting_waits() {
            self.waits.retain(|w| !hoisted(w.at));
        }
    }

    /// Whether a failure of `rule` ends ptxas's walk: those the walk finds
    /// itself, not the later checks' nor a wait's failed hoist.
    fn ends_walk(rule: RuleId) -> bool {
        !Plan::is_late_code(rule) && !Plan::arrives_go_on(rule)
    }

    /// The failures after which the walk still injects arrives.
    fn arrives_go_on(rule: RuleId) -> bool {
        rule == RuleId::DivergentHoist
    }

    /// The failures a walk failure met later replaces: a failed hoist, and
    /// an extern call (C7509; `c7520_divergent_arrive_after_extern_call`).
    fn replaceable(rule: RuleId) -> bool {
        matches!(
            rule,
            RuleId::DivergentHoist | RuleId::ExternCall | RuleId::IndirectCall
        )
    }

    /// A plan whose decisions are not kept (see `scratch`).
    pub(super) fn scratch() -> Plan {
        Plan {
            scratch: true,
            ..Plan::default()
        }
    }

    /// Whether `(kind, i)` is new: each decision is recorded once, however
    /// many visits reach it (a table, so that this stays O(1)). Never, in
    /// a scratch plan.
    pub(super) fn first(&mut self, kind: Seen, i: Inst) -> bool {
        self.asked += 1;
        self.first_at(kind, i, 0)
    }

    /// [`Plan::first`], recording `k` as the decision's place in its list.
    fn first_at(&mut self, kind: Seen, i: Inst, k: usize) -> bool {
        let bit = 1u8 << kind as u8;
        if self.scratch || self.seen[i] & bit != 0 {
            return false;
        }
        self.seen[i] |= bit;
        self.mark(i);
        match kind {
            Seen::Wait => self.wait_place[i] = k as u32,
            Seen::UbWrite => self.ub_write_place[i] = k as u32,
            _ => {}
        }
        true
    }

    /// Where the decision `(kind, i)` is in `list` (`at` gives an entry's
    /// instruction): its recorded place, unless a late check has since
    /// dropped entries (then found by a scan).
    fn place<T>(&self, kind: Seen, i: Inst, list: &[T], at: impl Fn(&T) -> Inst) -> Option<usize> {
        let recorded = self.seen[i] & (1u8 << kind as u8) != 0;
        let k = match kind {
            Seen::Wait => Some(self.wait_place[i]),
            Seen::UbWrite => Some(self.ub_write_place[i]),
            _ => None,
        };
        let k = k.filter(|_| recorded).map(|k| k as usize);
        k.filter(|&k| list.get(k).is_some_and(|e| at(e) == i))
            .or_else(|| list.iter().position(|e| at(e) == i))
    }

    /// Record `kind` at `i` when the walk still injects and it is new.
    pub(super) fn record(&mut self, kind: Seen, i: Inst) -> bool {
        self.asked += 1;
        self.injecting() && self.first(kind, i)
    }

    /// An arrive before `i`.
    pub(super) fn arrive(&mut self, i: Inst, rule: RuleId) {
        self.asked += 1;
        // R-arrive-after-extern-call: after an extern call the arrive is a
        // C7520 failure (`c7520_arrive_after_extern_call`); one decided
        // before the call stands (`c7509_arrive_before_extern_call`).
        let after_call = self
            .failure
            .as_ref()
            .is_some_and(|f| matches!(f.rule, RuleId::ExternCall | RuleId::IndirectCall));
        if after_call && !self.has_arrive(i) {
            self.fail(RuleId::ArriveAfterExternCall, Some(i), None, None);
            return;
        }
        if self.record(Seen::Arrive, i) {
            self.arrives.push((i, rule));
        }
    }

    /// A wait before `at`; C7517 names `line` when given (R-unpack-sinks-to-wait).
    /// A wait decided on the first visit and asked for again with wgmma
    /// open (the converged state brings them round a back edge) gets the
    /// commit it then needs: a wait covers committed groups only.
    pub(super) fn wait(&mut self, at: Inst, close: Close, line: Option<u32>, rule: RuleId) {
        self.asked += 1;
        if self.injecting_waits() && self.first_at(Seen::Wait, at, self.waits.len()) {
            self.waits.push(WaitAt {
                at,
                close,
                line,
                rule,
            });
        } else if close == Close::CommitBatch {
            let k = self.place(Seen::Wait, at, &self.waits, |w| w.at);
            if let Some(w) = k.map(|k| &mut self.waits[k]) {
                if w.close == Close::Nothing {
                    w.close = Close::CommitBatch;
                    self.mark(at);
                }
            }
        }
    }

    /// Whether an earlier visit already decided an arrive before `i`.
    pub(super) fn has_arrive(&self, i: Inst) -> bool {
        self.seen[i] & (1u8 << Seen::Arrive as u8) != 0
    }

    /// Whether an earlier visit already decided a wait before `i`.
    pub(super) fn has_wait(&self, i: Inst) -> bool {
        self.seen[i] & (1u8 << Seen::Wait as u8) != 0
    }

    /// An access the ISA calls undefined at `i` (register `r`), with the
    /// close its ISA-strict wait needs (upgraded as for [`Plan::wait`]).
    pub(super) fn undefined_write(&mut self, i: Inst, r: VReg, close: Close) {
        self.asked += 1;
        if self.injecting() && self.first_at(Seen::UbWrite, i, self.ub_writes.len()) {
            self.ub_writes.push((i, r, close));
        } else if close == Close::CommitBatch {
            let k = self.place(Seen::UbWrite, i, &self.ub_writes, |w| w.0);
            if let Some(w) = k.map(|k| &mut self.ub_writes[k]) {
                if w.2 == Close::Nothing {
                    w.2 = Close::CommitBatch;
                    self.mark(i);
                }
            }
        }
    }

    /// Serialize for `rule` at `inst`, unless an earlier failure stands
    /// (the first failure wins, as ptxas prints one per function).
    pub(super) fn fail(
        &mut self,
        rule: RuleId,
        inst: Option<Inst>,
        reg: Option<VReg>,
        wgmma: Option<Inst>,
    ) {
        self.asked += 1;
        // R-walk-failure-first: ptxas finds divergence and extern calls in
        // its walk, and C7510/C7511/C7513-C7515 in the checks after it, so a
        // walk failure anywhere replaces a late-check failure the walk met
        // first (`c7520_after_join_read_of_unsure_group`).
        // A walk failure also replaces a failed hoist met first
        // (`c7520_divergent_loop_read_then_arrive`).
        let late_recorded = self
            .failure
            .as_ref()
            .is_some_and(|f| Plan::is_late_code(f.rule));
        let hoist_recorded = self
            .failure
            .as_ref()
            .is_some_and(|f| Plan::replaceable(f.rule));
        let replaces = (late_recorded && !Plan::is_late_code(rule))
            || (hoist_recorded && Plan::ends_walk(rule));
        if self.failure.is_none() || replaces {
            self.set_failure(Some(Failure {
                rule,
                inst,
                reg,
                wgmma,
            }));
        }
    }

    /// Whether `rule`'s serialization comes from ptxas's checks after the
    /// walk (those after which the walk keeps injecting, [`Plan::injecting`]).
    fn is_late_code(rule: RuleId) -> bool {
        rule.info()
            .code
            .and_then(SerializationCode::from_code)
            .is_some_and(|c| {
                matches!(
                    c,
                    SerializationCode::CrossesCall
                        | SerializationCode::PipelineRegisters
                        | SerializationCode::DefinesInputs
                        | SerializationCode::ReadsAccumulators
                        | SerializationCode::DefinesAccumulators
                )
            })
    }

    /// **R-in-flight-budget.** Too many accumulator registers in flight
    /// (C7511): ptxas's register check comes before its check of reads
    /// between wgmma, so this C7511 replaces a C7514 found earlier in the
    /// walk (Triton's `max_num_imprecise_acc` kernels issue each wgmma into a
    /// fresh set of 64 registers and add it into the main accumulator before
    /// the next wgmma: ptxas says C7511, not C7514).
    pub(super) fn fail_budget(&mut self, at: Inst) {
        self.asked += 1;
        if self
            .failure
            .as_ref()
            .is_some_and(|f| f.code() == SerializationCode::ReadsAccumulators)
        {
            self.set_failure(None);
        }
        self.fail(RuleId::InFlightBudget, Some(at), None, None);
    }
}
