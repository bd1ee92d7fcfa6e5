#!/usr/bin/env python3
"""Generate the real-world Triton corpus: kernels from public projects, for Hopper (sm_90a), on a CPU.

The kernels are the projects' own ``@triton.jit`` functions, loaded from their
pip packages by ``world_triton_loader.py`` (no PyTorch, no GPU) and compiled
with ``triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))`` for
the configurations their autotuners and launchers pick on an H100. The
``.ptx`` files are exactly ``compiled.asm["ptx"]``; nothing is edited.

Pinned versions (the corpus in tests/real/triton_world35 and triton_world37):

    Triton 3.5.1 and Triton 3.7.1, both writing PTX ISA 8.7 (their own default: each bundles ptxas 12.8)
    flash-linear-attention: fla-core==0.6.0     vLLM: vllm==0.33.0
    SGLang: sglang==0.5.23                      Liger: liger-kernel==0.8.5
    Mamba-2: the SSD kernels as vLLM 0.33.0 ships them (vllm/model_executor/layers/mamba/ops)

Regenerate (Python 3.11, about 5 minutes per Triton version on 2 cores):

    mkdir -p target/gen/src target/gen/pkgs && cd target/gen/src
    pip download --no-deps fla-core==0.6.0 vllm==0.33.0 sglang==0.5.23 liger-kernel==0.8.5
    cd ../pkgs && for w in ../src/*.whl; do unzip -q -o "$w" '*.py'; done; cd ../../..
    python3 -m venv target/venv-t35 && target/venv-t35/bin/pip install triton==3.5.1 numpy
    python3 -m venv target/venv-t37 && target/venv-t37/bin/pip install triton==3.7.1 numpy
    target/venv-t35/bin/python xtask/gen_world_triton.py --pkgs target/gen/pkgs \\
        --out tests/real/triton_world35 --clean --ptxas target/oracle-tools/nvidia/cu13/bin/ptxas
    target/venv-t37/bin/python xtask/gen_world_triton.py --pkgs target/gen/pkgs \\
        --out tests/real/triton_world37 --clean --ptxas target/oracle-tools/nvidia/cu13/bin/ptxas

``--only REGEX`` builds a subset and merges it into the manifest; ``--list``
prints the plan. The PTX's ``.file`` entries hold the generating machine's
paths to the extracted packages.
"""

import argparse
import os
import re
import sys

import generator_common as common

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import world_triton_loader as loader  # noqa: E402

TRITON_VERSION = triton.__version__
PTX_VERSION = {"3.5": 87, "3.7": 87}  # each its own default (both bundle ptxas 12.8 for sm_90)
PROJECTS = ["fla", "vllm", "sglang", "liger_kernel"]
# What the projects compute from the GPU at import time, as on an H100.
PINS = {"vllm.triton_utils.importing": {"HAS_TRITON": True}}

TY = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "e4m3": "fp8e4nv", "i32": "i32", "i64": "i64", "i8": "i8"}


class Spec:
    """One kernel: the project's function, its argument types and constexprs, launch options."""

    def __init__(self, name, module, fn, consts, warps, stages, dtype="bf16", ints="", floats="", types=None,
                 nodiv=""):
        assert re.fullmatch(r"[a-z0-9_]+", name), name
        self.name, self.module, self.fn_name = name, module, fn
        self.consts, self.dtype = consts, dtype
        self.ints, self.floats = set(ints.split()), set(floats.split())
        self.types = types or {}
        self.nodiv = set(nodiv.split())
        self.opts = {"num_warps": warps, "num_stages": stages}

    def signature(self, fn):
        """All arguments' types; constexprs (given or defaulted) marked "constexpr"."""
        sig, consts = {}, {}
        for p in fn.params:
            a = p.name
            if a in self.consts or p.is_constexpr:
                sig[a] = "constexpr"
                consts[a] = self.consts[a] if a in self.consts else self.default(p)
            elif a in self.types:
                sig[a] = self.types[a]
            elif a in self.ints or a.startswith("stride"):
                sig[a] = "i32"
            elif a in self.floats:
                sig[a] = "fp32"
            else:
                sig[a] = "*" + TY[self.dtype]
        return sig, consts

    @staticmethod
    def default(p):
        """A constexpr the plan leaves out: its declared default, or 1 for a unit stride."""
        if p.has_default:
            return p.default
        if p.name.startswith("stride"):
            return 1
        raise KeyError(f"constexpr {p.name} needs a value")

    def config(self):
        parts = [f"{k}={v}" for k, v in self.consts.items()]
        parts += [f"{k}={v}" for k, v in self.types.items()]
        parts += [f"{k}={v}" for k, v in self.opts.items()]
        return ",".join(parts).replace("\t", " ")


def plan():
    from world_plan import specs
    return specs(Spec)


def compile_spec(spec, ptx_version):
    fn = loader.kernel(spec.module, spec.fn_name)
    sig, consts = spec.signature(fn)
    attrs = {}
    for i, a in enumerate(fn.arg_names):
        if a not in spec.nodiv and (sig[a].startswith("*") or sig[a] == "i32"):
            attrs[(i, )] = [["tt.divisibility", 16]]
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs)
    opts = dict(spec.opts)
    opts["ptx_version"] = ptx_version
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=opts).asm["ptx"]


def write_manifest(out, rows, subset):
    entries = {s.name: "\t".join([s.name, s.module, s.fn_name, s.config(), TRITON_VERSION]) for s in rows}
    common.write_manifest(out, "name\tmodule\tkernel_fn\tconfig\ttriton_version", entries,
                          [s.name for s in plan()], subset)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pkgs", required=True, help="folder with the projects' extracted wheels")
    ap.add_argument("--out", help="output directory, e.g. tests/real/triton_world35")
    ap.add_argument("--only", help="regex on kernel names")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    ap.add_argument("--clean", action="store_true", help="delete *.ptx and manifest.tsv in --out first")
    ap.add_argument("--ptxas", help="check each PTX with this ptxas (-arch=sm_90a); drop rejected kernels")
    args = ap.parse_args()
    loader.install(os.path.abspath(args.pkgs), PROJECTS, PINS)
    specs = [s for s in plan() if not args.only or re.search(args.only, s.name)]
    if args.list:
        for s in specs:
            print(f"{s.name}\t{s.module}.{s.fn_name}\t{s.config()}")
        return 0
    if not args.out:
        ap.error("--out is required")
    ptx_version = PTX_VERSION[".".join(TRITON_VERSION.split(".")[:2])]
    os.makedirs(args.out, exist_ok=True)
    if args.clean:
        for f in os.listdir(args.out):
            if f.endswith(".ptx") or f == "manifest.tsv":
                os.remove(os.path.join(args.out, f))
    rows, failed = common.generate(specs, lambda s: s.name, lambda s: (compile_spec(s, ptx_version), s), args.out,
                                   args.ptxas, why_limit=400)
    write_manifest(args.out, rows, bool(args.only))
    print(f"done: {len(rows)} ok, {len(failed)} failed (Triton {TRITON_VERSION}, ptx_version {ptx_version})")
    common.print_failures(failed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
