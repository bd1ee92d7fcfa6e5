//! The decoded form of a `wgmma.mma_async`: shape, types and operand layout.
//!
//! Phases 85/87 need the accumulator and A-fragment register counts, and the
//! lowering needs the SASS opcode family; all of it follows from the dotted
//! modifiers, so it is decoded on demand here rather than stored twice.
//!
//! Sparse `wgmma.mma_async.sp` (PTX ISA 8.2) doubles K (A is stored packed,
//! M x K/2) and puts two operands after `b-desc`: the 32-bit metadata
//! register `sp-meta` and the immediate selector `sp-sel`; everything after
//! them (`scale-d`, the immediates) moves two slots right. There is no
//! sparse `.b1` form.

use std::fmt;

/// An element type of a wgmma operand.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ElemType {
    /// `.f16`: IEEE 754 half precision (16 bits); an A/B type, or the D type
    /// of the half and FP8 tables.
    F16,
    /// `.bf16`: bfloat16 (16 bits, 8-bit exponent); an A/B type only.
    Bf16,
    /// `.tf32`: TensorFloat-32, held in a 32-bit word; an A/B type only.
    Tf32,
    /// `.e4m3`: 8-bit float with 4 exponent and 3 mantissa bits (FP8).
    E4m3,
    /// `.e5m2`: 8-bit float with 5 exponent and 2 mantissa bits (FP8).
    E5m2,
    /// `.s8`: signed 8-bit integer; an A/B type of the integer table.
    S8,
    /// `.u8`: unsigned 8-bit integer; an A/B type of the integer table.
    U8,
    /// `.b1`: single bit; the A/B type of the `.and.popc` table.
    B1,
    /// `.f32`: IEEE 754 single precision; a D (accumulator) type.
    F32,
    /// `.s32`: signed 32-bit integer; the D type of the integer and b1 tables.
    S32,
}

impl ElemType {
    /// Parse a PTX type modifier (`f16`, `e4m3`, ...).
    pub fn from_ptx(s: &str) -> Option<ElemType> {
        Some(match s {
            "f16" => ElemType::F16,
            "bf16" => ElemType::Bf16,
            "tf32" => ElemType::Tf32,
            "e4m3" => ElemType::E4m3,
            "e5m2" => ElemType::E5m2,
            "s8" => ElemType::S8,
            "u8" => ElemType::U8,
            "b1" => ElemType::B1,
            "f32" => ElemType::F32,
            "s32" => ElemType::S32,
            _ => return None,
        })
    }
    /// The PTX spelling.
    pub fn ptx(self) -> &'static str {
        match self {
            ElemType::F16 => "f16",
            ElemType::Bf16 => "bf16",
            ElemType::Tf32 => "tf32",
            ElemType::E4m3 => "e4m3",
            ElemType::E5m2 => "e5m2",
            ElemType::S8 => "s8",
            ElemType::U8 => "u8",
            ElemType::B1 => "b1",
            ElemType::F32 => "f32",
            ElemType::S32 => "s32",
        }
    }
    /// Bits per element.
    pub fn bits(self) -> u32 {
        match self {
            ElemType::B1 => 1,
            ElemType::E4m3 | ElemType::E5m2 | ElemType::S8 | ElemType::U8 => 8,
            ElemType::F16 | ElemType::Bf16 => 16,
            ElemType::Tf32 | ElemType::F32 | ElemType::S32 => 32,
        }
    }
}

/// Which ISA table a wgmma belongs to.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Family {
    /// `.f16` / `.bf16` inputs (transpose allowed).
    Half,
    /// `.tf32`
    Tf32,
    /// `.e4m3` / `.e5m2`
    Fp8,
    /// `.s8` / `.u8`
    Int8,
    /// `.b1` with `.and.popc`
    Bit,
}

