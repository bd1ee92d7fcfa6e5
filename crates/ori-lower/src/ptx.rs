//! PTX out, with the passes' decisions made explicit.
//!
//! This is the fix-it a kernel author wants: the input text comes back byte
//! for byte (directives, declarations, `.loc`, comments), with phase 87's
//! decisions written in as PTX. Each injected arrive becomes
//! `wgmma.fence.sync.aligned;`, each injected commit
//! `wgmma.commit_group.sync.aligned;`, each injected wait
//! `wgmma.wait_group.sync.aligned N;`, placed where the IR has them. An
//! instruction phase 87 moved (a read it sank below a read-modify-write, a
//! commit it hoisted to a wait) is commented out at its old line and written
//! at its new place; a serialized function loses its own fences, commits and
//! waits (commented out) and gets one fence, commit and wait per wgmma.
//! Compiling the result with ptxas should give no C75xx message at all.
//!
//! One exception keeps ptxas quiet: the commit phase 87 adds before a
//! `wgmma.wait_group` reached with wgmma still open is not printed, because
//! ptxas closes the stage at the wait itself and would take a written commit
//! in a block of its own for an empty group.

use ori_gmma::block_merging::PtxasBlocks;
use ori_ir::{Function, Inst, Module, Opcode};
use std::collections::{BTreeMap, BTreeSet};

/// Text of an instruction phase 87 created, or `None` for one from the source.
fn injected_text(f: &Function, i: Inst) -> Option<String> {
    let d = &f.insts[i];
    Some(match d.opcode {
        Opcode::WarpgroupArrive => "wgmma.fence.sync.aligned;".to_string(),
        Opcode::WarpgroupCommitBatch => "wgmma.commit_group.sync.aligned;".to_string(),
        Opcode::WarpgroupWait => format!(
            "wgmma.wait_group.sync.aligned {};",
            d.wait_count().unwrap_or(0)
        ),
        _ => return None,
    })
}

/// What to do to the source lines of one module.
#[derive(Default)]
struct Edits {
    /// Lines to print before a source line.
    before: BTreeMap<u32, Vec<String>>,
    /// Lines to print after a source line.
    after: BTreeMap<u32, Vec<String>>,
    /// Source lines to comment out, with the reason.
    drop: BTreeMap<u32, &'static str>,
    /// Source lines written out again as these lines (the original kept as a comment).
    replace: BTreeMap<u32, Vec<String>>,
}

/// The branch the front end made of a guarded GMMA op (`@!p bra $ori_skip_N`):
/// its text, and the label it skips to.
fn skip_branch(f: &Function, i: Inst) -> Option<(String, String)> {
    let d = &f.insts[i];
    let g = d.guard.filter(|_| d.opcode == Opcode::Branch)?;
    let target = d.slots.iter().find_map(|s| match s.op {
        ori_ir::Operand::Block(b) => f.blocks[b].label.clone(),
        _ => None,
    })?;
    if !target.starts_with("$ori_skip_") {
        return None;
    }
    let bang = if g.negated { "!" } else { "" };
    let text = format!("@{bang}{} bra {target};", f.vregs[g.reg].name);
    Some((text, target.to_string()))
}

/// Whether a wgmma comes before `order[k]` in its block as ptxas sees it,
/// with no commit or wait between.
fn wgmma_before_in_block(f: &Function, blocks: &PtxasBlocks, order: &[Inst], k: usize) -> bool {
    let mut block = f.layout.inst_block(order[k]);
    for &i in order[..k].iter().rev() {
        let b = f.layout.inst_block(i);
        if b != block {
            // Crossing into the previous PTX block: only if ptxas merged them.
            match block {
                Some(x) if !blocks.starts_block(x) => block = b,
                _ => return false,
            }
        }
        let op = f.insts[i].opcode;
        if op == Opcode::WgmmaMmaAsync {
            return true;
        }
        if op.is_commit() || op.is_wait() {
            return false;
        }
    }
    false
}

