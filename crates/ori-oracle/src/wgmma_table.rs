//! The generated `wgmma` table: one small PTX kernel per shape/type/form
//! combination, with ptxas's recorded verdict on each.
//!
//! Issue #3 asks that ori accept every `wgmma.mma_async` combination of the
//! PTX ISA tables (seed 004) and reject a systematic set of invalid ones,
//! each with the same verdict as ptxas 13.0.88. Writing 1000+ kernels by
//! hand is not an option, so this module generates them deterministically:
//! [`table_cases`] returns the same list, in the same order, with the same
//! stable names, on every call. `cargo xtask oracle record-table` runs real
//! ptxas on each case and writes `tests/wgmma_table/verdicts.tsv`
//! ([`render_verdicts`]); ori's test regenerates the cases in memory, runs
//! the front end and compares with that file ([`parse_verdicts`]).
//!
//! Every kernel declares the same register pools (so that an invalid case
//! differs from a valid one only in the thing it probes) and contains one
//! `fence` / `mma_async` / `commit_group` / `wait_group` pipeline. The
//! [`Intent`] of a case is what the ISA text says about it; the expectation
//! itself comes only from ptxas.
//!
//! The sparse rows (`sp_*`, last in the table) do the same for
//! `wgmma.mma_async.sp` (PTX ISA 8.2): K doubled, `sp-meta, sp-sel` after
//! `b-desc`; a sample of N per type combination rather than every N.

use std::fmt::Write as _;

/// The architecture ptxas is run for unless a case names another.
pub const DEFAULT_ARCH: &str = "sm_90a";

/// Where the recorded verdicts live, relative to the workspace root.
pub const VERDICTS_PATH: &str = "tests/wgmma_table/verdicts.tsv";

/// What the ISA text says about a case (ptxas has the last word).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Intent {
    /// A combination listed in the ISA tables.
    Valid,
    /// A combination the ISA rules out.
    Invalid,
    /// Something the ISA text leaves open (register types, newer shapes).
    Probe,
}

impl Intent {
    /// The lowercase name used in listings: `valid`, `invalid` or `probe`.
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Valid => "valid",
            Intent::Invalid => "invalid",
            Intent::Probe => "probe",
        }
    }
}

/// One generated case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableCase {
    /// Stable, unique name (also the file stem ptxas sees: `NAME.ptx`).
    pub name: String,
    /// What the ISA text says about the case (not the expected verdict).
    pub intent: Intent,
    /// `-arch=` for ptxas.
    pub arch: &'static str,
    /// The whole `.ptx` file.
    pub ptx: String,
}

// ---------------------------------------------------------------------------
// Type families of the ISA tables.

/// A table of seed 004 (the "family"), with its K and allowed N values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fam {
    /// `.f16` / `.bf16`: K = 16, trans immediates in the descriptor form.
    Half,
    /// `.tf32`: K = 8.
    Tf32,
    /// `.e4m3` / `.e5m2`: K = 32.
    Fp8,
    /// `.s8` / `.u8`: K = 32, `.satfinite`, no scale immediates.
    Int,
    /// `.b1` with `.and.popc`: K = 256.
    Bit,
}

impl Fam {
    fn of(atype: &str) -> Fam {
        match atype {
            "f16" | "bf16" => Fam::Half,
            "tf32" => Fam::Tf32,
            "e4m3" | "e5m2" => Fam::Fp8,
            "s8" | "u8" => Fam::Int,
            "b1" => Fam::Bit,
            // Not a wgmma input type (used by the bad-type cases): give it
            // the operand layout of the floating point tables.
            _ => Fam::Tf32,
        }
    }
    fn k(self) -> u32 {
        match self {
            Fam::Half => 16,
            Fam::Tf32 => 8,
            Fam::Fp8 | Fam::Int => 32,
            Fam::Bit => 256,
        }
    }
    /// The N values of the ISA table (seed 004).
    fn ns(self) -> Vec<u32> {
        match self {
            Fam::Half | Fam::Tf32 | Fam::Fp8 => (1..=32).map(|i| i * 8).collect(),
            Fam::Int => INT_NS.to_vec(),
            Fam::Bit => INT_NS.iter().copied().chain([240, 256]).collect(),
        }
    }
    /// Immediates after scale-d: (descriptor-A form, register-A form).
    fn imm_count(self) -> (usize, usize) {
        match self {
            Fam::Half => (4, 3),
            Fam::Tf32 | Fam::Fp8 => (2, 2),
            Fam::Int | Fam::Bit => (0, 0),
        }
    }
}

/// Integer table N values (seed 004).
const INT_NS: [u32; 16] = [
    8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224,
];

/// `.dtype.atype.btype` plus the family's extra modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Types {
    d: &'static str,
    a: &'static str,
    b: &'static str,
    satfinite: bool,
}

impl Types {
    const fn new(d: &'static str, a: &'static str, b: &'static str) -> Types {
        Types {
            d,
            a,
            b,
            satfinite: false,
        }
    }
    fn fam(self) -> Fam {
        Fam::of(self.a)
    }
    fn tag(self) -> String {
        let mut s = format!("{}_{}_{}", self.a, self.b, self.d);
        if self.satfinite {
            s.push_str("_sat");
        }
        s
    }
    fn mixed_int(self) -> bool {
        self.fam() == Fam::Int && self.a != self.b
    }
    /// Accumulator registers for N: N/4 for `.f16` D, else N/2 (rounded up).
    fn acc_regs(self, n: u32) -> usize {
        let per = if self.d == "f16" { 4 } else { 2 };
        n.div_ceil(per) as usize
    }
}

/// Every valid type combination of the ISA tables.
fn valid_types() -> Vec<Types> {
    let mut v = vec![
        Types::new("f16", "f16", "f16"),
        Types::new("f32", "f16", "f16"),
        Types::new("f32", "bf16", "bf16"),
        Types::new("f32", "tf32", "tf32"),
    ];
    for d in ["f16", "f32"] {
        for a in ["e4m3", "e5m2"] {
            for b in ["e4m3", "e5m2"] {
                v.push(Types::new(d, a, b));
            }
        }
    }
    for sat in [false, true] {
        for a in ["s8", "u8"] {
            for b in ["s8", "u8"] {
                v.push(Types {
                    satfinite: sat,
                    ..Types::new("s32", a, b)
                });
            }
        }
    }
    v.push(Types::new("s32", "b1", "b1"));
    v
}

/// One representative per family, for the cases where D's type does not matter.
fn core_representatives() -> Vec<Types> {
    vec![
        Types::new("f32", "f16", "f16"),
        Types::new("f32", "tf32", "tf32"),
        Types::new("f32", "e4m3", "e5m2"),
        Types::new("s32", "s8", "s8"),
        Types::new("s32", "b1", "b1"),
    ]
}

/// One representative per family and accumulator type, for invalid cases.
fn representatives() -> Vec<Types> {
    vec![
        Types::new("f16", "f16", "f16"),
        Types::new("f32", "f16", "f16"),
        Types::new("f32", "bf16", "bf16"),
        Types::new("f32", "tf32", "tf32"),
        Types::new("f32", "e4m3", "e5m2"),
        Types::new("f16", "e5m2", "e4m3"),
        Types::new("s32", "s8", "s8"),
        Types {
            satfinite: true,
            ..Types::new("s32", "u8", "u8")
        },
        Types::new("s32", "s8", "u8"),
        Types::new("s32", "b1", "b1"),
    ]
}

// ---------------------------------------------------------------------------
// One wgmma.mma_async instruction.

