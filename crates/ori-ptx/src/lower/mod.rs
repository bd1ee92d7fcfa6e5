//! Lowering of the PTX AST to Ori IR.
//!
//! ptxas lowers PTX through a table that maps each mnemonic to a handler
//! (seed 003, "PTX Instruction Handlers"); ori does the same (`handlers`).
//! This module walks functions and statements — declarations become virtual
//! registers with register classes, labels and branches become blocks —
//! and calls the handler of each instruction. Every problem becomes a `Diag`
//! in ptxas's wording and layout, and lowering goes on to find the next one.

mod cvt_forms;
pub mod declarations;
mod float_literals;
mod generic;
mod handlers;
mod indexed_branch;
mod indirect_call;
mod instruction_types;
mod memory_forms;
mod mov_types;
mod operand_sizes;
mod streamed;
mod table_forms;
mod vectors;
mod wgmma;

pub use handlers::{handler_table, Handler, HandlerTable};
pub use streamed::{parse_and_lower, Streamed};

use crate::ast;
use crate::diag::{Diag, Severity, Span};
use fxhash::FxHashSet;
use ori_ir::{Block, FuncKind, Function, Guard, Module, Operand, Param, RegClass, VReg};
use ori_ir::{NameMap, NameSet};
use smallvec::SmallVec;
use std::rc::Rc;

/// State shared by the handlers while one function is lowered.
pub struct LowerCx<'a> {
    /// Input file name, for diagnostics.
    pub file: &'a str,
    /// The function being built.
    pub func: Function,
    /// The module's target list.
    pub target: Vec<String>,
    /// `.version` of the module.
    pub version: (u32, u32),
    /// The labels each `{ }` scope defines, by scope id (0 = the function
    /// body, then the nested scopes in source order), with their blocks.
    /// PTX scopes labels like registers (see [`LabelScopes`]).
    label_scopes: LabelScopes,
    /// The scopes enclosing the statement being lowered, innermost last.
    scope_path: Vec<usize>,
    /// The id the next nested scope gets while lowering (same pre-order as
    /// [`collect_labels_and_locals`]).
    next_scope: usize,
    /// Label references that no enclosing scope defines, in order: each is
    /// an `Unknown symbol` error after the body's other errors.
    undefined: Vec<(String, Span)>,
    /// The function's `.branchtargets` lists declared so far, by name.
    pub(super) branch_lists: NameMap<String, Box<[Operand]>>,
    /// The function's `.calltargets` lists and `.callprototype`s declared
    /// so far, by name.
    pub(super) call_lists: NameMap<String, (usize, indirect_call::CallList)>,
    /// The (opcode, modifiers, operand count) of open-family instructions
    /// whose types and modifiers passed their checks (`generic::open_family_fits`).
    pub(super) open_forms_fit: fxhash::FxHashSet<(ori_ir::Symbol, ori_ir::ModList, usize)>,
    /// `brx.idx` lists named before any declaration of theirs: judged at
    /// the end of the function ([`indexed_branch::undeclared_lists`]).
    pub(super) list_refs: Vec<(String, Span)>,
    /// Names of module-scope and function-scope symbols (params, variables, functions).
    symbols: Rc<NameMap<String, ()>>,
    /// Local (function-scope) variable names.
    locals: NameMap<String, ()>,
    /// Bytes of each function-scope variable (for call arguments).
    local_sizes: NameMap<String, Option<u64>>,
    /// The module's function signatures (for calls).
    pub sigs: Rc<NameMap<String, declarations::Signature>>,
    /// Diagnostics.
    pub diags: Vec<Diag>,
    cur: Block,
    /// Set after a terminator: the next instruction starts a new block.
    need_block: bool,
    /// The instructions that name a block, in order (what renumbering the
    /// blocks reads: `Function::renumber_blocks_named_by`).
    pub(super) block_users: Vec<ori_ir::Inst>,
    /// Large `.reg` ranges (`%r<N>` with N over [`EAGER_RANGE`]), declared a
    /// register at a time on first use: prefix -> (type, class, N).
    lazy_ranges: NameMap<String, (ori_ir::Symbol, RegClass, u32)>,
    /// Registers declared in the enclosing `{ }` scopes, innermost last:
    /// PTX name -> register. A name declared again in an inner scope (or in
    /// a sibling scope) is a register of its own, as in ptxas; its IR name
    /// gets a suffix (`x_1`) to stay unique in the function.
    scopes: Vec<NameMap<ast::Name, VReg>>,
    /// Registers declared in a nested scope: found by name only through
    /// `scopes`, so that a use after their scope closes is an `Unknown
    /// symbol`, as in ptxas (a statement moved out of an inline-asm block
    /// loses the `.reg` it declares).
    scoped: FxHashSet<VReg>,
    /// Per IR name asked for in a nested scope, the last suffix it was
    /// given (`x_3`): see [`fresh_reg_name`].
    reg_suffixes: NameMap<ast::Name, u32>,
    /// The registers the current instruction's checks already resolved,
    /// by the address of the operand's name in the syntax tree (alive and
    /// unmoved while the instruction is lowered; emptied before each one).
    resolved: SmallVec<[(usize, VReg); 8]>,
    /// Each (mnemonic, first modifier)'s handler, looked up once in the
    /// table by its dotted name (`handlers::lower_inst`).
    pub(super) handlers:
        fxhash::FxHashMap<(ori_ir::Symbol, Option<ori_ir::Symbol>), Option<handlers::Handler>>,
    /// Per interned modifier list, its first modifier that is not an
    /// arithmetic one (`generic::first_non_arithmetic`): a kernel repeats
    /// a few dozen lists over thousands of instructions.
    pub(super) mod_checks: fxhash::FxHashMap<ori_ir::ModList, Option<ori_ir::Symbol>>,
    /// The components of the function-scope vector registers, by their
    /// PTX name (`mx.x`; the IR calls it `mx$x`).
    components: NameMap<ast::Name, VReg>,
    /// The width (2 or 4) of each vector register (`.reg .v4 .s32 abcd;`),
    /// by the register that stands for it whole.
    vector_widths: fxhash::FxHashMap<VReg, u32>,
    /// Per (mnemonic, modifier list), the form the instruction table gives
    /// it (`table_forms`), or the message saying why none does.
    pub(super) forms: fxhash::FxHashMap<table_forms::FormKey, table_forms::Verdict>,
}

