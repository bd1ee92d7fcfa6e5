"""Run the two kernels of python/tests/kernels.py on the GPU and compare
them with torch.matmul; what Triton and ori print goes to the terminal."""

import hashlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))

import torch  # noqa: E402
import triton  # noqa: E402

import kernels  # noqa: E402

M = N = K = 1024
torch.manual_seed(0)
a = torch.randn(M, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, N, device="cuda", dtype=torch.float16)
ref = (a.float() @ b.float())
for name, (consts, opts) in kernels.CONFIGS.items():
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    grid = (triton.cdiv(M, consts["BLOCK_M"]), triton.cdiv(N, consts["BLOCK_N"]))
    k = kernels.matmul[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), **consts, **opts)
    torch.cuda.synchronize()
    err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
    cubin = hashlib.sha256(k.asm["cubin"]).hexdigest()[:16]
    print(f"run_kernels: {name}: max relative error {err:.2e} on {torch.cuda.get_device_name()}, cubin sha256 {cubin}",
          flush=True)
