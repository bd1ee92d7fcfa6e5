//! `cargo xtask fuzz-grammar`: the differential grammar fuzzer.
//!
//! It exists to measure the front end against ptxas 13.0.88 on inputs no
//! one wrote by hand. Statements are generated from the instruction table
//! (`ori_ptx::isa`, the forms whose modifiers it lists): valid ones, and
//! near misses (a wrong or missing or repeated modifier, an operand too
//! many or too few, a state space swapped, an operand of the wrong kind),
//! some with blanks and comments between their tokens. Each statement is
//! judged by ptxas and by ori (accept or reject); they must agree, and ori
//! must never end in an internal error or a panic.
//!
//! ptxas starts slowly, so it judges many statements in one kernel, one a
//! line: its errors name their lines, which name the statements. A fatal
//! error (a syntax error) ends its reading, so the statements after it are
//! judged again in the next run. Not every error is given for every
//! statement of a run that has errors: some checks (`st.async` without a
//! completion mechanism) report only their first statement, and none once
//! another statement has an error. So a statement is judged accepted only
//! by a run ptxas ends with success; the statements without an error in a
//! failed run are judged again, without the rejected ones. ori judges each
//! statement alone, in process.

use crate::oracle;
use ori_ptx::isa::{Form, OperandKind, Presence, Table};
use std::collections::BTreeMap;
use std::process::{Command, ExitCode};

/// The kernel every statement is put in: registers of each kind, an
/// mbarrier and a buffer in shared memory.
const HEAD: &str = ".version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p0)
{
.reg .b16 %h<8>;
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
.reg .pred %p<8>;
.shared .align 8 .b64 bar;
";

const TAIL: &str = "ret;\n}\n";

/// Statements per ptxas run.
const BATCH: usize = 150;

/// A deterministic generator (splitmix64): the same seed, the same inputs.
pub struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// One generated statement: its text and what was done to it.
#[derive(Clone, Debug)]
pub struct Statement {
    /// The statement, `;` included, on one line; or a whole function.
    pub text: String,
    /// `valid`, or the mutation made.
    pub how: &'static str,
    /// The family it was drawn from (`closed`, the table's closed forms;
    /// `function`; or an open family, `crate::fuzz_open`).
    pub family: &'static str,
    /// `text` is a function of its own (`crate::fuzz_functions`), not a
    /// statement of the shared kernel.
    pub function: bool,
}

/// The forms the generator draws from: those whose modifiers the table
/// lists.
fn closed_forms() -> Vec<&'static Form> {
    Table::get().forms().filter(|f| !f.open).collect()
}

/// Modifiers chosen for `form`: one word per required slot, some of the
/// optional ones, in the table's order.
fn choose_modifiers(rng: &mut Rng, form: &Form) -> Vec<&'static str> {
    let mut mods = Vec::new();
    for s in &form.slots {
        if s.optional && rng.chance(50) {
            continue;
        }
        mods.push(*rng.pick(&s.choices));
    }
    mods
}

/// The dimension a `.Nd` modifier gives (tensor coordinates).
fn dims(mods: &[&str]) -> usize {
    mods.iter()
        .find_map(|m| m.strip_suffix('d').and_then(|d| d.parse().ok()))
        .unwrap_or(2)
}

/// An operand of `kind` and type `ty`.
fn operand(rng: &mut Rng, kind: OperandKind, ty: Option<&str>, mods: &[&str]) -> String {
    let k = rng.below(8);
    match (kind, ty) {
        (OperandKind::MemoryOrRegister, _) if rng.chance(30) => format!("%rd{k}"),
        (OperandKind::Memory | OperandKind::MemoryOrRegister, _) => format!("[%rd{k}]"),
        (OperandKind::Tensor, _) => {
            let c: Vec<String> = (0..dims(mods)).map(|i| format!("%r{i}")).collect();
            format!("[%rd{k}, {{{}}}]", c.join(", "))
        }
        (_, Some("sink")) => "_".into(),
        (OperandKind::ResultOrSink, _) if rng.chance(30) => "_".into(),
        (_, Some("pred")) => format!("%p{k}"),
        (_, Some("b64" | "rb64")) => format!("%rd{k}"),
        (_, Some("rb32")) => format!("%r{k}"),
        (_, Some("align")) => rng.pick(&["1", "4", "16", "64"]).to_string(),
        (_, Some("lut")) => format!("0x{:x}", rng.below(256)),
        (_, Some("b16")) => format!("%h{k}"),
        (_, Some("imm")) => format!("{}", rng.below(4)),
        (_, Some("imm128")) => "128".into(),
        (_, Some("cpsize")) => rng.pick(&["4", "8", "16"]).to_string(),
        (_, Some("cpsize16")) => "16".into(),
        (_, Some("size16")) if rng.chance(50) => format!("{}", 16 * rng.below(8)),
        (_, Some("parity")) if rng.chance(50) => format!("{}", rng.below(2)),
        (_, Some("barid")) if rng.chance(50) => format!("{}", rng.below(16)),
        (_, Some("nthreads" | "nthreads1")) if rng.chance(50) => {
            format!("{}", 32 * (1 + rng.below(8)))
        }
        (_, Some("srcsize")) if rng.chance(50) => format!("{}", rng.below(17)),
        (_, Some("count")) if rng.chance(50) => format!("{}", 1 + rng.below(8)),
        (_, Some("bty")) if mods.contains(&"b64") => format!("%rd{k}"),
        (_, Some("im2col")) => {
            let c: Vec<String> = (0..dims(mods) - 2).map(|i| format!("%h{i}")).collect();
            format!("{{{}}}", c.join(", "))
        }
        (OperandKind::Read, _) if rng.chance(25) => format!("{}", rng.below(32)),
        _ => format!("%r{k}"),
    }
}

