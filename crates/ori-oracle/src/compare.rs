//! Comparing what ori did with what ptxas did.

use crate::{parse_message, skeleton_from_sass, Expectation, Msg};
use std::collections::{BTreeMap, BTreeSet};

/// What ori produced for one case.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// ori's exit status for the case; the comparison only asks whether it
    /// is zero, as ptxas's is.
    pub exit_code: i32,
    /// Diagnostic lines (ori's stderr); lines that are not ptxas-style
    /// diagnostics are ignored by the comparison.
    pub messages: Vec<String>,
    /// SASS-like text (ori's stdout), when produced.
    pub sass: Option<String>,
}

/// Agreement of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseAgreement {
    /// Same diagnostics in the same order, compared by (severity, code,
    /// function); diagnostics without a code are compared by (severity, text).
    pub messages_agree: bool,
    /// The sequences of (code, line) of C7517/C7519 advisories are equal
    /// (true when neither side has advisories).
    pub lines_agree: bool,
    /// The same set of functions is named by serialization messages.
    pub serialized_agree: bool,
    /// GMMA skeletons equal per function (functions with empty skeletons are
    /// ignored on both sides, order of functions is ignored); `None` when the
    /// case is marked not comparable.
    pub skeleton_agree: Option<bool>,
    /// Both exit codes are zero or both are nonzero.
    pub exit_agree: bool,
    /// Human-readable description of the disagreements (empty when all agree).
    pub diff: String,
}

impl CaseAgreement {
    /// `true` when every column agrees; a skeleton that is not comparable
    /// (`skeleton_agree == None`) does not count against it.
    pub fn all_agree(&self) -> bool {
        self.messages_agree
            && self.lines_agree
            && self.serialized_agree
            && self.skeleton_agree != Some(false)
            && self.exit_agree
    }
}

fn parsed(lines: &[String]) -> Vec<Msg> {
    lines.iter().filter_map(|l| parse_message(l)).collect()
}

/// Key used to compare messages. Non-GMMA info lines without code (e.g.
/// `Used N registers`) only appear with `-v`; they are kept as they are.
fn key(m: &Msg) -> String {
    match m.code {
        Some(c) => format!(
            "{} C{} function={}",
            m.severity.word(),
            c,
            m.function.as_deref().unwrap_or("-")
        ),
        None => format!("{}: {}", m.severity.word(), m.text),
    }
}

fn advisory_lines(ms: &[Msg]) -> Vec<(u32, Option<u32>)> {
    ms.iter()
        .filter(|m| m.is_advisory())
        .map(|m| (m.code.unwrap_or(0), m.line))
        .collect()
}

fn serialized_functions(ms: &[Msg]) -> BTreeSet<String> {
    ms.iter()
        .filter(|m| m.is_serialization())
        .map(|m| m.function.clone().unwrap_or_default())
        .collect()
}

fn nonempty_skeletons(fs: &[(String, Vec<String>)]) -> BTreeMap<String, Vec<String>> {
    fs.iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(n, l)| (n.clone(), l.clone()))
        .collect()
}

fn list_diff(out: &mut String, what: &str, exp: &[String], obs: &[String]) {
    out.push_str(&format!("  {what}:\n"));
    for l in exp {
        out.push_str(&format!("    - {l}\n"));
    }
    for l in obs {
        out.push_str(&format!("    + {l}\n"));
    }
}

/// Compares one case.
pub fn compare(expected: &Expectation, observed: &Observed) -> CaseAgreement {
    let em = parsed(&expected.messages);
    let om = parsed(&observed.messages);
    let mut diff = String::new();

    let ek: Vec<String> = em.iter().map(key).collect();
    let ok: Vec<String> = om.iter().map(key).collect();
    let messages_agree = ek == ok;
    if !messages_agree {
        list_diff(&mut diff, "messages (- ptxas, + ori)", &ek, &ok);
    }

    let el = advisory_lines(&em);
    let ol = advisory_lines(&om);
    let lines_agree = el == ol;
    if !lines_agree {
        let f = |v: &[(u32, Option<u32>)]| -> Vec<String> {
            v.iter()
                .map(|(c, l)| format!("C{c} line {}", l.map_or("?".into(), |n| n.to_string())))
                .collect()
        };
        list_diff(&mut diff, "advisory lines", &f(&el), &f(&ol));
    }

    let es = serialized_functions(&em);
    let os = serialized_functions(&om);
    let serialized_agree = es == os;
    if !serialized_agree {
        diff.push_str(&format!(
            "  serialized functions: ptxas {es:?}, ori {os:?}\n"
        ));
    }

    let skeleton_agree = if !expected.skeleton_comparable {
        None
    } else {
        let exp = nonempty_skeletons(&expected.functions);
        let obs = nonempty_skeletons(
            &observed
                .sass
                .as_deref()
                .map(skeleton_from_sass)
                .unwrap_or_default(),
        );
        let agree = exp == obs;
        if !agree {
            let names: BTreeSet<&String> = exp.keys().chain(obs.keys()).collect();
            for n in names {
                let e = exp.get(n).cloned().unwrap_or_default();
                let o = obs.get(n).cloned().unwrap_or_default();
                if e != o {
                    list_diff(&mut diff, &format!("skeleton {n}"), &e, &o);
                }
            }
        }
        Some(agree)
    };

    let exit_agree = (expected.exit_code == 0) == (observed.exit_code == 0);
    if !exit_agree {
        diff.push_str(&format!(
            "  exit: ptxas {}, ori {}\n",
            expected.exit_code, observed.exit_code
        ));
    }

    CaseAgreement {
        messages_agree,
        lines_agree,
        serialized_agree,
        skeleton_agree,
        exit_agree,
        diff,
    }
}

