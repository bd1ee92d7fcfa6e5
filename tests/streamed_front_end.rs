//! The streamed front end (`ori_ptx::lower::parse_and_lower`: each body
//! lowered batch by batch as it is parsed) against the whole-tree one
//! (`parse_with_diags`, then `lower_module_owned`), one trial per `.ptx`
//! of every corpus (`tests/triton*`, `tests/real`, `tests/corpus`,
//! `tests/bad_input`, `tests/generated`), whatever its size.
//!
//! Where the streamed front end answers, its module must print exactly
//! as the whole-tree one's (instructions, registers, block names and
//! numbers), its module-level diagnostics must be the whole-tree
//! front end's, which must have no other, and the `.loc` positions it
//! took as it went must be those a second reading of the text finds.
//! Where it declines (`None`: a diagnostic, a body not written the way
//! compilers write one), the caller runs the whole-tree front end, so
//! nothing is lost; but on what compilers emit (`tests/triton*`,
//! `tests/real`) it must not decline, or the memory it saves is lost
//! without anyone seeing, unless the whole-tree front end rejects the
//! kernel too.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Every `.ptx` below `dir`, with its trial name.
fn kernels(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            kernels(&p, &format!("{prefix}{name}/"), out);
        } else if let Some(stem) = name.strip_suffix(".ptx") {
            out.push((format!("{prefix}{stem}"), p));
        }
    }
}

fn check(name: &str, path: &Path, must_stream: bool) -> Result<(), Failed> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    check_text(name, &path.to_string_lossy(), &src, must_stream)
}

/// A kernel of `tiles` pipelined tiles (a loop of one wgmma under
/// `wait_group 1`, then `wait_group 0` and a store), about 640 bytes each.
fn tiled_kernel(tiles: usize) -> String {
    use std::fmt::Write as _;
    let n = tiles + 1;
    let mut s = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n\n\
         .visible .entry k(.param .u64 p_a, .param .u32 p_k)\n{{\n\
         \t.reg .pred %p<{n}>;\n\t.reg .b32 %r<{}>;\n\t.reg .b64 %rd<2>;\n\t.reg .f32 %f<{}>;\n\
         \tld.param.u64 %rd0, [p_a];\n\tld.param.u32 %r0, [p_k];\n",
        2 * n,
        8 * n
    );
    for t in 0..tiles {
        let f = 8 * t;
        for k in 0..8 {
            let _ = writeln!(s, "\tmov.f32 %f{}, 0f00000000;", f + k);
        }
        let (i, out) = (2 * t + 1, 2 * t + 2);
        let acc: Vec<String> = (0..8).map(|k| format!("%f{}", f + k)).collect();
        let _ = writeln!(
            s,
            "\tmov.u32 %r{i}, 0;\n$L{t}:\n\twgmma.fence.sync.aligned;\n\
             \twgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {{{}}}, %rd0, %rd0, 1, 1, 1, 0, 0;\n\
             \twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 1;\n\
             \tadd.s32 %r{i}, %r{i}, 1;\n\tsetp.lt.s32 %p{t}, %r{i}, %r0;\n\t@%p{t} bra $L{t};\n\
             \twgmma.wait_group.sync.aligned 0;\n\tcvt.rn.f16x2.f32 %r{out}, %f{}, %f{f};\n\
             \tst.global.b32 [%rd0], %r{out};",
            acc.join(", "),
            f + 1
        );
    }
    s.push_str("\tret;\n}\n");
    s
}

fn check_text(name: &str, file: &str, src: &str, must_stream: bool) -> Result<(), Failed> {
    let (ast, parse_diags) = ori::ptx::parse_with_diags(file, src);
    let (sequential, lower_diags) = ori::ptx::lower::lower_module_owned(file, ast);
    let Some(p) = ori::ptx::lower::parse_and_lower(file, src) else {
        // A compiler's kernel the whole-tree front end rejects too (an
        // instruction ori does not support, such as `brx.idx`) has nothing
        // to stream.
        let rejected = parse_diags
            .iter()
            .chain(&lower_diags)
            .any(|d| d.severity == ori::ptx::diag::Severity::Error);
        if must_stream && !rejected {
            return Err(format!(
                "{name}: a compiler's kernel, and the streamed front end declined it"
            )
            .into());
        }
        return Ok(());
    };
    if !parse_diags.is_empty() {
        return Err(format!("{name}: streamed, though parsing reports {parse_diags:?}").into());
    }
    if lower_diags != p.diags {
        return Err(format!(
            "{name}: diagnostics differ\nwhole tree: {lower_diags:?}\nstreamed:   {:?}",
            p.diags
        )
        .into());
    }
    if p.locs.source_map() != ori::ptx::source_map::build(file, src) {
        return Err(format!("{name}: the source maps differ").into());
    }
    let (want, got) = (
        ori::ir::write_module(&sequential),
        ori::ir::write_module(&p.module),
    );
    if want != got {
        let at = want
            .lines()
            .zip(got.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let line = |s: &str| s.lines().nth(at).unwrap_or("").to_string();
        return Err(format!(
            "{name}: the modules differ from line {}\nwhole tree: {}\nstreamed:   {}",
            at + 1,
            line(&want),
            line(&got)
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let dir = tests_dir();
    let mut all = Vec::new();
    for (sub, compiled) in [
        ("triton", true),
        ("triton2", true),
        ("real", true),
        ("corpus", false),
        ("bad_input", false),
        ("generated", false),
    ] {
        let mut found = Vec::new();
        kernels(&dir.join(sub), &format!("{sub}/"), &mut found);
        all.extend(found.into_iter().map(|(n, p)| (n, p, compiled)));
    }
    let mut trials: Vec<Trial> = all
        .into_iter()
        .map(|(name, path, compiled)| {
            Trial::test(name.clone(), move || check(&name, &path, compiled))
        })
        .collect();
    // A body of many batches, larger than any corpus kernel.
    trials.push(Trial::test("large/tiles", || {
        let src = tiled_kernel(7000);
        assert!(src.len() > 4 << 20, "{} bytes", src.len());
        check_text("large/tiles", "tiles.ptx", &src, true)
    }));
    libtest_mimic::run(&args, trials).exit();
}