/// `.reg` ranges up to this size are declared at once; larger ones (ptxas
/// takes any N below 2^32) on first use, so that memory follows the
/// registers the code uses, not the declaration.
pub const EAGER_RANGE: u32 = 4096;

impl LowerCx<'_> {
    /// Record an error at a span.
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.diags
            .push(Diag::new(self.file, span, Severity::Error, message));
    }

    /// Whether the target list names sm_90a.
    pub fn is_sm90a(&self) -> bool {
        self.target.iter().any(|t| t == "sm_90a")
    }

    /// The architecture named in `.target`.
    pub fn arch(&self) -> &str {
        self.target
            .iter()
            .find(|t| t.starts_with("sm_"))
            .map_or("", |t| t.as_str())
    }

    /// A block for a label whose IR name is given once the whole body is
    /// known (the streamed lowering names its label blocks at the end).
    fn unnamed_block(&mut self) -> Block {
        self.func.blocks.push(ori_ir::BlockData {
            label: None,
            nounroll: false,
        })
    }

    /// A block for a label ori makes itself (`$ori_skip_N`), or for an
    /// undefined reference, with an IR name no other block has.
    fn fresh_label_block(&mut self, name: &str) -> Block {
        if self.label_scopes.streaming {
            let b = self.unnamed_block();
            self.label_scopes.fresh.push((b, name.into()));
            return b;
        }
        let ir = self.label_scopes.unique_name(name);
        self.func.blocks.push(ori_ir::BlockData {
            label: Some(ir.into()),
            nounroll: false,
        })
    }

    /// The block of label `name` as seen from the current scope: the
    /// innermost enclosing scope that defines it, whether before or after
    /// this point (forward branches are fine). While the body streams in,
    /// a name no scope defines yet is taken for a label the function scope
    /// defines further down (`streamed` checks at the end that it does).
    pub(super) fn resolve_label(&mut self, name: &str) -> Option<Block> {
        let found = self
            .scope_path
            .iter()
            .rev()
            .find_map(|&s| self.label_scopes.defs[s].get(name).copied());
        if found.is_some() || !self.label_scopes.streaming {
            return found;
        }
        let b = self.unnamed_block();
        self.label_scopes.defs[0].insert(name.into(), b);
        self.label_scopes.reserved.insert(name.into());
        Some(b)
    }

    /// Whether a scope enclosing the current statement defines label
    /// `name` (nothing is reserved, even while the body streams in).
    pub(super) fn label_scopes_define(&self, name: &str) -> bool {
        self.scope_path
            .iter()
            .any(|&s| self.label_scopes.defs[s].contains_key(name))
    }

    /// A label reference: its block, or (undefined here) an error at the end
    /// of the function and a placeholder block.
    pub(super) fn label_ref(&mut self, name: &str, span: Span) -> Block {
        if let Some(b) = self.resolve_label(name) {
            return b;
        }
        self.undefined.push((name.to_string(), span));
        self.fresh_label_block(name)
    }

    /// Resolve an AST operand to an IR operand; unknown names are reported.
    pub fn operand(&mut self, op: &ast::Operand) -> Option<Operand> {
        use ast::OperandKind as K;
        Some(match &op.kind {
            K::Reg(n) | K::Symbol(n) => self.name(n, op.span)?,
            K::SymOffset(n, off) => {
                // `sym+8` outside brackets: an address-of expression.
                if !self.is_symbol(n) {
                    self.error(op.span, format!("Unknown symbol '{n}'"));
                    return None;
                }
                Operand::Addr {
                    base: ori_ir::AddrBase::Sym(n.as_str().into()),
                    offset: *off,
                }
            }
            K::Imm(i) => Operand::Imm(match *i {
                ast::Imm::Int(v) => ori_ir::Imm::Int(v),
                ast::Imm::UInt(v) => ori_ir::Imm::Hex(v),
                ast::Imm::F32(v) => ori_ir::Imm::F32(v),
                ast::Imm::F64(v) => ori_ir::Imm::F64(v),
            }),
            K::Vector(v) => Operand::Vector(self.operands(v)?),
            K::CallArgs(v) => Operand::Args(self.operands(v)?),
            // `[a, b]` (e.g. tensor coordinates): kept as a vector of operands.
            K::AddressList(v) => Operand::Vector(self.operands(v)?),
            K::Address { base, offset } => {
                let base = match base {
                    None => ori_ir::AddrBase::None,
                    Some(ast::AddrBase::Reg(n)) | Some(ast::AddrBase::Symbol(n)) => {
                        if let Some(r) = self.lookup_reg(n) {
                            ori_ir::AddrBase::Reg(r)
                        } else if self.is_symbol(n) {
                            ori_ir::AddrBase::Sym(n.as_str().into())
                        } else {
                            self.error(op.span, format!("Unknown symbol '{n}'"));
                            return None;
                        }
                    }
                };
                Operand::Addr {
                    base,
                    offset: *offset,
                }
            }
            K::NegPred(n) => match self.lookup_reg(n) {
                Some(r) => Operand::NotReg(r),
                None => {
                    self.error(op.span, format!("Unknown symbol '{n}'"));
                    return None;
                }
            },
            K::PredPair(pair) if pair.0 == "_" => match self.lookup_reg(&pair.1) {
                // `_|p` writes the predicate only.
                Some(r) => Operand::Reg(r),
                None => {
                    self.error(op.span, format!("Unknown symbol '{}'", pair.1));
                    return None;
                }
            },
            K::PredPair(pair) => {
                let (a, b) = &**pair;
                let (ra, rb) = (self.lookup_reg(a), self.lookup_reg(b));
                match (ra, rb) {
                    (Some(ra), Some(rb)) => Operand::PredPair(ra, rb),
                    _ => {
                        let bad = if ra.is_none() { a } else { b };
                        self.error(op.span, format!("Unknown symbol '{bad}'"));
                        return None;
                    }
                }
            }
            K::Sink => Operand::Sink,
        })
    }

    /// [`LowerCx::operand`] of each of `v`; `None` if one is unknown.
    fn operands(&mut self, v: &[ast::Operand]) -> Option<Box<[Operand]>> {
        v.iter().map(|o| self.operand(o)).collect()
    }

    fn is_symbol(&self, n: &str) -> bool {
        self.symbols.contains_key(n)
            || self.locals.contains_key(n)
            || self.func.params.iter().any(|p| &*p.name == n)
            || self.func.ret_params.iter().any(|p| &*p.name == n)
    }

    /// The register named `n`, declaring it now if it belongs to a large
    /// `.reg` range.
    pub(super) fn lookup_reg(&mut self, n: &str) -> Option<VReg> {
        if let Some(r) = self.scopes.iter().rev().find_map(|m| m.get(n).copied()) {
            return Some(r);
        }
        if let Some(&r) = self.components.get(n) {
            return Some(r);
        }
        let found = self.func.reg(n);
        if let Some(r) = found.filter(|r| self.scoped.is_empty() || !self.scoped.contains(r)) {
            return Some(r);
        }
        let (prefix, i) = ori_ir::register_names::split_range_name(n)?;
        let &(ty, class, count) = self.lazy_ranges.get(prefix)?;
        if i >= u64::from(count) {
            return None;
        }
        // A member of a large range used for the first time is declared
        // now, with the range's interned type and no second lookup; the
        // name taken by a register of a closed scope keeps that register,
        // as `declare_reg` returns it.
        Some(match found {
            Some(r) => r,
            None => self.func.declare_new_reg(n, ty, class),
        })
    }

    /// The class of the register named `n`, if it names one.
    pub fn reg_class(&mut self, n: &str) -> Option<RegClass> {
        self.lookup_reg(n).map(|r| self.func.vregs[r].class)
    }

    /// Whether `n` names anything here: a register, a special register, a
    /// symbol or a label.
    pub fn knows_name(&mut self, n: &str) -> bool {
        self.lookup_reg(n).is_some()
            || crate::isa::is_special_register(n)
            || self.is_symbol(n)
            || self.resolve_label(n).is_some()
    }

    fn name(&mut self, n: &str, span: Span) -> Option<Operand> {
        let at = n.as_ptr() as usize;
        if let Some(&(_, r)) = self.resolved.iter().find(|(p, _)| *p == at) {
            return Some(Operand::Reg(r));
        }
        if let Some(r) = self.lookup_reg(n) {
            return Some(Operand::Reg(r));
        }
        if crate::isa::is_special_register(n) {
            return Some(Operand::Special(n.into()));
        }
        if self.is_symbol(n) {
            return Some(Operand::Sym(n.into()));
        }
        if self.resolve_label(n).is_some() || n.starts_with('$') {
            return Some(Operand::Block(self.label_ref(n, span)));
        }
        self.error(span, format!("Unknown symbol '{n}'"));
        None
    }

    /// Resolve a branch target label.
    pub fn label_target(&mut self, op: &ast::Operand) -> Option<Operand> {
        match &op.kind {
            ast::OperandKind::Reg(n) | ast::OperandKind::Symbol(n) => {
                Some(Operand::Block(self.label_ref(n, op.span)))
            }
            _ => {
                self.error(op.span, "Arguments mismatch for instruction 'bra'");
                None
            }
        }
    }

    /// Resolve a guard predicate.
    pub fn guard(&mut self, p: &ast::Pred) -> Option<Guard> {
        match self.lookup_reg(&p.reg) {
            // ptxas 13.0.88 on `@%r1 add...` with `%r1` a `.b32`.
            Some(r) if self.func.vregs[r].class != RegClass::Pred => {
                self.error(p.span, "Predicate expression expected");
                None
            }
            Some(r) => Some(Guard {
                reg: r,
                negated: p.negated,
            }),
            // ptxas 13.0.88: both, in this order (`*__undeclared_guard`).
            None => {
                self.error(p.span, "Predicate expression expected");
                self.error(p.span, format!("Unknown symbol '{}'", p.reg));
                None
            }
        }
    }

    /// Bytes of a call argument: a function-scope variable or a register
    /// (`None` for an immediate or where the size cannot be told).
    pub fn arg_bytes(&mut self, op: &ast::Operand) -> Option<u64> {
        match &op.kind {
            ast::OperandKind::Reg(n) | ast::OperandKind::Symbol(n) => {
                if let Some(s) = self.local_sizes.get(n.as_str()) {
                    return *s;
                }
                let r = self.lookup_reg(n)?;
                declarations::type_bytes(&self.func.vregs[r].ty)
            }
            _ => None,
        }
    }

    /// Mark a register as a tensor/accumulator register (class 6).
    pub fn make_tensor(&mut self, op: &Operand) {
        let func = &mut self.func;
        op.for_each_reg(&mut |r| func.vregs[r].class = RegClass::Tensor);
    }

    fn push(&mut self, mut data: ori_ir::InstData) {
        // ptxas turns a guarded wgmma, fence, commit or wait into a branch
        // around the unguarded op before its GMMA passes see it (corpus
        // `heldout2_16`..`heldout2_21`: the messages are those of the branch
        // form), so ori lowers it the same way: `@!p bra SKIP; op; SKIP:`.
        if data.opcode.is_gmma_family() {
            if let Some(g) = data.guard.take() {
                let skip = self.fresh_label_block("$ori_skip_0");
                let mut bra = ori_ir::InstData::new(
                    "bra",
                    &[],
                    [ori_ir::Slot::use_(Operand::Block(skip))],
                    data.line,
                );
                bra.guard = Some(Guard {
                    reg: g.reg,
                    negated: !g.negated,
                });
                self.push(bra);
                self.push(data);
                self.func.layout.append_block(skip);
                self.cur = skip;
                self.need_block = false;
                return;
            }
        }
        if self.need_block {
            self.cur = self.func.append_block(None);
            self.need_block = false;
        }
        let term = data.opcode.is_terminator();
        let names_block = data.slots.iter().any(|s| s.op.names_block());
        let i = self.func.append_inst(self.cur, data);
        if names_block {
            self.block_users.push(i);
        }
        if term {
            self.need_block = true;
        }
    }
}