/// Rows of case agreements with totals.
#[derive(Clone, Debug, Default)]
pub struct AgreementTable {
    /// One row per case, in the order pushed: the case name and its agreement.
    pub rows: Vec<(String, CaseAgreement)>,
}

/// Agreeing and applicable counts of one column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ColumnTotal {
    /// Cases that agree in this column.
    pub agree: usize,
    /// Cases the column applies to: every case, except for the skeleton
    /// column, which leaves out cases marked not comparable.
    pub applicable: usize,
}

impl ColumnTotal {
    /// `agree` as a percentage of `applicable`; 100.0 when no case applies.
    pub fn percent(self) -> f64 {
        if self.applicable == 0 {
            100.0
        } else {
            100.0 * self.agree as f64 / self.applicable as f64
        }
    }
    fn add(&mut self, v: Option<bool>) {
        if let Some(b) = v {
            self.applicable += 1;
            if b {
                self.agree += 1;
            }
        }
    }
}

/// Totals of the table's columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Cases whose diagnostics agree ([`CaseAgreement::messages_agree`]).
    pub messages: ColumnTotal,
    /// Cases whose advisory lines agree ([`CaseAgreement::lines_agree`]).
    pub lines: ColumnTotal,
    /// Cases whose serialized functions agree
    /// ([`CaseAgreement::serialized_agree`]).
    pub serialized: ColumnTotal,
    /// Comparable cases whose GMMA skeletons agree
    /// ([`CaseAgreement::skeleton_agree`]).
    pub skeleton: ColumnTotal,
    /// Cases whose exit codes agree ([`CaseAgreement::exit_agree`]).
    pub exit: ColumnTotal,
    /// Cases that agree in every column ([`CaseAgreement::all_agree`]).
    pub all: ColumnTotal,
}

/// The column headers of [`AgreementTable::render`], in the order of its
/// cells and totals.
pub const COLUMNS: [&str; 5] = ["messages", "lines", "serialized", "skeleton", "exit"];

impl AgreementTable {
    /// Appends the row of case `name` with its agreement `a`.
    pub fn push(&mut self, name: impl Into<String>, a: CaseAgreement) {
        self.rows.push((name.into(), a));
    }

