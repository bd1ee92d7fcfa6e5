//! A toy compiler that embeds ori as a library, at the IR level.
//!
//! Its language describes one tiled GEMM:
//!
//! ```text
//! gemm M=256 N=256 K=256 bf16 -> f32 tile 64x128x16 stages 2 [epilogue relu] [peek]
//! ```
//!
//! `D[M][N] = A[M][K] * B[N][K]^T` (B is stored N by K, as a layer's
//! weights are), inputs `f16` or `bf16`, f32 accumulators, one CTA of one
//! warpgroup per 64 x TN tile of D. Its front end parses that line; its
//! back end builds Ori IR with `ori::ir::builder` (no PTX text): each K step
//! copies the A and B tiles from global to shared memory (the no-swizzle
//! K-major layout of the PTX ISA's matrix descriptors), fences, issues one
//! `wgmma.mma_async` reading both through descriptors, commits, and waits
//! until at most `stages - 1` groups are in flight, in a loop with a back
//! edge; after it, `wait_group 0` and the epilogue (an optional ReLU) stores
//! the accumulators. `peek` makes it read the accumulator right after the
//! wgmma, inside the loop: the hazard ptxas legalizes (or serializes for).
//!
//! Then it runs ori's passes, prints the diagnostics with their rules, emits
//! SASS text and PTX, and runs the kernel on ori's host backend over the
//! whole grid against a plain reference matmul of the same inputs, printing
//! the largest difference:
//!
//! ```text
//! cargo run --example toy_compiler -- 'gemm M=256 N=256 K=256 bf16 -> f32 tile 64x128x16 stages 2 epilogue relu'
//! ```
//!
//! `tests/embedding.rs` snapshots its IR before and after each pass, its
//! diagnostics and its SASS, and checks the numbers.

use ori::ir::builder::{FunctionBuilder, ModuleBuilder, Wgmma, WgmmaA};
use ori::ir::{ElemType, FuncKind, Guard, Module, Operand, VReg};

/// One GEMM of the toy language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gemm {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// `f16` or `bf16`.
    pub input: ElemType,
    /// The tile: 64 x `tile_n` x 16.
    pub tile_n: u32,
    /// wgmma groups kept in flight (`wait_group stages-1` after each commit)
    /// and shared-memory buffers.
    pub stages: u32,
    pub relu: bool,
    pub peek: bool,
}

/// The toy's front end: one `gemm` line. Errors name the word at fault.
pub fn parse(src: &str) -> Result<Gemm, String> {
    let words: Vec<&str> = src.split_whitespace().collect();
    if words.first() != Some(&"gemm") {
        return Err("a program starts with `gemm`".into());
    }
    let (mut m, mut n, mut k) = (None, None, None);
    let mut g = Gemm {
        m: 0,
        n: 0,
        k: 0,
        input: ElemType::Bf16,
        tile_n: 128,
        stages: 2,
        relu: false,
        peek: false,
    };
    let mut it = words[1..].iter().copied().peekable();
    let num = |w: &str, what: &str| -> Result<u32, String> {
        w.parse()
            .map_err(|_| format!("`{w}`: {what} must be a positive integer"))
    };
    while let Some(w) = it.next() {
        match w {
            _ if w.starts_with("M=") => m = Some(num(&w[2..], "M")?),
            _ if w.starts_with("N=") => n = Some(num(&w[2..], "N")?),
            _ if w.starts_with("K=") => k = Some(num(&w[2..], "K")?),
            "f16" | "bf16" => {
                g.input = ElemType::from_ptx(w).unwrap_or(ElemType::Bf16);
                match (it.next(), it.next()) {
                    (Some("->"), Some("f32")) => {}
                    _ => return Err(format!("`{w}` is followed by `-> f32`")),
                }
            }
            "tile" => {
                let t = it.next().ok_or("`tile` needs 64xNx16")?;
                let dims: Vec<&str> = t.split('x').collect();
                match dims.as_slice() {
                    ["64", tn, "16"] => g.tile_n = num(tn, "the tile's N")?,
                    _ => {
                        return Err(format!(
                            "`tile {t}`: the tile is 64xNx16 (one warpgroup, one k16 step)"
                        ))
                    }
                }
            }
            "stages" => g.stages = num(it.next().ok_or("`stages` needs a count")?, "stages")?,
            "epilogue" => match it.next() {
                Some("relu") => g.relu = true,
                other => return Err(format!("unknown epilogue {other:?} (relu)")),
            },
            "peek" => g.peek = true,
            _ => return Err(format!("unexpected `{w}`")),
        }
    }
    (g.m, g.n, g.k) = (
        m.ok_or("M= is missing")?,
        n.ok_or("N= is missing")?,
        k.ok_or("K= is missing")?,
    );
    if g.tile_n == 0 || g.tile_n > 256 || !g.tile_n.is_multiple_of(8) {
        return Err(format!(
            "tile N {} is not a multiple of 8 in 8..=256",
            g.tile_n
        ));
    }
    if g.m == 0
        || !g.m.is_multiple_of(64)
        || g.n == 0
        || !g.n.is_multiple_of(g.tile_n)
        || g.k == 0
        || !g.k.is_multiple_of(16)
    {
        return Err(format!(
            "M={} N={} K={} must be positive multiples of 64, {} and 16",
            g.m, g.n, g.k, g.tile_n
        ));
    }
    if !(1..=4).contains(&g.stages) {
        return Err(format!("stages {} is not in 1..=4", g.stages));
    }
    Ok(g)
}