fn param(p: &ast::Param) -> Param {
    let mut ty = format!(".{}", p.ty);
    if let Some(s) = &p.ptr_space {
        ty.push_str(&format!(" .ptr .{s}"));
    }
    if let Some(a) = p.align {
        ty.push_str(&format!(" .align {a}"));
    }
    if let Some(n) = p.array {
        ty.push_str(&format!(" [{n}]"));
    }
    Param {
        name: p.name.as_str().into(),
        ty: ty.into(),
    }
}

/// Render a module-scope variable declaration back to PTX text (without `;`).
pub fn var_decl_text(v: &ast::VarDecl) -> String {
    let mut s = String::new();
    if let Some(l) = &v.linkage {
        s.push_str(&format!(".{l} "));
    }
    s.push_str(&format!(".{}", v.space));
    if let Some(a) = v.align {
        s.push_str(&format!(" .align {a}"));
    }
    if let Some(n) = v.vector {
        s.push_str(&format!(" .v{n}"));
    }
    s.push_str(&format!(" .{} {}", v.ty, v.name));
    for d in &v.dims {
        match d {
            Some(n) => s.push_str(&format!("[{n}]")),
            None => s.push_str("[]"),
        }
    }
    // Symbols (a table of function or variable addresses) are kept: passes
    // read them (`ori_ir::pass::address_taken`). Numbers are not (tables
    // can be large).
    if let Some(init) = &v.init {
        match init_text(init).filter(|_| names_symbols(init)) {
            Some(t) => s.push_str(&format!(" = {t}")),
            None => s.push_str(" = ..."),
        }
    }
    s
}

