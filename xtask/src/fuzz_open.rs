//! The open families of `cargo xtask fuzz-grammar`: statements of the
//! instructions whose modifiers the instruction table does not list (`ld`,
//! `st`, `atom`, `red`, the arithmetic, `cvt`, comparisons and selects,
//! `mov`), written from the PTX ISA 9.0's syntax for each.
//!
//! Users' kernels from generators ori has never met are mostly made of
//! these families, so what ptxas checks on them (types against register
//! sizes, required roundings, vector widths, scopes with semantics) is
//! measured here as the closed forms are: valid statements, and near
//! misses (a type the instruction does not take, a register of the wrong
//! size, an immediate where a register is written, a vector of the wrong
//! count, a scope without its semantics, a rounding missing or foreign).

use crate::fuzz_grammar::{Rng, Statement};

/// A statement before rendering: its family (for the tallies), its
/// opcode and modifiers, its operands.
struct Draft {
    family: &'static str,
    words: Vec<&'static str>,
    ops: Vec<String>,
}

/// A register of `bits` (the kernel's `%h`, `%r`, `%rd`, `%p`; 8-bit
/// values live in 16-bit registers).
fn reg(rng: &mut Rng, bits: u32) -> String {
    let k = rng.below(8);
    match bits {
        1 => format!("%p{k}"),
        8 | 16 => format!("%h{k}"),
        32 => format!("%r{k}"),
        _ => format!("%rd{k}"),
    }
}

/// The size in bits of a type word (`f16x2`: 32; `pred`: 1).
fn bits(ty: &str) -> u32 {
    match ty {
        "pred" => 1,
        "f16x2" | "bf16x2" | "e4m3x2" | "e5m2x2" => 32,
        _ => ty
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
            .unwrap_or(32),
    }
}

/// A value read of type `ty`: a register, now and then an immediate.
fn value(rng: &mut Rng, ty: &str) -> String {
    if ty != "pred" && rng.chance(15) {
        return if ty.starts_with('f') && rng.chance(70) {
            match ty {
                "f64" => "0d3FF0000000000000".into(),
                _ => "0f3F800000".into(),
            }
        } else {
            format!("{}", rng.below(64))
        };
    }
    reg(rng, bits(ty))
}

/// An address: a register, with an offset now and then.
fn address(rng: &mut Rng) -> String {
    let k = rng.below(8);
    match rng.below(4) {
        0 => format!("[%rd{k}+{}]", 4 * rng.below(16)),
        _ => format!("[%rd{k}]"),
    }
}

/// `{a, b, ...}` of `n` registers of `bits`.
fn vector(rng: &mut Rng, n: usize, bits: u32) -> String {
    let v: Vec<String> = (0..n).map(|_| reg(rng, bits)).collect();
    format!("{{{}}}", v.join(", "))
}

/// The count a `.vN` word gives (1 without one).
fn width(words: &[&str]) -> usize {
    words
        .iter()
        .find_map(|w| w.strip_prefix('v').and_then(|n| n.parse().ok()))
        .unwrap_or(1)
}

/// Pushes `w` with probability `percent`.
fn maybe(rng: &mut Rng, words: &mut Vec<&'static str>, percent: u64, w: &'static str) {
    if rng.chance(percent) {
        words.push(w);
    }
}

/// Pushes one of `set` with probability `percent`.
fn maybe_one(rng: &mut Rng, words: &mut Vec<&'static str>, percent: u64, set: &[&'static str]) {
    if rng.chance(percent) {
        words.push(*rng.pick(set));
    }
}

const SCOPES: &[&str] = &["cta", "cluster", "gpu", "sys"];
const LD_SPACES: &[&str] = &[
    "global",
    "shared",
    "shared::cta",
    "shared::cluster",
    "local",
    "const",
    "param",
    "param::entry",
];
const MEM_TYPES: &[&str] = &[
    "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f32",
    "f64",
];
const L1_EVICT: &[&str] = &[
    "L1::evict_normal",
    "L1::evict_unchanged",
    "L1::evict_first",
    "L1::evict_last",
    "L1::no_allocate",
];

