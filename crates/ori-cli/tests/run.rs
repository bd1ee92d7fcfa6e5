//! `ori run`: a real Triton matmul from the command line, and every way its
//! command line or input can be wrong (exit 2 for the command line, 1 for
//! a file, 3 for a kernel that cannot run to its end, each with a message
//! naming what is wrong), and the sanitizer's reports (exit 4).

mod common;

use common::ori;
use std::path::{Path, PathBuf};

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ori-run-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const KERNEL: &str = "tests/real/triton39/mm_f16_64x32x32_s5_w4.ptx";

/// The arguments of `KERNEL` on the committed 128x128x128 inputs.
fn matmul_args(c: &str) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "run".into(),
        repo(KERNEL),
        "--grid".into(),
        "2,4".into(),
        "--arg".into(),
        format!("0=@{}", repo("tests/host/triton/inputs/a_fp16_128x128.npy")),
        "--arg".into(),
        format!(
            "mm_kernel_param_1=@{}",
            repo("tests/host/triton/inputs/b_fp16_128x128.npy")
        ),
        "--arg".into(),
        "2=zeros:f16:16384".into(),
        "--dump".into(),
        format!("2={c}"),
    ];
    for k in 3..9 {
        v.push("--arg".into());
        v.push(format!("{k}=128"));
    }
    v
}

fn run(args: &[String]) -> (i32, String, String) {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    ori(&refs)
}

#[test]
fn a_triton_matmul_runs_and_dumps_what_the_h100_computed() {
    let d = scratch("ok");
    let c = d.join("c.npy").to_string_lossy().into_owned();
    let (code, _, err) = run(&matmul_args(&c));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("ran 8 CTA(s)"), "{err}");
    let got = ori::host::npy::NpyArray::parse(&std::fs::read(&c).unwrap()).unwrap();
    let gpu = gpu_record("triton39_mm_f16_64x32x32_s5_w4");
    assert_eq!(got.descr, "<f2");
    assert_eq!(got.shape, vec![16384]);
    assert_eq!(got.data, gpu.data);
}

/// What the H100 computed for a case of tests/host/triton.
fn gpu_record(name: &str) -> ori::host::npy::NpyArray {
    let gz =
        std::fs::File::open(repo(&format!("tests/host/triton/gpu/{name}.gpu.npy.gz"))).unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut bytes).unwrap();
    ori::host::npy::NpyArray::parse(&bytes).unwrap()
}

/// A kernel that takes its tensors only through host tensor maps, passed
/// by value: `tensormap:` arguments encode them (here as Triton's launcher
/// has the driver encode them), and `--dump` of the map's parameter writes
/// the buffer it points to.
#[test]
fn tensor_map_arguments_run_a_host_descriptor_kernel() {
    let d = scratch("tmap");
    let c = d.join("c.npy").to_string_lossy().into_owned();
    let a = repo("tests/host/triton/inputs/a_fp16_128x128.npy");
    let b = repo("tests/host/triton/inputs/b_fp16_128x128.npy");
    let map =
        |buf: &str| format!("tensormap:buffer={buf},dtype=f16,dims=128x128,box=64x64,swizzle=128B");
    let mut v: Vec<String> = vec![
        "run".into(),
        repo("tests/real/triton39/tma_host_f16_64x128x64_s4_w4.ptx"),
        "--grid".into(),
        "2".into(),
    ];
    let args = [
        format!("0={}", map(&format!("@{a}"))),
        format!("5={}", map(&format!("@{b}"))),
        format!("10={}", map("zeros:f16:16384")),
    ];
    for x in args {
        v.extend(["--arg".into(), x]);
    }
    for (k, x) in [1, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17]
        .iter()
        .zip([
            128, 128, 128, 1, 128, 128, 128, 1, 128, 128, 128, 1, 128, 128, 128,
        ])
    {
        v.extend(["--arg".into(), format!("{k}={x}")]);
    }
    v.extend(["--dump".into(), format!("10={c}")]);
    let (code, _, err) = run(&v);
    assert_eq!(code, 0, "{err}");
    let got = ori::host::npy::NpyArray::parse(&std::fs::read(&c).unwrap()).unwrap();
    assert_eq!(
        got.data,
        gpu_record("triton39_tma_host_f16_64x128x64_s4_w4").data
    );
    // A tensor map where the kernel has a scalar, and a bad spec.
    let mut w = v.clone();
    let at = w.iter().position(|x| x == "1=128").unwrap();
    w[at] = format!("1={}", map("zeros:f16:4"));
    let (code, _, err) = run(&w);
    assert_eq!(
        (code, err.contains("not a 128-byte .b8 array")),
        (2, true),
        "{err}"
    );
    let mut w = v.clone();
    w[5] = "0=tensormap:buffer=zeros:f16:4,dtype=f17,dims=2x2,box=2x2".into();
    let (code, _, err) = run(&w);
    assert_eq!(
        (code, err.contains("unknown dtype 'f17'")),
        (2, true),
        "{err}"
    );
}

