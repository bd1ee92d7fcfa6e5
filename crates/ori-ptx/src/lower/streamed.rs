//! Lowering each function body while it is still being parsed, on one
//! thread.
//!
//! The whole-tree lowering ([`super::lower_module_owned`]) reads a whole
//! body before it lowers a statement: every `.reg` of the function scope
//! is declared first, every label gets its block first (a branch may jump
//! forward), every function-scope variable is known first. So the syntax
//! tree of the whole body exists at once, on top of the IR made of it: on
//! a kernel of a million instructions, about half the front end's memory.
//! Here the parser ([`crate::parser::parse_streaming`]) hands each body's
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
//! - no module item after the body is named like one of its labels (the
//!   whole-tree lowering knows every item of the module in every body, and
//!   takes such a name for the item);
//! - nothing is wrong with it: no error or warning at all.
//!
//! A name used before its declaration (a register, a variable, a later
//! item of the module) is taken for a label by the second rule and found
//! undefined at the end. Nested `{ }` scopes arrive whole, so their labels
//! and variables are known before any of their statements is lowered, as
//! in the whole-tree lowering. The bodies of a module (a split kernel and
//! its combine kernel, device functions and their callers) are lowered one
//! after the other, each with the module-level items before it (variables,
//! prototypes, the functions before it) in scope. When a speculation
//! fails, [`parse_and_lower`] returns `None` and the caller parses and
//! lowers the module as a whole, so every message ori prints about a body
//! comes from the one lowering. When they hold, each function is the one
//! the whole-tree lowering makes: the same instructions, registers, block
//! names and block numbers (label blocks are made as their labels come and
//! renumbered at the end into the whole-tree order: the entry, the
//! function scope's labels, the nested scopes' labels, then the blocks
//! made while lowering). The test `tests/streamed_front_end.rs` compares
//! the two on every kernel of the corpora.

use super::{
    collect_locals, declare_regs, function_cx, handler_table, label_defs, lower_function,
    lower_stmts, LowerCx, ModuleScope,
};
use crate::ast;
use crate::diag::Diag;
use crate::parser::{parse_streaming, BodyEvent, BodyStart};
use crate::source_map::{self, Locs, RawLoc};
use ori_ir::{Block, Function, Module, NameMap, NameSet};
use std::cell::RefCell;

/// Bytes of source per statement, at least, in any body a compiler
/// writes (`ret;` and a newline is 5; Triton's and nvcc's average is over
/// 40): the instruction table is reserved for `bytes_left / this`, which
/// over-reserves address space, not memory (pages are touched as they
/// are filled).
const MIN_BYTES_PER_STATEMENT: usize = 12;

/// What [`parse_and_lower`] makes of a module.
pub struct Streamed {
    /// The syntax tree without the function bodies (their statements were
    /// lowered and freed): the header, the items, the functions' headers.
    pub ast: ast::Module,
    /// The lowered module, as [`super::lower_module_owned`] makes it.
    pub module: Module,
    /// The module-level diagnostics that need the whole module
    /// (`check_version_target`), as [`super::lower_module_owned`] gives them.
    pub diags: Vec<Diag>,
    /// The `.loc` positions of the bodies, taken as the statements went
    /// by ([`Locs::source_map`] is what [`crate::source_map::build`] finds):
    /// a caller that shows diagnostics on the user's source need not
    /// parse the text again.
    pub locs: Locs,
}

/// Parse `src` and lower each function body as it is parsed; `None` where
/// the result might differ from the whole-tree front end's
/// (`parse_with_diags`, then `lower_module_owned`), any diagnostic came up
/// or the module has no body: then the caller runs that instead.
pub fn parse_and_lower(file: &str, src: &str) -> Option<Streamed> {
    let table = handler_table();
    let lowering = RefCell::new(Lowering::new(file, &table));
    let sink = |e: BodyEvent<'_>| lowering.borrow_mut().take(e);
    let (ast, parse_diags) = parse_streaming(file, src, Box::new(sink));
    let (module, locs) = lowering.into_inner().finish(&ast)?;
    if !parse_diags.is_empty() {
        return None;
    }
    let diags = crate::target::check_version_target(file, &ast)
        .into_iter()
        .collect();
    Some(Streamed {
        ast,
        module,
        diags,
        locs,
    })
}

/// Where the streamed lowering of a module stands.
enum State<'a> {
    /// Between bodies (or before the first).
    Between,
    /// A body's statements are lowered as they come (boxed: the lowering
    /// state is large, and one exists at a time).
    Body(Box<Streaming<'a>>),
    /// A speculation failed: what comes is dropped.
    Failed,
}

