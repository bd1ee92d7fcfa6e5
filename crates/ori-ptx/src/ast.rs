//! The PTX abstract syntax tree produced by [`crate::parse`].
//!
//! This module exists so that the lowering (`crate::lower`, written
//! separately) can consume a PTX module without re-doing any lexical work:
//! every construct is already split into owned strings / numbers, every
//! instruction and declaration carries a [`Span`] (1-based line and column)
//! for diagnostics, and nothing in here refers back to the source text.
//!
//! Conventions used throughout:
//! * Directive and modifier names are stored **without** their leading dot
//!   (`.shared::cta` becomes `"shared::cta"`, `.u64` becomes `"u64"`).
//! * Names (registers, symbols, labels) are stored verbatim, including a
//!   leading `%` or `$` (`"%r12"`, `"$L__BB0_2"`, `"%tid.x"`).
//! * Nothing here is semantically checked beyond what ptxas reports as a
//!   parse-level error (see `crate::parser` for the list); type checking,
//!   operand counts and modifier legality are the lowering's job.

pub use crate::diag::Span;
pub use ori_ir::{ModList, Symbol};

/// A register, symbol or label name in an operand: up to 24 bytes inline
/// (every register name a compiler writes), so a million operands are not
/// a million heap strings to allocate, free and coalesce.
pub type Name = compact_str::CompactString;

/// A whole `.ptx` file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    /// `.version MAJOR.MINOR`; `(0, 0)` if the directive was missing (an error
    /// is reported in that case).
    pub version: (u32, u32),
    /// `.target` list, verbatim, e.g. `["sm_90a"]` or `["sm_90a", "debug"]`.
    pub target: Vec<String>,
    /// Where the `.target` directive is (default if there is none).
    pub target_span: Span,
    /// `.address_size N` (32 or 64) if present.
    pub address_size: Option<u32>,
    /// Functions, module-scope variables and other directives, in source order.
    pub items: Vec<Item>,
    /// `.file N "name"` table (timestamps / sizes are dropped).
    pub files: Vec<(u32, String)>,
}

/// A module-scope item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `.entry` / `.func` definition or prototype (`body == None`).
    Function(Function),
    /// Module-scope `.global` / `.shared` / `.const` / `.local` variable.
    /// A declaration listing several names yields one `Item::Var` per name.
    Var(VarDecl),
    /// Anything kept verbatim: `.pragma`, `.section` blocks, `.alias`, ...
    Directive(Directive),
}

/// A directive the parser recognises but does not model (kept verbatim).
#[derive(Clone, Debug, PartialEq)]
pub struct Directive {
    /// Directive name without the dot (`"section"`, `"pragma"`, `"callprototype"`).
    pub name: String,
    /// The exact source text of the whole directive (including a `.section`
    /// block's braces, or the string of a `.pragma`).
    pub text: String,
    /// Where the whole directive is, from its first token (a label for
    /// `proto: .callprototype ...;`) to its last (`;` or `}`).
    pub span: Span,
}

/// A kernel (`.entry`) or device function (`.func`).
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The function's name as declared, e.g. `"gemm_kernel"` in
    /// `.entry gemm_kernel(...)`.
    pub name: String,
    /// `true` for `.entry`, `false` for `.func`.
    pub is_entry: bool,
    /// `"visible"`, `"extern"`, `"weak"` or `"common"` when given.
    pub linkage: Option<String>,
    /// Input parameters, in order.
    pub params: Vec<Param>,
    /// Return parameters of a `.func (.param .b32 r) f(...)`.
    pub ret_params: Vec<Param>,
    /// Performance / attribute directives between the signature and the body,
    /// e.g. `("maxntid", [128, 1, 1])`, `("minnctapersm", [1])`,
    /// `("noreturn", [])`.
    pub perf: Vec<(String, Vec<u64>)>,
    /// The body's `.pragma` strings ptxas 13.0.88 does not know, in source
    /// order (it warns about them, `crate::directive_warnings`; kept here
    /// because a streamed body's statements are gone once lowered).
    pub unsupported_pragmas: Vec<String>,
    /// `None` for a prototype ending in `;`.
    pub body: Option<Vec<Stmt>>,
    /// From the linkage directive (or `.entry` / `.func`) to the body's
    /// closing `}` or the prototype's `;`.
    pub span: Span,
}

