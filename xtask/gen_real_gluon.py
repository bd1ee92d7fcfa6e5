#!/usr/bin/env python3
"""Generate the Gluon corpus family: Hopper kernels in Triton's Gluon, for sm_90a, on a CPU.

The kernels (xtask/gluon_kernels.py) are written here in the style of Gluon's
own Hopper tutorials: TMA loads into NVMMA-swizzled shared memory behind
mbarriers, ``warpgroup_mma`` with ``warpgroup_mma_wait(deps=...)``,
multi-stage rings, a persistent tile loop, a warp-specialized TMA producer
with a wgmma consumer, and an attention forward with P in registers. Each is
compiled with ``triton.compile(GluonASTSource(...), target=GPUTarget("cuda",
90, 32))`` for the configurations below; the ``.ptx`` files are exactly
``compiled.asm["ptx"]``, nothing edited.

Pinned version: Triton 3.7.1 (``triton.experimental.gluon``), PTX ISA 8.7 (its default).

Regenerate (Python 3.11, about a minute on 2 cores):

    python3 -m venv target/venv-t37 && target/venv-t37/bin/pip install triton==3.7.1 numpy
    target/venv-t37/bin/python xtask/gen_real_gluon.py --out tests/real/gluon --clean \\
        --ptxas target/oracle-tools/nvidia/cu13/bin/ptxas

``--only REGEX`` builds a subset and merges it into the manifest; ``--list`` prints the plan.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generator_common as common  # noqa: E402

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

import gluon_kernels as K  # noqa: E402

TRITON_VERSION = triton.__version__
PTX_VERSION = 87
DTYPES = {"f16": ("fp16", gl.float16), "bf16": ("bf16", gl.bfloat16), "f32": ("fp32", gl.float32),
          "e4m3": ("fp8e4nv", gl.float8e4nv)}


def desc(dtype, block):
    """A Gluon tensor descriptor argument's signature: dtype, block shape and its default NVMMA layout."""
    name, ty = DTYPES[dtype]
    layout = gl.NVMMASharedLayout.get_default_for(block, ty)
    return f"tensordesc<{name}[{', '.join(map(str, block))}],{layout!r}>"


class Spec:
    """One kernel: the function, its arguments' signature, constexprs and warps."""

    def __init__(self, name, fn, args, consts, warps):
        assert re.fullmatch(r"[a-z0-9_]+", name), name
        self.name, self.fn, self.args, self.consts, self.warps = name, fn, args, consts, warps

    def signature(self):
        sig = dict(self.args)
        for k in self.consts:
            sig[k] = "constexpr"
        sig["num_warps"] = "constexpr"
        return sig

    def config(self):
        parts = [f"{k}={v.split(',')[0]}>" if v.startswith("tensordesc") else f"{k}={v}" for k, v in self.args]
        parts += [f"{k}={v}" for k, v in self.consts.items()]
        return ",".join(parts + [f"num_warps={self.warps}"])


def gemm(name, fn, dt, bm, bn, bk, warps, trans_b=False, out="f16", **consts):
    b_block = [bn, bk] if trans_b else [bk, bn]
    args = [("a_desc", desc(dt, [bm, bk])), ("b_desc", desc(dt, b_block)), ("c_desc", desc(out, [bm, bn]))]
    return Spec(name, fn, args, consts, warps)


def attention(name, dt, bm, bn, hd, warps, causal):
    args = [("q_desc", desc(dt, [bm, hd])), ("k_desc", desc(dt, [bn, hd])), ("v_desc", desc(dt, [bn, hd])),
            ("o_desc", desc(dt, [bm, hd])), ("qk_scale", "fp32"), ("SEQ", "i32")]
    return Spec(name, K.attention_fwd, args, {"CAUSAL": causal}, warps)


