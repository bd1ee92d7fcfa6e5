//! Hand-written recursive-descent parser from [`crate::lexer`] tokens to the
//! [`crate::ast`] tree.
//!
//! It exists to give the lowering a fully structured module plus ptxas-style
//! diagnostics, with error recovery so one run reports several problems.
//!
//! # Diagnostics (wording verified against ptxas 13.0.88, `-arch=sm_90a`)
//!
//! | input | ptxas says | severity |
//! |---|---|---|
//! | any unexpected token (missing `;`, unknown directive `.foo`, junk char `#`, `.reg .b33`) | `Parsing error near 'TOKEN': syntax error` (TOKEN is the offending token, e.g. the `ret` after a missing `;`; `''` at end of file) | fatal |
//! | unterminated `/* ...` | `Parsing error near '': unexpected EOF while scanning` (at the line the comment opens) | fatal |
//! | unknown opcode `frob.u32` | `Not a name of any known instruction: 'frob'` | error |
//! | `bra` to a label not defined in the function | `Unknown symbol '$L__BB0_9'` | error |
//! | label defined twice | `Duplicate definition of label 'L1'` | error |
//! | integer literal beyond 64 bits | `Constant overflow` | error |
//! | no `.version` / `.target` before the first item | `Missing .version directive at start of file 'F'` / `Missing .target directive at start of file 'F'` (line of the first item) | fatal |
//! | `.version 9.9` | `Unsupported .version 9.9; current version is '9.0'` | fatal |
//! | `.target sm_99z` | `Unsupported .target 'sm_99z'` | fatal |
//! | `.address_size 48` | `Illegal value for .address_size directive (must be 32 or 64)` | error |
//!
//! ptxas stops at the first fatal error; we recover and keep going: inside a
//! body we skip to the next `;` (or stop before a `}` that closes the body),
//! at module scope we skip to the next `;` or past a balanced `{ ... }`.
//! Other things ptxas rejects (unknown modifiers such as `.u33` — "Unknown
//! modifier '.u33'", operand mismatches — "Arguments mismatch for instruction
//! 'mov'", undeclared registers — "Unknown symbol '%r5'") are semantic and
//! left to the lowering.
//!
//! Robustness: no input may panic. Token access goes through `get`, nesting of
//! `{}` scopes is bounded by [`MAX_DEPTH`], initializer nesting likewise, and
//! every recovery path consumes at least one token.

use ori_ir::{NameMap, NameSet};

use crate::ast::*;
use crate::diag::{Diag, Severity, Span};
use crate::lexer::{TokKind, Token};
use crate::token_window::TokWindow;
use smallvec::SmallVec;
use std::cell::RefCell;

/// The value of the predefined constant `WARP_SZ` (PTX ISA 10.1).
const WARP_SZ: i128 = 32;

/// Maximum nesting of `{ }` scopes / initializer lists.
pub const MAX_DEPTH: usize = 128;

/// The newest `.version` ptxas 13.0.88 accepts.
pub const MAX_VERSION: (u32, u32) = (9, 0);

/// The base opcodes the front end knows: the instruction table's list
/// (`crate::isa::OPCODES`).
pub use crate::isa::OPCODES;

type PResult<T> = Result<T, ()>;

/// Directives that end an instruction where a modifier would go: a
/// statement missing its `;` before `.reg` or `.loc` is ptxas's syntax
/// error at the directive, not a modifier (the state spaces `.global`,
/// `.shared`, ... are modifiers too, and are not listed; so is `.weak`, the
/// memory semantics of `ld.weak`, `st.weak`, `st.async.weak`, which names a
/// linkage only at module scope, where no instruction stands).
fn is_directive_word(dotted: &str) -> bool {
    matches!(
        dotted,
        ".reg"
            | ".loc"
            | ".file"
            | ".pragma"
            | ".section"
            | ".entry"
            | ".func"
            | ".visible"
            | ".extern"
            | ".common"
            | ".version"
            | ".target"
            | ".address_size"
            | ".maxnreg"
            | ".maxntid"
            | ".reqntid"
            | ".minnctapersm"
            | ".maxnctapersm"
            | ".callprototype"
            | ".calltargets"
            | ".branchtargets"
            | ".align"
            | ".sreg"
    )
}

/// A vector component (PTX ISA 5.4.2): `.x .y .z .w`, or `.r .g .b .a`.
fn is_component(dotted: &str) -> bool {
    matches!(
        dotted,
        ".x" | ".y" | ".z" | ".w" | ".r" | ".g" | ".b" | ".a"
    )
}

/// A component in its `.x .y .z .w` spelling (`.r .g .b .a` name the same
/// four); any other modifier as written.
fn component(dotted: &str) -> std::borrow::Cow<'_, str> {
    match dotted {
        ".r" => ".x".into(),
        ".g" => ".y".into(),
        ".b" => ".z".into(),
        ".a" => ".w".into(),
        d => d.into(),
    }
}

/// Parse a module, returning it together with every diagnostic found.
/// The module is best-effort when diagnostics contain errors.
pub fn parse_with_diags(file: &str, src: &str) -> (Module, Vec<Diag>) {
    parse_inner(file, src, None)
}

/// What [`parse_streaming`] hands over while it parses each function body
/// of the module, so that the statements parsed so far are lowered and
/// freed before the rest is parsed (`crate::lower::streamed`).
#[derive(Debug)]
pub enum BodyEvent<'m> {
    /// A function with a body begins.
    Start(Box<BodyStart<'m>>),
    /// The next top-level statements of that body, in source order (a
    /// nested `{ }` scope comes whole, as one statement).
    Stmts(Vec<Stmt>),
    /// The body's closing `}` was read: no statement of it follows.
    End,
}

/// The beginning of a streamed function body ([`BodyEvent::Start`]).
#[derive(Debug)]
pub struct BodyStart<'m> {
    /// The module as parsed so far: its header, and its items up to this
    /// function (the functions before it with their bodies empty). Lent,
    /// not copied: an item can be large (cuRAND's tables in a CUTLASS
    /// kernel are 200,000 initializers).
    pub module: &'m Module,
    /// Which of `module`'s items were parsed since the previous body
    /// began (the previous function among them): for the first body,
    /// every item before it.
    pub new_items: std::ops::Range<usize>,
    /// The function's header (its `body` is `None`).
    pub function: Function,
    /// Bytes of source from the body's first statement to the end of the
    /// file: at least the body's size, for sizing tables once.
    pub bytes_left: usize,
}

/// Where [`parse_streaming`] hands its [`BodyEvent`]s.
pub type BodySink<'a> = Box<dyn FnMut(BodyEvent<'_>) + 'a>;

/// Top-level statements of a streamed body per [`BodyEvent::Stmts`]: small
/// enough that few statements are alive at once, large enough that handing
/// a batch over is noise beside parsing it.
const STREAM_BATCH: usize = 64;

/// [`parse_with_diags`], handing each function body's statements to `sink`
/// as they are parsed instead of keeping them: in the module it returns,
/// every body is empty (`Some(vec![])`). The diagnostics are the same as
/// [`parse_with_diags`]'s.
pub fn parse_streaming<'a>(file: &'a str, src: &'a str, sink: BodySink<'a>) -> (Module, Vec<Diag>) {
    parse_inner(file, src, Some(sink))
}