/// The operands of `form` with modifiers `mods` (optional ones at random).
fn operands(rng: &mut Rng, form: &Form, mods: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for o in &form.operands {
        let present = match &o.presence {
            Presence::Always => true,
            Presence::Optional => rng.chance(50),
            Presence::With(m) => mods.contains(m),
        };
        if present {
            // The mbarrier in shared memory by name, now and then (a
            // symbol in another space is ptxas's "State space mismatch",
            // which ori does not model: only where the space is shared).
            let by_name = form.opcode == "mbarrier" && o.kind == OperandKind::Memory;
            if by_name && rng.chance(30) {
                out.push("[bar]".into());
                continue;
            }
            out.push(operand(rng, o.kind, o.ty, mods));
        }
    }
    out
}

/// Words the mutations put where a modifier goes.
const FOREIGN: &[&str] = &[
    "u33",
    "frob",
    "rn",
    "sat",
    "f32",
    "b16",
    "wide",
    "cta",
    "gpu",
    "sync",
    "aligned",
    "release",
    "acquire",
    "L2::evict_last",
    "shared::cluster",
    "global",
    "local",
    "param",
    "tile",
    "add",
    "b32",
    "b64",
    "v2",
    "noinc",
    "parity",
    "expect_tx",
    "6d",
    "0d",
];

/// The statement's text: its mnemonic, then its operands.
fn render(rng: &mut Rng, mnemonic: &[&str], ops: &[String], odd_spacing: bool) -> String {
    let ops: Vec<&str> = ops.iter().map(String::as_str).collect();
    render_words(rng, mnemonic, &ops, odd_spacing)
}

/// [`render`] of borrowed operands.
pub fn render_words(rng: &mut Rng, mnemonic: &[&str], ops: &[&str], odd_spacing: bool) -> String {
    let mut s = String::new();
    for (k, w) in mnemonic.iter().enumerate() {
        if k > 0 {
            if odd_spacing && rng.chance(30) {
                let blanks: [&str; 3] = [" ", "\t", " /* m */ "];
                let blank = *rng.pick::<&str>(&blanks);
                s.push_str(blank);
            }
            s.push('.');
        }
        s.push_str(w);
    }
    if !ops.is_empty() {
        s.push(' ');
        let sep = if odd_spacing { " ,  " } else { ", " };
        s.push_str(&ops.join(sep));
    }
    s.push(';');
    s
}

/// A mutation of a statement's modifiers or operands; the name says which.
fn mutate(
    rng: &mut Rng,
    form: &Form,
    mods: &mut Vec<&'static str>,
    ops: &mut Vec<String>,
) -> &'static str {
    let spaces: Vec<usize> = (0..mods.len())
        .filter(|&k| ori_ptx::isa::is_space_word(mods[k]))
        .collect();
    match rng.below(8) {
        0 if !mods.is_empty() => {
            let k = rng.below(mods.len());
            mods[k] = *rng.pick(FOREIGN);
            "wrong modifier"
        }
        1 if !mods.is_empty() => {
            mods.remove(rng.below(mods.len()));
            "modifier dropped"
        }
        2 if !mods.is_empty() => {
            let m = mods[rng.below(mods.len())];
            mods.push(m);
            "modifier repeated"
        }
        3 if !ops.is_empty() => {
            ops.remove(rng.below(ops.len()));
            "operand dropped"
        }
        4 => {
            ops.push(format!("%r{}", rng.below(8)));
            "operand added"
        }
        5 if spaces.len() >= 2 => {
            mods.swap(spaces[0], spaces[1]);
            "state spaces swapped"
        }
        6 if !ops.is_empty() => {
            let k = rng.below(ops.len());
            ops[k] = if ops[k].starts_with('[') {
                "%rd1".into()
            } else {
                "[%rd1]".into()
            };
            "operand kind"
        }
        7 if ops.iter().any(|o| o.starts_with("%r")) => {
            let regs: Vec<usize> = (0..ops.len())
                .filter(|&k| ops[k].starts_with("%r"))
                .collect();
            let k = *rng.pick(&regs);
            ops[k] = if ops[k].starts_with("%rd") {
                ops[k].replacen("%rd", "%r", 1)
            } else {
                ops[k].replacen("%r", "%rd", 1)
            };
            "operand size"
        }
        _ => {
            let _ = form;
            mods.insert(0, *rng.pick(FOREIGN));
            "wrong modifier"
        }
    }
}

