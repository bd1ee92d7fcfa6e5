//! The PTX instruction table: every instruction family ori knows, its
//! modifier slots, its operands and what each one reads or writes.
//!
//! It exists so that one place says what an instruction is. The table is
//! data (`table.txt`, written in the PTX ISA's own notation, one form per
//! line); this module reads it once and answers three questions: which
//! form an instruction's opcode and modifiers take ([`Table::classify`]),
//! whether its operands fit that form ([`Form::check_operands`]), and which
//! operands it writes ([`Form::writes_operand`]). The lowering takes every
//! register role from here, so an instruction the table does not know is a
//! clear error at its line and column, never an IR the verifier rejects;
//! the grammar fuzzer (`cargo xtask fuzz-grammar`) generates statements
//! from the same forms.
//!
//! Matching follows ptxas 13.0.88 (probed): the family's words come first
//! and in order (`cp.reduce.async.bulk.tensor`); the other modifiers may
//! come in any order (`.add.tile` or `.tile.add`), except that state
//! spaces keep the ISA's order, destination first (`.shared::cta.global`
//! on a reduce-store is "State space incorrect").

mod forms;
mod index;
mod opcodes;
mod specials;

pub use forms::{
    is_space_word, Effects, Form, OperandKind, OperandSpec, Presence, SlotSpec, Space,
};
pub use opcodes::OPCODES;
pub use specials::is_special_register;

use std::sync::OnceLock;

/// The table's source text.
pub const TABLE_TEXT: &str = include_str!("table.txt");

/// The table: its lines told apart at compile time ([`index`]), its sets
/// and forms parsed on first use. A process that compiles one small kernel
/// needs the forms of a few opcodes only; parsing all of them was a sixth
/// of such a run.
#[derive(Debug)]
pub struct Table {
    /// The named sets, parsed with the first form.
    sets: OnceLock<forms::SetList>,
    /// The forms parsed so far, by [`FormId`].
    parsed: [OnceLock<Form>; index::FORM_COUNT],
}

/// Why an opcode and its modifiers fit no form of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// A modifier no form of the family has (ptxas: `Unknown modifier`).
    UnknownModifier(String),
    /// The state spaces are in an order no form takes.
    StateSpace,
    /// Every modifier is known, but no form takes this combination.
    Combination,
    /// A modifier is given twice, or two fill the same slot.
    Duplicate(String),
    /// The opcode has families, but its first modifiers spell none of
    /// them (`cp.frob`, `mbarrier .init` with a blank in the name).
    NoFamily(String),
    /// Required slots left empty, with ptxas's message for each
    /// (`Reduction operation is required for instruction '{}'`).
    Missing(Vec<&'static str>),
}

impl Mismatch {
    /// The messages, in ptxas's wording, for an instruction of `family`.
    pub fn messages(&self, family: &str) -> Vec<String> {
        match self {
            Mismatch::NoFamily(m) => vec![
                format!("Unknown modifier '.{m}'"),
                format!("Not a name of any known instruction: '{family}'"),
            ],
            Mismatch::Missing(m) => m
                .iter()
                .flat_map(|t| t.split(" || "))
                .map(|t| t.replace("{}", family))
                .collect(),
            other => vec![other.message(family)],
        }
    }

    /// The first message, in ptxas's wording, for an instruction of `family`.
    pub fn message(&self, family: &str) -> String {
        match self {
            Mismatch::UnknownModifier(m) | Mismatch::NoFamily(m) => {
                format!("Unknown modifier '.{m}'")
            }
            Mismatch::StateSpace => format!("State space incorrect for instruction '{family}'"),
            Mismatch::Combination => {
                format!("Unexpected instruction types specified for '{family}'")
            }
            Mismatch::Duplicate(m) => {
                format!("Duplicate modifier '.{m}' for instruction '{family}'")
            }
            Mismatch::Missing(m) => m.first().map_or(String::new(), |t| t.replace("{}", family)),
        }
    }
}

/// The form an instruction takes: the index of a form in the table ([`Table::form`]).
pub type FormId = usize;

