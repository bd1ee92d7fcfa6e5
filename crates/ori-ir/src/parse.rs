//! Reader of the IR text form written by `write`.
//!
//! `ori compile x.ori` starts from this text, and the round-trip property
//! (`print(parse(print(f))) == print(f)`) keeps the printer honest: any fact
//! the printer shows must be one the IR really holds. The format is line
//! oriented; every error names its line and column.

use crate::entities::{AccumSet, Block, Inst};
use crate::function::NameMap;
use crate::function::{BlockData, FuncKind, Function, GmmaFacts, Module, Param, RegClass};
use crate::instructions::{AccumSets, AddrBase, Guard, Imm, InstData, Operand, Role, Slot};
use cranelift_entity::{EntityRef, SecondaryMap};
use smallvec::SmallVec;
use std::fmt;

/// A text-form syntax error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.col, self.message
        )
    }
}

impl std::error::Error for TextError {}

type R<T> = Result<T, TextError>;

struct Cx {
    line: u32,
}

impl Cx {
    fn err<T>(&self, col: usize, message: impl Into<String>) -> R<T> {
        Err(TextError {
            line: self.line,
            col: col as u32 + 1,
            message: message.into(),
        })
    }
}

/// Special registers recognised as operands (`%tid.x` and friends) in IR
/// text: a superset of the PTX front end's list (`ori_ptx::isa`), which is
/// exact.
pub fn is_special_register(name: &str) -> bool {
    let base = name.split('.').next().unwrap_or(name);
    matches!(
        base,
        "%tid"
            | "%ntid"
            | "%ctaid"
            | "%nctaid"
            | "%laneid"
            | "%warpid"
            | "%nwarpid"
            | "%smid"
            | "%nsmid"
            | "%gridid"
            | "%clock"
            | "%clock64"
            | "%globaltimer"
            | "%lanemask_eq"
            | "%lanemask_le"
            | "%lanemask_lt"
            | "%lanemask_ge"
            | "%lanemask_gt"
            | "%dynamic_smem_size"
            | "%total_smem_size"
            | "%cluster_ctaid"
            | "%cluster_nctaid"
            | "%cluster_ctarank"
            | "%cluster_nctarank"
            | "%clusterid"
            | "%nclusterid"
            | "%is_explicit_cluster"
            | "%aggr_smem_size"
            | "%envreg0"
            | "%pm0"
            | "%globaltimer_lo"
            | "%globaltimer_hi"
            | "%clock_hi"
            | "%current_graph_exec"
            | "%reserved_smem_offset_begin"
            | "%reserved_smem_offset_end"
            | "%reserved_smem_offset_cap"
    ) || name.starts_with("%envreg")
        || name.starts_with("%pm")
}

/// Parse an immediate as PTX writes it.
pub fn parse_imm(s: &str) -> Option<Imm> {
    let t = s.trim();
    if let Some(h) = t.strip_prefix("0f").or_else(|| t.strip_prefix("0F")) {
        return u32::from_str_radix(h, 16).ok().map(Imm::F32);
    }
    if let Some(h) = t.strip_prefix("0d").or_else(|| t.strip_prefix("0D")) {
        return u64::from_str_radix(h, 16).ok().map(Imm::F64);
    }
    let t2 = t.strip_suffix('U').unwrap_or(t);
    if let Some(h) = t2.strip_prefix("0x").or_else(|| t2.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().map(Imm::Hex);
    }
    if t2.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        return t2.parse::<i64>().ok().map(Imm::Int);
    }
    None
}

/// Split at top-level commas (outside `{}`, `()`, `[]`), with each piece's start column.
fn split_top(s: &str, base_col: usize) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (k, c) in s.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push((base_col + start, &s[start..k]));
                start = k + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() || !out.is_empty() {
        out.push((base_col + start, &s[start..]));
    }
    out
}

struct FnCx<'a> {
    f: &'a mut Function,
    blocks: NameMap<String, Block>,
}

