#!/usr/bin/env python3
"""Generate the `tilelang` corpus family: TileLang's Hopper examples, on a CPU.

TileLang lowers a kernel to CUDA C++ (``tilelang.lower`` for the target
``{"kind": "cuda", "arch": "sm_90a"}``, under the kernel's own pass configs)
and compiles it with nvcc; no GPU is needed until the launch. This script
takes the examples' kernels at the configurations their ``main`` and tests
use, lowers them, and compiles the CUDA source to PTX with nvcc 13.0.88 and
the flags TileLang's own build uses (``-std=c++20 -w -Xcudafe
--diag_suppress=177 -lineinfo``, ``--use_fast_math`` when the kernel's pass
configs ask for fast math, TileLang's templates and CUTLASS headers). Each
``.ptx`` is nvcc's output, unedited.

Pinned: tilelang==0.1.13 (PyPI); its examples from tile-ai/tilelang tag
v0.1.13 (commit 8001cc4ccf6149382d2019654a19f59c1d4d0482; not committed
here); nvcc 13.0.88 from `python3 xtask/gen_real_nvcc.py setup`.

    git clone https://github.com/tile-ai/tilelang && git -C tilelang checkout v0.1.13
    python3 -m venv target/venv-tl && target/venv-tl/bin/pip install tilelang==0.1.13
    python3 xtask/gen_real_nvcc.py setup --toolkit target/cuda-toolkit
    target/venv-tl/bin/python xtask/gen_real_tilelang.py --examples tilelang/examples \\
        --nvcc target/cuda-toolkit/nvidia/cu13/bin/nvcc --out tests/real/tilelang \\
        --ptxas target/oracle-tools/nvidia/cu13/bin/ptxas

``--only REGEX`` builds a subset (merged into the manifest), ``--list`` prints the plan.
"""

import argparse
import importlib
import os
import re
import subprocess
import sys
import tempfile
import types

import generator_common as common

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402
from tilelang import tvm  # noqa: E402
from tilelang.env import CUTLASS_INCLUDE_DIR, TILELANG_TEMPLATE_PATH  # noqa: E402

COMMIT = "8001cc4ccf6149382d2019654a19f59c1d4d0482"
SMS = 132  # an H100 SXM, for the persistent GEMM's wave count
TARGET = {"kind": "cuda", "arch": "sm_90a"}
NVCC_FLAGS = ["-ptx", "-arch=sm_90a", "-std=c++20", "-w", "-Xcudafe", "--diag_suppress=177", "-lineinfo"]


def k(name, module, fn, *args, **kw):
    """One kernel: `fn` of the example `module` with the example's arguments."""
    return dict(name=name, module=module, fn=fn, args=args, kw=kw)


def gemm_plan():
    p = []
    g = dict(M=4096, N=4096, K=4096)
    for dt, acc, bm, bn, bk in (("f16", "f32", 128, 128, 32), ("bf16", "f32", 128, 128, 64),
                                ("f16", "f32", 128, 256, 32), ("f16", "f32", 64, 128, 64),
                                ("f16", "f16", 128, 128, 32), ("bf16", "f32", 256, 128, 64)):
        p.append(k(f"gemm_{dt}_{acc}acc_{bm}x{bn}x{bk}", "example_gemm", "matmul", block_M=bm, block_N=bn,
                   block_K=bk, dtype=DT[dt], accum_dtype=DT[acc], **g))
    for fn in ("matmul_persistent", "matmul_non_persistent"):
        p.append(k(f"gemm_{fn.split('_', 1)[1]}_f16_128x256x64_t256_s3", "example_gemm_persistent", fn,
                   block_M=128, block_N=256, block_K=64, threads=256, num_stages=3, **g))
    for dt in ("e4m3", "e5m2"):
        p.append(k(f"gemm_fp8_{dt}_128x128x64", "example_tilelang_gemm_fp8", "matmul", block_M=128, block_N=128,
                   block_K=64, dtype=DT[dt], **g))
        p.append(k(f"gemm_fp8_2xacc_{dt}_128x128x64", "example_tilelang_gemm_fp8_2xAcc", "matmul", block_M=128,
                   block_N=128, block_K=64, dtype=DT[dt], **g))
    p.append(k("deepgemm_fp8_2xacc_e4m3_bf16_n128", "example_deepgemm_fp8_2xAcc", "tl_gemm", block_N=128,
               in_dtype=DT["e4m3"], out_dtype=DT["bf16"], accum_dtype=DT["f32"], **g))
    p.append(k("gemm_splitk4_f16_128x128x32", "example_tilelang_gemm_splitk", "matmul", block_M=128, block_N=128,
               block_K=32, split_k=4, **g))
    for ws in ("barrierpipe_stage2", "copy_0_gemm_1", "copy_1_gemm_0", "copy_gemm_0_1", "softpipe_stage2"):
        mod = f"example_warp_specialize_gemm_{ws}"
        fn = "matmul" if "stage2" in ws else f"matmul_warp_specialize_{ws}"
        p.append(k(f"ws_gemm_{ws}_f16_128x128x64", mod, fn, block_M=128, block_N=128, block_K=64, M=1024, N=1024,
                   K=1024))
    return p