/// Where `.satfinite` goes among the modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SatPos {
    /// `.mMnNkK.satfinite.dtype...` (the ISA's syntax).
    AfterShape,
    /// `....btype.satfinite`.
    AtEnd,
}

#[derive(Clone, Debug)]
struct Mma {
    m: u32,
    n: u32,
    k: u32,
    types: Types,
    sat_pos: SatPos,
    /// Modifiers after the types (`.and.popc` for b1).
    tail: Vec<&'static str>,
    /// Leading modifiers (normally `sync.aligned`).
    head: Vec<&'static str>,
    /// Register pool and count of the D vector.
    d_pool: &'static str,
    d_count: usize,
    /// `None`: A is the descriptor `a_desc`; `Some((pool, count))`: A fragment.
    a_frag: Option<(&'static str, usize)>,
    a_desc: &'static str,
    b_desc: &'static str,
    scale_d: String,
    imms: Vec<String>,
    /// Verbatim D / A operand text instead of the pool vector.
    d_override: Option<String>,
    a_override: Option<String>,
    /// D's first register taken from another pool (elements of two types).
    d_mixed: bool,
    /// `.sp` with its `sp-meta, sp-sel` operand texts.
    sparse: Option<(String, String)>,
}

impl Mma {
    /// The canonical valid instruction for these types, N and form; `i`
    /// varies the immediates and scale-d deterministically.
    fn new(types: Types, n: u32, rega: bool, i: usize) -> Mma {
        let fam = types.fam();
        let (nd, nr) = fam.imm_count();
        let count = if rega { nr } else { nd };
        // imm-scale-a, imm-scale-b, then imm-trans-a (descriptor form only), imm-trans-b.
        let mut imms = Vec::new();
        if count >= 2 {
            imms.push(if i & 1 == 1 { "-1" } else { "1" }.to_string());
            imms.push(if i & 2 == 2 { "-1" } else { "1" }.to_string());
        }
        if count == 4 {
            imms.push(((i >> 2) & 1).to_string());
        }
        if count >= 3 {
            imms.push(((i >> 3) & 1).to_string());
        }
        let scale_d = match i % 3 {
            0 => "p".to_string(),
            1 => "1".to_string(),
            _ => "0".to_string(),
        };
        let tail = if fam == Fam::Bit {
            vec!["and", "popc"]
        } else {
            vec![]
        };
        Mma {
            m: 64,
            n,
            k: fam.k(),
            types,
            sat_pos: SatPos::AfterShape,
            tail,
            head: vec!["sync", "aligned"],
            d_pool: acc_pool(types.d),
            d_count: types.acc_regs(n).max(1),
            a_frag: rega.then_some(("a", 4)),
            a_desc: "da",
            b_desc: "db",
            scale_d,
            imms,
            d_override: None,
            a_override: None,
            d_mixed: false,
            sparse: None,
        }
    }

    /// The canonical valid sparse instruction: K doubled, the 32-bit `dw`
    /// as metadata, selector 0 or 1 (by `i`) where the type allows 1.
    fn new_sparse(types: Types, n: u32, rega: bool, i: usize) -> Mma {
        let mut m = Mma::new(types, n, rega, i);
        m.k *= 2;
        let sel = if matches!(types.fam(), Fam::Half | Fam::Tf32) {
            (i & 1).to_string()
        } else {
            "0".to_string()
        };
        m.sparse = Some(("dw".to_string(), sel));
        m
    }

    fn render(&self) -> String {
        let mut s = String::from("wgmma.mma_async");
        if self.sparse.is_some() {
            s.push_str(".sp");
        }
        for h in &self.head {
            s.push('.');
            s.push_str(h);
        }
        let _ = write!(s, ".m{}n{}k{}", self.m, self.n, self.k);
        let sat = self.types.satfinite;
        if sat && self.sat_pos == SatPos::AfterShape {
            s.push_str(".satfinite");
        }
        let t = self.types;
        let _ = write!(s, ".{}.{}.{}", t.d, t.a, t.b);
        if sat && self.sat_pos == SatPos::AtEnd {
            s.push_str(".satfinite");
        }
        for m in &self.tail {
            s.push('.');
            s.push_str(m);
        }
        s.push(' ');
        match &self.d_override {
            Some(d) => s.push_str(d),
            None if self.d_mixed => {
                let other = if self.d_pool == "f" { "s" } else { "f" };
                let v = vector(self.d_pool, self.d_count);
                let first = format!("{{{}0", self.d_pool);
                s.push_str(&v.replacen(&first, &format!("{{{other}0"), 1));
            }
            None => s.push_str(&vector(self.d_pool, self.d_count)),
        }
        s.push_str(", ");
        match (&self.a_override, self.a_frag) {
            (Some(a), _) => s.push_str(a),
            (None, Some((pool, count))) => s.push_str(&vector(pool, count)),
            (None, None) => s.push_str(self.a_desc),
        }
        s.push_str(", ");
        s.push_str(self.b_desc);
        s.push_str(", ");
        if let Some((meta, sel)) = &self.sparse {
            let _ = write!(s, "{meta}, {sel}, ");
        }
        s.push_str(&self.scale_d);
        for i in &self.imms {
            s.push_str(", ");
            s.push_str(i);
        }
        s.push(';');
        s
    }
}

/// The default accumulator register pool for a D type.
fn acc_pool(d: &str) -> &'static str {
    match d {
        "f32" => "f",
        "s32" => "s",
        _ => "h",
    }
}

fn vector(pool: &str, count: usize) -> String {
    let regs: Vec<String> = (0..count).map(|i| format!("{pool}{i}")).collect();
    format!("{{{}}}", regs.join(", "))
}

// ---------------------------------------------------------------------------
// The kernel around it.

/// Register pools every kernel declares (name, type, count).
const POOLS: &[(&str, &str, usize)] = &[
    ("f", "f32", 264),
    ("h", "b32", 264),
    ("s", "s32", 264),
    ("u", "u32", 132),
    ("x", "f16x2", 132),
    ("a", "b32", 16),
    ("g", "f64", 4),
    ("w", "b16", 8),
    ("v", "f16", 8),
    ("q", "b64", 8),
];

#[derive(Clone, Debug)]
struct Kernel {
    version: &'static str,
    target: &'static str,
    /// The instructions between the parameter loads and `ret`.
    body: Vec<String>,
}

impl Kernel {
    fn with_mma(mma: &Mma) -> Kernel {
        Kernel {
            version: "8.0",
            target: "sm_90a",
            body: pipeline(&mma.render()),
        }
    }

    fn render(&self, name: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "// wgmma table case {name} (generated by ori_oracle::wgmma_table)"
        );
        let _ = writeln!(s, ".version {}", self.version);
        let _ = writeln!(s, ".target {}", self.target);
        s.push_str(".address_size 64\n\n");
        s.push_str(".visible .entry k(.param .u64 p_da, .param .u64 p_db, .param .u32 p_n)\n{\n");
        for (pool, ty, count) in POOLS {
            let _ = writeln!(s, "  .reg .{ty} {pool}<{count}>;");
        }
        s.push_str("  .reg .b64 da, db;\n  .reg .u64 ua;\n  .reg .s64 sa;\n");
        s.push_str("  .reg .b32 dw;\n  .reg .u32 nv;\n  .reg .pred p, q;\n");
        s.push_str("  ld.param.u64 da, [p_da];\n  ld.param.u64 db, [p_db];\n");
        s.push_str("  ld.param.u32 nv, [p_n];\n  setp.ne.u32 p, nv, 0;\n");
        s.push_str("  mov.b64 ua, da;\n  mov.b64 sa, db;\n  cvt.u32.u64 dw, da;\n");
        for line in &self.body {
            let _ = writeln!(s, "  {line}");
        }
        s.push_str("  ret;\n}\n");
        s
    }
}

