//! `cargo xtask bench --host`: the host backend's speed on a real kernel,
//! against a well-kept CPU matmul in the same run.
//!
//! The kernel is Triton 3.9's `mm_bf16_128x128x64_s3_w4` (bf16 inputs, f32
//! accumulators, bf16 out) on a 1024x1024x1024 problem over its full grid
//! (64 CTAs), through ori's passes and `ori_host::run`, as `ori run` runs
//! it. The reference is `matrixmultiply::sgemm` (f32, the same size); both
//! use every core (the host backend runs CTAs in parallel, sgemm with its
//! `threading` feature). Both report GFLOP/s (2 M N K per
//! run, best of the runs); the ratio is the figure of merit. The
//! inputs are small integers, so the two products must be equal: the
//! bench checks that before it prints.

use std::time::{Duration, Instant};

const KERNEL: &str = "tests/real/triton39/mm_bf16_128x128x64_s3_w4.ptx";
const N: usize = 1024;

fn value(i: usize, j: usize, salt: usize) -> f32 {
    (((i * 3 + j * 5 + salt) % 7) as f32) - 3.0
}

fn bf16_bits(x: f32) -> [u8; 2] {
    // Small integers are exact in bf16: the top half of the f32.
    ((x.to_bits() >> 16) as u16).to_le_bytes()
}

/// The CPU time this process has used (user and system, from
/// `/proc/self/stat`, in clock ticks of 1/100 s; 0 where there is none):
/// with `ORI_BENCH_CPU` set, each host run prints what it used, a figure a
/// busy machine disturbs less than the wall-clock time.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (which ends with the last ')').
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let field = |k: usize| {
        rest.split_whitespace()
            .nth(k)
            .and_then(|v| v.parse::<f64>().ok())
    };
    (field(11).unwrap_or(0.0) + field(12).unwrap_or(0.0)) / 100.0
}

/// Run the bench; `runs` timed runs of each side. Returns the report.
pub fn run(runs: usize) -> Result<String, String> {
    let root = crate::oracle::root();
    let src = std::fs::read_to_string(root.join(KERNEL)).map_err(|e| format!("{KERNEL}: {e}"))?;
    let c = ori::compile_ptx(KERNEL, &src, &ori::Options::default());
    let m = c
        .module
        .ok_or_else(|| format!("{KERNEL} does not compile: {:?}", c.diags))?;
    let a: Vec<f32> = (0..N * N).map(|k| value(k / N, k % N, 1)).collect();
    let b: Vec<f32> = (0..N * N).map(|k| value(k / N, k % N, 2)).collect();

    // The CPU matmul.
    let (cpu, best_cpu) = time_sgemm(&a, &b, runs);

    // The host backend, as `ori run` runs it (the race detector on), and
    // with the race detector off (`--no-race-check`).
    let a16: Vec<u8> = a.iter().flat_map(|x| bf16_bits(*x)).collect();
    let b16: Vec<u8> = b.iter().flat_map(|x| bf16_bits(*x)).collect();
    let (out, best_host) = time_host(&m, &a16, &b16, runs, true)?;
    check_products(&out, &cpu)?;
    let (out, best_unchecked) = time_host(&m, &a16, &b16, runs, false)?;
    check_products(&out, &cpu)?;
    Ok(report([best_host, best_unchecked], best_cpu, runs))
}

