#!/usr/bin/env python3
"""Generate the inductor corpus family: the Hopper kernels PyTorch writes itself.

A user who never writes a kernel still runs wgmma pipelines: ``torch.compile``
with ``mode="max-autotune"`` benchmarks Inductor's Triton GEMM templates
(plain, persistent with TMA, with fused epilogues, batched, fp8 with scales),
and FlexAttention compiles its own attention templates (forward and backward,
with a block mask). None of them are written by the project: this script runs
those PyTorch workloads on an H100/H200 with ``TRITON_CACHE_DIR`` pointing at
an empty folder, then copies every ``.ptx`` file Triton left there that holds a
``wgmma`` instruction, exactly as Triton wrote it.

It needs a GPU (Inductor asks the device for its properties and benchmarks
the candidates). Run on the device machine:

    python3 xtask/gen_real_inductor.py --out DIR [--budget-s 420]

then record the oracle on this machine:

    cargo xtask oracle record --corpus tests/real inductor

Each kernel is named ``WORKLOAD__KERNEL_wW_sS_HASH`` (its Triton kernel
name, num_warps, num_stages and the first 8 hex digits of its cache key);
``manifest.tsv`` names the workload, the kernel and the PyTorch and Triton
versions.
"""

import argparse
import glob
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback


def workloads():
    """(name, function) pairs; each function runs one PyTorch workload."""
    import torch

    def mm(dtype, m, n, k, persistent=False, epilogue=None, batch=None):
        def run():
            import torch._inductor.config as cfg

            cfg.max_autotune = True
            cfg.max_autotune_gemm_backends = "TRITON"
            if hasattr(cfg.triton, "enable_persistent_tma_matmul"):
                cfg.triton.enable_persistent_tma_matmul = persistent
            torch.backends.cuda.matmul.allow_tf32 = True
            shape_a = (batch, m, k) if batch else (m, k)
            shape_b = (batch, k, n) if batch else (k, n)
            a = torch.randn(shape_a, device="cuda", dtype=dtype)
            b = torch.randn(shape_b, device="cuda", dtype=dtype)
            bias = torch.randn(n, device="cuda", dtype=dtype)

            def f(x, y, z):
                r = torch.bmm(x, y) if batch else x @ y
                if epilogue == "bias_relu":
                    r = torch.relu(r + z)
                elif epilogue == "gelu":
                    r = torch.nn.functional.gelu(r)
                return r

            torch._dynamo.reset()
            torch.compile(f, mode="max-autotune-no-cudagraphs")(a, b, bias)
            torch.cuda.synchronize()

        return run

    def scaled_mm(m, n, k):
        def run():
            import torch._inductor.config as cfg

            cfg.max_autotune = True
            cfg.max_autotune_gemm_backends = "TRITON"
            a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
            sa = torch.rand(m, 1, device="cuda", dtype=torch.float32)
            sb = torch.rand(1, n, device="cuda", dtype=torch.float32)

            def f(x, y, p, q):
                return torch._scaled_mm(x, y, p, q, out_dtype=torch.bfloat16)

            torch._dynamo.reset()
            torch.compile(f, mode="max-autotune-no-cudagraphs")(a, b, sa, sb)
            torch.cuda.synchronize()

        return run

    def flex(dtype, d, causal, backward, window=None):
        def run():
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention

            b_, h, s = 2, 4, 1024

            def mask(b, h, q, kv):
                keep = q >= kv if causal else q >= 0
                if window is not None:
                    keep = keep & (q - kv <= window)
                return keep

            bm = create_block_mask(mask, None, None, s, s, device="cuda")
            q, k, v = (torch.randn(b_, h, s, d, device="cuda", dtype=dtype, requires_grad=backward)
                       for _ in range(3))
            torch._dynamo.reset()
            out = torch.compile(flex_attention)(q, k, v, block_mask=bm)
            if backward:
                out.sum().backward()
            torch.cuda.synchronize()

        return run

    bf16, f16, f32 = torch.bfloat16, torch.float16, torch.float32
    return [
        ("mm_bf16_1024", mm(bf16, 1024, 1024, 1024)),
        ("mm_f16_2048x512x4096", mm(f16, 2048, 512, 4096)),
        ("mm_tf32_1024", mm(f32, 1024, 1024, 1024)),
        ("mm_bf16_persistent_2048", mm(bf16, 2048, 2048, 2048, persistent=True)),
        ("addmm_bias_relu_bf16", mm(bf16, 1024, 2048, 512, epilogue="bias_relu")),
        ("mm_gelu_f16", mm(f16, 512, 1024, 1024, epilogue="gelu")),
        ("bmm_bf16", mm(bf16, 256, 256, 512, batch=8)),
        ("scaled_mm_e4m3_rowwise", scaled_mm(1024, 1024, 1024)),
        ("flex_fwd_bf16_d64_causal", flex(bf16, 64, True, False)),
        ("flex_fwdbwd_bf16_d128_causal", flex(bf16, 128, True, True)),
        ("flex_fwdbwd_f16_d64_window", flex(f16, 64, True, True, window=256)),
    ]


def collect(cache, workload, out, seen, rows, versions):
    """Copy the new wgmma-holding PTX files of `cache` into `out`."""
    for ptx in sorted(glob.glob(os.path.join(cache, "*", "*.ptx"))):
        key = os.path.basename(os.path.dirname(ptx))
        if key in seen:
            continue
        seen.add(key)
        text = open(ptx).read()
        if "wgmma" not in text:
            continue
        kernel = os.path.splitext(os.path.basename(ptx))[0]
        meta = {}
        js = os.path.join(os.path.dirname(ptx), kernel + ".json")
        if os.path.exists(js):
            meta = json.load(open(js))
        warps, stages = meta.get("num_warps", 0), meta.get("num_stages", 0)
        safe = re.sub(r"[^a-z0-9_]", "_", kernel.lower())[:60]
        name = f"{workload}__{safe}_w{warps}_s{stages}_{key[:8].lower()}"
        shutil.copy(ptx, os.path.join(out, name + ".ptx"))
        rows.append((name, workload, kernel, versions))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=420.0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="ori-inductor-cache-")
    os.environ["TRITON_CACHE_DIR"] = cache
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ori-inductor-")
    import torch
    import triton

    versions = f"{torch.__version__}\t{triton.__version__}"
    print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name(), flush=True)
    start, seen, rows = time.time(), set(), []
    for name, run in workloads():
        if time.time() - start > args.budget_s:
            print(f"{name}: skipped (budget)", flush=True)
            continue
        t0 = time.time()
        try:
            run()
            status = "ok"
        except Exception as e:  # a workload this PyTorch cannot compile is reported, the rest go on
            status = f"failed: {type(e).__name__}: {str(e)[:200]}"
            traceback.print_exc(limit=3)
        before = len(rows)
        collect(cache, name, args.out, seen, rows, versions)
        print(f"{name}: {status}, {len(rows) - before} wgmma kernels, {time.time() - t0:.0f} s", flush=True)
    with open(os.path.join(args.out, "manifest.tsv"), "w") as f:
        f.write("name\tworkload\tkernel\ttorch_version\ttriton_version\n")
        for r in sorted(rows):
            f.write("\t".join(r) + "\n")
    print(f"{len(rows)} kernels in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
