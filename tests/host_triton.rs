//! The host backend on real Triton kernels against an H100, one trial per
//! kernel (`host_triton/NAME`).
//!
//! `tests/host/triton/cases.tsv` lists every `mm_kernel` of
//! `tests/real/triton36` and `triton39`, four and eight warps (one and two
//! warpgroups per CTA), and every `tma_device_mm_kernel` (TMA loads and
//! stores through descriptors the kernel builds with `tensormap.replace`,
//! mbarriers, and the warp-specialized variants of three warpgroups with
//! `setmaxnreg`), Triton 3.9's `tma_host_mm_kernel`s (tensor maps passed
//! by value, encoded from the compiled kernel's descriptor metadata), the
//! persistent, split-K, grouped and batched matmuls, the fused-epilogue
//! matmuls, flash attention, and (session 16) the gated-MLP, fp8
//! tensor/row/block-scaled, int8 and int4 weight-dequantizing and LoRA
//! matmuls, whose further inputs (scales, a second weight, the LoRA factors)
//! come as named buffers in the last column
//! (f16, bf16, tf32, tf32x3, e4m3,
//! e5m2 and their mixes, int8, f16 accumulators, fp8 with imprecise
//! accumulation, both majors of B), each on a 128x128x128 problem over its
//! full grid. The inputs (`inputs/*.npy`) are small integers, so every
//! product and partial sum is exact in every type: the GPU's answer is one
//! bit pattern, recorded by `tests/host/triton/record_gpu.py` on an H100
//! (`gpu/NAME.gpu.npy.gz`, never edited; `record.log` says which GPU, ptxas
//! and CuPy). Each kernel goes through ori's passes, then runs with
//! `ori_host::run` exactly as `ori run` launches it, and C must be the same
//! bytes. Triton 3.6's kernels that read `cp.async` data with wgmma and no
//! `fence.proxy.async` must also be stopped by the sanitizer's proxy check.

mod common;

use common::{half_to_f32, unfenced_cp_async};
use libtest_mimic::{Arguments, Failed, Trial};
use ori::host::npy::NpyArray;

fn dir() -> std::path::PathBuf {
    common::triton_case::dir()
}

/// One row of cases.tsv (or cases_rn.tsv), run and compared with its
/// recording in `gpu_dir` (`gpu`, or `gpu_rn` for the random-normal cases).
fn run_case(row: &str, gpu_dir: &str) -> Result<(), String> {
    let common::triton_case::Case {
        name,
        ptx,
        src,
        m,
        entry,
        g,
        launch,
        pc,
        pm,
        size,
        count,
        m_count,
        tolerance,
    } = common::triton_case::prepare(row, None, true)?;
    let (name, tolerance) = (name.as_str(), tolerance.as_str());
    // The sanitizer's proxy check. Triton 3.6 reads `cp.async`-filled
    // shared memory with wgmma without a `fence.proxy.async` after the
    // wait, which the PTX ISA leaves unordered (3.9 fences): those kernels
    // must be reported at exactly such a write, as that documented hazard,
    // and still run to the GPU's output. Any other finding is a failure.
    let stats = ori::host::run(&m, &entry, &launch, &g).map_err(|e| e.to_string())?;
    for h in &stats.hazards {
        let documented = h.kind == ori::host::HazardKind::UnfencedAsyncCopy
            && unfenced_cp_async(&src, &h.message);
        if !(ptx.contains("triton36") && documented) {
            return Err(format!("line {}: {h}", h.line));
        }
    }
    let gpu = gpu_record(gpu_dir, &format!("{name}.gpu.npy.gz"))?;
    let host = g.buffer(pc).ok_or("no C")?;
    if tolerance == "approx" {
        within_tolerance("Out", &host, &gpu)?;
        if m_count == 0 {
            return Ok(());
        }
        let gpu_m = gpu_record(gpu_dir, &format!("{name}.M.gpu.npy.gz"))?;
        return within_tolerance("M", &g.buffer(pm).ok_or("no M")?, &gpu_m);
    }
    if host == gpu.data.as_slice() {
        return Ok(());
    }
    let first = host
        .iter()
        .zip(&gpu.data)
        .position(|(h, d)| h != d)
        .unwrap_or(0);
    let differ = host
        .chunks(size)
        .zip(gpu.data.chunks(size))
        .filter(|(h, d)| h != d)
        .count();
    Err(format!(
        "{differ} of {count} elements of C differ from the GPU's; first at byte {first} (element {}, row {}, column {})",
        first / size,
        first / size / 128,
        first / size % 128
    ))
}

/// A recording of tests/host/triton/`gpu_dir`.
fn gpu_record(gpu_dir: &str, file: &str) -> Result<NpyArray, String> {
    let gz = dir().join(gpu_dir).join(file);
    let mut bytes = Vec::new();
    let f = std::fs::File::open(&gz).map_err(|e| format!("{}: {e}", gz.display()))?;
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(f), &mut bytes)
        .map_err(|e| format!("{}: {e}", gz.display()))?;
    NpyArray::parse(&bytes).map_err(|e| format!("{}: {e}", gz.display()))
}