/// One parameter of an `.entry` / `.func` (or a return parameter).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// State space without the dot: `"param"` (or `"reg"` for `.func` register params).
    pub space: String,
    /// Element type without the dot: `"u64"`, `"b8"`, `"pred"`, ...
    pub ty: String,
    /// The parameter's name, e.g. `"k_param_0"`.
    pub name: String,
    /// `.align N` (either position: before the type or after `.ptr`).
    pub align: Option<u32>,
    /// `Some("global")` for `.ptr .global`; `Some("")` for a bare `.ptr`.
    pub ptr_space: Option<String>,
    /// `name[16]` -> `Some(16)`; `name[]` -> `Some(0)`.
    pub array: Option<u64>,
    /// From the state space (`.param` / `.reg`) to the name or its `]`.
    pub span: Span,
}

/// A variable declaration in a state space (module scope or function scope).
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// `"extern"`, `"visible"`, `"weak"`, `"common"` when given.
    pub linkage: Option<String>,
    /// `"global"`, `"shared"`, `"const"`, `"local"` or `"param"` (no dot).
    pub space: String,
    /// `.align N`: the alignment in bytes, if given.
    pub align: Option<u32>,
    /// `.v2` / `.v4` vector width if given.
    pub vector: Option<u32>,
    /// Element type without the dot (`"b8"`, `"f32"`, ...).
    pub ty: String,
    /// The variable's name, e.g. `"smem"` in `.shared .b8 smem[1024];`.
    pub name: String,
    /// Array dimensions, outermost first; `None` for an unsized `[]`.
    pub dims: Vec<Option<u64>>,
    /// `= 5` or `= {1, 2, {3}}`.
    pub init: Option<Init>,
    /// To the end of this name's dimensions or initializer, from the linkage
    /// or state space for a declaration's first name, from the name itself
    /// for a later one.
    pub span: Span,
}

/// An initializer of a [`VarDecl`].
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// A single value: an immediate, a symbol, `sym+off`, `generic(sym)`.
    Expr(Operand),
    /// A braced list (possibly nested for multi-dimensional arrays).
    List(Vec<Init>),
    /// Elements of the enclosing [`Init::List`] in a row that are each one
    /// integer literal, kept as their values only (with no span each): the
    /// tables cuRAND puts in CUTLASS kernels run to 200,000 of them. Each
    /// value is one element, as an [`Init::Expr`] of an [`Imm`] would be;
    /// the parser keeps such a run whole (never two runs side by side).
    Ints(Vec<Imm>),
}

impl Init {
    /// How many elements of the enclosing list this is (a run's length;
    /// 1 for a value or a nested list).
    pub fn element_count(&self) -> usize {
        match self {
            Init::Ints(v) => v.len(),
            Init::Expr(_) | Init::List(_) => 1,
        }
    }
}