/// fence, the given instruction, commit, wait 0.
fn pipeline(mma: &str) -> Vec<String> {
    vec![
        "wgmma.fence.sync.aligned;".to_string(),
        mma.to_string(),
        "wgmma.commit_group.sync.aligned;".to_string(),
        "wgmma.wait_group.sync.aligned 0;".to_string(),
    ]
}

// ---------------------------------------------------------------------------
// The generator.

struct Gen {
    cases: Vec<TableCase>,
}

impl Gen {
    fn push(&mut self, name: String, intent: Intent, kernel: &Kernel) {
        self.push_arch(name, intent, DEFAULT_ARCH, kernel);
    }
    fn push_arch(&mut self, name: String, intent: Intent, arch: &'static str, kernel: &Kernel) {
        let ptx = kernel.render(&name);
        self.cases.push(TableCase {
            name,
            intent,
            arch,
            ptx,
        });
    }
    fn mma(&mut self, name: String, intent: Intent, mma: &Mma) {
        let mut k = Kernel::with_mma(mma);
        if mma.sparse.is_some() {
            k.version = "8.2";
        }
        if mma.types.mixed_int() {
            k.version = "8.4";
        }
        self.push(name, intent, &k);
    }
}

fn form_tag(rega: bool) -> &'static str {
    if rega {
        "rega"
    } else {
        "desc"
    }
}

/// Every case, in a fixed order with unique stable names.
pub fn table_cases() -> Vec<TableCase> {
    let mut g = Gen { cases: Vec::new() };
    valid_combinations(&mut g);
    bad_shapes(&mut g);
    bad_types(&mut g);
    bad_modifiers(&mut g);
    bad_operand_counts(&mut g);
    bad_register_counts(&mut g);
    bad_values(&mut g);
    register_types(&mut g);
    versions_and_targets(&mut g);
    other_wgmma_ops(&mut g);
    fault_pairs(&mut g);
    sparse_cases(&mut g);
    g.cases
}

/// `wgmma.mma_async.sp`: every sparse type combination at a few N in both
/// forms, then shapes, selectors, metadata operands, `.b1`, a repeated
/// `.sp`, versions and targets.
fn sparse_cases(g: &mut Gen) {
    let mut i = 0usize;
    for t in valid_types() {
        let fam = t.fam();
        if fam == Fam::Bit {
            continue;
        }
        let ns = fam.ns();
        let last = *ns.last().unwrap_or(&8);
        for n in [8, 64, last] {
            for rega in [false, true] {
                if rega && n != 64 {
                    continue;
                }
                let mma = Mma::new_sparse(t, n, rega, i);
                i += 1;
                let name = format!("sp_ok_{}_n{n}_{}", t.tag(), form_tag(rega));
                g.mma(name, Intent::Valid, &mma);
            }
        }
    }
    let reps = [
        Types::new("f32", "f16", "f16"),
        Types::new("f32", "bf16", "bf16"),
        Types::new("f32", "tf32", "tf32"),
        Types::new("f16", "e4m3", "e5m2"),
        Types::new("s32", "s8", "s8"),
        Types::new("s32", "u8", "s8"),
    ];
    for t in reps {
        sparse_shapes_and_selectors(g, t);
        sparse_metadata(g, t);
        sparse_operand_forms(g, t);
        sparse_versions_and_targets(g, t);
    }
    // `.b1` has no sparse form: with its dense operands, with sparse ones.
    let t = Types::new("s32", "b1", "b1");
    for (tag, sparse) in [("dense_ops", None), ("sparse_ops", Some(("dw", "0")))] {
        for rega in [false, true] {
            let mut mma = Mma::new(t, 64, rega, 0);
            mma.sparse = sparse.map(|(m, s)| (m.to_string(), s.to_string()));
            let text = if sparse.is_some() {
                mma.render()
            } else {
                mma.render().replacen("mma_async", "mma_async.sp", 1)
            };
            g.push(
                format!("sp_b1_{tag}_{}", form_tag(rega)),
                Intent::Invalid,
                &sparse_kernel(&text, t),
            );
        }
    }
}

/// K and N off the sparse table, and the selector's values.
fn sparse_shapes_and_selectors(g: &mut Gen, t: Types) {
    let fam = t.fam();
    // K: the dense one, four times it; N off the table; N = 240, 256.
    for (tag, k, n, intent) in [
        ("k_dense", fam.k(), 16, Intent::Invalid),
        ("k_x4", 4 * fam.k(), 16, Intent::Invalid),
        ("n40", 2 * fam.k(), 40, Intent::Probe),
        ("n264", 2 * fam.k(), 264, Intent::Invalid),
        ("n240", 2 * fam.k(), 240, Intent::Probe),
    ] {
        let mut mma = Mma::new_sparse(t, n, false, 0);
        mma.k = k;
        g.mma(format!("sp_shape_{tag}_{}", t.tag()), intent, &mma);
    }
    // The selector: values, a register.
    for v in ["1", "2", "3", "-1", "nv"] {
        let mut mma = Mma::new_sparse(t, 16, false, 0);
        if let Some(sp) = &mut mma.sparse {
            sp.1 = v.to_string();
        }
        let intent = match (v, fam) {
            ("1", Fam::Half | Fam::Tf32) => Intent::Valid,
            _ => Intent::Invalid,
        };
        g.mma(format!("sp_sel_{}_{}", value_tag(v), t.tag()), intent, &mma);
    }
}

/// The metadata operand: register types, vectors, an immediate, a special register.
fn sparse_metadata(g: &mut Gen, t: Types) {
    for (tag, v) in [
        ("f32", "f0"),
        ("s32", "s0"),
        ("u32", "u0"),
        ("f16x2", "x0"),
        ("b16", "w0"),
        ("f16", "v0"),
        ("b64", "q0"),
        ("f64", "g0"),
        ("vec2", "{dw, nv}"),
        ("vec_mixed", "{x0, u0}"),
        ("imm", "5"),
        ("tid", "%tid.x"),
    ] {
        let mut mma = Mma::new_sparse(t, 16, false, 0);
        if let Some(sp) = &mut mma.sparse {
            sp.0 = v.to_string();
        }
        g.mma(format!("sp_meta_{tag}_{}", t.tag()), Intent::Probe, &mma);
    }
}

/// Operand counts off by one, a short A fragment, a repeated `.sp`.
fn sparse_operand_forms(g: &mut Gen, t: Types) {
    // One operand too few (no selector) and one too many.
    let mut mma = Mma::new_sparse(t, 16, false, 0);
    mma.sparse = Some(("dw".to_string(), String::new()));
    let mut text = mma.render().replace("dw, , ", "dw, ");
    g.push(
        format!("sp_ops_no_sel_{}", t.tag()),
        Intent::Invalid,
        &sparse_kernel(&text, t),
    );
    text = Mma::new_sparse(t, 16, false, 0)
        .render()
        .replace(';', ", 0;");
    g.push(
        format!("sp_ops_extra_{}", t.tag()),
        Intent::Invalid,
        &sparse_kernel(&text, t),
    );
    // Register A: four registers, and two.
    let mut mma = Mma::new_sparse(t, 16, true, 0);
    mma.a_frag = Some(("a", 2));
    g.mma(format!("sp_rega_v2_{}", t.tag()), Intent::Invalid, &mma);
    // A repeated `.sp`.
    let text = Mma::new_sparse(t, 16, false, 0)
        .render()
        .replacen(".sp", ".sp.sp", 1);
    g.push(
        format!("sp_twice_{}", t.tag()),
        Intent::Invalid,
        &sparse_kernel(&text, t),
    );
}

