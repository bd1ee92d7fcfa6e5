//! A source file with its line starts indexed, for byte-offset to line and
//! column conversions.

/// A source file: its path as the user named it, its text, and where each
/// line starts.
pub struct Source<'a> {
    /// The path shown in diagnostics.
    pub path: &'a str,
    /// The whole text.
    pub text: &'a str,
    line_starts: Vec<u32>,
    /// The user's source positions named by the text's `.loc` directives.
    origins: ori_ir::SourceMap,
}

/// Push the start of every line after the first of `bytes` (one past each
/// newline) onto `out`. With SSE2 on x86_64 (every x86_64 processor has
/// it): memchr's generic entry point asks the processor for AVX2 on its
/// first call, and each `cpuid` of that traps to the hypervisor in a
/// virtual machine, a cost a small kernel's diagnostics would feel.
fn push_line_starts(out: &mut Vec<u32>, bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(sse2) = memchr::arch::x86_64::sse2::memchr::One::new(b'\n') {
        out.extend(sse2.iter(bytes).map(|k| k as u32 + 1));
        return;
    }
    out.extend(memchr::memchr_iter(b'\n', bytes).map(|k| k as u32 + 1));
}

impl<'a> Source<'a> {
    /// Index `text`'s lines.
    pub fn new(path: &'a str, text: &'a str) -> Self {
        let mut line_starts = vec![0u32];
        push_line_starts(&mut line_starts, text.as_bytes());
        Source {
            path,
            text,
            line_starts,
            origins: ori_ir::SourceMap::default(),
        }
    }

    /// The same source, with the positions its `.loc` directives name
    /// (`ori_ptx::source_map::build`).
    pub fn with_origins(mut self, origins: ori_ir::SourceMap) -> Self {
        self.origins = origins;
        self
    }

    /// The user's source position of the statement a note points at, where
    /// the PTX names one.
    pub fn origin_of(&self, n: &ori_ir::Note) -> Option<&ori_ir::Origin> {
        self.origins.origin_at(n.span?.0)
    }

    /// Number of lines.
    pub fn lines(&self) -> usize {
        self.line_starts.len()
    }

    /// The 1-based line holding byte `offset`.
    pub fn line_of(&self, offset: u32) -> usize {
        self.line_starts.partition_point(|&s| s <= offset)
    }

    /// Byte range `[lo, hi)` of 1-based `line`, without its line break.
    pub fn line_range(&self, line: usize) -> Option<(u32, u32)> {
        let lo = *self.line_starts.get(line.checked_sub(1)?)?;
        let hi = self
            .line_starts
            .get(line)
            .map_or(self.text.len() as u32, |&s| s - 1);
        let hi = if hi > lo && self.text.as_bytes()[hi as usize - 1] == b'\r' {
            hi - 1
        } else {
            hi
        };
        Some((lo, hi))
    }

    /// The 1-based character column of byte `offset` on its line.
    pub fn column_of(&self, offset: u32) -> usize {
        let start = self.line_starts[self.line_of(offset) - 1] as usize;
        let end = (offset as usize).min(self.text.len());
        self.text
            .get(start..end)
            .map_or(end - start, |s| s.chars().count())
            + 1
    }

    /// The byte offset of 1-based `line` and character `col`, clamped to the line.
    pub fn offset_of(&self, line: usize, col: usize) -> Option<u32> {
        let (lo, hi) = self.line_range(line)?;
        let text = &self.text[lo as usize..hi as usize];
        let skip = text
            .char_indices()
            .nth(col.saturating_sub(1))
            .map_or(text.len(), |(k, _)| k);
        Some(lo + skip as u32)
    }

    /// The range of line `line` without its leading and trailing blanks.
    pub fn trimmed_line(&self, line: usize) -> Option<(u32, u32)> {
        let (lo, hi) = self.line_range(line)?;
        let text = &self.text[lo as usize..hi as usize];
        let start = text.len() - text.trim_start().len();
        let end = text.trim_end().len();
        (start < end).then(|| (lo + start as u32, lo + end as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line index of a text longer than a vector's width matches a
    /// byte loop's.
    #[test]
    fn long_texts_index_every_line() {
        let text: String = (0..300).map(|k| "x".repeat(k % 37) + "\n").collect();
        let s = Source::new("k.ptx", &text);
        assert_eq!(s.lines(), 301);
        let mut start = 0u32;
        for (k, line) in text.split('\n').enumerate() {
            assert_eq!(s.line_of(start), k + 1);
            assert_eq!(
                s.line_range(k + 1),
                Some((start, start + line.len() as u32))
            );
            start += line.len() as u32 + 1;
        }
    }

    #[test]
    fn lines_and_columns() {
        let s = Source::new("k.ptx", "ab\n\tcé d\r\n\nx");
        assert_eq!(s.lines(), 4);
        assert_eq!(s.line_of(0), 1);
        assert_eq!(s.line_of(2), 1);
        assert_eq!(s.line_of(3), 2);
        assert_eq!(s.line_range(2), Some((3, 9)));
        assert_eq!(s.line_range(3), Some((11, 11)));
        assert_eq!(s.line_range(4), Some((12, 13)));
        assert_eq!(s.line_range(5), None);
        // `é` is two bytes and one column.
        assert_eq!(s.column_of(7), 4);
        assert_eq!(s.offset_of(2, 4), Some(7));
        assert_eq!(s.offset_of(2, 99), Some(9));
        assert_eq!(s.trimmed_line(2), Some((4, 9)));
        assert_eq!(s.trimmed_line(3), None);
    }
}