/// `runs` timed runs of the host backend on the kernel: C and the best time.
fn time_host(
    m: &ori::ir::Module,
    a16: &[u8],
    b16: &[u8],
    runs: usize,
    race_check: bool,
) -> Result<(Vec<u8>, Duration), String> {
    let mut best_host = Duration::MAX;
    let mut out = Vec::new();
    for _ in 0..runs {
        let mut g = ori::host::GlobalMemory::new();
        let (pa, pb) = (g.alloc(a16.to_vec()), g.alloc(b16.to_vec()));
        let pc = g.alloc(vec![0; 2 * N * N]);
        let n = N as u64;
        let entry = m
            .funcs
            .values()
            .find(|f| f.kind == ori::ir::FuncKind::Entry)
            .ok_or("no entry")?;
        let mut params = vec![pa, pb, pc, n, n, n, n, n, n];
        params.resize(entry.params.len(), 0);
        let launch = ori::host::Launch {
            params,
            dynamic_shared: 227 * 1024,
            grid: [(N / 128) as u32, (N / 128) as u32, 1],
            step_limit: u64::MAX,
            race_check,
            ..ori::host::Launch::default()
        };
        let (t, cpu) = (Instant::now(), cpu_seconds());
        ori::host::run(m, &entry.name, &launch, &g).map_err(|e| e.to_string())?;
        best_host = best_host.min(t.elapsed());
        if std::env::var_os("ORI_BENCH_CPU").is_some() {
            eprintln!("host run: {:.3} s of CPU", cpu_seconds() - cpu);
        }
        out = g.buffer(pc).ok_or("no C")?.to_vec();
    }
    Ok((out, best_host))
}

/// `runs` timed runs of sgemm on `a` x `b`: the product and the best time.
fn time_sgemm(a: &[f32], b: &[f32], runs: usize) -> (Vec<f32>, Duration) {
    let mut cpu = vec![0f32; N * N];
    let mut best_cpu = Duration::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        // SAFETY: the pointers and strides describe the three N x N
        // row-major matrices above, which outlive the call.
        unsafe {
            matrixmultiply::sgemm(
                N,
                N,
                N,
                1.0,
                a.as_ptr(),
                N as isize,
                1,
                b.as_ptr(),
                N as isize,
                1,
                0.0,
                cpu.as_mut_ptr(),
                N as isize,
                1,
            );
        }
        best_cpu = best_cpu.min(t.elapsed());
    }

    (cpu, best_cpu)
}

/// The host backend's bf16 output against sgemm's f32 product.
fn check_products(out: &[u8], cpu: &[f32]) -> Result<(), String> {
    // Same product (exact on these inputs; bf16 rounds the sums past 256
    // to nearest even, as the epilogue's cvt.rn does).
    let bad = out
        .chunks(2)
        .zip(cpu)
        .filter(|(h, c)| {
            let bits = c.to_bits();
            let rounded = ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16;
            u16::from_le_bytes([h[0], h[1]]) != rounded
        })
        .count();
    if bad > 0 {
        return Err(format!(
            "the host backend's product differs from sgemm's in {bad} elements"
        ));
    }
    Ok(())
}

/// The bench's table and ratio, printed and returned (for
/// `docs/performance.md`).
fn report([best_host, best_unchecked]: [Duration; 2], best_cpu: Duration, runs: usize) -> String {
    use std::fmt::Write;
    let flop = 2.0 * (N as f64).powi(3);
    let gf = |d: Duration| flop / d.as_secs_f64() / 1e9;
    let mut s = format!(
        "| {N}x{N}x{N} bf16 matmul (Triton {KERNEL}) | time | GFLOP/s |\n|---|---:|---:|\n"
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let _ = writeln!(
        s,
        "| ori run (host backend, 64 CTAs, {cores} cores) | {:.3} s | {:.3} |",
        best_host.as_secs_f64(),
        gf(best_host)
    );
    let _ = writeln!(
        s,
        "| ori run --no-race-check | {:.3} s | {:.3} |",
        best_unchecked.as_secs_f64(),
        gf(best_unchecked)
    );
    let _ = writeln!(
        s,
        "| matrixmultiply::sgemm (f32, {cores} cores) | {:.4} s | {:.2} |",
        best_cpu.as_secs_f64(),
        gf(best_cpu)
    );
    let _ = writeln!(
        s,
        "\nThe host backend at {:.2}% of the CPU matmul (best of {runs} runs each; the products are equal).",
        100.0 * gf(best_host) / gf(best_cpu)
    );
    print!("{s}");
    s
}