impl FnCx<'_> {
    fn reg(&self, cx: &Cx, col: usize, name: &str) -> R<crate::entities::VReg> {
        match self.f.reg(name) {
            Some(r) => Ok(r),
            None => cx.err(col, format!("unknown register '{name}'")),
        }
    }

    fn operand(&self, cx: &Cx, col: usize, text: &str) -> R<Operand> {
        self.operand_nested(cx, col, text, 0)
    }

    /// An operand inside `depth` enclosing `{ }` / `( )`: PTX nests them at
    /// most twice (a vector inside call arguments), so a deeper nest is an
    /// error rather than a recursion as deep as the input.
    fn operand_nested(&self, cx: &Cx, col: usize, text: &str, depth: usize) -> R<Operand> {
        const MAX_NESTING: usize = 8;
        let lead = text.len() - text.trim_start().len();
        let col = col + lead;
        let t = text.trim();
        if t.is_empty() {
            return cx.err(col, "empty operand");
        }
        let nested = |inner: &str| -> R<Box<[Operand]>> {
            if depth >= MAX_NESTING {
                return cx.err(col, format!("operand nested more than {MAX_NESTING} deep"));
            }
            split_top(inner, col + 1)
                .iter()
                .map(|(c, p)| self.operand_nested(cx, *c, p, depth + 1))
                .collect()
        };
        if let Some(inner) = t.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
            return Ok(Operand::Vector(nested(inner)?));
        }
        if let Some(inner) = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            return Ok(Operand::Args(nested(inner)?));
        }
        if let Some(inner) = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            let (b, off) = match inner.find('+') {
                Some(p) => (&inner[..p], &inner[p + 1..]),
                None if parse_imm(inner).is_some() => ("", inner),
                None => (inner, "0"),
            };
            let offset = match parse_imm(off).and_then(Imm::as_i64) {
                Some(o) => o,
                None => return cx.err(col, format!("bad address offset '{off}'")),
            };
            let base = if b.is_empty() {
                AddrBase::None
            } else if let Some(r) = self.f.reg(b) {
                AddrBase::Reg(r)
            } else {
                AddrBase::Sym(b.into())
            };
            return Ok(Operand::Addr { base, offset });
        }
        if t == "_" {
            return Ok(Operand::Sink);
        }
        if let Some((a, b)) = t.split_once('|') {
            return Ok(Operand::PredPair(
                self.reg(cx, col, a)?,
                self.reg(cx, col, b)?,
            ));
        }
        if let Some(r) = t.strip_prefix('!') {
            return Ok(Operand::NotReg(self.reg(cx, col + 1, r)?));
        }
        if let Some(i) = parse_imm(t) {
            return Ok(Operand::Imm(i));
        }
        if let Some(r) = self.f.reg(t) {
            return Ok(Operand::Reg(r));
        }
        if is_special_register(t) {
            return Ok(Operand::Special(t.into()));
        }
        if let Some(b) = self.blocks.get(t) {
            return Ok(Operand::Block(*b));
        }
        if t.starts_with('%') {
            return cx.err(col, format!("unknown register '{t}'"));
        }
        Ok(Operand::Sym(t.into()))
    }

    fn inst(&self, cx: &Cx, line: &str, base_col: usize) -> R<InstData> {
        let mut cur = Cursor {
            rest: line,
            col: base_col,
        };
        let src_line = cur.source_line(cx)?;
        let guard = self.guard(cx, &mut cur)?;
        let accum = cur.trailing_accum(cx)?;
        let end = cur.rest.find(' ').unwrap_or(cur.rest.len());
        let mnemonic = &cur.rest[..end];
        if mnemonic.is_empty() {
            return cx.err(cur.col, "expected a mnemonic");
        }
        let mut parts = mnemonic.split('.');
        let name = parts.next().unwrap_or_default();
        let mods: SmallVec<[&str; 8]> = parts.collect();
        let mut data = InstData::new(name, &mods, [], src_line);
        data.guard = guard;
        data.accum = accum;
        for (c, piece) in split_top(&cur.rest[end..], cur.col + end) {
            data.slots.push(self.slot(cx, c, piece)?);
        }
        if data.opcode.is_branch() && data.branch_targets().is_empty() {
            return cx.err(cur.col, "branch without a known block target");
        }
        Ok(data)
    }

    /// `@P` or `@!P` before the mnemonic, if present.
    fn guard(&self, cx: &Cx, cur: &mut Cursor) -> R<Option<Guard>> {
        let Some(g) = cur.rest.strip_prefix('@') else {
            return Ok(None);
        };
        let end = g.find(' ').unwrap_or(g.len());
        let (negated, name) = match g[..end].strip_prefix('!') {
            Some(n) => (true, n),
            None => (false, &g[..end]),
        };
        let reg = self.reg(cx, cur.col + 1, name)?;
        cur.advance(end + 1);
        Ok(Some(Guard { reg, negated }))
    }

    /// One operand slot: `[out |inout ]OPERAND[ !fFLAGS]`, at column `c`.
    fn slot(&self, cx: &Cx, c: usize, piece: &str) -> R<Slot> {
        let lead = piece.len() - piece.trim_start().len();
        let mut p = piece.trim();
        let mut c = c + lead;
        let mut role = Role::Use;
        if let Some(x) = p.strip_prefix("out ") {
            role = Role::Def;
            p = x;
            c += 4;
        } else if let Some(x) = p.strip_prefix("inout ") {
            role = Role::DefUse;
            p = x;
            c += 6;
        }
        let mut flags = 0u8;
        if let Some(pos) = p.rfind(" !f") {
            flags = match p[pos + 3..].parse() {
                Ok(v) => v,
                Err(_) => return cx.err(c + pos + 3, "bad operand flags"),
            };
            p = &p[..pos];
        }
        let op = self.operand(cx, c, p)?;
        Ok(Slot { op, role, flags })
    }
}

