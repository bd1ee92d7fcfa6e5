//! Lowering a function body while it is still being parsed.
//!
//! The sequential lowering ([`super::lower_module_owned`]) reads a whole
//! body before it lowers a statement: every `.reg` of the function scope
//! is declared first, every label gets its block first (a branch may jump
//! forward), every function-scope variable is known first. That makes
//! parsing and lowering two steps one after the other, each about a third
//! of a run. Here the statements arrive in batches from a parser running
//! on another thread ([`crate::parser::parse_streaming`],
//! [`crate::pipelined`]) and are lowered as they come, on the speculation
//! that the body is written the way compilers write one:
//!
//! - a `.reg` of the function scope comes before the first register the
//!   lowering makes itself (a member of a large range, a register of a
//!   nested scope), so that registers are numbered as the sequential
//!   lowering numbers them (nvcc, Triton and CUTLASS declare at the top);
//! - a name no scope defines yet, met in an operand, is a label the
//!   function scope defines further down (a forward branch);
//! - nothing is wrong with it: no error or warning at all.
//!
//! A name used before its declaration (a register, a variable) is taken
//! for a label by the second rule and found undefined at the end. Nested
//! `{ }` scopes arrive whole, so their labels and variables are known
//! before any of their statements is lowered, as in the sequential
//! lowering. When a speculation fails, [`lower_streamed`] returns `None`
//! and the caller lowers the module again sequentially, so every message
//! ori prints about a body comes from the one lowering. When it holds, the
//! function is the one the sequential lowering makes: the same
//! instructions, registers, block names and block numbers (label blocks
//! are made as their labels come and renumbered at the end into the
//! sequential order: the entry, the function scope's labels, the nested
//! scopes' labels, then the blocks made while lowering). The test
//! `pipelined_front_end_matches_the_sequential_one` compares the two on
//! every kernel of the corpora.

use super::prefault::{Prefault, PREFAULT_FROM_BYTES};
use super::{
    collect_locals, declare_regs, function_cx, handler_table, label_defs, lower_function,
    lower_stmts, module_scope, LowerCx, ModuleScope, RECLAIM_EVERY, RECLAIM_HOOK,
};
use crate::ast;
use crate::parser::{BodyEvent, BodyStart};
use ori_ir::{Block, Module, NameMap};

/// Bytes of source per statement, at least, in any body a compiler
/// writes (`ret;` and a newline is 5; Triton's and nvcc's average is over
/// 40): the instruction table is reserved for `bytes_left / this`, which
/// over-reserves address space, not memory (pages are touched as they
/// are filled).
const MIN_BYTES_PER_STATEMENT: usize = 12;

/// Lower the module that `start` begins (its header, the items before the
/// function, the function's header) with the function's body from
/// `events`, up to [`BodyEvent::End`]. `None` if a speculation of the
/// module docs failed or a diagnostic came up: the caller lowers the
/// module sequentially instead. Module-level checks that need the whole
/// module (`check_version_target`) are the caller's, as are the items
/// after the function (only directives may follow).
///
/// Each batch of statements, once lowered, goes to `give_back`: the
/// pipelined front end returns it to the parser's thread, which frees it
/// (freeing it here would lock the other thread's allocator arena against
/// its own allocations, statement by statement).
pub fn lower_streamed(
    file: &str,
    start: &BodyStart,
    events: impl Iterator<Item = BodyEvent>,
    give_back: impl FnMut(Vec<ast::Stmt>),
) -> Option<Module> {
    let mut m = start.module.clone();
    let mut header = start.function.clone();
    header.body = Some(Vec::new());
    m.items.push(ast::Item::Function(header));
    let ModuleScope {
        mut out,
        diags,
        sigs,
        symbols,
    } = module_scope(file, &m);
    if !diags.is_empty() {
        return None;
    }
    let table = handler_table();
    // The items before the function: prototypes (the body streamed is the
    // module's first).
    for item in &start.module.items {
        let ast::Item::Function(g) = item else {
            continue;
        };
        if g.body.is_some() {
            return None;
        }
        let (func, d) = lower_function(file, &m, g, None, &symbols, &sigs, &table);
        if !d.is_empty() {
            return None;
        }
        out.add_function(func);
    }
    let mut cx = function_cx(file, &m, &start.function, true, &symbols, &sigs);
    let reserved = start.bytes_left / MIN_BYTES_PER_STATEMENT;
    cx.func.insts.reserve(reserved);
    let prefault = (start.bytes_left >= PREFAULT_FROM_BYTES)
        .then(|| Prefault::start(cx.func.insts.as_values_slice(), reserved))
        .flatten();
    let lowered = body(&mut cx, &table, events, give_back, prefault.as_ref());
    drop(prefault);
    if !lowered {
        return None;
    }
    out.add_function(cx.func);
    Some(out)
}

/// What the speculation has seen of the body so far.
#[derive(Default)]
struct Seen {
    /// Registers the function has from its parameters and `.reg`
    /// statements: one more, and the lowering made it, so a `.reg` after
    /// that would number its registers differently.
    declared: usize,
    /// The function scope's labels, in source order, with their blocks.
    top: Vec<(ast::Name, Block)>,
    /// The nested scopes' labels, in source order, with their blocks.
    nested: Vec<(ast::Name, Block)>,
    /// Nested scopes numbered so far (pre-order, as `lower_stmts` counts).
    scopes: usize,
    /// Statements lowered since the reclaim hook last ran.
    since_reclaim: usize,
}

