//! Lists keyed by register, kept as one table: offsets by register, then
//! the items. Phase 87 keeps several (each register's accumulator sets,
//! the movs writing each register, the wgmma writes by register); a map
//! of small vectors took 24 bytes for every register of the function, 28
//! MB on the generated 1M-instruction matmul, most of them for registers
//! with nothing, and sorting pairs by register cost a comparison sort
//! where counting does. Built by counting, in two passes over the pairs.

use cranelift_entity::EntityRef;
use ori_ir::VReg;

/// Each register's items: `items[start[r]..start[r + 1]]`.
pub(super) struct ByRegister<T> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy> ByRegister<T> {
    /// The `(register, item)` pairs `pairs()` yields (it is asked twice),
    /// each register's items in the order given, for a function of
    /// `registers` registers; `placeholder` fills the table before the
    /// items are placed. A register at or past `registers` (which the
    /// verifier rules out) is left out.
    pub(super) fn new<I>(registers: usize, placeholder: T, pairs: impl Fn() -> I) -> Self
    where
        I: Iterator<Item = (VReg, T)>,
    {
        let mut start = vec![0u32; registers + 1];
        for (r, _) in pairs() {
            if let Some(n) = start.get_mut(r.index() + 1) {
                *n += 1;
            }
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut fill = start.clone();
        let mut items = vec![placeholder; start[registers] as usize];
        for (r, item) in pairs() {
            if let Some(at) = fill.get_mut(r.index()) {
                items[*at as usize] = item;
                *at += 1;
            }
        }
        ByRegister { start, items }
    }

    /// The items of every register, by register.
    pub(super) fn into_items(self) -> Vec<T> {
        self.items
    }
}

impl<T> std::ops::Index<VReg> for ByRegister<T> {
    type Output = [T];
    fn index(&self, r: VReg) -> &[T] {
        let k = r.index();
        match (self.start.get(k), self.start.get(k + 1)) {
            (Some(&lo), Some(&hi)) => &self.items[lo as usize..hi as usize],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_register_keeps_its_items_in_order() {
        let r = VReg::new;
        let pairs = [
            (r(3), 'a'),
            (r(1), 'b'),
            (r(3), 'c'),
            (r(9), 'd'),
            (r(0), 'e'),
        ];
        let t = ByRegister::new(4, ' ', || pairs.iter().copied());
        assert_eq!(&t[r(0)], &['e']);
        assert_eq!(&t[r(1)], &['b']);
        assert!(t[r(2)].is_empty());
        assert_eq!(&t[r(3)], &['a', 'c']);
        // Past the function's registers: left out, and asked, nothing.
        assert!(t[r(9)].is_empty());
        assert_eq!(t.into_items(), vec!['e', 'b', 'a', 'c']);
    }
}