/// The streamed lowering of a module: the items met so far, the body
/// being lowered.
struct Lowering<'a> {
    file: &'a str,
    table: &'a super::HandlerTable,
    /// The items taken so far (from the first body on), with the IR module
    /// they made: its globals and functions.
    scope: Option<ModuleScope>,
    /// The module's items handed over so far ([`BodyStart::module`]).
    handed: usize,
    /// The bodies lowered so far.
    bodies: usize,
    /// The labels of the bodies lowered so far, which no later item may be
    /// named like.
    labels: NameSet<ast::Name>,
    /// The `.loc`s of each body lowered so far, in order.
    locs: Vec<Vec<RawLoc>>,
    state: State<'a>,
}

impl<'a> Lowering<'a> {
    fn new(file: &'a str, table: &'a super::HandlerTable) -> Lowering<'a> {
        Lowering {
            file,
            table,
            scope: None,
            handed: 0,
            bodies: 0,
            labels: NameSet::default(),
            locs: Vec::new(),
            state: State::Between,
        }
    }

    /// Take the parser's next event.
    fn take(&mut self, e: BodyEvent<'_>) {
        self.state = match (std::mem::replace(&mut self.state, State::Failed), e) {
            (State::Between, BodyEvent::Start(start)) => self.start(*start),
            (State::Body(mut s), BodyEvent::Stmts(batch)) => {
                if s.push(batch) {
                    State::Body(s)
                } else {
                    State::Failed
                }
            }
            (State::Body(s), BodyEvent::End) => match s.finish() {
                Some((func, labels, locs)) => {
                    self.labels.extend(labels);
                    self.locs.push(locs);
                    self.bodies += 1;
                    let scope = self.scope.as_mut().expect("a body began");
                    scope.out.add_function(func);
                    State::Between
                }
                None => State::Failed,
            },
            _ => State::Failed,
        };
    }

    /// A body begins: take the items before it and its header, then lower
    /// its statements as they come.
    fn start(&mut self, start: BodyStart<'_>) -> State<'a> {
        let BodyStart {
            module: m,
            new_items,
            function: header,
            bytes_left,
        } = start;
        let items = &m.items[new_items];
        self.handed += items.len();
        let scope = self.scope.get_or_insert_with(|| ModuleScope::new(m));
        if !take_items(self.file, m, items, scope, (&self.labels, self.table)) {
            return State::Failed;
        }
        let mut empty = header.clone();
        empty.body = Some(Vec::new());
        if self.labels.contains(header.name.as_str()) {
            return State::Failed;
        }
        scope.add(self.file, &ast::Item::Function(empty));
        if scope.has_diags() {
            return State::Failed;
        }
        let (sigs, symbols) = (&scope.sigs, &scope.symbols);
        let mut cx = function_cx(self.file, m, &header, true, symbols, sigs);
        cx.func.insts.reserve(bytes_left / MIN_BYTES_PER_STATEMENT);
        State::Body(Box::new(Streaming::new(cx, self.table)))
    }

    /// The IR module once the parser is done with `ast` (the items after
    /// the last body taken), and the bodies' source positions; `None` if a
    /// speculation failed, a body is unfinished or the module has none.
    fn finish(mut self, ast: &ast::Module) -> Option<(Module, Locs)> {
        let (State::Between, Some(mut scope)) = (self.state, self.scope.take()) else {
            return None;
        };
        let bodies = ast.items.iter().filter(|i| has_body(i)).count();
        let rest = ast.items.get(self.handed..)?;
        if bodies != self.bodies
            || !take_items(self.file, ast, rest, &mut scope, (&self.labels, self.table))
        {
            return None;
        }
        let mut all = Locs::default();
        let ends = ast.items.iter().filter_map(|i| match i {
            ast::Item::Function(f) if f.body.is_some() => Some(f.span.hi),
            _ => None,
        });
        for (until, locs) in ends.zip(self.locs) {
            all.push_body(locs, until);
        }
        all.files.clone_from(&ast.files);
        Some((scope.out, all))
    }
}

fn has_body(item: &ast::Item) -> bool {
    matches!(item, ast::Item::Function(f) if f.body.is_some())
}

/// Take module `m`'s `items` into `scope` (a function with a body is one
/// lowered already: its header was taken when it began) and lower the
/// prototypes among them; `false` on a diagnostic or an item named like a
/// label of a body before it.
fn take_items(
    file: &str,
    m: &ast::Module,
    items: &[ast::Item],
    scope: &mut ModuleScope,
    (labels, table): (&NameSet<ast::Name>, &super::HandlerTable),
) -> bool {
    for item in items.iter().filter(|i| !has_body(i)) {
        let name = match item {
            ast::Item::Function(f) => &f.name,
            ast::Item::Var(v) => &v.name,
            ast::Item::Directive(_) => continue,
        };
        if labels.contains(name.as_str()) {
            return false;
        }
        scope.add(file, item);
        if let ast::Item::Function(f) = item {
            let (func, d) = lower_function(file, m, f, None, &scope.symbols, &scope.sigs, table);
            if !d.is_empty() {
                return false;
            }
            scope.out.add_function(func);
        }
    }
    !scope.has_diags()
}

