//! The table reads, and classifies instructions as ptxas 13.0.88 does.

use super::*;

fn classify(mnemonic: &str) -> Result<Option<FormId>, (String, Mismatch)> {
    let mut words = mnemonic.split('.');
    let op = words.next().unwrap_or("");
    let mods: Vec<&str> = words.collect();
    Table::get().classify(op, &mods, mods.len())
}

#[test]
fn the_table_reads() {
    let t = Table::get();
    assert!(t.len() > 50);
    // Every opcode of the table is one the parser knows.
    for f in t.forms() {
        assert!(crate::parser::OPCODES.contains(&f.opcode), "{}", f.family);
    }
}

/// The lines are told apart before any is parsed: each line's family and
/// opcode, read with byte scans (the table is ASCII), are those its parse
/// names, and the forms found per opcode are the table's, in its order.
#[test]
fn lines_name_the_family_their_form_parses() {
    assert!(TABLE_TEXT.is_ascii());
    let t = Table::get();
    for k in 0..t.len() {
        let (opcode, family) = (t.line(k).opcode(), t.line(k).family());
        assert_eq!((t.form(k).opcode, t.form(k).family), (opcode, family));
        let linear: Vec<FormId> = (0..t.len())
            .filter(|&j| t.line(j).opcode() == opcode)
            .collect();
        assert_eq!(t.ids_of(opcode).collect::<Vec<_>>(), linear, "{opcode}");
    }
    assert_eq!(t.ids_of("no_such_opcode").count(), 0);
    // Every line of the text that is not blank or a comment is a form or
    // a set, with its own number and text.
    let read: Vec<(u32, &str)> = TABLE_TEXT
        .lines()
        .enumerate()
        .map(|(n, l)| (n as u32 + 1, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let indexed: Vec<(u32, &str)> = index::FORMS
        .iter()
        .chain(index::SETS.iter())
        .map(|l| (l.number, l.text()))
        .collect();
    let mut indexed_sorted = indexed.clone();
    indexed_sorted.sort();
    assert_eq!(indexed_sorted, read);
    assert!(index::SETS.iter().all(|l| l.text().starts_with("set ")));
}

#[test]
fn reduce_store_reads_its_operands() {
    let k = classify("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group")
        .unwrap()
        .unwrap();
    let f = Table::get().form(k);
    assert!(f.operands.iter().all(|o| !o.kind.is_result()));
    assert_eq!(f.operands[0].kind, OperandKind::Tensor);
    // Modifiers in any order, as ptxas takes them.
    assert!(
        classify("cp.reduce.async.bulk.tensor.2d.global.add.shared::cta.bulk_group.tile").is_ok()
    );
}

#[test]
fn mismatches_are_named() {
    let e = classify("cp.reduce.async.bulk.tensor.2d.shared::cta.global.add.tile.bulk_group");
    assert_eq!(e.unwrap_err().1, Mismatch::StateSpace);
    let e = classify("cp.frob.u32").unwrap_err();
    assert_eq!(e.1, Mismatch::NoFamily("frob".into()));
    let e = classify("shfl.sync.sideways.b32").unwrap_err();
    assert_eq!(e.1, Mismatch::UnknownModifier("sideways".into()));
    // A family is spelt by words with no blank between them (ptxas:
    // `cp .reduce.async.bulk` is `cp` with unknown modifiers).
    let mods = [
        "reduce",
        "async",
        "bulk",
        "global",
        "shared::cta",
        "bulk_group",
        "add",
        "f32",
    ];
    let e = Table::get().classify("cp", &mods, 0).unwrap_err();
    assert_eq!(e.1, Mismatch::NoFamily("reduce".into()));
    // Not in the table: the default form.
    assert_eq!(classify("add.u32"), Ok(None));
}
