//! `cargo xtask bench`: the cost of the front end and of phases 85 and 87 on
//! one very large generated function.
//!
//! Issue #5 asks that both passes stay linear in the instructions per
//! fixpoint round, with no quadratic scans, and that a function of a
//! million instructions compiles in well under a second. This module checks
//! that claim: it generates, deterministically, a PTX kernel shaped like a
//! Triton Hopper matmul unrolled over thousands of output tiles (many basic
//! blocks, a software-pipelined mainloop with a back edge per tile, several
//! accumulator sets, `wait_group 1` overlap, `cp.async` traffic, uniform
//! branches, a divergent store mask, and, in the preamble, one accumulator
//! read per 64 tiles that makes phase 87 inject a wait and an arrive; ptxas
//! 13.0.88 prints the same advisories for it), then times, in release mode
//! and best of N, the PTX parse, the lowering to IR, phase 85 alone, phase 87
//! alone and the whole pipeline, at several sizes so that the ratio
//! time(2n)/time(n) shows whether each step is linear (about 2.0).
//!
//! The driver lives in xtask itself rather than in a `[[bench]]` target so
//! that the generator can also write its kernel out (`--emit`) for `ori
//! compile`, ptxas or `perf`, and so that one command does everything; the
//! `cargo xtask` alias builds a debug binary, so the debug build re-runs
//! itself as `cargo run --release -p xtask -- bench`. Each step at each size
//! runs in a child process of its own (`bench --child`): every measurement
//! starts from a fresh heap, and a superlinear step is killed at a time limit
//! and skipped at the larger sizes instead of hanging the benchmark.

use crate::bench_shapes::{Shape, SHAPES};
use ori_gmma::in_flight::InFlight;
use ori_gmma::{FixupGmmaSequence, OriPropagateGmma};
use ori_ir::consts::{C7517_WAIT_INJECTED, C7519_ARRIVE_INJECTED};
use ori_ir::{ControlFlowGraph, Diagnostic, Function, Module, ModuleInfo, Pass, PassContext};
use std::fmt::Write as _;
use std::hint::black_box;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// Default sizes, in PTX instructions.
const DEFAULT_SIZES: [usize; 4] = [125_000, 250_000, 500_000, 1_000_000];
/// Default number of timed runs per step (the best is reported).
const DEFAULT_RUNS: usize = 5;
/// Default wall-clock limit of one step at one size, in seconds.
const DEFAULT_LIMIT_S: u64 = 60;
/// One preamble probe per this many tiles: an accumulator touched after the
/// fence (phase 87 injects an arrive) and read while in flight (a wait).
const INJECT_EVERY: usize = 64;
/// Accumulator sets per tile (one `m64n16k16.f32` each: 8 registers).
const SETS: usize = 4;
/// k-steps per mainloop iteration: each set gets this many wgmma per stage.
const KSTEPS: usize = 2;
/// Registers of one accumulator set.
const SET_REGS: usize = 8;

const USAGE: &str = "\
usage: cargo xtask bench [--shapes K,...] [--sizes N,...] [--runs N] [--steps S,...] [--limit SECS] [--emit FILE]
       cargo xtask bench --vs-ptxas [--runs N] [--only TEXT] [--pgo]
       cargo xtask bench --host [--runs N]

  --shapes K,...  kernel shapes (default all): matmul (pipelined tiles), block (one
                  straight-line block with injections), loops (many small loops),
                  functions (many .func), calls (a deep call graph, i -> i+1, i+2)

  --sizes N,...   function sizes in PTX instructions (k/M suffixes allowed);
                  default 125k,250k,500k,1M
  --runs N        timed runs per step, best reported (default 5, at least 3)
  --steps S,...   time only these steps (for profiling): parse, lower, phase85,
                  phase87, 85+87, end-to-end
  --limit SECS    kill a step that runs longer than this at one size, and skip
                  it at larger sizes (default 60); runs stop repeating after a third
  --emit FILE     write the generated kernel of the first shape and size to FILE and exit
  --vs-ptxas      instead: `ori compile` against ptxas 13.0.88 on every kernel of
                  tests/triton*, tests/real, process start included, runs interleaved;
                  each kernel's ratio and the geometric mean (--only: paths containing TEXT),
                  for the default release build and the static one (cargo xtask dist;
                  --pgo: cargo xtask dist --pgo)
  --host          instead: a 1024x1024x1024 bf16 Triton matmul through the host backend
                  (`ori run`) against matrixmultiply's sgemm, GFLOP/s of both
  --doc           with --vs-ptxas or --host: also write the summary into docs/performance.md

Each step runs in a child process of its own (a fresh heap, and a kill at the limit).
";

struct Options {
    shapes: Vec<Shape>,
    sizes: Vec<usize>,
    runs: usize,
    emit: Option<String>,
    /// Indices into `STEPS` to time.
    steps: Vec<usize>,
    /// Wall-clock limit of one step at one size.
    limit: Duration,
    /// `--vs-ptxas`: time ori against ptxas on real kernels instead.
    vs_ptxas: bool,
    /// `--pgo`: with `--vs-ptxas`, the static binary built profile-guided
    /// (`cargo xtask dist --pgo`).
    pgo: bool,
    /// `--only TEXT`: with `--vs-ptxas`, the kernels whose path contains it.
    only: Option<String>,
    /// `--host`: the host backend against a CPU matmul instead.
    host: bool,
    /// `--doc`: with `--vs-ptxas` or `--host`, also write the summary into
    /// `docs/performance.md`.
    doc: bool,
}

fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let (num, mul) = match s.char_indices().last() {
        Some((k, 'k' | 'K')) => (&s[..k], 1_000),
        Some((k, 'm' | 'M')) => (&s[..k], 1_000_000),
        _ => (s, 1),
    };
    num.replace('_', "")
        .parse::<usize>()
        .map(|n| n * mul)
        .map_err(|_| format!("bad size `{s}`"))
}

fn parse_options(args: &[&str]) -> Result<Options, String> {
    let mut o = Options {
        shapes: SHAPES.to_vec(),
        sizes: DEFAULT_SIZES.to_vec(),
        runs: DEFAULT_RUNS,
        emit: None,
        steps: (0..STEPS.len()).collect(),
        limit: Duration::from_secs(DEFAULT_LIMIT_S),
        vs_ptxas: false,
        pgo: false,
        only: None,
        host: false,
        doc: false,
    };
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        let mut value = || {
            it.next()
                .copied()
                .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))
        };
        match a {
            "--shapes" => {
                o.shapes = value()?
                    .split(',')
                    .map(|k| Shape::parse(k).ok_or_else(|| format!("unknown shape `{k}`\n{USAGE}")))
                    .collect::<Result<_, _>>()?
            }
            "--sizes" => {
                o.sizes = value()?
                    .split(',')
                    .map(parse_size)
                    .collect::<Result<_, _>>()?
            }
            "--runs" => {
                o.runs = value()?
                    .parse::<usize>()
                    .map_err(|e| format!("--runs: {e}"))?
                    .max(3)
            }
            "--emit" => o.emit = Some(value()?.to_string()),
            "--vs-ptxas" => o.vs_ptxas = true,
            "--pgo" => o.pgo = true,
            "--host" => o.host = true,
            "--doc" => o.doc = true,
            "--only" => o.only = Some(value()?.to_string()),
            "--limit" => {
                let secs = value()?
                    .parse::<u64>()
                    .map_err(|e| format!("--limit: {e}"))?;
                o.limit = Duration::from_secs(secs.max(1));
            }
            "--steps" => {
                o.steps = value()?
                    .split(',')
                    .map(|n| {
                        STEPS
                            .iter()
                            .position(|s| s.replace(' ', "") == n.trim().replace(' ', ""))
                            .ok_or_else(|| format!("unknown step `{n}`\n{USAGE}"))
                    })
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(format!("unknown option `{a}`\n{USAGE}")),
        }
    }
    if o.sizes.is_empty() || o.shapes.is_empty() {
        return Err("no sizes or no shapes".into());
    }
    Ok(o)
}