/// The unread rest of an instruction line and the column it starts at.
struct Cursor<'a> {
    rest: &'a str,
    col: usize,
}

impl Cursor<'_> {
    /// Skip `n` bytes and the blanks after them.
    fn advance(&mut self, n: usize) {
        let after = &self.rest[n..];
        let t = after.trim_start();
        self.col += n + (after.len() - t.len());
        self.rest = t;
    }

    /// The leading `#LINE`: the instruction's source line.
    fn source_line(&mut self, cx: &Cx) -> R<u32> {
        let Some(r) = self.rest.strip_prefix('#') else {
            return cx.err(self.col, "expected '#LINE'");
        };
        let end = r.find(' ').unwrap_or(r.len());
        let Ok(v) = r[..end].parse() else {
            return cx.err(self.col + 1, "bad source line number");
        };
        self.advance(end + 1);
        Ok(v)
    }

    /// The trailing ` !acc 0xSRC 0xDST`, if present, cut off the line.
    fn trailing_accum(&mut self, cx: &Cx) -> R<Option<AccumSets>> {
        let Some(p) = self.rest.find(" !acc ") else {
            return Ok(None);
        };
        let col = self.col + p + 6;
        let words: SmallVec<[&str; 2]> = self.rest[p + 6..].split_whitespace().collect();
        let parse = |w: &str| {
            w.strip_prefix("0x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
        };
        let (Some(src), Some(dst), 2) = (
            words.first().and_then(|w| parse(w)),
            words.get(1).and_then(|w| parse(w)),
            words.len(),
        ) else {
            return cx.err(col, "expected '!acc 0xSRC 0xDST'");
        };
        let Some(sets) = AccumSets::from_words(src, dst) else {
            return cx.err(
                col,
                "'!acc' words must be 0x9....... (set read) and 0x1....... (set written)",
            );
        };
        self.rest = &self.rest[..p];
        Ok(Some(sets))
    }
}

fn unquote(cx: &Cx, col: usize, s: &str) -> R<String> {
    let t = s.trim();
    let Some(inner) = t.strip_prefix('"').and_then(|x| x.strip_suffix('"')) else {
        return cx.err(col, "expected a quoted string");
    };
    // One pass, as `write.rs`'s `quote` escapes: `\\` and `\"` only.
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('\\' | '"')) => out.push(e),
                _ => {
                    return cx.err(
                        col,
                        "unknown escape in a quoted string (only \\\\ and \\\")",
                    )
                }
            },
            '"' => return cx.err(col, "unescaped '\"' inside a quoted string"),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Parse a module written by `write_module`.
pub fn parse_module(text: &str) -> Result<Module, TextError> {
    parse_module_with_lines(text).map(|(m, _)| m)
}

