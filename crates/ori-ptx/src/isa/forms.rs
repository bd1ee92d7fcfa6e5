//! One form of the instruction table, read from a line of `table.txt`,
//! and how an instruction's modifiers and operands are matched against it.

use crate::ast;

/// A state space an instruction reads or writes memory in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Space {
    /// `.global`.
    Global,
    /// `.shared` (`::cta` or `::cluster`).
    Shared,
    /// `.local`.
    Local,
    /// `.param`.
    Param,
    /// `.const`.
    Const,
}

/// What a form does besides its register operands.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Effects {
    /// State spaces whose memory it reads.
    pub reads: Vec<Space>,
    /// State spaces whose memory it writes.
    pub writes: Vec<Space>,
    /// It runs in (or fences) the async proxy: TMA, bulk copies.
    pub async_proxy: bool,
    /// It operates on an mbarrier or a barrier, or among a warp's threads.
    pub barrier: bool,
    /// It orders memory (a fence, a wait, an acquire or release).
    pub order: bool,
    /// The PTX ISA version the form needs (`(0, 0)`: any).
    pub ptx: (u32, u32),
    /// How ptxas names the feature that needs it, after the family
    /// (`with destination state space as .shared::cta`).
    pub feature: Option<String>,
}

/// One modifier slot: a set of words, one of which is given (or none, for
/// an optional slot).
#[derive(Clone, Debug, PartialEq)]
pub struct SlotSpec {
    /// The words the slot takes, without dots.
    pub choices: Vec<&'static str>,
    /// The slot may be left empty.
    pub optional: bool,
    /// ptxas's message when the slot is left empty (`{}` stands for the
    /// family), from its set's `! MESSAGE`.
    pub missing: Option<&'static str>,
}

impl SlotSpec {
    /// The slot holds a state space (kept in the ISA's order).
    fn is_space(&self) -> bool {
        self.choices.iter().all(|c| is_space_word(c))
    }
}

/// Whether a modifier names a state space.
pub fn is_space_word(m: &str) -> bool {
    matches!(
        m.split("::").next().unwrap_or(m),
        "global" | "shared" | "local" | "param" | "const"
    )
}

/// What an operand of a form is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// A register result (written).
    Result,
    /// A vector (or single) register result.
    VectorResult,
    /// A register result or the sink `_`.
    ResultOrSink,
    /// A value read: a register, immediate, vector or symbol.
    Read,
    /// A memory address `[a]` (its base register is read).
    Memory,
    /// A memory address, or a register holding one (ptxas takes both
    /// where a TMA copy names shared memory or its mbarrier).
    MemoryOrRegister,
    /// A tensor `[map, {coords}]` (every register in it is read).
    Tensor,
}

impl OperandKind {
    /// The operand is written.
    pub fn is_result(self) -> bool {
        matches!(
            self,
            OperandKind::Result | OperandKind::VectorResult | OperandKind::ResultOrSink
        )
    }
}

/// When an operand is present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Presence {
    /// Always.
    Always,
    /// Optionally.
    Optional,
    /// Exactly when the modifier is given.
    With(&'static str),
}

/// One operand of a form.
#[derive(Clone, Debug, PartialEq)]
pub struct OperandSpec {
    /// What it is.
    pub kind: OperandKind,
    /// When it is there.
    pub presence: Presence,
    /// The type the grammar fuzzer writes there (`b32`, `pred`, `imm`,
    /// ...); `sink` also means only `_` may stand there.
    pub ty: Option<&'static str>,
}

/// One form of an instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    /// The opcode and the modifiers of its name, dotted
    /// (`cp.reduce.async.bulk.tensor`).
    pub family: &'static str,
    /// The opcode (`cp`).
    pub opcode: &'static str,
    /// The family's modifiers after the opcode (`reduce`, `async`, ...).
    pub prefix: Vec<&'static str>,
    /// The other modifiers' slots, in the ISA's order.
    pub slots: Vec<SlotSpec>,
    /// Modifiers are not checked here (`*`).
    pub open: bool,
    /// The operands, in order.
    pub operands: Vec<OperandSpec>,
    /// Any number of operands may follow the listed ones (`...`).
    pub more: bool,
    /// Memory, proxy and barrier effects.
    pub effects: Effects,
}