/// One statement: valid, or with one mutation (about half), some with
/// odd spacing.
pub fn statement(rng: &mut Rng, forms: &[&'static Form]) -> Statement {
    let form = *rng.pick(forms);
    let mut mods = choose_modifiers(rng, form);
    let mut ops = operands(rng, form, &mods);
    let how = if rng.chance(50) {
        mutate(rng, form, &mut mods, &mut ops)
    } else {
        "valid"
    };
    let mut mnemonic: Vec<&str> = vec![form.opcode];
    mnemonic.extend(form.prefix.iter().copied());
    mnemonic.extend(mods.iter().copied());
    let odd = rng.chance(15);
    Statement {
        text: render(rng, &mnemonic, &ops, odd),
        how,
        family: "closed",
        function: false,
    }
}

/// A valid statement of a table form (for the functions).
pub fn valid_statement(rng: &mut Rng, forms: &[&'static Form]) -> String {
    let form = *rng.pick(forms);
    let mods = choose_modifiers(rng, form);
    let ops = operands(rng, form, &mods);
    let mut mnemonic: Vec<&str> = vec![form.opcode];
    mnemonic.extend(form.prefix.iter().copied());
    mnemonic.extend(mods.iter().copied());
    render(rng, &mnemonic, &ops, false)
}

/// The module holding `units` (statements of one kernel, or functions),
/// with the first and last line of each.
fn source(units: &[&Statement]) -> (String, Vec<(usize, usize)>) {
    let functions = units.first().is_some_and(|u| u.function);
    let mut s = String::from(if functions {
        crate::fuzz_functions::MODULE_HEAD
    } else {
        HEAD
    });
    let mut line = s.lines().count() + 1;
    let mut spans = Vec::new();
    for u in units {
        let n = u.text.lines().count().max(1);
        spans.push((line, line + n - 1));
        line += n;
        s.push_str(&u.text);
        s.push('\n');
    }
    if !functions {
        s.push_str(TAIL);
    }
    (s, spans)
}

/// ptxas's verdict on each of `stmts`: `Some(accepted)`, or `None` for
/// those after a fatal error (to be judged again); and whether ptxas ended
/// with success (else `Some(true)` means only that no error named it).
fn ptxas_verdicts(
    dir: &std::path::Path,
    stmts: &[&Statement],
) -> Result<(Vec<Option<bool>>, bool), String> {
    let path = dir.join("batch.ptx");
    let (text, spans) = source(stmts);
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    let out = Command::new(oracle::tool("ptxas"))
        .args(["-arch=sm_90a", "-O0", "-o", "/dev/null"])
        .arg(&path)
        .output()
        .map_err(|e| format!("cannot run ptxas: {e} (cargo xtask oracle install)"))?;
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let mut verdict: Vec<Option<bool>> = vec![Some(true); stmts.len()];
    let mut fatal_at = None;
    for line in text.lines() {
        let Some(n) = line
            .split(", line ")
            .nth(1)
            .and_then(|r| r.split(';').next())
            .and_then(|n| n.trim().parse::<usize>().ok())
        else {
            continue;
        };
        if !(line.contains("error") || line.contains("fatal")) {
            continue;
        }
        let Some(k) = spans.iter().position(|&(a, b)| (a..=b).contains(&n)) else {
            return Err(format!("ptxas error outside the statements: {line}"));
        };
        verdict[k] = Some(false);
        if line.contains("fatal") {
            fatal_at = Some(fatal_at.map_or(k, |f: usize| f.min(k)));
        }
    }
    if let Some(f) = fatal_at {
        for v in verdict.iter_mut().skip(f + 1) {
            *v = None;
        }
    }
    Ok((verdict, out.status.success()))
}

/// ori's verdict on one statement alone: accepted, and whether it ended in
/// an internal error or a panic.
fn ori_verdict(st: &Statement) -> (bool, bool) {
    let (src, _) = source(&[st]);
    let opts = ori::Options {
        arch: Some("sm_90a".into()),
        ..Default::default()
    };
    let run = std::panic::catch_unwind(|| ori::compile_ptx("fuzz.ptx", &src, &opts));
    let Ok(c) = run else {
        return (false, true);
    };
    let internal = c.diags.iter().any(|d| d.message.contains("internal error"));
    let rejected = c.diags.iter().any(|d| {
        matches!(
            d.severity,
            ori::ir::Severity::Error | ori::ir::Severity::Fatal
        )
    });
    (!rejected, internal)
}

/// The tallies of a run.
#[derive(Default)]
struct Tally {
    judged: usize,
    agree: usize,
    internal: usize,
    by_how: BTreeMap<&'static str, (usize, usize)>,
    by_family: BTreeMap<&'static str, (usize, usize)>,
    disagreements: Vec<String>,
}

impl Tally {
    fn add(&mut self, st: &Statement, ptxas: bool, ori: (bool, bool)) {
        self.judged += 1;
        let e = self.by_how.entry(st.how).or_default();
        e.0 += 1;
        let f = self.by_family.entry(st.family).or_default();
        f.0 += 1;
        if ori.1 {
            self.internal += 1;
            self.disagreements
                .push(format!("internal error\t{}", st.text.replace('\n', " ⏎ ")));
        }
        if ptxas == ori.0 {
            self.agree += 1;
            e.1 += 1;
            f.1 += 1;
        } else {
            let v = |b: bool| if b { "accepts" } else { "rejects" };
            self.disagreements.push(format!(
                "ptxas {} ori {}\t{}\t{}\t{}",
                v(ptxas),
                v(ori.0),
                st.family,
                st.how,
                st.text.replace('\n', " ⏎ ")
            ));
        }
    }
}

/// Judge `stmts` in batches; statements cut off by a fatal error go round
/// again, and so do those no error named in a run that failed.
fn judge(stmts: Vec<&Statement>, dir: &std::path::Path, t: &mut Tally) -> Result<(), String> {
    let mut queue = stmts;
    while !queue.is_empty() {
        let n = queue.len().min(BATCH);
        let batch: Vec<&Statement> = queue.drain(..n).collect();
        let (verdicts, success) = match ptxas_verdicts(dir, &batch) {
            Ok(v) => v,
            Err(_) if batch.len() > 1 => {
                // An error ptxas did not give a statement's line: judge
                // each alone.
                for st in batch {
                    judge(vec![st], dir, t)?;
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        let named = verdicts.iter().any(|v| *v != Some(true));
        let (mut again, mut unsure) = (Vec::new(), Vec::new());
        for (st, v) in batch.iter().zip(verdicts) {
            match v {
                Some(true) if !success => unsure.push(*st),
                Some(ptxas) => t.add(st, ptxas, ori_verdict(st)),
                None => again.push(*st),
            }
        }
        match (unsure.len(), named) {
            (0, _) => {}
            // The failure named another statement: these go again alone.
            (_, true) => judge(unsure, dir, t)?,
            // A failure that names no statement: one statement is its cause.
            (1, false) => t.add(unsure[0], false, ori_verdict(unsure[0])),
            (_, false) => {
                for st in unsure {
                    judge(vec![st], dir, t)?;
                }
            }
        }
        again.append(&mut queue);
        queue = again;
    }
    Ok(())
}

/// `cargo xtask fuzz-grammar [--count N] [--open M] [--functions F]
/// [--seed S]`: N statements of the table's closed forms, M of the open
/// families (default N) and F small functions (default N / 10).
pub fn run(args: &[&str]) -> Result<ExitCode, String> {
    let mut count = 2000usize;
    let (mut open, mut functions) = (None, None);
    let mut seed = 1u64;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
        match *a {
            "--count" => count = v.parse().map_err(|_| "--count N")?,
            "--open" => open = Some(v.parse().map_err(|_| "--open N")?),
            "--seed" => seed = v.parse().map_err(|_| "--seed S")?,
            "--functions" => functions = Some(v.parse().map_err(|_| "--functions N")?),
            _ => return Err(format!("unknown option {a}")),
        }
    }
    let forms = closed_forms();
    let mut rng = Rng(seed);
    let stmts: Vec<Statement> = (0..count).map(|_| statement(&mut rng, &forms)).collect();
    let funcs: Vec<Statement> = (0..functions.unwrap_or(count / 10))
        .map(|k| crate::fuzz_functions::function(&mut rng, &forms, k))
        .collect();
    let opens: Vec<Statement> = (0..open.unwrap_or(count))
        .map(|_| crate::fuzz_open::statement(&mut rng))
        .collect();
    let dir = oracle::root().join("target").join("fuzz-grammar");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut t = Tally::default();
    judge(stmts.iter().collect(), &dir, &mut t)?;
    judge(funcs.iter().collect(), &dir, &mut t)?;
    judge(opens.iter().collect(), &dir, &mut t)?;
    report(&t, &dir, seed)?;
    let ok = t.internal == 0 && t.agree == t.judged;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn report(t: &Tally, dir: &std::path::Path, seed: u64) -> Result<(), String> {
    let pct = 100.0 * t.agree as f64 / t.judged.max(1) as f64;
    println!(
        "fuzz-grammar seed {seed}: {} inputs, ptxas and ori agree on {} ({pct:.2}%), {} internal errors",
        t.judged, t.agree, t.internal
    );
    for (how, (n, a)) in &t.by_how {
        println!("  {how:<38} {a:>6} / {n:<6}");
    }
    println!("by family:");
    for (family, (n, a)) in &t.by_family {
        println!("  {family:<38} {a:>6} / {n:<6}");
    }
    let path = dir.join("disagreements.txt");
    std::fs::write(&path, t.disagreements.join("\n") + "\n").map_err(|e| e.to_string())?;
    if !t.disagreements.is_empty() {
        println!("disagreements: {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without ptxas: every generated statement and function, valid or
    /// not, gets a verdict from ori with no internal error and no panic.
    #[test]
    fn ori_judges_every_generated_statement() {
        let forms = closed_forms();
        let mut rng = Rng(7);
        for k in 0..3000 {
            let st = statement(&mut rng, &forms);
            let (_, internal) = ori_verdict(&st);
            assert!(!internal, "internal error on {}", st.text);
            if k % 6 == 0 {
                let f = crate::fuzz_functions::function(&mut rng, &forms, k);
                let (_, internal) = ori_verdict(&f);
                assert!(!internal, "internal error on {}", f.text);
            }
        }
    }

    /// Without ptxas: every generated statement of the open families
    /// (`ld`, `st`, `atom`, `red`, arithmetic, `cvt`, comparisons,
    /// selects, moves), valid or a near miss, gets a verdict from ori with
    /// no internal error and no panic; and ori accepts most of the valid
    /// ones (a generator that only made rejects would measure nothing).
    #[test]
    fn ori_judges_every_open_family_statement() {
        let mut rng = Rng(11);
        let (mut valid, mut accepted) = (0, 0);
        for _ in 0..3000 {
            let st = crate::fuzz_open::statement(&mut rng);
            let (ok, internal) = ori_verdict(&st);
            assert!(!internal, "internal error on {}", st.text);
            if st.how == "valid" {
                valid += 1;
                accepted += usize::from(ok);
            }
        }
        assert!(
            accepted * 2 > valid,
            "{accepted} of {valid} valid statements accepted"
        );
    }

    /// Every opcode the front end knows, with operands of every kind in
    /// first place (a tensor, a symbol, a vector with an immediate, a sink,
    /// an address, a predicate pair), gets a verdict with no internal
    /// error: a result that is no register is an input error.
    #[test]
    fn no_opcode_reaches_an_internal_error() {
        let shapes = [
            "[%rd1, {%r1, %r2}], [%rd2]",
            "bar, %r1",
            "{%r1, 3}, [%rd1]",
            "_, [%rd1], %r1",
            "[%rd1], %r1, %r2",
            "%r1|%p1, %r2, %r3",
            "%r1, %r2, %r3, %r4, %r5, %r6",
            "",
        ];
        for op in ori_ptx::parser::OPCODES {
            for mods in ["", ".b32", ".sync.aligned", ".shared::cta.b64"] {
                for shape in shapes {
                    let st = Statement {
                        text: format!("{op}{mods} {shape};"),
                        how: "shape",
                        family: "shape",
                        function: false,
                    };
                    let (_, internal) = ori_verdict(&st);
                    assert!(!internal, "internal error on {}", st.text);
                }
            }
        }
    }

    /// The same seed gives the same statements.
    #[test]
    fn generation_is_deterministic() {
        let forms = closed_forms();
        let run = |seed| {
            let mut rng = Rng(seed);
            (0..50)
                .map(|_| statement(&mut rng, &forms).text)
                .collect::<Vec<_>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }
}
