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

/// The PTX of an instruction phase 87 created (an arrive, a commit, a
/// wait), without the `;`, or `None` for any other instruction.
pub(crate) fn injected_ptx(d: &ori_ir::InstData) -> Option<String> {
    Some(match d.opcode {
        Opcode::WarpgroupArrive => "wgmma.fence.sync.aligned".to_string(),
        Opcode::WarpgroupCommitBatch => "wgmma.commit_group.sync.aligned".to_string(),
        Opcode::WarpgroupWait => format!(
            "wgmma.wait_group.sync.aligned {}",
            d.wait_count().unwrap_or(0)
        ),
        _ => return None,
    })
}

/// Text of an instruction phase 87 created, or `None` for one from the source.
fn injected_text(f: &Function, i: Inst) -> Option<String> {
    injected_ptx(&f.insts[i]).map(|t| t + ";")
}

/// A statement of the source: its byte range `[lo, hi)`.
type Stmt = (u32, u32);

/// What to do to the statements of one module's source, by byte offset: the
/// edits touch statements, never whole lines, so any number of statements
/// per line, statements split over lines and comments between them keep
/// every byte that is not edited.
#[derive(Default)]
struct Edits {
    /// Statements to write before the statement starting here.
    before: BTreeMap<u32, Vec<String>>,
    /// Statements to write after the statement ending here.
    after: BTreeMap<u32, Vec<String>>,
    /// Statements to comment out (start -> end, reason).
    drop: BTreeMap<u32, (u32, &'static str)>,
    /// Statements written out again as these (start -> end, new text; the
    /// original kept as a comment).
    replace: BTreeMap<u32, (u32, Vec<String>)>,
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

fn plan_function(f: &Function, src: &str, e: &mut Edits) {
    let cfg = ori_ir::ControlFlowGraph::compute(f);
    let mut p = Planner {
        f,
        src,
        blocks: PtxasBlocks::compute(f, &cfg),
        order: f.layout.all_insts().collect(),
        pending: Vec::new(),
        anchor: None,
        block: None,
        skip: None,
        rewritten: None,
        consumed: BTreeSet::new(),
    };
    p.drop_removed_sync_ops(e);
    // Serialized with C7511 for a shared accumulator register: each wgmma
    // gets registers of its own; the commit and wait serialization put
    // after it are then written with it.
    let isolate = f.serialized.is_some_and(|z| z.shared_accumulators);
    for k in 0..p.order.len() {
        let i = p.order[k];
        let d = &f.insts[i];
        if p.consumed.contains(&i) || (isolate && p.isolate_wgmma(e, k)) {
            continue;
        }
        // What a block ends with stays in that block: after its last line.
        let b = f.layout.inst_block(i);
        if b != p.block && p.skip.is_none() {
            p.close_block(e, b);
        }
        if let Some(t) = injected_text(f, i) {
            p.injected(k, t);
            continue;
        }
        if let Some((bra, label)) = skip_branch(f, i) {
            p.guard_branch(e, k, bra, label);
            continue;
        }
        let Some(stmt) = d.src else {
            continue;
        };
        if p.guarded_op(e, stmt, d.line, b) {
            continue;
        }
        p.place(e, k, stmt);
    }
    if let (Some(a), false) = (p.anchor, p.pending.is_empty()) {
        e.after.entry(a.1).or_default().append(&mut p.pending);
    }
}

/// The walk of [`plan_function`] over a function's instructions in IR
/// order: the phase-87 statements waiting to be written (`pending`), and
/// where the last source statement went (`anchor`).
struct Planner<'f> {
    f: &'f Function,
    src: &'f str,
    blocks: PtxasBlocks,
    order: Vec<Inst>,
    pending: Vec<String>,
    anchor: Option<Stmt>,
    block: Option<ori_ir::Block>,
    /// The branch of a guarded GMMA op just placed: (its line, branch text, label).
    skip: Option<(u32, String, String)>,
    /// A guarded op written as a branch whose skipped block is still open
    /// (the statement's start): what follows the op there goes before the label.
    rewritten: Option<u32>,
    /// Instructions already written with an isolated wgmma.
    consumed: BTreeSet<Inst>,
}

impl Planner<'_> {
    fn text_of(&self, (lo, hi): Stmt) -> &str {
        self.src.get(lo as usize..hi as usize).unwrap_or("")
    }

    /// Source instructions the passes removed (a serialized function's own
    /// fences, commits and waits, and the wgmmas whose results nothing
    /// reads, R-dead-wgmma) are commented out.
    fn drop_removed_sync_ops(&self, e: &mut Edits) {
        let placed: BTreeSet<Inst> = self.order.iter().copied().collect();
        for (i, d) in self.f.insts.iter() {
            let from_source = injected_text(self.f, i).is_none();
            if let (Some((lo, hi)), true) = (d.src, from_source && !placed.contains(&i)) {
                if d.opcode == Opcode::WgmmaMmaAsync {
                    e.drop
                        .insert(lo, (hi, "removed as dead code (nothing reads its results)"));
                } else if d.opcode.is_gmma_family() {
                    e.drop.insert(lo, (hi, "removed by serialization"));
                }
            }
        }
    }