/// Parse a module and verify every function (the verifier's rules, each
/// error at the line of the text where the offending instruction or function
/// stands): the IR text is an input like PTX, and a malformed one must be
/// an input error, not an internal error after a pass.
pub fn parse_module_verified(text: &str) -> Result<Module, Vec<TextError>> {
    let (m, lines) = parse_module_with_lines(text).map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    for (fid, f) in m.funcs.iter() {
        let (header, inst_lines) = &lines[fid.index()];
        for e in crate::verify::verify_function(f) {
            let line = e.inst.map_or(*header, |i| inst_lines[i]);
            errs.push(TextError {
                line,
                col: 1,
                message: format!("invalid IR in function '{}': {}", f.name, e.message),
            });
        }
    }
    if errs.is_empty() {
        Ok(m)
    } else {
        Err(errs)
    }
}

/// Per function (in order): the text line of its header and of each instruction.
type TextLines = Vec<(u32, SecondaryMap<Inst, u32>)>;

fn parse_module_with_lines(text: &str) -> Result<(Module, TextLines), TextError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut text_lines = TextLines::new();
    let mut m = Module::default();
    let mut k = 0;
    let mut saw_header = false;
    while k < lines.len() {
        let cx = Cx { line: k as u32 + 1 };
        let raw = lines[k];
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') {
            k += 1;
            continue;
        }
        if let Some(rest) = l.strip_prefix("module ") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            let mut j = 0;
            while j < w.len() {
                match w[j] {
                    "version" => {
                        let v = w.get(j + 1).copied().unwrap_or("");
                        let (a, b) = v.split_once('.').unwrap_or((v, "0"));
                        match (a.parse(), b.parse()) {
                            (Ok(a), Ok(b)) => m.version = (a, b),
                            _ => return cx.err(0, format!("bad version '{v}'")),
                        }
                        j += 2;
                    }
                    "target" => {
                        j += 1;
                        while j < w.len() && w[j] != "address_size" {
                            m.target.push(w[j].into());
                            j += 1;
                        }
                    }
                    "address_size" => {
                        m.address_size = match w.get(j + 1).and_then(|x| x.parse().ok()) {
                            Some(v) => v,
                            None => return cx.err(0, "bad address_size"),
                        };
                        j += 2;
                    }
                    other => return cx.err(0, format!("unexpected '{other}' in module header")),
                }
            }
            saw_header = true;
            k += 1;
        } else if let Some(rest) = l.strip_prefix("global ") {
            m.globals.push(unquote(&cx, 7, rest)?.into());
            k += 1;
        } else if l.starts_with("function ") {
            let (f, inst_lines, next) = parse_function(&lines, k)?;
            let twice = m
                .by_name
                .get(&f.name)
                .is_some_and(|id| m.funcs[*id].has_body || !f.has_body);
            if twice {
                return cx.err(0, format!("function '{}' written twice", f.name));
            }
            let id = m.add_function(f).index();
            let entry = (k as u32 + 1, inst_lines);
            match text_lines.get_mut(id) {
                Some(slot) => *slot = entry,
                None => text_lines.push(entry),
            }
            k = next;
        } else {
            return cx.err(0, format!("unexpected line '{l}'"));
        }
    }
    if !saw_header {
        return Err(TextError {
            line: 1,
            col: 1,
            message: "missing 'module' header".into(),
        });
    }
    Ok((m, text_lines))
}