/// Entry point of `cargo xtask bench ARGS`.
pub fn run(args: &[&str]) -> Result<ExitCode, String> {
    if args.iter().any(|a| matches!(*a, "-h" | "--help")) {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    if let ["--child", shape, size, step, runs, budget_ms] = args {
        let num = |s: &str| s.parse::<usize>().map_err(|e| format!("--child: {e}"));
        let budget = Duration::from_millis(num(budget_ms)? as u64);
        let shape = Shape::parse(shape).ok_or_else(|| format!("--child: shape {shape}"))?;
        return child(shape, num(size)?, num(step)?, num(runs)?, budget);
    }
    let opts = parse_options(args)?;
    if cfg!(debug_assertions) {
        // Timings of a debug build mean nothing: run the release build instead.
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["run", "--release", "--quiet", "-p", "xtask", "--", "bench"])
            .args(args)
            .current_dir(crate::oracle::root())
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        return Ok(match status.code() {
            Some(0) => ExitCode::SUCCESS,
            Some(c) => ExitCode::from(c.clamp(1, 255) as u8),
            None => ExitCode::FAILURE,
        });
    }
    if opts.host {
        let summary = crate::bench_host::run(opts.runs.min(3))?;
        if opts.doc {
            let cmd = format!("cargo xtask bench --host --runs {}", opts.runs.min(3));
            crate::perf_doc::write_section("The host backend (ori run)", &cmd, &summary)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if opts.vs_ptxas {
        let (code, summary) =
            crate::bench_vs_ptxas::run(opts.runs, opts.only.as_deref(), opts.pgo)?;
        if opts.doc {
            let mut cmd = format!("cargo xtask bench --vs-ptxas --runs {}", opts.runs);
            if opts.pgo {
                cmd.push_str(" --pgo");
            }
            if let Some(only) = &opts.only {
                cmd.push_str(&format!(" --only {only}"));
            }
            crate::perf_doc::write_section("ori against ptxas", &cmd, &summary)?;
        }
        return Ok(code);
    }
    if let Some(path) = &opts.emit {
        let g = generate_shape(opts.shapes[0], opts.sizes[0]);
        std::fs::write(path, &g.ptx).map_err(|e| format!("{path}: {e}"))?;
        println!(
            "wrote {path}: {} kernel, {} instructions, {} units, {:.1} MB",
            opts.shapes[0].name(),
            g.insts,
            g.tiles,
            g.ptx.len() as f64 / 1e6
        );
        return Ok(ExitCode::SUCCESS);
    }
    bench(&opts)
}

// ---------------------------------------------------------------------------
// The generator.
// ---------------------------------------------------------------------------

/// A generated kernel.
pub struct Generated {
    /// The PTX text.
    pub ptx: String,
    /// PTX instructions in it.
    pub insts: usize,
    /// Output tiles (one mainloop each), or the repeated units of another
    /// shape (`bench_shapes`: loops, functions, wgmma stages).
    pub tiles: usize,
}

/// Emits PTX with fresh, SSA-like virtual registers, as nvcc and Triton do.
#[derive(Default)]
struct Gen {
    body: String,
    insts: usize,
    r: usize,
    rd: usize,
    f: usize,
    p: usize,
}

impl Gen {
    fn r(&mut self) -> String {
        self.r += 1;
        format!("%r{}", self.r + 2)
    }
    /// Pack f32 registers two by two into new f16x2 registers (`cvt.rn`).
    fn pack_f16x2(&mut self, regs: &[impl std::fmt::Display]) -> Vec<String> {
        regs.chunks(2)
            .map(|pair| {
                let h = self.r();
                self.i(format_args!(
                    "cvt.rn.f16x2.f32 {h}, {}, {}",
                    pair[1], pair[0]
                ));
                h
            })
            .collect()
    }
    fn rd(&mut self) -> String {
        self.rd += 1;
        format!("%rd{}", self.rd + 2)
    }
    fn f(&mut self) -> String {
        self.f += 1;
        format!("%f{}", self.f - 1)
    }
    fn p(&mut self) -> String {
        self.p += 1;
        format!("%p{}", self.p - 1)
    }
    fn i(&mut self, text: std::fmt::Arguments<'_>) {
        self.insts += 1;
        self.body.push('\t');
        let _ = self.body.write_fmt(text);
        self.body.push_str(";\n");
    }
    fn label(&mut self, name: &str) {
        let _ = writeln!(self.body, "{name}:");
    }

    /// A short stage before the first mainloop whose accumulator is written
    /// after the fence (phase 87 injects an arrive, C7519) and read back with
    /// the group still in flight (a wait, C7517). ptxas 13.0.88 injects both
    /// only before the function's first `wait_group N>0`; after one it
    /// serializes instead (C7514), so the probes sit in the preamble.
    fn probe(&mut self, n: usize) {
        let acc: Vec<String> = (0..SET_REGS).map(|_| self.f()).collect();
        let (da, db) = (self.rd(), self.rd());
        self.i(format_args!("or.b64 {da}, %rd0, {}", n * 16));
        self.i(format_args!("or.b64 {db}, %rd1, {}", n * 16));
        for r in &acc {
            self.i(format_args!("mov.f32 {r}, 0f00000000"));
        }
        self.i(format_args!("wgmma.fence.sync.aligned"));
        self.i(format_args!("mov.f32 {}, 0f3F800000", acc[0]));
        self.i(format_args!(
            "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{{}}}, {da}, {db}, 1, 1, 1, 0, 0",
            acc.join(", ")
        ));
        self.i(format_args!("wgmma.commit_group.sync.aligned"));
        let halves = self.pack_f16x2(&acc);
        self.i(format_args!(
            "st.global.v4.b32 [%rd2 + {}], {{{}}}",
            n * 16,
            halves.join(", ")
        ));
    }

    /// One output tile: prologue, pipelined mainloop (a loop with a back edge
    /// and a uniform if inside), epilogue with a uniform bounds check and
    /// stores under a divergent mask.
    fn tile(&mut self, t: usize) {
        let p = self.tile_prologue(t);
        self.tile_mainloop(t, &p);
        self.tile_epilogue(t, &p);
    }

    /// Prologue: addresses, first cp.async stage, zeroed accumulators.
    fn tile_prologue(&mut self, t: usize) -> TileRegs {
        let row = self.r();
        self.i(format_args!(
            "mad.lo.s32 {row}, %r2, 128, {}",
            (t % 4096) * 64
        ));
        let off = self.rd();
        self.i(format_args!("mul.wide.s32 {off}, {row}, 2"));
        let (a, b, c) = (self.rd(), self.rd(), self.rd());
        self.i(format_args!("add.s64 {a}, %rd0, {off}"));
        self.i(format_args!("add.s64 {b}, %rd1, {off}"));
        self.i(format_args!("add.s64 {c}, %rd2, {off}"));
        let smem = self.r();
        self.i(format_args!("mov.u32 {smem}, {}", (t % 4) * 16384));
        for k in 0..2 {
            self.i(format_args!(
                "cp.async.cg.shared.global [{smem} + {}], [{a} + {}], 0x10",
                k * 16,
                k * 16
            ));
            self.i(format_args!(
                "cp.async.cg.shared.global [{smem} + {}], [{b} + {}], 0x10",
                8192 + k * 16,
                k * 16
            ));
        }
        self.i(format_args!("cp.async.commit_group"));
        let desc = |g: &mut Gen, base: usize| {
            let (x, y, d) = (g.rd(), g.rd(), g.rd());
            g.i(format_args!("cvt.u64.u32 {x}, {smem}"));
            g.i(format_args!("shr.u64 {y}, {x}, {}", 4 + base));
            g.i(format_args!("or.b64 {d}, {y}, 4611686293305294848"));
            d
        };
        let da = desc(self, 0);
        let db = desc(self, 9);
        let acc: Vec<Vec<String>> = (0..SETS)
            .map(|_| (0..SET_REGS).map(|_| self.f()).collect())
            .collect();
        for r in acc.iter().flatten() {
            self.i(format_args!("mov.f32 {r}, 0f00000000"));
        }
        let k = self.r();
        self.i(format_args!("mov.u32 {k}, 0"));
        let pz = self.p();
        self.i(format_args!("setp.lt.s32 {pz}, %r0, 1"));
        self.i(format_args!("@{pz} bra $EPI_{t}"));
        TileRegs {
            row,
            a,
            b,
            c,
            smem,
            da,
            db,
            acc,
            k,
        }
    }

    /// Mainloop: wait for the oldest cp.async stage, issue one wgmma stage
    /// (KSTEPS per set), keep one group in flight, prefetch the next stage.
    fn tile_mainloop(&mut self, t: usize, p: &TileRegs) {
        let TileRegs {
            a,
            b,
            c,
            smem,
            da,
            db,
            acc,
            k,
            ..
        } = p;
        self.label(&format!("$LOOP_{t}"));
        self.i(format_args!("cp.async.wait_group 1"));
        self.i(format_args!("bar.sync 0"));
        let steps: Vec<(String, String)> = (0..KSTEPS)
            .map(|s| {
                let (x, y) = (self.rd(), self.rd());
                self.i(format_args!("add.s64 {x}, {da}, {}", s * 2));
                self.i(format_args!("add.s64 {y}, {db}, {}", s * 2));
                (x, y)
            })
            .collect();
        self.i(format_args!("wgmma.fence.sync.aligned"));
        for set in acc {
            let regs = set.join(", ");
            for (x, y) in &steps {
                self.i(format_args!(
                    "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{{regs}}}, {x}, {y}, 1, 1, 1, 0, 0"
                ));
            }
        }
        self.i(format_args!("wgmma.commit_group.sync.aligned"));
        self.i(format_args!("wgmma.wait_group.sync.aligned 1"));
        self.i(format_args!("add.s64 {a}, {a}, 128"));
        self.i(format_args!("add.s64 {b}, {b}, 128"));
        self.i(format_args!(
            "cp.async.cg.shared.global [{smem} + 0], [{a} + 0], 0x10"
        ));
        self.i(format_args!(
            "cp.async.cg.shared.global [{smem} + 8192], [{b} + 0], 0x10"
        ));
        self.i(format_args!("cp.async.commit_group"));
        let q = self.r();
        self.i(format_args!("and.b32 {q}, {k}, 1"));
        let pq = self.p();
        self.i(format_args!("setp.eq.u32 {pq}, {q}, 0"));
        self.i(format_args!("@{pq} bra $SKIP_{t}"));
        let (v, w) = (self.r(), self.r());
        self.i(format_args!("ld.global.nc.b32 {v}, [{c} + 0]"));
        self.i(format_args!("add.s32 {w}, {v}, {k}"));
        self.i(format_args!("st.shared.b32 [{smem} + 16384], {w}"));
        self.label(&format!("$SKIP_{t}"));
        self.i(format_args!("add.s32 {k}, {k}, 1"));
        let pl = self.p();
        self.i(format_args!("setp.lt.s32 {pl}, {k}, %r0"));
        self.i(format_args!("@{pl} bra $LOOP_{t}"));
    }

    /// Epilogue: drain, then convert and store the accumulators.
    fn tile_epilogue(&mut self, t: usize, p: &TileRegs) {
        let TileRegs { row, c, acc, .. } = p;
        self.label(&format!("$EPI_{t}"));
        self.i(format_args!("wgmma.wait_group.sync.aligned 0"));
        self.i(format_args!("cp.async.wait_group 0"));
        self.i(format_args!("bar.sync 0"));
        let pb = self.p();
        self.i(format_args!("setp.ge.s32 {pb}, {row}, %r0"));
        self.i(format_args!("@{pb} bra $DONE_{t}"));
        let mask = self.p();
        self.i(format_args!("setp.lt.u32 {mask}, %r1, 128"));
        let flat: Vec<&String> = acc.iter().flatten().collect();
        let halves = self.pack_f16x2(&flat);
        for (n, quad) in halves.chunks(4).enumerate() {
            self.i(format_args!(
                "@{mask} st.global.v4.b32 [{c} + {}], {{{}}}",
                n * 16,
                quad.join(", ")
            ));
        }
        self.label(&format!("$DONE_{t}"));
    }
}

/// The registers one tile's prologue sets up for its mainloop and epilogue.
struct TileRegs {
    row: String,
    a: String,
    b: String,
    c: String,
    smem: String,
    da: String,
    db: String,
    acc: Vec<Vec<String>>,
    k: String,
}

/// A kernel of about `target` PTX instructions: one probe per
/// `INJECT_EVERY` tiles (at least one), then the tiles.
pub fn generate(target: usize) -> Generated {
    let mut tiles_gen = Gen::default();
    let mut tiles = 0;
    let probe_insts = {
        let mut p = Gen::default();
        p.probe(0);
        p.insts
    };
    while tiles == 0 || tiles_gen.insts + (tiles / INJECT_EVERY + 1) * probe_insts + 7 < target {
        tiles_gen.tile(tiles);
        tiles += 1;
    }
    // Regenerate with the probes first so that register numbers follow the text.
    let mut g = Gen::default();
    for n in 0..(tiles / INJECT_EVERY).max(1) {
        g.probe(n);
    }
    for t in 0..tiles {
        g.tile(t);
    }
    let mut ptx = String::with_capacity(g.body.len() + 1024);
    let _ = write!(
        ptx,
        "// Generated by `cargo xtask bench`: {tiles} pipelined matmul tiles, \
         {} instructions.\n\
         .version 8.0\n.target sm_90a\n.address_size 64\n\n\
         .visible .entry bench_kernel(.param .u64 p_a, .param .u64 p_b, .param .u64 p_c, .param .u32 p_k)\n{{\n\
         \t.reg .pred %p<{}>;\n\t.reg .b32 %r<{}>;\n\t.reg .b64 %rd<{}>;\n\t.reg .f32 %f<{}>;\n\
         \tld.param.u64 %rd0, [p_a];\n\tld.param.u64 %rd1, [p_b];\n\tld.param.u64 %rd2, [p_c];\n\
         \tld.param.u32 %r0, [p_k];\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n",
        g.insts + 7,
        g.p.max(1),
        g.r + 3,
        g.rd + 3,
        g.f.max(1),
    );
    ptx.push_str(&g.body);
    ptx.push_str("\tret;\n}\n");
    Generated {
        ptx,
        insts: g.insts + 7,
        tiles,
    }
}

/// A kernel of the given shape and about `target` PTX instructions.
pub fn generate_shape(shape: Shape, target: usize) -> Generated {
    match shape {
        Shape::Matmul => generate(target),
        Shape::Block => crate::bench_shapes::block(target),
        Shape::Loops => crate::bench_shapes::loops(target),
        Shape::Functions => crate::bench_shapes::functions(target),
        Shape::Calls => crate::bench_shapes::calls(target),
    }
}

// ---------------------------------------------------------------------------
// Timing.
// ---------------------------------------------------------------------------

/// The steps timed, in table order.
const STEPS: [&str; 6] = [
    "parse",
    "lower",
    "phase 85",
    "phase 87",
    "85+87",
    "end-to-end",
];

/// Best-of-`runs` wall time of `timed`, each run on a fresh input from
/// `setup` (setup and the dropping of the output are not timed). Runs stop
/// early once `budget` has passed; returns (best, runs done, first output).
fn best<I, O>(
    runs: usize,
    budget: Duration,
    mut setup: impl FnMut() -> I,
    mut timed: impl FnMut(I) -> O,
) -> (Duration, usize, O) {
    let start = Instant::now();
    let mut best = Duration::MAX;
    let mut first = None;
    let mut done = 0;
    while done < runs && (done == 0 || start.elapsed() < budget) {
        let input = setup();
        release_free_memory();
        perf_control("enable");
        let t = Instant::now();
        let out = black_box(timed(black_box(input)));
        best = best.min(t.elapsed());
        perf_control("disable");
        done += 1;
        if first.is_none() {
            first = Some(out);
        } else {
            drop(out);
        }
    }
    (best, done, first.expect("at least one run"))
}

/// Give the memory freed so far back to the system, so that every timed run
/// starts from the same allocator state whatever the size: each run then
/// pays for the fresh pages it touches, as a one-shot `ori compile` does.
///
/// Without it, the runs measured a size-dependent mix: glibc serves a freed
/// block again from its heap only below its mmap threshold (adaptive, at
/// most 32 MiB), so at 125k-250k instructions most of a step's tables reused
/// pages a previous run had faulted in, while at 1M they were fresh mmaps
/// the kernel zeroed first. perf on phase 87 at 1M (block shape): 28.6% of
/// the samples in the kernel's `clear_page_erms`, against 3.6% at 250k,
/// which read as a superlinear step.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; no
    // allocation is live across it that it could touch.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// With `ORI_BENCH_PERF_CTL=FIFO` (perf's control fifo), perf samples only
/// the timed runs, not their setup (parsing, lowering, cloning the input):
/// `mkfifo /tmp/ctl; ORI_BENCH_PERF_CTL=/tmp/ctl perf record -D -1
/// --control fifo:/tmp/ctl -- target/release/xtask bench --child SHAPE N STEP RUNS MS`
/// (STEP: 0 parse, 1 lower, 2 phase 85, 3 phase 87, 4 both, 5 end to end).
fn perf_control(command: &str) {
    if let Some(path) = std::env::var_os("ORI_BENCH_PERF_CTL") {
        if let Err(e) = std::fs::write(&path, format!("{command}\n")) {
            eprintln!("ORI_BENCH_PERF_CTL: {e}");
        }
    }
}

#[cfg(test)]
fn single_function(m: &Module) -> &Function {
    m.funcs
        .values()
        .find(|f| f.has_body)
        .expect("a function with a body")
}

fn run_pass(p: &dyn Pass, f: &mut Function, info: &ModuleInfo) -> Vec<Diagnostic> {
    let mut cx = PassContext {
        module: info,
        diags: Vec::new(),
    };
    p.run(f, &mut cx);
    cx.diags
}

const FILE: &str = "bench.ptx";

fn parsed(g: &Generated) -> Result<ori_ptx::Module, String> {
    let (ast, d) = ori_ptx::parse_with_diags(FILE, &g.ptx);
    match d.first() {
        None => Ok(ast),
        Some(d) => Err(format!("generated PTX does not parse: {}", d.message)),
    }
}

fn lowered(g: &Generated) -> Result<Module, String> {
    let (m, d) = ori_ptx::lower::lower_module_owned(FILE, parsed(g)?);
    match d.first() {
        None => Ok(m),
        Some(d) => Err(format!(
            "generated PTX does not lower: line {}: {}",
            d.line, d.message
        )),
    }
}

fn passes(mut m: Module) -> (Module, Vec<Diagnostic>) {
    let mut d = Vec::new();
    if let Err(e) = ori_gmma::pipeline().run(&mut m, &mut d, &mut |_| {}) {
        panic!("IR invalid after {}: {}", e.pass, e.report);
    }
    (m, d)
}

/// The functions of `m` with a body, for the passes.
fn bodies(m: &mut Module) -> impl Iterator<Item = &mut Function> {
    m.funcs.values_mut().filter(|f| f.has_body)
}

/// Phase 87's outcome as a report line: waits and arrives injected, serialized (any function).
fn outcome_line(m: &Module, diags: &[Diagnostic]) -> String {
    let count = |code: u32| diags.iter().filter(|d| d.code == Some(code)).count();
    format!(
        "outcome {} {} {}",
        count(C7517_WAIT_INJECTED),
        count(C7519_ARRIVE_INJECTED),
        u8::from(m.funcs.values().any(|f| f.serialized.is_some()))
    )
}

/// The child process: time one step at one size and print report lines
/// (`time NANOS RUNS`, plus `facts ...` or `outcome ...` where known).
fn child(
    shape: Shape,
    size: usize,
    step: usize,
    runs: usize,
    budget: Duration,
) -> Result<ExitCode, String> {
    let g = generate_shape(shape, size);
    let mut lines = Vec::new();
    let (t, done) = match step {
        0 => {
            let (t, n, _) = best(
                runs,
                budget,
                || (),
                |()| ori_ptx::parse_with_diags(FILE, &g.ptx),
            );
            (t, n)
        }
        1 => {
            let ast = parsed(&g)?;
            let (t, n, _) = best(
                runs,
                budget,
                || ast.clone(),
                |ast| ori_ptx::lower::lower_module_owned(FILE, ast),
            );
            (t, n)
        }
        2 => time_phase85(&g, runs, budget, &mut lines)?,
        3 => time_phase87(&g, runs, budget, &mut lines)?,
        4 => {
            let m = lowered(&g)?;
            let (t, n, (after, diags)) = best(runs, budget, || m.clone(), passes);
            lines.push(outcome_line(&after, &diags));
            (t, n)
        }
        5 => {
            let (t, n, _) = best(
                runs,
                budget,
                || (),
                |()| {
                    // The front end and passes the CLI runs.
                    let m = ori::ptx_to_ir(FILE, &g.ptx).map_err(|d| format!("{d:?}"));
                    m.map(passes)
                },
            );
            (t, n)
        }
        _ => return Err(format!("no step {step}")),
    };
    lines.push(format!("time {} {done}", t.as_nanos()));
    println!("{}", lines.join("\n"));
    Ok(ExitCode::SUCCESS)
}

/// Phase 85 alone, timed (`lines` gets the `facts` line: instructions,
/// reachable blocks, block visits).
fn time_phase85(
    g: &Generated,
    runs: usize,
    budget: Duration,
    lines: &mut Vec<String>,
) -> Result<(Duration, usize), String> {
    let m = lowered(g)?;
    let info = ModuleInfo::of(&m);
    let (t, n, after) = best(
        runs,
        budget,
        || m.clone(),
        |mut m| {
            for f in bodies(&mut m) {
                run_pass(&OriPropagateGmma, f, &info);
            }
            m
        },
    );
    let (mut insts, mut blocks, mut visits) = (0, 0, 0);
    for f in after.funcs.values().filter(|f| f.has_body) {
        let cfg = ControlFlowGraph::compute(f);
        insts += f.inst_count();
        blocks += cfg.rpo().len();
        visits += InFlight::compute(f, &cfg).visits;
    }
    lines.push(format!("facts {insts} {blocks} {visits}"));
    Ok((t, n))
}

/// Phase 87 alone, timed after phase 85 (`lines` gets the `outcome` line).
fn time_phase87(
    g: &Generated,
    runs: usize,
    budget: Duration,
    lines: &mut Vec<String>,
) -> Result<(Duration, usize), String> {
    let mut m = lowered(g)?;
    let info = ModuleInfo::of(&m);
    for f in bodies(&mut m) {
        run_pass(&OriPropagateGmma, f, &info);
    }
    let (t, n, (after, diags)) = best(
        runs,
        budget,
        || m.clone(),
        |mut m| {
            let mut d = Vec::new();
            for f in bodies(&mut m) {
                d.extend(run_pass(&FixupGmmaSequence, f, &info));
            }
            (m, d)
        },
    );
    lines.push(outcome_line(&after, &diags));
    Ok((t, n))
}

/// One step at one size, as the parent saw it.
#[derive(Clone, Copy, Debug)]
enum Timing {
    /// Best wall time over this many runs.
    Done(Duration, usize),
    /// Killed at the time limit.
    TimedOut,
    /// Not run: it timed out at a smaller size.
    Skipped,
    /// Not asked for (`--steps`).
    Unwanted,
}

/// What one size measured.
struct Row {
    insts: usize,
    tiles: usize,
    mb: f64,
    /// (IR instructions, reachable blocks, phase 85 block visits), from the phase 85 step.
    facts: Option<(usize, usize, usize)>,
    /// Phase 87's outcome (waits, arrives injected; serialized), when it ran.
    outcome: Option<(usize, usize, bool)>,
    times: [Timing; 6],
}

fn numbers(line: &str) -> Vec<u128> {
    line.split_whitespace()
        .skip(1)
        .filter_map(|w| w.parse().ok())
        .collect()
}

fn measure(opts: &Options, shape: Shape, size: usize, dead: &mut [bool; 6]) -> Result<Row, String> {
    let g = generate_shape(shape, size);
    let mut row = Row {
        insts: g.insts,
        tiles: g.tiles,
        mb: g.ptx.len() as f64 / 1e6,
        facts: None,
        outcome: None,
        times: [Timing::Unwanted; 6],
    };
    drop(g);
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let root = crate::oracle::root();
    for &k in &opts.steps {
        if dead[k] {
            row.times[k] = Timing::Skipped;
            continue;
        }
        let args: Vec<String> = [
            "bench".to_string(),
            "--child".into(),
            shape.name().into(),
            size.to_string(),
            k.to_string(),
            opts.runs.to_string(),
            (opts.limit.as_millis() / 3).to_string(),
        ]
        .into();
        let out = crate::process::run(&exe, &args, &root, opts.limit)?;
        if out.timed_out {
            row.times[k] = Timing::TimedOut;
            dead[k] = true;
            eprintln!(
                "  {:>8} {:<10} over the {} s limit: killed; skipped at larger sizes",
                row.insts,
                STEPS[k],
                opts.limit.as_secs()
            );
            continue;
        }
        if out.code != 0 {
            return Err(format!(
                "{} at {size}: child failed ({}):\n{}",
                STEPS[k], out.code, out.stderr
            ));
        }
        for line in out.stdout.lines() {
            let n = numbers(line);
            match (line.split_whitespace().next(), n.as_slice()) {
                (Some("time"), [ns, runs]) => {
                    let t = Duration::from_nanos(*ns as u64);
                    row.times[k] = Timing::Done(t, *runs as usize);
                    eprintln!("  {:>8} {:<10} {:>10.1} ms", row.insts, STEPS[k], ms(t));
                }
                (Some("facts"), [i, b, v]) => {
                    row.facts = Some((*i as usize, *b as usize, *v as usize))
                }
                (Some("outcome"), [w, a, s]) => {
                    row.outcome = Some((*w as usize, *a as usize, *s != 0))
                }
                _ => {}
            }
        }
    }
    Ok(row)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn bench(opts: &Options) -> Result<ExitCode, String> {
    eprintln!(
        "ori bench: release build, one process per step and size, best of {} runs, {} s limit",
        opts.runs,
        opts.limit.as_secs()
    );
    let mut worst: Vec<(f64, Shape, &str)> = Vec::new();
    for &shape in &opts.shapes {
        eprintln!("{}:", shape.name());
        let mut rows = Vec::new();
        let mut dead = [false; 6];
        let bar = crate::progress::bar(opts.sizes.len(), "sizes");
        for &n in &opts.sizes {
            bar.set_message(format!("{n} instructions"));
            rows.push(bar.suspend(|| measure(opts, shape, n, &mut dead))?);
            bar.inc(1);
        }
        bar.finish_and_clear();
        for (k, e) in report(opts, shape, &rows).into_iter().enumerate() {
            if let Some(e) = e {
                worst.push((e, shape, STEPS[k]));
            }
        }
    }
    if !worst.is_empty() {
        worst.sort_by(|a, b| b.0.total_cmp(&a.0));
        let (e, shape, step) = worst[0];
        println!();
        println!(
            "largest exponent: {e:.2} ({} {step}); {} of {} steps at most 1.10",
            shape.name(),
            worst.iter().filter(|w| w.0 <= 1.10).count(),
            worst.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Least-squares slope of log(time) against log(instructions): the exponent
/// k of time ~ n^k over the sizes measured (1.0 is linear).
fn exponent(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let logs: Vec<(f64, f64)> = points.iter().map(|&(n, t)| (n.ln(), t.ln())).collect();
    let mx = logs.iter().map(|p| p.0).sum::<f64>() / logs.len() as f64;
    let my = logs.iter().map(|p| p.1).sum::<f64>() / logs.len() as f64;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Prints one shape's tables; returns each step's exponent where measured.
fn report(opts: &Options, shape: Shape, rows: &[Row]) -> [Option<f64>; 6] {
    println!();
    println!("## {}: {}", shape.name(), shape.describe());
    println!();
    for r in rows {
        let facts = match r.facts {
            Some((i, b, v)) => format!(
                ", {i} IR instructions, {b} reachable blocks; phase 85 fixpoint: {v} block visits ({:.2} per block)",
                v as f64 / b.max(1) as f64
            ),
            None => String::new(),
        };
        let p87 = match r.outcome {
            Some((w, a, ser)) => format!(
                "; phase 87: {w} waits, {a} arrives injected{}",
                if ser { ", SERIALIZED" } else { "" }
            ),
            None => String::new(),
        };
        println!(
            "  {} PTX instructions, {} units, {:.1} MB{facts}{p87}",
            r.insts, r.tiles, r.mb
        );
    }
    println!();
    println!(
        "wall time, best of {} runs: ms (ns per instruction)",
        opts.runs
    );
    println!();
    let mut head = format!("| {:>12} |", "instructions");
    let mut rule = format!("|{}:|", "-".repeat(13));
    for step in STEPS {
        let _ = write!(head, " {step:>17} |");
        let _ = write!(rule, "{}:|", "-".repeat(18));
    }
    println!("{head}\n{rule}");
    let mut few = false;
    for r in rows {
        let mut line = format!("| {:>12} |", r.insts);
        for t in r.times {
            let cell = match t {
                Timing::Done(t, n) => {
                    few |= n < opts.runs;
                    format!(
                        "{:.1} ({:.0}){}",
                        ms(t),
                        t.as_nanos() as f64 / r.insts as f64,
                        if n < opts.runs { "*" } else { "" }
                    )
                }
                Timing::TimedOut => format!("> {} s", opts.limit.as_secs()),
                Timing::Skipped => "skipped".into(),
                Timing::Unwanted => "-".into(),
            };
            let _ = write!(line, " {cell:>17} |");
        }
        println!("{line}");
    }
    if few {
        println!();
        println!(
            "* fewer runs than asked: the runs had used a third of the {} s limit",
            opts.limit.as_secs()
        );
    }
    print_scaling(rows, &head, &rule)
}

/// The scaling table: each size against one of half its size, if measured,
/// as the exponent log2(time(2n) / time(n)); then the fit over every size.
/// Returns each step's fit.
fn print_scaling(rows: &[Row], head: &str, rule: &str) -> [Option<f64>; 6] {
    let mut pairs = Vec::new();
    for big in rows {
        if let Some(small) = rows
            .iter()
            .find(|s| (big.insts as f64 / s.insts as f64 - 2.0).abs() < 0.05)
        {
            pairs.push((small, big));
        }
    }
    let mut fits = [None; 6];
    for (k, fit) in fits.iter_mut().enumerate() {
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| match r.times[k] {
                Timing::Done(t, _) => Some((r.insts as f64, t.as_secs_f64().max(1e-9))),
                _ => None,
            })
            .collect();
        *fit = exponent(&points);
        // A step killed at the limit is superlinear whatever the fit says.
        if rows.iter().any(|r| matches!(r.times[k], Timing::TimedOut)) {
            *fit = Some(f64::INFINITY);
        }
    }
    println!();
    println!("scaling exponent k of time ~ n^k (1.00 is linear; log2 of time(2n)/time(n) per pair, then the fit):");
    println!();
    println!("{head}\n{rule}");
    for (small, big) in pairs {
        let k = |n: usize| (n + 500) / 1000;
        let sizes = format!("{}k/{}k", k(big.insts), k(small.insts));
        let mut line = format!("| {sizes:>12} |");
        for k in 0..STEPS.len() {
            let cell = match (big.times[k], small.times[k]) {
                (Timing::Done(b, _), Timing::Done(s, _)) => format!(
                    "{:.2}",
                    (b.as_secs_f64() / s.as_secs_f64().max(1e-12)).log2()
                ),
                _ => "-".into(),
            };
            let _ = write!(line, " {cell:>17} |");
        }
        println!("{line}");
    }
    let mut line = format!("| {:>12} |", "fit");
    for fit in fits {
        let cell = match fit {
            Some(e) if e.is_infinite() => "timed out".to_string(),
            Some(e) => format!("{e:.2}"),
            None => "-".into(),
        };
        let _ = write!(line, " {cell:>17} |");
    }
    println!("{line}");
    fits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_of_a_power_law() {
        let pts: Vec<(f64, f64)> = [1e3, 2e3, 4e3, 8e3]
            .iter()
            .map(|&n| (n, 3.0 * n * n))
            .collect();
        assert!((exponent(&pts).unwrap() - 2.0).abs() < 1e-9);
        let lin: Vec<(f64, f64)> = [1e3, 4e3].iter().map(|&n| (n, n)).collect();
        assert!((exponent(&lin).unwrap() - 1.0).abs() < 1e-9);
        assert!(exponent(&lin[..1]).is_none());
    }

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("125k").unwrap(), 125_000);
        assert_eq!(parse_size("1M").unwrap(), 1_000_000);
        assert_eq!(parse_size("4_096").unwrap(), 4096);
        assert!(parse_size("x").is_err());
    }

    #[test]
    fn generated_kernel_compiles_with_injections_and_no_serialization() {
        let g = generate(INJECT_EVERY * 120);
        assert_eq!(g.ptx, generate(INJECT_EVERY * 120).ptx, "deterministic");
        let (ast, d) = ori_ptx::parse_with_diags("bench.ptx", &g.ptx);
        assert!(d.is_empty(), "{:?}", d.first().map(|d| &d.message));
        let (mut m, d) = ori_ptx::lower::lower_module("bench.ptx", &ast);
        assert!(d.is_empty(), "{:?}", d.first().map(|d| &d.message));
        assert_eq!(single_function(&m).inst_count(), g.insts);
        let mut pm = ori_gmma::pipeline();
        pm.verify = true;
        let mut diags = Vec::new();
        pm.run(&mut m, &mut diags, &mut |_| {}).expect("verifies");
        let f = single_function(&m);
        assert!(f.serialized.is_none(), "{diags:?}");
        let waits = diags
            .iter()
            .filter(|d| d.code == Some(C7517_WAIT_INJECTED))
            .count();
        let arrives = diags
            .iter()
            .filter(|d| d.code == Some(C7519_ARRIVE_INJECTED))
            .count();
        assert!(waits == (g.tiles / INJECT_EVERY).max(1), "{waits} waits");
        assert_eq!(arrives, waits);
    }
}