    /// A wgmma serialized for a shared accumulator (fence before it, commit
    /// and wait after): written with registers of its own. Whether it was.
    fn isolate_wgmma(&mut self, e: &mut Edits, k: usize) -> bool {
        let (f, i) = (self.f, self.order[k]);
        let (Opcode::WgmmaMmaAsync, Some(stmt)) = (f.insts[i].opcode, f.insts[i].src) else {
            return false;
        };
        let after: Vec<Inst> = self.order[k + 1..].iter().take(2).copied().collect();
        let serialized_after = after.len() == 2
            && f.insts[after[0]].opcode == Opcode::WarpgroupCommitBatch
            && f.insts[after[1]].opcode == Opcode::WarpgroupWait;
        let fence_before =
            self.pending.last().map(String::as_str) == Some("wgmma.fence.sync.aligned;");
        let (true, true, Some(v)) = (
            serialized_after,
            fence_before,
            isolated_wgmma(f, self.text_of(stmt)),
        ) else {
            return false;
        };
        self.pending.pop();
        if !self.pending.is_empty() {
            e.before
                .entry(stmt.0)
                .or_default()
                .append(&mut self.pending);
        }
        e.replace.insert(stmt.0, (stmt.1, v));
        self.consumed.extend(after);
        self.anchor = Some(stmt);
        self.block = f.layout.inst_block(i);
        true
    }

    /// A new block: what is pending belongs to the previous one.
    fn close_block(&mut self, e: &mut Edits, b: Option<ori_ir::Block>) {
        if let (Some(l), false) = (self.rewritten.take(), self.pending.is_empty()) {
            if let Some((_, v)) = e.replace.get_mut(&l) {
                let label = v.pop();
                v.extend(
                    self.pending
                        .drain(..)
                        .map(|t| format!("{t} // ori: injected")),
                );
                v.extend(label);
            }
        }
        if let (Some(a), false) = (self.anchor, self.pending.is_empty()) {
            e.after.entry(a.1).or_default().append(&mut self.pending);
        }
        self.block = b;
    }

    /// A statement phase 87 made. A commit it puts before a wait is left to
    /// the wait (ptxas closes the stage there itself) when the wait is the
    /// user's, or when no wgmma precedes it in its block as ptxas sees it:
    /// written there, it would close an empty group and cost a dummy wgmma
    /// and an arrive (`heldout4_22`).
    fn injected(&mut self, k: usize, t: String) {
        let f = self.f;
        let next = self.order.get(k + 1).map(|n| f.insts[*n].opcode);
        let implicit_commit = f.insts[self.order[k]].opcode == Opcode::WarpgroupCommitBatch
            && next.is_some_and(|o| o.is_wait())
            && (next == Some(Opcode::WgmmaWaitGroup)
                || !wgmma_before_in_block(f, &self.blocks, &self.order, k));
        if !implicit_commit {
            self.pending.push(t);
        }
    }

    /// The branch the front end made of `@p op`: it stands for the guarded
    /// statement that follows it.
    fn guard_branch(&mut self, e: &mut Edits, k: usize, bra: String, label: String) {
        let f = self.f;
        if let Some(op) = self.order[k + 1..].iter().find_map(|n| f.insts[*n].src) {
            if !self.pending.is_empty() {
                e.before.entry(op.0).or_default().append(&mut self.pending);
            }
            self.anchor = Some(op);
        }
        self.skip = Some((f.insts[self.order[k]].line, bra, label));
    }

    /// The guarded op after its branch: when something goes between the
    /// guard and the op, the branch ptxas would make of `@p op` is written
    /// explicitly. Whether it was.
    fn guarded_op(
        &mut self,
        e: &mut Edits,
        stmt: Stmt,
        line: u32,
        b: Option<ori_ir::Block>,
    ) -> bool {
        let Some((at, bra, label)) = self.skip.take() else {
            return false;
        };
        if at != line || self.pending.is_empty() {
            return false;
        }
        let op = self
            .text_of(stmt)
            .trim()
            .trim_start_matches(|c: char| !c.is_whitespace())
            .trim()
            .to_string();
        let mut v = vec![format!("{bra} // ori: the guarded op as a branch")];
        v.extend(
            self.pending
                .drain(..)
                .map(|t| format!("{t} // ori: injected")),
        );
        v.push(op);
        v.push(format!("{label}:"));
        e.replace.insert(stmt.0, (stmt.1, v));
        self.rewritten = Some(stmt.0);
        self.anchor = Some(stmt);
        self.block = b;
        true
    }

