//! Apply the plan: diagnostics in ptxas's printing order (all C7519, then
//! all C7517, each in program order, then at most one serialization
//! message), ori's own notes after them, the layout edits, and on failure
//! the serialization fallback (seed `sub_AE47B0`, [`serialize`]). Every
//! diagnostic and every edit carries its rule, and the function keeps the
//! list (`Function::decisions`).

use super::analyses::Analyses;
use super::conflicts::{touched_before, Writers};
use super::plan::{Close, Plan, WaitAt};
use super::rules::{Mode, RuleId};
use crate::messages;
use cranelift_entity::SecondaryMap;
use ori_ir::consts::*;
use ori_ir::{
    Block, Diagnostic, Function, Inst, InstData, Note, Opcode, Operand, PassContext, RuleUse,
    Severity, Slot,
};
use smallvec::SmallVec;
use std::borrow::Cow;

/// Apply `plan` to `f`, reporting into `cx`; `wgmmas` are `f`'s wgmma
/// in layout order.
pub(super) fn apply(
    f: &mut Function,
    cx: &mut PassContext<'_>,
    an: &Analyses,
    mut plan: Plan,
    mode: Mode,
    wgmmas: &[Inst],
) {
    plan.arrives.sort_by_key(|(i, _)| f.layout.order_key(*i));
    plan.waits.sort_by_key(|w| f.layout.order_key(w.at));
    if plan.failure().is_some() {
        // A serialized function waits after every wgmma and arrives before
        // each, so none of what the notes point at remains.
        plan.ub_writes.clear();
        plan.ub_arrives.clear();
    }
    plan.ub_writes
        .sort_by_key(|(i, _, _)| f.layout.order_key(*i));
    plan.ub_arrives.sort_by_key(|i| f.layout.order_key(*i));
    plan.drop_hoisted_waits(|i| hoist_to_uniform(f, an, i) != i);
    report_order(f, an, &mut plan);
    let mut diags = advisories(f, &plan, wgmmas);
    let notes = notes(f, &plan, mode);
    record_decisions(f, &plan);
    edit(f, an, &mut plan, mode);
    if let Some(fail) = plan.failure() {
        diags.push(serialization_diagnostic(f, fail));
        let why = ori_ir::Serialization {
            code: fail.code(),
            shared_accumulators: fail.shared_accumulators(),
        };
        serialize(f, &plan.empty_commits, why);
    }
    cx.diags.extend(diags);
    cx.diags.extend(notes);
}

/// The advisories in the order ptxas reports them: its blocks' order
/// (R-block-order, [`crate::block_order`]), then program order within a
/// block.
fn report_order(f: &Function, an: &Analyses, plan: &mut Plan) {
    if plan.arrives.len() < 2 && plan.waits.len() < 2 {
        return;
    }
    let mut rank: SecondaryMap<Block, u32> = SecondaryMap::with_default(u32::MAX);
    for (k, b) in crate::block_order::ptxas_block_order(f, &an.cfg, &an.dt)
        .into_iter()
        .enumerate()
    {
        rank[b] = k as u32;
    }
    let key = |i: Inst| {
        let b = f.layout.inst_block(i).map_or(u32::MAX, |b| rank[b]);
        (b, f.layout.order_key(i))
    };
    plan.arrives.sort_by_key(|(i, _)| key(*i));
    plan.waits.sort_by_key(|w| key(w.at));
}

/// An advisory (C7519, C7517) naming `line`, with its rule, its culprit and
/// what the culprit conflicts with.
fn advisory(
    f: &Function,
    code: u32,
    line: u32,
    rule: RuleId,
    culprit: Note,
    help: &'static str,
    related: Option<Note>,
) -> Diagnostic {
    let fname = f.name.to_string();
    let message = match code {
        C7519_ARRIVE_INJECTED => messages::arrive_injected(line, &fname),
        _ => messages::wait_injected(line, &fname),
    };
    let mut d = Diagnostic::new(Severity::Info, Some(code), message);
    d.function = Some(fname);
    d.culprit = Some(culprit);
    d.related.extend(related);
    d.help = Some(help.into());
    d.rule = Some(rule.name());
    d
}

/// What the instruction an injected wait goes before has to do with it:
/// the rule's own words ([`RuleId::culprit`]), else the read rules' case.
fn wait_culprit(rule: RuleId) -> &'static str {
    rule.culprit()
        .unwrap_or("this instruction reads an accumulator of a wgmma still in flight")
}