/// A wgmma written with accumulator registers of its own, for a function
/// phase 87 serialized with C7511 for a shared accumulator register: copies in, fence, the wgmma on the fresh
/// registers, commit, wait 0, copies out, all in a `{ }` scope declaring
/// them. Returns `None` where the source line is not one plain wgmma.
///
/// Why: ptxas 13.0.88 gives C7511 for an accumulator register written by
/// something else between wgmma that accumulate into its set (rule 14 of the
/// corpus README), or for sets that overlap without being equal (rule 32),
/// and it does so even when every wgmma is already waited for: serializing
/// by hand does not make it quiet. Giving each wgmma a set nobody else
/// writes does, with the same serialized SASS
/// (`c7511_def_acc_between_mma`: found by experiment; `cargo xtask oracle
/// check --ptx-roundtrip` checks it on every case).
fn isolated_wgmma(f: &Function, src: &str) -> Option<Vec<String>> {
    let text = src.trim();
    if !text.starts_with("wgmma.mma_async") || text.matches(';').count() != 1 {
        return None;
    }
    let open = text.find('{')?;
    let close = open + text[open..].find('}')?;
    let regs: Vec<&str> = text[open + 1..close].split(',').map(str::trim).collect();
    if regs.iter().any(|r| r.is_empty()) {
        return None;
    }
    // A prefix no register of the function uses.
    let mut prefix = "%ori_acc".to_string();
    while f
        .vregs
        .values()
        .any(|v| v.name.starts_with(prefix.as_str()))
    {
        prefix.push('_');
    }
    let fresh: Vec<String> = (0..regs.len()).map(|k| format!("{prefix}{k}")).collect();
    let mut v = vec![
        "{ // ori: this wgmma's accumulators in registers no other instruction writes (C7511)"
            .to_string(),
        format!(".reg .b32 {prefix}<{}>;", regs.len()),
    ];
    v.extend(
        regs.iter()
            .zip(&fresh)
            .map(|(r, n)| format!("mov.b32 {n}, {r};")),
    );
    v.push("wgmma.fence.sync.aligned;".to_string());
    v.push(format!(
        "{}{{{}}}{}",
        &text[..open],
        fresh.join(", "),
        &text[close + 1..]
    ));
    v.push("wgmma.commit_group.sync.aligned;".to_string());
    v.push("wgmma.wait_group.sync.aligned 0;".to_string());
    v.extend(
        regs.iter()
            .zip(&fresh)
            .map(|(r, n)| format!("mov.b32 {r}, {n};")),
    );
    v.push("} // ori: end of the isolated wgmma".to_string());
    Some(v)
}

fn plan_function(f: &Function, src_lines: &[&str], e: &mut Edits) {
    let cfg = ori_ir::ControlFlowGraph::compute(f);
    let blocks = PtxasBlocks::compute(f, &cfg);
    let order: Vec<Inst> = f.layout.all_insts().collect();
    let placed: BTreeSet<Inst> = order.iter().copied().collect();
    // Source instructions the passes removed (a serialized function's own
    // fences, commits and waits).
    for (i, d) in f.insts.iter() {
        let from_source = injected_text(f, i).is_none();
        if d.line > 0 && from_source && !placed.contains(&i) && d.opcode.is_gmma_family() {
            e.drop.insert(d.line, "removed by serialization");
        }
    }
    let mut pending: Vec<String> = Vec::new();
    let mut anchor: Option<u32> = None;
    let mut block = None;
    // The branch of a guarded GMMA op just placed: (line, branch text, label).
    let mut skip: Option<(u32, String, String)> = None;
    // A guarded op written as a branch whose skipped block is still open:
    // what follows the op there goes before the label.
    let mut rewritten: Option<u32> = None;
    // Serialized with C7511 for a shared accumulator register: each wgmma
    // gets registers of its own; the
    // commit and wait serialization put after it are then written with it.
    let isolate = f.serialized.is_some_and(|z| z.shared_accumulators);
    let mut consumed: BTreeSet<Inst> = BTreeSet::new();
    for (k, &i) in order.iter().enumerate() {
        let d = &f.insts[i];
        if consumed.contains(&i) {
            continue;
        }
        if isolate && d.opcode == Opcode::WgmmaMmaAsync && d.line > 0 {
            let after: Vec<Inst> = order[k + 1..].iter().take(2).copied().collect();
            let serialized_after = after.len() == 2
                && f.insts[after[0]].opcode == Opcode::WarpgroupCommitBatch
                && f.insts[after[1]].opcode == Opcode::WarpgroupWait;
            let fence_before =
                pending.last().map(String::as_str) == Some("wgmma.fence.sync.aligned;");
            let src = src_lines.get(d.line as usize - 1).copied().unwrap_or("");
            if let (true, true, Some(v)) = (serialized_after, fence_before, isolated_wgmma(f, src))
            {
                pending.pop();
                if !pending.is_empty() {
                    e.before.entry(d.line).or_default().append(&mut pending);
                }
                e.replace.insert(d.line, v);
                consumed.extend(after);
                anchor = Some(d.line);
                block = f.layout.inst_block(i);
                continue;
            }
        }
        // What a block ends with stays in that block: after its last line.
        let b = f.layout.inst_block(i);
        if b != block && skip.is_none() {
            if let (Some(l), false) = (rewritten.take(), pending.is_empty()) {
                if let Some(v) = e.replace.get_mut(&l) {
                    let label = v.pop();
                    v.extend(pending.drain(..).map(|t| format!("{t} // ori: injected")));
                    v.extend(label);
                }
            }
            if let (Some(a), false) = (anchor, pending.is_empty()) {
                e.after.entry(a).or_default().append(&mut pending);
            }
            block = b;
        }
        if let Some(t) = injected_text(f, i) {
            // A commit phase 87 puts before a wait is left to the wait
            // (ptxas closes the stage there itself) when the wait is the
            // user's, or when no wgmma precedes it in its block as ptxas
            // sees it: written there, it would close an empty group and
            // cost a dummy wgmma and an arrive (`heldout4_22`).
            let before_wait = order
                .get(k + 1)
                .is_some_and(|n| f.insts[*n].opcode.is_wait());
            let implicit_commit = d.opcode == Opcode::WarpgroupCommitBatch
                && before_wait
                && (order
                    .get(k + 1)
                    .is_some_and(|n| f.insts[*n].opcode == Opcode::WgmmaWaitGroup)
                    || !wgmma_before_in_block(f, &blocks, &order, k));
            if !implicit_commit {
                pending.push(t);
            }
            continue;
        }
        if d.line == 0 {
            continue;
        }
        if let Some((line, bra, label)) = skip.take() {
            if line == d.line && !pending.is_empty() {
                // Something goes between the guard and the op: write the branch
                // ptxas would make of `@p op` explicitly.
                let op = src_lines
                    .get(line as usize - 1)
                    .map_or("", |l| l.trim())
                    .trim_start_matches(|c: char| c != ' ' && c != '\t')
                    .trim()
                    .to_string();
                let mut v = vec![format!("{bra} // ori: the guarded op as a branch")];
                v.extend(pending.drain(..).map(|t| format!("{t} // ori: injected")));
                v.push(op);
                v.push(format!("{label}:"));
                e.replace.insert(line, v);
                rewritten = Some(line);
                anchor = Some(d.line);
                block = b;
                continue;
            }
        }
        if let Some((bra, label)) = skip_branch(f, i) {
            skip = Some((d.line, bra, label));
        }
        match anchor {
            // In source order: injected lines go just before it.
            Some(a) if d.line < a => {
                // Moved below a later source line: write it at its new place.
                let text = src_lines
                    .get(d.line as usize - 1)
                    .map_or(String::new(), |l| l.trim().to_string());
                let slot = e.after.entry(a).or_default();
                slot.append(&mut pending);
                slot.push(format!("{text} // ori: moved from line {}", d.line));
                e.drop.insert(d.line, "moved");
            }
            _ => {
                if !pending.is_empty() {
                    e.before.entry(d.line).or_default().append(&mut pending);
                }
                anchor = Some(d.line);
            }
        }
    }
    if let (Some(a), false) = (anchor, pending.is_empty()) {
        e.after.entry(a).or_default().append(&mut pending);
    }
}