/// A statement inside a function body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `.reg .b32 %r<10>, %x;` (`vector` holds `.v2`/`.v4` if given).
    Reg {
        /// Register type without the dot: `"b32"`, `"f32"`, `"pred"`, ...
        ty: String,
        /// `.v2` / `.v4` vector width if given.
        vector: Option<u32>,
        /// `.align N`: the alignment in bytes, if given.
        align: Option<u32>,
        /// The declared names, in order (`%r<10>` is one entry).
        names: Vec<RegName>,
        /// From `.reg` to the `;`.
        span: Span,
    },
    /// Function-scope `.shared` / `.local` / `.param` / `.global` / `.const`.
    Var(Box<VarDecl>),
    /// `name:`
    Label {
        /// The label without its colon, e.g. `"$L__BB0_2"`.
        name: String,
        /// The label's name token (the colon excluded).
        span: Span,
    },
    /// `name: .branchtargets L1, L2, ...;`: the list a `brx.idx` picks its
    /// target from.
    BranchTargets {
        /// The list's name (what `brx.idx` names), e.g. `"$L_brx_0"`.
        name: String,
        /// The labels in order, each with its span.
        labels: Vec<(String, Span)>,
        /// From the list's name to the `;`.
        span: Span,
    },
    /// `name: .calltargets f1, f2, ...;`: the functions an indirect `call`
    /// naming the list may reach.
    CallTargets {
        /// The list's name (what the `call` names last).
        name: String,
        /// The functions in order, each with its span.
        funcs: Vec<(String, Span)>,
        /// From the list's name to the `;`.
        span: Span,
    },
    /// `name: .callprototype [(ret)] _ [(params)];`: the signature of the
    /// functions an indirect `call` naming it may reach (its parameter
    /// names are `_`).
    CallPrototype {
        /// The prototype's name (what the `call` names last).
        name: String,
        /// The return parameter, if any.
        ret_params: Vec<Param>,
        /// The parameters.
        params: Vec<Param>,
        /// From the prototype's name to the `;`.
        span: Span,
    },
    /// An instruction, e.g. `@%p1 bra $L__BB0_2;`.
    Inst(Instruction),
    /// A nested `{ ... }` block (its own register scope).
    Scope {
        /// The statements between the braces, in order.
        body: Vec<Stmt>,
        /// From `{` to `}`.
        span: Span,
    },
    /// `.pragma "nounroll";` (the string contents, unquoted).
    Pragma {
        /// The string's contents without quotes, e.g. `"nounroll"`.
        text: String,
        /// From the string literal to the `;`.
        span: Span,
    },
    /// `.loc file line col [, function_name sym, inlined_at f l c]`.
    Loc {
        /// File number: the `N` of a `.file N "name"` directive (see
        /// [`Module::files`]).
        file: u32,
        /// Line in that file.
        line: u32,
        /// Column in that file.
        col: u32,
        /// The symbol after `function_name` (a `+N` offset is dropped);
        /// `None` when absent.
        function_name: Option<String>,
        /// `inlined_at F L C`: file number, line and column of the call site
        /// this location was inlined into; `None` when absent.
        inlined_at: Option<(u32, u32, u32)>,
        /// From `.loc` to its last number or name (`.loc` has no `;`).
        span: Span,
    },
    /// Other directives kept verbatim (e.g. `.section`).
    Directive(Directive),
}

/// One name in a `.reg` declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct RegName {
    /// The prefix, e.g. `"%r"` for `%r<10>` or `"%x"` for `%x`.
    pub name: String,
    /// `%r<10>` -> `Some(10)`, declaring `%r0` .. `%r9`.
    pub range: Option<u32>,
}

/// A guard predicate `@p` / `@!p`.
#[derive(Clone, Debug, PartialEq)]
pub struct Pred {
    /// `true` for `@!p`: the instruction runs where `p` is false.
    pub negated: bool,
    /// The predicate register as written, without `@` or `!` (`"%p1"`).
    pub reg: Name,
    /// From `@` to the register name.
    pub span: Span,
}

/// An instruction's operands: up to three inline, in the statement. Most
/// instructions have two or three (`mov`, `ld`, `st`, `cvt`, `add`,
/// `setp`), so most statements need no heap block for their operands.
pub type Operands = smallvec::SmallVec<[Operand; 3]>;

/// One PTX instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    /// The guard predicate (`@%p1` / `@!%p1`); `None` for an unguarded
    /// instruction.
    pub pred: Option<Pred>,
    /// The base opcode, e.g. `"wgmma"`, `"ld"`, `"bra"` (interned: the IR
    /// instruction takes the same [`Symbol`]).
    pub opcode: Symbol,
    /// Dotted modifiers in order, without dots, e.g.
    /// `["mma_async", "sync", "aligned", "m64n8k16", "f32", "f16", "f16"]`;
    /// the whole list interned (4 bytes; the IR instruction takes the same
    /// [`ModList`]).
    pub modifiers: ModList,
    /// How many of the modifiers follow the opcode with no blank or
    /// comment before them (`cp.reduce.async.bulk.tensor` is one token for
    /// ptxas: a family is spelt by contiguous words only).
    pub joined: u8,
    /// The comma-separated operands in source order (destinations first, as
    /// PTX writes them); empty for e.g. `ret;`. Up to three inline
    /// ([`Operands`]).
    pub operands: Operands,
    /// From the guard (or the opcode) to the `;`.
    pub span: Span,
}

impl Instruction {
    /// The full dotted mnemonic, e.g. `"ld.global.v4.u32"`.
    pub fn mnemonic(&self) -> String {
        let mut s = self.opcode.to_string();
        for m in &self.modifiers {
            s.push('.');
            s.push_str(m);
        }
        s
    }