/// A note pointing at `i` (a secondary span of a diagnostic).
fn note_at(f: &Function, i: Inst, text: impl Into<Cow<'static, str>>) -> Note {
    Note {
        line: f.insts[i].line,
        inst: Some(describe(f, i)),
        span: f.insts[i].src,
        text: text.into(),
    }
}

/// Arrives then waits, each in program order, as ptxas prints them.
fn advisories(f: &Function, plan: &Plan, wgmmas: &[Inst]) -> Vec<Diagnostic> {
    let writers = (!plan.waits.is_empty()).then(|| Writers::new(f, wgmmas));
    let arrives = plan.arrives.iter().map(|&(i, rule)| {
        let touched = touched_before(f, i).map(|(j, r, wrote)| {
            let verb = if wrote { "writes" } else { "reads" };
            note_at(
                f,
                j,
                format!("{verb} {}, which the wgmma uses", f.vregs[r].name),
            )
        });
        // The rule's own words, else R-arrive-after-write's case.
        let why = rule
            .culprit()
            .unwrap_or("this wgmma uses registers accessed since the last warpgroup arrive");
        advisory(
            f,
            C7519_ARRIVE_INJECTED,
            f.insts[i].line,
            rule,
            note_at(f, i, why),
            "put wgmma.fence between the last access of these registers and this wgmma",
            touched,
        )
    });
    let waits = plan.waits.iter().map(|w| {
        let writer = writers
            .as_ref()
            .and_then(|ws| ws.read_by(f, w.at))
            .map(|(j, r)| note_at(f, j, format!("this wgmma writes {}", f.vregs[r].name)));
        advisory(
            f,
            C7517_WAIT_INJECTED,
            w.line.unwrap_or(f.insts[w.at].line),
            w.rule,
            note_at(f, w.at, wait_culprit(w.rule)),
            "put wgmma.commit_group + wgmma.wait_group before this instruction",
            writer,
        )
    });
    arrives.chain(waits).collect()
}

/// ori's own notes (no code, left out of ptxas's layout), one per access
/// the ISA calls undefined and ptxas leaves.
fn notes(f: &Function, plan: &Plan, mode: Mode) -> Vec<Diagnostic> {
    let strict = mode == Mode::IsaStrict;
    let note =
        |i: Inst, rule: RuleId, message: String, culprit: Cow<'static, str>, help: &'static str| {
            let mut d = Diagnostic::new(Severity::Note, None, message);
            d.function = Some(f.name.to_string());
            d.culprit = Some(Note {
                line: f.insts[i].line,
                inst: Some(describe(f, i)),
                span: f.insts[i].src,
                text: culprit,
            });
            d.help = Some(help.into());
            d.rule = Some(rule.name());
            d
        };
    let mut out = Vec::new();
    for &(i, r, _) in &plan.ub_writes {
        let line = f.insts[i].line;
        let name = &f.vregs[r].name;
        let verb = if f.insts[i].defs().contains(&r) {
            "writes"
        } else {
            "reads"
        };
        out.push(note(
            i,
            RuleId::UndefinedWrite,
            format!(
                "line {line}: this instruction accesses register {name} of a wgmma that may still be in flight; the PTX ISA makes this undefined and ptxas 13.0.88 does not fix it{}",
                if strict { "; ori waits before it (ISA-strict mode)" } else { "" }
            ),
            format!("{verb} {name}").into(),
            "wgmma.commit_group + wgmma.wait_group before this write, or write another register",
        ));
    }
    for &i in &plan.ub_arrives {
        out.push(note(
            i,
            RuleId::UndefinedArrive,
            format!(
                "line {}: the PTX ISA wants a wgmma.fence before this wgmma (its registers were read, or used by a wgmma of another shape, since the last one); ptxas 13.0.88 gives none{}",
                f.insts[i].line,
                if strict { "; ori arrives before it (ISA-strict mode)" } else { "" }
            ),
            "no fence since the last access of its registers".into(),
            "wgmma.fence before this wgmma",
        ));
    }
    out
}

