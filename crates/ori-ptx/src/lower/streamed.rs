//! Lowering a function body while it is still being parsed, on one thread.
//!
//! The whole-tree lowering ([`super::lower_module_owned`]) reads a whole
//! body before it lowers a statement: every `.reg` of the function scope
//! is declared first, every label gets its block first (a branch may jump
//! forward), every function-scope variable is known first. So the syntax
//! tree of the whole body exists at once, on top of the IR made of it: on
//! a kernel of a million instructions, about half the front end's memory.
//! Here the parser ([`crate::parser::parse_streaming`]) hands the body's
//! statements over in batches as it parses them, and each batch is lowered
//! and freed before the parser goes on ([`parse_and_lower`]), on the
//! speculation that the body is written the way compilers write one:
//!
//! - a `.reg` of the function scope comes before the first register the
//!   lowering makes itself (a member of a large range, a register of a
//!   nested scope), so that registers are numbered as the whole-tree
//!   lowering numbers them (nvcc, Triton and CUTLASS declare at the top);
//! - a name no scope defines yet, met in an operand, is a label the
//!   function scope defines further down (a forward branch);
//! - nothing is wrong with it: no error or warning at all.
//!
//! A name used before its declaration (a register, a variable) is taken
//! for a label by the second rule and found undefined at the end. Nested
//! `{ }` scopes arrive whole, so their labels and variables are known
//! before any of their statements is lowered, as in the whole-tree
//! lowering. When a speculation fails, [`parse_and_lower`] returns `None`
//! and the caller parses and lowers the module as a whole, so every
//! message ori prints about a body comes from the one lowering. When it
//! holds, the function is the one the whole-tree lowering makes: the same
//! instructions, registers, block names and block numbers (label blocks
//! are made as their labels come and renumbered at the end into the
//! whole-tree order: the entry, the function scope's labels, the nested
//! scopes' labels, then the blocks made while lowering). The test
//! `tests/streamed_front_end.rs` compares the two on every kernel of the
//! corpora.

use super::{
    collect_locals, declare_regs, function_cx, handler_table, label_defs, lower_function,
    lower_stmts, module_scope, LowerCx, ModuleScope,
};
use crate::ast;
use crate::diag::Diag;
use crate::parser::{parse_streaming, BodyEvent, BodyStart};
use ori_ir::{Block, Module, NameMap};
use std::cell::{OnceCell, RefCell};

/// Bytes of source per statement, at least, in any body a compiler
/// writes (`ret;` and a newline is 5; Triton's and nvcc's average is over
/// 40): the instruction table is reserved for `bytes_left / this`, which
/// over-reserves address space, not memory (pages are touched as they
/// are filled).
const MIN_BYTES_PER_STATEMENT: usize = 12;

/// What [`parse_and_lower`] makes of a module.
pub struct Streamed {
    /// The syntax tree without the streamed body (its statements were
    /// lowered and freed): the header, the items, the function's header.
    pub ast: ast::Module,
    /// The lowered module, as [`super::lower_module_owned`] makes it.
    pub module: Module,
    /// The module-level diagnostics that need the whole module
    /// (`check_version_target`), as [`super::lower_module_owned`] gives them.
    pub diags: Vec<Diag>,
}

/// Parse `src` and lower its first function body as it is parsed; `None`
/// where the result might differ from the whole-tree front end's
/// (`parse_with_diags`, then `lower_module_owned`) or any diagnostic came
/// up: then the caller runs that instead. Only directives may follow the
/// streamed body (a later function or variable would be in scope in it).
pub fn parse_and_lower(file: &str, src: &str) -> Option<Streamed> {
    let prefix: OnceCell<Prefix> = OnceCell::new();
    let lowering = RefCell::new(Lowering::Waiting);
    let sink = |e: BodyEvent| lowering.borrow_mut().take(file, &prefix, e);
    let (ast, parse_diags) = parse_streaming(file, src, Box::new(sink));
    let Lowering::Ended(streaming) = lowering.into_inner() else {
        return None;
    };
    let module = streaming.finish()?;
    if !parse_diags.is_empty() {
        return None;
    }
    let first_body = ast
        .items
        .iter()
        .position(|i| matches!(i, ast::Item::Function(f) if f.body.is_some()))?;
    if !ast.items[first_body + 1..]
        .iter()
        .all(|i| matches!(i, ast::Item::Directive(_)))
    {
        return None;
    }
    let diags = crate::target::check_version_target(file, &ast)
        .into_iter()
        .collect();
    Some(Streamed { ast, module, diags })
}