impl Table {
    /// The table.
    pub fn get() -> &'static Table {
        static TABLE: Table = Table {
            sets: OnceLock::new(),
            parsed: [const { OnceLock::new() }; index::FORM_COUNT],
        };
        &TABLE
    }

    /// The form `k`, parsed on first use.
    pub fn form(&self, k: FormId) -> &Form {
        self.parsed[k].get_or_init(|| {
            let line = index::FORMS[k];
            // The text is part of the crate and a unit test parses every
            // form: a malformed line cannot reach a user.
            let sets = self.sets.get_or_init(|| {
                forms::parse_sets(&index::SETS).unwrap_or_else(|e| panic!("isa/table.txt: {e}"))
            });
            forms::parse_form(line.text(), sets)
                .unwrap_or_else(|e| panic!("isa/table.txt: line {}: {e}", line.number))
        })
    }

    /// How many forms the table has.
    pub fn len(&self) -> usize {
        index::FORM_COUNT
    }

    /// Whether the table has no forms.
    pub fn is_empty(&self) -> bool {
        index::FORM_COUNT == 0
    }

    /// Every form, in the table's order (all parsed).
    pub fn forms(&self) -> impl Iterator<Item = &Form> {
        (0..self.len()).map(|k| self.form(k))
    }

    /// The ids of the forms of `opcode`, in the table's order.
    fn ids_of(&self, opcode: &str) -> impl Iterator<Item = FormId> + '_ {
        let of = |&k: &u16| index::FORMS[usize::from(k)].opcode();
        let first = index::BY_OPCODE.partition_point(|k| of(k) < opcode);
        let run = &index::BY_OPCODE[first..];
        let n = run.partition_point(|k| of(k) == opcode);
        run[..n].iter().map(|&k| usize::from(k))
    }

    /// The line of form `k`.
    fn line(&self, k: FormId) -> index::Line {
        index::FORMS[k]
    }

    /// The forms of the longest family that `opcode` and the first of
    /// `mods` spell (of the first `joined`, those written with no blank
    /// before them), with how many modifiers the family's name takes.
    /// `None`: the opcode has no family in the table (an opcode of the
    /// default form, or no instruction at all).
    pub fn family_of<S: AsRef<str>>(
        &self,
        opcode: &str,
        mods: &[S],
        joined: usize,
    ) -> Option<(&'static str, usize, Vec<FormId>)> {
        // Families are told apart by name, before any form is parsed.
        let mut best: Option<(&'static str, usize)> = None;
        for k in self.ids_of(opcode) {
            let family = self.line(k).family();
            let prefix = family.split('.').skip(1);
            let len = prefix.clone().count();
            if len > mods.len().min(joined) {
                continue;
            }
            let spelled = prefix.zip(mods).all(|(p, m)| p == m.as_ref());
            if spelled && best.is_none_or(|(_, n)| len > n) {
                best = Some((family, len));
            }
        }
        if best.is_none() && self.ids_of(opcode).next().is_some() {
            // The opcode has families, but its modifiers spell none: the
            // first modifier is unknown to it (ptxas: `cp.frob`).
            return Some((opcode_static(opcode), 0, Vec::new()));
        }
        let (family, n) = best?;
        let ids = self
            .ids_of(opcode)
            .filter(|&k| self.line(k).family() == family)
            .collect();
        Some((family, n, ids))
    }

    /// The form `opcode` with `mods` takes (the first `joined` of them
    /// written with no blank before them), or why none fits. `Ok(None)`:
    /// an opcode the table gives no family (the default form: a register
    /// result first, then values read).
    pub fn classify<S: AsRef<str>>(
        &self,
        opcode: &str,
        mods: &[S],
        joined: usize,
    ) -> Result<Option<FormId>, (String, Mismatch)> {
        let Some((family, n, ids)) = self.family_of(opcode, mods, joined) else {
            return Ok(None);
        };
        // `.sync` and `.uni` may be repeated (ptxas 13.0.88 takes
        // `bar.warp.sync.sync`, `redux.sync.or.b32.sync`,
        // `vote.sync.uni.pred.uni`); any other modifier given twice is an
        // error.
        let mut rest: Vec<&str> = Vec::new();
        for m in &mods[n..] {
            let m = m.as_ref();
            if !matches!(m, "sync" | "uni") || !rest.contains(&m) {
                rest.push(m);
            }
        }
        let Some(&first) = ids.first() else {
            let m = mods.first().map_or("", |m| m.as_ref());
            return Err((family.to_string(), Mismatch::NoFamily(m.to_string())));
        };
        let mut space = false;
        for &k in &ids {
            match self.form(k).match_modifiers(&rest) {
                Ok(()) => return Ok(Some(k)),
                Err(e) => space |= e == Mismatch::StateSpace,
            }
        }
        let fam = self.form(first).family.to_string();
        // A modifier no form of the family has is unknown; otherwise the
        // combination is wrong (spaces out of order, or a slot missing or
        // filled twice).
        let known = |m: &str| ids.iter().any(|&k| self.form(k).knows(m));
        if let Some(m) = rest.iter().find(|m| !known(m)) {
            // An unknown type is ptxas's "Unexpected instruction types".
            let why = if is_type_word(m) {
                Mismatch::Combination
            } else {
                Mismatch::UnknownModifier(m.to_string())
            };
            return Err((fam, why));
        }
        let missing = ids
            .iter()
            .filter_map(|&k| self.form(k).missing_messages(&rest))
            .find(|m| !m.is_empty());
        if let Some(m) = missing {
            return Err((fam, Mismatch::Missing(m)));
        }
        let mut seen = Vec::new();
        for m in &rest {
            if seen.contains(m) {
                return Err((fam, Mismatch::Duplicate(m.to_string())));
            }
            seen.push(m);
        }
        Err((
            fam,
            if space {
                Mismatch::StateSpace
            } else {
                Mismatch::Combination
            },
        ))
    }
}

/// A type modifier: `b32`, `u16`, `f16x2`, `bf16`, `e4m3`, `tf32`, ...
fn is_type_word(m: &str) -> bool {
    let digits = m.find(|c: char| c.is_ascii_digit()).unwrap_or(m.len());
    matches!(&m[..digits], "b" | "s" | "u" | "f" | "bf" | "e" | "tf") && digits < m.len()
}

/// The table's own spelling of an opcode (a `'static` string).
fn opcode_static(opcode: &str) -> &'static str {
    Table::get()
        .ids_of(opcode)
        .next()
        .map_or("", |k| index::FORMS[k].opcode())
}

#[cfg(test)]
mod tests;