/// The serialization message, naming the culprit and the wgmma in flight.
fn serialization_diagnostic(f: &Function, fail: &super::plan::Failure) -> Diagnostic {
    let fname = f.name.to_string();
    let code = fail.code();
    let mut d = Diagnostic::new(Severity::Info, Some(code.code()), code.message(&fname));
    d.function = Some(fname);
    if let Some(i) = fail.inst {
        let reg = fail
            .reg
            .map(|r| format!(" (register {})", f.vregs[r].name))
            .unwrap_or_default();
        d.culprit = Some(Note {
            line: f.insts[i].line,
            inst: Some(describe(f, i)),
            span: f.insts[i].src,
            text: format!("culprit{reg}").into(),
        });
    }
    if let Some(w) = fail.wgmma {
        d.related.push(Note {
            line: f.insts[w].line,
            inst: Some(describe(f, w)),
            span: f.insts[w].src,
            text: "in flight from this wgmma".into(),
        });
    }
    let help = match fail.rule {
        RuleId::IndirectCall => messages::INDIRECT_CALL_HELP,
        RuleId::AddressTakenCallee => messages::ADDRESS_TAKEN_HELP,
        _ if fail.shared_accumulators() => messages::C7511_SHARED_SET_HELP,
        _ => code.help(),
    };
    d.help = Some(help.into());
    d.rule = Some(fail.rule.name());
    d
}

/// Keep every decision, with its rule, on the function.
fn record_decisions(f: &mut Function, plan: &Plan) {
    let line = |i: Inst| f.insts[i].line;
    let mut out: Vec<RuleUse> = Vec::new();
    let mut push = |rule: RuleId, what: &'static str, line: u32| {
        out.push(RuleUse {
            rule: rule.name(),
            what,
            line,
        })
    };
    for &(i, rule) in &plan.arrives {
        push(rule, "arrive", line(i));
    }
    for w in &plan.waits {
        push(w.rule, "wait", w.line.unwrap_or(line(w.at)));
        if let Close::Hoist(c) = w.close {
            push(RuleId::HoistCommit, "commit moved up", line(c));
        }
    }
    for &i in &plan.empty_commits {
        push(RuleId::EmptyGroup, "dummy wgmma", line(i));
    }
    for &i in &plan.implicit_commits {
        push(RuleId::ImplicitCommit, "commit", line(i));
    }
    for &(copy, _, rule) in &plan.copy_sinks {
        push(rule, "copy moved down", line(copy));
    }
    for &(i, _, _) in &plan.ub_writes {
        push(RuleId::UndefinedWrite, "note", line(i));
    }
    for &i in &plan.ub_arrives {
        push(RuleId::UndefinedArrive, "note", line(i));
    }
    if let Some(fail) = plan.failure() {
        push(fail.rule, "serialize", fail.inst.map_or(0, line));
    }
    f.decisions.extend(out);
}

/// The layout edits, all in one rebuild of each block they touch
/// (`Layout::begin_batch`): anchors are instructions already laid out, and
/// the one query made meanwhile (`hoist_to_uniform`: a block's last
/// instruction) does not see the insertions.
fn edit(f: &mut Function, an: &Analyses, plan: &mut Plan, mode: Mode) {
    let strict_edits = plan.failure().is_none();
    // The most instructions the edits below make: the table grows once.
    let made = plan.implicit_commits.len()
        + 2 * (plan.waits.len() + plan.ub_writes.len())
        + plan.arrives.len()
        + plan.ub_arrives.len();
    f.insts.reserve_exact(made);
    f.layout.begin_batch();
    for &w in &plan.implicit_commits {
        let line = f.insts[w].line;
        f.insert_before(w, internal("commit_batch", vec![], line));
    }
    if strict_edits && RuleId::UndefinedWrite.injects_in(mode) {
        for &(at, _, close) in &plan.ub_writes {
            let rule = RuleId::UndefinedWrite;
            plan.waits.push(WaitAt {
                at,
                close,
                line: None,
                rule,
            });
        }
    }
    for &WaitAt { at: i, close, .. } in &plan.waits {
        let line = f.insts[i].line;
        let at = hoist_to_uniform(f, an, i);
        match close {
            Close::Nothing => {}
            Close::CommitBatch => {
                f.insert_before(at, internal("commit_batch", vec![], line));
            }
            Close::Hoist(c) => {
                f.layout.remove_inst(c);
                f.layout.insert_before(c, at);
            }
        }
        f.insert_before(at, wait0(line));
    }
    for &(copy, end, _) in &plan.copy_sinks {
        f.layout.remove_inst(copy);
        f.layout.insert_before(copy, end);
    }
    // Arrives last, so that one before a wgmma that also waits comes after
    // the wait, next to the wgmma.
    let strict_arrives = strict_edits && RuleId::UndefinedArrive.injects_in(mode);
    let ub_arrives = plan.ub_arrives.iter().filter(|_| strict_arrives);
    for &i in plan.arrives.iter().map(|(i, _)| i).chain(ub_arrives) {
        let line = f.insts[i].line;
        f.insert_before(i, internal("arrive", vec![], line));
    }
    f.layout.end_batch();
}

