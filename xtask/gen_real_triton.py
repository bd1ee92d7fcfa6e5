#!/usr/bin/env python3
"""Generate the real-Triton PTX corpus for Hopper (sm_90a) -- CPU only, no GPU needed.

Every kernel below is written here in plain Triton (tutorial-like style) and
compiled with ``triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))``.
The ``.ptx`` files are exactly ``compiled.asm["ptx"]``; nothing is edited.

Pinned Triton versions (the corpus in tests/real/ was produced with these):

    * Triton 3.6.0  -> tests/real/triton36   (PTX ISA pinned to 8.7, Triton 3.6's own default)
    * Triton 3.9.0  -> tests/real/triton39   (PTX ISA pinned to 9.0; 3.9 would write 9.4,
                                              which ptxas 13.0 rejects)

Regenerate from a fresh clone (Python 3.10+; ~1-2 min per version on 2 cores, no GPU):

    python3 -m venv v36 && v36/bin/pip install triton==3.6.0 numpy
    python3 -m venv v39 && v39/bin/pip install triton==3.9.0 numpy
    nice -n 10 v36/bin/python xtask/gen_real_triton.py --out tests/real/triton36 --clean \
        --ptxas target/oracle-tools/nvidia/cu13/bin/ptxas
    nice -n 10 v39/bin/python xtask/gen_real_triton.py --out tests/real/triton39 --clean \
        --ptxas target/oracle-tools/nvidia/cu13/bin/ptxas

Options: ``--only REGEX`` compiles only matching kernel names, ``--list`` prints
the plan, ``--ptxas PATH`` checks each PTX with ``PATH -arch=sm_90a`` and drops
(and reports) any kernel it rejects, ``--ptx-version N`` overrides the pin.
The set of kernels and their file names depend only on this file (deterministic);
the PTX text contains ``.file`` debug paths of the generating machine (Triton's
default line info is kept, as users get it).
"""

import argparse
import os
import re
import sys
import time

import generator_common as common

# Keep Triton 3.9's current default (fusion on) and silence its FutureWarning.
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

TRITON_VERSION = triton.__version__
# PTX ISA pin: ptxas 13.0 accepts up to 9.0.
DEFAULT_PTX_VERSION = {"3.6": 87, "3.9": 90}

# ----------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_b, stride_cm,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              B_KMAJOR: tl.constexpr, PRECISION: tl.constexpr, ACC: tl.constexpr,
              MAX_IMPRECISE: tl.constexpr):
    """Plain 2-D grid GEMM; B is [K, N] (row-major) or [N, K] (B_KMAJOR)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    if B_KMAJOR:
        b_ptrs = b_ptr + offs_k[:, None] + offs_bn[None, :] * stride_b
    else:
        b_ptrs = b_ptr + offs_k[:, None] * stride_b + offs_bn[None, :]
    if ACC == "i32":
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    elif ACC == "f16":
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        if ACC == "f16":
            acc = tl.dot(a, b, acc, out_dtype=tl.float16)
        elif ACC == "i32":
            acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        elif MAX_IMPRECISE > 0:
            acc = tl.dot(a, b, acc, max_num_imprecise_acc=MAX_IMPRECISE)
        elif PRECISION == "default":
            acc = tl.dot(a, b, acc)
        else:
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K
        if B_KMAJOR:
            b_ptrs += BLOCK_K
        else:
            b_ptrs += BLOCK_K * stride_b
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def grouped_mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, ACTIVATION: tl.constexpr):
    """03-matrix-multiplication tutorial: 1-D grid with L2-friendly grouped ordering."""
    pid = tl.program_id(0)
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
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    if ACTIVATION == "leaky_relu":
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def mm_epilogue_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, res_ptr, M, N, K, stride_am, stride_bk,
                       stride_cm, stride_rm, alpha,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       HAS_BIAS: tl.constexpr, ACT: tl.constexpr, HAS_RES: tl.constexpr):
    """GEMM with a fused epilogue: alpha, bias, activation, residual add, output cast."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    acc = acc * alpha
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_cn, mask=offs_cn < N, other=0.0)
        acc = acc + bias[None, :].to(tl.float32)
    if ACT == "relu":
        acc = tl.maximum(acc, 0.0)
    elif ACT == "leaky_relu":
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    elif ACT == "gelu":
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    elif ACT == "gelu_tanh":
        inner = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
        acc = 0.5 * acc * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    elif ACT == "silu":
        acc = acc * tl.sigmoid(acc)
    if HAS_RES:
        res = tl.load(res_ptr + offs_cm[:, None] * stride_rm + offs_cn[None, :], mask=cmask, other=0.0)
        acc = acc + res.to(tl.float32)
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=cmask)


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_ab, stride_am, stride_bb, stride_bk, stride_cb,
               stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               B_TRANS: tl.constexpr):
    """Batched GEMM, batch on grid axis 2 (B may be transposed, i.e. Q @ K^T style)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2).to(tl.int64)
    a_ptr += pid_b * stride_ab
    b_ptr += pid_b * stride_bb
    c_ptr += pid_b * stride_cb
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    if B_TRANS:
        b_ptrs = b_ptr + offs_bn[:, None] * stride_bk + offs_k[None, :]
    else:
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        if B_TRANS:
            b = tl.load(b_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, tl.trans(b), acc)
            b_ptrs += BLOCK_K
        else:
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            b_ptrs += BLOCK_K * stride_bk
        a_ptrs += BLOCK_K
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def persistent_mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, FLATTEN: tl.constexpr):
    """09-persistent-matmul style: one program per SM walks over output tiles."""
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    offs_k_for_mask = tl.arange(0, BLOCK_K)
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        start_m = pid_m * BLOCK_M
        start_n = pid_n * BLOCK_N
        offs_am = tl.arange(0, BLOCK_M) + start_m
        offs_bn = tl.arange(0, BLOCK_N) + start_n
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_M), BLOCK_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_N), BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :])
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :])
            a = tl.load(a_ptrs, mask=offs_k_for_mask[None, :] < K - ki * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k_for_mask[:, None] < K - ki * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + offs_cn[None, :]
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def splitk_mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     SPLIT_K: tl.constexpr):
    """Split-K GEMM: grid axis 1 splits K, partial tiles are reduced with tl.atomic_add."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        k_remaining = K - k * (BLOCK_K * SPLIT_K)
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_remaining, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_remaining, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * SPLIT_K
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :]
    tl.atomic_add(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def tma_host_mm_kernel(a_desc, b_desc, c_desc, M, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr, B_KMAJOR: tl.constexpr):
    """GEMM over host-built TensorDescriptors (TMA loads and store)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = pid_m * BLOCK_M
    offs_bn = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        offs_k = k * BLOCK_K
        a = a_desc.load([offs_am, offs_k])
        if B_KMAJOR:
            b = b_desc.load([offs_bn, offs_k])
            acc = tl.dot(a, b.T, acc)
        else:
            b = b_desc.load([offs_k, offs_bn])
            acc = tl.dot(a, b, acc)
    c_desc.store([offs_am, offs_bn], acc.to(c_desc.dtype))


@triton.jit
def tma_host_persistent_kernel(a_desc, b_desc, c_desc, M, N, K,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                               GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr,
                               FLATTEN: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    """09-persistent-matmul "descriptor persistent" kernel (optionally warp-specialized)."""
    dtype = c_desc.dtype
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_SMS, flatten=FLATTEN,
                            warp_specialize=WARP_SPECIALIZE):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        offs_am = pid_m * BLOCK_M
        offs_bn = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            acc = tl.dot(a, b.T, acc)
        if EPILOGUE_SUBTILE:
            acc = tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2))
            acc = tl.permute(acc, (0, 2, 1))
            acc0, acc1 = tl.split(acc)
            c_desc.store([offs_am, offs_bn], acc0.to(dtype))
            c_desc.store([offs_am, offs_bn + BLOCK_N // 2], acc1.to(dtype))
        else:
            c_desc.store([offs_am, offs_bn], acc.to(dtype))


@triton.jit
def tma_device_mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         GROUP_M: tl.constexpr, B_KMAJOR: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    """GEMM with device-side descriptors built by tl.make_tensor_descriptor."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    if B_KMAJOR:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = pid_m * BLOCK_M
    offs_bn = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(tl.cdiv(K, BLOCK_K), warp_specialize=WARP_SPECIALIZE):
        offs_k = k * BLOCK_K
        a = a_desc.load([offs_am, offs_k])
        if B_KMAJOR:
            b = b_desc.load([offs_bn, offs_k])
            acc = tl.dot(a, b.T, acc)
        else:
            b = b_desc.load([offs_k, offs_bn])
            acc = tl.dot(a, b, acc)
    c_desc.store([offs_am, offs_bn], acc.to(c_desc.dtype))


@triton.jit
def ws_mm_kernel(a_desc, b_desc, c_desc, M, N, K,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr, B_KMAJOR: tl.constexpr):
    """Host-descriptor GEMM whose K loop is tl.range(..., warp_specialize=True)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = pid_m * BLOCK_M
    offs_bn = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(tl.cdiv(K, BLOCK_K), warp_specialize=True):
        offs_k = k * BLOCK_K
        a = a_desc.load([offs_am, offs_k])
        if B_KMAJOR:
            b = b_desc.load([offs_bn, offs_k])
            acc = tl.dot(a, b.T, acc)
        else:
            b = b_desc.load([offs_k, offs_bn])
            acc = tl.dot(a, b, acc)
    c_desc.store([offs_am, offs_bn], acc.to(c_desc.dtype))


@triton.jit
def gated_mlp_kernel(x_ptr, wg_ptr, wu_ptr, out_ptr, M, N, K, stride_xm, stride_wk, stride_om,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     ACT: tl.constexpr):
    """Fused gate/up projection: out = act(x @ Wg) * (x @ Wu) (SwiGLU / GeGLU)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    wg_ptrs = wg_ptr + offs_k[:, None] * stride_wk + offs_n[None, :]
    wu_ptrs = wu_ptr + offs_k[:, None] * stride_wk + offs_n[None, :]
    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kmask = offs_k < K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=kmask[None, :], other=0.0)
        wg = tl.load(wg_ptrs, mask=kmask[:, None], other=0.0)
        wu = tl.load(wu_ptrs, mask=kmask[:, None], other=0.0)
        acc_g = tl.dot(x, wg, acc_g)
        acc_u = tl.dot(x, wu, acc_u)
        x_ptrs += BLOCK_K
        wg_ptrs += BLOCK_K * stride_wk
        wu_ptrs += BLOCK_K * stride_wk
    if ACT == "silu":
        g = acc_g * tl.sigmoid(acc_g)
    else:
        inner = 0.7978845608028654 * (acc_g + 0.044715 * acc_g * acc_g * acc_g)
        g = 0.5 * acc_g * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    out = (g * acc_u).to(out_ptr.dtype.element_ty)
    offs_om = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_on = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(out_ptr + offs_om[:, None] * stride_om + offs_on[None, :], out,
             mask=(offs_om[:, None] < M) & (offs_on[None, :] < N))