/// Everything the modifiers of a `wgmma.mma_async` say.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct WgmmaForm {
    /// M of the `.mMnNkK` shape: rows of A and D; always 64.
    pub m: u32,
    /// N of the shape: columns of B and D (8 to 256, in the steps the ISA
    /// table of the family allows).
    pub n: u32,
    /// K of the shape: the reduction depth, as many A elements as fill 256
    /// bits (16 for `.f16`, 32 for `.s8`, 256 for `.b1`), doubled for `.sp`.
    pub k: u32,
    /// Element type of the accumulator D (the first type modifier).
    pub dtype: ElemType,
    /// Element type of A (the second type modifier).
    pub atype: ElemType,
    /// Element type of B (the third type modifier).
    pub btype: ElemType,
    /// `.satfinite`: the `.s32` result is clamped to the s32 range instead of
    /// wrapping; only accepted in [`Family::Int8`].
    pub satfinite: bool,
    /// The ISA table the D/A/B type combination belongs to.
    pub family: Family,
    /// `.sp`: structured-sparse A (K doubled, metadata and selector operands).
    pub sparse: bool,
}

/// Why a modifier list is not a valid wgmma.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum FormError {
    /// No `.mMnNkK` modifier.
    MissingShape,
    /// The shape is not in the ISA table of this type.
    BadShape(String),
    /// The type combination is not in the ISA.
    BadTypes(String),
    /// An unknown modifier.
    UnknownModifier(String),
    /// `.sp` on a type family that has no sparse form (`.b1`).
    NoSparseForm,
}

impl fmt::Display for FormError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormError::MissingShape => write!(f, "missing shape"),
            FormError::BadShape(s) => write!(f, "invalid shape '{s}'"),
            FormError::BadTypes(s) => write!(f, "invalid type combination '{s}'"),
            FormError::UnknownModifier(s) => write!(f, "unknown modifier '.{s}'"),
            FormError::NoSparseForm => write!(f, "'.sp' is not allowed with these types"),
        }
    }
}

impl std::error::Error for FormError {}

fn parse_shape(s: &str) -> Option<(u32, u32, u32)> {
    let rest = s.strip_prefix('m')?;
    let (m, rest) = rest.split_once('n')?;
    let (n, k) = rest.split_once('k')?;
    Some((m.parse().ok()?, n.parse().ok()?, k.parse().ok()?))
}

/// The N values the ISA allows for the integer and b1 tables (seed 004).
const INT_NS: [u32; 16] = [
    8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224,
];

/// The modifiers of a `wgmma.mma_async`, as read before any check.
struct Scanned<'a> {
    /// `.mMnNkK` and its text.
    shape: Option<((u32, u32, u32), &'a str)>,
    /// The type modifiers in order (D, A, B), the first three.
    types: [ElemType; 3],
    /// How many type modifiers there were.
    ntypes: usize,
    /// `.satfinite`.
    satfinite: bool,
    /// `.and` and `.popc`, the `.b1` table's operation.
    and: bool,
    popc: bool,
    /// `.sp`.
    sparse: bool,
}