    /// A source statement: pending statements go just before it, unless
    /// phase 87 moved it (a sync op moved up, or a statement moved below a
    /// later one: written at its new place, the original commented out).
    fn place(&mut self, e: &mut Edits, k: usize, stmt: Stmt) {
        let (f, i) = (self.f, self.order[k]);
        let line = f.insts[i].line;
        if moved_up(f, &self.order[k + 1..], i, stmt, self.anchor) {
            let text = self.text_of(stmt).trim().to_string();
            self.pending
                .push(format!("{text} // ori: moved up from line {line}"));
            e.drop.insert(stmt.0, (stmt.1, "moved up"));
            return;
        }
        match self.anchor {
            // In source order: injected statements go just before it.
            Some(a) if stmt.0 < a.0 => {
                // Moved below a later statement: write it at its new place.
                let text = self.text_of(stmt).trim().to_string();
                let slot = e.after.entry(a.1).or_default();
                slot.append(&mut self.pending);
                slot.push(format!("{text} // ori: moved from line {line}"));
                e.drop.insert(stmt.0, (stmt.1, "moved"));
            }
            _ => {
                if !self.pending.is_empty() {
                    e.before
                        .entry(stmt.0)
                        .or_default()
                        .append(&mut self.pending);
                }
                self.anchor = Some(stmt);
            }
        }
    }
}

/// Whether `i`, at statement `stmt`, is the user's fence, commit or wait
/// that phase 87 moved up above statements that precede it in the source
/// (R-hoist-commit; `rest` is the IR order after it). Such an op is written
/// at its new place rather than those statements moved down below it: a
/// sync op has no operands a scope could hide, while a plain statement moved
/// out of an inline-asm `{ ... }` block loses the `.reg` it declares.
fn moved_up(f: &Function, rest: &[Inst], i: Inst, stmt: Stmt, anchor: Option<Stmt>) -> bool {
    let op = f.insts[i].opcode;
    op.is_gmma_family()
        && op != Opcode::WgmmaMmaAsync
        && rest
            .iter()
            .find_map(|n| f.insts[*n].src)
            .is_some_and(|next| next.0 < stmt.0 && anchor.is_none_or(|a| next.0 > a.0))
}

/// Print the module's source with the passes' decisions written in.
pub fn emit_module(m: &Module, src: &str) -> String {
    let mut e = Edits::default();
    for f in m.funcs.values().filter(|f| f.has_body) {
        plan_function(f, src, &mut e);
    }
    Writer::new(src).write(&e)
}