/// Byte offset of element (`mn`, `k`) of a 16-bit operand tile in the
/// no-swizzle K-major layout: 8x16-byte core matrices, [`LBO`] apart along
/// K and [`SBO`] apart along M/N (PTX ISA, "Matrix Descriptor Format").
pub fn tile_offset(mn: u32, k: u32) -> u32 {
    (mn % 8) * 16 + (mn / 8) * SBO + (k % 8) * 2 + (k / 8) * LBO
}
/// Leading byte offset of the descriptors: from K 0..8 to K 8..16.
pub const LBO: u32 = 128;
/// Stride byte offset: from one 8-row group of M/N to the next.
pub const SBO: u32 = 256;

impl Gemm {
    fn a_bytes(&self) -> u32 {
        64 * 16 * 2
    }
    fn stage_bytes(&self) -> u32 {
        self.a_bytes() + self.tile_n * 16 * 2
    }
    /// The grid: one CTA per 64 x TN tile of D.
    pub fn grid(&self) -> [u32; 3] {
        [self.n / self.tile_n, self.m / 64, 1]
    }
}

/// A fresh-register helper over the builder.
struct Regs<'a> {
    f: &'a mut FunctionBuilder,
    next: u32,
}

impl Regs<'_> {
    fn fresh(&mut self, ty: &str) -> VReg {
        self.next += 1;
        let name = format!("%{}{}", if ty == "pred" { "p" } else { "r" }, self.next);
        self.f.reg(&name, ty)
    }
}