impl<'a> Scanned<'a> {
    /// Read every modifier; an unknown one is an error.
    fn scan<S: AsRef<str>>(mods: &'a [S]) -> Result<Scanned<'a>, FormError> {
        let mut s = Scanned {
            shape: None,
            types: [ElemType::F32; 3],
            ntypes: 0,
            satfinite: false,
            and: false,
            popc: false,
            sparse: false,
        };
        for m in mods {
            let m = m.as_ref();
            match m {
                "mma_async" | "sync" | "aligned" => {}
                "satfinite" => s.satfinite = true,
                "sp" => s.sparse = true,
                "and" => s.and = true,
                "popc" => s.popc = true,
                _ => {
                    if let Some(t) = ElemType::from_ptx(m) {
                        if let Some(slot) = s.types.get_mut(s.ntypes) {
                            *slot = t;
                        }
                        s.ntypes += 1;
                    } else if let Some(shape) = parse_shape(m) {
                        s.shape = Some((shape, m));
                    } else {
                        return Err(FormError::UnknownModifier(m.to_string()));
                    }
                }
            }
        }
        Ok(s)
    }

    /// The ISA table of the D/A/B types and the flags that go with it, or
    /// `None` when the combination is not in the ISA (the caller names it).
    fn family(&self) -> Result<Option<Family>, FormError> {
        use ElemType::*;
        if self.ntypes != 3 {
            return Ok(None);
        }
        let family = match self.types {
            [F32 | F16, F16, F16] => Family::Half,
            [F32, Bf16, Bf16] => Family::Half,
            [F32, Tf32, Tf32] => Family::Tf32,
            [F32 | F16, E4m3 | E5m2, E4m3 | E5m2] => Family::Fp8,
            [S32, S8 | U8, S8 | U8] => Family::Int8,
            [S32, B1, B1] => Family::Bit,
            _ => return Ok(None),
        };
        if self.satfinite && family != Family::Int8 {
            return Err(FormError::UnknownModifier("satfinite".into()));
        }
        let bit = family == Family::Bit;
        if (self.and || self.popc) != bit || (bit && !(self.and && self.popc)) {
            return Ok(None);
        }
        if self.sparse && bit {
            return Err(FormError::NoSparseForm);
        }
        Ok(Some(family))
    }
}

impl WgmmaForm {
    /// Decode the modifiers after `wgmma` (starting with `mma_async`).
    pub fn decode<S: AsRef<str>>(mods: &[S]) -> Result<WgmmaForm, FormError> {
        // Allocation-free on success: phases 85 and 87, the verifier and the
        // back ends decode every wgmma, several times each. The error texts
        // are built from `mods` only when there is an error.
        let type_text = || {
            let types = mods.iter().map(AsRef::as_ref);
            types
                .filter(|m| ElemType::from_ptx(m).is_some())
                .collect::<Vec<_>>()
                .join(".")
        };
        let s = Scanned::scan(mods)?;
        let ((mm, n, k), shape_text) = s.shape.ok_or(FormError::MissingShape)?;
        let Some(family) = s.family()? else {
            return Err(FormError::BadTypes(type_text()));
        };
        let [dtype, atype, btype] = s.types;
        if mm != 64 || k != Self::k_of(atype, s.sparse) || !Self::n_allowed(family, n) {
            return Err(FormError::BadShape(shape_text.to_string()));
        }
        Ok(WgmmaForm {
            m: mm,
            n,
            k,
            dtype,
            atype,
            btype,
            satfinite: s.satfinite,
            family,
            sparse: s.sparse,
        })
    }

    /// K for A elements of type `atype`: as many as fill 256 bits (`.b1`
    /// counts 256), doubled for `.sp`.
    fn k_of(atype: ElemType, sparse: bool) -> u32 {
        let k = if atype == ElemType::B1 {
            256
        } else {
            256 / atype.bits().max(1)
        };
        if sparse {
            2 * k
        } else {
            k
        }
    }

    /// Whether the ISA table of `family` has N = `n`.
    fn n_allowed(family: Family, n: u32) -> bool {
        match family {
            // ptxas 13.0.88 also takes N = 240 and 256 for the integer and
            // b1 types, which seed 004's table leaves out (tests/wgmma_table).
            Family::Int8 | Family::Bit => INT_NS.contains(&n) || n == 240 || n == 256,
            _ => n.is_multiple_of(8) && (8..=256).contains(&n),
        }
    }

    /// [`WgmmaForm::decode`] of an interned modifier list, decoded once per
    /// list and thread: phases 85 and 87 ask for the form of every wgmma
    /// several times, and a kernel has a handful of distinct lists.
    pub fn of_list(mods: crate::ModList) -> Result<WgmmaForm, FormError> {
        // Indexed by the list's interned id (a process has a few hundred
        // lists): one array read per wgmma, where a hash map cost a probe.
        type Decoded = Option<Result<WgmmaForm, FormError>>;
        thread_local! {
            static DECODED: std::cell::RefCell<Vec<Decoded>> = Default::default();
        }
        let k = mods.index();
        if let Some(Some(r)) = DECODED.with(|m| m.borrow().get(k).cloned()) {
            return r;
        }
        let r = WgmmaForm::decode(&mods);
        DECODED.with(|m| {
            let mut m = m.borrow_mut();
            if m.len() <= k {
                m.resize(k + 1, None);
            }
            m[k] = Some(r.clone());
        });
        r
    }

    /// Number of 32-bit accumulator registers per thread: N/2 for `.f32`/`.s32`, N/4 for `.f16`.
    pub fn accumulator_regs(&self) -> usize {
        if self.dtype == ElemType::F16 {
            (self.n / 4) as usize
        } else {
            (self.n / 2) as usize
        }
    }