fn parse_inner<'a>(file: &'a str, src: &'a str, sink: Option<BodySink<'a>>) -> (Module, Vec<Diag>) {
    let mut win = TokWindow::new(src);
    let first = win.get(0);
    let mut p = Parser {
        file,
        src,
        win: RefCell::new(win),
        pos: 0,
        cur: first,
        diags: Vec::new(),
        eof_reported: false,
        header_checked: false,
        have_version: false,
        have_target: false,
        scopes: Vec::new(),
        depth: 0,
        mod_lists: NameMap::default(),
        opcodes: NameMap::default(),
        sink,
        handed: 0,
        locs: Default::default(),
        pragmas: Vec::new(),
    };
    let m = p.module();
    let lex_errors = p.win.get_mut().take_lex_errors();
    let mut diags = p.diags;
    // An unterminated comment runs to EOF, so its error comes last.
    for e in lex_errors {
        diags.push(Diag::new(file, e.span, Severity::Fatal, e.message));
    }
    // Diagnostics stay in emission order, like ptxas: per function, the
    // "Unknown symbol" errors for branch targets come after the body's others.
    (m, diags)
}

/// Parse a module; `Err` carries all diagnostics if any of them is an error.
pub fn parse(file: &str, src: &str) -> Result<Module, Vec<Diag>> {
    let (m, diags) = parse_with_diags(file, src);
    if diags.iter().any(Diag::is_error) {
        Err(diags)
    } else {
        Ok(m)
    }
}

/// One `{ }` scope of a function body: its registers and its labels. PTX
/// scopes labels like registers (ptxas 13.0.88, probed): a label is visible
/// in its scope and the scopes nested in it, the same name may be defined
/// again in a sibling or nested scope (Triton's and CUTLASS's inline asm
/// repeat `waitLoop:` / `LAB_WAIT:` in every `{ }` block), and only a second
/// definition in the same scope is a duplicate.
#[derive(Default)]
struct RegScope {
    names: NameSet<String>,
    ranges: Vec<(String, u32)>,
    labels: NameSet<String>,
    /// `bra` targets used in this scope (or passed up from a nested one)
    /// that it does not define: resolved when the scope closes.
    targets: Vec<(Name, Span)>,
}

/// `prefix<N>` holds `name` (`%r<4>` holds `%r3`, not `%r03` or `%r4`).
fn range_holds(prefix: &str, n: u32, name: &str) -> bool {
    name.strip_prefix(prefix)
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .filter(|d| d.len() == 1 || !d.starts_with('0'))
        .and_then(|d| d.parse::<u64>().ok())
        .is_some_and(|i| i < u64::from(n))
}

impl RegScope {
    /// The first register a declaration of `name` (or `name<range>`) would
    /// declare a second time in this scope (ptxas: `Duplicate definition of
    /// variable`).
    fn redeclared(&self, name: &str, range: Option<u32>) -> Option<String> {
        match range {
            None => (self.names.contains(name)
                || self.ranges.iter().any(|(p, n)| range_holds(p, *n, name)))
            .then(|| name.to_string()),
            // `%r<4>` again: ptxas names the range itself, `%r<`
            // (`tests/bad_input/*__reg_redeclared`).
            Some(_) if self.ranges.iter().any(|(p, _)| p == name) => Some(format!("{name}<")),
            Some(n) => self
                .names
                .iter()
                .filter(|x| range_holds(name, n, x))
                .filter_map(|x| x[name.len()..].parse::<u32>().ok())
                .min()
                .map(|i| format!("{name}{i}")),
        }
    }
}

struct Parser<'a> {
    file: &'a str,
    src: &'a str,
    /// The tokens around `pos`, lexed on demand (interior mutability: the
    /// parser's many `&self` peeks may lex ahead).
    win: RefCell<TokWindow<'a>>,
    pos: usize,
    /// The token at `pos` (the parser asks for it several times before it
    /// moves on: its kind, span, text), kept at hand by [`Parser::bump`].
    cur: Token,
    diags: Vec<Diag>,
    /// An error at end-of-file was already reported (suppress repeats).
    eof_reported: bool,
    header_checked: bool,
    have_version: bool,
    have_target: bool,
    /// Register scopes of the current function (innermost last).
    scopes: Vec<RegScope>,
    depth: usize,
    /// Each run of modifiers met so far, by its source text
    /// (`.mma_async.sync.aligned.m64n8k16.f32.f16.f16`): a kernel repeats a
    /// handful of them, and a run seen before is one lookup instead of
    /// interning each modifier and then the list.
    mod_lists: NameMap<&'a str, ModList>,
    /// Each mnemonic spelling met: its symbol and whether it is a known
    /// instruction.
    opcodes: NameMap<&'a str, (Symbol, bool)>,
    /// Where the function bodies' statements go as they are parsed
    /// ([`parse_streaming`]); `None`: they stay in the tree.
    sink: Option<BodySink<'a>>,
    /// How many items of the module the sink was handed so far (in the
    /// [`BodyStart`]s).
    handed: usize,
    /// The source locations `.loc` directives named so far (an
    /// `inlined_at` must name one of them).
    locs: ori_ir::NameSet<(u32, u32, u32)>,
    /// The current body's `.pragma` strings ptxas does not know
    /// ([`Function::unsupported_pragmas`]).
    pragmas: Vec<String>,
}

fn is_known_target(t: &str) -> bool {
    let arch = t.strip_prefix("sm_").or_else(|| t.strip_prefix("compute_"));
    if let Some(rest) = arch {
        let rest = rest
            .strip_suffix('a')
            .or_else(|| rest.strip_suffix('f'))
            .unwrap_or(rest);
        return !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
    }
    matches!(
        t,
        "debug" | "texmode_unified" | "texmode_independent" | "map_f64_to_f32"
    )
}

fn is_space(s: &str) -> bool {
    matches!(
        s,
        ".global" | ".shared" | ".const" | ".local" | ".param" | ".tex"
    ) || s.starts_with(".shared::")
}

fn fold_int(v: i128, unsigned: bool) -> Imm {
    if unsigned || v < i128::from(i64::MIN) {
        Imm::UInt(v as u64)
    } else if let Ok(x) = i64::try_from(v) {
        Imm::Int(x)
    } else if let Ok(x) = u64::try_from(v) {
        Imm::UInt(x)
    } else {
        Imm::Int(v as i64)
    }
}

impl<'a> Parser<'a> {
    // ---------------------------------------------------------------- tokens

    fn tok(&self) -> Token {
        self.cur
    }

    fn nth(&self, k: usize) -> Token {
        self.win.borrow_mut().get(self.pos + k)
    }

    /// Token `i` of the stream, at or after the current statement's start.
    fn tok_at(&self, i: usize) -> Token {
        self.win.borrow_mut().get(i)
    }

    /// Starts a statement at `pos`: the tokens before it are no longer
    /// needed (recovery goes back to the statement's start, no further).
    fn release(&mut self) {
        self.win.get_mut().release_before(self.pos);
    }