/// Lower the body from `events`; whether every speculation held.
fn body(
    cx: &mut LowerCx<'_>,
    table: &super::HandlerTable,
    events: impl Iterator<Item = BodyEvent>,
    mut give_back: impl FnMut(Vec<ast::Stmt>),
    prefault: Option<&Prefault>,
) -> bool {
    cx.label_scopes.streaming = true;
    cx.label_scopes.defs = vec![NameMap::default()];
    let hook = RECLAIM_HOOK.get();
    let mut seen = Seen {
        declared: cx.func.vregs.len(),
        ..Seen::default()
    };
    let mut ended = false;
    for e in events {
        let mut batch = match e {
            BodyEvent::Stmts(b) => b,
            BodyEvent::End => {
                ended = true;
                break;
            }
            BodyEvent::Start(_) => return false,
        };
        for s in batch.iter_mut() {
            if !admit(cx, &mut seen, s) {
                return false;
            }
            lower_stmts(cx, std::slice::from_mut(s), table);
        }
        if !cx.diags.is_empty() {
            return false;
        }
        if let Some(p) = prefault {
            p.advance(cx.func.insts.as_values_slice());
        }
        seen.since_reclaim += batch.len();
        give_back(batch);
        if let Some(reclaim) = hook.filter(|_| seen.since_reclaim >= RECLAIM_EVERY) {
            reclaim();
            seen.since_reclaim = 0;
        }
    }
    let ls = &cx.label_scopes;
    if !ended || !cx.diags.is_empty() || !cx.undefined.is_empty() || !ls.reserved.is_empty() {
        return false;
    }
    finish(cx, &seen);
    true
}

/// Take statement `s` into the speculation before it is lowered: declare
/// what it declares, give its labels blocks. `false` if it breaks the
/// speculation.
fn admit(cx: &mut LowerCx<'_>, seen: &mut Seen, s: &ast::Stmt) -> bool {
    let one = std::slice::from_ref(s);
    match s {
        ast::Stmt::Reg { .. } => {
            if cx.func.vregs.len() != seen.declared {
                return false;
            }
            declare_regs(cx, one);
            seen.declared = cx.func.vregs.len();
        }
        ast::Stmt::Var(_) => collect_locals(cx, one),
        ast::Stmt::Label { name, .. } => {
            let ls = &mut cx.label_scopes;
            let b = match ls.defs[0].get(name.as_str()).copied() {
                // A second definition: the sequential lowering's error.
                Some(_) if !ls.reserved.remove(name.as_str()) => return false,
                Some(b) => b,
                None => {
                    let b = cx.unnamed_block();
                    cx.label_scopes.defs[0].insert(name.as_str().into(), b);
                    b
                }
            };
            seen.top.push((name.as_str().into(), b));
            cx.label_scopes.in_order.push(Some(b));
        }
        ast::Stmt::Scope { .. } => {
            collect_locals(cx, one);
            let mut defs = Vec::new();
            label_defs(one, 0, &mut seen.scopes, &mut defs);
            cx.label_scopes
                .defs
                .resize_with(seen.scopes + 1, NameMap::default);
            for (scope, name, _) in defs {
                if cx.label_scopes.defs[scope].contains_key(name) {
                    return false;
                }
                let b = cx.unnamed_block();
                cx.label_scopes.defs[scope].insert(name.into(), b);
                seen.nested.push((name.into(), b));
                cx.label_scopes.in_order.push(Some(b));
            }
        }
        _ => {}
    }
    true
}

/// Name the blocks and number them as the sequential lowering does: the
/// names in its order (the function scope's labels, the nested scopes',
/// then the blocks ori made), the numbers in its order of creation.
fn finish(cx: &mut LowerCx<'_>, seen: &Seen) {
    let ls = &mut cx.label_scopes;
    ls.streaming = false;
    ls.taken.clear();
    ls.literal = seen
        .top
        .iter()
        .chain(&seen.nested)
        .map(|(n, _)| n.clone())
        .collect();
    for (name, b) in seen.top.iter().chain(&seen.nested) {
        let ir = ls.unique_name(name);
        cx.func.blocks[*b].label = Some(ir.as_str().into());
    }
    for (b, name) in std::mem::take(&mut ls.fresh) {
        let ir = ls.unique_name(&name);
        cx.func.blocks[b].label = Some(ir.as_str().into());
    }
    let n = cx.func.blocks.len();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let entry = Block::from_u32(0);
    let labels = seen.top.iter().chain(&seen.nested).map(|&(_, b)| b);
    for b in std::iter::once(entry).chain(labels) {
        placed[b.as_u32() as usize] = true;
        order.push(b);
    }
    order.extend(
        cx.func
            .blocks
            .keys()
            .filter(|b| !placed[b.as_u32() as usize]),
    );
    cx.func.renumber_blocks_named_by(&order, &cx.block_users);
}
