//! The host backend against the GPU. `tests/host/cases/` holds wgmma
//! kernels (every dense type, shapes n8..n256, all swizzles, transposes,
//! register A, negation, scale-d = 0, chained and multi-group pipelines),
//! their inputs, and what an H100 computed from them (`.gpu.bin`, recorded
//! by `tests/host/record_gpu.py`, never edited). Each kernel runs here
//! through ori's passes and then `ori_host::run`; the outputs must be the
//! same bits, the `*_random` cases (non-integer data, where the tensor
//! core's truncating sum shows: `ori_host::mma_arith`) included.

use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    cases_in("tests/host/cases").expect("tests/host/cases")
}

/// The `.ptx` files of `dir` (from the repository root), sorted.
fn cases_in(dir: &str) -> std::io::Result<Vec<PathBuf>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    v.sort();
    Ok(v)
}

fn header_value(src: &str, key: &str) -> Option<usize> {
    let line = src.lines().next()?;
    let at = line.find(&format!("{key}="))? + key.len() + 1;
    line[at..].split_whitespace().next()?.parse().ok()
}

/// Run one case on the host: the output bytes.
fn run_case(name: &str, src: &str, input: &[u8], passes: bool) -> Result<Vec<u8>, String> {
    let m = if passes {
        let c = ori::compile_ptx(name, src, &ori::Options::default());
        let m = c.module.ok_or_else(|| format!("{:?}", c.diags))?;
        m
    } else {
        ori::ptx_to_ir(name, src).map_err(|d| format!("{d:?}"))?
    };
    let out_bytes = header_value(src, "out_bytes").ok_or("no out_bytes in the header")?;
    let mut g = ori::host::GlobalMemory::new();
    let pin = g.alloc(input.to_vec());
    let pout = g.alloc(vec![0; out_bytes]);
    let launch = ori::host::Launch {
        params: vec![pin, pout],
        ..Default::default()
    };
    let stats = ori::host::run(&m, "k", &launch, &g).map_err(|e| e.to_string())?;
    // A hazard the sanitizer reports fails the case (the run went on).
    if !stats.hazards.is_empty() {
        let found: Vec<String> = stats.hazards.iter().map(|h| h.to_string()).collect();
        return Err(found.join("\n"));
    }
    Ok(g.buffer(pout).expect("output buffer").to_vec())
}

#[test]
fn host_backend_computes_what_the_h100_computed() {
    let (checked, bad) = compare(&cases());
    assert!(checked >= 50, "only {checked} cases ran: {bad:#?}");
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        checked,
        bad.join("\n")
    );
}

/// The random-normal cases (`tests/host/cases_rn`, written by
/// `python3 tests/host/gen_cases.py --random-normal`: every case above on
/// N(0, 1) data, and N from 24 to 240 over every dense form, K- and
/// MN-major, A in registers), bit for bit against their recordings
/// (`record_gpu.py --cases tests/host/cases_rn`, on an H200: see
/// `tests/host/cases_rn/record.log`).
#[test]
fn host_backend_computes_what_the_gpu_computed_on_random_normal_data() {
    let paths = cases_in("tests/host/cases_rn").expect("tests/host/cases_rn");
    let (checked, bad) = compare(&paths);
    assert!(checked >= 100, "only {checked} cases ran: {bad:#?}");
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        checked,
        bad.join("\n")
    );
}

