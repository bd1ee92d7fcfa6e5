//! `ori run`: a real Triton matmul from the command line, and every way its
//! command line or input can be wrong (exit 2 for the command line, 1 for
//! the kernel or a file, each with a message naming what is wrong).

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
    let gpu = std::fs::read(repo(
        "tests/host/triton/gpu/triton39_mm_f16_64x32x32_s5_w4.gpu.npy",
    ))
    .unwrap();
    let gpu = ori::host::npy::NpyArray::parse(&gpu).unwrap();
    assert_eq!(got.descr, "<f2");
    assert_eq!(got.shape, vec![16384]);
    assert_eq!(got.data, gpu.data);
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
fn kernel_and_file_problems_exit_1_with_the_line() {
    let d = scratch("bad");
    let c = d.join("c.npy").to_string_lossy().into_owned();
    // A four-warp kernel launched with two warps: its wgmma is run by a
    // partial warpgroup, which the host backend refuses with the line.
    let mut v = matmul_args(&c);
    v.extend(["--block".into(), "64".into()]);
    let (code, _, err) = run(&v);
    assert_eq!(code, 1, "{err}");
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
    assert_eq!(code, 1);
    assert!(
        err.contains("mm_f16_64x32x32_s5_w4.ptx:") && err.contains("outside every buffer"),
        "{err}"
    );
    // An instruction the host backend does not implement stops the run.
    let k = d.join("k.ptx");
    std::fs::write(
        &k,
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\tbrev.b32 %r1, %r2;\n\tret;\n}\n",
    )
    .unwrap();
    let (code, _, err) = ori(&["run", k.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("k.ptx:7: brev.b32 is not supported by the host backend"),
        "{err}"
    );
}