    fn text_of(&self, t: &Token) -> &'a str {
        self.src
            .get(t.span.lo as usize..t.span.hi as usize)
            .unwrap_or("")
    }

    fn text(&self) -> &'a str {
        self.text_of(&self.tok())
    }

    fn span(&self) -> Span {
        self.tok().span
    }

    /// Span of the previously consumed token.
    fn prev_span(&self) -> Span {
        self.pos
            .checked_sub(1)
            .map(|i| self.tok_at(i).span)
            .unwrap_or_default()
    }

    fn at_eof(&self) -> bool {
        self.tok().kind == TokKind::Eof
    }

    fn bump(&mut self) {
        if !self.at_eof() {
            self.pos += 1;
            self.cur = self.win.get_mut().get(self.pos);
        }
    }

    fn is_punct(&self, c: char) -> bool {
        self.tok().kind == TokKind::Punct(c)
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> PResult<Span> {
        if self.is_punct(c) {
            let s = self.span();
            self.bump();
            Ok(s)
        } else {
            self.syntax_error()
        }
    }

    fn is_dotted(&self, name: &str) -> bool {
        self.tok().kind == TokKind::Dotted && self.text() == name
    }

    fn is_ident(&self) -> bool {
        self.tok().kind == TokKind::Ident
    }

    fn expect_ident(&mut self) -> PResult<(String, Span)> {
        if self.is_ident() {
            let r = (self.text().to_string(), self.span());
            self.bump();
            Ok(r)
        } else {
            self.syntax_error()
        }
    }

    /// [`Self::expect_ident`] as an operand [`Name`] (inline, no allocation).
    fn expect_name(&mut self) -> PResult<(Name, Span)> {
        if self.is_ident() {
            let r = (Name::from(self.text()), self.span());
            self.bump();
            Ok(r)
        } else {
            self.syntax_error()
        }
    }

    /// Consume a Dotted token and return its name without the dot.
    fn expect_dotted(&mut self) -> PResult<(String, Span)> {
        if self.tok().kind == TokKind::Dotted {
            let s = self.text();
            let r = (s.get(1..).unwrap_or("").to_string(), self.span());
            self.bump();
            Ok(r)
        } else {
            self.syntax_error()
        }
    }

    fn expect_uint(&mut self) -> PResult<u64> {
        match self.tok().kind {
            TokKind::Int {
                value, overflow, ..
            } => {
                if overflow {
                    self.error(self.span(), "Constant overflow");
                }
                self.bump();
                Ok(value)
            }
            _ => self.syntax_error(),
        }
    }

    fn expect_u32(&mut self) -> PResult<u32> {
        let s = self.span();
        let v = self.expect_uint()?;
        match u32::try_from(v) {
            Ok(x) => Ok(x),
            Err(_) => {
                self.error(s, "Constant overflow");
                Ok(u32::MAX)
            }
        }
    }

    // ----------------------------------------------------------- diagnostics

    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.diags
            .push(Diag::new(self.file, span, Severity::Error, msg));
    }

    fn fatal(&mut self, span: Span, msg: impl Into<String>) {
        self.diags
            .push(Diag::new(self.file, span, Severity::Fatal, msg));
    }

    /// Report ptxas's generic "Parsing error near 'TOK': syntax error" at the
    /// current token.
    fn syntax_error<T>(&mut self) -> PResult<T> {
        if self.at_eof() {
            // An unterminated comment (the lexer's error) already explains
            // the end of file.
            if self.eof_reported || self.win.borrow().has_lex_errors() {
                return Err(());
            }
            self.eof_reported = true;
        }
        let near = self.text().to_string();
        let span = self.span();
        self.fatal(span, format!("Parsing error near '{near}': syntax error"));
        Err(())
    }

    // -------------------------------------------------------------- recovery

    /// Skip to just after the next `;` at the statement's brace level, or to
    /// (not past) a `}` that would close the enclosing body.
    fn recover_stmt(&mut self, start: usize) {
        let mut depth: i64 = 0;
        for t in (start..self.pos).map(|i| self.tok_at(i)) {
            match t.kind {
                TokKind::Punct('{') => depth += 1,
                TokKind::Punct('}') => depth -= 1,
                _ => {}
            }
        }
        depth = depth.max(0);
        let before = self.pos;
        loop {
            match self.tok().kind {
                TokKind::Eof => break,
                TokKind::Punct(';') if depth == 0 => {
                    self.bump();
                    break;
                }
                TokKind::Punct('{') => depth += 1,
                TokKind::Punct('}') => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
        if self.pos == before && !self.at_eof() && !self.is_punct('}') {
            self.bump();
        }
    }

    /// Module-level recovery: skip to after `;` or after a balanced `{...}`.
    fn recover_module(&mut self, start: usize) {
        let mut depth: i64 = 0;
        for t in (start..self.pos).map(|i| self.tok_at(i)) {
            match t.kind {
                TokKind::Punct('{') => depth += 1,
                TokKind::Punct('}') => depth -= 1,
                _ => {}
            }
        }
        depth = depth.max(0);
        let before = self.pos;
        loop {
            match self.tok().kind {
                TokKind::Eof => break,
                TokKind::Punct(';') if depth == 0 => {
                    self.bump();
                    break;
                }
                TokKind::Punct('{') => depth += 1,
                TokKind::Punct('}') => {
                    depth -= 1;
                    if depth <= 0 {
                        self.bump();
                        break;
                    }
                }
                _ => {}
            }
            self.bump();
        }
        if self.pos == before {
            self.bump();
        }
    }

    // ---------------------------------------------------------------- module

    fn module(&mut self) -> Module {
        let mut m = Module::default();
        while !self.at_eof() {
            self.release();
            let start = self.pos;
            if self.module_item(&mut m).is_err() {
                self.recover_module(start);
            }
        }
        if !self.header_checked {
            // ptxas: an empty file (or one with only comments) is reported
            // as missing .version at its end-of-file line.
            self.check_header();
        }
        m
    }

    fn check_header(&mut self) {
        self.header_checked = true;
        let span = self.span();
        if !self.have_version {
            let f = self.file;
            self.fatal(
                span,
                format!("Missing .version directive at start of file '{f}'"),
            );
        } else if !self.have_target {
            let f = self.file;
            self.fatal(
                span,
                format!("Missing .target directive at start of file '{f}'"),
            );
        }
    }

    fn module_item(&mut self, m: &mut Module) -> PResult<()> {
        if self.tok().kind != TokKind::Dotted {
            return self.syntax_error();
        }
        let d = self.text();
        match d {
            ".version" => return self.version(m),
            ".target" => return self.target(m),
            ".address_size" => {
                // ptxas names `.address_size` as where `.target` is missing.
                if self.have_version && !self.have_target && !self.header_checked {
                    self.check_header();
                }
                return self.address_size(m);
            }
            _ => {}
        }
        if !self.header_checked {
            self.check_header();
        }
        match d {
            ".file" => self.file_dir(m),
            ".section" => {
                let dir = self.section()?;
                m.items.push(Item::Directive(dir));
                Ok(())
            }
            ".pragma" => {
                let start = self.span();
                self.bump();
                loop {
                    match self.tok().kind {
                        TokKind::Str => self.bump(),
                        _ => return self.syntax_error(),
                    }
                    if !self.eat_punct(',') {
                        break;
                    }
                }
                self.expect_punct(';')?;
                m.items
                    .push(Item::Directive(self.directive_from(start, "pragma".into())));
                Ok(())
            }
            ".alias" => {
                let dir = self.verbatim_to_semi()?;
                m.items.push(Item::Directive(dir));
                Ok(())
            }
            _ => {
                let mut linkage = None;
                let lspan = self.span();
                if matches!(d, ".visible" | ".extern" | ".weak" | ".common") {
                    linkage = Some(d.get(1..).unwrap_or("").to_string());
                    self.bump();
                }
                if self.is_dotted(".entry") || self.is_dotted(".func") {
                    let f = self.function(linkage, lspan, m)?;
                    m.items.push(Item::Function(f));
                    Ok(())
                } else if self.tok().kind == TokKind::Dotted && is_space(self.text()) {
                    let vars = self.var_decl(linkage, lspan)?;
                    m.items.extend(vars.into_iter().map(Item::Var));
                    Ok(())
                } else {
                    self.syntax_error()
                }
            }
        }
    }

    fn version(&mut self, m: &mut Module) -> PResult<()> {
        let dspan = self.span();
        self.bump();
        let t = self.tok();
        let txt = self.text_of(&t);
        let v = match t.kind {
            TokKind::DecFloat(_) => {
                let mut it = txt.splitn(2, '.');
                let a = it.next().and_then(|s| s.parse::<u32>().ok());
                let b = it.next().and_then(|s| s.parse::<u32>().ok());
                match (a, b) {
                    (Some(a), Some(b)) => (a, b),
                    _ => return self.syntax_error(),
                }
            }
            _ => return self.syntax_error(),
        };
        self.bump();
        if v > MAX_VERSION {
            self.fatal(
                dspan,
                format!(
                    "Unsupported .version {}.{}; current version is '{}.{}'",
                    v.0, v.1, MAX_VERSION.0, MAX_VERSION.1
                ),
            );
        }
        m.version = v;
        self.have_version = true;
        Ok(())
    }

    fn target(&mut self, m: &mut Module) -> PResult<()> {
        m.target_span = self.span();
        self.bump();
        loop {
            let (name, span) = self.expect_ident()?;
            if !is_known_target(&name) {
                self.fatal(span, format!("Unsupported .target '{name}'"));
            }
            m.target.push(name);
            if !self.eat_punct(',') {
                break;
            }
        }
        self.have_target = true;
        Ok(())
    }

    fn address_size(&mut self, m: &mut Module) -> PResult<()> {
        let dspan = self.span();
        self.bump();
        let v = self.expect_u32()?;
        if v != 32 && v != 64 {
            self.error(
                dspan,
                "Illegal value for .address_size directive (must be 32 or 64)",
            );
        }
        m.address_size = Some(v);
        Ok(())
    }

    /// `.file N "name" [, timestamp, size]`
    fn file_dir(&mut self, m: &mut Module) -> PResult<()> {
        self.bump();
        let n = self.expect_u32()?;
        let t = self.tok();
        let name = match t.kind {
            TokKind::Str => t.str_contents(self.src).to_string(),
            _ => return self.syntax_error(),
        };
        self.bump();
        let mut extra = 0;
        while self.eat_punct(',') && extra < 2 {
            self.expect_uint()?;
            extra += 1;
        }
        m.files.push((n, name));
        Ok(())
    }

    /// `.section NAME { ... }` kept verbatim.
    fn section(&mut self) -> PResult<Directive> {
        let start = self.span();
        self.bump();
        let name = match self.tok().kind {
            TokKind::Dotted | TokKind::Ident => self.text().to_string(),
            _ => return self.syntax_error(),
        };
        self.bump();
        self.expect_punct('{')?;
        let mut depth = 1usize;
        while depth > 0 {
            match self.tok().kind {
                TokKind::Eof => return self.syntax_error(),
                TokKind::Punct('{') => depth += 1,
                TokKind::Punct('}') => depth -= 1,
                _ => {}
            }
            self.bump();
        }
        Ok(self.directive_from(start, format!("section {name}")))
    }

    fn directive_from(&self, start: Span, name: String) -> Directive {
        let end = self.prev_span();
        let span = start.to(end);
        Directive {
            name,
            text: self
                .src
                .get(span.lo as usize..span.hi as usize)
                .unwrap_or("")
                .to_string(),
            span,
        }
    }

    /// A directive kept verbatim up to and including the next `;`.
    fn verbatim_to_semi(&mut self) -> PResult<Directive> {
        let start = self.span();
        let name = self.text().get(1..).unwrap_or("").to_string();
        self.bump();
        while !self.is_punct(';') {
            if self.at_eof() || self.is_punct('{') || self.is_punct('}') {
                return self.syntax_error();
            }
            self.bump();
        }
        self.bump();
        Ok(self.directive_from(start, name))
    }

    // ------------------------------------------------------------- functions

    /// A function definition or prototype; `so_far` is the module parsed
    /// before it (what a streamed body's [`BodyEvent::Start`] carries).
    fn function(
        &mut self,
        linkage: Option<String>,
        start: Span,
        so_far: &Module,
    ) -> PResult<Function> {
        let is_entry = self.is_dotted(".entry");
        self.bump();
        let mut ret_params = Vec::new();
        if !is_entry && self.is_punct('(') {
            ret_params = self.param_list()?;
        }
        let (name, _) = self.expect_ident()?;
        let mut params = Vec::new();
        if self.is_punct('(') {
            params = self.param_list()?;
        }
        let perf = self.performance_directives(is_entry)?;
        let mut f = Function {
            name,
            is_entry,
            linkage,
            params,
            ret_params,
            perf,
            unsupported_pragmas: Vec::new(),
            body: None,
            span: start,
        };
        if self.eat_punct(';') {
            f.span = start.to(self.prev_span());
            return Ok(f);
        }
        if !self.is_punct('{') {
            return self.syntax_error();
        }
        // New function: fresh label / register tables.
        self.scopes.clear();
        self.pragmas.clear();
        let mut top = RegScope::default();
        for p in f.params.iter().chain(f.ret_params.iter()) {
            if p.space == "reg" {
                top.names.insert(p.name.clone());
            }
        }
        self.scopes.push(top);
        self.bump();
        let stream = self.sink.is_some();
        if stream {
            self.start_streamed_body(so_far, &f);
        }
        let body = self.block_body_to(stream);
        // Branch targets no enclosing scope defines.
        for (t, s) in self.close_scope() {
            self.error(s, format!("Unknown symbol '{t}'"));
        }
        self.scopes.clear();
        if stream {
            self.emit(BodyEvent::End);
        }
        f.body = Some(body);
        f.span = start.to(self.prev_span());
        f.unsupported_pragmas = std::mem::take(&mut self.pragmas);
        if let Some(msg) = crate::directive_warnings::conflict(&f.perf) {
            self.error(self.prev_span(), msg);
        }
        Ok(f)
    }

    /// The performance directives after a function's signature (`.maxntid
    /// 128, 1, 1`, `.maxnreg 168`, `.noreturn`): each name with its values.
    fn performance_directives(&mut self, is_entry: bool) -> PResult<Vec<(String, Vec<u64>)>> {
        let mut perf = Vec::new();
        while self.tok().kind == TokKind::Dotted {
            if !crate::directive_warnings::allowed_on(self.text(), is_entry) {
                return self.syntax_error();
            }
            let (d, _) = self.expect_dotted()?;
            let mut vals = Vec::new();
            if matches!(self.tok().kind, TokKind::Int { .. }) {
                vals.push(self.expect_uint()?);
                while self.eat_punct(',') {
                    vals.push(self.expect_uint()?);
                }
            }
            if let Some((msg, after)) = crate::directive_warnings::zero_value(&d, &vals) {
                // A list's check looked at the token after it for a `,`.
                let at = if after { self.span() } else { self.prev_span() };
                self.error(at, msg);
            }
            perf.push((d, vals));
        }
        Ok(perf)
    }

    /// Hands the streamed front end the start of `f`'s body: the module
    /// items parsed since the previous body, and `f`'s signature.
    fn start_streamed_body(&mut self, so_far: &Module, f: &Function) {
        let bytes_left = self.src.len().saturating_sub(self.span().lo as usize);
        let new_items = self.handed..so_far.items.len();
        self.handed = so_far.items.len();
        self.emit(BodyEvent::Start(Box::new(BodyStart {
            module: so_far,
            new_items,
            function: f.clone(),
            bytes_left,
        })));
    }

    /// Pop the innermost scope; the branch targets it used but does not
    /// define are returned, in order, for the enclosing scope to resolve.
    fn close_scope(&mut self) -> Vec<(Name, Span)> {
        let Some(sc) = self.scopes.pop() else {
            return Vec::new();
        };
        sc.targets
            .into_iter()
            .filter(|(t, _)| !sc.labels.contains(t.as_str()))
            .collect()
    }

    fn param_list(&mut self) -> PResult<Vec<Param>> {
        self.expect_punct('(')?;
        let mut v = Vec::new();
        if self.eat_punct(')') {
            return Ok(v);
        }
        loop {
            v.push(self.param()?);
            if self.eat_punct(')') {
                return Ok(v);
            }
            self.expect_punct(',')?;
        }
    }

    fn param(&mut self) -> PResult<Param> {
        let start = self.span();
        let space = if self.is_dotted(".param") || self.is_dotted(".reg") {
            self.expect_dotted()?.0
        } else {
            return self.syntax_error();
        };
        let mut align = None;
        let mut ptr_space = None;
        let mut ty = None;
        while self.tok().kind == TokKind::Dotted {
            let t = self.text();
            if t == ".align" {
                self.bump();
                align = Some(self.expect_u32()?);
            } else if t == ".ptr" {
                self.bump();
                ptr_space = Some(String::new());
                if self.tok().kind == TokKind::Dotted && is_space(self.text()) {
                    ptr_space = Some(self.expect_dotted()?.0);
                }
            } else if ty.is_none() {
                ty = Some(self.expect_dotted()?.0);
            } else {
                return self.syntax_error();
            }
        }
        let Some(ty) = ty else {
            return self.syntax_error();
        };
        let (name, _) = self.expect_ident()?;
        let mut array = None;
        if self.eat_punct('[') {
            if self.eat_punct(']') {
                array = Some(0);
            } else {
                array = Some(self.expect_uint()?);
                self.expect_punct(']')?;
            }
        }
        Ok(Param {
            space,
            ty,
            name,
            align,
            ptr_space,
            array,
            span: start.to(self.prev_span()),
        })
    }

    // ---------------------------------------------------------- declarations

    /// `[.align N] [.vN] .ty name[dims] [= init] (, name ...)* ;`
    /// The current token is the state space.
    fn var_decl(&mut self, linkage: Option<String>, start: Span) -> PResult<Vec<VarDecl>> {
        let (space, _) = self.expect_dotted()?;
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        while self.tok().kind == TokKind::Dotted {
            let t = self.text();
            if t == ".align" {
                self.bump();
                align = Some(self.expect_u32()?);
            } else if let Some(n) = t.strip_prefix(".v").and_then(|n| n.parse::<u32>().ok()) {
                self.bump();
                vector = Some(n);
            } else if ty.is_none() {
                ty = Some(self.expect_dotted()?.0);
            } else {
                return self.syntax_error();
            }
        }
        let Some(ty) = ty else {
            return self.syntax_error();
        };
        let mut out = Vec::new();
        loop {
            let nspan = self.span();
            let (name, _) = self.expect_ident()?;
            let mut dims = Vec::new();
            while self.eat_punct('[') {
                if self.eat_punct(']') {
                    dims.push(None);
                } else {
                    dims.push(Some(self.expect_uint()?));
                    self.expect_punct(']')?;
                }
            }
            let mut init = None;
            if self.eat_punct('=') {
                init = Some(self.init(0)?);
            }
            let span = if out.is_empty() { start } else { nspan };
            out.push(VarDecl {
                linkage: linkage.clone(),
                space: space.clone(),
                align,
                vector,
                ty: ty.clone(),
                name,
                dims,
                init,
                span: span.to(self.prev_span()),
            });
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(';')?;
        Ok(out)
    }

    fn init(&mut self, depth: usize) -> PResult<Init> {
        if self.is_punct('{') {
            return self.init_list(depth);
        }
        Ok(Init::Expr(self.operand(false)?))
    }

    /// A braced list, at its `{`. Elements that are one integer literal
    /// each are kept as runs of values ([`Init::Ints`]); most of them are
    /// read from the source with no token each
    /// ([`TokWindow::int_elements_after`]), the others as tokens, without
    /// the walk through the constant-expression grammar.
    fn init_list(&mut self, depth: usize) -> PResult<Init> {
        if depth >= MAX_DEPTH {
            return self.syntax_error();
        }
        let mut items = Vec::new();
        let mut run = Vec::new();
        self.win.get_mut().int_elements_after(self.pos, &mut run);
        self.bump();
        if run.is_empty() && self.eat_punct('}') {
            return Ok(Init::List(items));
        }
        loop {
            match self.plain_int_element() {
                Some(v) => run.push(v),
                None => {
                    if !run.is_empty() {
                        items.push(Init::Ints(std::mem::take(&mut run)));
                    }
                    items.push(self.init(depth + 1)?);
                }
            }
            if self.eat_punct('}') {
                break;
            }
            if !self.is_punct(',') {
                return self.syntax_error();
            }
            self.win.get_mut().int_elements_after(self.pos, &mut run);
            self.bump();
        }
        if !run.is_empty() {
            items.push(Init::Ints(run));
        }
        Ok(Init::List(items))
    }

    /// A list element that is one integer literal (`{202, 29, 180, ...}`),
    /// its value as [`Parser::operand`] would fold it; `None` for anything
    /// else.
    fn plain_int_element(&mut self) -> Option<Imm> {
        let TokKind::Int {
            value,
            unsigned,
            overflow: false,
        } = self.tok().kind
        else {
            return None;
        };
        if !matches!(self.nth(1).kind, TokKind::Punct(',' | '}')) {
            return None;
        }
        self.bump();
        Some(fold_int(i128::from(value), unsigned))
    }

    // ------------------------------------------------------------ statements

    /// Hand `e` to the sink, if there is one.
    fn emit(&mut self, e: BodyEvent<'_>) {
        if let Some(sink) = self.sink.as_mut() {
            sink(e);
        }
    }

    /// Statements up to and including the closing `}` (the `{` is consumed).
    fn block_body(&mut self) -> Vec<Stmt> {
        self.block_body_to(false)
    }

    /// [`Parser::block_body`]; with `stream`, the statements go to the sink
    /// in batches as they are parsed, and what is returned is empty.
    fn block_body_to(&mut self, stream: bool) -> Vec<Stmt> {
        let mut out = Vec::new();
        loop {
            if stream && out.len() >= STREAM_BATCH {
                let batch = std::mem::replace(&mut out, Vec::with_capacity(STREAM_BATCH));
                self.emit(BodyEvent::Stmts(batch));
            }
            if self.eat_punct('}') {
                break;
            }
            if self.at_eof() {
                let _ = self.syntax_error::<()>();
                break;
            }
            self.release();
            let start = self.pos;
            match self.stmt(&mut out) {
                Ok(()) => {}
                Err(()) => self.recover_stmt(start),
            }
        }
        if stream && !out.is_empty() {
            self.emit(BodyEvent::Stmts(std::mem::take(&mut out)));
        }
        out
    }

    /// One statement of a body into `out` (a declaration may make several).
    fn stmt(&mut self, out: &mut Vec<Stmt>) -> PResult<()> {
        let t = self.tok();
        match t.kind {
            TokKind::Punct('{') => self.scope_stmt(t, out),
            TokKind::Dotted => self.directive_stmt(t, out),
            TokKind::Ident if self.nth(1).kind == TokKind::Punct(':') => self.label_stmt(t, out),
            TokKind::Punct('@') | TokKind::Ident => {
                let i = self.instruction()?;
                out.push(Stmt::Inst(i));
                Ok(())
            }
            _ => self.syntax_error(),
        }
    }

    /// `{ ... }` at token `t`: a nested scope with registers of its own
    /// (past [`MAX_DEPTH`], an error and the block skipped whole).
    fn scope_stmt(&mut self, t: Token, out: &mut Vec<Stmt>) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            self.fatal(
                t.span,
                "Parsing error near '{': scopes nested too deeply".to_string(),
            );
            // Skip the whole over-deep block.
            let mut d = 0usize;
            loop {
                match self.tok().kind {
                    TokKind::Eof => return Err(()),
                    TokKind::Punct('{') => d += 1,
                    TokKind::Punct('}') => {
                        d = d.saturating_sub(1);
                        if d == 0 {
                            self.bump();
                            return Ok(());
                        }
                    }
                    _ => {}
                }
                self.bump();
            }
        }
        self.bump();
        self.depth += 1;
        self.scopes.push(RegScope::default());
        let body = self.block_body();
        let unresolved = self.close_scope();
        if let Some(parent) = self.scopes.last_mut() {
            parent.targets.extend(unresolved);
        }
        self.depth -= 1;
        out.push(Stmt::Scope {
            body,
            span: t.span.to(self.prev_span()),
        });
        Ok(())
    }

    /// A statement starting with a directive at token `t`: `.reg`,
    /// `.pragma`, `.loc` or a variable in a state space.
    fn directive_stmt(&mut self, t: Token, out: &mut Vec<Stmt>) -> PResult<()> {
        let d = self.text_of(&t);
        match d {
            ".reg" => {
                let s = self.reg_decl()?;
                out.push(s);
            }
            ".pragma" => {
                // `.pragma "a", "b";` (a list of strings, PTX ISA 11.3);
                // the statement keeps the first.
                self.bump();
                let t = self.tok();
                let text = match t.kind {
                    TokKind::Str => t.str_contents(self.src).to_string(),
                    _ => return self.syntax_error(),
                };
                self.bump();
                while self.eat_punct(',') {
                    match self.tok().kind {
                        TokKind::Str => self.bump(),
                        _ => return self.syntax_error(),
                    }
                }
                self.expect_punct(';')?;
                if !crate::directive_warnings::is_known_pragma(&text) {
                    self.pragmas.push(text.clone());
                }
                out.push(Stmt::Pragma {
                    text,
                    span: t.span.to(self.prev_span()),
                });
            }
            ".loc" => {
                let s = self.loc()?;
                out.push(s);
            }
            _ if is_space(d) => {
                let vars = self.var_decl(None, t.span)?;
                out.extend(vars.into_iter().map(|v| Stmt::Var(Box::new(v))));
            }
            _ => return self.syntax_error(),
        }
        Ok(())
    }

    /// `name:` at token `t`: a label (a second one of the same name in a
    /// scope is an error), or a named `.callprototype`, `.calltargets` or
    /// `.branchtargets`.
    fn label_stmt(&mut self, t: Token, out: &mut Vec<Stmt>) -> PResult<()> {
        let name = self.text_of(&t).to_string();
        self.bump();
        self.bump();
        if self.is_dotted(".branchtargets") {
            return self.branch_targets(name, t.span, out);
        }
        if self.is_dotted(".calltargets") {
            return self.call_targets(name, t.span, out);
        }
        if self.is_dotted(".callprototype") {
            return self.call_prototype(name, t.span, out);
        }
        self.define_label(&name, t.span);
        out.push(Stmt::Label { name, span: t.span });
        Ok(())
    }

    /// A label, a `.branchtargets` / `.calltargets` list or a
    /// `.callprototype` named `name` in the innermost scope: a second
    /// definition of the name there is an error.
    fn define_label(&mut self, name: &str, at: Span) {
        let fresh = self
            .scopes
            .last_mut()
            .is_none_or(|sc| sc.labels.insert(name.to_string()));
        if !fresh {
            self.error(at, format!("Duplicate definition of label '{name}'"));
        }
    }

    /// `NAME: .calltargets f1, f2, ...;` after `NAME:` (at least one
    /// function: ptxas 13.0.88 takes an empty list for a syntax error).
    fn call_targets(&mut self, name: String, at: Span, out: &mut Vec<Stmt>) -> PResult<()> {
        self.bump();
        let mut funcs = Vec::new();
        loop {
            funcs.push(self.expect_ident()?);
            if !self.eat_punct(',') {
                break;
            }
        }
        let end = self.expect_punct(';')?;
        self.define_label(&name, at);
        out.push(Stmt::CallTargets {
            name,
            funcs,
            span: at.to(end),
        });
        Ok(())
    }

    /// `NAME: .callprototype [(ret)] _ [(params)];` after `NAME:` (PTX
    /// ISA, `call`: the prototype's own name is `_`).
    fn call_prototype(&mut self, name: String, at: Span, out: &mut Vec<Stmt>) -> PResult<()> {
        self.bump();
        let mut ret_params = Vec::new();
        if self.is_punct('(') {
            ret_params = self.param_list()?;
        }
        if self.text() != "_" {
            return self.syntax_error();
        }
        self.bump();
        let mut params = Vec::new();
        if self.is_punct('(') {
            params = self.param_list()?;
        }
        let end = self.expect_punct(';')?;
        self.define_label(&name, at);
        out.push(Stmt::CallPrototype {
            name,
            ret_params,
            params,
            span: at.to(end),
        });
        Ok(())
    }

    /// `NAME: .branchtargets L1, L2, ...;` after `NAME:` (at least one
    /// label: ptxas 13.0.88 takes an empty list for a syntax error). The
    /// list's name is a label of its scope: a second definition of it is
    /// an error.
    fn branch_targets(&mut self, name: String, at: Span, out: &mut Vec<Stmt>) -> PResult<()> {
        self.bump();
        let mut labels = Vec::new();
        loop {
            labels.push(self.expect_ident()?);
            if !self.eat_punct(',') {
                break;
            }
        }
        let end = self.expect_punct(';')?;
        self.define_label(&name, at);
        out.push(Stmt::BranchTargets {
            name,
            labels,
            span: at.to(end),
        });
        Ok(())
    }

    /// `.reg [.align N] [.vN] .ty name[<N>] (, name[<N>])* ;`
    fn reg_decl(&mut self) -> PResult<Stmt> {
        let start = self.span();
        self.bump();
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        while self.tok().kind == TokKind::Dotted {
            let t = self.text();
            if t == ".align" {
                self.bump();
                align = Some(self.expect_u32()?);
            } else if let Some(n) = t.strip_prefix(".v").and_then(|n| n.parse::<u32>().ok()) {
                self.bump();
                vector = Some(n);
            } else if ty.is_none() && is_reg_type(t) {
                ty = Some(self.expect_dotted()?.0);
            } else {
                return self.syntax_error();
            }
        }
        let Some(ty) = ty else {
            return self.syntax_error();
        };
        let mut names = Vec::new();
        loop {
            // `WARP_SZ` is the ISA's constant, no name to declare.
            if self.is_warp_sz() {
                return self.syntax_error();
            }
            let (name, name_span) = self.expect_ident()?;
            let mut range = None;
            if self.eat_punct('<') {
                range = Some(self.expect_u32()?);
                self.expect_punct('>')?;
            }
            if let Some(dup) = self
                .scopes
                .last()
                .and_then(|sc| sc.redeclared(&name, range))
            {
                self.error(
                    name_span,
                    format!("Duplicate definition of variable '{dup}'"),
                );
            }
            if let Some(sc) = self.scopes.last_mut() {
                match range {
                    Some(n) => sc.ranges.push((name.clone(), n)),
                    None => {
                        sc.names.insert(name.clone());
                    }
                }
            }
            names.push(RegName { name, range });
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(';')?;
        Ok(Stmt::Reg {
            ty,
            vector,
            align,
            names,
            span: start.to(self.prev_span()),
        })
    }

    /// `.loc F L C [, function_name SYM[+N]] [, inlined_at F L C]` (no `;`).
    fn loc(&mut self) -> PResult<Stmt> {
        let start = self.span();
        self.bump();
        let file = self.expect_u32()?;
        let line = self.expect_u32()?;
        let col = self.expect_u32()?;
        self.locs.insert((file, line, col));
        // ptxas 13.0.88 takes the location alone or with both
        // `function_name SYM[+N]` and `inlined_at F L C`, in that order;
        // either alone is a syntax error at the token after it.
        let mut function_name = None;
        let mut inlined_at = None;
        if self.eat_punct(',') {
            function_name = Some(self.loc_keyword_then("function_name", |p| {
                let (sym, _) = p.expect_ident()?;
                if p.eat_punct('+') {
                    p.expect_uint()?;
                }
                Ok(sym)
            })?);
            self.expect_punct(',')?;
            let at_span = self.span();
            let at = self.loc_keyword_then("inlined_at", |p| {
                Ok((p.expect_u32()?, p.expect_u32()?, p.expect_u32()?))
            })?;
            if !self.locs.contains(&at) {
                let (f, l, c) = at;
                self.error(
                    at_span,
                    format!("Source location {f} {l} {c} used in inlined_at directive must be used in a preceding .loc directive"),
                );
            }
            inlined_at = Some(at);
        }
        Ok(Stmt::Loc {
            file,
            line,
            col,
            function_name,
            inlined_at,
            span: start.to(self.prev_span()),
        })
    }

    /// The identifier `kw` (a syntax error at any other token), then what
    /// `then` parses.
    fn loc_keyword_then<T>(
        &mut self,
        kw: &str,
        then: impl FnOnce(&mut Self) -> PResult<T>,
    ) -> PResult<T> {
        if self.tok().kind != TokKind::Ident || self.text() != kw {
            return self.syntax_error();
        }
        self.bump();
        then(self)
    }

    // ---------------------------------------------------------- instructions

    /// The modifiers after an opcode, interned, with how many of them
    /// come before the first blank or comment (`Instruction::joined`).
    fn modifiers(&mut self) -> (ModList, u8) {
        let first_mod = self.pos;
        let (lo, mut hi) = (self.span().lo, self.span().lo);
        // Blanks and comments may stand between modifiers (ptxas takes
        // `add /* c */ .u32`, `ld .global.u32`; TileLang writes
        // `.bulk_group .L2::cache_hint`); a directive ends the statement.
        let mut joined = None;
        while self.tok().kind == TokKind::Dotted && !is_directive_word(self.text()) {
            if self.tok().ws_before && joined.is_none() {
                joined = Some(self.pos - first_mod);
            }
            hi = self.span().hi;
            self.bump();
        }
        let joined = joined.unwrap_or(self.pos - first_mod).min(255) as u8;
        // The same text is the same tokens, so the same list.
        let run = self.src.get(lo as usize..hi as usize).unwrap_or("");
        let modifiers = match self.mod_lists.get(run) {
            Some(&list) => list,
            None => {
                let syms: SmallVec<[Symbol; 8]> = (first_mod..self.pos)
                    .map(|k| Symbol::new(self.text_of(&self.tok_at(k)).get(1..).unwrap_or("")))
                    .collect();
                let list = ModList::new(&syms);
                self.mod_lists.insert(run, list);
                list
            }
        };
        (modifiers, joined)
    }

    fn instruction(&mut self) -> PResult<Instruction> {
        let start = self.span();
        let mut pred = None;
        if self.eat_punct('@') {
            let negated = self.eat_punct('!');
            let (reg, span) = self.expect_name()?;
            pred = Some(Pred {
                negated,
                reg,
                span: start.to(span),
            });
        }
        let (opcode, ospan) = match self.tok().kind {
            TokKind::Ident => (self.text(), self.span()),
            _ => return self.syntax_error(),
        };
        self.bump();
        // The mnemonic's text names its symbol (`opcodes`: one table
        // lookup per distinct spelling, not an interning and a search of
        // the mnemonic list per instruction).
        let (opcode_sym, known) = match self.opcodes.get(opcode) {
            Some(&k) => k,
            None => {
                let k = (Symbol::new(opcode), OPCODES.binary_search(&opcode).is_ok());
                self.opcodes.insert(opcode, k);
                k
            }
        };
        if !known {
            self.error(
                ospan,
                format!("Not a name of any known instruction: '{opcode}'"),
            );
        }
        let opcode = opcode_sym;
        let (modifiers, joined) = self.modifiers();
        // Three inline (`ast::Operands`), more in a heap block.
        let mut operands = crate::ast::Operands::new();
        if !self.is_punct(';') {
            loop {
                operands.push(self.operand(true)?);
                if !self.eat_punct(',') {
                    break;
                }
            }
        }
        self.expect_punct(';')?;
        if opcode == "bra" {
            if let Some(Operand {
                kind: OperandKind::Symbol(s),
                span,
            }) = operands.first()
            {
                if let Some(sc) = self.scopes.last_mut() {
                    sc.targets.push((s.clone(), *span));
                }
            }
        }
        Ok(Instruction {
            pred,
            opcode,
            modifiers,
            joined,
            operands,
            span: start.to(self.prev_span()),
        })
    }

    fn is_reg_name(&self, name: &str) -> bool {
        if name.starts_with('%') {
            return true;
        }
        self.scopes.iter().any(|sc| {
            sc.names.contains(name)
                || sc.ranges.iter().any(|(p, n)| {
                    name.strip_prefix(p.as_str())
                        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                        .and_then(|d| d.parse::<u64>().ok())
                        .is_some_and(|i| i < u64::from(*n))
                })
        })
    }

    /// One operand. `compound` allows vectors, addresses and call lists.
    fn operand(&mut self, compound: bool) -> PResult<Operand> {
        let start = self.span();
        let t = self.tok();
        let kind = match t.kind {
            TokKind::Punct('{') if compound => {
                self.bump();
                let mut v = Vec::new();
                if !self.is_punct('}') {
                    loop {
                        v.push(self.operand(false)?);
                        if !self.eat_punct(',') {
                            break;
                        }
                    }
                }
                self.expect_punct('}')?;
                OperandKind::Vector(v)
            }
            TokKind::Punct('(') if compound => {
                self.bump();
                let mut v = Vec::new();
                if !self.is_punct(')') {
                    loop {
                        v.push(self.operand(false)?);
                        if !self.eat_punct(',') {
                            break;
                        }
                    }
                }
                self.expect_punct(')')?;
                OperandKind::CallArgs(v)
            }
            TokKind::Punct('[') if compound => self.address()?,
            TokKind::Punct('!') => {
                self.bump();
                let (r, _) = self.expect_name()?;
                OperandKind::NegPred(r)
            }
            TokKind::Punct('-' | '~')
            | TokKind::Int { .. }
            | TokKind::F32(_)
            | TokKind::F64(_)
            | TokKind::DecFloat(_) => OperandKind::Imm(self.const_expr()?),
            TokKind::Ident if self.is_warp_sz() => OperandKind::Imm(self.const_expr()?),
            TokKind::Ident => self.name_operand(t)?,
            _ => return self.syntax_error(),
        };
        Ok(Operand {
            kind,
            span: start.to(self.prev_span()),
        })
    }

    /// An operand starting with a name at token `t`: the sink, a register
    /// (with its components), `generic(sym)`, `sym+N`, or a symbol.
    fn name_operand(&mut self, t: Token) -> PResult<OperandKind> {
        let mut name = Name::from(self.text_of(&t));
        self.bump();
        let kind = if name == "_" && self.is_punct('|') {
            // `_|p`: the predicate of a pair alone (`elect.sync _|p`).
            self.reg_or_pair(name)?
        } else if name == "_" {
            OperandKind::Sink
        } else if name.starts_with('%') {
            // Special-register and vector components: %tid.x,
            // %ctaid.y, %v.w (ptxas also takes `%tid .x`).
            while self.tok().kind == TokKind::Dotted && !is_directive_word(self.text()) {
                name.push_str(&component(self.text()));
                self.bump();
            }
            self.reg_or_pair(name)?
        } else if name == "generic" && self.is_punct('(') {
            self.bump();
            let (inner, _) = self.expect_ident()?;
            self.expect_punct(')')?;
            OperandKind::Symbol(compact_str::format_compact!("generic({inner})"))
        } else if self.is_reg_name(&name) {
            // A vector register's component: `mx.x`, `mx.r`.
            while self.tok().kind == TokKind::Dotted && is_component(self.text()) {
                name.push_str(&component(self.text()));
                self.bump();
            }
            self.reg_or_pair(name)?
        } else if (self.is_punct('+') || self.is_punct('-'))
            && matches!(self.nth(1).kind, TokKind::Int { .. } | TokKind::Punct('-'))
        {
            let neg = self.is_punct('-');
            self.bump();
            let off = self.int_term()?;
            OperandKind::SymOffset(name, if neg { off.wrapping_neg() } else { off })
        } else {
            OperandKind::Symbol(name)
        };
        Ok(kind)
    }

    fn reg_or_pair(&mut self, name: Name) -> PResult<OperandKind> {
        if self.eat_punct('|') {
            let (q, _) = self.expect_name()?;
            return Ok(OperandKind::PredPair(Box::new((name, q))));
        }
        Ok(OperandKind::Reg(name))
    }

    /// `[base]`, `[base+off]`, `[base+-off]`, `[off]`, `[a, {b, c}]`.
    fn address(&mut self) -> PResult<OperandKind> {
        self.bump();
        let mut base = None;
        let mut offset: i64 = 0;
        if self.is_ident() {
            let name = Name::from(self.text());
            self.bump();
            let b = if self.is_reg_name(&name) {
                AddrBase::Reg(name)
            } else {
                AddrBase::Symbol(name)
            };
            if self.is_punct(',') {
                // Tensor / texture form: [tmap, {c0, c1}] or [tex, smp, {..}].
                let first_span = self.prev_span();
                let first = match &b {
                    AddrBase::Reg(n) => OperandKind::Reg(n.clone()),
                    AddrBase::Symbol(n) => OperandKind::Symbol(n.clone()),
                };
                let mut v = vec![Operand {
                    kind: first,
                    span: first_span,
                }];
                while self.eat_punct(',') {
                    // No nested brackets: keeps recursion bounded.
                    if self.is_punct('[') {
                        return self.syntax_error();
                    }
                    v.push(self.operand(true)?);
                }
                self.expect_punct(']')?;
                return Ok(OperandKind::AddressList(v));
            }
            base = Some(b);
        } else {
            offset = self.int_term()?;
        }
        while self.is_punct('+') || self.is_punct('-') {
            let neg = self.is_punct('-');
            self.bump();
            let v = self.int_term()?;
            let v = if neg { v.checked_neg() } else { Some(v) };
            match v.and_then(|v| offset.checked_add(v)) {
                Some(o) => offset = o,
                None => {
                    self.error(self.prev_span(), "Constant overflow");
                }
            }
        }
        self.expect_punct(']')?;
        Ok(OperandKind::Address { base, offset })
    }

    /// `[-]* INT` as an i64 (used for address offsets and `sym+N`).
    fn int_term(&mut self) -> PResult<i64> {
        let span = self.span();
        match self.const_expr()? {
            Imm::Int(v) => Ok(v),
            Imm::UInt(v) => Ok(v as i64),
            _ => {
                // Floats are not valid offsets.
                self.fatal(span, "Parsing error near '.': syntax error");
                Err(())
            }
        }
    }

    /// Constant expression: unary `-`/`~` chains on a literal, then a sequence
    /// of `+`/`-` integer terms, folded (in 128-bit, then narrowed by
    /// [`fold_int`]; a `U` suffix anywhere makes the result unsigned).
    fn const_expr(&mut self) -> PResult<Imm> {
        let (mut acc, mut unsigned) = match self.unary_const()? {
            CVal::Int(v, u) => (v, u),
            CVal::Imm(f) => return Ok(f),
        };
        while (self.is_punct('+') || self.is_punct('-'))
            && (matches!(
                self.nth(1).kind,
                TokKind::Int { .. } | TokKind::Punct('-' | '~')
            ) || self.text_of(&self.nth(1)) == "WARP_SZ")
        {
            let neg = self.is_punct('-');
            self.bump();
            let (v, u) = match self.unary_const()? {
                CVal::Int(v, u) => (v, u),
                CVal::Imm(_) => return self.syntax_error(),
            };
            unsigned |= u;
            acc = if neg {
                acc.wrapping_sub(v)
            } else {
                acc.wrapping_add(v)
            };
            acc = acc.clamp(-(1i128 << 64), 1i128 << 64);
        }
        Ok(fold_int(acc, unsigned))
    }

    /// The token is `WARP_SZ`, the ISA's predefined constant (ptxas
    /// 13.0.88 takes it wherever an integer constant goes: `mov.u64`,
    /// `add.u32 d, a, WARP_SZ+1`, `[%rd1+WARP_SZ]`; as a destination it
    /// is "Result register required", in `mov.f32` "Arguments mismatch").
    fn is_warp_sz(&self) -> bool {
        self.tok().kind == TokKind::Ident && self.text() == "WARP_SZ"
    }

    fn unary_const(&mut self) -> PResult<CVal> {
        // Collect prefix operators iteratively (no recursion).
        let mut ops = Vec::new();
        while self.is_punct('-') || self.is_punct('~') {
            ops.push(self.is_punct('-'));
            self.bump();
        }
        let span = self.span();
        let mut v = match self.tok().kind {
            TokKind::Int {
                value,
                unsigned,
                overflow,
            } => {
                if overflow {
                    self.error(span, "Constant overflow");
                }
                CVal::Int(value as i128, unsigned)
            }
            TokKind::F32(b) => CVal::Imm(Imm::F32(b)),
            TokKind::F64(b) => CVal::Imm(Imm::F64(b)),
            TokKind::DecFloat(f) => CVal::Imm(Imm::F64(f.to_bits())),
            TokKind::Ident if self.is_warp_sz() => CVal::Int(WARP_SZ, false),
            _ => return self.syntax_error(),
        };
        self.bump();
        for neg in ops.into_iter().rev() {
            v = match (v, neg) {
                (CVal::Int(x, u), true) => CVal::Int(-x, u),
                (CVal::Int(x, u), false) => CVal::Int(!x, u),
                (CVal::Imm(Imm::F32(b)), true) => CVal::Imm(Imm::F32(b ^ 0x8000_0000)),
                (CVal::Imm(Imm::F64(b)), true) => CVal::Imm(Imm::F64(b ^ (1 << 63))),
                _ => {
                    self.fatal(span, "Parsing error near '~': syntax error");
                    return Err(());
                }
            };
        }
        Ok(v)
    }
}

/// Intermediate constant value while folding.
#[derive(Clone, Copy)]
enum CVal {
    /// Integer (value, has `U` suffix).
    Int(i128, bool),
    /// A float immediate (only unary minus applies).
    Imm(Imm),
}

fn is_reg_type(t: &str) -> bool {
    matches!(
        t,
        ".pred"
            | ".b8"
            | ".b16"
            | ".b32"
            | ".b64"
            | ".b128"
            | ".u8"
            | ".u16"
            | ".u32"
            | ".u64"
            | ".s8"
            | ".s16"
            | ".s32"
            | ".s64"
            | ".f16"
            | ".f16x2"
            | ".bf16"
            | ".bf16x2"
            | ".f32"
            | ".f64"
            | ".tf32"
            | ".e4m3"
            | ".e5m2"
            | ".e4m3x2"
            | ".e5m2x2"
            | ".u128"
            | ".s128"
    )
}

#[cfg(test)]
mod opcode_table_tests {
    #[test]
    fn opcodes_are_sorted_for_binary_search() {
        assert!(super::OPCODES.windows(2).all(|w| w[0] < w[1]));
    }
}