/// PTX ISA versions and targets.
fn sparse_versions_and_targets(g: &mut Gen, t: Types) {
    let mma = Mma::new_sparse(t, 64, false, 0);
    for v in ["8.0", "8.1", "8.2", "8.3", "8.4"] {
        let mut k = Kernel::with_mma(&mma);
        k.version = v;
        let need = if t.mixed_int() { "8.4" } else { "8.2" };
        let intent = if v < need {
            Intent::Invalid
        } else {
            Intent::Valid
        };
        g.push(
            format!("sp_version_{}_{}", v.replace('.', "_"), t.tag()),
            intent,
            &k,
        );
    }
    let mut k = sparse_kernel(&mma.render(), t);
    k.target = "sm_90";
    g.push_arch(
        format!("sp_target_sm_90_{}", t.tag()),
        Intent::Invalid,
        "sm_90",
        &k,
    );
}

/// A kernel around one sparse instruction text, at the version its types need.
fn sparse_kernel(text: &str, t: Types) -> Kernel {
    Kernel {
        version: if t.mixed_int() { "8.4" } else { "8.2" },
        target: "sm_90a",
        body: pipeline(text),
    }
}

/// Every type combination x every N of its table x both A forms.
fn valid_combinations(g: &mut Gen) {
    let mut i = 0usize;
    for t in valid_types() {
        for n in t.fam().ns() {
            for rega in [false, true] {
                let mma = Mma::new(t, n, rega, i);
                i += 1;
                let name = format!("ok_{}_n{n}_{}", t.tag(), form_tag(rega));
                g.mma(name, Intent::Valid, &mma);
            }
        }
    }
}

/// N outside the family's table, wrong K, wrong M.
fn bad_shapes(g: &mut Gen) {
    const NS: [u32; 11] = [4, 9, 20, 40, 72, 120, 232, 240, 248, 256, 264];
    for t in representatives() {
        let fam = t.fam();
        let table = fam.ns();
        for n in NS {
            if table.contains(&n) {
                continue;
            }
            // The newer ISA lists N = 240/256 for integers too: ptxas decides.
            let intent = if fam == Fam::Int && (n == 240 || n == 256) {
                Intent::Probe
            } else {
                Intent::Invalid
            };
            for rega in [false, true] {
                if rega && !matches!(n, 9 | 40 | 264) {
                    continue;
                }
                let mma = Mma::new(t, n, rega, n as usize);
                let name = format!("bad_n_{}_n{n}_{}", t.tag(), form_tag(rega));
                g.mma(name, intent, &mma);
            }
        }
    }
    for t in core_representatives() {
        for k in [8, 16, 32, 64, 128, 256] {
            if k == t.fam().k() {
                continue;
            }
            let mut mma = Mma::new(t, 64, false, 0);
            mma.k = k;
            g.mma(format!("bad_k_{}_k{k}", t.tag()), Intent::Invalid, &mma);
        }
        // Shapes of other instructions (known to ptxas's parser) and unknown ones.
        for (m, n, k) in [
            (16, 8, 16),
            (16, 8, 8),
            (8, 8, 4),
            (32, 8, 16),
            (64, 64, 64),
            (64, 40, 64),
            (64, 16, 48),
            (16, 32, 16),
            (64, 0, 16),
        ] {
            let mut mma = Mma::new(t, 64, false, 0);
            (mma.m, mma.n, mma.k) = (m, n, k);
            g.mma(
                format!("bad_shape_m{m}n{n}k{k}_{}", t.tag()),
                Intent::Invalid,
                &mma,
            );
        }
        for m in [32, 128] {
            let mut mma = Mma::new(t, 64, false, 0);
            mma.m = m;
            g.mma(format!("bad_m_{}_m{m}", t.tag()), Intent::Invalid, &mma);
        }
    }
}

/// Every (dtype, atype, btype) triple outside the tables.
fn bad_types(g: &mut Gen) {
    const IN: [&str; 8] = ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1"];
    const D: [&str; 3] = ["f16", "f32", "s32"];
    let valid = valid_types();
    // The D type of a's table (f32 for floating point, s32 otherwise).
    let natural = |a: &str| match Fam::of(a) {
        Fam::Int | Fam::Bit => "s32",
        _ => "f32",
    };
    for d in D {
        for a in IN {
            for b in IN {
                let t = Types::new(d, a, b);
                // Mismatched a/b under a's natural D; same a/b under every D.
                if valid.contains(&t) || (a != b && d != natural(a)) {
                    continue;
                }
                let mma = Mma::new(t, 64, false, 0);
                g.mma(format!("bad_types_{}", t.tag()), Intent::Invalid, &mma);
            }
        }
    }
    // D types no table has.
    for d in ["f64", "bf16", "s8", "u32", "b32", "tf32", "e4m3"] {
        for (a, b) in [("f16", "f16"), ("s8", "s8")] {
            let t = Types::new(d, a, b);
            let mut mma = Mma::new(t, 16, false, 0);
            mma.d_count = 8;
            mma.d_pool = if a == "s8" { "s" } else { "f" };
            g.mma(format!("bad_dtype_{}", t.tag()), Intent::Invalid, &mma);
        }
    }
    // Input types no table has.
    for a in ["f32", "f64", "s32", "u4", "s4", "b16"] {
        let t = Types::new("f32", a, a);
        let mut mma = Mma::new(t, 16, false, 0);
        mma.k = 16;
        g.mma(format!("bad_atype_{}", t.tag()), Intent::Invalid, &mma);
    }
    // b1 needs `.and.popc`; `.and`/`.popc` belong to b1 only.
    let b1 = Types::new("s32", "b1", "b1");
    for (tag, tail) in [
        ("none", vec![]),
        ("and", vec!["and"]),
        ("popc", vec!["popc"]),
        ("xor_popc", vec!["xor", "popc"]),
        ("or_popc", vec!["or", "popc"]),
        ("popc_and", vec!["popc", "and"]),
        ("popc_popc", vec!["popc", "popc"]),
        ("and_and_popc", vec!["and", "and", "popc"]),
        ("xor_and", vec!["xor", "and"]),
        ("and_popc_popc", vec!["and", "popc", "popc"]),
        ("and_and", vec!["and", "and"]),
    ] {
        let mut mma = Mma::new(b1, 64, false, 0);
        mma.tail = tail;
        g.mma(format!("bad_b1_op_{tag}"), Intent::Invalid, &mma);
    }
    for t in representatives() {
        if t.fam() == Fam::Bit {
            continue;
        }
        let mut mma = Mma::new(t, 64, false, 0);
        mma.tail = vec!["and", "popc"];
        g.mma(format!("bad_and_popc_{}", t.tag()), Intent::Invalid, &mma);
    }
}

