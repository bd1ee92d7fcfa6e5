//! A function's register names: PTX name -> [`VReg`].
//!
//! Why not one hash table: real kernels declare almost every register
//! through a `.reg` range (`.reg .b32 %r<509>;`) and name them `%r1`,
//! `%r2`, ... roughly in program order. In a hash table those lookups land
//! anywhere: once a kernel's table outgrows the cache (a few hundred
//! thousand registers), every operand costs a cache miss, and lowering a
//! 1M-instruction kernel took 11x the time of a 125k one. Here a name of a
//! declared range is split into its prefix and index and found in a dense
//! table per prefix, which the lowering walks nearly in order; only the
//! other names (`a`, `ptr`, `%r01`, registers declared one by one) go to a
//! hash table, which stays small.
//!
//! Every name is in at most one place: [`RegisterNames::insert`] is called
//! only for a name that [`RegisterNames::get`] did not find, and `get`
//! looks in both.

use crate::entities::VReg;
use crate::function::NameMap;
use compact_str::CompactString;
use cranelift_entity::packed_option::PackedOption;

/// A dense table only grows this far past its highest filled index plus
/// its length: a range declared with a huge N (`%r<4000000000>`, which ptxas
/// takes) and used at a few scattered indices keeps those in the hash table
/// instead of allocating up to N slots.
const MAX_GAP: usize = 1 << 16;

/// The registers of one declared range (`prefix<count>`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Range {
    /// Indices `0..count` belong to the range.
    count: u64,
    /// The register of each index declared so far (grown on demand).
    regs: Vec<PackedOption<VReg>>,
}

/// Up to this many declared ranges are searched one by one, above it
/// through a hash table.
const FEW_RANGES: usize = 8;

/// The declared ranges by prefix (`%r`, `%rd`, `e`). A kernel has a few,
/// and every operand looks its prefix up: comparing a short prefix with a
/// few others costs less than hashing it; a function declaring many
/// ranges is served by the hash table.
#[derive(Clone, Debug, Default)]
struct Ranges {
    /// The ranges in the order declared.
    list: Vec<(CompactString, Range)>,
    /// Prefix -> position in `list`.
    index: NameMap<CompactString, usize>,
}

impl Ranges {
    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    fn position(&self, prefix: &str) -> Option<usize> {
        if self.list.len() <= FEW_RANGES {
            self.list.iter().position(|(p, _)| p == prefix)
        } else {
            self.index.get(prefix).copied()
        }
    }

    fn get(&self, prefix: &str) -> Option<&Range> {
        self.position(prefix).map(|k| &self.list[k].1)
    }

    fn get_mut(&mut self, prefix: &str) -> Option<&mut Range> {
        self.position(prefix).map(|k| &mut self.list[k].1)
    }

    /// Add the range `prefix`, which is not there yet.
    fn insert(&mut self, prefix: &str, range: Range) {
        self.index.insert(prefix.into(), self.list.len());
        self.list.push((prefix.into(), range));
    }
}

/// PTX register name -> register, for one function.
#[derive(Clone, Debug, Default)]
pub struct RegisterNames {
    /// Names outside the declared ranges' dense tables.
    single: NameMap<CompactString, VReg>,
    /// Declared ranges by prefix.
    ranges: Ranges,
}