    /// Number of 32-bit A-fragment registers per thread in the register-A
    /// form (64xK / 128 threads; a sparse A holds K/2 columns).
    pub fn a_fragment_regs(&self) -> usize {
        let k = if self.sparse { self.k / 2 } else { self.k };
        (self.m * k * self.atype.bits() / (128 * 32)) as usize
    }

    /// Operand count (seed 004 syntax tables; `.sp` adds `sp-meta, sp-sel`).
    pub fn operand_count(&self, a_in_regs: bool) -> usize {
        let dense = match self.family {
            Family::Half if a_in_regs => 7,
            Family::Half => 8,
            Family::Tf32 | Family::Fp8 => 6,
            Family::Int8 | Family::Bit => 4,
        };
        if self.sparse {
            dense + 2
        } else {
            dense
        }
    }

    /// The SASS opcode family: HGMMA, QGMMA, IGMMA or BGMMA.
    pub fn sass_opcode(&self) -> &'static str {
        match self.family {
            Family::Half | Family::Tf32 => "HGMMA",
            Family::Fp8 => "QGMMA",
            Family::Int8 => "IGMMA",
            Family::Bit => "BGMMA",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Result<WgmmaForm, FormError> {
        WgmmaForm::decode(&s.split('.').collect::<Vec<_>>())
    }

    #[test]
    fn register_counts_follow_the_isa() {
        let f = d("mma_async.sync.aligned.m64n8k16.f32.f16.f16").unwrap();
        assert_eq!((f.accumulator_regs(), f.a_fragment_regs()), (4, 4));
        let f = d("mma_async.sync.aligned.m64n72k16.f16.f16.f16").unwrap();
        assert_eq!(f.accumulator_regs(), 18);
        let f = d("mma_async.sync.aligned.m64n16k8.f32.tf32.tf32").unwrap();
        assert_eq!((f.accumulator_regs(), f.a_fragment_regs()), (8, 4));
        let f = d("mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc").unwrap();
        assert_eq!((f.family, f.a_fragment_regs()), (Family::Bit, 4));
    }

    #[test]
    fn sparse_forms_double_k_and_take_two_more_operands() {
        let f = d("mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16").unwrap();
        assert!(f.sparse);
        assert_eq!((f.a_fragment_regs(), f.operand_count(false)), (4, 10));
        assert_eq!(f.operand_count(true), 9);
        let f = d("mma_async.sp.sync.aligned.m64n16k16.f32.tf32.tf32").unwrap();
        assert_eq!((f.a_fragment_regs(), f.operand_count(false)), (4, 8));
        let f = d("mma_async.sp.sync.aligned.m64n8k64.f16.e4m3.e5m2").unwrap();
        assert_eq!((f.family, f.a_fragment_regs()), (Family::Fp8, 4));
        let f = d("mma_async.sp.sync.aligned.m64n240k64.satfinite.s32.s8.u8").unwrap();
        assert_eq!((f.accumulator_regs(), f.operand_count(true)), (120, 6));
        // Dense K with `.sp`, sparse K without, and `.b1` are not wgmma.
        assert!(d("mma_async.sp.sync.aligned.m64n8k16.f32.f16.f16").is_err());
        assert!(d("mma_async.sync.aligned.m64n8k32.f32.f16.f16").is_err());
        assert!(d("mma_async.sp.sync.aligned.m64n8k8.f32.tf32.tf32").is_err());
        assert_eq!(
            d("mma_async.sp.sync.aligned.m64n8k256.s32.b1.b1.and.popc"),
            Err(FormError::NoSparseForm)
        );
    }

    #[test]
    fn invalid_combinations_are_rejected() {
        assert!(d("mma_async.sync.aligned.m64n8k16.f16.bf16.bf16").is_err());
        assert!(d("mma_async.sync.aligned.m64n40k32.s32.s8.s8").is_err());
        assert!(d("mma_async.sync.aligned.m64n8k32.f32.f16.f16").is_err());
        assert!(d("mma_async.sync.aligned.m64n8k16.f32.f16.f16.satfinite").is_err());
        assert!(d("mma_async.sync.aligned.m64n264k16.f32.f16.f16").is_err());
        assert!(d("mma_async.sync.aligned.m64n8k32.s32.s8.u8.satfinite").is_ok());
    }
}