/// Run each case and compare it with its recording: how many ran, and
/// what differed.
fn compare(paths: &[PathBuf]) -> (usize, Vec<String>) {
    let mut checked = 0;
    let mut bad = Vec::new();
    for path in paths {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(path).unwrap();
        let input = std::fs::read(path.with_extension("in.bin")).expect("input");
        let host = match run_case(&name, &src, &input, true) {
            Ok(h) => h,
            Err(e) => {
                bad.push(format!("{name}: {e}"));
                continue;
            }
        };
        let Ok(gpu) = std::fs::read(path.with_extension("gpu.bin")) else {
            bad.push(format!("{name}: no recorded GPU output"));
            continue;
        };
        checked += 1;
        let words = |b: &[u8]| -> Vec<u32> {
            b.chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
        let (h, g) = (words(&host), words(&gpu));
        let diff = h.iter().zip(&g).position(|(a, b)| a != b);
        if h.len() != g.len() {
            bad.push(format!(
                "{name}: {} words, the GPU wrote {}",
                h.len(),
                g.len()
            ));
        } else if let Some(k) = diff {
            bad.push(format!(
                "{name}: word {k} (thread {}, register {}): host {:#010x}, GPU {:#010x}",
                k / (h.len() / 128),
                k % (h.len() / 128),
                h[k],
                g[k]
            ));
        }
    }
    (checked, bad)
}

/// Phase 87 in action, with real semantics: without its `wgmma.wait_group`
/// the kernel reads accumulators still in flight (the host backend stops
/// it, naming both instructions); ori's passes inject the wait ptxas would
/// (C7517) and the kernel then computes exactly what the GPU computed from
/// the original.
#[test]
fn without_its_wait_a_kernel_reads_in_flight_registers_until_phase_87_injects_one() {
    let name = "f32_f16_f16_m64n64_k16_ak64_bk64";
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host/cases");
    let src = std::fs::read_to_string(dir.join(format!("{name}.ptx"))).unwrap();
    let input = std::fs::read(dir.join(format!("{name}.in.bin"))).unwrap();
    let gpu = std::fs::read(dir.join(format!("{name}.gpu.bin"))).unwrap();
    let lines: Vec<&str> = src.lines().collect();
    let wait = lines
        .iter()
        .position(|l| l.contains("wgmma.wait_group"))
        .expect("the case waits");
    // Keep the line count (so line numbers stay), drop the wait.
    let mut no_wait: Vec<&str> = lines.clone();
    no_wait[wait] = "";
    let no_wait = no_wait.join("\n") + "\n";

    let err = run_case(name, &no_wait, &input, false).expect_err("reads in flight");
    assert!(
        err.contains("while the wgmma of line") && err.contains("in flight"),
        "{err}"
    );

    let c = ori::compile_ptx(name, &no_wait, &ori::Options::default());
    let codes: Vec<Option<u32>> = c.diags.iter().map(|d| d.code).collect();
    assert!(codes.contains(&Some(7517)), "{codes:?}");
    let fixed = run_case(name, &no_wait, &input, true).expect("runs after phase 87");
    assert_eq!(fixed, gpu, "the injected wait gives the GPU's result");
}

/// The grid: every CTA runs, with its own `%ctaid` and `%nctaid`; here
/// thread 0 of each CTA writes `ctaid.x + 10 * ctaid.y + 100 * nctaid.x`
/// to its slot (PTX ISA: `%ctaid` is the CTA's position in the grid,
/// `%nctaid` the grid's size).
#[test]
fn every_cta_of_the_grid_runs_with_its_ctaid() {
    let src = r#"
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p_out)
{
  .reg .b32 x, y, n, v, slot, tid;
  .reg .b64 out, off;
  .reg .pred p;
  ld.param.u64 out, [p_out];
  mov.u32 tid, %tid.x;
  setp.eq.u32 p, tid, 0;
  mov.u32 x, %ctaid.x;
  mov.u32 y, %ctaid.y;
  mov.u32 n, %nctaid.x;
  mad.lo.u32 v, y, 10, x;
  mad.lo.u32 v, n, 100, v;
  mad.lo.u32 slot, y, n, x;
  mul.wide.u32 off, slot, 4;
  add.s64 out, out, off;
  @p st.global.u32 [out], v;
  ret;
}
"#;
    let m = ori::ptx_to_ir("grid.ptx", src).expect("parses");
    let mut g = ori::host::GlobalMemory::new();
    let out = g.alloc(vec![0; 4 * 6]);
    let launch = ori::host::Launch {
        params: vec![out],
        grid: [3, 2, 1],
        ..Default::default()
    };
    ori::host::run(&m, "k", &launch, &g).expect("runs");
    let got: Vec<u32> = g
        .buffer(out)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, vec![300, 301, 302, 310, 311, 312]);
}

/// The sanitizer's proxy check on a recorded case: without its
/// `fence.proxy.async`, the wgmma reads tiles that `st.shared` wrote
/// through the generic proxy, and the run reports the wgmma's line, the
/// store's line and the thread. The fence after the barrier (Triton's
/// order) is as good as before it (CUTLASS's, the recorded case's).
#[test]
fn proxy_check_stops_a_wgmma_reading_unfenced_generic_writes() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/host/cases/f16_f16_f16_m64n128_k16_am128_bm128.ptx");
    let src = std::fs::read_to_string(&path).unwrap();
    let input = std::fs::read(path.with_extension("in.bin")).unwrap();
    let gpu = std::fs::read(path.with_extension("gpu.bin")).unwrap();
    let fence = "  fence.proxy.async.shared::cta;\n";
    assert!(src.contains(fence));
    // No fence at all: stopped.
    let unfenced = src.replace(fence, "  // (fence removed)\n");
    let e = run_case("unfenced", &unfenced, &input, true).unwrap_err();
    let store_line = unfenced
        .lines()
        .position(|l| l.contains("st.shared"))
        .unwrap()
        + 1;
    assert!(e.contains("this wgmma reads shared memory at 0x"), "{e}");
    assert!(e.contains(&format!("wrote at line {store_line} ")), "{e}");
    assert!(
        e.contains("thread 0") && e.contains("no fence.proxy.async"),
        "{e}"
    );
    // The fence moved after the barrier: every thread's writes are ordered
    // by the barrier before its fence, so the run passes and computes what
    // the H100 did.
    let after = src
        .replace(fence, "")
        .replace("  bar.sync 0;\n", &format!("  bar.sync 0;\n{fence}"));
    assert_ne!(after, src);
    assert_eq!(run_case("after", &after, &input, true).unwrap(), gpu);
}

