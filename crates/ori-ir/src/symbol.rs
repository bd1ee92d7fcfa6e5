//! Interned strings: a mnemonic, a modifier or a symbol name is a `u32`.
//!
//! An instruction used to own its mnemonic and each dotted modifier as a heap
//! string: five or six allocations per instruction, about 200 of its 1,400
//! bytes on a kernel of a million instructions, and most of the allocator's
//! time. A [`Symbol`] is an index into one process-wide table instead, so an
//! instruction's modifiers are a few inline `u32`s, comparing two of them is
//! comparing integers, and [`Symbol::as_str`] gives the text back without a
//! lock (the table only grows; its strings live as long as the process, which
//! is bounded by the distinct names a process meets, not by how often).
//!
//! `Symbol` dereferences to `str`, so code that reads modifiers as text
//! (`m.starts_with("m64")`, `WgmmaForm::decode`) reads them unchanged.

use crate::interner::{Ids, Interner};
use std::cell::RefCell;
use std::sync::OnceLock;

#[inline]
fn table() -> &'static Interner<str> {
    static TABLE: OnceLock<Interner<str>> = OnceLock::new();
    TABLE.get_or_init(Interner::new)
}

thread_local! {
    /// Each thread's copy of the ids it has looked up: interning a known
    /// string takes no lock.
    static CACHE: RefCell<Ids<str>> = RefCell::new(Ids::default());
}

/// An interned string.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Symbol(u32);

impl Symbol {
    /// The symbol of `s`, adding it to the table if it is new.
    pub fn new(s: &str) -> Symbol {
        if let Some(id) = CACHE.with(|c| c.borrow().get(s).copied()) {
            return Symbol(id);
        }
        let (text, id) = table().intern(s);
        CACHE.with(|c| c.borrow_mut().insert(text, id));
        Symbol(id)
    }

    /// The text.
    #[inline]
    pub fn as_str(self) -> &'static str {
        table().get(self.0).unwrap_or("")
    }

    /// The table index (stable within a process only).
    pub fn index(self) -> u32 {
        self.0
    }
}

impl std::ops::Deref for Symbol {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Symbol {
    #[inline]
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Symbol {
    fn from(s: &str) -> Symbol {
        Symbol::new(s)
    }
}

impl From<&String> for Symbol {
    fn from(s: &String) -> Symbol {
        Symbol::new(s)
    }
}

impl From<String> for Symbol {
    fn from(s: String) -> Symbol {
        Symbol::new(&s)
    }
}

impl PartialEq<str> for Symbol {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Symbol {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Debug for Symbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Symbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_by_text() {
        let a = Symbol::new("mma_async");
        let b = Symbol::from(String::from("mma_async"));
        assert_eq!(a, b);
        assert_ne!(a, Symbol::new("sync"));
        assert_eq!(&*a, "mma_async");
        assert_eq!(a, "mma_async");
        assert_eq!(Symbol::new("").as_str(), "");
    }

    #[test]
    fn threads_share_the_table() {
        let here = Symbol::new("shared::cta");
        let there = std::thread::spawn(|| Symbol::new("shared::cta"))
            .join()
            .unwrap();
        assert_eq!(here, there);
        let made = std::thread::spawn(|| Symbol::new("only-made-over-there"))
            .join()
            .unwrap();
        assert_eq!(made.as_str(), "only-made-over-there");
        assert_eq!(made, Symbol::new("only-made-over-there"));
    }

    #[test]
    fn many_symbols_cross_segments() {
        let v: Vec<Symbol> = (0..20_000).map(|i| Symbol::new(&format!("s{i}"))).collect();
        for (i, s) in v.iter().enumerate() {
            assert_eq!(s.as_str(), format!("s{i}"));
        }
    }
}
