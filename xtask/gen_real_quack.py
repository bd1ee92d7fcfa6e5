#!/usr/bin/env python3
"""Generate the `quack` corpus family: quack's Hopper GEMMs (CuTe Python DSL), on a CPU.

quack (https://github.com/Dao-AILab/quack) compiles its GEMMs from fake
tensors (``quack.gemm._compile_gemm``), so no GPU is needed: with
``CUTE_DSL_ARCH=sm_90a`` and ``CUTE_DSL_KEEP=ptx`` the CuTe DSL writes the
kernel's PTX to ``CUTE_DSL_DUMP_DIR``. Each ``.ptx`` here is that file,
unedited. The configurations are quack's SM90 autotune space
(``quack.gemm_config._get_sm90_configs``: ping-pong 128xN and cooperative
256xN tiles, 2x1 and 1x2 clusters) with its epilogues (alpha, beta*C, row and
column broadcast vectors), dtypes and layouts.

Pinned: quack-kernels==0.6.5, nvidia-cutlass-dsl==4.8.1 (and the torch that
quack pulls in; only its CPU side is used).

    python3 -m venv target/venv-cute
    target/venv-cute/bin/pip install quack-kernels==0.6.5 nvidia-cutlass-dsl==4.8.1
    target/venv-cute/bin/python xtask/gen_real_quack.py --out tests/real/quack \\
        --ptxas target/oracle-tools/nvidia/cu13/bin/ptxas

About 30 s of compile per kernel. ``--only REGEX`` builds a subset (merged
into the manifest), ``--list`` prints the plan.
"""

import argparse
import glob
import os
import re
import shutil
import sys
import tempfile

import generator_common as common

DUMP = tempfile.mkdtemp(prefix="quack-ptx-")
os.environ["CUTE_DSL_ARCH"] = "sm_90a"
os.environ["CUTE_DSL_KEEP"] = "ptx"
os.environ["CUTE_DSL_DUMP_DIR"] = DUMP

import cutlass  # noqa: E402
from quack import gemm as qgemm  # noqa: E402
from quack.rounding import RoundingMode  # noqa: E402

T = {"bf16": cutlass.BFloat16, "f16": cutlass.Float16, "f32": cutlass.Float32, "e4m3": cutlass.Float8E4M3FN,
     "e5m2": cutlass.Float8E5M2}


def cfg(name, ab="bf16", d="bf16", c=None, tile=(128, 192), cluster=(2, 1), pingpong=True, persistent=True,
        dynamic=False, b_major="k", d_major="n", rowvec=None, colvec=None, alpha=0, beta=0, varlen_m=False,
        gather_a=False):
    """One GEMM: the arguments of quack.gemm._compile_gemm by name."""
    return dict(name=name, ab=ab, d=d, c=c, tile=tile, cluster=cluster, pingpong=pingpong, persistent=persistent,
                dynamic=dynamic, b_major=b_major, d_major=d_major, rowvec=rowvec, colvec=colvec, alpha=alpha,
                beta=beta, varlen_m=varlen_m, gather_a=gather_a)


