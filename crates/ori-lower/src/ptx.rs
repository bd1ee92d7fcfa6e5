//! PTX out, with the passes' decisions made explicit.
//!
//! The input text is kept byte for byte (directives, declarations, `.loc`,
//! comments) and only lines are added: each arrive phase 87 injected becomes
//! `wgmma.fence.sync.aligned;`, each injected commit `wgmma.commit_group`,
//! each injected wait `wgmma.wait_group.sync.aligned N;`, placed before the
//! source line of the instruction it precedes in the IR. A serialized
//! function comes out in the serialized form phase 87 built. Compiling the
//! result with ptxas should give no C75xx message at all.

use ori_ir::{Function, Module, Opcode};
use std::collections::BTreeMap;

fn injected_text(f: &Function, i: ori_ir::Inst) -> Option<String> {
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

/// Lines to insert: source line → texts to put before it (or after the last line).
fn insertions(f: &Function) -> (BTreeMap<u32, Vec<String>>, Vec<String>) {
    let mut before: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut pending: Vec<String> = Vec::new();
    for i in f.layout.all_insts() {
        match injected_text(f, i) {
            Some(t) => pending.push(t),
            None => {
                let line = f.insts[i].line;
                if !pending.is_empty() && line > 0 {
                    before.entry(line).or_default().append(&mut pending);
                }
            }
        }
    }
    (before, pending)
}

/// Print the module's source with the injected instructions added.
pub fn emit_module(m: &Module, src: &str) -> String {
    let mut before: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for f in m.funcs.values().filter(|f| f.has_body) {
        let (b, tail) = insertions(f);
        for (l, mut v) in b {
            before.entry(l).or_default().append(&mut v);
        }
        if !tail.is_empty() {
            // Nothing follows in this function: put them before its last instruction's line's successor.
            let last = f
                .layout
                .all_insts()
                .map(|i| f.insts[i].line)
                .max()
                .unwrap_or(0);
            before.entry(last + 1).or_default().extend(tail);
        }
    }
    let mut out = String::with_capacity(src.len() + 64 * before.len());
    for (k, line) in src.split_inclusive('\n').enumerate() {
        if let Some(v) = before.get(&(k as u32 + 1)) {
            let indent: String = line
                .chars()
                .take_while(|c| c.is_whitespace() && *c != '\n')
                .collect();
            for t in v {
                out.push_str(&indent);
                out.push_str(t);
                out.push_str(" // ori: injected\n");
            }
        }
        out.push_str(line);
    }
    out
}