/// Whether an initializer names a symbol.
fn names_symbols(init: &ast::Init) -> bool {
    match init {
        ast::Init::Expr(o) => matches!(
            o.kind,
            ast::OperandKind::Symbol(_) | ast::OperandKind::SymOffset(..)
        ),
        ast::Init::List(items) => items.iter().any(names_symbols),
        ast::Init::Ints(_) => false,
    }
}

/// An initializer as PTX: `None` if it holds what is neither a symbol
/// (with an offset) nor a number.
fn init_text(init: &ast::Init) -> Option<String> {
    Some(match init {
        ast::Init::List(items) => {
            let items: Option<Vec<String>> = items.iter().map(init_text).collect();
            format!("{{{}}}", items?.join(", "))
        }
        // A run of elements of the enclosing list: written as they are.
        ast::Init::Ints(values) => values.iter().map(imm_text).collect::<Vec<_>>().join(", "),
        ast::Init::Expr(o) => match &o.kind {
            ast::OperandKind::Symbol(n) => n.to_string(),
            ast::OperandKind::SymOffset(n, off) => format!("{n}{off:+}"),
            ast::OperandKind::Imm(imm) => imm_text(imm),
            _ => return None,
        },
    })
}

/// A number of an initializer as PTX.
fn imm_text(imm: &ast::Imm) -> String {
    match imm {
        ast::Imm::Int(v) => format!("{v}"),
        ast::Imm::UInt(v) => format!("{v}U"),
        ast::Imm::F32(b) => format!("0f{b:08X}"),
        ast::Imm::F64(b) => format!("0d{b:016X}"),
    }
}

/// Lower a parsed module. Returns the module and every diagnostic found.
/// The tree is left as it was: this lowers a copy (see
/// [`lower_module_owned`] to spare it).
pub fn lower_module(file: &str, m: &ast::Module) -> (Module, Vec<Diag>) {
    lower_module_owned(file, m.clone())
}

/// [`lower_module`] consuming the syntax tree: each instruction's operands
/// are freed as soon as it is lowered and each body once its function is,
/// so that the tree and the IR of a large kernel are not both whole in
/// memory at once (the CLI's path: on a kernel of a million instructions
/// the tree is about half of the peak).
pub fn lower_module_owned(file: &str, mut m: ast::Module) -> (Module, Vec<Diag>) {
    let scope = module_scope(file, &m);
    let (sigs, symbols) = (scope.sigs.clone(), scope.symbols.clone());
    let (mut out, mut diags) = scope.finish();
    let table = handler_table();
    for k in 0..m.items.len() {
        let body = match &mut m.items[k] {
            ast::Item::Function(f) => f.body.take(),
            _ => continue,
        };
        let ast::Item::Function(f) = &m.items[k] else {
            continue;
        };
        let (func, mut d) = lower_function(file, &m, f, body, &symbols, &sigs, &table);
        diags.append(&mut d);
        out.add_function(func);
    }
    // ptxas reports an ISA version too old for the target after the body's errors.
    diags.extend(crate::target::check_version_target(file, &m));
    (out, diags)
}

