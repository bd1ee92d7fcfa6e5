//! `ori explain CODE|RULE`, like `rustc --explain`: what a ptxas message
//! code or a phase-87 rule means, what ptxas 13.0.88 does, what the PTX ISA
//! says, the fix, and a recorded corpus case that shows it.

use ori_gmma::fixup::rules::{RuleInfo, ANALYSIS_RULES};
use ori_gmma::messages;
use ori_gmma::RuleId;
use ori_ir::consts::*;
use ori_ir::SerializationCode;

/// The codes ori knows, with what each means (one line).
const CODES: [(u32, &str); 15] = [
    (C7504_SETMAXNREG_SEPARATE, "advisory: setmaxnreg ignored, each function compiled alone (-c)"),
    (C7508_SETMAXNREG_UNKNOWN_ENTRY, "advisory: setmaxnreg ignored, the kernel's register count at entry unknown (R-setmaxnreg-ignored)"),
    (C7407_TOO_MANY_LIVE_RANGES, "too many accumulator live ranges for the pipeline (seed 003; never produced by ptxas 13.0.88 on the corpus)"),
    (C7509_EXTERN_CALLS, "serialized: the function calls a function ptxas cannot inline"),
    (C7510_CROSSES_CALL, "serialized: a wgmma pipeline crosses a function call"),
    (C7511_PIPELINE_REGISTERS, "serialized: not enough registers for the accumulators in flight, or an accumulator shared"),
    (C7512_FUNCTION_REGISTERS, "serialized: the function's register pressure exceeds its limit"),
    (C7513_DEFINES_INPUTS, "serialized: a non-wgmma instruction defines a wgmma input inside the stage"),
    (C7514_READS_ACCUMULATORS, "serialized: a non-wgmma instruction reads accumulators inside the stage"),
    (C7515_DEFINES_ACCUMULATORS, "serialized: a non-wgmma instruction defines accumulators inside the stage"),
    (C7516_ILL_FORMED, "serialized: an ill-formed pipeline stage"),
    (C7517_WAIT_INJECTED, "advisory: ptxas injected a warpgroup.wait"),
    (C7518_WGDP_DIVERGENT, "serialized: an injected wait would depend on divergent control flow"),
    (C7519_ARRIVE_INJECTED, "advisory: ptxas injected a warpgroup.arrive"),
    (C7520_WGAR_DIVERGENT, "serialized: an injected arrive would depend on divergent control flow"),
];

fn rule_text(info: &RuleInfo) -> String {
    let code = info
        .code
        .map_or("no message".to_string(), |c| format!("C{c}"));
    let mut s = format!("{} ({code})\n\n", info.name);
    s.push_str(&format!("What ptxas 13.0.88 does: {}.\n\n", info.ptxas));
    s.push_str(&format!("What the PTX ISA says: {}.\n\n", info.isa));
    if let Some(c) = info.code.and_then(SerializationCode::from_code) {
        s.push_str(&format!("Fix: {}.\n\n", c.help()));
    }
    s.push_str(&format!(
        "Example: tests/{}.ptx (recorded from ptxas 13.0.88 in tests/{}.expected);\n\
         `ori compile tests/{}.ptx --print-after FixupGmmaSequence` shows each decision with its rule.\n",
        info.example, info.example, info.example
    ));
    s
}

fn code_text(code: u32, what: &str) -> String {
    let mut s = format!("C{code}: {what}\n\n");
    let message = match code {
        C7517_WAIT_INJECTED => messages::wait_injected(0, "F").replace("line 0", "line N"),
        C7519_ARRIVE_INJECTED => messages::arrive_injected(0, "F").replace("line 0", "line N"),
        C7407_TOO_MANY_LIVE_RANGES => String::new(),
        C7504_SETMAXNREG_SEPARATE | C7508_SETMAXNREG_UNKNOWN_ENTRY => {
            ori_gmma::setmaxnreg::message(code).unwrap_or_default()
        }
        _ => SerializationCode::from_code(code).map_or(String::new(), |c| c.message("F")),
    };
    if !message.is_empty() {
        s.push_str(&format!(
            "ptxas prints: ptxas info    : (C{code}) {message}\n\n"
        ));
    }
    if let Some(c) = SerializationCode::from_code(code) {
        s.push_str(&format!("Fix: {}.\n\n", c.help()));
    }
    let rules: Vec<RuleInfo> = RuleId::ALL
        .iter()
        .map(|r| r.info())
        .filter(|i| i.code == Some(code))
        .collect();
    if !rules.is_empty() {
        s.push_str("Rules of phase 87 that produce it (`ori explain RULE` for each):\n");
        for r in rules {
            s.push_str(&format!("  {:<32} {}\n", r.name, r.ptxas));
        }
    }
    s
}

/// The explanation of `what` (`C7514`, `7514`, or a rule name such as
/// `R-read-unsure-group`), or `None` if ori knows no such code or rule.
pub fn explain(what: &str) -> Option<String> {
    let w = what.trim();
    let digits = w.strip_prefix(['C', 'c']).unwrap_or(w);
    if let Ok(code) = digits.parse::<u32>() {
        return CODES
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(c, what)| code_text(*c, what));
    }
    RuleId::ALL
        .iter()
        .map(|r| r.info())
        .chain(ANALYSIS_RULES)
        .find(|i| i.name.eq_ignore_ascii_case(w))
        .map(|i| rule_text(&i))
}

/// Every name `explain` knows: the codes, then the rules.
pub fn known() -> Vec<String> {
    CODES
        .iter()
        .map(|(c, _)| format!("C{c}"))
        .chain(RuleId::ALL.iter().map(|r| r.name().to_string()))
        .chain(ANALYSIS_RULES.iter().map(|r| r.name.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_and_rule_is_explained() {
        for name in known() {
            let text = explain(&name).unwrap_or_else(|| panic!("{name}"));
            assert!(text.len() > 40, "{name}: {text}");
        }
        assert!(explain("C9999").is_none() && explain("R-nothing").is_none());
        let c7514 = explain("7514").unwrap();
        assert!(c7514.contains("R-read-unsure-group") && c7514.contains("registers of  a wgmma"));
    }
}
