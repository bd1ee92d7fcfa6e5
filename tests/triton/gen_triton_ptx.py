#!/usr/bin/env python3
"""Generate real Triton PTX for Hopper (sm_90a) matmul kernels.

Each configuration below is compiled with Triton (``kernel.warmup``), its PTX
(``compiled.asm['ptx']``) and TTGIR are written to ``--out``, the kernel is then
launched once and checked against ``torch.matmul``, and ``ptxas -arch=sm_90a -v``
(the CUDA toolkit's one and Triton's bundled one) is run on the PTX, its output
saved to ``<name>.ptxas.txt``.  A ``summary.json`` collects everything.

Needs a Hopper GPU, PyTorch and Triton.  Usage:

    python3 tests/triton/gen_triton_ptx.py --out /tmp/triton_ptx

Every configuration is wrapped in try/except; failures are reported and the
script goes on.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, bias_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    PRECISION: tl.constexpr,   # "default", "tf32", "tf32x3"
    HAS_BIAS: tl.constexpr,
    ACT: tl.constexpr,         # 0 none, 1 relu, 2 leaky relu (0.01)
):
    # Standard Triton tutorial tiling (grouped program ordering, pointer loads).
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        if PRECISION == "tf32":
            acc = tl.dot(a, b, acc, input_precision="tf32")
        elif PRECISION == "tf32x3":
            acc = tl.dot(a, b, acc, input_precision="tf32x3")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_cn, mask=offs_cn < N, other=0.0)
        acc = acc + bias[None, :]
    if ACT == 1:
        acc = tl.maximum(acc, 0.0)
    elif ACT == 2:
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


# name, in dtype, out dtype, BM, BN, BK, stages, warps, extra options
# extra: b_kmajor (B passed as a transpose of an (N, K) contiguous tensor, so
# stride_bk == 1), precision, bias, act, shape (M, N, K)
CONFIGS = [
    ("fp16_64x64x32_s2_w4", "fp16", "fp16", 64, 64, 32, 2, 4, {}),
    ("fp16_128x128x64_s3_w4", "fp16", "fp16", 128, 128, 64, 3, 4, {}),
    ("fp16_128x128x64_s3_w8", "fp16", "fp16", 128, 128, 64, 3, 8, {}),
    ("fp16_128x256x64_s3_w8", "fp16", "fp16", 128, 256, 64, 3, 8, {}),
    ("fp16_64x128x64_s4_w4", "fp16", "fp16", 64, 128, 64, 4, 4, {}),
    ("fp16_128x128x64_s4_w4_bT", "fp16", "fp16", 128, 128, 64, 4, 4, {"b_kmajor": True}),
    ("fp16_ragged_64x64x32_s3_w4", "fp16", "fp16", 64, 64, 32, 3, 4, {"shape": (333, 333, 333)}),
    ("bf16_128x128x64_s3_w4", "bf16", "bf16", 128, 128, 64, 3, 4, {}),
    ("bf16_128x256x64_s3_w8", "bf16", "bf16", 128, 256, 64, 3, 8, {}),
    ("tf32_64x64x32_s3_w4", "fp32", "fp32", 64, 64, 32, 3, 4, {"precision": "tf32"}),
    ("tf32_128x128x32_s3_w8", "fp32", "fp32", 128, 128, 32, 3, 8, {"precision": "tf32"}),
    ("tf32x3_64x64x32_s2_w4", "fp32", "fp32", 64, 64, 32, 2, 4, {"precision": "tf32x3"}),
    ("fp8e4m3_128x128x64_s3_w4_bT", "fp8e4m3", "fp16", 128, 128, 64, 3, 4, {"b_kmajor": True}),
    ("fp8e4m3_128x256x128_s3_w8_bT", "fp8e4m3", "fp16", 128, 256, 128, 3, 8, {"b_kmajor": True}),
    ("fp8e4m3_64x64x64_s2_w4", "fp8e4m3", "fp16", 64, 64, 64, 2, 4, {}),
    ("fp16_bias_relu_128x128x64_s3_w4", "fp16", "fp16", 128, 128, 64, 3, 4, {"bias": True, "act": 1}),
    ("bf16_bias_leaky_64x128x64_s4_w4_out_fp16", "bf16", "fp16", 64, 128, 64, 4, 4, {"bias": True, "act": 2}),
]

DTYPES = {
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp32": torch.float32,
}


def torch_dtype(name):
    if name == "fp8e4m3":
        return getattr(torch, "float8_e4m3fn")
    return DTYPES[name]


def find_ptxas():
    found = {}
    sys_ptxas = shutil.which("ptxas")
    if sys_ptxas is None:
        for cand in ("/usr/local/cuda/bin/ptxas",):
            if os.path.exists(cand):
                sys_ptxas = cand
    if sys_ptxas:
        found["system"] = sys_ptxas
    try:
        import triton.backends.nvidia as nv
        cand = os.path.join(os.path.dirname(nv.__file__), "bin", "ptxas")
        if os.path.exists(cand):
            found["triton"] = cand
    except Exception:
        pass
    env = os.environ.get("TRITON_PTXAS_PATH")
    if env and os.path.exists(env):
        found["TRITON_PTXAS_PATH"] = env
    return found


def ptxas_version(path):
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        return (r.stdout + r.stderr).strip().splitlines()[-1]
    except Exception as e:  # noqa: BLE001
        return f"error: {e}"


WGMMA_RE = re.compile(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)\.([\w.]+)")


def analyse_ptx(ptx):
    shapes = {}
    for m in WGMMA_RE.finditer(ptx):
        key = f"{m.group(1)}.{m.group(2)}"
        shapes[key] = shapes.get(key, 0) + 1
    return {
        "wgmma_mma_async": ptx.count("wgmma.mma_async"),
        "wgmma_shapes": shapes,
        "wgmma_fence": ptx.count("wgmma.fence"),
        "wgmma_commit_group": ptx.count("wgmma.commit_group"),
        "wgmma_wait_group": ptx.count("wgmma.wait_group"),
        "mma_sync": ptx.count("mma.sync"),
        "cp_async": ptx.count("cp.async.ca") + ptx.count("cp.async.cg"),
        "cp_async_bulk": ptx.count("cp.async.bulk"),
        "target": next((l.strip() for l in ptx.splitlines() if l.startswith(".target")), None),
        "version": next((l.strip() for l in ptx.splitlines() if l.startswith(".version")), None),
        "lines": ptx.count("\n"),
    }


def run_config(cfg, out_dir, ptxases):
    name, din, dout, BM, BN, BK, stages, warps, extra = cfg
    M, N, K = extra.get("shape", (512, 512, 512))
    rec = {"name": name, "in_dtype": din, "out_dtype": dout, "BLOCK_M": BM, "BLOCK_N": BN,
           "BLOCK_K": BK, "num_stages": stages, "num_warps": warps, "M": M, "N": N, "K": K,
           "b_kmajor": bool(extra.get("b_kmajor")), "precision": extra.get("precision", "default"),
           "bias": bool(extra.get("bias")), "act": extra.get("act", 0)}
    torch.manual_seed(0)
    dev = "cuda"
    tin = torch_dtype(din)
    tout = torch_dtype(dout)
    a32 = torch.randn(M, K, device=dev) * 0.5
    b32 = torch.randn(K, N, device=dev) * 0.5
    a = a32.to(tin)
    if extra.get("b_kmajor"):
        b = b32.t().contiguous().to(tin).t()  # shape (K, N), stride (1, K)
    else:
        b = b32.to(tin)
    c = torch.empty(M, N, device=dev, dtype=tout)
    bias = torch.randn(N, device=dev, dtype=torch.float32)
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    args = (a, b, c, bias, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1))
    kw = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
              PRECISION=extra.get("precision", "default"), HAS_BIAS=bool(extra.get("bias")),
              ACT=extra.get("act", 0), num_warps=warps, num_stages=stages)

    t0 = time.time()
    compiled = matmul_kernel.warmup(*args, grid=grid, **kw)
    rec["compile_s"] = round(time.time() - t0, 2)
    ptx = compiled.asm["ptx"]
    with open(os.path.join(out_dir, f"{name}.ptx"), "w") as f:
        f.write(ptx)
    try:
        with open(os.path.join(out_dir, f"{name}.ttgir"), "w") as f:
            f.write(compiled.asm["ttgir"])
    except Exception:
        pass
    rec.update(analyse_ptx(ptx))
    md = compiled.metadata
    for key in ("shared", "num_warps", "num_stages", "name", "target"):
        try:
            v = getattr(md, key)
            rec["meta_" + key] = v if isinstance(v, (int, str, float)) else str(v)
        except Exception:
            pass
    for key in ("n_regs", "n_spills"):
        try:
            rec[key] = getattr(compiled, key)
        except Exception:
            pass

    # ptxas on the PTX
    ptx_path = os.path.join(out_dir, f"{name}.ptx")
    lines = []
    for label, path in ptxases.items():
        cmd = [path, "-arch=sm_90a", "-v", ptx_path, "-o", f"/tmp/{name}.{label}.cubin"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            lines.append(f"### {label}: {' '.join(cmd)}\n### version: {ptxas_version(path)}\n"
                         f"### rc={r.returncode}\n--- stdout ---\n{r.stdout}--- stderr ---\n{r.stderr}")
            rec[f"ptxas_{label}_rc"] = r.returncode
        except Exception as e:  # noqa: BLE001
            lines.append(f"### {label}: {' '.join(cmd)}\n### exception: {e}\n")
            rec[f"ptxas_{label}_rc"] = f"exception: {e}"
    with open(os.path.join(out_dir, f"{name}.ptxas.txt"), "w") as f:
        f.write("\n".join(lines))

    # launch and check numerically
    try:
        matmul_kernel[grid](*args, **kw)
        torch.cuda.synchronize()
        ref = torch.matmul(a.float(), b.float())
        if extra.get("bias"):
            ref = ref + bias[None, :]
        if extra.get("act", 0) == 1:
            ref = torch.relu(ref)
        elif extra.get("act", 0) == 2:
            ref = torch.where(ref >= 0, ref, 0.01 * ref)
        ref = ref.to(tout).float()
        err = (c.float() - ref).abs()
        rec["max_abs_err"] = float(err.max())
        rec["ref_max_abs"] = float(ref.abs().max())
        rec["launched"] = True
    except Exception as e:  # noqa: BLE001
        rec["launched"] = False
        rec["launch_error"] = f"{type(e).__name__}: {e}"[:2000]
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="triton_ptx_out")
    ap.add_argument("--only", default=None, help="substring filter on config names")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    info = {"python": sys.version.split()[0], "torch": torch.__version__, "triton": triton.__version__,
            "torch_cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "capability": list(torch.cuda.get_device_capability(0)) if torch.cuda.is_available() else None}
    ptxases = find_ptxas()
    info["ptxas"] = {k: {"path": v, "version": ptxas_version(v)} for k, v in ptxases.items()}
    print(json.dumps(info, indent=1), flush=True)

    results = []
    for cfg in CONFIGS:
        if args.only and args.only not in cfg[0]:
            continue
        try:
            rec = run_config(cfg, args.out, ptxases)
        except Exception as e:  # noqa: BLE001
            rec = {"name": cfg[0], "error": f"{type(e).__name__}: {e}"[:3000],
                   "traceback": traceback.format_exc()[-3000:]}
        results.append(rec)
        if "error" in rec:
            print(f"FAIL {rec['name']}: {rec['error'][:500]}", flush=True)
        else:
            print(f"OK   {rec['name']}: wgmma={rec['wgmma_mma_async']} shapes={rec['wgmma_shapes']} "
                  f"mma.sync={rec['mma_sync']} shared={rec.get('meta_shared')} regs={rec.get('n_regs')} "
                  f"launched={rec.get('launched')} max_abs_err={rec.get('max_abs_err')} "
                  f"(ref max {rec.get('ref_max_abs')}) ptxas_rc="
                  f"{ {k: v for k, v in rec.items() if k.startswith('ptxas_')} } "
                  f"{rec.get('launch_error', '')[:300]}", flush=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"info": info, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