/// The memory-ordering words of an `ld`/`st` (`order`: `acquire` for a
/// load, `release` for a store): none, `.weak`, `.volatile`,
/// `.relaxed.SCOPE`, `.ORDER.SCOPE`, `.mmio.relaxed.sys`.
fn memory_order(rng: &mut Rng, words: &mut Vec<&'static str>, order: &'static str) -> &'static str {
    match rng.below(8) {
        0 => {
            words.push("weak");
            "weak"
        }
        1 => {
            words.push("volatile");
            "volatile"
        }
        2 | 3 => {
            words.extend([*rng.pick(&["relaxed", order]), *rng.pick(SCOPES)]);
            "sem"
        }
        4 => {
            words.extend(["mmio", "relaxed", "sys"]);
            "mmio"
        }
        _ => "plain",
    }
}

/// A vector width and a type for a load or store: mostly within the
/// 128 bits of sm_90, sometimes beyond.
fn vec_and_type(rng: &mut Rng, words: &mut Vec<&'static str>) -> &'static str {
    let ty = *rng.pick(MEM_TYPES);
    if rng.chance(35) {
        let v = match bits(ty) {
            64 => *rng.pick(&["v2", "v2", "v4"]),
            128 => "v2",
            _ => *rng.pick(&["v2", "v4", "v4", "v8"]),
        };
        words.push(v);
    }
    words.push(ty);
    ty
}

/// The data operand of a load or store of `words`: a vector of the
/// `.vN` count or a scalar register of the type's size (8-bit types in a
/// 16- or 32-bit register; `.b128` in a pair's worth of 64-bit register).
fn data(rng: &mut Rng, words: &[&str], ty: &str) -> String {
    let b = match bits(ty) {
        8 => *rng.pick(&[16, 32]),
        128 => 64,
        b => b,
    };
    match width(words) {
        1 => reg(rng, b),
        n => vector(rng, n, b),
    }
}

/// `ld`: ordering, space, cache operator or eviction priorities, cache
/// hint, prefetch size, vector, type (9.7.9.8); `ld.global.nc` (9.7.9.9).
fn ld(rng: &mut Rng) -> Draft {
    let mut w = vec!["ld"];
    let nc = rng.chance(20);
    let order = if nc {
        "plain"
    } else {
        memory_order(rng, &mut w, "acquire")
    };
    if nc || order == "mmio" {
        w.push("global");
    } else {
        maybe_one(rng, &mut w, 80, LD_SPACES);
    }
    if nc {
        maybe_one(rng, &mut w, 30, &["ca", "cg", "cs"]);
        w.push("nc");
    }
    let hint = order != "volatile" && order != "mmio" && rng.chance(20);
    if order == "plain" && !nc {
        maybe_one(rng, &mut w, 25, &["ca", "cg", "cs", "lu", "cv"]);
    }
    if order != "volatile" && order != "mmio" {
        maybe_one(rng, &mut w, 20, L1_EVICT);
        maybe_one(
            rng,
            &mut w,
            8,
            &["L2::evict_normal", "L2::evict_first", "L2::evict_last"],
        );
    }
    if hint {
        w.push("L2::cache_hint");
    }
    if order != "mmio" {
        maybe_one(rng, &mut w, 15, &["L2::64B", "L2::128B", "L2::256B"]);
    }
    let ty = vec_and_type(rng, &mut w);
    let mut ops = vec![data(rng, &w, ty), address(rng)];
    if hint {
        ops.push(reg(rng, 64));
    }
    Draft {
        family: if nc { "ld.global.nc" } else { "ld" },
        words: w,
        ops,
    }
}

/// `st`: ordering, space, cache operator or eviction priority, cache
/// hint, vector, type (9.7.9.10).
fn st(rng: &mut Rng) -> Draft {
    let mut w = vec!["st"];
    let order = memory_order(rng, &mut w, "release");
    if order == "mmio" {
        w.push("global");
    } else {
        maybe_one(rng, &mut w, 80, &LD_SPACES[..5]);
    }
    if order == "plain" {
        maybe_one(rng, &mut w, 25, &["wb", "cg", "cs", "wt"]);
    }
    let hint = order != "volatile" && order != "mmio" && rng.chance(20);
    if order != "volatile" && order != "mmio" {
        maybe_one(rng, &mut w, 15, L1_EVICT);
    }
    if hint {
        w.push("L2::cache_hint");
    }
    let ty = vec_and_type(rng, &mut w);
    let mut ops = vec![address(rng), data(rng, &w, ty)];
    if hint {
        ops.push(reg(rng, 64));
    }
    Draft {
        family: "st",
        words: w,
        ops,
    }
}

/// The operations of `atom`/`red` and the types each takes (9.7.13.5-6).
const ATOM_OPS: &[(&str, &[&str])] = &[
    ("and", &["b32", "b64"]),
    ("or", &["b32", "b64"]),
    ("xor", &["b32", "b64"]),
    ("exch", &["b32", "b64", "b128"]),
    ("cas", &["b16", "b32", "b64", "b128"]),
    (
        "add",
        &[
            "u32", "s32", "u64", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2",
        ],
    ),
    ("inc", &["u32"]),
    ("dec", &["u32"]),
    ("min", &["u32", "s32", "u64", "s64", "f16", "bf16"]),
    ("max", &["u32", "s32", "u64", "s64", "f16x2", "bf16x2"]),
];

/// `atom` (with a result) or `red`: semantics, scope, space, operation,
/// `.noftz` on 16-bit float adds, cache hint, vector (`.global` float
/// adds), type.
fn atomic(rng: &mut Rng, red: bool) -> Draft {
    let mut w = vec![if red { "red" } else { "atom" }];
    maybe_one(
        rng,
        &mut w,
        30,
        &["relaxed", "acquire", "release", "acq_rel"],
    );
    maybe_one(rng, &mut w, 40, SCOPES);
    let space = *rng.pick(&["global", "shared", "shared::cta", "shared::cluster", ""]);
    if !space.is_empty() {
        w.push(space);
    }
    let (op, types) = *rng.pick(ATOM_OPS);
    let mut ty = *rng.pick(types);
    let vec = op == "add" && space == "global" && rng.chance(25);
    if vec {
        ty = *rng.pick(&["f32", "f16", "bf16", "f16x2", "bf16x2"]);
        w.push(*rng.pick(&["v2", "v4", "v8"]));
    }
    w.push(op);
    if op == "add" && (ty.starts_with("f16") || ty.starts_with("bf16")) {
        maybe(rng, &mut w, 80, "noftz");
    }
    let hint = rng.chance(15);
    if hint {
        w.push("L2::cache_hint");
    }
    w.push(ty);
    let b = bits(ty).min(64);
    let n = width(&w);
    let val = |rng: &mut Rng| {
        if n > 1 {
            vector(rng, n, b)
        } else {
            value(rng, ty)
        }
    };
    let mut ops = Vec::new();
    if !red {
        ops.push(if n > 1 {
            vector(rng, n, b)
        } else {
            reg(rng, b)
        });
    }
    ops.push(address(rng));
    ops.push(val(rng));
    if op == "cas" {
        ops.push(val(rng));
    }
    if hint {
        ops.push(reg(rng, 64));
    }
    Draft {
        family: if red { "red" } else { "atom" },
        words: w,
        ops,
    }
}

const INT_TYPES: &[&str] = &["u16", "u32", "u64", "s16", "s32", "s64"];
const FLOAT_TYPES: &[&str] = &["f32", "f64", "f16", "f16x2", "bf16", "bf16x2"];
const ROUNDINGS: &[&str] = &["rn", "rz", "rm", "rp"];

/// Float modifiers: a rounding (always when `need_rounding`), `.ftz`
/// and `.sat` on f32 (and `.ftz`/`.sat` on f16), then the type.
fn float_words(rng: &mut Rng, w: &mut Vec<&'static str>, ty: &'static str, need_rounding: bool) {
    if need_rounding || rng.chance(50) {
        w.push(if ty.starts_with("bf") {
            "rn"
        } else {
            *rng.pick(ROUNDINGS)
        });
    }
    if ty == "f32" || ty.starts_with("f16") {
        maybe(rng, w, 30, "ftz");
        maybe(rng, w, 20, "sat");
    }
    w.push(ty);
}

/// `add`/`sub`/`mul`/`mad`/`fma`/`div`/`rem`/`min`/`max` (9.7.1, 9.7.3,
/// 9.7.4): integer forms with `.sat`, `.cc`, `.hi`/`.lo`/`.wide`; float
/// forms with their rounding, `.ftz`, `.sat`.
fn arithmetic(rng: &mut Rng) -> Draft {
    let opcode = *rng.pick(&[
        "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max",
    ]);
    let mut w = vec![opcode];
    let float = opcode == "fma" || (opcode != "rem" && rng.chance(45));
    let inputs = if matches!(opcode, "mad" | "fma") {
        3
    } else {
        2
    };
    let (ty, dbits) = if float {
        let ty = *rng.pick(FLOAT_TYPES);
        if opcode == "div" && ty == "f32" && rng.chance(50) {
            w.push(*rng.pick(&["approx", "full"]));
            maybe(rng, &mut w, 30, "ftz");
            w.push(ty);
        } else if matches!(opcode, "min" | "max") {
            maybe(rng, &mut w, 30, "ftz");
            maybe(rng, &mut w, 20, "NaN");
            w.push(ty);
        } else {
            let need = matches!(opcode, "fma" | "mad" | "div");
            float_words(rng, &mut w, ty, need);
        }
        (ty, bits(ty))
    } else {
        let ty = *rng.pick(INT_TYPES);
        let b = bits(ty);
        let mut d = b;
        match opcode {
            "mul" | "mad" => {
                let m = *rng.pick(&["lo", "hi", "wide"]);
                w.push(m);
                if m == "wide" {
                    d = 2 * b;
                }
            }
            "add" | "sub" if ty == "s32" => maybe_one(rng, &mut w, 30, &["sat", "cc"]),
            "add" | "sub" if b >= 32 => maybe(rng, &mut w, 15, "cc"),
            "min" | "max" if ty == "s32" => maybe(rng, &mut w, 20, "relu"),
            _ => {}
        }
        w.push(ty);
        (ty, d)
    };
    let mut ops = vec![reg(rng, dbits.min(64))];
    for k in 0..inputs {
        // `mad.wide`'s addend is of the result's size.
        let t = if k == 2 && dbits != bits(ty) {
            "u64"
        } else {
            ty
        };
        ops.push(value(rng, t));
    }
    Draft {
        family: "arithmetic",
        words: w,
        ops,
    }
}

/// `neg`, `abs` (integer and float) and `mov` (with its pack form).
fn unary(rng: &mut Rng) -> Draft {
    let opcode = *rng.pick(&["neg", "abs", "mov", "mov", "not", "cnot"]);
    let mut w = vec![opcode];
    let ty = match opcode {
        "mov" => *rng.pick(&[
            "pred", "b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64",
        ]),
        "not" | "cnot" => *rng.pick(&["pred", "b16", "b32", "b64"]),
        _ if rng.chance(50) => *rng.pick(&["s16", "s32", "s64"]),
        _ => {
            let t = *rng.pick(FLOAT_TYPES);
            if t == "f32" || t.starts_with("f16") {
                maybe(rng, &mut w, 30, "ftz");
            }
            t
        }
    };
    w.push(ty);
    let b = bits(ty);
    let src = if opcode == "mov" && b >= 32 && rng.chance(25) {
        // mov.b32 d, {h, h}: a pack of halves.
        vector(rng, 2, b / 2)
    } else {
        value(rng, ty)
    };
    Draft {
        family: "unary",
        words: w,
        ops: vec![reg(rng, b), src],
    }
}

/// Integer and float types of `cvt`, with the packed fp8 kinds.
const CVT_TYPES: &[&str] = &[
    "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "f16", "bf16", "f32", "f64",
];

/// `cvt` (9.7.9.21): a rounding where the ISA asks one (float to a
/// narrower float or an int: `.rn`..., int to float: `.rn`..., float to
/// int: `.rni`...), `.ftz`, `.sat`, `.relu`; the packed forms from two
/// f32 (`.f16x2`, `.bf16x2`, `.e4m3x2`, `.e5m2x2`) and `.tf32`.
fn cvt(rng: &mut Rng) -> Draft {
    let mut w = vec!["cvt"];
    if rng.chance(20) {
        let d = *rng.pick(&["f16x2", "bf16x2", "e4m3x2", "e5m2x2"]);
        w.push("rn");
        if d.starts_with('e') {
            maybe(rng, &mut w, 80, "satfinite");
        }
        maybe(rng, &mut w, 30, "relu");
        w.extend([d, "f32"]);
        let dbits = if d.starts_with('e') { 16 } else { 32 };
        let ops = vec![reg(rng, dbits), value(rng, "f32"), value(rng, "f32")];
        return Draft {
            family: "cvt",
            words: w,
            ops,
        };
    }
    let d = *rng.pick(CVT_TYPES);
    let a = *rng.pick(CVT_TYPES);
    let (df, af) = (
        d.starts_with('f') || d.starts_with("bf"),
        a.starts_with('f') || a.starts_with("bf"),
    );
    let rounding: &[&str] = match (df, af) {
        (true, true) if bits(d) < bits(a) => ROUNDINGS,
        (true, true) if d == a => &["rni", "rzi", "rmi", "rpi"],
        (true, false) => ROUNDINGS,
        (false, true) => &["rni", "rzi", "rmi", "rpi"],
        _ => &[],
    };
    if !rounding.is_empty() && rng.chance(85) {
        w.push(*rng.pick(rounding));
    }
    if df && (d == "f16" || d == "bf16") {
        maybe(rng, &mut w, 15, "relu");
    }
    maybe(rng, &mut w, 15, "ftz");
    maybe(rng, &mut w, 15, "sat");
    w.extend([d, a]);
    let ops = vec![reg(rng, bits(d).max(16)), reg(rng, bits(a).max(16))];
    Draft {
        family: "cvt",
        words: w,
        ops,
    }
}

const INT_CMP: &[&str] = &["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"];
const FLOAT_CMP: &[&str] = &[
    "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
];

/// `setp`/`set` (9.7.4.x): a comparison of the type's kind, `.ftz`, an
/// optional boolean with its predicate, `p|q` results.
fn compare(rng: &mut Rng) -> Draft {
    let set = rng.chance(30);
    let mut w = vec![if set { "set" } else { "setp" }];
    let ty = *rng.pick(&[
        "b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64", "f16", "bf16",
    ]);
    let cmp = match ty.as_bytes()[0] {
        b'b' if ty.starts_with("bf") => *rng.pick(FLOAT_CMP),
        b'b' => *rng.pick(&["eq", "ne"]),
        b'f' => *rng.pick(FLOAT_CMP),
        _ => *rng.pick(INT_CMP),
    };
    w.push(cmp);
    let boolop = rng.chance(25);
    if boolop {
        w.push(*rng.pick(&["and", "or", "xor"]));
    }
    if ty == "f32" {
        maybe(rng, &mut w, 25, "ftz");
    }
    if set {
        w.push(*rng.pick(&["u32", "s32", "f32"]));
    }
    w.push(ty);
    let mut ops = vec![if set {
        reg(rng, 32)
    } else if rng.chance(20) {
        format!("%p{}|%p{}", rng.below(8), rng.below(8))
    } else {
        reg(rng, 1)
    }];
    ops.push(value(rng, ty));
    ops.push(value(rng, ty));
    if boolop {
        let neg = if rng.chance(30) { "!" } else { "" };
        ops.push(format!("{neg}%p{}", rng.below(8)));
    }
    Draft {
        family: "compare",
        words: w,
        ops,
    }
}

/// `selp` and `slct` (9.7.4.x).
fn select(rng: &mut Rng) -> Draft {
    if rng.chance(60) {
        let ty = *rng.pick(&[
            "b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64",
        ]);
        let ops = vec![
            reg(rng, bits(ty)),
            value(rng, ty),
            value(rng, ty),
            reg(rng, 1),
        ];
        return Draft {
            family: "select",
            words: vec!["selp", ty],
            ops,
        };
    }
    let mut w = vec!["slct"];
    let ty = *rng.pick(&["b16", "b32", "b64", "u32", "s32", "u64", "f32", "f64"]);
    let c = *rng.pick(&["s32", "f32"]);
    if c == "f32" {
        maybe(rng, &mut w, 30, "ftz");
    }
    w.extend([ty, c]);
    let ops = vec![
        reg(rng, bits(ty)),
        value(rng, ty),
        value(rng, ty),
        value(rng, c),
    ];
    Draft {
        family: "select",
        words: w,
        ops,
    }
}

/// A valid-looking statement of one open family.
fn draft(rng: &mut Rng) -> Draft {
    match rng.below(12) {
        0 | 1 => ld(rng),
        2 => st(rng),
        3 => atomic(rng, false),
        4 => atomic(rng, true),
        5 | 6 => arithmetic(rng),
        7 => unary(rng),
        8 | 9 => cvt(rng),
        10 => compare(rng),
        _ => select(rng),
    }
}

/// Words the near misses put among the modifiers.
const FOREIGN: &[&str] = &[
    "u8",
    "s8",
    "b8",
    "f16",
    "bf16",
    "f64",
    "b128",
    "u64",
    "rn",
    "rni",
    "sat",
    "ftz",
    "wide",
    "hi",
    "cc",
    "relu",
    "noftz",
    "approx",
    "global",
    "shared",
    "local",
    "const",
    "v2",
    "v4",
    "v8",
    "acquire",
    "release",
    "relaxed",
    "volatile",
    "weak",
    "gpu",
    "cta",
    "cluster",
    "sys",
    "nc",
    "L2::cache_hint",
    "L1::evict_last",
    "L2::128B",
    "frob",
];

/// A near miss made on `d`; its name.
fn mutate(rng: &mut Rng, d: &mut Draft) -> &'static str {
    let last = d.words.len() - 1;
    match rng.below(10) {
        0 if last > 0 => {
            d.words[1 + rng.below(last)] = *rng.pick(FOREIGN);
            "wrong modifier"
        }
        1 if last > 0 => {
            d.words.remove(1 + rng.below(last));
            "modifier dropped"
        }
        2 => {
            d.words.insert(1 + rng.below(last + 1), *rng.pick(FOREIGN));
            "modifier added"
        }
        3 if !d.ops.is_empty() => {
            d.ops.remove(rng.below(d.ops.len()));
            "operand dropped"
        }
        4 => {
            let at = rng.below(d.ops.len() + 1);
            d.ops.insert(at, format!("%r{}", rng.below(8)));
            "operand added"
        }
        5 => {
            let k = rng.below(d.ops.len());
            d.ops[k] = resize(rng, &d.ops[k]);
            "operand size"
        }
        6 => {
            d.ops[0] = format!("{}", rng.below(8));
            "immediate result"
        }
        7 if d.ops.iter().any(|o| o.starts_with('{')) => {
            let k = d.ops.iter().position(|o| o.starts_with('{')).unwrap_or(0);
            d.ops[k] = recount(rng, &d.ops[k]);
            "vector count"
        }
        8 if d.words.iter().any(|w| SCOPES.contains(w)) => {
            let k = d.words.iter().position(|w| SCOPES.contains(w)).unwrap_or(0);
            d.words[k] = *rng.pick(&["cta", "warp", "block", "device", "gl"]);
            "bad scope"
        }
        _ => {
            let k = rng.below(d.ops.len());
            d.ops[k] = if d.ops[k].starts_with('[') {
                format!("%rd{}", rng.below(8))
            } else {
                address(rng)
            };
            "operand kind"
        }
    }
}