/// What lowering the bodies of a module needs of the module first, taken
/// an item at a time in source order ([`ModuleScope::add`]): the whole
/// module's for the whole-tree lowering, the items up to a body's for the
/// streamed one.
struct ModuleScope {
    /// The IR module, with its header and globals and no function yet.
    out: Module,
    /// The signature checks' diagnostics.
    sig_diags: Vec<Diag>,
    /// The module-scope variables' diagnostics (after the signatures', as
    /// ptxas orders them).
    var_diags: Vec<Diag>,
    /// Every function's signature so far (its first), by name.
    sigs: Rc<NameMap<String, declarations::Signature>>,
    /// The names of the module's functions and variables so far.
    symbols: Rc<NameMap<String, ()>>,
    /// The functions with a body so far (a second body is an error).
    defined: FxHashSet<String>,
}

impl ModuleScope {
    /// The scope of `m`'s header, before any item.
    fn new(m: &ast::Module) -> ModuleScope {
        let out = Module {
            version: m.version,
            target: m.target.iter().map(|t| t.as_str().into()).collect(),
            address_size: m.address_size.unwrap_or(64),
            ..Module::default()
        };
        ModuleScope {
            out,
            sig_diags: Vec::new(),
            var_diags: Vec::new(),
            sigs: Rc::default(),
            symbols: Rc::default(),
            defined: FxHashSet::default(),
        }
    }

    /// Take the next item of the module: its name, signature or global.
    /// The maps are copied only while a lowering still holds them.
    fn add(&mut self, file: &str, item: &ast::Item) {
        match item {
            ast::Item::Function(f) => {
                let sigs = Rc::make_mut(&mut self.sigs);
                declarations::add_signature(file, f, &mut self.defined, sigs, &mut self.sig_diags);
                Rc::make_mut(&mut self.symbols).insert(f.name.clone(), ());
            }
            ast::Item::Var(v) => {
                declarations::check_var(file, v, &mut self.var_diags);
                Rc::make_mut(&mut self.symbols).insert(v.name.clone(), ());
                self.out.globals.push(var_decl_text(v).into());
            }
            ast::Item::Directive(_) => {}
        }
    }

    /// Whether an item taken so far had a diagnostic.
    fn has_diags(&self) -> bool {
        !self.sig_diags.is_empty() || !self.var_diags.is_empty()
    }

    /// The IR module so far and the diagnostics, in ptxas's order.
    fn finish(self) -> (Module, Vec<Diag>) {
        let mut diags = self.sig_diags;
        diags.extend(self.var_diags);
        (self.out, diags)
    }
}

fn module_scope(file: &str, m: &ast::Module) -> ModuleScope {
    let mut scope = ModuleScope::new(m);
    for item in &m.items {
        scope.add(file, item);
    }
    scope
}

/// Declare the registers of one scope's own `.reg` statements (not those of
/// scopes nested in it: `lower_stmts` declares them on entry).
fn declare_regs(cx: &mut LowerCx<'_>, stmts: &[ast::Stmt]) {
    for s in stmts {
        let ast::Stmt::Reg {
            ty, names, vector, ..
        } = s
        else {
            continue;
        };
        let class = RegClass::of_ptx_type(ty).unwrap_or(RegClass::R32);
        for n in names {
            if let (Some(k), true) = (n.range, cx.scopes.is_empty()) {
                cx.func.declare_range(&n.name, u64::from(k));
            }
            match n.range {
                Some(k) if k > EAGER_RANGE => {
                    cx.lazy_ranges
                        .insert(n.name.clone(), (ori_ir::Symbol::new(ty), class, k));
                }
                Some(k) if cx.scopes.is_empty() => {
                    cx.func.declare_range_regs(&n.name, u64::from(k), ty, class);
                }
                Some(k) => {
                    for i in 0..k {
                        declare_scoped(cx, &format!("{}{i}", n.name), ty, class);
                    }
                }
                None => declare_scoped(cx, &n.name, ty, class),
            }
            match (vector, n.range) {
                (Some(w), None) => {
                    declare_components(cx, &n.name, ty, class);
                    if let Some(r) = cx.lookup_reg(&n.name) {
                        cx.vector_widths.insert(r, *w);
                    }
                }
                (Some(_), Some(k)) if k <= EAGER_RANGE => {
                    for i in 0..k {
                        declare_components(cx, &format!("{}{i}", n.name), ty, class);
                    }
                }
                _ => {}
            }
        }
    }
}

/// The components of a vector register `.reg .v2 .f32 mx;`, each a
/// register of its own: `mx.x` .. `mx.w` (ptxas 13.0.88 takes all four
/// on a `.v2` as well; `.r .g .b .a` are spelt `.x .y .z .w` by the parser).
fn declare_components(cx: &mut LowerCx<'_>, name: &str, ty: &str, class: RegClass) {
    for c in ["x", "y", "z", "w"] {
        // The IR names a component `mx$x`, a name PTX can write back
        // (`ptx_text`); the PTX name `mx.x` finds it.
        let ir_name = fresh_reg_name(cx, &format!("{name}${c}"));
        let r = cx.func.declare_reg(&ir_name, ty, class);
        let ptx_name = ast::Name::from(format!("{name}.{c}"));
        match cx.scopes.last_mut() {
            Some(scope) => {
                scope.insert(ptx_name, r);
                cx.scoped.insert(r);
            }
            None => {
                cx.components.insert(ptx_name, r);
            }
        }
    }
}