/// `.satfinite` on non-integers, missing/extra/unknown modifiers.
fn bad_modifiers(g: &mut Gen) {
    for t in representatives() {
        let fam = t.fam();
        if fam == Fam::Int {
            // Valid in both positions? The ISA puts it after the shape.
            let mut mma = Mma::new(t, 32, false, 0);
            mma.sat_pos = SatPos::AtEnd;
            g.mma(format!("probe_sat_at_end_{}", t.tag()), Intent::Probe, &mma);
            continue;
        }
        for pos in [SatPos::AfterShape, SatPos::AtEnd] {
            let t2 = Types {
                satfinite: true,
                ..t
            };
            let mut mma = Mma::new(t2, 32, false, 0);
            mma.sat_pos = pos;
            let p = if pos == SatPos::AfterShape {
                "after_shape"
            } else {
                "at_end"
            };
            g.mma(
                format!("bad_satfinite_{}_{p}", t.tag()),
                Intent::Invalid,
                &mma,
            );
        }
    }
    for t in [
        Types::new("f32", "f16", "f16"),
        Types::new("s32", "s8", "s8"),
    ] {
        for (tag, head) in [
            ("no_sync", vec!["aligned"]),
            ("no_aligned", vec!["sync"]),
            ("no_sync_aligned", vec![]),
            ("aligned_sync", vec!["aligned", "sync"]),
        ] {
            let mut mma = Mma::new(t, 16, false, 0);
            mma.head = head;
            let intent = if tag == "aligned_sync" {
                Intent::Probe
            } else {
                Intent::Invalid
            };
            g.mma(format!("bad_head_{tag}_{}", t.tag()), intent, &mma);
        }
        // Unknown extra modifiers.
        for extra in ["rn", "relu", "ftz", "sat"] {
            let mut mma = Mma::new(t, 16, false, 0);
            mma.tail.push(extra);
            g.mma(
                format!("bad_extra_mod_{extra}_{}", t.tag()),
                Intent::Invalid,
                &mma,
            );
        }
        // Missing shape / missing one type.
        let mma = Mma::new(t, 16, false, 0);
        let text = mma.render();
        let shape = format!(".m64n16k{}", t.fam().k());
        let k = Kernel {
            body: pipeline(&text.replacen(&shape, "", 1)),
            ..Kernel::with_mma(&mma)
        };
        g.push(format!("bad_no_shape_{}", t.tag()), Intent::Invalid, &k);
        let k = Kernel {
            body: pipeline(&text.replacen(&format!(".{}.", t.d), ".", 1)),
            ..Kernel::with_mma(&mma)
        };
        g.push(format!("bad_no_dtype_{}", t.tag()), Intent::Invalid, &k);
        let k = Kernel {
            body: pipeline(&text.replacen(&format!(".{} ", t.b), " ", 1)),
            ..Kernel::with_mma(&mma)
        };
        g.push(format!("bad_no_btype_{}", t.tag()), Intent::Invalid, &k);
    }
}

/// Trans immediates where the form has none, scale immediates on int/b1,
/// missing immediates.
fn bad_operand_counts(g: &mut Gen) {
    for t in core_representatives() {
        let fam = t.fam();
        let (nd, nr) = fam.imm_count();
        for rega in [false, true] {
            let base = if rega { nr } else { nd };
            let deltas: &[i32] = if base == 0 {
                &[1, 2, 4]
            } else {
                &[-2, -1, 1, 2]
            };
            for &delta in deltas {
                let count = base as i32 + delta;
                if count < 0 {
                    continue;
                }
                let mut mma = Mma::new(t, 32, rega, 5);
                mma.imms = (0..count as usize)
                    .map(|j| if j < 2 { "1" } else { "0" }.to_string())
                    .collect();
                let what = match (fam, delta > 0) {
                    (Fam::Int | Fam::Bit, true) if count <= 2 => "scale",
                    (Fam::Int | Fam::Bit, true) => "scale_trans",
                    (Fam::Tf32 | Fam::Fp8, true) => "trans",
                    (Fam::Half, true) if rega => "trans_a",
                    (Fam::Half, true) => "extra",
                    (_, false) => "missing",
                };
                let name = format!("bad_imms_{what}_{}_{}_{count}", t.tag(), form_tag(rega));
                g.mma(name, Intent::Invalid, &mma);
            }
        }
        // No scale-d at all.
        let mut mma = Mma::new(t, 32, false, 1);
        mma.imms.clear();
        let text = mma.render().replace(", 1;", ";");
        let k = Kernel {
            body: pipeline(&text),
            ..Kernel::with_mma(&mma)
        };
        g.push(format!("bad_no_scale_d_{}", t.tag()), Intent::Invalid, &k);
    }
}

/// Accumulator and A-fragment vectors of the wrong length.
fn bad_register_counts(g: &mut Gen) {
    for t in representatives() {
        let fam = t.fam();
        let top = *fam.ns().last().expect("non-empty table");
        for n in [8, 64, top] {
            let right = t.acc_regs(n);
            let other = if t.d == "f16" {
                n as usize / 2
            } else {
                n as usize / 4
            };
            let mut counts = vec![("minus1", right - 1)];
            if n == 64 {
                counts.extend([
                    ("plus1", right + 1),
                    ("double", right * 2),
                    ("other_dtype", other),
                ]);
            }
            let mut seen = vec![right];
            for (tag, c) in counts {
                if seen.contains(&c) || c == 0 {
                    continue;
                }
                seen.push(c);
                for rega in [false, true] {
                    if rega && (n != 64 || !tag.ends_with('1')) {
                        continue;
                    }
                    let mut mma = Mma::new(t, n, rega, 0);
                    mma.d_count = c;
                    let name = format!("bad_acc_count_{}_n{n}_{tag}_{}", t.tag(), form_tag(rega));
                    g.mma(name, Intent::Invalid, &mma);
                }
            }
        }
    }
    for t in core_representatives() {
        for c in [2, 3, 5, 8] {
            let mut mma = Mma::new(t, 64, true, 0);
            mma.a_frag = Some(("a", c));
            g.mma(
                format!("bad_afrag_count_{}_{c}", t.tag()),
                Intent::Invalid,
                &mma,
            );
        }
        // A fragment given as a single register / B as a vector.
        let mut mma = Mma::new(t, 64, false, 0);
        mma.a_desc = "a0";
        g.mma(
            format!("bad_a_scalar_b32_{}", t.tag()),
            Intent::Invalid,
            &mma,
        );
        let mut mma = Mma::new(t, 64, false, 0);
        mma.b_desc = "{a0, a1, a2, a3}";
        g.mma(format!("bad_b_vector_{}", t.tag()), Intent::Invalid, &mma);
    }
}

/// Immediates out of range: scale-d, imm-scale-a/b, imm-trans-a/b.
fn bad_values(g: &mut Gen) {
    for t in core_representatives() {
        let fam = t.fam();
        for rega in [false, true] {
            for v in ["2", "-1", "1.0", "0x1"] {
                if rega && v != "2" {
                    continue;
                }
                let mut mma = Mma::new(t, 16, rega, 1);
                mma.scale_d = v.to_string();
                let intent = if v == "0x1" {
                    Intent::Probe
                } else {
                    Intent::Invalid
                };
                let vt = value_tag(v);
                let name = format!("bad_value_scale_d_{vt}_{}_{}", t.tag(), form_tag(rega));
                g.mma(name, intent, &mma);
            }
            let (nd, nr) = fam.imm_count();
            let count = if rega { nr } else { nd };
            for slot in 0..count {
                let which = match (slot, count) {
                    (0, _) => "scale_a",
                    (1, _) => "scale_b",
                    (2, 4) => "trans_a",
                    _ => "trans_b",
                };
                let bad: &[&str] = match (slot < 2, rega) {
                    (true, false) => &["0", "2"],
                    (true, true) => &["0"],
                    (false, false) => &["2", "-1"],
                    (false, true) => &["2"],
                };
                for v in bad {
                    let mut mma = Mma::new(t, 16, rega, 0);
                    mma.imms[slot] = v.to_string();
                    let name = format!(
                        "bad_value_{which}_{}_{}_{}",
                        value_tag(v),
                        t.tag(),
                        form_tag(rega)
                    );
                    g.mma(name, Intent::Invalid, &mma);
                }
                // A register where an immediate belongs.
                if rega {
                    continue;
                }
                let mut mma = Mma::new(t, 16, rega, 0);
                mma.imms[slot] = "nv".to_string();
                let name = format!("bad_value_{which}_reg_{}_{}", t.tag(), form_tag(rega));
                g.mma(name, Intent::Invalid, &mma);
            }
        }
        // scale-d forms: negated predicate, a 32-bit register.
        for (tag, v, intent) in [
            ("not_pred", "!p", Intent::Probe),
            ("b32_reg", "nv", Intent::Invalid),
        ] {
            let mut mma = Mma::new(t, 16, false, 1);
            mma.scale_d = v.to_string();
            g.mma(format!("probe_scale_d_{tag}_{}", t.tag()), intent, &mma);
        }
    }
}

