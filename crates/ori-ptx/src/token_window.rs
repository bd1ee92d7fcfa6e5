//! The parser's view of the token stream: a window over a [`Lexer`],
//! addressed by absolute token index.
//!
//! The parser looks a few tokens ahead and, when it recovers from an error,
//! back to the start of the statement; nothing older. So tokens are lexed
//! when first asked for and dropped when the parser starts a new statement
//! ([`TokWindow::release_before`]), which keeps the front end's memory
//! proportional to the longest statement, not to the file. Both happen in
//! batches: the lexer runs [`LEX_AHEAD`] tokens ahead of the parser's
//! request (one call of the lexer per token was a sixth of the parser's
//! instructions, in calls alone), and released tokens are dropped once
//! [`RELEASE_BATCH`] of them gathered (moving the read-ahead tokens down
//! at every statement would undo that).

use crate::lexer::{Lexer, TokKind, Token};

/// How many tokens past the one asked for the window lexes at once.
const LEX_AHEAD: usize = 16;

/// How many released tokens the window keeps before it drops them.
const RELEASE_BATCH: usize = 512;

/// Tokens `base..base + buf.len()` of the stream, lexed on demand.
pub(crate) struct TokWindow<'a> {
    lexer: Lexer<'a>,
    /// Absolute index of `buf[0]`.
    base: usize,
    /// A plain vector, not a ring: the window holds one statement's tokens,
    /// so dropping the front is a short move, and a lookup (several per
    /// token, the parser's hottest path) is one bounds check.
    buf: Vec<Token>,
    /// The end-of-file token, once lexed; every index past it reads it.
    eof: Option<Token>,
}

impl<'a> TokWindow<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        TokWindow {
            lexer: Lexer::new(src),
            base: 0,
            buf: Vec::new(),
            eof: None,
        }
    }

    /// Token `i` of the stream (the end-of-file token past the end).
    #[inline]
    pub(crate) fn get(&mut self, i: usize) -> Token {
        match self.buf.get(i.wrapping_sub(self.base)) {
            Some(t) => *t,
            None => self.get_slow(i),
        }
    }

    /// [`TokWindow::get`] for a token not lexed yet (or released): lex up
    /// to it.
    #[inline(never)]
    fn get_slow(&mut self, i: usize) -> Token {
        let ahead = i.saturating_add(LEX_AHEAD);
        while self.base + self.buf.len() <= ahead && self.eof.is_none() {
            let t = self.lexer.next_token();
            if t.kind == TokKind::Eof {
                self.eof = Some(t);
            } else {
                self.buf.push(t);
            }
        }
        match i.checked_sub(self.base).and_then(|k| self.buf.get(k)) {
            Some(t) => *t,
            None => self.eof.unwrap_or(Token {
                kind: TokKind::Eof,
                span: Default::default(),
                ws_before: false,
            }),
        }
    }

    /// The integer elements `N ,` that follow token `i` (a list's `{` or
    /// `,`), read by [`Lexer::int_elements`] with no token each and
    /// appended to `out`; the token after `i` is then the first element
    /// not taken. Only when the tokens after `i` begin with `N ,` (a list
    /// of other values is left to the tokens): those lexed past `i` are
    /// dropped, and lexed again after the elements.
    pub(crate) fn int_elements_after(&mut self, i: usize, out: &mut Vec<crate::ast::Imm>) {
        let Some(k) = i.checked_sub(self.base) else {
            return;
        };
        let int = |t: Option<&Token>| matches!(t.map(|t| t.kind), Some(TokKind::Int { .. }));
        let comma = |t: Option<&Token>| matches!(t.map(|t| t.kind), Some(TokKind::Punct(',')));
        let (Some(&t), next) = (self.buf.get(k), self.buf.get(k + 1)) else {
            return;
        };
        // Past the lexed tokens, the source decides alone.
        if next.is_some() && !(int(next) && (comma(self.buf.get(k + 2)) || k + 2 >= self.buf.len()))
        {
            return;
        }
        self.buf.truncate(k + 1);
        self.eof = None;
        self.lexer.resume_after(t);
        self.lexer.int_elements(out);
    }

    /// Forgets the tokens before index `i`: the parser will not go back
    /// that far (they are dropped [`RELEASE_BATCH`] at a time).
    pub(crate) fn release_before(&mut self, i: usize) {
        let n = i.saturating_sub(self.base).min(self.buf.len());
        if n >= RELEASE_BATCH {
            self.buf.drain(..n);
            self.base += n;
        }
    }

    /// Whether the lexer has reported an error (an unterminated comment,
    /// known once the end of file is reached).
    pub(crate) fn has_lex_errors(&self) -> bool {
        !self.lexer.errors.is_empty()
    }

    /// The lexer's errors, taken out.
    pub(crate) fn take_lex_errors(&mut self) -> Vec<crate::lexer::LexError> {
        std::mem::take(&mut self.lexer.errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_reads_like_the_whole_stream() {
        let src = "add.s32 %r1, %r2, 3; // c\n ret;";
        let all = crate::lexer::lex(src).tokens;
        let mut w = TokWindow::new(src);
        for (i, t) in all.iter().enumerate() {
            assert_eq!(w.get(i), *t);
            if i % 3 == 0 {
                w.release_before(i);
            }
        }
        assert_eq!(w.get(all.len() + 5).kind, TokKind::Eof);
        w.release_before(1000);
        assert_eq!(w.get(all.len()).kind, TokKind::Eof);
    }

    /// However long the stream, the window holds at most a batch of
    /// released tokens, the statement and the read-ahead.
    #[test]
    fn window_stays_bounded() {
        let src = "add.s32 %r1, %r2, 3;\n".repeat(2000);
        let all = crate::lexer::lex(&src).tokens;
        let mut w = TokWindow::new(&src);
        for (i, t) in all.iter().enumerate() {
            assert_eq!(w.get(i), *t);
            if t.kind == TokKind::Punct(';') {
                w.release_before(i + 1);
            }
            assert!(
                w.buf.len() <= RELEASE_BATCH + LEX_AHEAD + 8,
                "{}",
                w.buf.len()
            );
        }
    }
}