/// `name` as a range prefix and index: trailing decimal digits without a
/// leading zero (`%r0`, `%r12`, not `%r012`, as PTX spells range members).
///
/// Every operand of the lowering comes through here, so the digits are read
/// once, from the end, with no string parsing.
#[inline]
pub fn split_range_name(name: &str) -> Option<(&str, u64)> {
    let b = name.as_bytes();
    let mut start = b.len();
    while start > 0 && b[start - 1].is_ascii_digit() {
        start -= 1;
    }
    let digits = &b[start..];
    if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    let mut index: u64 = 0;
    for &d in digits {
        index = index.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some((&name[..start], index))
}

impl RegisterNames {
    /// Note a range `prefix<count>`: its members are kept densely from now
    /// on. Declaring no register, it may be called for ranges whose members
    /// are declared later, one by one, on first use.
    pub fn declare_range(&mut self, prefix: &str, count: u64) {
        match self.ranges.get_mut(prefix) {
            Some(r) => r.count = r.count.max(count),
            None => {
                self.ranges.insert(
                    prefix,
                    Range {
                        count,
                        regs: Vec::new(),
                    },
                );
            }
        }
    }

    /// The dense slot of `name`, if it is a member of a declared range.
    fn range_member(&self, name: &str) -> Option<(&Range, usize)> {
        if self.ranges.is_empty() {
            return None;
        }
        let (prefix, index) = split_range_name(name)?;
        let range = self.ranges.get(prefix)?;
        (index < range.count).then_some((range, usize::try_from(index).ok()?))
    }

    /// The register named `name`.
    #[inline]
    pub fn get(&self, name: &str) -> Option<VReg> {
        if let Some((range, k)) = self.range_member(name) {
            if let Some(r) = range.regs.get(k).and_then(|r| r.expand()) {
                return Some(r);
            }
        }
        self.single.get(name).copied()
    }

    /// Record members `0..count` of the declared range `prefix` that are
    /// not recorded yet, in order, each as the register `make(name, k)`
    /// returns: the same as [`RegisterNames::insert`] for each member name
    /// that [`RegisterNames::get`] does not find, without spelling, parsing
    /// and hashing every name (a kernel declares thousands of registers in
    /// one `.reg .f32 %f<2210>;`). Falls back to one name at a time when
    /// the range is not declared or not that large.
    pub fn fill_range(
        &mut self,
        prefix: &str,
        count: u64,
        mut make: impl FnMut(&str, u64) -> VReg,
    ) {
        let mut name = String::with_capacity(prefix.len() + 20);
        let spell = |name: &mut String, k: u64| {
            use std::fmt::Write as _;
            name.clear();
            name.push_str(prefix);
            let _ = write!(name, "{k}");
        };
        let dense = self.ranges.get(prefix).is_some_and(|r| count <= r.count)
            && usize::try_from(count).is_ok_and(|n| n <= MAX_GAP);
        if !dense {
            for k in 0..count {
                spell(&mut name, k);
                if self.get(&name).is_none() {
                    let r = make(&name, k);
                    self.insert(&name, r);
                }
            }
            return;
        }
        let check_single = !self.single.is_empty();
        let range = self.ranges.get_mut(prefix).expect("declared range");
        let n = count as usize;
        if range.regs.len() < n {
            range.regs.resize(n, None.into());
        }
        for k in 0..n {
            if range.regs[k].is_some() {
                continue;
            }
            spell(&mut name, k as u64);
            if check_single && self.single.contains_key(name.as_str()) {
                continue;
            }
            range.regs[k] = make(&name, k as u64).into();
        }
    }

    /// Record `name` -> `r`; `name` must not be recorded yet.
    pub fn insert(&mut self, name: &str, r: VReg) {
        debug_assert!(self.get(name).is_none(), "{name} recorded twice");
        if let Some((prefix, index)) = split_range_name(name) {
            if let Some(range) = self.ranges.get_mut(prefix) {
                if let Ok(k) = usize::try_from(index) {
                    if index < range.count && k <= range.regs.len() * 2 + MAX_GAP {
                        if range.regs.len() <= k {
                            range.regs.resize(k + 1, None.into());
                        }
                        range.regs[k] = r.into();
                        return;
                    }
                }
            }
        }
        self.single.insert(name.into(), r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    #[test]
    fn range_names_split_as_ptx_spells_them() {
        assert_eq!(split_range_name("%r12"), Some(("%r", 12)));
        assert_eq!(split_range_name("%r0"), Some(("%r", 0)));
        assert_eq!(split_range_name("e7"), Some(("e", 7)));
        assert_eq!(split_range_name("%r012"), None);
        assert_eq!(split_range_name("ptr"), None);
        assert_eq!(split_range_name("%r99999999999999999999999"), None);
    }

    /// `fill_range` records what inserting each member name not found
    /// would: members named before the range (kept in the hash table) and
    /// members already recorded keep their registers, the others get new
    /// ones in order.
    #[test]
    fn fill_range_is_insert_per_missing_name() {
        for dense in [true, false] {
            let mut names = RegisterNames::default();
            names.insert("%f3", VReg::new(1000));
            names.declare_range("%f", if dense { 10 } else { 5 });
            names.insert("%f1", VReg::new(1001));
            let mut next = 0;
            let mut made = Vec::new();
            names.fill_range("%f", 6, |n, k| {
                made.push((n.to_string(), k));
                next += 1;
                VReg::new(next - 1)
            });
            let spelled: Vec<&str> = made.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(spelled, ["%f0", "%f2", "%f4", "%f5"], "dense {dense}");
            assert_eq!(names.get("%f0"), Some(VReg::new(0)));
            assert_eq!(names.get("%f1"), Some(VReg::new(1001)));
            assert_eq!(names.get("%f3"), Some(VReg::new(1000)));
            assert_eq!(names.get("%f5"), Some(VReg::new(3)));
            assert_eq!(names.get("%f6"), None);
        }
    }

    /// Property: whatever mix of ranges and names, `get` finds exactly what
    /// `insert` recorded, as a plain map would.
    #[test]
    fn agrees_with_a_plain_map() {
        let mut names = RegisterNames::default();
        let mut plain = std::collections::HashMap::new();
        names.declare_range("%r", 100);
        names.declare_range("%big", 4_000_000_000);
        let spelled = [
            "%r0",
            "%r5",
            "%r99",
            "%r100",
            "%r05",
            "a",
            "%rd3",
            "%big7",
            "%big3999999999",
            "%big200000",
            "x1",
        ];
        for (k, n) in spelled.iter().enumerate() {
            if k == 6 {
                // A range declared after some of its members were named.
                names.declare_range("%rd", 10);
            }
            assert_eq!(names.get(n), None, "{n}");
            names.insert(n, VReg::new(k));
            plain.insert(*n, VReg::new(k));
        }
        names.declare_range("x", 10);
        for n in spelled.iter().chain(&["%r1", "%r6", "b", "%big8", "x2"]) {
            assert_eq!(names.get(n), plain.get(n).copied(), "{n}");
        }
        // A scattered index of a huge range is not given a huge table.
        assert!(names.ranges.get("%big").unwrap().regs.len() <= MAX_GAP + 8);
    }

    /// Past a few ranges, the prefixes are found through the hash table:
    /// the same registers either way.
    #[test]
    fn many_ranges_are_found_as_few_are() {
        let mut names = RegisterNames::default();
        let prefix = |k: usize| format!("%p{k}_");
        let check = |names: &RegisterNames, declared: usize| {
            for k in 0..declared {
                let p = prefix(k);
                assert_eq!(names.get(&format!("{p}1")), Some(VReg::new(k)));
                assert_eq!(names.get(&format!("{p}3")), Some(VReg::new(1000 + k)));
                assert_eq!(names.get(&format!("{p}0")), None);
                assert_eq!(names.get(&format!("{p}4")), None);
            }
        };
        for declared in [FEW_RANGES / 2, 3 * FEW_RANGES] {
            for k in names.ranges.list.len()..declared {
                let p = prefix(k);
                names.declare_range(&p, 4);
                names.insert(&format!("{p}1"), VReg::new(k));
                names.insert(&format!("{p}3"), VReg::new(1000 + k));
            }
            check(&names, declared);
        }
    }
}