impl Form {
    /// Whether some slot of the form takes `m` (every word, when open).
    pub fn knows(&self, m: &str) -> bool {
        self.open || self.slots.iter().any(|s| s.choices.contains(&m))
    }

    /// Fit `mods` (the modifiers after the family's) into the slots: each
    /// in a slot that takes it, at most one a slot, every slot that is not
    /// optional filled, the state spaces in the slots' order.
    pub fn match_modifiers(&self, mods: &[&str]) -> Result<(), super::Mismatch> {
        if self.open {
            return Ok(());
        }
        let mut used = vec![false; self.slots.len()];
        if !self.assign(mods, &mut used, None) {
            let spaces_fit = self.assign_unordered(mods);
            return Err(if spaces_fit {
                super::Mismatch::StateSpace
            } else {
                super::Mismatch::Combination
            });
        }
        Ok(())
    }

    /// The slot messages of the required slots `mods` leave empty, when
    /// they fit the form otherwise.
    pub fn missing_messages(&self, mods: &[&str]) -> Option<Vec<&'static str>> {
        if self.open {
            return None;
        }
        let mut all_optional = self.clone();
        for s in &mut all_optional.slots {
            s.optional = true;
        }
        let mut used = vec![false; self.slots.len()];
        if !all_optional.assign(mods, &mut used, None) {
            return None;
        }
        let empty = self
            .slots
            .iter()
            .zip(&used)
            .filter(|(s, u)| !s.optional && !**u);
        Some(empty.filter_map(|(s, _)| s.missing).collect())
    }

    /// Backtracking assignment of `mods` to free slots; `last_space`: the
    /// slot of the previous state space.
    fn assign(&self, mods: &[&str], used: &mut [bool], last_space: Option<usize>) -> bool {
        let Some((m, rest)) = mods.split_first() else {
            return self
                .slots
                .iter()
                .zip(used.iter())
                .all(|(s, &u)| u || s.optional);
        };
        for k in 0..self.slots.len() {
            let slot = &self.slots[k];
            if used[k] || !slot.choices.contains(m) {
                continue;
            }
            let space = slot.is_space();
            if space && last_space.is_some_and(|l| k < l) {
                continue;
            }
            used[k] = true;
            if self.assign(rest, used, if space { Some(k) } else { last_space }) {
                return true;
            }
            used[k] = false;
        }
        false
    }

    /// Whether `mods` fit if state spaces could come in any order (tells
    /// a misordered space from a wrong combination).
    fn assign_unordered(&self, mods: &[&str]) -> bool {
        let mut plain = self.clone();
        for s in &mut plain.slots {
            if s.is_space() {
                s.choices.push("\u{0}");
            }
        }
        let mut used = vec![false; plain.slots.len()];
        let mut sorted: Vec<&str> = mods.to_vec();
        sorted.sort_by_key(|m| !is_space_word(m));
        // Spaces first, each to any space slot: the order check sees
        // increasing slots only when tried in slot order, so try both.
        plain.assign(&sorted, &mut used, None) || {
            sorted.reverse();
            let mut used = vec![false; plain.slots.len()];
            plain.assign(&sorted, &mut used, None)
        }
    }

    /// The operand specs present with modifiers `mods`: (required count,
    /// optional count).
    fn counts(&self, mods: &[ori_ir::Symbol]) -> (usize, usize) {
        let mut need = 0;
        let mut opt = 0;
        for o in &self.operands {
            match &o.presence {
                Presence::Always => need += 1,
                Presence::Optional => opt += 1,
                Presence::With(m) => need += usize::from(mods.iter().any(|x| x == *m)),
            }
        }
        (need, opt)
    }

    /// Whether operands `ops` fit the form, with modifiers `mods`: their
    /// count, and the kind of each listed one (an address where memory is
    /// read or written, a tensor where a tensor map is, a register where a
    /// result is written).
    pub fn check_operands(&self, mods: &[ori_ir::Symbol], ops: &[ast::Operand]) -> bool {
        let (need, opt) = self.counts(mods);
        let n = ops.len();
        if n < need || (!self.more && n > need + opt) {
            return false;
        }
        ops.iter().zip(self.present(mods, n)).all(|(op, s)| {
            fits(s.kind, &op.kind)
                && match s.ty {
                    Some("sink") => matches!(op.kind, ast::OperandKind::Sink),
                    Some("pair") => matches!(op.kind, ast::OperandKind::PredPair(_)),
                    _ => true,
                }
        })
    }

    /// The operand specs present with modifiers `mods` and `n` operands,
    /// in order: the optional ones, first to last, as far as `n` leaves
    /// room (`cp.async [d], [s], 16, policy` has no src-size).
    pub fn present<'a>(
        &'a self,
        mods: &'a [ori_ir::Symbol],
        n: usize,
    ) -> impl Iterator<Item = &'a OperandSpec> {
        let (need, _) = self.counts(mods);
        let mut room = n.saturating_sub(need);
        self.operands.iter().filter(move |o| match &o.presence {
            Presence::With(m) => mods.iter().any(|x| x == *m),
            Presence::Optional if room > 0 => {
                room -= 1;
                true
            }
            Presence::Optional => false,
            Presence::Always => true,
        })
    }

    /// Whether operand `k` of an instruction of this form is written.
    pub fn writes_operand(&self, k: usize, op: &ast::OperandKind) -> bool {
        // Results come first in every form, and are always present.
        self.operands.get(k).is_some_and(|s| s.kind.is_result())
            && !matches!(op, ast::OperandKind::Address { .. })
    }
}