def attention_plan():
    p = []
    for causal in (True, False):
        c = "causal" if causal else "full"
        p.append(k(f"mha_fwd_bhsd_d128_{c}_128x128_s2_t256", "example_mha_fwd_bhsd", "flashattn", 8, 32, 4096, 4096,
                   128, causal, block_M=128, block_N=128, num_stages=2, threads=256))
    p.append(k("mha_fwd_bhsd_d64_causal_64x64_s1_t128", "example_mha_fwd_bhsd", "flashattn", 8, 32, 4096, 4096, 64,
               True, block_M=64, block_N=64, num_stages=1, threads=128))
    p.append(k("mha_fwd_bshd_d128_causal_128x128_s1_t128", "example_mha_fwd_bshd", "flashattn", 8, 32, 4096, 128,
               True, block_M=128, block_N=128, num_stages=1, threads=128))
    p.append(k("gqa_fwd_bshd_d128_g8_causal_64x64_s2_t128", "example_gqa_fwd_bshd", "flashattn", 8, 32, 4096, 128,
               True, groups=8, block_M=64, block_N=64, num_stages=2, threads=128))
    p.append(k("gqa_fwd_bshd_d128_g4_full_128x128_s2_t256", "example_gqa_fwd_bshd", "flashattn", 8, 32, 4096, 128,
               False, groups=4, block_M=128, block_N=128, num_stages=2, threads=256))
    for d, bn, causal in ((64, 64, False), (128, 32, True)):
        c = "causal" if causal else "full"
        p.append(k(f"mha_bwd_bhsd_d{d}_{c}_64x{bn}", "example_mha_bwd_bhsd", "flashattn_bwd", 8, 32, 1024, d, causal,
                   64, bn))
        p.append(k(f"mha_fwd_for_bwd_bhsd_d{d}_{c}_64x64", "example_mha_bwd_bhsd", "flashattn_fwd", 8, 32, 1024, d,
                   causal, 64, 64))
    p.append(k("gqa_bwd_atomic_dqk192_dv128_g16_causal_128x64", "example_gqa_bwd", "flashattn_bwd_atomic_add", 1, 32,
               256, 192, 128, True, 128, 64, groups=16))
    p.append(k("gqa_bwd_split_dqk192_dv128_g16_causal_128x32", "example_gqa_bwd", "flashattn_bwd_split", 1, 32, 256,
               192, 128, True, 128, 32, groups=16))
    scale = (512 + 64)**-0.5
    for split in (1, 4):
        p.append(k(f"mla_decode_h128_d512_pe64_n64_h64_split{split}", "example_mla_decode", "flashattn", 1, 128, 1,
                   8192, 512, 64, 64, 64, split, scale))
    p.append(k("mla_decode_ws_h128_d512_pe64_n64_h64", "example_mla_decode_ws", "flashattn", 1, 128, 1, 8192, 512, 64,
               64, 64, 1, scale))
    p.append(k("ws_flashmla_h128_d512_pe64_n64_h64", "example_warp_specialize_flashmla", "flashattn", 1, 128, 1, 8192,
               512, 64, 64, 64, 1))
    p.append(k("gqa_decode_h32_g8_d128_n128_h64_split8", "example_gqa_decode", "flashattn", 1, 32, 8, 8192, 128,
               block_N=128, block_H=64, num_split=8, num_stages=2, threads=128))
    return p