def plan():
    return [
        gemm("matmul_sync_f16_64x64x64_w4", K.matmul_sync, "f16", 64, 64, 64, 4, TRANS_B=False, A_IN_REGS=False),
        gemm("matmul_sync_f16_128x128x64_w8_bt", K.matmul_sync, "f16", 128, 128, 64, 8, trans_b=True,
             TRANS_B=True, A_IN_REGS=False),
        gemm("matmul_sync_f16_64x128x64_w4_areg", K.matmul_sync, "f16", 64, 128, 64, 4, TRANS_B=False,
             A_IN_REGS=True),
        gemm("matmul_sync_bf16_128x256x64_w8_bt", K.matmul_sync, "bf16", 128, 256, 64, 8, trans_b=True,
             out="bf16", TRANS_B=True, A_IN_REGS=False),
        gemm("matmul_sync_e4m3_128x128x128_w4_bt", K.matmul_sync, "e4m3", 128, 128, 128, 4, trans_b=True,
             out="bf16", TRANS_B=True, A_IN_REGS=False),
        gemm("matmul_pipelined_f16_128x128x64_s3_w4", K.matmul_pipelined, "f16", 128, 128, 64, 4, STAGES=3),
        gemm("matmul_pipelined_f16_128x256x64_s3_w8", K.matmul_pipelined, "f16", 128, 256, 64, 8, STAGES=3),
        gemm("matmul_pipelined_bf16_64x128x64_s4_w4", K.matmul_pipelined, "bf16", 64, 128, 64, 4, out="f32",
             STAGES=4),
        gemm("matmul_persistent_f16_128x128x64_s3_w4", K.matmul_persistent, "f16", 128, 128, 64, 4, STAGES=3,
             GROUP_M=8),
        gemm("matmul_persistent_bf16_128x256x64_s3_w8", K.matmul_persistent, "bf16", 128, 256, 64, 8, STAGES=3,
             GROUP_M=8),
        gemm("matmul_ws_f16_128x128x64_s3_w4", K.matmul_warp_specialized, "f16", 128, 128, 64, 4, STAGES=3),
        gemm("matmul_ws_bf16_128x256x64_s4_w8", K.matmul_warp_specialized, "bf16", 128, 256, 64, 8, STAGES=4),
        attention("attention_fwd_f16_m128_n64_d64_w4", "f16", 128, 64, 64, 4, False),
        attention("attention_fwd_f16_m128_n64_d128_w8_causal", "f16", 128, 64, 128, 8, True),
        attention("attention_fwd_bf16_m64_n128_d64_w4_causal", "bf16", 64, 128, 64, 4, True),
    ]


def compile_spec(spec):
    consts = dict(spec.consts)
    consts["num_warps"] = spec.warps
    src = GluonASTSource(spec.fn, spec.signature(), constexprs=consts)
    opts = {"num_warps": spec.warps, "ptx_version": PTX_VERSION}
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=opts).asm["ptx"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output directory, e.g. tests/real/gluon")
    ap.add_argument("--only", help="regex on kernel names")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    ap.add_argument("--clean", action="store_true", help="delete *.ptx and manifest.tsv in --out first")
    ap.add_argument("--ptxas", help="check each PTX with this ptxas (-arch=sm_90a); drop rejected kernels")
    args = ap.parse_args()
    specs = [s for s in plan() if not args.only or re.search(args.only, s.name)]
    if args.list:
        for s in specs:
            print(f"{s.name}\t{s.fn.fn.__name__}\t{s.config()}")
        return 0
    if not args.out:
        ap.error("--out is required")
    os.makedirs(args.out, exist_ok=True)
    if args.clean:
        for f in os.listdir(args.out):
            if f.endswith(".ptx") or f == "manifest.tsv":
                os.remove(os.path.join(args.out, f))
    rows, failed = common.generate(specs, lambda s: s.name, lambda s: (compile_spec(s), s), args.out, args.ptxas,
                                   why_limit=4000)
    entries = {s.name: "\t".join([s.name, s.fn.fn.__name__, s.config(), TRITON_VERSION]) for s in rows}
    common.write_manifest(args.out, "name\tkernel_fn\tconfig\ttriton_version", entries, [s.name for s in plan()],
                          bool(args.only))
    print(f"done: {len(rows)} ok, {len(failed)} failed (Triton {TRITON_VERSION}, ptx_version {PTX_VERSION})")
    common.print_failures(failed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