/// A vector register named whole (`st.async ... [a], abcd, [mbar];`) is the
/// vector of its components (PTX ISA 5.4.2), `{abcd.x, .., abcd.w}` up to
/// its width: ptxas checks it as such (`Argument vector size mismatch`,
/// `Vector operand is not allowed`), and its reads and writes are theirs.
fn expand_vector_registers(cx: &mut LowerCx<'_>, i: &mut ast::Instruction) {
    for op in i.operands.iter_mut() {
        let ast::OperandKind::Reg(n) = &op.kind else {
            continue;
        };
        let Some(&width) = cx.lookup_reg(n).and_then(|r| cx.vector_widths.get(&r)) else {
            continue;
        };
        let parts = ["x", "y", "z", "w"].iter().take(width as usize);
        let elems = parts.map(|c| ast::Operand {
            kind: ast::OperandKind::Reg(ast::Name::from(format!("{n}.{c}"))),
            span: op.span,
        });
        op.kind = ast::OperandKind::Vector(elems.collect());
    }
}

/// Declare `name` in the innermost scope: at function scope by its name, in
/// a nested scope as a register of its own (renamed if the name is taken).
fn declare_scoped(cx: &mut LowerCx<'_>, name: &str, ty: &str, class: RegClass) {
    let Some(depth) = cx.scopes.len().checked_sub(1) else {
        cx.func.declare_reg(name, ty, class);
        return;
    };
    let ir_name = fresh_reg_name(cx, name);
    let r = cx.func.declare_reg(&ir_name, ty, class);
    cx.scoped.insert(r);
    cx.scopes[depth].insert(name.into(), r);
}

/// `name` if no register of the function has it, else `name_K` for the
/// first K no register has.
///
/// Names are only ever added to a function, so the names `name_1` ..
/// `name_K` a previous call found taken stay taken: the search resumes at
/// the last K given for `name`. Inline asm repeats its `.reg .pred p;` in
/// every `{ }` block, hundreds of times in a CUTLASS kernel, and starting
/// each search at 1 made its lowering quadratic in them.
fn fresh_reg_name(cx: &mut LowerCx<'_>, name: &str) -> ast::Name {
    let mut k = cx.reg_suffixes.get(name).copied().unwrap_or(0);
    let spell = |k: u32| {
        if k == 0 {
            ast::Name::from(name)
        } else {
            compact_str::format_compact!("{name}_{k}")
        }
    };
    let mut ir_name = spell(k);
    while cx.func.reg(&ir_name).is_some() {
        k += 1;
        ir_name = spell(k);
    }
    if k > 0 {
        cx.reg_suffixes.insert(name.into(), k);
    }
    ir_name
}

/// The labels of one function, scope by scope.
///
/// ptxas 13.0.88 scopes labels lexically, like registers (probed with
/// hand-written kernels; Triton's and CUTLASS's inline asm rely on it by
/// repeating `waitLoop:` / `LAB_WAIT:` in every `{ }` block): a label is
/// visible in the scope that defines it and in the scopes nested in it,
/// before and after its definition; a nested scope may define a name its
/// parent or a sibling also defines (a branch takes the innermost); a
/// second definition in the same scope is `Duplicate definition of label`,
/// and a branch to a label defined only in a scope that does not enclose it
/// is `Unknown symbol`.
#[derive(Default)]
struct LabelScopes {
    /// Per scope id: PTX label name -> block. Names are inline
    /// ([`ast::Name`]): a lookup in a table of 100k labels is one random
    /// memory access, not two.
    defs: Vec<NameMap<ast::Name, Block>>,
    /// Every IR block name given out, so that each block's is unique in the
    /// function (a repeated PTX name gets a suffix: `waitLoop_1`).
    taken: NameSet<ast::Name>,
    /// Every PTX label name of the function: a suffixed name avoids these.
    literal: NameSet<ast::Name>,
    /// The block of each label statement of the body, in the order
    /// `lower_stmts` meets them (pre-order, as [`label_defs`] lists them):
    /// lowering takes them in turn instead of looking each name up again.
    in_order: Vec<Option<Block>>,
    /// How many of `in_order` lowering has taken.
    next: usize,
    /// The body arrives a batch at a time (`streamed`): a name no scope
    /// defines yet may be a label the function scope defines further down,
    /// and block names wait for the end, when every label is known.
    streaming: bool,
    /// (streaming) Names referred to as labels of the function scope before
    /// their definition: each must be defined by the end.
    reserved: NameSet<ast::Name>,
    /// (streaming) Blocks ori made itself, with the name each asked for, in
    /// order: named at the end, after the labels.
    fresh: Vec<(Block, ast::Name)>,
    /// Per name asked of [`LabelScopes::unique_name`], the last suffix it
    /// gave it (as `fresh_reg_name` keeps for registers): `taken` and
    /// `literal` only grow until [`LabelScopes::forget_names`], so the
    /// names with a smaller suffix are still not free.
    suffixes: NameMap<ast::Name, u32>,
}

impl LabelScopes {
    /// `name` if no block has it and no PTX label of the function is
    /// spelled so, else `name_K` for the first free K.
    fn unique_name(&mut self, name: &str) -> ast::Name {
        let mut k = self.suffixes.get(name).copied().unwrap_or(0);
        let mut ir = if k == 0 {
            ast::Name::from(name)
        } else {
            compact_str::format_compact!("{name}_{k}")
        };
        // `bbN` is how the IR text names an unlabeled block: a PTX label
        // spelled so gets a suffix, or `--emit ir` would write two blocks
        // of one name.
        let writer_name = |n: &str| {
            n.strip_prefix("bb")
                .is_some_and(|d| d.parse::<u32>().is_ok())
        };
        while self.taken.contains(&ir) || (k > 0 && self.literal.contains(&ir)) || writer_name(&ir)
        {
            k += 1;
            ir = compact_str::format_compact!("{name}_{k}");
        }
        if k > 0 {
            self.suffixes.insert(name.into(), k);
        }
        self.taken.insert(ir.clone());
        ir
    }

