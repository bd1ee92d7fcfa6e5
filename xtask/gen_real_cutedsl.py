#!/usr/bin/env python3
"""Generate the `cutedsl` corpus family: CUTLASS's CuTe Python DSL Hopper examples, on a CPU.

The kernels are the classes of CUTLASS's ``examples/python/CuTeDSL/cute/hopper``
(dense GEMM, persistent GEMM, FP8 GEMM with two-level accumulation, FP8 GEMM
with a GELU epilogue, fused multi-head attention forward), compiled by
``cute.compile`` from fake tensors (no GPU) with ``CUTE_DSL_ARCH=sm_90a`` and
``CUTE_DSL_KEEP=ptx``. Each ``.ptx`` is the file the DSL kept, unedited. The
configurations are the examples' own command-line options (tile shapes,
clusters, dtypes, layouts, causal masks, head dims) as their READMEs and
tests run them; ``max_active_clusters`` is what an H100 SXM (132 SMs) gives.

Pinned: nvidia-cutlass-dsl==4.8.1; the examples from NVIDIA/cutlass at commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4 (not committed here):

    git clone https://github.com/NVIDIA/cutlass && git -C cutlass checkout 7107b05535f8
    python3 -m venv target/venv-cute && target/venv-cute/bin/pip install nvidia-cutlass-dsl==4.8.1 torch
    target/venv-cute/bin/python xtask/gen_real_cutedsl.py --examples cutlass/examples/python/CuTeDSL \\
        --out tests/real/cutedsl --ptxas target/oracle-tools/nvidia/cu13/bin/ptxas

``--only REGEX`` builds a subset (merged into the manifest), ``--list`` prints the plan.
"""

import argparse
import glob
import importlib
import os
import re
import shutil
import sys
import tempfile

import generator_common as common

DUMP = tempfile.mkdtemp(prefix="cutedsl-ptx-")
os.environ["CUTE_DSL_ARCH"] = "sm_90a"
os.environ["CUTE_DSL_KEEP"] = "ptx"
os.environ["CUTE_DSL_DUMP_DIR"] = DUMP

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402

COMMIT = "7107b05535f8977f5ecb9d01ee203205b1fd9bc4"
SMS = 132
T = {"bf16": cutlass.BFloat16, "f16": cutlass.Float16, "f32": cutlass.Float32, "e4m3": cutlass.Float8E4M3FN,
     "e5m2": cutlass.Float8E5M2}