/// One edit, at a byte offset of the source.
enum Event<'a> {
    /// Statements written after the one that ends here, or (`true`), when
    /// the rest of its line is blank or a comment, at the end of that line,
    /// on lines of their own.
    After(&'a [String], bool),
    /// Statements written before the statement starting here.
    Before(&'a [String]),
    /// The statement `[here, end)` commented out.
    Drop(u32, &'static str),
    /// The statement `[here, end)` written out again as these statements.
    Replace(u32, &'a [String]),
}

/// Writes the source with the edits: every byte outside them as it was. A
/// statement alone on its line gets its additions on lines of their own at
/// its indentation (as a person would write them); one that shares its line
/// gets them inline, in `/* */` comments where a note is needed.
struct Writer<'s> {
    src: &'s str,
    out: String,
    /// Bytes of `src` written so far.
    at: usize,
}

/// The note on a statement of its own line that ori injected.
const INJECTED_NOTE: &str = "// ori: injected";

/// `t`, with ori's note, for use inside a line: a `//` note becomes `/* */`.
fn inline(t: &str) -> String {
    match t.split_once("// ori:") {
        Some((code, note)) => format!("{}/* ori:{} */", code, note.trim_end()),
        None => format!("{t} /* ori: injected */"),
    }
}

/// `t`, with ori's note, for a line of its own.
fn own_line(t: &str) -> String {
    if t.contains("// ori:") {
        t.to_string()
    } else {
        format!("{t} {INJECTED_NOTE}")
    }
}

impl<'s> Writer<'s> {
    fn new(src: &'s str) -> Self {
        Writer {
            src,
            out: String::with_capacity(src.len() + src.len() / 8),
            at: 0,
        }
    }

    fn line_start(&self, o: usize) -> usize {
        self.src[..o].rfind('\n').map_or(0, |k| k + 1)
    }

    fn line_end(&self, o: usize) -> usize {
        self.src[o..].find('\n').map_or(self.src.len(), |k| o + k)
    }

    /// The whitespace that opens the line holding `o`.
    fn indent(&self, o: usize) -> &'s str {
        let s = &self.src[self.line_start(o)..];
        &s[..s.len() - s.trim_start_matches([' ', '\t']).len()]
    }

    /// Nothing but whitespace between the line's start and `o`.
    fn first_on_line(&self, o: usize) -> bool {
        self.src[self.line_start(o)..o].trim().is_empty()
    }

    /// Nothing but whitespace or a `//` comment between `o` and the line's end.
    fn last_on_line(&self, o: usize) -> bool {
        let rest = self.src[o..self.line_end(o)].trim();
        rest.is_empty() || rest.starts_with("//")
    }

    fn copy_to(&mut self, o: usize) {
        if o > self.at {
            self.out.push_str(&self.src[self.at..o]);
            self.at = o;
        }
    }

    fn write(mut self, e: &'s Edits) -> String {
        let mut events: Vec<(usize, u8, Event<'s>)> = Vec::new();
        for (&hi, v) in &e.after {
            let hi = hi as usize;
            let own = self.last_on_line(hi);
            let at = if own { self.line_end(hi) } else { hi };
            events.push((at, 0, Event::After(v, own)));
        }
        for (&lo, v) in &e.before {
            events.push((lo as usize, 1, Event::Before(v)));
        }
        for (&lo, &(hi, why)) in &e.drop {
            events.push((lo as usize, 2, Event::Drop(hi, why)));
        }
        for (&lo, (hi, v)) in &e.replace {
            events.push((lo as usize, 2, Event::Replace(*hi, v)));
        }
        events.sort_by_key(|(o, class, _)| (*o, *class));
        for (o, _, ev) in events {
            if o < self.at {
                continue; // inside a statement already rewritten
            }
            self.copy_to(o);
            match ev {
                Event::After(v, own) => self.after(o, v, own),
                Event::Before(v) => self.before(o, v),
                Event::Drop(hi, why) => self.drop(o, hi as usize, why),
                Event::Replace(hi, v) => self.replace(o, hi as usize, v),
            }
        }
        self.copy_to(self.src.len());
        self.out
    }

    fn after(&mut self, o: usize, v: &[String], own: bool) {
        if own {
            let indent = self.indent(o);
            for t in v {
                self.out.push('\n');
                self.out.push_str(indent);
                self.out.push_str(&own_line(t));
            }
        } else {
            for t in v {
                self.out.push(' ');
                self.out.push_str(&inline(t));
            }
        }
    }

    fn before(&mut self, o: usize, v: &[String]) {
        if self.first_on_line(o) {
            let indent = self.indent(o);
            for t in v {
                self.out.push_str(&own_line(t));
                self.out.push('\n');
                self.out.push_str(indent);
            }
        } else {
            for t in v {
                self.out.push_str(&inline(t));
                self.out.push(' ');
            }
        }
    }

    /// The statement `[lo, hi)` is alone on one line (none split over lines).
    fn alone(&self, lo: usize, hi: usize) -> bool {
        self.first_on_line(lo) && self.last_on_line(hi) && !self.src[lo..hi].contains('\n')
    }

    fn drop(&mut self, lo: usize, hi: usize, why: &str) {
        // A statement ori itself injected (the fix-it applied to its own
        // output, `ori::fixit_ptx`'s later rounds) leaves no trace: its
        // line goes, indentation and newline included.
        let rest = &self.src[hi..self.line_end(hi)];
        if self.alone(lo, hi) && rest.trim() == INJECTED_NOTE {
            let indent = &self.src[self.line_start(lo)..lo];
            if self.out.ends_with(indent) {
                self.out.truncate(self.out.len() - indent.len());
                self.at = (self.line_end(hi) + 1).min(self.src.len());
                return;
            }
        }
        if self.alone(lo, hi) {
            // The whole line, its trailing comment included, becomes one.
            let end = self.line_end(hi);
            self.out.push_str("// ori: ");
            self.out.push_str(why);
            self.out.push_str(": ");
            self.out.push_str(&self.src[lo..end]);
            self.at = end;
        } else {
            let stmt = &self.src[lo..hi];
            self.out.push_str(&format!("/* ori: {why}: {stmt} */"));
            self.at = hi;
        }
    }

    fn replace(&mut self, lo: usize, hi: usize, v: &[String]) {
        if self.alone(lo, hi) {
            let end = self.line_end(hi);
            let indent = self.indent(lo);
            self.out.push_str("// ori: rewritten: ");
            self.out.push_str(&self.src[lo..end]);
            for t in v {
                self.out.push('\n');
                if !t.ends_with(':') {
                    self.out.push_str(indent);
                }
                self.out.push_str(t);
            }
            self.at = end;
        } else {
            let stmt = &self.src[lo..hi];
            self.out.push_str(&format!("/* ori: rewritten: {stmt} */"));
            for t in v {
                self.out.push(' ');
                self.out.push_str(&inline(t));
            }
            self.at = hi;
        }
    }
}
