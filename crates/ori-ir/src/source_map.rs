//! Where a PTX statement came from in the user's source.
//!
//! Code generators name the source they compiled in the PTX itself: a
//! `.file N "name"` table at module scope and `.loc N LINE COL` directives
//! before the instructions each source line produced (Triton's Python lines,
//! nvcc's C++ lines under `-lineinfo`), with `inlined_at` for code inlined
//! from a callee. A [`SourceMap`] holds those positions by byte offset of
//! the PTX text, so a diagnostic's culprit (which carries its statement's
//! byte range) can name the user's file and line as well as the PTX line.
//! It is data only: the front end builds it, the renderers read it.

/// A position in the user's source, as a `.loc` names it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Origin {
    /// The file's name from the `.file` table (as the code generator wrote
    /// it: absolute, or relative to where it ran).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// Column; `None` where the `.loc` says 0 (unknown).
    pub column: Option<u32>,
    /// For code inlined from a callee: the call site it was inlined at.
    pub inlined_at: Option<Box<Origin>>,
}

impl Origin {
    /// The outermost call site: the line of the function the user compiled
    /// (the kernel), through every `inlined_at`.
    pub fn outermost(&self) -> &Origin {
        let mut o = self;
        while let Some(next) = &o.inlined_at {
            o = next;
        }
        o
    }
}

/// One `.loc`: from its byte offset to the end of its function (or the
/// next `.loc`), statements come from `origin`.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Entry {
    /// Byte offset of the `.loc` directive.
    at: u32,
    /// Byte offset where its function's body ends: a `.loc` never reaches
    /// into the next function.
    until: u32,
    origin: Origin,
}

/// The `.loc` positions of a PTX text, sorted by offset.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct SourceMap {
    entries: Vec<Entry>,
}

impl SourceMap {
    /// Record that from byte `at` up to `until` (the end of the enclosing
    /// function) the statements come from `origin`. Calls must come in
    /// increasing order of `at`.
    pub fn push(&mut self, at: u32, until: u32, origin: Origin) {
        debug_assert!(self.entries.last().is_none_or(|e| e.at <= at));
        self.entries.push(Entry { at, until, origin });
    }

    /// Whether the text named no source positions.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The source position of the statement starting at byte `offset`: the
    /// last `.loc` before it in the same function.
    pub fn origin_at(&self, offset: u32) -> Option<&Origin> {
        let k = self.entries.partition_point(|e| e.at <= offset);
        let e = self.entries.get(k.checked_sub(1)?)?;
        (offset < e.until).then_some(&e.origin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: u32) -> Origin {
        Origin {
            file: file.into(),
            line,
            column: None,
            inlined_at: None,
        }
    }

    #[test]
    fn a_statement_takes_the_last_loc_before_it_in_its_function() {
        let mut m = SourceMap::default();
        m.push(10, 100, at("k.py", 3));
        m.push(40, 100, at("k.py", 7));
        m.push(120, 200, at("k.py", 20));
        assert_eq!(m.origin_at(5), None);
        assert_eq!(m.origin_at(10).map(|o| o.line), Some(3));
        assert_eq!(m.origin_at(39).map(|o| o.line), Some(3));
        assert_eq!(m.origin_at(99).map(|o| o.line), Some(7));
        // Between two functions: the first's last .loc does not reach.
        assert_eq!(m.origin_at(110), None);
        assert_eq!(m.origin_at(150).map(|o| o.line), Some(20));
    }

    #[test]
    fn the_outermost_call_site_is_the_kernels_line() {
        let mut o = at("lib.py", 5);
        o.inlined_at = Some(Box::new(Origin {
            inlined_at: Some(Box::new(at("k.py", 30))),
            ..at("mid.py", 9)
        }));
        assert_eq!(o.outermost().line, 30);
        assert_eq!(o.outermost().file, "k.py");
    }
}