/// Kernels with approximate math (ex2.approx, div.full) against the GPU:
/// every element within 2 units in the last place of its type (the README's
/// host-backend tolerance: the host computes those functions correctly
/// rounded, the GPU's MUFU within a few f32 ulp, and the kernels round the
/// result to f16 or bf16; measured, 99.5% or more of Out is bit-identical
/// and the rest 1 ulp apart, M (f32) within 2 ulp).
fn within_tolerance(what: &str, host: &[u8], gpu: &NpyArray) -> Result<(), String> {
    const ULPS: f64 = 2.0;
    if gpu.descr == "|u1" {
        // fp8 codes of one sign are ordered: 2 ulp is 2 codes apart.
        for (k, (h, d)) in host.iter().zip(&gpu.data).enumerate() {
            if (h ^ d) & 0x80 != 0 && (h | d) & 0x7f != 0 || h.abs_diff(*d) > 2 {
                return Err(format!(
                    "{what}[{k}] = {h:#04x}, the GPU gave {d:#04x}: more than 2 fp8 codes apart"
                ));
            }
        }
        return Ok(());
    }
    // (mantissa bits, least normal exponent) of the element type.
    let (mant, emin) = match gpu.descr.as_str() {
        "<f2" => (10, -14),
        "<u2" => (7, -126),
        _ => (23, -126),
    };
    let decode = |b: &[u8]| -> f64 {
        match gpu.descr.as_str() {
            "<f2" => f64::from(half_to_f32(u16::from_le_bytes([b[0], b[1]]))),
            "<u2" => f64::from(f32::from_bits(
                u32::from(u16::from_le_bytes([b[0], b[1]])) << 16,
            )),
            _ => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        }
    };
    let size = ori::host::npy::element_size(&gpu.descr).ok_or("dtype")?;
    for (k, (h, d)) in host.chunks(size).zip(gpu.data.chunks(size)).enumerate() {
        let (h, d) = (decode(h), decode(d));
        let e = if d == 0.0 {
            emin
        } else {
            (d.abs().log2().floor() as i32).max(emin)
        };
        let ulp = 2f64.powi(e - mant);
        // (A NaN on either side fails: it is not within anything.)
        let within = (h - d).abs() <= ULPS * ulp;
        if !within {
            return Err(format!(
                "{what}[{k}] = {h}, the GPU gave {d}: {:.1} ulp apart (at most {ULPS})",
                (h - d).abs() / ulp
            ));
        }
    }
    Ok(())
}

/// The trials of one table (`cases.tsv` with recordings in `gpu`, or
/// `cases_rn.tsv` with `gpu_rn`); with `optional`, a row whose recording
/// is missing is an ignored trial (the random-normal inputs are generated, by
/// `python3 tests/host/triton/cases.py --random-normal`, and recorded, by
/// `record_gpu.py --random`, together).
fn trials(table: &str, gpu_dir: &'static str, optional: bool) -> Vec<Trial> {
    let known = known_differences(gpu_dir);
    table
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|row| {
            let row = row.to_string();
            let name = row.split('\t').next().unwrap_or("").to_string();
            let recorded = dir()
                .join(gpu_dir)
                .join(format!("{name}.gpu.npy.gz"))
                .exists();
            let listed = known.contains(&name);
            Trial::test(format!("host_triton/{name}"), move || {
                match (run_case(&row, gpu_dir), listed) {
                    (Ok(()), false) | (Err(_), true) => Ok(()),
                    (Err(e), false) => Err(Failed::from(e)),
                    (Ok(()), true) => Err(Failed::from(
                        "now gives the GPU's bits: take it off known_differences_rn.txt",
                    )),
                }
            })
            .with_ignored_flag(optional && !recorded)
        })
        .collect()
}

/// The trials of `gpu_dir` listed as known differences (only the
/// random-normal recordings have such a list: `known_differences_rn.txt`).
fn known_differences(gpu_dir: &str) -> Vec<String> {
    if gpu_dir != "gpu_rn" {
        return Vec::new();
    }
    let path = dir().join("known_differences_rn.txt");
    let text = std::fs::read_to_string(&path).expect("tests/host/triton/known_differences_rn.txt");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').next().unwrap_or("").to_string())
        .collect()
}

fn main() {
    let args = Arguments::from_args();
    let table =
        std::fs::read_to_string(dir().join("cases.tsv")).expect("tests/host/triton/cases.tsv");
    let mut all = trials(&table, "gpu", false);
    assert!(all.len() >= 156, "cases.tsv lists {} cases", all.len());
    // The random-normal cases, where generated.
    if let Ok(table) = std::fs::read_to_string(dir().join("cases_rn.tsv")) {
        all.extend(trials(&table, "gpu_rn", true));
    }
    libtest_mimic::run(&args, all).exit();
}
