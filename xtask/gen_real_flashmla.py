#!/usr/bin/env python3
"""The `flashmla` family of the real-kernel corpus: DeepSeek's FlashMLA sm90 kernels
(dense decode bf16/fp16, sparse fp8 decode, sparse prefill), compiled to PTX by nvcc.

Pinned sources (not vendored):

    FlashMLA  deepseek-ai/FlashMLA @ 9241ae3 (its csrc/, without the sm100 kernels)
    CUTLASS   the headers of the nvidia-cutlass 4.2.0.0 wheel (cutlass_library/source/include),
              not FlashMLA's csrc/cutlass submodule

Each of FlashMLA's sm90 instantiation files (the `.cu` files setup.py lists under
csrc/sm90/*/instantiations/) is compiled on its own with setup.py's nvcc flags for sm90a,
without -lineinfo and --source-in-ptx (no absolute paths in the PTX), to
tests/real/flashmla/<path>.ptx, one kernel each:

    python3 xtask/gen_real_flashmla.py --flashmla-src FlashMLA --cutlass-include INC [-j N]
    cargo xtask oracle record --corpus tests/real flashmla
"""
import argparse
import glob
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "real", "flashmla")

# setup.py's extra_compile_args["nvcc"], less -lineinfo, --source-in-ptx, the ptxas
# options and the thread count.
FLAGS = ["-O3", "-std=c++20", "-DNDEBUG", "-D_USE_MATH_DEFINES", "-Wno-deprecated-declarations",
         "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
         "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
         "--expt-relaxed-constexpr", "--expt-extended-lambda", "--use_fast_math",
         "-arch=sm_90a"]


def name_of(path, csrc):
    rel = os.path.relpath(path, os.path.join(csrc, "sm90"))
    return rel.replace("/instantiations/", "_").replace("/", "_")[:-len(".cu")]


def build(src, csrc, inc):
    out = os.path.join(OUT, name_of(src, csrc) + ".ptx")
    cmd = ["nvcc", "--ptx", *FLAGS, f"-I{csrc}", f"-I{csrc}/kerutils/include", f"-I{inc}",
           src, "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return name_of(src, csrc), r.returncode, r.stderr[-2000:]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--flashmla-src", required=True, help="a FlashMLA checkout at 9241ae3")
    p.add_argument("--cutlass-include", required=True, help="CUTLASS 4.2's include/")
    p.add_argument("-j", type=int, default=os.cpu_count())
    a = p.parse_args()
    csrc = os.path.join(os.path.abspath(a.flashmla_src), "csrc")
    srcs = sorted(glob.glob(os.path.join(csrc, "sm90", "*", "*", "instantiations", "*.cu")))
    os.makedirs(OUT, exist_ok=True)
    with ThreadPoolExecutor(a.j) as pool:
        results = list(pool.map(lambda s: build(s, csrc, os.path.abspath(a.cutlass_include)), srcs))
    with open(os.path.join(OUT, "manifest.tsv"), "w") as f:
        f.write("kernel\tsource\n")
        for s in srcs:
            f.write(f"{name_of(s, csrc)}\t{os.path.relpath(s, os.path.dirname(csrc))}\n")
    failed = [(n, e) for n, rc, e in results if rc != 0]
    for n, e in failed:
        print(f"{n}: nvcc failed\n{e}")
    print(f"{len(results) - len(failed)}/{len(results)} kernels written to {OUT}")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