/// A body being lowered as its statements come.
struct Streaming<'a> {
    cx: LowerCx<'a>,
    table: &'a super::HandlerTable,
    seen: Seen,
    /// The body's `.loc`s so far.
    locs: Vec<RawLoc>,
}

impl<'a> Streaming<'a> {
    /// The lowering of the body `cx` has the header of.
    fn new(mut cx: LowerCx<'a>, table: &'a super::HandlerTable) -> Streaming<'a> {
        cx.label_scopes.streaming = true;
        cx.label_scopes.defs = vec![NameMap::default()];
        let seen = Seen {
            declared: cx.func.vregs.len(),
            ..Seen::default()
        };
        Streaming {
            cx,
            table,
            seen,
            locs: Vec::new(),
        }
    }

    /// Lower the next statements (freed here); whether every speculation
    /// held.
    fn push(&mut self, mut batch: Vec<ast::Stmt>) -> bool {
        source_map::collect(&batch, &mut self.locs);
        for s in batch.iter_mut() {
            if !admit(&mut self.cx, &mut self.seen, s) {
                return false;
            }
            lower_stmts(&mut self.cx, std::slice::from_mut(s), self.table);
        }
        self.cx.diags.is_empty()
    }

    /// The function, its labels and its `.loc`s, once the whole body came;
    /// `None` if a label stayed undefined or a diagnostic came up.
    fn finish(mut self) -> Option<(Function, Vec<ast::Name>, Vec<RawLoc>)> {
        let ls = &self.cx.label_scopes;
        if !self.cx.diags.is_empty() || !self.cx.undefined.is_empty() || !ls.reserved.is_empty() {
            return None;
        }
        finish(&mut self.cx, &self.seen);
        let labels = self.seen.top.into_iter().chain(self.seen.nested);
        Some((self.cx.func, labels.map(|(n, _)| n).collect(), self.locs))
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
    fn every_body_of_a_module_is_streamed_with_the_items_before_it() {
        // A split kernel and its combine kernel, a device function called
        // by a later body, variables and prototypes between and after the
        // bodies: each body is lowered with the items before it.
        let body = r#"
.extern .func (.param .b32 r) ext(.param .b32 a);
.global .align 4 .u32 counter;
.func (.param .b32 r) twice(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [a];
    add.s32 %r2, %r1, %r1;
    st.param.b32 [r], %r2;
    ret;
}
.visible .entry split(.param .u64 p)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra $L_done;
    {
    .param .b32 arg;
    .param .b32 ret;
    st.param.b32 [arg], %r1;
    call (ret), twice, (arg);
    ld.param.b32 %r2, [ret];
    }
    st.global.u32 [%rd1], %r2;
$L_done:
    ret;
}
.shared .align 4 .b8 smem[64];
.visible .entry combine(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    mov.u64 %rd2, smem;
    ld.global.u32 %r1, [counter];
    st.shared.u32 [%rd2], %r1;
$L_done:
    ret;
}
.global .u32 after;
.extern .func later();
"#;
        let ir = streamed(body).expect("the streamed front end declined");
        for f in ["twice", "split", "combine", "later"] {
            assert!(ir.contains(f), "{f} is missing from\n{ir}");
        }
    }

    #[test]
    fn a_later_item_the_whole_tree_lowering_would_see_in_a_body_is_declined() {
        // A call to a function only defined after the body (no prototype
        // before it), a variable declared after the body that uses it.
        for body in [
            ".visible .entry k()\n{\ncall f, ();\nret;\n}\n.func f()\n{\nret;\n}\n",
            ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<2>;\nmov.u64 %rd1, g;\nret;\n}\n.global .u32 g;\n",
            // A later item named like a label of the body: a symbol there
            // for the whole-tree lowering.
            ".visible .entry k()\n{\nL: bra L;\n}\n.global .u32 L;\n",
            ".visible .entry k()\n{\nL: bra L;\n}\n.visible .entry L()\n{\nret;\n}\n",
        ] {
            assert_eq!(streamed(body), None, "{body}");
        }
        // Prototypes before the body are lowered as the whole-tree
        // front end lowers them.
        let body = ".extern .func f();\n.visible .entry k()\n{\ncall f, ();\nret;\n}\n";
        assert!(streamed(body).is_some());
    }

    #[test]
    fn a_second_definition_or_a_failed_second_body_is_declined() {
        let body = ".visible .entry k()\n{\nret;\n}\n.visible .entry k()\n{\nret;\n}\n";
        assert_eq!(streamed(body), None);
        let body = ".visible .entry k()\n{\nret;\n}\n.visible .entry j()\n{\nbra $nowhere;\n}\n";
        assert_eq!(streamed(body), None);
        // No body at all: nothing to stream.
        assert_eq!(streamed(".extern .func f();\n"), None);
    }
}
