"""Triton kernels for the hook's tests, compiled for sm_90a on the CPU.

`matmul` is the tutorial GEMM. Two configurations give the two verdicts
the hook reports, as ptxas gives them (tests/real/triton36 holds the same
kernel's PTX with ptxas 13.0.88's recorded messages): a 128x128x64 tile
with 4 warps under a 128-register limit is serialized for want of
registers (C7511); a float16 accumulator gets an injected wait (C7517).
"""

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, F16_ACC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16 if F16_ACC else tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=tl.float16 if F16_ACC else tl.float32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :], c,
             mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


# name -> (constexprs, options): the kernel ptxas serializes, the one it injects into.
CONFIGS = {
    "serialized": (dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, F16_ACC=False),
                   dict(num_warps=4, num_stages=3, maxnreg=128)),
    "injected": (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, F16_ACC=True), dict(num_warps=4, num_stages=3)),
}


def compile_config(name: str):
    """Compile one configuration for sm_90a (no GPU needed)."""
    consts, opts = CONFIGS[name]
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
    sig.update({k: "constexpr" for k in consts})
    attrs = {(i, ): [["tt.divisibility", 16]] for i in range(9)}
    src = triton.compiler.ASTSource(fn=matmul, signature=sig, constexprs=dict(consts), attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(opts))


if __name__ == "__main__":
    import sys

    for n in sys.argv[1:] or CONFIGS:
        k = compile_config(n)
        print(n, len(k.asm["ptx"]), "bytes of PTX")