/// The toy's back end: the kernel as Ori IR, built without PTX text.
pub fn build(g: &Gemm) -> Module {
    let mut mb = ModuleBuilder::new("sm_90a");
    mb.global(&format!(
        ".shared .align 128 .b8 smem[{}]",
        g.stage_bytes() * g.stages
    ));
    let mut fb = mb.function("gemm", FuncKind::Entry);
    for p in ["p_a", "p_b", "p_d", "p_peek"] {
        fb.param(p, "u64");
    }
    let acc = fb.accumulators("d", "f32", (g.tile_n / 2) as usize);
    let mut r = Regs {
        f: &mut fb,
        next: 0,
    };
    let (a, b, d, peek_ptr) = (
        r.fresh("b64"),
        r.fresh("b64"),
        r.fresh("b64"),
        r.fresh("b64"),
    );
    let (tid, m0, n0) = (r.fresh("b32"), r.fresh("b32"), r.fresh("b32"));
    let (tmp, tmp2, wide) = (r.fresh("b32"), r.fresh("b32"), r.fresh("b64"));
    let (ga, gb, sbase, it) = (
        r.fresh("b64"),
        r.fresh("b64"),
        r.fresh("b32"),
        r.fresh("b32"),
    );
    let (stage, sa, sb, h) = (
        r.fresh("b32"),
        r.fresh("b32"),
        r.fresh("b32"),
        r.fresh("b16"),
    );
    let (desc_a, desc_b, peek) = (r.fresh("b64"), r.fresh("b64"), r.fresh("f32"));
    let (more, thread0) = (r.fresh("pred"), r.fresh("pred"));
    let f = r.f;
    let (entry, body, exit) = (
        f.create_block(None),
        f.create_block(Some("K_LOOP")),
        f.create_block(None),
    );
    let k_bytes = i64::from(g.k) * 2;

    // Entry: parameters, this CTA's tile, this thread's copy positions.
    f.switch_to_block(entry);
    f.set_line(1);
    for (reg, p) in [(a, "p_a"), (b, "p_b"), (d, "p_d"), (peek_ptr, "p_peek")] {
        f.op("ld.param.u64", reg, &[Operand::param(p)]);
    }
    f.op("mov.u32", tid, &[Operand::special("%tid.x")]);
    f.op("mov.u32", m0, &[Operand::special("%ctaid.y")]);
    f.op("mul.lo.u32", m0, &[m0.into(), Operand::int(64)]);
    f.op("mov.u32", n0, &[Operand::special("%ctaid.x")]);
    f.op(
        "mul.lo.u32",
        n0,
        &[n0.into(), Operand::int(i64::from(g.tile_n))],
    );
    f.op("setp.eq.u32", thread0, &[tid.into(), Operand::int(0)]);
    // Thread t copies row t/16 + 8j, column t%16 of each tile (j = 0..).
    let row_col_to_global = |f: &mut FunctionBuilder, dst: VReg, base: VReg, row0: VReg| {
        f.op("shr.u32", tmp, &[tid.into(), Operand::int(4)]);
        f.op("add.u32", tmp, &[tmp.into(), row0.into()]);
        f.op(
            "mul.lo.u32",
            tmp,
            &[tmp.into(), Operand::int(i64::from(g.k))],
        );
        f.op("and.b32", tmp2, &[tid.into(), Operand::int(15)]);
        f.op("add.u32", tmp, &[tmp.into(), tmp2.into()]);
        f.op("mul.wide.u32", wide, &[tmp.into(), Operand::int(2)]);
        f.op("add.s64", dst, &[base.into(), wide.into()]);
    };
    row_col_to_global(f, ga, a, m0);
    row_col_to_global(f, gb, b, n0);
    // The shared offset of (t/16, t%16): tile_offset for mn < 8.
    f.op("shr.u32", sbase, &[tid.into(), Operand::int(4)]);
    f.op("shl.b32", sbase, &[sbase.into(), Operand::int(4)]);
    f.op("and.b32", tmp, &[tid.into(), Operand::int(7)]);
    f.op("shl.b32", tmp, &[tmp.into(), Operand::int(1)]);
    f.op("add.u32", sbase, &[sbase.into(), tmp.into()]);
    f.op("and.b32", tmp, &[tid.into(), Operand::int(8)]);
    f.op("shl.b32", tmp, &[tmp.into(), Operand::int(4)]);
    f.op("add.u32", sbase, &[sbase.into(), tmp.into()]);
    for &x in &acc {
        f.op("mov.f32", x, &[Operand::f32(0.0)]);
    }
    f.op("mov.f32", peek, &[Operand::f32(0.0)]);
    f.op("mov.u32", it, &[Operand::int(0)]);

    // The K loop: copy this step's tiles into stage `it % stages`, then one wgmma.
    f.switch_to_block(body);
    f.set_line(2);
    f.op(
        "rem.u32",
        stage,
        &[it.into(), Operand::int(i64::from(g.stages))],
    );
    f.op(
        "mul.lo.u32",
        stage,
        &[stage.into(), Operand::int(i64::from(g.stage_bytes()))],
    );
    f.op("mov.u32", sa, &[Operand::symbol("smem")]);
    f.op("add.u32", sa, &[sa.into(), stage.into()]);
    f.op(
        "add.u32",
        sb,
        &[sa.into(), Operand::int(i64::from(g.a_bytes()))],
    );
    f.op("add.u32", tmp, &[sa.into(), sbase.into()]);
    f.op("add.u32", tmp2, &[sb.into(), sbase.into()]);
    for (rows, src, dst) in [(64, ga, tmp), (g.tile_n, gb, tmp2)] {
        for j in 0..rows / 8 {
            let j = i64::from(j);
            f.op("ld.global.u16", h, &[Operand::at(src, j * 8 * k_bytes)]);
            f.store(
                "st.shared.u16",
                Operand::at(dst, j * i64::from(SBO)),
                h.into(),
            );
        }
    }
    f.bar_sync();
    // The ISA orders generic-proxy writes of shared memory before an
    // async-proxy (wgmma) read of it only through this fence.
    f.inst("fence.proxy.async.shared::cta", vec![]);
    // Descriptors: start >> 4 in bits 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45.
    let fields = (i64::from(LBO >> 4) << 16) | (i64::from(SBO >> 4) << 32);
    for (desc, base) in [(desc_a, sa), (desc_b, sb)] {
        f.op("cvt.u64.u32", desc, &[base.into()]);
        f.op("shr.u64", desc, &[desc.into(), Operand::int(4)]);
        f.op("and.b64", desc, &[desc.into(), Operand::int(0x3fff)]);
        f.op("or.b64", desc, &[desc.into(), Operand::int(fields)]);
    }
    f.set_line(3);
    f.wgmma_fence();
    f.wgmma(&Wgmma::new(
        (64, g.tile_n, 16),
        ElemType::F32,
        g.input,
        acc.clone(),
        WgmmaA::Desc(desc_a),
        desc_b,
    ));
    if g.peek {
        f.set_line(4);
        f.op("add.f32", peek, &[peek.into(), acc[0].into()]);
        f.set_line(3);
    }
    f.wgmma_commit_group();
    f.wgmma_wait_group(i64::from(g.stages) - 1);
    f.set_line(2);
    f.op("add.s64", ga, &[ga.into(), Operand::int(32)]);
    f.op("add.s64", gb, &[gb.into(), Operand::int(32)]);
    f.op("add.u32", it, &[it.into(), Operand::int(1)]);
    f.op(
        "setp.lt.u32",
        more,
        &[it.into(), Operand::int(i64::from(g.k / 16))],
    );
    f.bra(
        body,
        Some(Guard {
            reg: more,
            negated: false,
        }),
    );

    // Epilogue: thread t holds rows 16w + lane/4 (+8), columns 8i + 2(lane%4) (+1).
    f.switch_to_block(exit);
    f.set_line(5);
    f.wgmma_wait_group(0);
    f.op("shr.u32", tmp, &[tid.into(), Operand::int(5)]);
    f.op("shl.b32", tmp, &[tmp.into(), Operand::int(4)]);
    f.op("and.b32", tmp2, &[tid.into(), Operand::int(31)]);
    f.op("shr.u32", tmp2, &[tmp2.into(), Operand::int(2)]);
    f.op("add.u32", tmp, &[tmp.into(), tmp2.into()]);
    f.op("add.u32", tmp, &[tmp.into(), m0.into()]);
    f.op(
        "mul.lo.u32",
        tmp,
        &[tmp.into(), Operand::int(i64::from(g.n))],
    );
    f.op("add.u32", tmp, &[tmp.into(), n0.into()]);
    f.op("and.b32", tmp2, &[tid.into(), Operand::int(3)]);
    f.op("shl.b32", tmp2, &[tmp2.into(), Operand::int(1)]);
    f.op("add.u32", tmp, &[tmp.into(), tmp2.into()]);
    f.op("mul.wide.u32", wide, &[tmp.into(), Operand::int(4)]);
    f.op("add.s64", d, &[d.into(), wide.into()]);
    for (j, &x) in acc.iter().enumerate() {
        let j = j as i64;
        if g.relu {
            f.op("max.f32", x, &[x.into(), Operand::f32(0.0)]);
        }
        let (row, col) = (8 * ((j / 2) % 2), 8 * (j / 4) + j % 2);
        let at = Operand::at(d, (row * i64::from(g.n) + col) * 4);
        f.store("st.global.f32", at, x.into());
    }
    if g.peek {
        // Only thread 0 writes the peek.
        let i = f.store("st.global.f32", Operand::at(peek_ptr, 0), peek.into());
        f.set_guard(
            i,
            Guard {
                reg: thread0,
                negated: false,
            },
        );
    }
    f.ret();
    mb.finish(fb)
}