def fake(dtype, rank, leading, align=16):
    """A tensor of dynamic shape and strides, unit stride in `leading` (the examples' mark_layout_dynamic)."""
    div = max(align * 8 // dtype.width, 1)
    stride = tuple(1 if i == leading else cute.sym_int64(divisibility=div) for i in range(rank))
    shape = tuple(cute.sym_int() for _ in range(rank))
    return cute.runtime.make_fake_tensor(dtype, shape, stride=stride, assumed_align=align)


def gemm_operands(ab, c, a_major="k", b_major="k", c_major="n"):
    a = fake(T[ab], 3, 1 if a_major == "k" else 0)
    b = fake(T[ab], 3, 1 if b_major == "k" else 0)
    d = fake(T[c], 3, 1 if c_major == "n" else 0)
    return a, b, d


def stream():
    return cute.runtime.make_fake_stream()


def dense_gemm(c):
    m = importlib.import_module("dense_gemm")
    k = m.HopperWgmmaGemmKernel(T[c["acc"]], c["tile"], c["cluster"])
    return k, (*gemm_operands(c["ab"], c["c"], c["a_major"], c["b_major"], c["c_major"]), stream())


def dense_gemm_persistent(c):
    m = importlib.import_module("dense_gemm_persistent")
    k = m.HopperWgmmaGemmPersistentKernel(T[c["acc"]], c["tile"], c["cluster"], c.get("swizzle", 1),
                                          c.get("raster_m", True))
    clusters = SMS // (c["cluster"][0] * c["cluster"][1])
    return k, (*gemm_operands(c["ab"], c["c"], c["a_major"], c["b_major"], c["c_major"]), clusters, stream())


def fp8_2xacc(c):
    m = importlib.import_module("dense_gemm_fp8_2xacc")
    k = m.HopperFP8WarpSpecialized2xAccGemmKernel(c["tile"], c["cluster"], c.get("swizzle", 1),
                                                  c.get("raster_m", True), c["promotion"])
    clusters = SMS // (c["cluster"][0] * c["cluster"][1])
    a, b, d = gemm_operands(c["ab"], c["c"])
    sa, sb = fake(cutlass.Float32, 1, 0), fake(cutlass.Float32, 1, 0)
    return k, (a, b, d, sa, sb, clusters, stream())


def fp8_gelu(c):
    m = importlib.import_module("dense_gemm_fp8_gelu_persistent")
    k = m.HopperFP8GeluPersistentGemmKernel(T[c["acc"]], c["tile"], c["cluster"], c.get("swizzle", 1),
                                            c.get("raster_m", True))
    clusters = SMS // (c["cluster"][0] * c["cluster"][1])
    a, b, d = gemm_operands(c["ab"], c["c"])
    epi = getattr(m, c["epilogue"]) if c.get("epilogue") else None
    args = (a, b, d, 1.0, c.get("scale", False), clusters, stream())
    return k, args + ((epi, ) if epi is not None else ())


class H100Info:
    """What cutlass.utils.HardwareInfo says on an H100 SXM; the persistent FMHA asks it for the SM count."""

    def __init__(self, device_id=0):
        pass

    def get_device_multiprocessor_count(self):
        return SMS


def fmha(c):
    m = importlib.import_module("fmha")
    helpers = importlib.import_module("helpers.fmha_helpers")
    helpers.HardwareInfo = H100Info
    mask = getattr(helpers.MaskEnum, c["mask"])
    k = m.HopperFusedMultiHeadAttentionForward(T[c["qk_acc"]], T[c["pv_acc"]], (*c["tile"], c["d"]),
                                               c["persistent"], mask)
    dt = T[c["dtype"]]
    q = fake(dt, 5, 1)
    kk = fake(dt, 5, 1)
    v = fake(dt, 5, 0 if c["dtype"] == "e4m3" else 1)
    o = fake(T[c["out"]], 5, 1)
    lse = fake(T[c["qk_acc"]], 5, 1, align=4)
    scale = 1.0 / (c["d"]**0.5)
    wl, wr = c.get("window") or (None, None)
    wl = None if wl is None else cutlass.Int32(wl)
    wr = None if wr is None else cutlass.Int32(wr)
    return k, (q, kk, v, o, lse, scale * 1.4426950408889634, scale, 1.0, wl, wr, stream())


def plan():
    p = []

    def add(name, build, **c):
        p.append(dict(name=name, build=build, **c))

    g = dict(acc="f32", a_major="k", b_major="k", c_major="n")
    for ab, c, tile, cl in (("f16", "f16", (128, 128), (1, 1)), ("f16", "f16", (128, 256), (2, 1)),
                            ("bf16", "bf16", (128, 128), (1, 2)), ("bf16", "f32", (64, 128), (1, 1)),
                            ("e4m3", "f16", (128, 128), (1, 1)), ("e5m2", "bf16", (128, 256), (1, 1))):
        add(f"dense_gemm_{ab}_{c}_{tile[0]}x{tile[1]}_c{cl[0]}{cl[1]}", "dense_gemm", ab=ab, c=c, tile=tile,
            cluster=cl, **g)
    add("dense_gemm_f16_f16acc_128x128_c11", "dense_gemm", ab="f16", c="f16", tile=(128, 128), cluster=(1, 1),
        **dict(g, acc="f16"))
    add("dense_gemm_f16_mn_major_128x128_c21", "dense_gemm", ab="f16", c="f16", tile=(128, 128), cluster=(2, 1),
        **dict(g, a_major="m", b_major="n", c_major="m"))
    for ab, c, tile, cl in (("f16", "f16", (128, 128), (1, 1)), ("bf16", "bf16", (128, 256), (2, 1)),
                            ("bf16", "bf16", (64, 256), (1, 2)), ("e4m3", "bf16", (128, 128), (2, 1))):
        add(f"persistent_gemm_{ab}_{c}_{tile[0]}x{tile[1]}_c{cl[0]}{cl[1]}", "dense_gemm_persistent", ab=ab, c=c,
            tile=tile, cluster=cl, **g)
    add("persistent_gemm_f16_f16acc_128x256_c11", "dense_gemm_persistent", ab="f16", c="f16", tile=(128, 256),
        cluster=(1, 1), **dict(g, acc="f16"))
    add("persistent_gemm_bf16_swizzle4_128x128_c11", "dense_gemm_persistent", ab="bf16", c="bf16", tile=(128, 128),
        cluster=(1, 1), swizzle=4, raster_m=False, **g)
    for tile, cl, promo in (((128, 128), (1, 1), 4), ((128, 256), (2, 1), 4), ((128, 128), (1, 2), 8)):
        add(f"fp8_2xacc_e4m3_{tile[0]}x{tile[1]}_c{cl[0]}{cl[1]}_p{promo}", "fp8_2xacc", ab="e4m3", c="bf16",
            tile=tile, cluster=cl, promotion=promo)
    for tile, cl, scale in (((128, 128), (1, 1), False), ((128, 256), (2, 1), True)):
        add(f"fp8_gelu_e4m3_{tile[0]}x{tile[1]}_c{cl[0]}{cl[1]}{'_scaled' if scale else ''}", "fp8_gelu",
            ab="e4m3", c="bf16", acc="f32", tile=tile, cluster=cl, scale=scale)
    for dt, d, tile, mask, pers in (("f16", 128, (64, 128), "WINDOW_MASK", False),
                                    ("bf16", 64, (64, 128), "RESIDUAL_MASK", True),
                                    ("bf16", 128, (64, 128), "WINDOW_MASK", True),
                                    ("f16", 64, (64, 256), "RESIDUAL_MASK", False),
                                    ("bf16", 256, (64, 64), "RESIDUAL_MASK", False),
                                    ("e4m3", 128, (64, 128), "WINDOW_MASK", True)):
        causal = mask == "WINDOW_MASK"
        add(f"fmha_fwd_{dt}_d{d}_{tile[0]}x{tile[1]}_{'causal' if causal else 'full'}{'_persistent' if pers else ''}",
            "fmha", dtype=dt, out="bf16" if dt == "e4m3" else dt, qk_acc="f32", pv_acc="f32", d=d, tile=tile,
            mask=mask, persistent=pers, window=(None, 0) if causal else None)
    add("fmha_fwd_bf16_d128_64x128_window256_persistent", "fmha", dtype="bf16", out="bf16", qk_acc="f32",
        pv_acc="f32", d=128, tile=(64, 128), mask="WINDOW_MASK", persistent=True, window=(256, 0))
    return p


BUILDERS = {"dense_gemm": dense_gemm, "dense_gemm_persistent": dense_gemm_persistent, "fp8_2xacc": fp8_2xacc,
            "fp8_gelu": fp8_gelu, "fmha": fmha}


def ptx_of(c):
    for f in glob.glob(os.path.join(DUMP, "*")):
        os.remove(f)
    kernel, args = BUILDERS[c["build"]](c)
    cute.compile(kernel, *args)
    files = glob.glob(os.path.join(DUMP, "*.ptx"))
    if len(files) != 1:
        raise RuntimeError(f"expected one PTX file in {DUMP}, found {len(files)}")
    with open(files[0]) as f:
        return f.read()


def write_manifest(out, rows, subset):
    entries = {}
    for c in rows:
        conf = ",".join(f"{k}={v}" for k, v in c.items() if k not in ("name", "build"))
        entries[c["name"]] = "\t".join([c["name"], c["build"], conf, f"nvidia-cutlass-dsl 4.8.1, cutlass {COMMIT[:12]}"])
    common.write_manifest(out, "name\texample\tconfig\tversion", entries, [c["name"] for c in plan()], subset)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", required=True, help="cutlass/examples/python/CuTeDSL at the pinned commit")
    ap.add_argument("--out", help="output directory, e.g. tests/real/cutedsl")
    ap.add_argument("--only", help="regex on kernel names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--ptxas", help="check each PTX with this ptxas (-arch=sm_90a); drop rejected kernels")
    args = ap.parse_args()
    ex = os.path.abspath(args.examples)
    sys.path[:0] = [ex, os.path.join(ex, "cute/hopper/kernel/dense_gemm"), os.path.join(ex, "cute/hopper/kernel/attention")]
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