/// The sanitizer's TMA check on a real kernel: Triton's `tma_device`
/// matmul with its mbarrier wait replaced by "done" reads the tiles its TMA
/// loads fill before it saw their phase complete, and the run reports the
/// load's line; as written it runs clean.
#[test]
fn tma_check_stops_a_read_before_its_mbarrier_wait() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = "tests/real/triton39/tma_device_f16_64x64x64_s4_w4.ptx";
    let src = std::fs::read_to_string(root.join(path)).unwrap();
    let wait = "mbarrier.try_wait.parity.shared::cta.b64 complete, [%r69], %r140;";
    assert!(src.contains(wait));
    let npy = |f: &str| {
        ori::host::npy::NpyArray::parse(
            &std::fs::read(root.join("tests/host/triton/inputs").join(f)).unwrap(),
        )
        .unwrap()
        .data
    };
    let run = |src: &str| -> Result<(), String> {
        let c = ori::compile_ptx(path, src, &ori::Options::default());
        let m = c.module.ok_or_else(|| format!("{:?}", c.diags))?;
        let mut g = ori::host::GlobalMemory::new();
        let (a, b) = (
            g.alloc(npy("a_fp16_128x128.npy")),
            g.alloc(npy("b_fp16_128x128.npy")),
        );
        let c = g.alloc(vec![0; 2 * 128 * 128]);
        let scratch = g.alloc(vec![0; 4096]);
        let launch = ori::host::Launch {
            params: vec![a, b, c, 128, 128, 128, scratch, 0],
            grid: [4, 1, 1],
            dynamic_shared: 227 * 1024,
            ..Default::default()
        };
        let stats =
            ori::host::run(&m, "tma_device_mm_kernel", &launch, &g).map_err(|e| e.to_string())?;
        match stats.hazards.first() {
            None => Ok(()),
            Some(h) => Err(format!("line {}: {h}", h.line)),
        }
    };
    run(&src).expect("the kernel as written");
    let load_line = src
        .lines()
        .position(|l| l.contains("cp.async.bulk.tensor.2d.shared"))
        .unwrap()
        + 1;
    let e = run(&src.replace(wait, "mov.pred complete, -1;")).unwrap_err();
    assert!(e.contains("this wgmma reads shared memory at 0x"), "{e}");
    assert!(
        e.contains("that the TMA load of line") && e.contains("before this warpgroup saw phase"),
        "{e}"
    );
    assert!(
        e.contains(&format!("line {load_line} ")) || e.contains("TMA load of line"),
        "{e}"
    );
}

/// A `brx.idx` whose threads pick different targets (PTX ISA:
/// `pc = tlist[index]`): thread `t` below 120 jumps to list entry `t % 3`
/// (the blocks setting 12, 10, 11), the others' guard is false and they
/// fall through (7); all meet at the join and add 100. An index past the
/// list (`t % 5`, 3 targets) is undefined in the ISA: the run stops with
/// a fault naming the index, the list's length and the thread. The same
/// kernel (modulus 3) run on an H200 with 128 threads gave exactly `want`.
#[test]
fn brx_idx_sends_each_thread_to_the_block_its_index_picks() {
    let src = |modulus: u32| {
        format!(
            r#"
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p_out)
{{
  .reg .b32 r<4>;
  .reg .b64 rd<4>;
  .reg .pred p1;
  ld.param.u64 rd1, [p_out];
  mov.u32 r1, %tid.x;
  mul.wide.u32 rd2, r1, 4;
  add.s64 rd3, rd1, rd2;
  rem.u32 r2, r1, {modulus};
  setp.lt.u32 p1, r1, 120;
  ts: .branchtargets L2, L0, L1;
  @p1 brx.idx r2, ts;
  mov.u32 r3, 7;
  bra.uni J;
L0:
  mov.u32 r3, 10;
  bra.uni J;
L1:
  mov.u32 r3, 11;
  bra.uni J;
L2:
  mov.u32 r3, 12;
J:
  add.u32 r3, r3, 100;
  st.global.u32 [rd3], r3;
  ret;
}}
"#
        )
    };
    let run = |modulus: u32| {
        let m = ori::ptx_to_ir("brx.ptx", &src(modulus)).expect("parses");
        let mut g = ori::host::GlobalMemory::new();
        let out = g.alloc(vec![0; 4 * 128]);
        let launch = ori::host::Launch {
            params: vec![out],
            block: [128, 1, 1],
            ..Default::default()
        };
        ori::host::run(&m, "k", &launch, &g).map(|_| {
            let bytes = g.buffer(out).unwrap();
            let words = bytes
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()));
            words.collect::<Vec<u32>>()
        })
    };
    let want: Vec<u32> = (0..128u32)
        .map(|t| {
            if t < 120 {
                [112, 110, 111][t as usize % 3]
            } else {
                107
            }
        })
        .collect();
    assert_eq!(run(3).expect("runs"), want);
    let err = run(5).expect_err("index 3 of 3 targets").to_string();
    assert!(
        err.contains("brx.idx index 3 is past its list of 3 targets (thread 3)"),
        "{err}"
    );
}