#[test]
fn command_line_mistakes_exit_2_and_say_what() {
    let d = scratch("usage");
    let c = d.join("c.npy").to_string_lossy().into_owned();
    let base = matmul_args(&c);
    let with = |extra: &[&str]| {
        let mut v = base.clone();
        v.extend(extra.iter().map(|s| s.to_string()));
        run(&v)
    };
    let (code, _, err) = with(&["--arg", "nope=1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no parameter 'nope'") && err.contains("0=mm_kernel_param_0"),
        "{err}"
    );
    let (code, _, err) = with(&["--arg", "3=7"]);
    assert_eq!((code, err.contains("given twice")), (2, true), "{err}");
    let mut v = base.clone();
    v[3] = "0,1".into();
    let (code, _, err) = run(&v);
    assert_eq!(
        (code, err.contains("not a positive integer")),
        (2, true),
        "{err}"
    );
    let (code, _, err) = with(&["--dump", "3=x.npy"]);
    assert_eq!(
        (code, err.contains("no buffer was given")),
        (2, true),
        "{err}"
    );
    let (code, _, err) = with(&["--arg", "9=zeros:f17:3"]);
    assert_eq!(
        (code, err.contains("unknown dtype 'f17'")),
        (2, true),
        "{err}"
    );
    // A missing scalar (not a trailing pointer) is named.
    let mut v = base.clone();
    let at = v.iter().position(|a| a == "8=128").unwrap();
    v.drain(at - 1..=at);
    let (code, _, err) = run(&v);
    assert_eq!(code, 2);
    assert!(
        err.contains("parameter 8 (mm_kernel_param_8, .u32) has no --arg"),
        "{err}"
    );
    // A literal that does not fit, a float for an integer.
    let (code, _, err) = with(&["--arg", "9=x"]);
    assert_eq!(
        (code, err.contains("'x' is not an integer")),
        (2, true),
        "{err}"
    );
    let mut v = base.clone();
    let at = v.iter().position(|a| a == "3=128").unwrap();
    v[at] = "3=4294967296".into();
    let (code, _, err) = run(&v);
    assert_eq!(
        (code, err.contains("does not fit a .u32")),
        (2, true),
        "{err}"
    );
    v[at] = "3=1.5".into();
    assert_eq!(run(&v).0, 2);
}