    /// Counts, per column and over all columns, the cases that agree and
    /// the cases the column applies to.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for (_, a) in &self.rows {
            t.messages.add(Some(a.messages_agree));
            t.lines.add(Some(a.lines_agree));
            t.serialized.add(Some(a.serialized_agree));
            t.skeleton.add(a.skeleton_agree);
            t.exit.add(Some(a.exit_agree));
            t.all.add(Some(a.all_agree()));
        }
        t
    }

    /// Renders the table: one row per case, then totals in percent.
    pub fn render(&self) -> String {
        let w = self
            .rows
            .iter()
            .map(|(n, _)| n.len())
            .max()
            .unwrap_or(4)
            .max(5);
        let mut s = format!("{:<w$}", "case");
        for c in COLUMNS {
            s.push_str(&format!("  {c:>10}"));
        }
        s.push('\n');
        let b = |v: bool| if v { "ok" } else { "DIFF" };
        for (n, a) in &self.rows {
            s.push_str(&format!("{n:<w$}"));
            let cells = [
                b(a.messages_agree),
                b(a.lines_agree),
                b(a.serialized_agree),
                a.skeleton_agree.map_or("n/a", b),
                b(a.exit_agree),
            ];
            for c in cells {
                s.push_str(&format!("  {c:>10}"));
            }
            s.push('\n');
        }
        let t = self.totals();
        s.push_str(&format!("{:<w$}", "TOTAL"));
        for c in [t.messages, t.lines, t.serialized, t.skeleton, t.exit] {
            s.push_str(&format!("  {:>9.1}%", c.percent()));
        }
        s.push('\n');
        s.push_str(&format!(
            "cases fully agreeing: {}/{} ({:.1}%)\n",
            t.all.agree,
            t.all.applicable,
            t.all.percent()
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp() -> Expectation {
        Expectation {
            messages: vec![
                "ptxas info    : (C7519) warpgroup.arrive is injected in around line 17 by compiler to allow use of registers in GMMA in function 'k'".into(),
                "ptxas info    : (C7517) warpgroup.wait is injected in around line 16 by compiler to allow use of registers defined by GMMA in function 'k'".into(),
            ],
            functions: vec![(
                "k".into(),
                vec![
                    "WARPGROUP.ARRIVE".into(),
                    "HGMMA.64x8x16.F32 gsb0".into(),
                    "WARPGROUP.DEPBAR.LE gsb0, 0x0".into(),
                ],
            )],
            ..Expectation::default()
        }
    }

    const SASS: &str = "\tFunction : k\n WARPGROUP.ARRIVE ;\n HGMMA.64x8x16.F32 R24, gdesc[UR4], RZ, !UPT, gsb0 ;\n WARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n";

    #[test]
    fn full_agreement() {
        let e = exp();
        let o = Observed {
            exit_code: 0,
            messages: e.messages.clone(),
            sass: Some(SASS.into()),
        };
        let a = compare(&e, &o);
        assert!(a.all_agree(), "{}", a.diff);
        assert_eq!(a.skeleton_agree, Some(true));
        assert!(a.diff.is_empty());
    }

    #[test]
    fn disagreements() {
        let e = exp();
        let o = Observed {
            exit_code: 1,
            messages: vec![
                "ptxas info    : (C7519) warpgroup.arrive is injected in around line 18 by compiler to allow use of registers in GMMA in function 'k'".into(),
                "ptxas info    : (C7517) warpgroup.wait is injected in around line 16 by compiler to allow use of registers defined by GMMA in function 'k'".into(),
                "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of a wgmma between start and end of the pipeline stage in the function 'k'".into(),
            ],
            sass: None,
        };
        let a = compare(&e, &o);
        assert!(!a.messages_agree);
        assert!(!a.lines_agree);
        assert!(!a.serialized_agree);
        assert_eq!(a.skeleton_agree, Some(false));
        assert!(!a.exit_agree);
        assert!(a.diff.contains("C7514"));
    }

    #[test]
    fn same_codes_other_lines() {
        let e = exp();
        let mut msgs = e.messages.clone();
        msgs[0] = msgs[0].replace("line 17", "line 99");
        let o = Observed {
            exit_code: 0,
            messages: msgs,
            sass: Some(SASS.into()),
        };
        let a = compare(&e, &o);
        assert!(a.messages_agree);
        assert!(!a.lines_agree);
        assert!(a.serialized_agree);
    }

    #[test]
    fn not_comparable_and_table() {
        let mut e = exp();
        e.skeleton_comparable = false;
        let o = Observed {
            exit_code: 0,
            messages: e.messages.clone(),
            sass: None,
        };
        let a = compare(&e, &o);
        assert_eq!(a.skeleton_agree, None);
        assert!(a.all_agree());
        let mut t = AgreementTable::default();
        t.push("a", a);
        t.push(
            "b",
            compare(
                &exp(),
                &Observed {
                    exit_code: 0,
                    messages: vec![],
                    sass: Some(SASS.into()),
                },
            ),
        );
        let tot = t.totals();
        assert_eq!(
            tot.messages,
            ColumnTotal {
                agree: 1,
                applicable: 2
            }
        );
        assert_eq!(
            tot.skeleton,
            ColumnTotal {
                agree: 1,
                applicable: 1
            }
        );
        assert_eq!(tot.all.agree, 1);
        let r = t.render();
        assert!(r.contains("TOTAL"));
        assert!(r.contains("50.0%"));
        assert!(r.contains("n/a"));
    }

    #[test]
    fn error_messages_compared_by_text() {
        let e = Expectation {
            exit_code: 255,
            messages: vec![
                "ptxas e.ptx, line 15; error   : Unknown modifier '.m64n9k16'".into(),
                "ptxas fatal   : Ptx assembly aborted due to errors".into(),
            ],
            ..Expectation::default()
        };
        let o = Observed {
            exit_code: 1,
            messages: e.messages.clone(),
            sass: None,
        };
        let a = compare(&e, &o);
        assert!(a.all_agree(), "{}", a.diff);
        let o2 = Observed {
            exit_code: 1,
            messages: vec!["ptxas e.ptx, line 15; error   : something else".into()],
            sass: None,
        };
        assert!(!compare(&e, &o2).messages_agree);
    }
}