fn value_tag(v: &str) -> String {
    v.replace('-', "m").replace('.', "p")
}

/// Register types of D, A and the descriptors (the ISA names no types).
fn register_types(g: &mut Gen) {
    let mut reps = core_representatives();
    reps.insert(1, Types::new("f16", "f16", "f16"));
    reps.insert(2, Types::new("f32", "bf16", "bf16"));
    reps.push(Types::new("s32", "u8", "s8"));
    let core = core_representatives();
    for t in reps {
        register_types_of(g, t, &core);
    }
    vector_element_types(g);
}

/// [`register_types`] for one type combination `t` (`core`: the core
/// representatives, which also get the rarer register types).
fn register_types_of(g: &mut Gen, t: Types, core: &[Types]) {
    let n = 16;
    for pool in ["f", "h", "s", "u", "x"] {
        if pool == acc_pool(t.d) {
            continue;
        }
        let mut mma = Mma::new(t, n, false, 0);
        mma.d_pool = pool;
        g.mma(
            format!("probe_regtype_d_{}_{}", pool_type(pool), t.tag()),
            Intent::Probe,
            &mma,
        );
    }
    let a_pools: &[&str] = if core.contains(&t) {
        &["f", "s", "u", "x", "w", "v", "q"]
    } else {
        &["f", "x"]
    };
    for &pool in a_pools {
        let mut mma = Mma::new(t, n, true, 0);
        mma.a_frag = Some((pool, 4));
        g.mma(
            format!("probe_regtype_a_{}_{}", pool_type(pool), t.tag()),
            Intent::Probe,
            &mma,
        );
    }
    for (reg, ty) in [
        ("ua", "u64"),
        ("dw", "b32"),
        ("g0", "f64"),
        ("w0", "b16"),
        ("p", "pred"),
        ("f0", "f32"),
    ] {
        if !core.contains(&t) && !matches!(ty, "u64" | "b32") {
            continue;
        }
        let mut mma = Mma::new(t, n, false, 0);
        mma.a_desc = reg;
        g.mma(
            format!("probe_regtype_adesc_{ty}_{}", t.tag()),
            Intent::Probe,
            &mma,
        );
    }
    for (reg, ty) in [("sa", "s64"), ("dw", "b32"), ("g0", "f64")] {
        let mut mma = Mma::new(t, n, false, 0);
        mma.b_desc = reg;
        g.mma(
            format!("probe_regtype_bdesc_{ty}_{}", t.tag()),
            Intent::Probe,
            &mma,
        );
    }
    // A fragment registers of different types; D as a scalar; D of mixed types.
    let mut mma = Mma::new(t, n, true, 0);
    mma.a_override = Some("{a0, f1, s2, x3}".into());
    g.mma(
        format!("probe_regtype_a_mixed_{}", t.tag()),
        Intent::Probe,
        &mma,
    );
    let mut mma = Mma::new(t, n, false, 0);
    mma.d_override = Some(format!("{}0", acc_pool(t.d)));
    g.mma(format!("bad_d_scalar_{}", t.tag()), Intent::Invalid, &mma);
    let mut mma = Mma::new(t, n, false, 0);
    mma.d_mixed = true;
    g.mma(format!("bad_d_mixed_{}", t.tag()), Intent::Invalid, &mma);
}

/// Vectors whose elements differ only by signedness or by an untyped `.b32`.
fn vector_element_types(g: &mut Gen) {
    let t = Types::new("f32", "f16", "f16");
    let count = t.acc_regs(16);
    let tail = |pool: &str| -> String {
        (1..count)
            .map(|i| format!(", {pool}{i}"))
            .collect::<String>()
    };
    for (tag, d) in [
        ("s32_b32", format!("{{s0{}}}", tail("h"))),
        ("u32_s32", format!("{{u0{}}}", tail("s"))),
        ("f16x2_b32", format!("{{x0{}}}", tail("h"))),
    ] {
        let mut mma = Mma::new(t, 16, false, 0);
        mma.d_override = Some(d);
        g.mma(
            format!("probe_vec_d_{tag}_{}", t.tag()),
            Intent::Probe,
            &mma,
        );
    }
    for rep in [t, Types::new("f32", "tf32", "tf32")] {
        for (tag, a) in [
            ("f32_b32", "{f0, a1, a2, a3}"),
            ("s32_u32", "{s0, u1, u2, u3}"),
            ("scalar_b32", "a0"),
        ] {
            let mut mma = Mma::new(rep, 16, true, 0);
            mma.a_override = Some(a.into());
            g.mma(
                format!("probe_vec_a_{tag}_{}", rep.tag()),
                Intent::Probe,
                &mma,
            );
        }
    }
}

fn pool_type(pool: &str) -> &'static str {
    POOLS
        .iter()
        .find(|(p, _, _)| *p == pool)
        .map_or("?", |(_, ty, _)| ty)
}

/// `.version` and `.target` / `-arch` requirements.
fn versions_and_targets(g: &mut Gen) {
    for t in representatives() {
        let mma = Mma::new(t, 64, false, 0);
        for v in ["7.8", "8.0", "8.5", "9.0"] {
            let mut k = Kernel::with_mma(&mma);
            k.version = v;
            let intent = if v < "8.0" || (t.mixed_int() && v < "8.4") {
                Intent::Invalid
            } else {
                Intent::Valid
            };
            g.push(
                format!("version_{}_{}", v.replace('.', "_"), t.tag()),
                intent,
                &k,
            );
        }
    }
    for t in core_representatives() {
        let mma = Mma::new(t, 64, false, 0);
        for target in ["sm_90", "sm_80", "sm_100a"] {
            let mut k = Kernel::with_mma(&mma);
            k.target = target;
            let intent = if target.starts_with("sm_90a") {
                Intent::Probe
            } else {
                Intent::Invalid
            };
            let tt = target.replace(", ", "_");
            g.push(format!("target_{tt}_{}", t.tag()), intent, &k);
        }
        for (target, arch) in [("sm_90a", "sm_90"), ("sm_90", "sm_90")] {
            let k = Kernel {
                target,
                ..Kernel::with_mma(&mma)
            };
            g.push_arch(
                format!("arch_{arch}_target_{target}_{}", t.tag()),
                Intent::Invalid,
                arch,
                &k,
            );
        }
    }
    // Mixed s8/u8 needs PTX ISA 8.4.
    for (a, b) in [("s8", "u8"), ("u8", "s8")] {
        for sat in [false, true] {
            let t = Types {
                satfinite: sat,
                ..Types::new("s32", a, b)
            };
            for rega in [false, true] {
                if rega && sat {
                    continue;
                }
                let mma = Mma::new(t, 32, rega, 0);
                for v in ["7.8", "8.0", "8.3", "8.4", "8.7"] {
                    let mut k = Kernel::with_mma(&mma);
                    k.version = v;
                    let intent = if v < "8.4" {
                        Intent::Invalid
                    } else {
                        Intent::Valid
                    };
                    g.push(
                        format!(
                            "version_{}_mixed_{}_{}",
                            v.replace('.', "_"),
                            t.tag(),
                            form_tag(rega)
                        ),
                        intent,
                        &k,
                    );
                }
            }
        }
    }
}