/// `op` with its registers of another size.
fn resize(rng: &mut Rng, op: &str) -> String {
    let to = *rng.pick(&["%h", "%r", "%rd", "%p"]);
    let mut out = String::new();
    let mut rest = op;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let name_end = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        out.push_str(to);
        rest = &tail[name_end..];
    }
    out.push_str(rest);
    if out == op {
        return format!("%rd{}", rng.below(8));
    }
    out
}

/// A vector with one register more or less.
fn recount(rng: &mut Rng, op: &str) -> String {
    let inner = op.trim_start_matches('{').trim_end_matches('}');
    let mut v: Vec<&str> = inner.split(", ").collect();
    if rng.chance(50) && v.len() > 1 {
        v.pop();
    } else {
        v.push(v[0]);
    }
    format!("{{{}}}", v.join(", "))
}

/// One statement of the open families: valid, or a near miss (about
/// half), some with blanks and comments between the modifiers.
pub fn statement(rng: &mut Rng) -> Statement {
    let mut d = draft(rng);
    let how = if rng.chance(50) {
        mutate(rng, &mut d)
    } else {
        "valid"
    };
    let odd = rng.chance(10);
    let ops: Vec<&str> = d.ops.iter().map(String::as_str).collect();
    Statement {
        text: crate::fuzz_grammar::render_words(rng, &d.words, &ops, odd),
        how,
        family: d.family,
        function: false,
    }
}