/// Whether an operand of kind `op` can stand where the form has `want`.
fn fits(want: OperandKind, op: &ast::OperandKind) -> bool {
    use ast::OperandKind as K;
    let writable = |o: &K| matches!(o, K::Reg(_) | K::PredPair(_) | K::Sink);
    match want {
        OperandKind::Result => matches!(op, K::Reg(_) | K::PredPair(_)),
        OperandKind::ResultOrSink => writable(op),
        OperandKind::VectorResult => match op {
            K::Vector(v) => v.iter().all(|o| writable(&o.kind)),
            o => matches!(o, K::Reg(_)),
        },
        OperandKind::Read => !matches!(op, K::Address { .. } | K::AddressList(_) | K::Sink),
        OperandKind::Memory => matches!(op, K::Address { .. }),
        OperandKind::MemoryOrRegister => matches!(op, K::Address { .. } | K::Reg(_)),
        OperandKind::Tensor => matches!(op, K::AddressList(_)),
    }
}

/// The table's named sets, parsed from their lines (`set NAME = a|b|...
/// ! MESSAGE`).
pub(crate) fn parse_sets(lines: &[super::index::Line]) -> Result<SetList, String> {
    let mut sets: SetList = Vec::new();
    for line in lines {
        let at = |e: &str| format!("line {}: {e}", line.number);
        let def = line.text().strip_prefix("set").unwrap_or("");
        let (name, words) = def.split_once('=').ok_or_else(|| at("set without ="))?;
        let (words, missing) = match words.split_once('!') {
            Some((w, m)) => (w, Some(m.trim())),
            None => (words, None),
        };
        let words = words.split('|').map(str::trim).collect();
        sets.push((name.trim(), words, missing));
    }
    Ok(sets)
}