def plan():
    p = []
    for n in (128, 160, 192, 208):
        for cl in ((2, 1), (1, 2)):
            p.append(cfg(f"gemm_bf16_pingpong_128x{n}_c{cl[0]}{cl[1]}", tile=(128, n), cluster=cl))
    for n in (128, 192, 256):
        p.append(cfg(f"gemm_bf16_coop_256x{n}_c21", tile=(256, n), pingpong=False))
    p.append(cfg("gemm_bf16_coop_128x256_c12", tile=(128, 256), cluster=(1, 2), pingpong=False))
    p.append(cfg("gemm_bf16_pingpong_192x128_c21", tile=(192, 128)))
    p.append(cfg("gemm_f16_pingpong_128x128_c21", ab="f16", d="f16", tile=(128, 128)))
    p.append(cfg("gemm_f16_coop_256x128_c21_f32out", ab="f16", d="f32", tile=(256, 128), pingpong=False))
    p.append(cfg("gemm_e4m3_pingpong_128x128_c21", ab="e4m3", tile=(128, 128)))
    p.append(cfg("gemm_e4m3_coop_256x128_c21", ab="e4m3", tile=(256, 128), pingpong=False))
    p.append(cfg("gemm_bf16_pingpong_128x192_bmn", b_major="n"))
    p.append(cfg("gemm_bf16_pingpong_128x192_beta_c", c="bf16", beta=1))
    p.append(cfg("gemm_bf16_pingpong_128x192_alpha_ptr_beta_ptr", c="bf16", alpha=2, beta=2))
    p.append(cfg("gemm_bf16_coop_256x128_rowvec_bias", tile=(256, 128), pingpong=False, rowvec="bf16"))
    p.append(cfg("gemm_bf16_pingpong_128x160_colvec", tile=(128, 160), colvec="f32"))
    p.append(cfg("gemm_bf16_pingpong_128x192_dynamic", dynamic=True))
    p.append(cfg("gemm_bf16_pingpong_128x192_varlen_m", varlen_m=True))
    p.append(cfg("gemm_bf16_pingpong_128x192_gather_a", varlen_m=True, gather_a=True))
    p.append(cfg("gemm_bf16_coop_128x128_nonpersistent", tile=(128, 128), pingpong=False, persistent=False))
    return p


def compile_one(c):
    f = getattr(qgemm._compile_gemm, "__wrapped__", qgemm._compile_gemm)
    colvec_ndim = 0 if c["colvec"] is None else (1 if c["varlen_m"] else 2)
    return f(T[c["ab"]], T[c["ab"]], T[c["d"]], T[c["c"]] if c["c"] else None, "k", c["b_major"], c["d_major"],
             c["d_major"] if c["c"] else None, c["tile"], (*c["cluster"], 1), c["pingpong"], c["persistent"],
             c["dynamic"], T[c["rowvec"]] if c["rowvec"] else None, T[c["colvec"]] if c["colvec"] else None,
             colvec_ndim, c["alpha"], c["beta"], False, None, c["varlen_m"], False, c["gather_a"], False, False,
             (9, 0), RoundingMode.RN, 0, 8 if c["pingpong"] else 12)


def ptx_of(c):
    """Compile `c` and return the PTX the DSL kept."""
    for f in glob.glob(os.path.join(DUMP, "*")):
        os.remove(f)
    compile_one(c)
    files = glob.glob(os.path.join(DUMP, "*.ptx"))
    if len(files) != 1:
        raise RuntimeError(f"expected one PTX file in {DUMP}, found {len(files)}")
    with open(files[0]) as f:
        return f.read()


def write_manifest(out, rows, subset):
    entries = {}
    for c in rows:
        conf = ",".join(f"{k}={v}" for k, v in c.items() if k != "name" and v not in (None, False, 0))
        entries[c["name"]] = "\t".join([c["name"], "quack.gemm._compile_gemm", conf, "quack-kernels 0.6.5"])
    common.write_manifest(out, "name\tentry\tconfig\tversion", entries, [c["name"] for c in plan()], subset)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output directory, e.g. tests/real/quack")
    ap.add_argument("--only", help="regex on kernel names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--ptxas", help="check each PTX with this ptxas (-arch=sm_90a); drop rejected kernels")
    args = ap.parse_args()
    todo = [c for c in plan() if not args.only or re.search(args.only, c["name"])]
    if args.list:
        for c in todo:
            print(c)
        return 0
    os.makedirs(args.out, exist_ok=True)
    rows, failed = common.generate(todo, lambda c: c["name"], lambda c: (ptx_of(c), c), args.out, args.ptxas)
    write_manifest(args.out, rows, bool(args.only))
    shutil.rmtree(DUMP, ignore_errors=True)
    print(f"done: {len(rows)} ok, {len(failed)} failed")
    common.print_failures(failed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