fn internal(name: &str, slots: Vec<Slot>, line: u32) -> InstData {
    InstData::new("_warpgroup", &[name], slots, line)
}

fn wait0(line: u32) -> InstData {
    internal(
        "wait",
        vec![Slot::use_(Operand::Imm(ori_ir::Imm::Int(0)))],
        line,
    )
}

/// Serialization fallback (seed `sub_AE47B0`): drop every arrive, commit and
/// wait (injected or written), then give every wgmma its own arrive before
/// and commit + wait 0 after. The commits in `empty` close empty groups:
/// ptxas has made each a dummy wgmma by then, and serializes it like the
/// others (`c7520_divergent_commit`: ARRIVE, HGMMA.64x8x16.F16, DEPBAR), so
/// they stay, between an arrive and a wait.
pub fn serialize(f: &mut Function, empty: &[Inst], why: ori_ir::Serialization) {
    // One rebuild per block (`Layout::begin_batch`); the queries below see
    // the original order, which has the same wgmmas and empty commits.
    f.layout.begin_batch();
    let injected: Vec<Inst> = f
        .layout
        .all_insts()
        .filter(|i| {
            let op = f.insts[*i].opcode;
            (op.is_arrive() || op.is_wait() || op.is_commit()) && !empty.contains(i)
        })
        .collect();
    for i in injected {
        f.layout.remove_inst(i);
    }
    for &c in empty {
        if f.layout.inst_block(c).is_some() {
            let line = f.insts[c].line;
            f.insert_before(c, internal("arrive", vec![], line));
            f.insert_after(c, wait0(line));
        }
    }
    let wgmmas: Vec<Inst> = f
        .layout
        .all_insts()
        .filter(|i| f.insts[*i].opcode == Opcode::WgmmaMmaAsync)
        .collect();
    for w in wgmmas {
        let line = f.insts[w].line;
        f.insert_before(w, internal("arrive", vec![], line));
        let c = f.insert_after(w, internal("commit_batch", vec![], line));
        f.insert_after(c, wait0(line));
    }
    f.layout.end_batch();
    f.serialized = Some(why);
}

/// The waits of `plan` hoisted out of divergent code, by the uniform block
/// they end up in (R-hoisted-wait-retires); `None` when there are none or
/// the plan serializes.
pub(super) fn hoisted_waits(
    f: &Function,
    an: &Analyses,
    plan: &Plan,
) -> Option<SecondaryMap<Block, SmallVec<[WaitAt; 1]>>> {
    if plan.failure().is_some() {
        return None;
    }
    let mut out: SecondaryMap<Block, SmallVec<[WaitAt; 1]>> = SecondaryMap::new();
    let mut any = false;
    for w in &plan.waits {
        let at = hoist_to_uniform(f, an, w.at);
        if at != w.at {
            if let Some(h) = f.layout.inst_block(at) {
                out[h].push(*w);
                any = true;
            }
        }
    }
    any.then_some(out)
}

/// Where a wait for instruction `i` goes: before `i` in uniform code, else
/// before the terminator of the nearest dominating uniform block.
pub(super) fn hoist_to_uniform(f: &Function, an: &Analyses, i: Inst) -> Inst {
    let Some(b) = f.layout.inst_block(i) else {
        return i;
    };
    match an.climb_to_uniform(b) {
        (passed, Some(h)) if !passed.is_empty() => {
            f.layout.block_insts(h).last().copied().unwrap_or(i)
        }
        _ => i,
    }
}

fn describe(f: &Function, i: Inst) -> String {
    let mut s = String::with_capacity(160);
    ori_ir::write::write_inst(&mut s, f, &f.insts[i]);
    s
}