/// The probes of [`other_wgmma_ops`]: a tag, what the ISA says of it, and
/// the fence, commit and wait that replace the pipeline's (empty: kept).
const OTHER_OP_CASES: [(&str, Intent, [&str; 3]); 18] = [
    (
        "wait_group_reg",
        Intent::Invalid,
        ["", "", "wgmma.wait_group.sync.aligned nv;"],
    ),
    (
        "wait_group_none",
        Intent::Invalid,
        ["", "", "wgmma.wait_group.sync.aligned;"],
    ),
    (
        "wait_group_neg",
        Intent::Invalid,
        ["", "", "wgmma.wait_group.sync.aligned -1;"],
    ),
    (
        "wait_group_two",
        Intent::Invalid,
        ["", "", "wgmma.wait_group.sync.aligned 0, 1;"],
    ),
    (
        "wait_group_7",
        Intent::Valid,
        ["", "", "wgmma.wait_group.sync.aligned 7;"],
    ),
    (
        "wait_group_hex",
        Intent::Probe,
        ["", "", "wgmma.wait_group.sync.aligned 0x1;"],
    ),
    (
        "wait_group_no_sync",
        Intent::Invalid,
        ["", "", "wgmma.wait_group.aligned 0;"],
    ),
    (
        "wait_group_no_aligned",
        Intent::Invalid,
        ["", "", "wgmma.wait_group.sync 0;"],
    ),
    (
        "fence_operand",
        Intent::Invalid,
        ["wgmma.fence.sync.aligned 0;", "", ""],
    ),
    (
        "fence_no_sync",
        Intent::Invalid,
        ["wgmma.fence.aligned;", "", ""],
    ),
    (
        "fence_no_aligned",
        Intent::Invalid,
        ["wgmma.fence.sync;", "", ""],
    ),
    (
        "commit_operand",
        Intent::Invalid,
        ["", "wgmma.commit_group.sync.aligned 0;", ""],
    ),
    (
        "commit_no_sync",
        Intent::Invalid,
        ["", "wgmma.commit_group.aligned;", ""],
    ),
    (
        "commit_no_aligned",
        Intent::Invalid,
        ["", "wgmma.commit_group.sync;", ""],
    ),
    (
        "wait_group_float",
        Intent::Invalid,
        ["", "", "wgmma.wait_group.sync.aligned 1.0;"],
    ),
    (
        "fence_unknown_mod",
        Intent::Invalid,
        ["wgmma.fence.sync.aligned.foo;", "", ""],
    ),
    (
        "fence_relu",
        Intent::Invalid,
        ["wgmma.fence.sync.aligned.relu;", "", ""],
    ),
    (
        "commit_no_sync_operand",
        Intent::Invalid,
        ["", "wgmma.commit_group.aligned 1;", ""],
    ),
];

/// `wgmma.fence` / `commit_group` / `wait_group` operand and modifier rules.
fn other_wgmma_ops(g: &mut Gen) {
    let mma = Mma::new(Types::new("f32", "f16", "f16"), 16, false, 0).render();
    for (tag, intent, [fence, commit, wait]) in OTHER_OP_CASES {
        let mut body = pipeline(&mma);
        if !fence.is_empty() {
            body[0] = fence.to_string();
        }
        if !commit.is_empty() {
            body[2] = commit.to_string();
        }
        if !wait.is_empty() {
            body[3] = wait.to_string();
        }
        let k = Kernel {
            version: "8.0",
            target: "sm_90a",
            body,
        };
        g.push(format!("ops_{tag}"), intent, &k);
    }
}

// ---------------------------------------------------------------------------
// Recorded verdicts.

/// One row of `verdicts.tsv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The [`TableCase::name`] of the case this verdict is for.
    pub name: String,
    /// ptxas's exit status (0 = accepted).
    pub exit: i32,
    /// ptxas's first error (or fatal) line without `ptxas FILE, line N; `,
    /// e.g. `error   : Unknown modifier '.m64n9k16'`; empty when accepted.
    pub first_error: String,
}

impl Verdict {
    /// `true` when ptxas accepted the case (exit status 0).
    pub fn accepted(&self) -> bool {
        self.exit == 0
    }
}

/// The first line of the file.
pub fn verdicts_header(ptxas_version: &str) -> String {
    format!(
        "# Generated by `cargo xtask oracle record-table` from ptxas {ptxas_version} \
         (ori_oracle::wgmma_table cases). Do not edit."
    )
}

/// Writes the verdicts file: header, column names, one row per case.
pub fn render_verdicts(ptxas_version: &str, rows: &[Verdict]) -> String {
    let mut s = verdicts_header(ptxas_version);
    s.push_str("\n# name\texit\tfirst_error\n");
    for r in rows {
        let _ = writeln!(s, "{}\t{}\t{}", r.name, r.exit, r.first_error);
    }
    s
}

/// Reads the verdicts file (`#` lines are comments).
pub fn parse_verdicts(text: &str) -> Result<Vec<Verdict>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut f = line.splitn(3, '\t');
        let (Some(name), Some(exit), first) = (f.next(), f.next(), f.next()) else {
            return Err(format!(
                "line {}: expected NAME<TAB>EXIT<TAB>MESSAGE",
                i + 1
            ));
        };
        let exit = exit
            .parse()
            .map_err(|e| format!("line {}: bad exit status {exit:?}: {e}", i + 1))?;
        out.push(Verdict {
            name: name.to_string(),
            exit,
            first_error: first.unwrap_or("").to_string(),
        });
    }
    Ok(out)
}

/// `ptxas k.ptx, line 9; error   : MSG` -> `error   : MSG`; `ptxas fatal   : MSG`
/// -> `fatal   : MSG`. Lines that are not errors or fatal errors give `None`.
pub fn error_text(line: &str) -> Option<String> {
    let rest = line.trim_end();
    let rest = rest.strip_prefix("ptxas").map_or(rest, str::trim_start);
    // An optional `FILE, line N;` location.
    let rest = match rest.find(';') {
        Some(semi)
            if rest[..semi]
                .rsplit_once(", line ")
                .is_some_and(|(_, n)| n.trim().parse::<u32>().is_ok()) =>
        {
            rest[semi + 1..].trim_start()
        }
        _ => rest,
    };
    let colon = rest.find(':')?;
    match rest[..colon].trim() {
        "error" | "fatal" => Some(rest.to_string()),
        _ => None,
    }
}

