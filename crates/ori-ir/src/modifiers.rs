//! Interned modifier lists: all of an instruction's dotted modifiers as one
//! `u32`.
//!
//! A kernel repeats a handful of modifier lists (`global.f32`,
//! `mma_async.sync.aligned.m64n8k16.f32.f16.f16`) over a million
//! instructions. Held inline they were 40 of an instruction's bytes in the
//! syntax tree and again in the IR; a [`ModList`] is 4, made once by the
//! parser and copied into the IR instruction as it is. It dereferences to
//! `[Symbol]`, so code that reads modifiers (`d.mods.first()`,
//! `&d.mods[1..]`, `WgmmaForm::decode(&d.mods)`) reads them unchanged; an
//! instruction's modifiers change only by building a new list.

use crate::interner::{Ids, Interner};
use crate::symbol::Symbol;
use smallvec::SmallVec;
use std::cell::RefCell;
use std::sync::OnceLock;

#[inline]
fn table() -> &'static Interner<[Symbol]> {
    static TABLE: OnceLock<Interner<[Symbol]>> = OnceLock::new();
    TABLE.get_or_init(Interner::new)
}

thread_local! {
    /// Each thread's copy of the ids it has looked up: interning a known
    /// list takes no lock.
    static CACHE: RefCell<Ids<[Symbol]>> = RefCell::new(Ids::default());
}

/// An interned list of modifiers (without their dots), in order.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct ModList(u32);

impl ModList {
    /// The list of `mods`, adding it to the table if it is new.
    pub fn new(mods: &[Symbol]) -> ModList {
        if let Some(id) = CACHE.with(|c| c.borrow().get(mods).copied()) {
            return ModList(id);
        }
        let (kept, id) = table().intern(mods);
        CACHE.with(|c| c.borrow_mut().insert(kept, id));
        ModList(id)
    }

    /// The list of modifiers given as text.
    pub fn from_strs<S: AsRef<str>>(mods: &[S]) -> ModList {
        let syms: SmallVec<[Symbol; 8]> = mods.iter().map(|m| Symbol::new(m.as_ref())).collect();
        ModList::new(&syms)
    }

    /// The list's interned id: dense from 0, so a table of something
    /// decoded per list can be an array.
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }

    /// The modifiers.
    #[inline]
    pub fn as_slice(self) -> &'static [Symbol] {
        table().get(self.0).unwrap_or(&[])
    }

    /// This list with `m` appended.
    pub fn with(self, m: Symbol) -> ModList {
        let mut v: SmallVec<[Symbol; 8]> = self.iter().copied().collect();
        v.push(m);
        ModList::new(&v)
    }
}

impl Default for ModList {
    fn default() -> ModList {
        ModList::new(&[])
    }
}

impl std::ops::Deref for ModList {
    type Target = [Symbol];
    #[inline]
    fn deref(&self) -> &[Symbol] {
        self.as_slice()
    }
}

impl AsRef<[Symbol]> for ModList {
    fn as_ref(&self) -> &[Symbol] {
        self.as_slice()
    }
}

impl IntoIterator for &ModList {
    type Item = &'static Symbol;
    type IntoIter = std::slice::Iter<'static, Symbol>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl std::fmt::Debug for ModList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_slice(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_intern_by_content_and_order() {
        let a = ModList::from_strs(&["global", "f32"]);
        let b = ModList::new(&[Symbol::new("global"), Symbol::new("f32")]);
        assert_eq!(a, b);
        assert_ne!(a, ModList::from_strs(&["f32", "global"]));
        assert_eq!(a.len(), 2);
        assert_eq!(&*a[1], "f32");
        assert!(ModList::default().is_empty());
        assert_eq!(ModList::from_strs(&["global"]).with(Symbol::new("f32")), a);
        let there = std::thread::spawn(|| ModList::from_strs(&["global", "f32"]))
            .join()
            .unwrap();
        assert_eq!(there, a);
    }
}