    /// Give the block names out again from the start, avoiding the PTX
    /// label names `literal`.
    pub(super) fn forget_names(&mut self, literal: NameSet<ast::Name>) {
        self.taken.clear();
        self.suffixes.clear();
        self.literal = literal;
    }
}

/// Label definitions with their scope ids, in source order.
fn label_defs<'s>(
    stmts: &'s [ast::Stmt],
    scope: usize,
    next: &mut usize,
    out: &mut Vec<(usize, &'s str, Span)>,
) {
    for s in stmts {
        match s {
            ast::Stmt::Scope { body, .. } => {
                *next += 1;
                let id = *next;
                label_defs(body, id, next, out);
            }
            ast::Stmt::Label { name, span } => out.push((scope, name, *span)),
            _ => {}
        }
    }
}

/// Function-scope variables of the whole body, nested scopes included.
fn collect_locals(cx: &mut LowerCx<'_>, stmts: &[ast::Stmt]) {
    for s in stmts {
        match s {
            ast::Stmt::Var(v) => {
                cx.locals.insert(v.name.clone(), ());
                let elems: Option<u64> = v.dims.iter().try_fold(1u64, |acc, d| Some(acc * (*d)?));
                let size = declarations::type_bytes(&v.ty)
                    .zip(elems)
                    .map(|(b, n)| b * n * u64::from(v.vector.unwrap_or(1)));
                cx.local_sizes.insert(v.name.clone(), size);
                declarations::check_var(cx.file, v, &mut cx.diags);
            }
            ast::Stmt::Scope { body, .. } => collect_locals(cx, body),
            _ => {}
        }
    }
}

/// Labels of every scope (with their blocks) and function-scope variables.
/// Function-scope labels keep their PTX names as block names; a name
/// repeated in nested scopes gets a suffix.
fn collect_labels_and_locals(cx: &mut LowerCx<'_>, stmts: &[ast::Stmt]) {
    collect_locals(cx, stmts);
    let mut defs = Vec::new();
    let mut scopes = 0;
    label_defs(stmts, 0, &mut scopes, &mut defs);
    let ls = &mut cx.label_scopes;
    ls.defs = vec![NameMap::default(); scopes + 1];
    // Sized once: growing a table of 100k labels rehashes it, which is a
    // pass of random memory accesses each time.
    let top = defs.iter().filter(|&&(scope, ..)| scope == 0).count();
    ls.defs[0].reserve(top);
    ls.taken.reserve(defs.len());
    ls.literal.reserve(defs.len());
    ls.literal
        .extend(defs.iter().map(|(_, n, _)| ast::Name::from(*n)));
    let in_order: Vec<(usize, &str)> = defs.iter().map(|&(scope, n, _)| (scope, n)).collect();
    // Function-scope labels first, so that they keep their own names.
    defs.sort_by_key(|&(scope, ..)| scope != 0);
    let mut dups = Vec::new();
    for (scope, name, span) in defs {
        if cx.label_scopes.defs[scope].contains_key(name) {
            dups.push((span, name));
            continue;
        }
        let ir = cx.label_scopes.unique_name(name);
        let b = cx.func.blocks.push(ori_ir::BlockData {
            label: Some(ir.as_str().into()),
            nounroll: false,
        });
        cx.label_scopes.defs[scope].insert(name.into(), b);
    }
    // A repeated label (an error above) stands for its scope's first.
    let ls = &mut cx.label_scopes;
    ls.in_order = in_order
        .into_iter()
        .map(|(scope, n)| ls.defs[scope].get(n).copied())
        .collect();
    dups.sort_by_key(|&(span, _)| span.lo);
    for (span, name) in dups {
        cx.error(span, format!("Duplicate definition of label '{name}'"));
    }
}

/// Lower `stmts` in order; each instruction's operands are released once it
/// is lowered (the caller owns the tree and is done with them).
fn lower_stmts(cx: &mut LowerCx<'_>, stmts: &mut [ast::Stmt], table: &HandlerTable) {
    for s in stmts {
        match s {
            ast::Stmt::Label { .. } => {
                let ls = &mut cx.label_scopes;
                let b = ls.in_order.get(ls.next).copied().flatten();
                ls.next += 1;
                let Some(b) = b else {
                    continue;
                };
                if !cx.func.layout.is_block_laid_out(b) {
                    cx.func.layout.append_block(b);
                }
                cx.cur = b;
                cx.need_block = false;
            }
            ast::Stmt::BranchTargets { name, labels, .. } => {
                indexed_branch::declare_list(cx, name, labels);
            }
            ast::Stmt::CallTargets { name, funcs, .. } => {
                indirect_call::declare_targets(cx, name, funcs);
            }
            ast::Stmt::CallPrototype {
                name,
                ret_params,
                params,
                ..
            } => indirect_call::declare_prototype(cx, name, ret_params, params),
            ast::Stmt::Inst(i) => {
                cx.resolved.clear();
                if !cx.vector_widths.is_empty() {
                    expand_vector_registers(cx, i);
                }
                if let Some(mut data) = handlers::lower_inst(cx, i, table) {
                    data.src = Some((i.span.lo, i.span.hi));
                    cx.push(data);
                }
                // Streamed statements go back whole to the parser's
                // thread, which frees them in its own allocator arena.
                if !cx.label_scopes.streaming {
                    i.operands = ast::Operands::new();
                }
            }
            // PTX ISA: `.pragma "nounroll"` in a loop's header block keeps
            // ptxas from unrolling the loop (R-nounroll).
            ast::Stmt::Pragma { text, .. } if text == "nounroll" => {
                if cx.need_block {
                    cx.cur = cx.func.append_block(None);
                    cx.need_block = false;
                }
                cx.func.blocks[cx.cur].nounroll = true;
            }
            ast::Stmt::Scope { body, .. } => {
                cx.next_scope += 1;
                cx.scope_path.push(cx.next_scope);
                cx.scopes.push(NameMap::default());
                declare_regs(cx, body);
                lower_stmts(cx, body, table);
                cx.scopes.pop();
                cx.scope_path.pop();
            }
            _ => {}
        }
    }
}