/// The first error of a run's output lines, as [`error_text`] gives it.
pub fn first_error<S: AsRef<str>>(lines: &[S]) -> String {
    lines
        .iter()
        .find_map(|l| error_text(l.as_ref()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_stable() {
        let a = table_cases();
        let b = table_cases();
        assert_eq!(a, b);
        let mut seen = HashSet::new();
        for c in &a {
            assert!(seen.insert(c.name.clone()), "duplicate name {}", c.name);
            assert!(
                c.name
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_'),
                "{}",
                c.name
            );
        }
        let valid = a.iter().filter(|c| c.intent == Intent::Valid).count();
        assert!(valid > 1000, "{valid}");
        let mut groups = std::collections::BTreeMap::new();
        for c in &a {
            let key: Vec<&str> = c.name.split('_').take(2).collect();
            *groups.entry(key.join("_")).or_insert(0) += 1;
        }
        // Dense rows stay under 2000, sparse ones (`sp_*`) under 300.
        let sparse = a.iter().filter(|c| c.name.starts_with("sp_")).count();
        assert!(a.len() - sparse < 2000, "{} {groups:?}", a.len());
        assert!(sparse < 300, "{sparse}");
    }

    #[test]
    fn valid_cases_follow_the_isa() {
        let cases = table_cases();
        let get = |n: &str| {
            cases
                .iter()
                .find(|c| c.name == n)
                .unwrap_or_else(|| panic!("no case {n}"))
        };
        let c = get("ok_f16_f16_f32_n8_rega");
        assert!(c.ptx.contains(
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {f0, f1, f2, f3}, {a0, a1, a2, a3}, db, "
        ));
        let c = get("ok_f16_f16_f16_n72_desc");
        assert!(c.ptx.contains("{h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15, h16, h17}, da, db,"));
        let c = get("ok_s8_u8_s32_sat_n224_desc");
        assert!(c.ptx.contains(".m64n224k32.satfinite.s32.s8.u8 {s0,"));
        assert!(c.ptx.contains(".version 8.4"));
        let c = get("ok_b1_b1_s32_n256_rega");
        assert!(c.ptx.contains(".m64n256k256.s32.b1.b1.and.popc {s0,"));
        // Operand counts: 8 / 7 for half, 6 for tf32/fp8, 4 for int/b1.
        let ops = |name: &str| {
            let line = get(name)
                .ptx
                .lines()
                .find(|l| l.contains("mma_async"))
                .unwrap()
                .to_string();
            let after = line.rsplit_once('}').unwrap().1;
            after.split(',').count() - 1
        };
        assert_eq!(ops("ok_f16_f16_f32_n8_desc"), 7);
        assert_eq!(ops("ok_f16_f16_f32_n8_rega"), 5);
        assert_eq!(ops("ok_tf32_tf32_f32_n8_desc"), 5);
        assert_eq!(ops("ok_e4m3_e5m2_f16_n8_rega"), 4);
        assert_eq!(ops("ok_s8_s8_s32_n8_desc"), 3);
    }

    #[test]
    fn error_text_strips_the_location() {
        assert_eq!(
            error_text("ptxas k.ptx, line 9; error   : Unknown modifier '.m64n9k16'").as_deref(),
            Some("error   : Unknown modifier '.m64n9k16'")
        );
        assert_eq!(
            error_text("ptxas fatal   : PTX with .target 'sm_90a' cannot be compiled for architecture 'sm_90'").as_deref(),
            Some("fatal   : PTX with .target 'sm_90a' cannot be compiled for architecture 'sm_90'")
        );
        assert_eq!(
            error_text("ptxas info    : (C7517) warpgroup.wait ..."),
            None
        );
        assert_eq!(
            first_error(&[
                "ptxas k.ptx, line 3; warning : w",
                "ptxas k.ptx, line 4; error   : e"
            ]),
            "error   : e"
        );
    }

    #[test]
    fn verdicts_round_trip() {
        let rows = vec![
            Verdict {
                name: "a".into(),
                exit: 0,
                first_error: String::new(),
            },
            Verdict {
                name: "b".into(),
                exit: 255,
                first_error: "error   : x".into(),
            },
        ];
        let text = render_verdicts("13.0.88", &rows);
        assert_eq!(parse_verdicts(&text).unwrap(), rows);
    }
}

/// One fault of an invalid case; [`fault_pairs`] combines two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    NoSync,
    Satfinite,
    ShapeK64,
    ShapeN9,
    Types,
    AccMinus1,
    ScaleD2,
    DMixed,
    Relu,
    Rounding,
    Version78,
    TargetSm90,
}

const FAULTS: [Fault; 12] = [
    Fault::NoSync,
    Fault::Satfinite,
    Fault::ShapeK64,
    Fault::ShapeN9,
    Fault::Types,
    Fault::AccMinus1,
    Fault::ScaleD2,
    Fault::DMixed,
    Fault::Relu,
    Fault::Rounding,
    Fault::Version78,
    Fault::TargetSm90,
];

impl Fault {
    fn tag(self) -> &'static str {
        match self {
            Fault::NoSync => "nosync",
            Fault::Satfinite => "sat",
            Fault::ShapeK64 => "k64",
            Fault::ShapeN9 => "n9",
            Fault::Types => "types",
            Fault::AccMinus1 => "acc",
            Fault::ScaleD2 => "scaled2",
            Fault::DMixed => "dmixed",
            Fault::Relu => "relu",
            Fault::Rounding => "rn",
            Fault::Version78 => "v78",
            Fault::TargetSm90 => "sm90",
        }
    }
    /// Whether the fault changes anything for these types.
    fn applies(self, t: Types) -> bool {
        !(self == Fault::Satfinite && t.fam() == Fam::Int)
    }
    fn apply_mma(self, m: &mut Mma) {
        match self {
            Fault::NoSync => m.head = vec!["aligned"],
            Fault::Satfinite => m.types.satfinite = true,
            Fault::ShapeK64 => m.k = 64,
            Fault::ShapeN9 => m.n = 9,
            Fault::Types => m.types.b = if m.types.a == "tf32" { "f16" } else { "tf32" },
            Fault::AccMinus1 => m.d_count -= 1,
            Fault::ScaleD2 => m.scale_d = "2".into(),
            Fault::DMixed => m.d_mixed = true,
            Fault::Relu => m.tail.push("relu"),
            Fault::Rounding => m.tail.push("rn"),
            Fault::Version78 | Fault::TargetSm90 => {}
        }
    }
    fn apply_kernel(self, k: &mut Kernel) {
        match self {
            Fault::Version78 => k.version = "7.8",
            Fault::TargetSm90 => k.target = "sm_90",
            _ => {}
        }
    }
}

/// Every pair of two faults on three representatives: which error ptxas
/// reports first shows the order of its checks.
fn fault_pairs(g: &mut Gen) {
    let reps = [
        (Types::new("f32", "f16", "f16"), false),
        (Types::new("s32", "s8", "u8"), true),
    ];
    for (t, rega) in reps {
        for (i, f1) in FAULTS.iter().enumerate() {
            for f2 in &FAULTS[i + 1..] {
                if !f1.applies(t) || !f2.applies(t) {
                    continue;
                }
                let mut mma = Mma::new(t, 64, rega, 1);
                f1.apply_mma(&mut mma);
                f2.apply_mma(&mut mma);
                let mut k = Kernel::with_mma(&mma);
                if t.mixed_int() {
                    k.version = "8.4";
                }
                f1.apply_kernel(&mut k);
                f2.apply_kernel(&mut k);
                let name = format!(
                    "pair_{}_{}_{}_{}",
                    f1.tag(),
                    f2.tag(),
                    t.tag(),
                    form_tag(rega)
                );
                g.push(name, Intent::Invalid, &k);
            }
        }
    }
}