fn parse_function(lines: &[&str], start: usize) -> R<(Function, SecondaryMap<Inst, u32>, usize)> {
    let mut inst_lines = SecondaryMap::new();
    let cx = Cx {
        line: start as u32 + 1,
    };
    let mut f = function_header(&cx, lines[start].trim())?;
    let (end, block_names) = block_labels(&cx, lines, start)?;
    let mut fcx = FnCx {
        f: &mut f,
        blocks: NameMap::default(),
    };
    for n in &block_names {
        let label = if n.starts_with("bb") && n[2..].parse::<u32>().is_ok() {
            None
        } else {
            Some(n.as_str())
        };
        let b = fcx.f.blocks.push(BlockData {
            label: label.map(Into::into),
            nounroll: false,
        });
        fcx.f.layout.append_block(b);
        fcx.blocks.insert(n.clone(), b);
    }
    let mut facts: Option<GmmaFacts> = None;
    let mut cur: Option<Block> = None;
    let mut bi = 0;
    for (k, raw) in lines.iter().enumerate().take(end).skip(start + 1) {
        let cx = Cx { line: k as u32 + 1 };
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        if indent == 0 {
            // Block headers were collected above as the unindented lines
            // with a `:`; anything else unindented is out of place.
            if !raw.contains(':') {
                return cx.err(
                    0,
                    "expected a block label ('NAME:') or an indented instruction",
                );
            }
            let b = fcx.blocks[&block_names[bi]];
            bi += 1;
            cur = Some(b);
            block_header(&cx, fcx.f, &mut facts, b, l)?;
            continue;
        }
        if cur.is_none() && declaration(&cx, &mut fcx, &mut facts, l, indent)? {
            continue;
        }
        let Some(b) = cur else {
            return cx.err(indent, "instruction outside a block");
        };
        if !fcx.f.has_body {
            return cx.err(indent, "a function marked 'nobody' has instructions");
        }
        let data = fcx.inst(&cx, l, indent)?;
        let i = fcx.f.append_inst(b, data);
        inst_lines[i] = cx.line;
    }
    f.gmma = facts;
    Ok((f, inst_lines, end + 1))
}

/// `function NAME entry|func [linkage L] [nobody] [maxnreg N] [maxntid|reqntid|
/// minnctapersm N[,N[,N]]]... [serialized CNNNN [shared-accumulators]] [line N] {`
fn function_header(cx: &Cx, head: &str) -> R<Function> {
    let Some(head) = head.strip_suffix('{') else {
        return cx.err(head.len(), "expected '{'");
    };
    let w: Vec<&str> = head.split_whitespace().collect();
    let (Some(name), Some(kind)) = (w.get(1), w.get(2)) else {
        return cx.err(0, "expected 'function NAME entry|func'");
    };
    let kind = match *kind {
        "entry" => FuncKind::Entry,
        "func" => FuncKind::Func,
        o => return cx.err(0, format!("unknown function kind '{o}'")),
    };
    let mut f = Function::new(name, kind);
    let mut j = 3;
    while j < w.len() {
        match w[j] {
            "linkage" => {
                f.linkage = w.get(j + 1).map(|s| (*s).into());
                j += 2;
            }
            "nobody" => {
                f.has_body = false;
                j += 1;
            }
            "maxnreg" => {
                f.max_regs = match w.get(j + 1).and_then(|x| x.parse().ok()) {
                    Some(n) => Some(n),
                    None => return cx.err(0, "expected 'maxnreg N'"),
                };
                j += 2;
            }
            "maxntid" | "reqntid" | "minnctapersm" => {
                let values = w.get(j + 1).map(|v| v.split(',').map(str::parse).collect());
                f.launch_bounds.push(match values {
                    Some(Ok(values)) => (w[j].into(), values),
                    _ => return cx.err(0, format!("expected '{} N[,N[,N]]'", w[j])),
                });
                j += 2;
            }
            "serialized" => {
                // `serialized C7511`: one of ptxas's ten reasons.
                let Some(code) = w
                    .get(j + 1)
                    .and_then(|c| c.strip_prefix('C'))
                    .and_then(|c| c.parse().ok())
                    .and_then(crate::SerializationCode::from_code)
                else {
                    return cx.err(
                        0,
                        "expected 'serialized CNNNN' with a serialization code (C7509-C7516, C7518, C7520)",
                    );
                };
                j += 2;
                let shared = w.get(j) == Some(&"shared-accumulators");
                j += usize::from(shared);
                f.serialized = Some(crate::function::Serialization {
                    code,
                    shared_accumulators: shared,
                });
            }
            "line" => {
                f.line = w.get(j + 1).and_then(|x| x.parse().ok()).unwrap_or(0);
                j += 2;
            }
            o => return cx.err(0, format!("unexpected '{o}' in function header")),
        }
    }
    Ok(f)
}