#[test]
fn kernel_and_file_problems_exit_1_or_3_with_the_line() {
    let d = scratch("bad");
    let c = d.join("c.npy").to_string_lossy().into_owned();
    // A four-warp kernel launched with two warps: its wgmma is run by a
    // partial warpgroup, which the host backend refuses with the line.
    let mut v = matmul_args(&c);
    v.extend(["--block".into(), "64".into()]);
    let (code, _, err) = run(&v);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("mm_f16_64x32x32_s5_w4.ptx:"), "{err}");
    // Not a .npy file.
    let junk = d.join("junk.npy");
    std::fs::write(&junk, b"hello").unwrap();
    let mut v = matmul_args(&c);
    v[5] = format!("0=@{}", junk.display());
    let (code, _, err) = run(&v);
    assert_eq!((code, err.contains("not a .npy file")), (1, true), "{err}");
    // A buffer too small for the kernel: the access is named with its line.
    let mut v = matmul_args(&c);
    v[9] = "2=zeros:f16:100".into();
    let (code, _, err) = run(&v);
    assert_eq!(code, 3);
    assert!(
        err.contains("mm_f16_64x32x32_s5_w4.ptx:")
            && err.contains("is outside memory: offset")
            && err.contains("of the 200-byte buffer at 0x"),
        "{err}"
    );
    // An instruction the host backend does not implement stops the run.
    let k = d.join("k.ptx");
    std::fs::write(
        &k,
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\tmul24.lo.s32 %r1, %r2, %r2;\n\tret;\n}\n",
    )
    .unwrap();
    let (code, _, err) = ori(&["run", k.to_str().unwrap()]);
    assert_eq!(code, 3);
    assert!(
        err.contains("k.ptx:7: mul24.lo.s32 is not supported by the host backend"),
        "{err}"
    );
    // A generic access through a null pointer: an error at its line.
    std::fs::write(
        &k,
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [p];\n\tadd.s64 %rd2, %rd1, 64;\n\tst.u32 [%rd2], %r1;\n\tret;\n}\n",
    )
    .unwrap();
    let (code, _, err) = ori(&["run", k.to_str().unwrap()]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("k.ptx:10: access through the null address 0x40"),
        "{err}"
    );
    // Triton's device-side TMA descriptors with the scratch pointer left
    // null (omitted): `tensormap.cp_fenceproxy` writes through it, an
    // error at its line (it once panicked in the tensor-map decoder).
    let inputs = repo("tests/host/triton/inputs");
    let (code, _, err) = ori(&[
        "run",
        &repo("tests/real/triton39/tma_device_f16_64x64x64_s4_w4.ptx"),
        "--grid",
        "4",
        "--arg",
        &format!("0=@{inputs}/a_fp16_128x128.npy"),
        "--arg",
        &format!("1=@{inputs}/b_fp16_128x128.npy"),
        "--arg",
        "2=zeros:f16:16384",
        "--arg",
        "3=128",
        "--arg",
        "4=128",
        "--arg",
        "5=128",
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("tma_device_f16_64x64x64_s4_w4.ptx:130: CTA (0,0,0): access through the null address 0x0"),
        "{err}"
    );
}

/// A kernel whose warps race on shared memory (warp 1 reads what warp 0
/// wrote, with no barrier between): reported once with both lines, the
/// run goes on and writes its output, exit 4; `--stop-on-hazard` stops
/// there; `--message-format json` gives the report as data.
#[test]
fn a_race_is_reported_the_run_goes_on_and_exits_4() {
    let d = scratch("race");
    let k = d.join("race.ptx");
    std::fs::write(
        &k,
        ".version 8.0\n.target sm_90a\n.address_size 64\n.shared .align 16 .b8 smem[256];\n\
         .visible .entry k(.param .u64 out)\n{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\
         \tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, smem;\n\tsetp.lt.u32 %p1, %r1, 32;\n\
         \t@%p1 st.shared.u32 [%r2], %r1;\n\
         \tld.shared.u32 %r3, [%r2];\n\
         \tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
         \tst.global.u32 [%rd3], %r3;\n\tret;\n}\n",
    )
    .unwrap();
    let out = d.join("out.npy").to_string_lossy().into_owned();
    let k = k.to_str().unwrap();
    let args = [
        "run",
        k,
        "--block",
        "64",
        "--arg",
        "0=zeros:u32:64",
        "--dump",
    ];
    let (code, _, err) = ori(&[&args[..], &[&format!("0={out}")]].concat());
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("race.ptx:14: warning[data-race]: this read of shared memory at 0x0 races with the write at line 13 by thread 31 (warp 0)"),
        "{err}"
    );
    assert_eq!(err.matches("warning[data-race]").count(), 1, "{err}");
    assert!(err.contains("found 1 hazard(s)"), "{err}");
    assert!(std::path::Path::new(&out).exists(), "the output is written");
    let (code, _, err) = ori(&[&args[..], &[&format!("0={out}"), "--stop-on-hazard"]].concat());
    assert_eq!(code, 4, "{err}");
    let (code, json, err) = ori(&[
        &args[..],
        &[&format!("0={out}"), "--message-format", "json"],
    ]
    .concat());
    assert_eq!(code, 4, "{err}");
    assert_eq!(err, "", "JSON reports go to stdout");
    let err = json;
    let lines: Vec<serde_json::Value> = err
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines[0]["type"], "hazard", "{err}");
    assert_eq!(
        (
            &lines[0]["kind"],
            &lines[0]["line"],
            &lines[0]["other_line"]
        ),
        (&"data-race".into(), &14.into(), &13.into())
    );
    assert_eq!(lines.last().unwrap()["exit_status"], 4, "{err}");
    // With a barrier between the store and the load: clean.
    let fixed = std::fs::read_to_string(k)
        .unwrap()
        .replace("\tld.shared.u32 %r3", "\tbar.sync 0; ld.shared.u32 %r3");
    std::fs::write(k, fixed).unwrap();
    let (code, _, err) = ori(&[&args[..], &[&format!("0={out}")]].concat());
    assert_eq!(code, 0, "{err}");
}

