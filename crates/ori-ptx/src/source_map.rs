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
    let mut map = SourceMap::default();
    for item in &m.items {
        let Item::Function(f) = item else { continue };
        let Some(body) = &f.body else { continue };
        let mut locs = Vec::new();
        collect(body, &mut locs);
        locs.sort_by_key(|(at, _)| *at);
        for (at, stmt) in locs {
            if let Some(origin) = origin_of(m, stmt) {
                map.push(at, f.span.hi, origin);
            }
        }
    }
    map
}

/// Every `.loc` of a body, nested scopes included, with its offset.
fn collect<'a>(body: &'a [Stmt], out: &mut Vec<(u32, &'a Stmt)>) {
    for s in body {
        match s {
            Stmt::Loc { span, .. } => out.push((span.lo, s)),
            Stmt::Scope { body, .. } => collect(body, out),
            _ => {}
        }
    }
}

/// A `.loc`'s position, where its file is in the `.file` table.
fn origin_of(m: &Module, stmt: &Stmt) -> Option<Origin> {
    let Stmt::Loc {
        file,
        line,
        col,
        inlined_at,
        ..
    } = stmt
    else {
        return None;
    };
    let at = |f: u32, l: u32, c: u32| {
        let name = m.files.iter().find(|(n, _)| *n == f)?.1.clone();
        (l > 0).then(|| Origin {
            file: name,
            line: l,
            column: (c > 0).then_some(c),
            inlined_at: None,
        })
    };
    let mut origin = at(*file, *line, *col)?;
    if let Some((f, l, c)) = inlined_at {
        origin.inlined_at = at(*f, *l, *c).map(Box::new);
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