    /// The modifiers as text, in order.
    pub fn modifier_texts(&self) -> Vec<&'static str> {
        self.modifiers.iter().map(|m| m.as_str()).collect()
    }

    /// `true` if `m` (without dot) is one of the modifiers.
    pub fn has_modifier(&self, m: &str) -> bool {
        self.modifiers.iter().any(|x| x.as_str() == m)
    }
}

/// An immediate value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Imm {
    /// Signed decimal/hex/octal/binary literal (fits in `i64`), after folding
    /// unary minus and `+`/`-` of constants.
    Int(i64),
    /// A literal with a `U` suffix, or too large for `i64` (e.g. `0xFFFFFFFFFFFFFFFF`).
    UInt(u64),
    /// `0fXXXXXXXX`: the raw IEEE single bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float such as `1.5`: raw IEEE double bits.
    F64(u64),
}

/// Base of an `[...]` address operand.
#[derive(Clone, Debug, PartialEq)]
pub enum AddrBase {
    /// A register (`%rd1`, or a plain name declared with `.reg`).
    Reg(Name),
    /// A variable, parameter or other symbol (`smem`, `k_param_0`).
    Symbol(Name),
}

/// An instruction operand (or initializer value) with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    /// What the operand is.
    pub kind: OperandKind,
    /// The operand's source range (all of it, e.g. `[%rd1+8]`).
    pub span: Span,
}

/// The operand forms.
///
/// `Reg` vs `Symbol`: names starting with `%` are always `Reg` (this covers
/// special registers like `%tid.x`, `%laneid`); other names are `Reg` when they
/// were declared with `.reg` in an enclosing scope of the current function,
/// `Symbol` otherwise (labels, functions, params, variables).
#[derive(Clone, Debug, PartialEq)]
pub enum OperandKind {
    /// A register: `%r1`, `%tid.x` (special-register components joined), or
    /// a plain name declared with `.reg`.
    Reg(Name),
    /// Any other name: a label, function, parameter or variable (`$L__BB0_2`,
    /// `k_param_0`); `generic(smem)` is kept as the one name
    /// `"generic(smem)"`.
    Symbol(Name),
    /// `sym+8` / `sym-4` outside brackets (address-of plus offset).
    SymOffset(Name, i64),
    /// An immediate or folded constant expression (`42`, `-1`, `0f3F800000`).
    Imm(Imm),
    /// `{a, b, _}` (elements are `Reg`, `Imm` or `Sink`).
    Vector(Vec<Operand>),
    /// `[base]`, `[base+off]`, `[base+-4]`, `[off]` (base `None`).
    Address {
        /// The register or symbol the address starts from; `None` for an
        /// absolute address `[off]`.
        base: Option<AddrBase>,
        /// The sum of the `+` / `-` integer terms (bytes in PTX's
        /// semantics; 0 when there are none); the whole address when `base`
        /// is `None`.
        offset: i64,
    },
    /// `[tmap, {c0, c1}]`: bracketed list used by tex / tensor (TMA) ops.
    AddressList(Vec<Operand>),
    /// `!p` as a source operand.
    NegPred(Name),
    /// `p|q` (setp / set dual destinations); boxed, as rare: two names
    /// inline made every operand of the tree 8 bytes larger.
    PredPair(Box<(Name, Name)>),
    /// `(a, b)` parenthesised argument list of `call`.
    CallArgs(Vec<Operand>),
    /// `_`: a sink operand (a result that is discarded).
    Sink,
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// The syntax tree of a million-instruction kernel was alive while it
    /// was lowered: a statement was 136 bytes with its modifiers inline, 96
    /// with them interned (`ModList`); operand names are inline (`Name`),
    /// and an operand 56 bytes, not 64, with the rare predicate pair boxed
    /// (operands were 40% of the heap's peak on the 125k bench kernel; an
    /// address, a base name and a 64-bit offset, is the largest now). The
    /// batched front end holds a few batches of statements at a time, so
    /// a statement now keeps three operands inline (96 bytes and a heap
    /// block of 56 a operand before; a statement with four or more still
    /// takes the block).
    #[test]
    fn statements_stay_small() {
        assert!(std::mem::size_of::<Stmt>() <= 264);
        assert!(std::mem::size_of::<Operand>() <= 56);
        assert_eq!(std::mem::size_of::<ModList>(), 4);
    }
}