/// What one run of the toy compiler gives.
pub struct Output {
    /// The IR before the passes, as `.ori` text.
    pub ir_before: String,
    /// The compilation (passes run, diagnostics).
    pub compiled: ori::Compilation,
    /// SASS text of the compiled module.
    pub sass: String,
    /// PTX written from the compiled IR.
    pub ptx: String,
    /// Largest |host - reference| over D.
    pub max_error: f64,
}

/// Deterministic inputs: small multiples of 1/8, exact in f16 and bf16 and
/// (as products and sums of up to thousands of them) in f32.
pub fn input_value(i: usize) -> f32 {
    ((i * 37 + 11) % 17) as f32 / 8.0 - 1.0
}

fn encode(ty: ElemType, x: f32) -> [u8; 2] {
    let bits = match ty {
        ElemType::Bf16 => (x.to_bits() >> 16) as u16,
        _ => ori::host::numbers::encode_f16(f64::from(x)),
    };
    bits.to_le_bytes()
}

/// The reference: D = A * B^T in f64, ReLU if asked.
pub fn reference(g: &Gemm, a: &[f32], b: &[f32]) -> Vec<f64> {
    let (m, n, k) = (g.m as usize, g.n as usize, g.k as usize);
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let s: f64 = (0..k)
                .map(|kk| f64::from(a[i * k + kk]) * f64::from(b[j * k + kk]))
                .sum();
            out[i * n + j] = if g.relu { s.max(0.0) } else { s };
        }
    }
    out
}