fn lower_function(
    file: &str,
    m: &ast::Module,
    f: &ast::Function,
    body: Option<Vec<ast::Stmt>>,
    symbols: &Rc<NameMap<String, ()>>,
    sigs: &Rc<NameMap<String, declarations::Signature>>,
    table: &HandlerTable,
) -> (Function, Vec<Diag>) {
    let mut cx = function_cx(file, m, f, body.is_some(), symbols, sigs);
    if let Some(mut body) = body {
        // About one instruction per statement (labels and declarations are
        // few): the table is sized once instead of growing by doubling.
        cx.func.insts.reserve_exact(body.len());
        cx.func.layout.reserve_insts(body.len());
        declare_regs(&mut cx, &body);
        collect_labels_and_locals(&mut cx, &body);
        lower_stmts(&mut cx, &mut body, table);
        drop(body);
        indexed_branch::undeclared_lists(&mut cx);
        for (n, span) in std::mem::take(&mut cx.undefined) {
            cx.error(span, format!("Unknown symbol '{n}'"));
        }
    }
    (cx.func, cx.diags)
}

/// The lowering state of function `f` before its body: the IR function
/// with its header, its entry block (if it has a body) and its `.reg`
/// parameters declared.
fn function_cx<'a>(
    file: &'a str,
    m: &ast::Module,
    f: &ast::Function,
    has_body: bool,
    symbols: &Rc<NameMap<String, ()>>,
    sigs: &Rc<NameMap<String, declarations::Signature>>,
) -> LowerCx<'a> {
    let kind = if f.is_entry {
        FuncKind::Entry
    } else {
        FuncKind::Func
    };
    let mut func = Function::new(&f.name, kind);
    func.linkage = f.linkage.as_deref().map(Into::into);
    func.params = f.params.iter().map(param).collect();
    func.ret_params = f.ret_params.iter().map(param).collect();
    func.line = f.span.line;
    func.has_body = has_body;
    func.max_regs = f
        .perf
        .iter()
        .find(|(k, _)| k == "maxnreg")
        .and_then(|(_, v)| v.first())
        .and_then(|n| u32::try_from(*n).ok());
    func.launch_bounds = f
        .perf
        .iter()
        .filter(|(k, _)| matches!(k.as_str(), "maxntid" | "reqntid" | "minnctapersm"))
        .map(|(k, v)| {
            let v = v.iter().map(|n| u32::try_from(*n).unwrap_or(u32::MAX));
            (k.as_str().into(), v.collect())
        })
        .collect();
    let entry = if func.has_body {
        Some(func.append_block(None))
    } else {
        None
    };
    let mut cx = LowerCx {
        file,
        func,
        target: m.target.clone(),
        version: m.version,
        label_scopes: LabelScopes::default(),
        scope_path: vec![0],
        next_scope: 0,
        undefined: Vec::new(),
        branch_lists: NameMap::default(),
        call_lists: NameMap::default(),
        open_forms_fit: Default::default(),
        list_refs: Vec::new(),
        symbols: Rc::clone(symbols),
        locals: NameMap::default(),
        local_sizes: NameMap::default(),
        sigs: Rc::clone(sigs),
        diags: Vec::new(),
        cur: entry.unwrap_or_else(|| Block::from_u32(0)),
        need_block: false,
        block_users: Vec::new(),
        lazy_ranges: NameMap::default(),
        scopes: Vec::new(),
        scoped: FxHashSet::default(),
        reg_suffixes: NameMap::default(),
        resolved: SmallVec::new(),
        mod_checks: Default::default(),
        forms: Default::default(),
        components: Default::default(),
        vector_widths: Default::default(),
        handlers: Default::default(),
    };
    // `.reg` parameters are registers inside the body.
    for p in f.params.iter().chain(&f.ret_params) {
        if p.space == "reg" {
            let class = RegClass::of_ptx_type(&p.ty).unwrap_or(RegClass::R32);
            cx.func.declare_reg(&p.name, &p.ty, class);
        }
    }
    cx
}

#[cfg(test)]
mod tests {
    /// A table of addresses keeps its symbols and the numbers among them,
    /// runs of numbers included, in order; a table of numbers only does not.
    #[test]
    fn var_decl_text_keeps_symbol_tables() {
        let src = ".version 8.5\n.target sm_90a\n.address_size 64\n\
                   .global .u64 t[5] = {f, 1, 2, g+8, 0x10};\n\
                   .global .b8 n[3] = {1, 2, 3};\n";
        let m = crate::parse("t.ptx", src).expect("parses");
        let texts: Vec<String> = m
            .items
            .iter()
            .filter_map(|i| match i {
                crate::ast::Item::Var(v) => Some(super::var_decl_text(v)),
                _ => None,
            })
            .collect();
        assert!(
            texts[0].ends_with("t[5] = {f, 1, 2, g+8, 16}"),
            "{}",
            texts[0]
        );
        assert!(texts[1].ends_with("n[3] = ..."), "{}", texts[1]);
    }
}