/// The named sets, in the table's order.
pub(crate) type SetList = Vec<(&'static str, Vec<&'static str>, Option<&'static str>)>;

/// The named sets: name, words, and the message for a slot left empty.
type Sets = [(&'static str, Vec<&'static str>, Option<&'static str>)];

pub(crate) fn parse_form(line: &'static str, sets: &Sets) -> Result<Form, String> {
    // `:` also appears in `shared::cta`: sections are split on " :".
    let pieces: Vec<&'static str> = split_sections(line);
    let [head, operands, effects] = pieces[..] else {
        return Err(format!(
            "want FAMILY SLOTS : OPERANDS : EFFECTS, got `{line}`"
        ));
    };
    let mut words = head.split_whitespace();
    let family = words.next().ok_or("no family")?;
    let mut names = family.split('.');
    let opcode = names.next().ok_or("no opcode")?;
    let prefix: Vec<&'static str> = names.collect();
    let mut slots = Vec::new();
    let mut open = false;
    for w in words {
        if w == "*" {
            open = true;
            continue;
        }
        slots.push(parse_slot(w, sets)?);
    }
    let (operands, more) = parse_operands(operands)?;
    Ok(Form {
        family,
        opcode,
        prefix,
        slots,
        open,
        operands,
        more,
        effects: parse_effects(effects)?,
    })
}

/// `head : operands : effects`, split on colons with blanks round them.
fn split_sections(line: &'static str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(k) = rest.find(" :") {
        out.push(rest[..k].trim());
        rest = &rest[k + 2..];
    }
    out.push(rest.trim());
    out
}

fn parse_slot(w: &'static str, sets: &Sets) -> Result<SlotSpec, String> {
    let (optional, body) = match w.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        Some(b) => (true, b),
        None => (false, w),
    };
    let mut choices = Vec::new();
    let mut missing = None;
    for alt in body.split('|') {
        match alt.strip_prefix('$') {
            Some(name) => {
                let set = sets.iter().find(|(n, ..)| *n == name);
                let (_, words, m) = set.ok_or_else(|| format!("unknown set ${name}"))?;
                choices.extend(words.iter().copied());
                missing = missing.or(*m);
            }
            None => choices.push(alt),
        }
    }
    Ok(SlotSpec {
        choices,
        optional,
        missing,
    })
}

fn parse_operands(text: &'static str) -> Result<(Vec<OperandSpec>, bool), String> {
    let mut out = Vec::new();
    let mut more = false;
    for w in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if w == "..." {
            more = true;
            continue;
        }
        let (w, presence) = if let Some((k, m)) = w.split_once('@') {
            (k, Presence::With(m))
        } else if let Some(k) = w.strip_suffix('?') {
            (k, Presence::Optional)
        } else {
            (w, Presence::Always)
        };
        let (w, ty) = match w.split_once(':') {
            Some((k, t)) => (k, Some(t)),
            None => (w, None),
        };
        let kind = match w {
            "d" => OperandKind::Result,
            "dv" => OperandKind::VectorResult,
            "ds" => OperandKind::ResultOrSink,
            "r" => OperandKind::Read,
            "m" => OperandKind::Memory,
            "mr" => OperandKind::MemoryOrRegister,
            "t" => OperandKind::Tensor,
            _ => return Err(format!("unknown operand kind `{w}`")),
        };
        out.push(OperandSpec { kind, presence, ty });
    }
    Ok((out, more))
}

fn parse_spaces(list: &str) -> Result<Vec<Space>, String> {
    list.split('|')
        .map(|s| match s {
            "global" => Ok(Space::Global),
            "shared" => Ok(Space::Shared),
            "local" => Ok(Space::Local),
            "param" => Ok(Space::Param),
            "const" => Ok(Space::Const),
            _ => Err(format!("unknown space `{s}`")),
        })
        .collect()
}

fn parse_effects(text: &str) -> Result<Effects, String> {
    let mut e = Effects::default();
    for w in text.split_whitespace() {
        match w.split_once('=') {
            Some(("reads", l)) => e.reads = parse_spaces(l)?,
            Some(("writes", l)) => e.writes = parse_spaces(l)?,
            Some(("proxy", "async")) => e.async_proxy = true,
            Some(("ptx", v)) => {
                let (v, feature) = v.split_once('/').unwrap_or((v, ""));
                e.feature = Some(feature.replace('_', " ")).filter(|f| !f.is_empty());
                let (a, b) = v.split_once('.').ok_or("ptx=M.m")?;
                e.ptx = (
                    a.parse().map_err(|_| "ptx major")?,
                    b.parse().map_err(|_| "ptx minor")?,
                );
            }
            None if w == "barrier" => e.barrier = true,
            None if w == "order" => e.order = true,
            _ => return Err(format!("unknown effect `{w}`")),
        }
    }
    Ok(e)
}
