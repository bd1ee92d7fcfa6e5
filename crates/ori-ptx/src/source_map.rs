//! The `.file` / `.loc` positions of a PTX text, as an
//! [`ori_ir::SourceMap`]: what lets a diagnostic on a PTX statement name the
//! user's Python or C++ line too.
//!
//! Built from the syntax tree, so `.loc` directives inside comments or
//! strings never count; a text that does not parse gives the positions of
//! what did.

use crate::ast::{Item, Module, Stmt};
use ori_ir::{Origin, SourceMap};

/// The source positions named in `src`.
pub fn build(file: &str, src: &str) -> SourceMap {
    if !src.contains(".loc") {
        return SourceMap::default();
    }
    let (module, _) = crate::parser::parse_with_diags(file, src);
    from_module(&module)
}

/// The source positions named in a parsed module.
pub fn from_module(m: &Module) -> SourceMap {
    locs_of(m).source_map()
}

/// The `.loc` directives of a parsed module.
pub fn locs_of(m: &Module) -> Locs {
    let mut locs = Locs::default();
    for item in &m.items {
        let Item::Function(f) = item else { continue };
        let Some(body) = &f.body else { continue };
        let mut found = Vec::new();
        collect(body, &mut found);
        locs.push_body(found, f.span.hi);
    }
    locs.files.clone_from(&m.files);
    locs
}

/// The `.loc` directives of a module's bodies as the parser read them,
/// with the module's `.file` table: the makings of a [`SourceMap`], made
/// only when asked for ([`Locs::source_map`]), since most compilations
/// show no diagnostic and never need it.
#[derive(Clone, Debug, Default)]
pub struct Locs {
    /// The `.file` table: number and name.
    pub(crate) files: Vec<(u32, String)>,
    /// Each body's `.loc`s, sorted by offset, with the offset its body
    /// ends at.
    bodies: Vec<(u32, Vec<RawLoc>)>,
}

impl Locs {
    /// Add one body's `.loc`s: the body ends at byte `until`.
    pub(crate) fn push_body(&mut self, mut locs: Vec<RawLoc>, until: u32) {
        if !locs.is_empty() {
            locs.sort_by_key(|l| l.at);
            self.bodies.push((until, locs));
        }
    }

    /// The source positions: what [`build`] finds in the text.
    pub fn source_map(&self) -> SourceMap {
        let mut map = SourceMap::default();
        for (until, locs) in &self.bodies {
            for l in locs {
                if let Some(origin) = origin_of(&self.files, l) {
                    map.push(l.at, *until, origin);
                }
            }
        }
        map
    }
}

/// One `.loc` as the parser read it: its byte offset and what it names
/// (file numbers of the module's `.file` table, resolved once the whole
/// module is read, since a `.file` may come after the body).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawLoc {
    at: u32,
    file: u32,
    line: u32,
    col: u32,
    inlined_at: Option<(u32, u32, u32)>,
}

/// Every `.loc` of `body` (nested scopes included), appended to `out`.
pub(crate) fn collect(body: &[Stmt], out: &mut Vec<RawLoc>) {
    for s in body {
        match s {
            Stmt::Loc {
                file,
                line,
                col,
                inlined_at,
                span,
                ..
            } => out.push(RawLoc {
                at: span.lo,
                file: *file,
                line: *line,
                col: *col,
                inlined_at: *inlined_at,
            }),
            Stmt::Scope { body, .. } => collect(body, out),
            _ => {}
        }
    }
}

/// A `.loc`'s position, where its file is in the `.file` table.
fn origin_of(files: &[(u32, String)], l: &RawLoc) -> Option<Origin> {
    let at = |f: u32, l: u32, c: u32| {
        let name = files.iter().find(|(n, _)| *n == f)?.1.clone();
        (l > 0).then(|| Origin {
            file: name,
            line: l,
            column: (c > 0).then_some(c),
            inlined_at: None,
        })
    };
    let mut origin = at(l.file, l.line, l.col)?;
    if let Some((f, line, c)) = l.inlined_at {
        origin.inlined_at = at(f, line, c).map(Box::new);
    }
    Some(origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#".version 8.5
.target sm_90a
.address_size 64
.file 1 "/home/u/k.py"
.file 2 "/home/u/lib.py"
.visible .entry k()
{
  .reg .b32 %r<3>;
  // .loc 1 99 0 (a comment: not a position)
  .loc 1 12 5
  mov.b32 %r1, 1;
  .loc 1 13 9
  .loc 2 40 0, function_name $L__info_string0, inlined_at 1 13 9
  add.s32 %r2, %r1, 1;
  ret;
}
.visible .entry j()
{
  ret;
}
.section .debug_str
{
$L__info_string0:
.b8 107, 0
}
"#;

    #[test]
    fn loc_and_inlined_at_name_the_source() {
        let map = build("k.ptx", PTX);
        let off = |needle: &str| PTX.find(needle).unwrap() as u32;
        let mov = map.origin_at(off("mov.b32")).unwrap();
        assert_eq!(
            (mov.file.as_str(), mov.line, mov.column),
            ("/home/u/k.py", 12, Some(5))
        );
        let add = map.origin_at(off("add.s32")).unwrap();
        assert_eq!(
            (add.file.as_str(), add.line, add.column),
            ("/home/u/lib.py", 40, None)
        );
        assert_eq!(add.outermost().line, 13);
        // Before the first .loc, and in a function without one: nothing.
        assert!(map.origin_at(off(".reg .b32")).is_none());
        let j = PTX.rfind("ret;").unwrap() as u32;
        assert!(map.origin_at(j).is_none());
    }

    #[test]
    fn text_without_loc_has_an_empty_map() {
        assert!(build("k.ptx", ".version 8.5\n.target sm_90a\n").is_empty());
    }
}