/// Where the streamed lowering of a body stands.
enum Lowering<'a> {
    /// The body has not begun.
    Waiting,
    /// Statements are lowered as they come.
    Body(Streaming<'a>),
    /// The body's `}` was read.
    Ended(Streaming<'a>),
    /// A speculation failed: what comes is dropped.
    Failed,
}

impl<'a> Lowering<'a> {
    /// Take the parser's next event.
    fn take(&mut self, file: &'a str, prefix: &'a OnceCell<Prefix>, e: BodyEvent) {
        *self = match (std::mem::replace(self, Lowering::Failed), e) {
            (Lowering::Waiting, BodyEvent::Start(start)) => Prefix::new(file, *start)
                .map(|(p, out)| {
                    let p = prefix.get_or_init(|| p);
                    Lowering::Body(Streaming::new(file, p, out))
                })
                .unwrap_or(Lowering::Failed),
            (Lowering::Body(mut s), BodyEvent::Stmts(batch)) => {
                if s.push(batch) {
                    Lowering::Body(s)
                } else {
                    Lowering::Failed
                }
            }
            (Lowering::Body(s), BodyEvent::End) => Lowering::Ended(s),
            _ => Lowering::Failed,
        };
    }
}

/// What a streamed body's lowering reads besides the body: the module up
/// to the function (with the function's header, its body empty), the
/// function's header, its signatures and symbols, the handler table.
struct Prefix {
    m: ast::Module,
    header: ast::Function,
    bytes_left: usize,
    sigs: NameMap<String, super::declarations::Signature>,
    symbols: NameMap<String, ()>,
    table: super::HandlerTable,
}

impl Prefix {
    /// The prefix `start` begins, and the IR module with the prototypes
    /// before the function; `None` on any diagnostic, or where a function
    /// with a body comes before (the body streamed is the module's first).
    fn new(file: &str, start: BodyStart) -> Option<(Prefix, Module)> {
        let BodyStart {
            module: mut m,
            function: header,
            bytes_left,
        } = start;
        let before = m.items.len();
        let mut empty = header.clone();
        empty.body = Some(Vec::new());
        m.items.push(ast::Item::Function(empty));
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
        for item in &m.items[..before] {
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
        let p = Prefix {
            m,
            header,
            bytes_left,
            sigs,
            symbols,
            table,
        };
        Some((p, out))
    }
}

/// A body being lowered as its statements come.
struct Streaming<'a> {
    cx: LowerCx<'a>,
    table: &'a super::HandlerTable,
    /// The IR module, the function added at the end.
    out: Module,
    seen: Seen,
}

impl<'a> Streaming<'a> {
    fn new(file: &'a str, p: &'a Prefix, out: Module) -> Streaming<'a> {
        let mut cx = function_cx(file, &p.m, &p.header, true, &p.symbols, &p.sigs);
        cx.func
            .insts
            .reserve(p.bytes_left / MIN_BYTES_PER_STATEMENT);
        cx.label_scopes.streaming = true;
        cx.label_scopes.defs = vec![NameMap::default()];
        let seen = Seen {
            declared: cx.func.vregs.len(),
            ..Seen::default()
        };
        Streaming {
            cx,
            table: &p.table,
            out,
            seen,
        }
    }

    /// Lower the next statements (freed here); whether every speculation
    /// held.
    fn push(&mut self, mut batch: Vec<ast::Stmt>) -> bool {
        for s in batch.iter_mut() {
            if !admit(&mut self.cx, &mut self.seen, s) {
                return false;
            }
            lower_stmts(&mut self.cx, std::slice::from_mut(s), self.table);
        }
        self.cx.diags.is_empty()
    }

    /// The module with the function, once the whole body came; `None` if a
    /// label stayed undefined or a diagnostic came up.
    fn finish(mut self) -> Option<Module> {
        let ls = &self.cx.label_scopes;
        if !self.cx.diags.is_empty() || !self.cx.undefined.is_empty() || !ls.reserved.is_empty() {
            return None;
        }
        finish(&mut self.cx, &self.seen);
        self.out.add_function(self.cx.func);
        Some(self.out)
    }
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
                // A second definition: the whole-tree lowering's error.
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

/// Name the blocks and number them as the whole-tree lowering does: the
/// names in its order (the function scope's labels, the nested scopes',
/// then the blocks ori made), the numbers in its order of creation.
fn finish(cx: &mut LowerCx<'_>, seen: &Seen) {
    let ls = &mut cx.label_scopes;
    ls.streaming = false;
    ls.forget_names(
        seen.top
            .iter()
            .chain(&seen.nested)
            .map(|(n, _)| n.clone())
            .collect(),
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = ".version 8.5\n.target sm_90a\n.address_size 64\n";

    /// The whole-tree front end's module, printed, and its diagnostics.
    fn whole_tree(src: &str) -> (String, Vec<Diag>) {
        let (ast, mut diags) = crate::parse_with_diags("k.ptx", src);
        let (m, more) = crate::lower::lower_module_owned("k.ptx", ast);
        diags.extend(more);
        (ori_ir::write_module(&m), diags)
    }

    fn streamed(body: &str) -> Option<String> {
        let src = format!("{HEAD}{body}");
        let p = parse_and_lower("k.ptx", &src)?;
        let (want, diags) = whole_tree(&src);
        assert_eq!(diags, p.diags);
        let got = ori_ir::write_module(&p.module);
        assert_eq!(want, got);
        Some(got)
    }

    #[test]
    fn forward_branches_nested_labels_and_skips_match_the_whole_tree_lowering() {
        // A forward branch, a backward one, the same label in two nested
        // scopes and in the function scope, a guarded wgmma (the skip
        // block ori makes) and a label spelled like a block the writer
        // names itself.
        let body = r#"
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra $L_end;
bb1:
    { .reg .pred q; setp.ne.u32 q, %r1, 1; @q bra W; W: add.u32 %r2, %r2, 1; }
    { W: add.u32 %r3, %r3, 1; @%p1 bra W; }
W:
    wgmma.fence.sync.aligned;
    @%p1 wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, 1, 1, 1, 0, 0;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, 8;
    @%p2 bra W;
$L_end:
    ret;
}
"#;
        let ir = streamed(body).expect("the streamed front end declined");
        assert!(ir.contains("W_1"), "{ir}");
        assert!(ir.contains("$ori_skip_0"), "{ir}");
    }

    #[test]
    fn a_register_declared_after_the_lowering_made_one_is_declined() {
        // `%big<5000>` is declared a member at a time, on first use: the
        // `.reg` after that use would be numbered after it here, before it
        // in the whole-tree lowering.
        let body = ".visible .entry k()\n{\n.reg .b32 %big<5000>;\nmov.u32 %big7, 1;\n.reg .b32 %late;\nmov.u32 %late, %big7;\nret;\n}\n";
        assert_eq!(streamed(body), None);
        // Before any register is made, a `.reg` anywhere is fine.
        let body = ".visible .entry k()\n{\n.reg .b32 %a;\nmov.u32 %a, 1;\n.reg .b32 %b;\nmov.u32 %b, %a;\nret;\n}\n";
        assert!(streamed(body).is_some());
    }

    #[test]
    fn a_name_used_before_its_declaration_is_declined() {
        let body =
            ".visible .entry k()\n{\n.reg .b32 %a;\nmov.u32 %a, %b;\n.reg .b32 %b;\nret;\n}\n";
        assert_eq!(streamed(body), None);
    }

    #[test]
    fn errors_and_undefined_or_repeated_labels_are_left_to_the_whole_tree_front_end() {
        for body in [
            // An undefined branch target.
            ".visible .entry k()\n{\nbra $nowhere;\nret;\n}\n",
            // A label defined twice in the function scope.
            ".visible .entry k()\n{\nL: ret;\nL: ret;\n}\n",
            // An unknown instruction.
            ".visible .entry k()\n{\nfrobnicate;\nret;\n}\n",
            // A syntax error.
            ".visible .entry k()\n{\nmov.u32 %r1 1;\nret;\n}\n",
        ] {
            assert_eq!(streamed(body), None, "{body}");
        }
    }

    #[test]
    fn a_function_or_variable_after_the_body_is_declined() {
        let body = ".visible .entry k()\n{\nret;\n}\n.func f()\n{\nret;\n}\n";
        assert_eq!(streamed(body), None);
        let body = ".visible .entry k()\n{\nret;\n}\n.global .u32 g;\n";
        assert_eq!(streamed(body), None);
        // Prototypes before the body are lowered as the whole-tree
        // front end lowers them.
        let body = ".extern .func f();\n.visible .entry k()\n{\ncall f, ();\nret;\n}\n";
        assert!(streamed(body).is_some());
    }
}