/// The line of the function's closing `}`, and its block labels in order
/// (the unindented lines with a `:`), so that branches can refer forward.
fn block_labels(cx: &Cx, lines: &[&str], start: usize) -> R<(usize, Vec<String>)> {
    let mut end = start + 1;
    let mut names = Vec::new();
    while end < lines.len() && lines[end].trim() != "}" {
        let t = lines[end];
        if !t.starts_with(char::is_whitespace) && t.contains(':') {
            names.push(t.split(':').next().unwrap_or("").trim().to_string());
        }
        end += 1;
    }
    if end >= lines.len() {
        return cx.err(0, "function is not closed by '}'");
    }
    Ok((end, names))
}

/// What follows a block's label: `nounroll`, and `inflight {SETS}` (phase
/// 85's facts at the block's entry, by set index).
fn block_header(
    cx: &Cx,
    f: &mut Function,
    facts: &mut Option<GmmaFacts>,
    b: Block,
    l: &str,
) -> R<()> {
    let after_label = l.split_once(':').map_or("", |(_, r)| r);
    f.blocks[b].nounroll = after_label.split_whitespace().next() == Some("nounroll");
    if let Some(p) = l.find("inflight {") {
        let inner = l[p + 10..].trim_end_matches('}');
        let mut v = SmallVec::new();
        for s in inner.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let sets = facts.as_ref().map_or(0, |f| f.sets.len());
            match s.parse::<u32>() {
                Ok(x) if (x as usize) < sets => v.push(AccumSet::from_u32(x)),
                Ok(_) => return cx.err(p, format!("set index '{s}' names no accset")),
                Err(_) => return cx.err(p, format!("bad set index '{s}'")),
            }
        }
        facts
            .get_or_insert_with(GmmaFacts::default)
            .in_flight_at_entry[b] = v;
    }
    Ok(())
}

/// A declaration before the first block (`param`, `retparam`, `reg`,
/// `maxactive`, `accset`); `false` when the line is none of them.
fn declaration(
    cx: &Cx,
    fcx: &mut FnCx<'_>,
    facts: &mut Option<GmmaFacts>,
    l: &str,
    indent: usize,
) -> R<bool> {
    let w: Vec<&str> = l.split_whitespace().collect();
    match w[0] {
        "param" | "retparam" => {
            let ty_start = l.find('"').unwrap_or(l.len());
            // `param NAME "TYPE"`: exactly one name before the quoted type,
            // so that the line prints back as it was read.
            let head: Vec<&str> = l[..ty_start].split_whitespace().collect();
            let spaced = l[..ty_start].ends_with(char::is_whitespace);
            let name = match head.as_slice() {
                [_, name] if spaced => *name,
                _ => return cx.err(indent, format!("expected '{} NAME \"TYPE\"'", w[0])),
            };
            let ty = unquote(cx, indent + ty_start, &l[ty_start..])?;
            let p = Param {
                name: name.into(),
                ty: ty.into(),
            };
            if w[0] == "param" {
                fcx.f.params.push(p)
            } else {
                fcx.f.ret_params.push(p)
            }
        }
        "reg" => {
            if w.len() != 5 || w[3] != "class" {
                return cx.err(indent, "expected 'reg NAME TYPE class N'");
            }
            let class = match w[4].parse().ok().and_then(RegClass::from_number) {
                Some(c) => c,
                None => return cx.err(indent, format!("unknown register class '{}'", w[4])),
            };
            if fcx.f.reg(w[1]).is_some() {
                return cx.err(indent, format!("register '{}' declared twice", w[1]));
            }
            fcx.f.declare_reg(w[1], w[2], class);
        }
        "maxactive" => {
            facts.get_or_insert_with(GmmaFacts::default).max_active =
                w.get(1).and_then(|x| x.parse().ok()).unwrap_or(0);
        }
        "accset" => {
            let inner = l
                .split_once('{')
                .map(|x| x.1.trim_end_matches('}'))
                .unwrap_or("");
            let mut set: SmallVec<[crate::VReg; 8]> = SmallVec::new();
            for n in inner.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                set.push(fcx.reg(cx, indent, n)?);
            }
            facts.get_or_insert_with(GmmaFacts::default).sets.push(&set);
        }
        _ => return Ok(false),
    }
    Ok(true)
}