@triton.jit
def attn_fwd_kernel(Q, K, V, Out, M_ptr, sm_scale, stride_z, stride_h, stride_tok, N_CTX,
                    H: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    CAUSAL: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    """Flash-attention forward (online softmax: acc rescaled by alpha inside the loop)."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    base = off_z.to(tl.int64) * stride_z + off_h.to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_tok + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    if CAUSAL:
        hi = (start_m + 1) * BLOCK_M
    else:
        hi = N_CTX
    for start_n in tl.range(0, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        kT = tl.load(K + base + (start_n + offs_n)[None, :] * stride_tok + offs_d[:, None])
        qk = tl.dot(q, kT)
        if CAUSAL:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_tok + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M_ptr + off_hz * N_CTX + offs_m, m_i)
    tl.store(Out + base + offs_m[:, None] * stride_tok + offs_d[None, :], acc.to(Out.type.element_ty))


@triton.jit
def attn_fwd_blockptr_kernel(Q, K, V, Out, sm_scale, stride_z, stride_h, stride_tok, N_CTX,
                             H: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Older-tutorial flash attention forward written with tl.make_block_ptr / tl.advance."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    qvk_offset = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    Q_block_ptr = tl.make_block_ptr(base=Q + qvk_offset, shape=(N_CTX, HEAD_DIM), strides=(stride_tok, 1),
                                    offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM),
                                    order=(1, 0))
    K_block_ptr = tl.make_block_ptr(base=K + qvk_offset, shape=(HEAD_DIM, N_CTX), strides=(1, stride_tok),
                                    offsets=(0, 0), block_shape=(HEAD_DIM, BLOCK_N), order=(0, 1))
    V_block_ptr = tl.make_block_ptr(base=V + qvk_offset, shape=(N_CTX, HEAD_DIM), strides=(stride_tok, 1),
                                    offsets=(0, 0), block_shape=(BLOCK_N, HEAD_DIM), order=(1, 0))
    O_block_ptr = tl.make_block_ptr(base=Out + qvk_offset, shape=(N_CTX, HEAD_DIM), strides=(stride_tok, 1),
                                    offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM),
                                    order=(1, 0))
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(Q_block_ptr)
    if CAUSAL:
        hi = (start_m + 1) * BLOCK_M
    else:
        hi = N_CTX
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(K_block_ptr)
        qk = tl.dot(q, k) * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        acc *= alpha[:, None]
        v = tl.load(V_block_ptr)
        acc += tl.dot(p.to(v.dtype), v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_ij
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
    acc = acc / l_i[:, None]
    tl.store(O_block_ptr, acc.to(Out.type.element_ty))


@triton.jit
def attn_fwd_tma_kernel(Q, K, V, Out, sm_scale, Z, N_CTX,
                        H: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        CAUSAL: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    """06-fused-attention style forward over device-side TMA descriptors of [Z*H*N_CTX, HEAD_DIM]."""
    y_dim = Z * H * N_CTX
    desc_q = tl.make_tensor_descriptor(Q, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    desc_k = tl.make_tensor_descriptor(K, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    desc_v = tl.make_tensor_descriptor(V, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    desc_o = tl.make_tensor_descriptor(Out, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset_y = off_hz * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([qo_offset_y, 0])
    if CAUSAL:
        hi = (start_m + 1) * BLOCK_M
    else:
        hi = N_CTX
    for start_n in tl.range(0, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([offset_y + start_n, 0]).T
        qk = tl.dot(q, k)
        if CAUSAL:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([offset_y + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
    acc = acc / l_i[:, None]
    desc_o.store([qo_offset_y, 0], acc.to(desc_o.dtype))


@triton.jit
def attn_bwd_dkdv_kernel(Q, K, V, DO, M_ptr, D_ptr, DK, DV, sm_scale, stride_z, stride_h, stride_tok, N_CTX,
                         H: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Flash-attention backward, dK/dV part: one K/V block, loop over Q blocks (4 dots)."""
    pid = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    M_ptr += off_hz * N_CTX
    D_ptr += off_hz * N_CTX
    start_n = pid * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    k = tl.load(K + base + offs_n[:, None] * stride_tok + offs_d[None, :])
    v = tl.load(V + base + offs_n[:, None] * stride_tok + offs_d[None, :])
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    if CAUSAL:
        lo = start_n
    else:
        lo = 0
    for start_m in range(lo, N_CTX, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        qT = tl.load(Q + base + offs_m[None, :] * stride_tok + offs_d[:, None])
        m = tl.load(M_ptr + offs_m)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        if CAUSAL:
            pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
        do = tl.load(DO + base + offs_m[:, None] * stride_tok + offs_d[None, :])
        dv += tl.dot(pT.to(do.dtype), do)
        Di = tl.load(D_ptr + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - Di[None, :])
        dk += tl.dot(dsT.to(qT.dtype), tl.trans(qT))
    dk *= sm_scale
    tl.store(DV + base + offs_n[:, None] * stride_tok + offs_d[None, :], dv.to(DV.type.element_ty))
    tl.store(DK + base + offs_n[:, None] * stride_tok + offs_d[None, :], dk.to(DK.type.element_ty))


@triton.jit
def attn_bwd_dq_kernel(Q, K, V, DO, M_ptr, D_ptr, DQ, sm_scale, stride_z, stride_h, stride_tok, N_CTX,
                       H: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Flash-attention backward, dQ part: one Q block, loop over K/V blocks (3 dots)."""
    pid = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    M_ptr += off_hz * N_CTX
    D_ptr += off_hz * N_CTX
    start_m = pid * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_tok + offs_d[None, :])
    do = tl.load(DO + base + offs_m[:, None] * stride_tok + offs_d[None, :])
    m = tl.load(M_ptr + offs_m)[:, None]
    Di = tl.load(D_ptr + offs_m)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    if CAUSAL:
        hi = start_m + BLOCK_M
    else:
        hi = N_CTX
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kT = tl.load(K + base + offs_n[None, :] * stride_tok + offs_d[:, None])
        vT = tl.load(V + base + offs_n[None, :] * stride_tok + offs_d[:, None])
        qk = tl.dot(q, kT)
        p = tl.math.exp2(qk - m)
        if CAUSAL:
            p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = p * (dp - Di[:, None])
        dq += tl.dot(ds.to(kT.dtype), tl.trans(kT))
    dq *= sm_scale * 0.6931471824645996
    tl.store(DQ + base + offs_m[:, None] * stride_tok + offs_d[None, :], dq.to(DQ.type.element_ty))


@triton.jit
def fp8_scaled_mm_kernel(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, M, N, K, stride_am, stride_bn,
                         stride_cm, stride_asm, stride_bsn,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         SCALE: tl.constexpr, MAX_IMPRECISE: tl.constexpr, SCALE_BLOCK_N: tl.constexpr):
    """fp8 GEMM (B is [N, K]) with tensor / row-wise / 1x128-128x128 block scales."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        if SCALE == "block":
            a_s = tl.load(a_scale_ptr + offs_am * stride_asm + k)
            b_s = tl.load(b_scale_ptr + (offs_bn // SCALE_BLOCK_N) * stride_bsn + k)
            acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        elif MAX_IMPRECISE > 0:
            acc = tl.dot(a, b, acc, max_num_imprecise_acc=MAX_IMPRECISE)
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    if SCALE == "tensor":
        acc = acc * (tl.load(a_scale_ptr) * tl.load(b_scale_ptr))
    elif SCALE == "row":
        a_s = tl.load(a_scale_ptr + offs_am)
        b_s = tl.load(b_scale_ptr + offs_bn)
        acc = acc * a_s[:, None] * b_s[None, :]
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def w8a16_mm_kernel(a_ptr, b_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, stride_sg,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_K: tl.constexpr):
    """int8 weights dequantised to bf16/f16 (per-channel or per-K-group scales) then wgmma."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
        if GROUP_K > 0:
            s = tl.load(scale_ptr + ((k * BLOCK_K) // GROUP_K) * stride_sg + offs_bn)
            b = (b.to(tl.float32) * s[None, :].to(tl.float32)).to(a.dtype)
        else:
            b = b.to(a.dtype)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    if GROUP_K == 0:
        s = tl.load(scale_ptr + offs_bn)
        acc = acc * s[None, :].to(tl.float32)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def w4a16_mm_kernel(a_ptr, b_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, stride_sg,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_K: tl.constexpr):
    """int4 weights packed two per byte along K, unpacked + group-scaled to bf16 in the loop."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    offs_kp = tl.arange(0, BLOCK_K // 2)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_kp[:, None] * stride_bk + offs_bn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        bp = tl.load(b_ptrs)
        lo = (bp << 4) >> 4
        hi = bp >> 4
        b = tl.join(lo, hi).permute(0, 2, 1).reshape(BLOCK_K, BLOCK_N)
        s = tl.load(scale_ptr + ((k * BLOCK_K) // GROUP_K) * stride_sg + offs_bn)
        b = (b.to(tl.float32) * s[None, :].to(tl.float32)).to(a.dtype)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += (BLOCK_K // 2) * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def fused_moe_kernel(a_ptr, b_ptr, c_ptr, b_scale_ptr, topk_weights_ptr, sorted_token_ids_ptr, expert_ids_ptr,
                     num_tokens_post_padded_ptr, N, K, EM, num_valid_tokens, stride_am, stride_be, stride_bn,
                     stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr, TOP_K: tl.constexpr, MUL_ROUTED_WEIGHT: tl.constexpr,
                     USE_FP8: tl.constexpr):
    """vLLM-style fused MoE: expert-indexed grouped GEMM over sorted token ids."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(EM, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_M >= num_tokens_post_padded:
        return
    offs_token_id = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(tl.int64)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens
    off_expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_token[:, None] // TOP_K * stride_am + offs_k[None, :])
    b_ptrs = b_ptr + off_expert * stride_be + (offs_k[:, None] + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    if USE_FP8:
        acc = acc * tl.load(b_scale_ptr + off_expert)
    if MUL_ROUTED_WEIGHT:
        moe_weight = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
        acc = acc * moe_weight[:, None]
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + offs_cn[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=token_mask[:, None] & (offs_cn[None, :] < N))


@triton.jit
def lora_mm_kernel(x_ptr, w_ptr, la_ptr, lb_ptr, out_ptr, M, N, K, stride_xm, stride_wk, stride_lak,
                   stride_lbr, stride_om, scaling,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, RANK: tl.constexpr):
    """y = x @ W + scaling * (x @ A) @ B : two dots in the K loop, a chained third after it."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    offs_r = tl.arange(0, RANK)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :]
    la_ptrs = la_ptr + offs_k[:, None] * stride_lak + offs_r[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    xa = tl.zeros((BLOCK_M, RANK), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kmask = offs_k < K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=kmask[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=kmask[:, None], other=0.0)
        la = tl.load(la_ptrs, mask=kmask[:, None], other=0.0)
        acc = tl.dot(x, w, acc)
        xa = tl.dot(x, la, xa)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * stride_wk
        la_ptrs += BLOCK_K * stride_lak
    lb = tl.load(lb_ptr + offs_r[:, None] * stride_lbr + offs_n[None, :])
    acc = tl.dot((xa * scaling).to(lb.dtype), lb, acc)
    offs_om = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_on = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(out_ptr + offs_om[:, None] * stride_om + offs_on[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=(offs_om[:, None] < M) & (offs_on[None, :] < N))


@triton.jit
def acc_loop_kernel(a_ptr, b_ptr, c_ptr, kscale_ptr, M, N, K, stride_am, stride_bk, stride_cm, decay,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    MODE: tl.constexpr):
    """GEMMs whose accumulator is read / rewritten inside the K loop in various ways."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :]
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :]
    if MODE == "beta_c":
        acc = tl.load(c_ptrs, mask=cmask, other=0.0).to(tl.float32) * decay
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    rowmax = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        if MODE == "decay":
            acc = tl.dot(a, b, acc * decay)
        elif MODE == "kscale":
            acc += tl.dot(a, b) * tl.load(kscale_ptr + k)
        elif MODE == "clamp":
            acc = tl.dot(a, b, acc)
            acc = tl.minimum(tl.maximum(acc, -decay), decay)
        elif MODE == "rowmax":
            acc = tl.dot(a, b, acc)
            rowmax = tl.maximum(rowmax, tl.max(tl.abs(acc), 1))
        elif MODE == "cond_rescale":
            acc = tl.dot(a, b, acc)
            if k % 4 == 3:
                acc = acc * decay
        elif MODE == "two_acc":
            if k % 2 == 0:
                acc = tl.dot(a, b, acc)
            else:
                acc2 = tl.dot(a, b, acc2)
        elif MODE == "dual_dot":
            acc = tl.dot(a, b, acc)
            acc2 = tl.dot(a * 2.0, b, acc2)
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    if MODE == "rowmax":
        acc = acc / (rowmax[:, None] + 1.0)
    if MODE == "two_acc" or MODE == "dual_dot":
        acc = acc + acc2
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=cmask)


# ----------------------------------------------------------------------------
# Plan
# ----------------------------------------------------------------------------

TY = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "e4m3": "fp8e4nv", "e5m2": "fp8e5", "i8": "i8",
      "i32": "i32"}


class Spec:
    def __init__(self, name, family, fn, sig, consts, warps, stages, extra_opts=None, nodiv=(), max_version=None):
        assert re.fullmatch(r"[a-z0-9_]+", name), name
        self.max_version = max_version  # ((major, minor), reason): skipped on newer Triton
        self.name, self.family, self.fn = name, family, fn
        self.sig, self.consts = sig, consts
        self.opts = {"num_warps": warps, "num_stages": stages}
        self.opts.update(extra_opts or {})
        self.nodiv = set(nodiv)

    def config(self):
        parts = [f"{k}={v}" for k, v in self.consts.items()]
        parts += [f"{k}={v}" for k, v in self.sig.items() if v.startswith(("*", "tensordesc"))]
        parts += [f"{k}={v}" for k, v in self.opts.items()]
        return ",".join(parts).replace("\t", " ")


def sig_of(fn, types, consts):
    """Full signature (all args, constexprs marked "constexpr")."""
    sig = {}
    for a in fn.arg_names:
        if a in consts:
            sig[a] = "constexpr"
        else:
            sig[a] = types.get(a, "i32")
    return sig


def ptr(t):
    return "*" + TY[t]


def plan():
    S = []

    def add(name, family, fn, types, consts, w, s, **kw):
        S.append(Spec(name, family, fn, types, consts, w, s, **kw))

    # ---- dense GEMM for every wgmma type ---------------------------------
    def mm(fam, name, at, bt, ct, bm, bn, bk, s, w, kmajor=False, prec="default", acc="f32", imp=0, bt2=None):
        types = {"a_ptr": ptr(at), "b_ptr": ptr(bt2 or bt), "c_ptr": ptr(ct)}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, B_KMAJOR=kmajor, PRECISION=prec, ACC=acc,
                      MAX_IMPRECISE=imp)
        add(f"{name}_{bm}x{bn}x{bk}_s{s}_w{w}" + ("_bt" if kmajor else ""), fam, mm_kernel, types, consts, w, s)

    f16_cfgs = [(128, 128, 64, 3, 4), (128, 128, 32, 4, 4), (128, 256, 64, 3, 8), (256, 128, 64, 3, 8),
                (64, 256, 32, 4, 4), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 32, 32, 4, 4),
                (64, 64, 64, 3, 4), (64, 32, 32, 5, 4), (128, 128, 64, 4, 8), (256, 64, 64, 4, 8),
                (64, 128, 64, 3, 4), (128, 256, 32, 3, 8), (128, 128, 128, 2, 8), (64, 64, 32, 2, 4),
                (128, 16, 64, 3, 4), (256, 256, 32, 2, 8), (64, 256, 64, 3, 8), (128, 128, 64, 1, 4)]
    for c in f16_cfgs:
        mm("mm_f16", "mm_f16", "f16", "f16", "f16", *c)
    mm("mm_f16", "mm_f16", "f16", "f16", "f16", 128, 128, 64, 3, 4, kmajor=True)
    mm("mm_f16", "mm_f16", "f16", "f16", "f16", 128, 256, 64, 3, 8, kmajor=True)
    mm("mm_f16", "mm_f16_f32out", "f16", "f16", "f32", 128, 128, 64, 3, 4)

    for c in [(128, 128, 64, 3, 4), (128, 256, 64, 3, 8), (64, 128, 64, 4, 4), (128, 64, 64, 4, 4),
              (256, 128, 64, 3, 8), (64, 64, 32, 4, 4), (128, 128, 32, 5, 8), (64, 256, 32, 4, 4)]:
        mm("mm_bf16", "mm_bf16", "bf16", "bf16", "bf16", *c)
    mm("mm_bf16", "mm_bf16", "bf16", "bf16", "bf16", 128, 128, 64, 3, 8, kmajor=True)

    for c in [(128, 128, 32, 3, 4), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 256, 32, 3, 8),
              (64, 64, 32, 4, 4), (128, 128, 16, 4, 8), (256, 128, 32, 3, 8)]:
        mm("mm_tf32", "mm_tf32", "f32", "f32", "f32", *c, prec="tf32")
    mm("mm_tf32", "mm_tf32", "f32", "f32", "f32", 128, 128, 32, 3, 4, kmajor=True, prec="tf32")

    for c in [(128, 128, 32, 3, 4), (64, 128, 32, 3, 4), (128, 64, 32, 3, 8), (128, 256, 32, 2, 8)]:
        mm("mm_tf32x3", "mm_tf32x3", "f32", "f32", "f32", *c, prec="tf32x3")

    # fp8: B passed K-major ([N, K]) as Hopper wgmma wants it, plus one row-major B each
    for c in [(128, 128, 128, 3, 4), (128, 256, 128, 3, 8), (64, 128, 64, 4, 4), (128, 64, 128, 4, 4),
              (128, 128, 64, 4, 8), (256, 128, 128, 3, 8)]:
        mm("mm_fp8", "mm_e4m3", "e4m3", "e4m3", "f16", *c, kmajor=True)
    mm("mm_fp8", "mm_e4m3", "e4m3", "e4m3", "f16", 128, 128, 128, 3, 4)
    mm("mm_fp8", "mm_e4m3_bf16out", "e4m3", "e4m3", "bf16", 128, 128, 128, 4, 4, kmajor=True)
    for c in [(128, 128, 128, 3, 4), (128, 256, 128, 3, 8), (64, 64, 128, 4, 4)]:
        mm("mm_fp8", "mm_e5m2", "e5m2", "e5m2", "f16", *c, kmajor=True)
    mm("mm_fp8", "mm_e5m2", "e5m2", "e5m2", "f16", 128, 128, 64, 3, 4)
    for c in [(128, 128, 128, 3, 4), (128, 256, 64, 3, 8)]:
        mm("mm_fp8", "mm_e4m3xe5m2", "e4m3", "e5m2", "bf16", *c, kmajor=True)
    mm("mm_fp8", "mm_e5m2xe4m3", "e5m2", "e4m3", "bf16", 128, 128, 128, 3, 4, kmajor=True)
    for imp in (32, 64):
        mm("mm_fp8", f"mm_e4m3_imprecise{imp}", "e4m3", "e4m3", "f16", 128, 128, 128, 3, 4, kmajor=True,
           imp=imp)

    for c in [(128, 128, 64, 3, 4), (128, 256, 128, 3, 8), (64, 128, 64, 4, 4), (128, 64, 128, 4, 4),
              (256, 128, 64, 3, 8)]:
        mm("mm_int8", "mm_i8", "i8", "i8", "i32", *c, kmajor=True, acc="i32")
    mm("mm_int8", "mm_i8", "i8", "i8", "i32", 128, 128, 64, 3, 4, acc="i32")

    for c in [(128, 128, 64, 3, 4), (128, 256, 64, 3, 8), (64, 128, 32, 4, 4), (256, 128, 64, 3, 8),
              (64, 64, 64, 3, 4)]:
        mm("mm_f16acc", "mm_f16acc", "f16", "f16", "f16", *c, acc="f16")
    for c in [(128, 128, 128, 3, 4), (128, 256, 128, 3, 8)]:
        mm("mm_f16acc", "mm_e4m3_f16acc", "e4m3", "e4m3", "f16", *c, kmajor=True, acc="f16")

    # ---- fused epilogues -------------------------------------------------
    def epi(name, t, ct, bias, act, res, bm, bn, bk, s, w):
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr(ct), "bias_ptr": ptr(t), "res_ptr": ptr(t),
                 "alpha": "fp32"}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, HAS_BIAS=bias, ACT=act, HAS_RES=res)
        add(f"epi_{name}_{bm}x{bn}x{bk}_s{s}_w{w}", "epilogue", mm_epilogue_kernel, types, consts, w, s)

    epi("bias_relu_f16", "f16", "f16", True, "relu", False, 128, 128, 64, 3, 4)
    epi("bias_gelu_f16", "f16", "f16", True, "gelu", False, 128, 128, 64, 3, 4)
    epi("bias_gelu_tanh_bf16", "bf16", "bf16", True, "gelu_tanh", False, 128, 256, 64, 3, 8)
    epi("leaky_relu_f16", "f16", "f16", False, "leaky_relu", False, 128, 64, 32, 4, 4)
    epi("silu_bf16", "bf16", "bf16", False, "silu", False, 128, 128, 64, 3, 4)
    epi("residual_f16", "f16", "f16", False, "none", True, 128, 128, 64, 3, 4)
    epi("bias_residual_bf16", "bf16", "bf16", True, "none", True, 64, 128, 64, 4, 4)
    epi("bias_relu_residual_f16", "f16", "f16", True, "relu", True, 128, 256, 64, 3, 8)
    epi("cast_e4m3_f16", "f16", "e4m3", False, "none", False, 128, 128, 64, 3, 4)
    epi("bias_cast_f32_bf16", "bf16", "f32", True, "none", False, 128, 128, 64, 3, 4)
    epi("bias_silu_cast_e5m2_bf16", "bf16", "e5m2", True, "silu", False, 128, 128, 64, 3, 8)

    # ---- batched -----------------------------------------------------------
    for t, bm, bn, bk, s, w, bt in [("f16", 128, 128, 64, 3, 4, False), ("bf16", 64, 128, 64, 3, 4, False),
                                    ("f16", 128, 64, 64, 4, 4, True), ("bf16", 128, 256, 64, 3, 8, True)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr(t)}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, B_TRANS=bt)
        add(f"bmm_{t}_{bm}x{bn}x{bk}_s{s}_w{w}" + ("_bt" if bt else ""), "batched", bmm_kernel, types, consts, w, s)

    # ---- grouped ordering (tutorial 03) ----------------------------------
    for t, bm, bn, bk, g, s, w, act in [("f16", 128, 256, 64, 8, 3, 8, ""), ("f16", 64, 256, 32, 8, 4, 4, ""),
                                        ("f16", 128, 128, 32, 8, 4, 4, "leaky_relu"),
                                        ("bf16", 128, 128, 64, 4, 3, 4, ""), ("f16", 128, 64, 32, 16, 4, 4, ""),
                                        ("e4m3", 128, 256, 128, 8, 3, 8, "")]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr("f16")}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g, ACTIVATION=act)
        add(f"grouped_{t}_{bm}x{bn}x{bk}_g{g}_s{s}_w{w}" + (f"_{act}" if act else ""), "grouped",
            grouped_mm_kernel, types, consts, w, s)

    # ---- persistent ----------------------------------------------------------
    for t, bm, bn, bk, s, w, fl in [("f16", 128, 128, 64, 3, 4, False), ("f16", 128, 256, 64, 3, 8, False),
                                    ("f16", 128, 128, 64, 3, 8, True), ("bf16", 128, 128, 64, 4, 4, True),
                                    ("e4m3", 128, 256, 128, 3, 8, False)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr("f16")}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_SMS=132, FLATTEN=fl)
        add(f"persistent_{t}_{bm}x{bn}x{bk}_s{s}_w{w}" + ("_flat" if fl else ""), "persistent",
            persistent_mm_kernel, types, consts, w, s)

    # ---- split-K -------------------------------------------------------------
    for t, ct, bm, bn, bk, sk, s, w in [("f16", "f32", 128, 128, 64, 4, 3, 4), ("bf16", "f32", 64, 128, 64, 8, 4, 4),
                                        ("f16", "f16", 128, 64, 32, 2, 4, 4), ("f16", "f32", 128, 256, 64, 4, 3, 8)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr(ct)}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, SPLIT_K=sk)
        add(f"splitk{sk}_{t}_{ct}out_{bm}x{bn}x{bk}_s{s}_w{w}", "splitk", splitk_mm_kernel, types, consts, w, s)

    # ---- TMA with host descriptors -----------------------------------------
    def td(t, shape):
        return f"tensordesc<{TY[t]}[{shape[0]}, {shape[1]}]>"

    for t, ct, bm, bn, bk, s, w, kmaj in [("f16", "f16", 128, 128, 64, 3, 4, True), ("f16", "f16", 128, 256, 64, 3, 8, True),
                                          ("bf16", "bf16", 128, 128, 64, 4, 4, False), ("f16", "f16", 64, 128, 64, 4, 4, False),
                                          ("e4m3", "f16", 128, 128, 128, 3, 4, True),
                                          ("e4m3", "bf16", 128, 256, 128, 3, 8, True),
                                          ("f32", "f32", 128, 128, 32, 3, 4, True)]:
        types = {"a_desc": td(t, (bm, bk)), "b_desc": td(t, (bn, bk) if kmaj else (bk, bn)),
                 "c_desc": td(ct, (bm, bn))}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, B_KMAJOR=kmaj)
        add(f"tma_host_{t}_{bm}x{bn}x{bk}_s{s}_w{w}" + ("_bt" if kmaj else ""), "tma_host", tma_host_mm_kernel,
            types, consts, w, s)
    for t, bm, bn, bk, s, w, sub, fl in [("f16", 128, 256, 64, 3, 8, True, False), ("f16", 128, 128, 64, 4, 4, False, True),
                                         ("bf16", 128, 128, 64, 3, 8, True, True)]:
        types = {"a_desc": td(t, (bm, bk)), "b_desc": td(t, (bn, bk)),
                 "c_desc": td(t, (bm, bn // 2) if sub else (bm, bn))}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_SMS=132, EPILOGUE_SUBTILE=sub,
                      FLATTEN=fl, WARP_SPECIALIZE=False)
        add(f"tma_host_persistent_{t}_{bm}x{bn}x{bk}_s{s}_w{w}" + ("_sub" if sub else "") + ("_flat" if fl else ""),
            "tma_host", tma_host_persistent_kernel, types, consts, w, s)

    # ---- TMA with device descriptors ----------------------------------------
    for t, bm, bn, bk, s, w, kmaj in [("f16", 128, 128, 64, 3, 4, True), ("f16", 128, 256, 64, 3, 8, False),
                                      ("bf16", 128, 128, 64, 4, 8, True), ("e4m3", 128, 128, 128, 3, 4, True),
                                      ("f16", 64, 64, 64, 4, 4, False)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr("f16")}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, B_KMAJOR=kmaj, WARP_SPECIALIZE=False)
        add(f"tma_device_{t}_{bm}x{bn}x{bk}_s{s}_w{w}" + ("_bt" if kmaj else ""), "tma_device", tma_device_mm_kernel,
            types, consts, w, s)

    # ---- warp specialization -------------------------------------------------
    # Hopper auto-WS (setmaxnreg producer/consumer split) only happens with num_warps=4 and TMA loads;
    # see tests/real/TRITON.md for the configurations that crash or are silently not specialized.
    for t, bm, bn, bk, s, w in [("f16", 64, 128, 64, 3, 4), ("bf16", 64, 128, 64, 4, 4)]:
        types = {"a_desc": td(t, (bm, bk)), "b_desc": td(t, (bn, bk)), "c_desc": td(t, (bm, bn))}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, B_KMAJOR=True)
        add(f"ws_tma_host_{t}_{bm}x{bn}x{bk}_s{s}_w{w}_bt", "warpspec", ws_mm_kernel, types, consts, w, s)
    for t, bm, bn, bk, s, w, kmaj in [("f16", 128, 128, 64, 3, 4, False), ("f16", 128, 256, 64, 3, 4, False),
                                      ("bf16", 128, 64, 64, 4, 4, False), ("bf16", 64, 128, 64, 3, 4, False),
                                      ("e4m3", 128, 128, 128, 3, 4, True)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr("f16")}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, B_KMAJOR=kmaj, WARP_SPECIALIZE=True)
        add(f"ws_tma_device_{t}_{bm}x{bn}x{bk}_s{s}_w{w}" + ("_bt" if kmaj else ""), "warpspec",
            tma_device_mm_kernel, types, consts, w, s)
    for t, bm, bn, bk, s, w in [("f16", 64, 128, 64, 3, 4)]:
        types = {"a_desc": td(t, (bm, bk)), "b_desc": td(t, (bn, bk)), "c_desc": td(t, (bm, bn))}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_SMS=132, EPILOGUE_SUBTILE=False,
                      FLATTEN=False, WARP_SPECIALIZE=True)
        add(f"ws_tma_persistent_{t}_{bm}x{bn}x{bk}_s{s}_w{w}", "warpspec", tma_host_persistent_kernel,
            types, consts, w, s)
    for t, hd, bm, bn, causal in [("f16", 64, 128, 64, False), ("f16", 128, 128, 64, True), ("bf16", 128, 128, 64, False)]:
        types = {n: ptr(t) for n in ["Q", "K", "V", "Out"]}
        types["sm_scale"] = "fp32"
        consts = dict(H=16, HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, WARP_SPECIALIZE=True)
        add(f"ws_attn_fwd_tma_{t}_d{hd}_{bm}x{bn}_{'causal' if causal else 'full'}_s3_w4", "warpspec",
            attn_fwd_tma_kernel, types, consts, 4, 3)

    # ---- gated MLP -----------------------------------------------------------
    for t, act, bm, bn, bk, s, w in [("f16", "silu", 128, 128, 64, 3, 8), ("bf16", "silu", 128, 64, 64, 3, 4),
                                     ("bf16", "gelu_tanh", 64, 128, 64, 4, 4), ("f16", "silu", 64, 64, 64, 4, 4)]:
        types = {"x_ptr": ptr(t), "wg_ptr": ptr(t), "wu_ptr": ptr(t), "out_ptr": ptr(t)}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, ACT=act)
        add(f"gated_mlp_{act}_{t}_{bm}x{bn}x{bk}_s{s}_w{w}", "gated_mlp", gated_mlp_kernel, types, consts, w, s)

    # ---- attention forward ---------------------------------------------------
    def attn_types(t, names):
        d = {n: ptr(t) for n in names}
        d.update({"M_ptr": ptr("f32"), "D_ptr": ptr("f32"), "sm_scale": "fp32"})
        return d

    for t, hd, bm, bn, causal, s, w in [("f16", 64, 128, 64, False, 3, 4), ("f16", 64, 128, 64, True, 3, 4),
                                        ("f16", 128, 128, 64, False, 3, 8), ("f16", 128, 128, 64, True, 3, 8),
                                        ("f16", 128, 128, 128, False, 2, 8), ("bf16", 64, 128, 128, True, 4, 8),
                                        ("bf16", 128, 64, 64, False, 3, 4), ("f16", 64, 64, 64, True, 4, 4),
                                        ("e4m3", 128, 128, 128, False, 3, 8)]:
        types = attn_types(t, ["Q", "K", "V", "Out"])
        if t == "e4m3":
            types["Out"] = ptr("f16")
        consts = dict(H=16, HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, WARP_SPECIALIZE=False)
        add(f"attn_fwd_{t}_d{hd}_{bm}x{bn}_{'causal' if causal else 'full'}_s{s}_w{w}", "attn_fwd",
            attn_fwd_kernel, types, consts, w, s, nodiv=["N_CTX"] if hd == 64 and causal and bm == 64 else ())
    for t, hd, bm, bn, causal, s, w in [("f16", 64, 128, 64, False, 3, 4), ("f16", 128, 128, 64, True, 3, 8)]:
        types = attn_types(t, ["Q", "K", "V", "Out"])
        consts = dict(H=16, HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal)
        add(f"attn_fwd_blockptr_{t}_d{hd}_{bm}x{bn}_{'causal' if causal else 'full'}_s{s}_w{w}", "attn_fwd",
            attn_fwd_blockptr_kernel, types, consts, w, s,
            max_version=((3, 8), "tl.make_block_ptr was removed in Triton 3.9"))
    for t, hd, bm, bn, causal, s, w in [("f16", 128, 128, 128, False, 3, 8), ("bf16", 64, 128, 64, True, 3, 4),
                                        ("f16", 64, 128, 128, True, 3, 8), ("e4m3", 128, 128, 128, False, 3, 8)]:
        types = {n: ptr(t) for n in ["Q", "K", "V", "Out"]}
        types["sm_scale"] = "fp32"
        if t == "e4m3":
            types["Out"] = ptr("f16")
        consts = dict(H=16, HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, WARP_SPECIALIZE=False)
        add(f"attn_fwd_tma_{t}_d{hd}_{bm}x{bn}_{'causal' if causal else 'full'}_s{s}_w{w}", "attn_fwd",
            attn_fwd_tma_kernel, types, consts, w, s)

    # ---- attention backward --------------------------------------------------
    for t, hd, causal in [("f16", 64, False), ("f16", 64, True), ("f16", 128, False), ("bf16", 128, True)]:
        w = 4 if hd == 64 else 8
        types = attn_types(t, ["Q", "K", "V", "DO", "DK", "DV"])
        consts = dict(H=16, HEAD_DIM=hd, BLOCK_M=64 if hd == 128 else 32, BLOCK_N=128 if hd == 128 else 64,
                      CAUSAL=causal)
        tag = 'causal' if causal else 'full'
        add(f"attn_bwd_dkdv_{t}_d{hd}_{tag}_s2_w{w}", "attn_bwd", attn_bwd_dkdv_kernel, types, consts, w, 2)
        types = attn_types(t, ["Q", "K", "V", "DO", "DQ"])
        consts = dict(H=16, HEAD_DIM=hd, BLOCK_M=128 if hd == 128 else 64, BLOCK_N=64 if hd == 128 else 32,
                      CAUSAL=causal)
        add(f"attn_bwd_dq_{t}_d{hd}_{tag}_s2_w{w}", "attn_bwd", attn_bwd_dq_kernel, types, consts, w, 2)

    # ---- fp8 with scales -------------------------------------------------------
    for t, ct, scale, imp, bm, bn, bk, s, w in [
            ("e4m3", "bf16", "tensor", 0, 128, 128, 128, 3, 4), ("e4m3", "bf16", "tensor", 32, 128, 128, 128, 3, 4),
            ("e4m3", "f16", "tensor", 64, 128, 256, 128, 3, 8), ("e4m3", "bf16", "tensor", 128, 128, 128, 128, 4, 8),
            ("e5m2", "bf16", "tensor", 32, 128, 128, 128, 3, 4), ("e4m3", "bf16", "row", 0, 128, 128, 128, 3, 4),
            ("e4m3", "bf16", "row", 0, 128, 256, 128, 3, 8), ("e4m3", "bf16", "block", 0, 128, 128, 128, 3, 4),
            ("e4m3", "bf16", "block", 0, 64, 128, 128, 4, 4), ("e4m3", "bf16", "block", 0, 128, 128, 128, 3, 8)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr(ct), "a_scale_ptr": ptr("f32"),
                 "b_scale_ptr": ptr("f32")}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, SCALE=scale, MAX_IMPRECISE=imp, SCALE_BLOCK_N=128)
        add(f"fp8_{scale}_{t}_{ct}out_{bm}x{bn}x{bk}_s{s}_w{w}" + (f"_imp{imp}" if imp else ""), "fp8_scaled",
            fp8_scaled_mm_kernel, types, consts, w, s)

    # ---- int8 / int4 weight dequant --------------------------------------------
    for t, g, bm, bn, bk, s, w in [("bf16", 0, 128, 128, 64, 3, 4), ("bf16", 128, 128, 128, 64, 3, 4),
                                   ("f16", 0, 64, 128, 64, 4, 4), ("bf16", 64, 128, 256, 64, 3, 8),
                                   ("f16", 128, 64, 64, 128, 3, 4)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr("i8"), "scale_ptr": ptr(t), "c_ptr": ptr(t)}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_K=g)
        add(f"w8a16_{t}_" + (f"g{g}" if g else "perchan") + f"_{bm}x{bn}x{bk}_s{s}_w{w}", "int8_dequant",
            w8a16_mm_kernel, types, consts, w, s)
    for t, g, bm, bn, bk, s, w in [("bf16", 128, 128, 128, 64, 3, 4), ("f16", 64, 64, 128, 64, 4, 4)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr("i8"), "scale_ptr": ptr(t), "c_ptr": ptr(t)}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_K=g)
        add(f"w4a16_{t}_g{g}_{bm}x{bn}x{bk}_s{s}_w{w}", "int4_dequant", w4a16_mm_kernel, types, consts, w, s)

    # ---- MoE ---------------------------------------------------------------------
    for t, fp8, bm, bn, bk, s, w, mul in [("f16", False, 64, 128, 64, 3, 4, False), ("bf16", False, 64, 64, 64, 4, 4, True),
                                          ("bf16", False, 128, 128, 64, 3, 8, True),
                                          ("e4m3", True, 64, 128, 128, 3, 4, True), ("f16", False, 16, 64, 128, 4, 4, False)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr("bf16" if t != "f16" else "f16"),
                 "b_scale_ptr": ptr("f32"), "topk_weights_ptr": ptr("f32"), "sorted_token_ids_ptr": ptr("i32"),
                 "expert_ids_ptr": ptr("i32"), "num_tokens_post_padded_ptr": ptr("i32")}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, TOP_K=2, MUL_ROUTED_WEIGHT=mul, USE_FP8=fp8)
        add(f"moe_{t}_{bm}x{bn}x{bk}_s{s}_w{w}" + ("_routed" if mul else ""), "moe", fused_moe_kernel,
            types, consts, w, s, nodiv=["num_valid_tokens"])

    # ---- LoRA ----------------------------------------------------------------------
    for t, r, bm, bn, bk, s, w in [("f16", 16, 128, 128, 64, 3, 4), ("bf16", 32, 128, 128, 64, 3, 8),
                                   ("bf16", 64, 64, 128, 64, 3, 4), ("f16", 16, 64, 256, 32, 4, 8)]:
        types = {"x_ptr": ptr(t), "w_ptr": ptr(t), "la_ptr": ptr(t), "lb_ptr": ptr(t), "out_ptr": ptr(t),
                 "scaling": "fp32"}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, RANK=r)
        add(f"lora_r{r}_{t}_{bm}x{bn}x{bk}_s{s}_w{w}", "lora", lora_mm_kernel, types, consts, w, s)

    # ---- maxnreg -------------------------------------------------------------------
    for reg, bm, bn, bk, s, w in [(128, 128, 128, 64, 3, 4), (168, 128, 256, 64, 3, 8), (232, 128, 256, 64, 3, 8),
                                  (96, 64, 128, 64, 4, 4)]:
        types = {"a_ptr": ptr("f16"), "b_ptr": ptr("f16"), "c_ptr": ptr("f16")}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, B_KMAJOR=False, PRECISION="default", ACC="f32",
                      MAX_IMPRECISE=0)
        add(f"maxnreg{reg}_mm_f16_{bm}x{bn}x{bk}_s{s}_w{w}", "maxnreg", mm_kernel, types, consts, w, s,
            extra_opts={"maxnreg": reg})
    types = attn_types("f16", ["Q", "K", "V", "Out"])
    add("maxnreg128_attn_fwd_f16_d128_128x64_full_s3_w8", "maxnreg", attn_fwd_kernel, types,
        dict(H=16, HEAD_DIM=128, BLOCK_M=128, BLOCK_N=64, CAUSAL=False, WARP_SPECIALIZE=False), 8, 3,
        extra_opts={"maxnreg": 128})

    # ---- accumulator use inside the K loop -------------------------------------------
    for mode, t, bm, bn, bk, s, w in [("decay", "f16", 128, 128, 64, 3, 4), ("kscale", "f16", 128, 128, 64, 3, 4),
                                      ("clamp", "bf16", 128, 128, 64, 3, 4), ("rowmax", "f16", 128, 128, 64, 3, 8),
                                      ("cond_rescale", "f16", 128, 128, 64, 3, 4), ("two_acc", "f16", 128, 128, 64, 3, 8),
                                      ("dual_dot", "bf16", 64, 128, 64, 3, 4), ("beta_c", "f16", 128, 256, 64, 3, 8),
                                      ("decay", "bf16", 128, 256, 64, 3, 8), ("kscale", "e4m3", 128, 128, 128, 3, 4)]:
        types = {"a_ptr": ptr(t), "b_ptr": ptr(t), "c_ptr": ptr("f16" if t == "e4m3" else t), "kscale_ptr": ptr("f32"),
                 "decay": "fp32"}
        consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, MODE=mode)
        add(f"accloop_{mode}_{t}_{bm}x{bn}x{bk}_s{s}_w{w}", "acc_loop", acc_loop_kernel, types, consts, w, s)

    names = [s.name for s in S]
    assert len(names) == len(set(names)), "duplicate kernel names"
    return S


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------


def compile_kernel(spec, ptx_version):
    """The compiled kernel of `spec` (its PTX, metadata...)."""
    sig = sig_of(spec.fn, spec.sig, spec.consts)
    attrs = {}
    for i, a in enumerate(spec.fn.arg_names):
        t = sig[a]
        if a in spec.nodiv:
            continue
        if t.startswith("*") or t == "i32":
            attrs[(i, )] = [["tt.divisibility", 16]]
    src = triton.compiler.ASTSource(fn=spec.fn, signature=sig, constexprs=dict(spec.consts), attrs=attrs)
    opts = dict(spec.opts)
    opts["ptx_version"] = ptx_version
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=opts)


def compile_spec(spec, ptx_version):
    return compile_kernel(spec, ptx_version).asm["ptx"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=False, help="output directory, e.g. tests/real/triton36")
    ap.add_argument("--only", help="regex on kernel names")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    ap.add_argument("--clean", action="store_true", help="delete *.ptx and manifest.tsv in --out first")
    ap.add_argument("--ptxas", help="check each PTX with this ptxas (-arch=sm_90a); drop rejected kernels")
    ap.add_argument("--ptx-version", type=int, default=None)
    args = ap.parse_args()

    specs = plan()
    if args.only:
        specs = [s for s in specs if re.search(args.only, s.name)]
    if args.list:
        for s in specs:
            print(f"{s.name}\t{s.family}\t{s.fn.__name__}\t{s.config()}")
        print(len(specs), "kernels", file=sys.stderr)
        return 0
    if not args.out:
        ap.error("--out is required")
    mm = ".".join(TRITON_VERSION.split(".")[:2])
    ptx_version = args.ptx_version or DEFAULT_PTX_VERSION.get(mm)
    if ptx_version is None:
        ap.error(f"no PTX version pin for Triton {TRITON_VERSION}; pass --ptx-version")
    os.makedirs(args.out, exist_ok=True)
    if args.clean:
        for f in os.listdir(args.out):
            if f.endswith(".ptx") or f == "manifest.tsv":
                os.remove(os.path.join(args.out, f))

    rows, failed, skipped = [], [], []
    t0 = time.time()
    ver = tuple(int(x) for x in TRITON_VERSION.split(".")[:2])
    for i, s in enumerate(specs):
        t = time.time()
        if s.max_version and ver > s.max_version[0]:
            skipped.append((s.name, s.max_version[1]))
            print(f"[{i + 1}/{len(specs)}] skip {s.name}: {s.max_version[1]}", flush=True)
            continue
        try:
            ptx = compile_spec(s, ptx_version)
        except Exception as e:  # noqa: BLE001 - report and go on
            msg = " ".join(str(e).split())[:300]
            failed.append((s.name, "triton: " + type(e).__name__ + ": " + msg))
            print(f"[{i + 1}/{len(specs)}] FAIL {s.name}: {type(e).__name__}: {msg}", flush=True)
            continue
        if args.ptxas:
            ok, err = common.ptxas_ok(args.ptxas, ptx)
            if not ok:
                failed.append((s.name, "ptxas: " + " ".join(err.split())[:300]))
                print(f"[{i + 1}/{len(specs)}] PTXAS-REJECT {s.name}: {err[:300]}", flush=True)
                continue
        with open(os.path.join(args.out, s.name + ".ptx"), "w") as f:
            f.write(ptx)
        rows.append(s)
        print(f"[{i + 1}/{len(specs)}] ok {s.name} ({len(ptx) // 1024} KiB, wgmma={ptx.count('wgmma.mma_async')}, "
              f"{time.time() - t:.1f}s)", flush=True)

    # Merge with an existing manifest when compiling a subset (--only without --clean).
    man = os.path.join(args.out, "manifest.tsv")
    entries = {}
    if os.path.exists(man) and args.only:
        with open(man) as f:
            next(f, None)
            for line in f:
                if line.strip():
                    entries[line.split("\t", 1)[0]] = line.rstrip("\n")
    for s in rows:
        entries[s.name] = "\t".join([s.name, s.family, s.fn.__name__, s.config(), TRITON_VERSION])
    order = {s.name: i for i, s in enumerate(plan())}
    with open(man, "w") as f:
        f.write("name\tfamily\tkernel_fn\tconfig\ttriton_version\n")
        for n in sorted(entries, key=lambda n: order.get(n, 1 << 30)):
            f.write(entries[n] + "\n")
    print(f"done: {len(rows)} ok, {len(failed)} failed, {len(skipped)} skipped, {time.time() - t0:.0f}s (Triton {TRITON_VERSION}, "
          f"ptx_version {ptx_version})")
    for n, why in failed:
        print(f"FAILED\t{n}\t{why}")
    for n, why in skipped:
        print(f"SKIPPED\t{n}\t{why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