/// A raw parameter block, as recorded on the GPU (here built by hand for a
/// Triton matmul: three pointers, six u32, two null scratch pointers, laid
/// out as the kernel declares them), with `--mem` placing the buffers at
/// the addresses it holds and `--dump ADDR=` writing one back.
#[test]
fn a_recorded_parameter_block_replays_with_buffers_at_its_addresses() {
    let d = scratch("params");
    let (a, b, c) = (
        0x7f00_0000_0000u64,
        0x7f00_0010_0000u64,
        0x7f00_0020_0000u64,
    );
    let mut block = Vec::new();
    for p in [a, b, c] {
        block.extend_from_slice(&p.to_le_bytes());
    }
    for x in [128u32; 6] {
        block.extend_from_slice(&x.to_le_bytes());
    }
    block.extend_from_slice(&[0; 16]);
    let bin = d.join("params.bin");
    std::fs::write(&bin, &block).unwrap();
    let out = d.join("c.npy").to_string_lossy().into_owned();
    let v: Vec<String> = vec![
        "run".into(),
        repo(KERNEL),
        "--grid".into(),
        "2,4".into(),
        "--params".into(),
        format!("@{}", bin.display()),
        "--mem".into(),
        format!(
            "{a:#x}=@{}",
            repo("tests/host/triton/inputs/a_fp16_128x128.npy")
        ),
        "--mem".into(),
        format!(
            "{b:#x}=@{}",
            repo("tests/host/triton/inputs/b_fp16_128x128.npy")
        ),
        "--mem".into(),
        format!("{c:#x}=zeros:f16:16384"),
        "--dump".into(),
        format!("{c:#x}={out}"),
    ];
    let (code, _, err) = run(&v);
    assert_eq!(code, 0, "{err}");
    let got = ori::host::npy::NpyArray::parse(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(got.data, gpu_record("triton39_mm_f16_64x32x32_s5_w4").data);
    // A block too short for the declared parameters; --arg beside --params;
    // overlapping buffers.
    std::fs::write(&bin, &block[..40]).unwrap();
    let (code, _, err) = run(&v);
    assert_eq!(
        (code, err.contains("parameter block is 40 bytes")),
        (1, true),
        "{err}"
    );
    let mut w = v.clone();
    w.extend(["--arg".into(), "3=1".into()]);
    assert_eq!(run(&w).0, 2);
    let mut w = v.clone();
    w[11] = format!("{:#x}=zeros:f16:16384", a + 8);
    let (code, _, err) = run(&w);
    assert_eq!((code, err.contains("overlaps")), (2, true), "{err}");
}

/// Without --block, the kernel's own `.reqntid` sets the CTA: Triton's
/// warp-specialized matmul declares 384 threads (three warpgroups).
#[test]
fn the_block_defaults_to_the_kernels_reqntid() {
    let d = scratch("reqntid");
    let c = d.join("c.npy").to_string_lossy().into_owned();
    let mut v: Vec<String> = vec![
        "run".into(),
        repo("tests/real/triton39/ws_tma_device_f16_128x128x64_s3_w4.ptx"),
    ];
    for (k, x) in [
        format!("@{}", repo("tests/host/triton/inputs/a_fp16_128x128.npy")),
        format!("@{}", repo("tests/host/triton/inputs/b_fp16_128x128.npy")),
        "zeros:f16:16384".into(),
        "128".into(),
        "128".into(),
        "128".into(),
        "zeros:u8:1024".into(),
    ]
    .iter()
    .enumerate()
    {
        v.extend(["--arg".into(), format!("{k}={x}")]);
    }
    v.extend(["--dump".into(), format!("2={c}")]);
    let (code, _, err) = run(&v);
    assert_eq!(code, 0, "{err}");
    let got = ori::host::npy::NpyArray::parse(&std::fs::read(&c).unwrap()).unwrap();
    assert_eq!(
        got.data,
        gpu_record("triton39_ws_tma_device_f16_128x128x64_s3_w4").data
    );
}

/// The cluster probe (clusters of 2 by `.reqnctapercluster`) runs as its
/// directive says; `--cluster` must agree with it, divide the grid, and
/// stay within 8 CTAs; `.maxclusterrank` and `.explicitcluster` hold.
#[test]
fn the_cluster_shape_comes_from_the_kernel_or_cluster_and_is_checked() {
    let d = scratch("cluster");
    let out = d.join("out.npy").to_string_lossy().into_owned();
    let input = d.join("in.npy");
    // 64 rows of 16 u32 words, as the probe's tensor map reads them.
    let words: Vec<u8> = (0..1024u32).flat_map(|w| w.to_le_bytes()).collect();
    let array = ori::host::npy::NpyArray {
        descr: "<u4".into(),
        shape: vec![64, 16],
        data: words,
    };
    std::fs::write(&input, array.to_bytes()).unwrap();
    let probe = repo("tests/host/probes/cluster_dsmem.ptx");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec![
            "run".into(),
            probe.clone(),
            "--arg".into(),
            format!(
                "0=tensormap:buffer=@{},dtype=u32,dims=16x64,box=16x16",
                input.display()
            ),
            "--arg".into(),
            "1=zeros:u32:4096".into(),
            "--dump".into(),
            format!("1={out}"),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let (code, _, err) = run(&args(&["--grid", "4"]));
    assert_eq!(code, 0, "{err}");
    let got = ori::host::npy::NpyArray::parse(&std::fs::read(&out).unwrap()).unwrap();
    let word = |k: usize| u32::from_le_bytes(got.data[4 * k..4 * k + 4].try_into().unwrap());
    // CTA 3: rank 1 of cluster 1 read its peer's (CTA 2's) smem_a[0].
    assert_eq!(word(3 * 1024), 2000);
    assert_eq!((word(3 * 1024 + 257), word(3 * 1024 + 259)), (1, 1));
    let (code, _, err) = run(&args(&["--grid", "4", "--cluster", "4"]));
    assert_eq!(code, 2);
    assert!(err.contains("declares .reqnctapercluster 2,1,1"), "{err}");
    let (code, _, err) = run(&args(&["--grid", "3"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("not a whole number of 2,1,1 clusters"),
        "{err}"
    );
    // Without the directive: --cluster, at most 8 CTAs, .maxclusterrank.
    let src = std::fs::read_to_string(&probe).unwrap();
    let free = d.join("free.ptx");
    std::fs::write(&free, src.replace(".reqnctapercluster 2, 1, 1", "")).unwrap();
    let with = |file: &Path, extra: &[&str]| {
        let mut v = args(extra);
        v[1] = file.to_string_lossy().into_owned();
        run(&v)
    };
    let (code, _, err) = with(&free, &["--grid", "4", "--cluster", "2"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = with(&free, &["--grid", "16", "--cluster", "16"]);
    assert_eq!(code, 2);
    assert!(err.contains("at most 8 CTAs"), "{err}");
    let capped = d.join("capped.ptx");
    std::fs::write(
        &capped,
        src.replace(".reqnctapercluster 2, 1, 1", ".maxclusterrank 1"),
    )
    .unwrap();
    let (code, _, err) = with(&capped, &["--grid", "4", "--cluster", "2"]);
    assert_eq!(code, 2);
    assert!(err.contains(".maxclusterrank 1"), "{err}");
    let explicit = d.join("explicit.ptx");
    std::fs::write(
        &explicit,
        src.replace(".reqnctapercluster 2, 1, 1", ".explicitcluster"),
    )
    .unwrap();
    let (code, _, err) = with(&explicit, &["--grid", "4"]);
    assert_eq!(code, 2);
    assert!(err.contains(".explicitcluster"), "{err}");
}