/// Build, compile, lower and run one program.
pub fn compile_and_run(g: &Gemm) -> Result<Output, String> {
    let module = build(g);
    let ir_before = ori::ir::write_module(&module);
    let opts = ori::Options {
        verify: true,
        ..ori::Options::default()
    };
    let compiled = ori::run_passes(module, &opts);
    let m = compiled
        .module
        .as_ref()
        .ok_or_else(|| format!("ori refused the kernel: {:?}", compiled.diags))?;
    let sass = ori::lower::sass::emit_module(m);
    let ptx = ori::lower::ptx_text::write_module(m).map_err(|e| e.to_string())?;
    let (mm, nn, kk) = (g.m as usize, g.n as usize, g.k as usize);
    let a: Vec<f32> = (0..mm * kk).map(input_value).collect();
    let b: Vec<f32> = (0..nn * kk).map(|i| input_value(i + 7)).collect();
    let bytes = |v: &[f32]| {
        v.iter()
            .flat_map(|x| encode(g.input, *x))
            .collect::<Vec<u8>>()
    };
    let mut mem = ori::host::GlobalMemory::new();
    let (pa, pb) = (mem.alloc(bytes(&a)), mem.alloc(bytes(&b)));
    let pd = mem.alloc(vec![0; mm * nn * 4]);
    let ppeek = mem.alloc(vec![0; 4]);
    let launch = ori::host::Launch {
        params: vec![pa, pb, pd, ppeek],
        grid: g.grid(),
        step_limit: 100_000_000,
        ..Default::default()
    };
    ori::host::run(m, "gemm", &launch, &mem).map_err(|e| format!("host backend: {e}"))?;
    let want = reference(g, &a, &b);
    let got = mem.buffer(pd).ok_or("no D buffer")?;
    let max_error = got
        .chunks(4)
        .zip(&want)
        .map(|(c, w)| (f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])) - w).abs())
        .fold(0.0, f64::max);
    Ok(Output {
        ir_before,
        compiled,
        sass,
        ptx,
        max_error,
    })
}

/// The diagnostics as the toy prints them: ori's human layout, rules included.
pub fn report(c: &ori::Compilation) -> Vec<String> {
    c.diags
        .iter()
        .map(|d| ori::report::render_human(d, None, ori::report::Style::Plain))
        .collect()
}

fn main() {
    // `--input-ptx`: print the kernel as PTX before ori's passes (what ptxas
    // would be given; `tests/corpus/toy_*` are such files, recorded from ptxas).
    let input_ptx = std::env::args().any(|a| a == "--input-ptx");
    let src = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| {
            "gemm M=256 N=256 K=256 bf16 -> f32 tile 64x128x16 stages 2 epilogue relu".into()
        });
    let g = match parse(&src) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("toy: {e}");
            std::process::exit(1);
        }
    };
    if input_ptx {
        match ori::lower::ptx_text::write_module(&build(&g)) {
            Ok(t) => print!("// Written by examples/toy_compiler.rs --input-ptx '{src}'\n{t}"),
            Err(e) => {
                eprintln!("toy: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    match compile_and_run(&g) {
        Ok(out) => {
            println!("== {src}");
            let r = report(&out.compiled);
            if r.is_empty() {
                println!("ori: ptxas keeps this wgmma pipeline as written.");
            }
            for line in r {
                println!("{}", line.trim_end());
            }
            let hgmma = out.sass.lines().filter(|l| l.contains("HGMMA")).count();
            println!(
                "SASS: {} lines, {hgmma} HGMMA; PTX: {} lines",
                out.sass.lines().count(),
                out.ptx.lines().count()
            );
            println!(
                "host backend, grid {:?}: max |D - reference| = {}",
                g.grid(),
                out.max_error
            );
        }
        Err(e) => {
            eprintln!("toy: {e}");
            std::process::exit(1);
        }
    }
}
