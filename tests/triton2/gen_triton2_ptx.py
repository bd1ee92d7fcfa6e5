#!/usr/bin/env python3
"""Generate a second, held-out set of real Triton PTX for Hopper (sm_90a).

Unlike ``tests/triton/`` (17 variants of the tutorial matmul), this script
compiles kernels with different shapes of wgmma use:

* fused attention forward (tutorial ``06-fused-attention`` style, pointer
  based): Q@K^T, online softmax, P@V with P in registers; head dim 64 / 128,
  causal / non-causal, fp16 / bf16;
* persistent matmul (tile loop inside the kernel, nested and ``flatten=True``);
* gated matmul with two dots sharing A: ``(A@B1) * silu(A@B2)``;
* fp8 (e4m3 / e5m2) matmul with per-tensor scales;
* batched matmul (grid axis 1 = batch) and a grouped GEMM (tutorial 08 style,
  pointer arrays, ``while`` loop);
* matmuls whose accumulator is read or redefined inside the K loop (running
  max, split-K style partial stores, decay ``acc*0.5`` before the dot, clamp
  after the dot).

For each configuration the PTX (``compiled.asm['ptx']``) and TTGIR are
written to ``--out``; the kernel is launched once and compared with a torch
reference (fp32 math); the PTX is assembled by the system ptxas and Triton's
bundled ptxas with ``-arch=sm_90a -v`` (``<name>.ptxas_device.txt``).
``summary.json`` collects versions, per-kernel config, wgmma counts/shapes and
numeric errors.

Usage on a Hopper machine with PyTorch and Triton:

    TRITON_CACHE_DIR=/tmp/tcache python3 tests/triton2/gen_triton2_ptx.py --out /tmp/gen2

``--compile-only`` compiles for sm_90a (cuda:90) on a machine with Triton but
no GPU and no PyTorch (a fake driver and fake tensors supply the signature);
nothing is launched.  It is only a smoke test of the kernels' front end.

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

try:
    import torch
except ImportError:  # --compile-only without torch
    torch = None

import triton
import triton.language as tl


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------

@triton.jit
def _grouped_pid(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n


# --- fused attention forward (tutorial 06 style, pointer based) -------------

@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, start_m, qk_scale, stride_kn, stride_vn,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
                    offs_m, offs_n, N_CTX):
    # STAGE 1: off-band (strictly below the diagonal block), 2: on-band
    # (diagonal block, masked), 3: everything (non-causal).
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    k_ptrs += lo * stride_kn
    v_ptrs += lo * stride_vn
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(k_ptrs)
        qk = tl.dot(q, k)
        if STAGE == 2:
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
        v = tl.load(v_ptrs)
        p = p.to(v.dtype)
        acc = tl.dot(p, v, acc)
        m_i = m_ij
        k_ptrs += BLOCK_N * stride_kn
        v_ptrs += BLOCK_N * stride_vn
    return acc, l_i, m_i


@triton.jit
def attn_fwd_kernel(Q, K, V, Out, M_lse, sm_scale,
                    stride_z, stride_h, stride_m, stride_d,
                    H, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    base = off_z.to(tl.int64) * stride_z + off_h.to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + base + offs_m[:, None] * stride_m + offs_d[None, :] * stride_d
    k_ptrs = K + base + offs_n[None, :] * stride_m + offs_d[:, None] * stride_d   # (HEAD_DIM, BLOCK_N)
    v_ptrs = V + base + offs_n[:, None] * stride_m + offs_d[None, :] * stride_d   # (BLOCK_N, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(q_ptrs)
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, start_m, qk_scale,
                                        stride_m, stride_m, BLOCK_M, BLOCK_N, 4 - STAGE,
                                        offs_m, offs_n, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, start_m, qk_scale,
                                        stride_m, stride_m, BLOCK_M, BLOCK_N, 2,
                                        offs_m, offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M_lse + off_hz * N_CTX + offs_m, m_i)
    o_ptrs = Out + base + offs_m[:, None] * stride_m + offs_d[None, :] * stride_d
    tl.store(o_ptrs, acc.to(Out.type.element_ty))


# --- persistent matmul -------------------------------------------------------

@triton.jit
def persistent_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                             stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, FLATTEN: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_M), BLOCK_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_N), BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


# --- gated matmul: (A@B1) * silu(A@B2) --------------------------------------

@triton.jit
def gated_matmul_kernel(a_ptr, b1_ptr, b2_ptr, c_ptr, M, N, K,
                        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    pid_m, pid_n = _grouped_pid(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_off = offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    b1_ptrs = b1_ptr + b_off
    b2_ptrs = b2_ptr + b_off
    acc1 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kmask = offs_k < K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=kmask[None, :], other=0.0)
        b1 = tl.load(b1_ptrs, mask=kmask[:, None], other=0.0)
        b2 = tl.load(b2_ptrs, mask=kmask[:, None], other=0.0)
        acc1 = tl.dot(a, b1, acc1)
        acc2 = tl.dot(a, b2, acc2)
        a_ptrs += BLOCK_K * stride_ak
        b1_ptrs += BLOCK_K * stride_bk
        b2_ptrs += BLOCK_K * stride_bk
    out = acc1 * (acc2 * tl.sigmoid(acc2))
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, out.to(c_ptr.dtype.element_ty), mask=c_mask)


# --- fp8 matmul with per-tensor scales ---------------------------------------

@triton.jit
def fp8_scaled_matmul_kernel(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, M, N, K,
                             stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_M: tl.constexpr):
    pid_m, pid_n = _grouped_pid(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    scale = tl.load(a_scale_ptr) * tl.load(b_scale_ptr)
    acc = acc * scale
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


# --- batched matmul ----------------------------------------------------------

@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
               stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
               stride_cb, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr):
    pid_m, pid_n = _grouped_pid(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    bid = tl.program_id(1).to(tl.int64)
    a_ptr += bid * stride_ab
    b_ptr += bid * stride_bb
    c_ptr += bid * stride_cb
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


# --- grouped GEMM (tutorial 08 style) ------------------------------------------

@triton.jit
def grouped_matmul_kernel(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes, g_lds,
                          group_size, NUM_SM: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_N)
        num_tiles = num_m_tiles * num_n_tiles
        while (tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles):
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_bn = tile_n_idx * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_K)):
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                acc += tl.dot(a, b)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * ldb
            c = acc.to(tl.float16)
            offs_cm = tile_m_idx * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_cn = tile_n_idx * BLOCK_N + tl.arange(0, BLOCK_N)
            c_ptrs = c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :]
            tl.store(c_ptrs, c)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


# --- accumulator read / redefined inside the K loop --------------------------

@triton.jit
def accread_matmul_kernel(a_ptr, b_ptr, c_ptr, p_ptr, M, N, K,
                          stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                          stride_ps,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          GROUP_M: tl.constexpr, MODE: tl.constexpr, EVERY: tl.constexpr):
    # MODE 0: running elementwise max of the accumulator, output acc + max
    # MODE 1: split-K style partial store of acc every EVERY K-steps
    # MODE 2: decay, acc = dot(a, b, acc * 0.5)
    # MODE 3: clamp after the dot, acc = min(dot(a, b, acc), 4.0)
    pid_m, pid_n = _grouped_pid(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_off = stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    mx = tl.full((BLOCK_M, BLOCK_N), float("-inf"), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        if MODE == 2:
            acc = tl.dot(a, b, acc * 0.5)
        else:
            acc = tl.dot(a, b, acc)
        if MODE == 0:
            mx = tl.maximum(mx, acc)
        if MODE == 1:
            if k % EVERY == EVERY - 1:
                tl.store(p_ptr + (k // EVERY) * stride_ps + c_off, acc, mask=c_mask)
        if MODE == 3:
            acc = tl.minimum(acc, 4.0)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if MODE == 0:
        acc = acc + mx
    tl.store(c_ptr + c_off, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


# ---------------------------------------------------------------------------
# Tensor environments: real torch tensors, or fakes for --compile-only
# ---------------------------------------------------------------------------

class _FakeDType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


_FAKE_DTYPES = {}


class _FakeTensor:
    def __init__(self, shape, dtype, strides=None):
        self.shape = tuple(shape)
        # One object per dtype name, like torch's dtype singletons (Triton's
        # native specializer caches the dtype string by object identity).
        self.dtype = _FAKE_DTYPES.setdefault(dtype, _FakeDType(dtype))
        if strides is None:
            strides, s = [], 1
            for d in reversed(self.shape):
                strides.append(s)
                s *= d
            strides = list(reversed(strides))
        self._strides = tuple(strides)

    def stride(self, i=None):
        return self._strides if i is None else self._strides[i]

    def data_ptr(self):
        return 1 << 20


class RealEnv:
    fake = False

    def __init__(self):
        self.dev = "cuda"

    def _dt(self, name):
        return getattr(torch, name)

    def randn(self, shape, dtype, scale=0.5):
        return (torch.randn(*shape, device=self.dev) * scale).to(self._dt(dtype))

    def randn_kmajor(self, shape, dtype, scale=0.5):
        # logical shape (..., K, N) stored as (..., N, K) contiguous
        s = list(shape)
        s[-1], s[-2] = s[-2], s[-1]
        return (torch.randn(*s, device=self.dev) * scale).to(self._dt(dtype)).transpose(-1, -2)

    def empty(self, shape, dtype):
        return torch.empty(*shape, device=self.dev, dtype=self._dt(dtype))

    def full(self, shape, value, dtype):
        return torch.full(shape, value, device=self.dev, dtype=self._dt(dtype))

    def tensor(self, values, dtype):
        return torch.tensor(values, device=self.dev, dtype=self._dt(dtype))


class FakeEnv:
    fake = True

    def randn(self, shape, dtype, scale=0.5):
        return _FakeTensor(shape, dtype)

    def randn_kmajor(self, shape, dtype, scale=0.5):
        s = list(shape)
        s[-1], s[-2] = s[-2], s[-1]
        t = _FakeTensor(s, dtype)
        st = list(t.stride())
        st[-1], st[-2] = st[-2], st[-1]
        return _FakeTensor(shape, dtype, st)

    def empty(self, shape, dtype):
        return _FakeTensor(shape, dtype)

    def full(self, shape, value, dtype):
        return _FakeTensor(shape, dtype)

    def tensor(self, values, dtype):
        return _FakeTensor((len(values),), dtype)


def install_fake_driver():
    from triton.backends.compiler import GPUTarget
    from triton.runtime.driver import driver

    class _FakeDriver:
        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

        def get_current_target(self):
            return GPUTarget("cuda", 90, 32)

    driver.set_active(_FakeDriver())


# ---------------------------------------------------------------------------
# Builders: each returns (kernel, args, kwargs, grid, check) where check()
# launches nothing and returns (max_abs_err, ref_max_abs) after the launch.
# ---------------------------------------------------------------------------

def _err(out, ref):
    out = out.float()
    ref = ref.float()
    return float((out - ref).abs().max()), float(ref.abs().max())


def build_attn(env, p):
    Z, H, N_CTX, D = p.get("Z", 2), p.get("H", 4), p.get("N_CTX", 1024), p["D"]
    dt = p["dtype"]
    q = env.randn((Z, H, N_CTX, D), dt)
    k = env.randn((Z, H, N_CTX, D), dt)
    v = env.randn((Z, H, N_CTX, D), dt)
    o = env.empty((Z, H, N_CTX, D), dt)
    lse = env.empty((Z * H, N_CTX), "float32")
    sm_scale = 1.0 / (D ** 0.5)
    stage = 3 if p["causal"] else 1
    grid = (N_CTX // p["BM"], Z * H, 1)
    args = (q, k, v, o, lse, sm_scale, q.stride(0), q.stride(1), q.stride(2), q.stride(3), H, N_CTX)
    kw = dict(HEAD_DIM=D, BLOCK_M=p["BM"], BLOCK_N=p["BN"], STAGE=stage)

    def check():
        s = (q.float() @ k.float().transpose(-1, -2)) * sm_scale
        if p["causal"]:
            mask = torch.tril(torch.ones(N_CTX, N_CTX, device=s.device, dtype=torch.bool))
            s = s.masked_fill(~mask, float("-inf"))
        ref = torch.softmax(s, dim=-1) @ v.float()
        ref_lse = torch.logsumexp(s, dim=-1).reshape(Z * H, N_CTX) * 1.44269504
        e1, r1 = _err(o, ref.to(o.dtype))
        e2 = float((lse - ref_lse).abs().max())
        return max(e1, e2), r1, {"out_err": e1, "lse_err": e2}

    return attn_fwd_kernel, args, kw, grid, check


def _mm_inputs(env, p):
    M, N, K = p.get("shape", (512, 512, 512))
    a = env.randn((M, K), p["in"])
    if p.get("b_kmajor"):
        b = env.randn_kmajor((K, N), p["in"])
    else:
        b = env.randn((K, N), p["in"])
    c = env.empty((M, N), p["out"])
    return M, N, K, a, b, c


def build_persistent(env, p):
    M, N, K, a, b, c = _mm_inputs(env, p)
    num_sms = 132 if env.fake else torch.cuda.get_device_properties(0).multi_processor_count
    tiles = triton.cdiv(M, p["BM"]) * triton.cdiv(N, p["BN"])
    grid = (min(num_sms, tiles),)
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    kw = dict(BLOCK_M=p["BM"], BLOCK_N=p["BN"], BLOCK_K=p["BK"], GROUP_M=8, NUM_SMS=num_sms,
              FLATTEN=bool(p.get("flatten")))

    def check():
        return _err(c, (a.float() @ b.float()).to(c.dtype))

    return persistent_matmul_kernel, args, kw, grid, check


def build_gated(env, p):
    M, N, K, a, b1, c = _mm_inputs(env, p)
    b2 = env.randn((K, N), p["in"])
    grid = (triton.cdiv(M, p["BM"]) * triton.cdiv(N, p["BN"]),)
    args = (a, b1, b2, c, M, N, K, a.stride(0), a.stride(1), b1.stride(0), b1.stride(1),
            c.stride(0), c.stride(1))
    kw = dict(BLOCK_M=p["BM"], BLOCK_N=p["BN"], BLOCK_K=p["BK"], GROUP_M=8)

    def check():
        x1 = a.float() @ b1.float()
        x2 = a.float() @ b2.float()
        return _err(c, (x1 * torch.nn.functional.silu(x2)).to(c.dtype))

    return gated_matmul_kernel, args, kw, grid, check


def build_fp8(env, p):
    M, N, K, a, b, c = _mm_inputs(env, p)
    sa = env.full((1,), 0.75, "float32")
    sb = env.full((1,), 1.25, "float32")
    grid = (triton.cdiv(M, p["BM"]) * triton.cdiv(N, p["BN"]),)
    args = (a, b, c, sa, sb, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1))
    kw = dict(BLOCK_M=p["BM"], BLOCK_N=p["BN"], BLOCK_K=p["BK"], GROUP_M=8)

    def check():
        return _err(c, ((a.float() @ b.float()) * (0.75 * 1.25)).to(c.dtype))

    return fp8_scaled_matmul_kernel, args, kw, grid, check


def build_bmm(env, p):
    B = p["batch"]
    M, N, K = p.get("shape", (256, 256, 256))
    a = env.randn((B, M, K), p["in"])
    b = env.randn_kmajor((B, K, N), p["in"]) if p.get("b_kmajor") else env.randn((B, K, N), p["in"])
    c = env.empty((B, M, N), p["out"])
    grid = (triton.cdiv(M, p["BM"]) * triton.cdiv(N, p["BN"]), B)
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), a.stride(2), b.stride(0), b.stride(1),
            b.stride(2), c.stride(0), c.stride(1), c.stride(2))
    kw = dict(BLOCK_M=p["BM"], BLOCK_N=p["BN"], BLOCK_K=p["BK"], GROUP_M=8)

    def check():
        return _err(c, torch.bmm(a.float(), b.float()).to(c.dtype))

    return bmm_kernel, args, kw, grid, check


def build_grouped(env, p):
    sizes = p["sizes"]
    A, B, C = [], [], []
    for (m, n, k) in sizes:
        A.append(env.randn((m, k), "float16"))
        B.append(env.randn((k, n), "float16"))
        C.append(env.empty((m, n), "float16"))
    if env.fake:
        a_addrs = b_addrs = c_addrs = [0] * len(sizes)
    else:
        a_addrs = [t.data_ptr() for t in A]
        b_addrs = [t.data_ptr() for t in B]
        c_addrs = [t.data_ptr() for t in C]
    g_sizes, g_lds = [], []
    for i, (m, n, k) in enumerate(sizes):
        g_sizes += [m, n, k]
        g_lds += [A[i].stride(0), B[i].stride(0), C[i].stride(0)]
    d_a = env.tensor(a_addrs, "int64")
    d_b = env.tensor(b_addrs, "int64")
    d_c = env.tensor(c_addrs, "int64")
    d_sizes = env.tensor(g_sizes, "int32")
    d_lds = env.tensor(g_lds, "int32")
    num_sm = p.get("NUM_SM", 132)
    grid = (num_sm,)
    args = (d_a, d_b, d_c, d_sizes, d_lds, len(sizes))
    kw = dict(NUM_SM=num_sm, BLOCK_M=p["BM"], BLOCK_N=p["BN"], BLOCK_K=p["BK"])

    def check():
        errs, refmax = [], []
        for a, b, c in zip(A, B, C):
            e, r = _err(c, (a.float() @ b.float()).to(c.dtype))
            errs.append(e)
            refmax.append(r)
        return max(errs), max(refmax)

    return grouped_matmul_kernel, args, kw, grid, check


def build_accread(env, p):
    M, N, K, a, b, _ = _mm_inputs(env, p)
    c = env.empty((M, N), "float32")
    mode = p["mode"]
    every = p.get("every", 2)
    ksteps = triton.cdiv(K, p["BK"])
    nparts = max(1, ksteps // every)
    part = env.full((nparts, M, N), 0.0, "float32")
    grid = (triton.cdiv(M, p["BM"]) * triton.cdiv(N, p["BN"]),)
    args = (a, b, c, part, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1), part.stride(0))
    kw = dict(BLOCK_M=p["BM"], BLOCK_N=p["BN"], BLOCK_K=p["BK"], GROUP_M=8, MODE=mode, EVERY=every)

    def check():
        BK = p["BK"]
        acc = torch.zeros(M, N, device=c.device)
        mx = torch.full((M, N), float("-inf"), device=c.device)
        parts = []
        for kk in range(ksteps):
            prod = a[:, kk * BK:(kk + 1) * BK].float() @ b[kk * BK:(kk + 1) * BK, :].float()
            acc = (acc * 0.5 if mode == 2 else acc) + prod
            if mode == 0:
                mx = torch.maximum(mx, acc)
            if mode == 1 and kk % every == every - 1:
                parts.append(acc.clone())
            if mode == 3:
                acc = torch.clamp(acc, max=4.0)
        ref = acc + mx if mode == 0 else acc
        e, r = _err(c, ref)
        extra = {}
        if mode == 1:
            pe = max(float((part[i] - parts[i]).abs().max()) for i in range(len(parts)))
            extra["partial_err"] = pe
            e = max(e, pe)
        return e, r, extra

    return accread_matmul_kernel, args, kw, grid, check


BUILDERS = {
    "attn": build_attn,
    "persistent": build_persistent,
    "gated": build_gated,
    "fp8": build_fp8,
    "bmm": build_bmm,
    "grouped": build_grouped,
    "accread": build_accread,
}

F16, BF16 = "float16", "bfloat16"
E4M3, E5M2 = "float8_e4m3fn", "float8_e5m2"

# name, family, stages, warps, params
CONFIGS = [
    # fused attention forward
    ("attn_fp16_d64_m128n64_s3_w4", "attn", 3, 4, dict(dtype=F16, D=64, BM=128, BN=64, causal=False)),
    ("attn_fp16_d64_causal_m128n64_s3_w4", "attn", 3, 4, dict(dtype=F16, D=64, BM=128, BN=64, causal=True)),
    ("attn_bf16_d64_causal_m128n64_s4_w8", "attn", 4, 8, dict(dtype=BF16, D=64, BM=128, BN=64, causal=True)),
    ("attn_fp16_d64_m64n32_s2_w4", "attn", 2, 4, dict(dtype=F16, D=64, BM=64, BN=32, causal=False)),
    ("attn_fp16_d128_m128n64_s3_w8", "attn", 3, 8, dict(dtype=F16, D=128, BM=128, BN=64, causal=False)),
    ("attn_fp16_d128_causal_m128n64_s3_w8", "attn", 3, 8, dict(dtype=F16, D=128, BM=128, BN=64, causal=True)),
    ("attn_bf16_d128_m128n128_s2_w8", "attn", 2, 8, dict(dtype=BF16, D=128, BM=128, BN=128, causal=False)),
    ("attn_bf16_d128_causal_m64n64_s3_w4", "attn", 3, 4, dict(dtype=BF16, D=128, BM=64, BN=64, causal=True)),
    # persistent matmul
    ("persistent_fp16_128x256x64_s3_w8", "persistent", 3, 8,
     dict(**{"in": F16, "out": F16}, BM=128, BN=256, BK=64, shape=(1024, 1024, 512))),
    ("persistent_flat_bf16_128x128x64_s4_w8", "persistent", 4, 8,
     dict(**{"in": BF16, "out": BF16}, BM=128, BN=128, BK=64, flatten=True, shape=(1024, 1024, 512))),
    # gated two-dot
    ("gated_fp16_64x128x64_s3_w4", "gated", 3, 4, dict(**{"in": F16, "out": F16}, BM=64, BN=128, BK=64)),
    ("gated_bf16_128x64x64_s4_w8", "gated", 4, 8, dict(**{"in": BF16, "out": BF16}, BM=128, BN=64, BK=64)),
    # fp8 with per-tensor scales (B K-major, as wgmma wants for 8-bit types)
    ("fp8e4m3_scaled_128x128x128_s3_w8_bT", "fp8", 3, 8,
     dict(**{"in": E4M3, "out": BF16}, BM=128, BN=128, BK=128, b_kmajor=True)),
    ("fp8e5m2_scaled_64x128x64_s4_w4_bT", "fp8", 4, 4,
     dict(**{"in": E5M2, "out": F16}, BM=64, BN=128, BK=64, b_kmajor=True)),
    # batched / grouped
    ("bmm_fp16_b4_64x64x64_s3_w4", "bmm", 3, 4, dict(**{"in": F16, "out": F16}, batch=4, BM=64, BN=64, BK=64)),
    ("bmm_bf16_b3_128x128x32_s4_w4_bT", "bmm", 4, 4,
     dict(**{"in": BF16, "out": BF16}, batch=3, BM=128, BN=128, BK=32, b_kmajor=True)),
    ("grouped_fp16_128x128x32_s3_w4", "grouped", 3, 4,
     dict(BM=128, BN=128, BK=32, sizes=[(256, 256, 256), (512, 256, 128), (128, 384, 512), (384, 128, 256)])),
    # accumulator read / redefined inside the K loop
    ("accread_max_fp16_64x64x64_s3_w4", "accread", 3, 4,
     dict(**{"in": F16, "out": F16}, BM=64, BN=64, BK=64, mode=0)),
    ("accread_max_bf16_128x128x64_s3_w8", "accread", 3, 8,
     dict(**{"in": BF16, "out": BF16}, BM=128, BN=128, BK=64, mode=0)),
    ("accread_partial_fp16_64x128x64_s3_w4", "accread", 3, 4,
     dict(**{"in": F16, "out": F16}, BM=64, BN=128, BK=64, mode=1, every=2)),
    ("accread_decay_fp16_64x64x32_s3_w4", "accread", 3, 4,
     dict(**{"in": F16, "out": F16}, BM=64, BN=64, BK=32, mode=2)),
    ("accread_clamp_bf16_128x128x64_s3_w8", "accread", 3, 8,
     dict(**{"in": BF16, "out": BF16}, BM=128, BN=128, BK=64, mode=3)),
]


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def find_ptxas():
    found = {}
    sys_ptxas = shutil.which("ptxas")
    if sys_ptxas is None and os.path.exists("/usr/local/cuda/bin/ptxas"):
        sys_ptxas = "/usr/local/cuda/bin/ptxas"
    if sys_ptxas:
        found["system"] = sys_ptxas
    try:
        import triton.backends.nvidia as nv
        cand = os.path.join(os.path.dirname(nv.__file__), "bin", "ptxas")
        if os.path.exists(cand):
            found["triton"] = cand
    except Exception:
        pass
    return found


def ptxas_version(path):
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        return (r.stdout + r.stderr).strip().splitlines()[-1]
    except Exception as e:  # noqa: BLE001
        return f"error: {e}"


WGMMA_RE = re.compile(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)\.([\w.]+)\s+([^;]*);")


def analyse_ptx(ptx):
    shapes = {}
    a_reg = 0
    for m in WGMMA_RE.finditer(ptx):
        key = f"{m.group(1)}.{m.group(2)}"
        shapes[key] = shapes.get(key, 0) + 1
        # A from registers: the operand after the accumulator list is a
        # "{...}" register list instead of a 64-bit descriptor.
        ops = m.group(3)
        rest = ops.split("}", 1)[1] if "}" in ops else ""
        if rest.strip().startswith(",") and rest.strip()[1:].strip().startswith("{"):
            a_reg += 1
    entries = re.findall(r"\.entry\s+(\w+)", ptx)
    return {
        "entries": entries,
        "wgmma_mma_async": ptx.count("wgmma.mma_async"),
        "wgmma_a_in_regs": a_reg,
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


def run_config(cfg, out_dir, ptxases, env):
    name, family, stages, warps, p = cfg
    rec = {"name": name, "family": family, "num_stages": stages, "num_warps": warps,
           "params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in p.items()}}
    if torch is not None and not env.fake:
        torch.manual_seed(0)
    kernel, args, kw, grid, check = BUILDERS[family](env, p)
    kw = dict(kw, num_warps=warps, num_stages=stages)
    rec["grid"] = list(grid)

    t0 = time.time()
    compiled = kernel.warmup(*args, grid=grid, **kw)
    rec["compile_s"] = round(time.time() - t0, 2)
    ptx = compiled.asm["ptx"]
    ptx_path = os.path.join(out_dir, f"{name}.ptx")
    with open(ptx_path, "w") as f:
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

    lines = []
    for label, path in ptxases.items():
        cmd = [path, "-arch=sm_90a", "-v", ptx_path, "-o", f"/tmp/{name}.{label}.cubin"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            lines.append(f"### {label}: {' '.join(cmd)}\n### version: {ptxas_version(path)}\n"
                         f"### rc={r.returncode}\n--- stdout ---\n{r.stdout}--- stderr ---\n{r.stderr}")
            rec[f"ptxas_{label}_rc"] = r.returncode
            regs = re.search(r"Used (\d+) registers", r.stdout + r.stderr)
            if regs:
                rec[f"ptxas_{label}_regs"] = int(regs.group(1))
            rec[f"ptxas_{label}_C75"] = re.findall(r"\(C75\d\d\)", r.stdout + r.stderr)
        except Exception as e:  # noqa: BLE001
            lines.append(f"### {label}: {' '.join(cmd)}\n### exception: {e}\n")
            rec[f"ptxas_{label}_rc"] = f"exception: {e}"
    if lines:
        with open(os.path.join(out_dir, f"{name}.ptxas_device.txt"), "w") as f:
            f.write("\n".join(lines))

    if env.fake:
        rec["launched"] = None
        return rec
    try:
        kernel[grid](*args, **kw)
        torch.cuda.synchronize()
        res = check()
        rec["max_abs_err"] = res[0]
        rec["ref_max_abs"] = res[1]
        if len(res) > 2:
            rec.update(res[2])
        rec["launched"] = True
        for key in ("n_regs", "n_spills"):
            try:
                rec[key] = getattr(compiled, key)
            except Exception:
                pass
    except Exception as e:  # noqa: BLE001
        rec["launched"] = False
        rec["launch_error"] = f"{type(e).__name__}: {e}"[:2000]
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="triton2_ptx_out")
    ap.add_argument("--only", default=None, help="substring filter on config names")
    ap.add_argument("--compile-only", action="store_true",
                    help="no GPU / no torch: compile for cuda:90 with fake tensors, launch nothing")
    ap.add_argument("--no-ptxas", action="store_true", help="skip running ptxas -v")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    if args.compile_only:
        install_fake_driver()
        env = FakeEnv()
    else:
        env = RealEnv()

    info = {"python": sys.version.split()[0], "triton": triton.__version__,
            "torch": getattr(torch, "__version__", None),
            "torch_cuda": getattr(getattr(torch, "version", None), "cuda", None),
            "compile_only": bool(args.compile_only)}
    if not env.fake:
        info["device"] = torch.cuda.get_device_name(0)
        info["capability"] = list(torch.cuda.get_device_capability(0))
        info["num_sms"] = torch.cuda.get_device_properties(0).multi_processor_count
    ptxases = {} if args.no_ptxas else find_ptxas()
    info["ptxas"] = {k: {"path": v, "version": ptxas_version(v)} for k, v in ptxases.items()}
    print(json.dumps(info, indent=1), flush=True)

    results = []
    for cfg in CONFIGS:
        if args.only and args.only not in cfg[0]:
            continue
        try:
            rec = run_config(cfg, args.out, ptxases, env)
        except Exception as e:  # noqa: BLE001
            rec = {"name": cfg[0], "error": f"{type(e).__name__}: {e}"[:3000],
                   "traceback": traceback.format_exc()[-3000:]}
        results.append(rec)
        if "error" in rec:
            print(f"FAIL {rec['name']}: {rec['error'][:800]}", flush=True)
        else:
            print(f"OK   {rec['name']}: wgmma={rec['wgmma_mma_async']} (A in regs {rec['wgmma_a_in_regs']}) "
                  f"shapes={rec['wgmma_shapes']} fence={rec['wgmma_fence']} commit={rec['wgmma_commit_group']} "
                  f"wait={rec['wgmma_wait_group']} mma.sync={rec['mma_sync']} shared={rec.get('meta_shared')} "
                  f"compile_s={rec.get('compile_s')} launched={rec.get('launched')} "
                  f"max_abs_err={rec.get('max_abs_err')} (ref max {rec.get('ref_max_abs')}) "
                  f"ptxas={ {k: v for k, v in rec.items() if k.startswith('ptxas_')} } "
                  f"{rec.get('launch_error', '')[:300]}", flush=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"info": info, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