/// Print the module's source with the passes' decisions written in.
pub fn emit_module(m: &Module, src: &str) -> String {
    let src_lines: Vec<&str> = src.lines().collect();
    let mut e = Edits::default();
    for f in m.funcs.values().filter(|f| f.has_body) {
        plan_function(f, &src_lines, &mut e);
    }
    let mut out = String::with_capacity(src.len() + 64 * (e.before.len() + e.after.len()));
    let indent_of = |line: &str| -> String {
        line.chars()
            .take_while(|c| c.is_whitespace() && *c != '\n')
            .collect()
    };
    for (k, line) in src.split_inclusive('\n').enumerate() {
        let n = k as u32 + 1;
        let indent = indent_of(line);
        for t in e.before.get(&n).into_iter().flatten() {
            out.push_str(&indent);
            out.push_str(t);
            if !t.contains("// ori:") {
                out.push_str(" // ori: injected");
            }
            out.push('\n');
        }
        if let Some(v) = e.replace.get(&n) {
            out.push_str(&indent);
            out.push_str("// ori: rewritten: ");
            out.push_str(line.trim_start());
            if !line.ends_with('\n') {
                out.push('\n');
            }
            for t in v {
                if !t.ends_with(':') {
                    out.push_str(&indent);
                }
                out.push_str(t);
                out.push('\n');
            }
        } else {
            match e.drop.get(&n) {
                Some(why) => {
                    out.push_str(&indent);
                    out.push_str("// ori: ");
                    out.push_str(why);
                    out.push_str(": ");
                    out.push_str(line.trim_start());
                    if !line.ends_with('\n') {
                        out.push('\n');
                    }
                }
                None => out.push_str(line),
            }
        }
        if let Some(v) = e.after.get(&n) {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            for t in v {
                out.push_str(&indent);
                out.push_str(t);
                if !t.contains("// ori:") {
                    out.push_str(" // ori: injected");
                }
                out.push('\n');
            }
        }
    }
    out
}