DT = {"f16": T.float16, "bf16": T.bfloat16, "f32": T.float32, "e4m3": T.float8_e4m3fn, "e5m2": T.float8_e5m2}


def plan():
    return gemm_plan() + attention_plan()


def jit_impl(obj):
    """The JITImpl under an example's decorators (autotune wraps it)."""
    return getattr(obj, "jit_impl", obj)


def cuda_source(c):
    """TileLang's CUDA C++ for kernel `c`, and whether its pass configs ask for fast math."""
    mod = importlib.import_module(c["module"])
    if hasattr(mod, "driver"):
        mod.driver = types.SimpleNamespace(get_num_sms=lambda: SMS)
    impl = jit_impl(getattr(mod, c["fn"]))
    pf = impl.get_tir(*c["args"], **c["kw"])
    pc = dict(impl.pass_configs or {})
    if pf.attrs and "tilelang_pass_configs" in pf.attrs:
        pc.update(dict(pf.attrs["tilelang_pass_configs"]))
    target = tvm.target.Target(TARGET)
    with tvm.transform.PassContext(opt_level=3, config=pc), target:
        art = tilelang.lower(pf, target=target)
    fast = bool(pc.get(tilelang.PassConfigKey.TL_ENABLE_FAST_MATH, False))
    return art.kernel_source, fast


def ptx_of(c, nvcc):
    src, fast = cuda_source(c)
    with tempfile.TemporaryDirectory() as d:
        cu, ptx = os.path.join(d, f"{c['name']}.cu"), os.path.join(d, f"{c['name']}.ptx")
        with open(cu, "w") as f:
            f.write(src)
        cmd = [nvcc, *NVCC_FLAGS, *(["--use_fast_math"] if fast else []), "-I" + CUTLASS_INCLUDE_DIR,
               "-I" + TILELANG_TEMPLATE_PATH, cu, "-o", ptx]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("nvcc: " + r.stderr[-1500:])
        with open(ptx) as f:
            return f.read(), fast


def describe(v):
    return str(v).replace("\t", " ")


def write_manifest(out, rows, subset):
    entries = {}
    for c, fast in rows:
        conf = ",".join([describe(a) for a in c["args"]] + [f"{k}={describe(v)}" for k, v in c["kw"].items()])
        entries[c["name"]] = "\t".join([c["name"], f"{c['module']}.{c['fn']}", conf + f",fast_math={fast}",
                                        f"tilelang 0.1.13 ({COMMIT[:12]}), nvcc 13.0.88"])
    common.write_manifest(out, "name\texample\tconfig\tversion", entries, [c["name"] for c in plan()], subset)


def made(c, nvcc):
    """(PTX, manifest row) of one planned kernel."""
    ptx, fast = ptx_of(c, nvcc)
    return ptx, (c, fast)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", required=True, help="tilelang/examples at the pinned tag")
    ap.add_argument("--nvcc", required=True, help="nvcc 13.0.88")
    ap.add_argument("--out", help="output directory, e.g. tests/real/tilelang")
    ap.add_argument("--only", help="regex on kernel names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--ptxas", help="check each PTX with this ptxas (-arch=sm_90a); drop rejected kernels")
    args = ap.parse_args()
    ex = os.path.abspath(args.examples)
    for sub in ("gemm", "gemm_fp8", "deepseek_deepgemm", "gemm_splitk", "warp_specialize", "flash_attention",
                "deepseek_mla", "flash_decoding"):
        sys.path.insert(0, os.path.join(ex, sub))
    todo = [c for c in plan() if not args.only or re.search(args.only, c["name"])]
    if args.list:
        for c in todo:
            print(c)
        return 0
    os.makedirs(args.out, exist_ok=True)
    rows, failed = common.generate(todo, lambda c: c["name"], lambda c: made(c, args.nvcc), args.out, args.ptxas,
                                   why_limit=400)
    write_manifest(args.out, rows, bool(args.only))
    print(f"done: {len(rows)} ok, {len(failed)} failed")
    common.print_failures(failed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
