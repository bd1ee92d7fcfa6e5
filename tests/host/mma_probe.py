#!/usr/bin/env python3
"""Probe the tensor core's arithmetic: wgmma and mma.sync on chosen inputs.

Every probe is one matrix product D = A x B (+ C) by one instruction, run
on many independent blocks. The inputs are built here (numpy, seeded: the
same bytes every run of one numpy version), the kernels are PTX written
here, and the GPU's D is recorded next to its inputs, so that a model of
the arithmetic can be checked bit for bit without the GPU
(`crates/ori-host/tests/mma_model.rs`, `tests/host/mma_fit.py`).

    python3 tests/host/mma_probe.py ptx DIR          # write the kernels (check them with ptxas)
    python3 tests/host/mma_probe.py record OUTDIR    # on an sm_90a GPU: run every probe

`record` writes OUTDIR/mma_probes.bin (the committed recording, kept
small), OUTDIR/mma_random_big.bin (large random batches, for statistics
only), OUTDIR/special_fn.bin (the special functions: every 16-bit input and
every 256th point of the f32 sweep; the log has the statistics of the whole
sweep) and the log.

Recording format (little-endian): b"ORIMMA01", then records, each
    u32 name length, name (ASCII: "KIND SHAPE DTYPE ATYPE BTYPE CTYPE DATASET"),
    u32 M, N, K, blocks, scale_d, neg_a, neg_b,
    A  blocks x M x K elements (row-major, raw bits, the type's width),
    B  blocks x N x K elements (each column K-contiguous),
    C  blocks x M x N elements of CTYPE, D blocks x M x N of DTYPE.
tf32 elements are 4 bytes (the f32 bits the instruction reads).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
        "f32": 32, "s32": 32}

# (dtype, atype, btype): the dense wgmma forms.
WGMMA_FORMS = [
    ("f32", "f16", "f16"), ("f32", "bf16", "bf16"), ("f32", "tf32", "tf32"),
    ("f32", "e4m3", "e4m3"), ("f32", "e4m3", "e5m2"), ("f32", "e5m2", "e4m3"),
    ("f32", "e5m2", "e5m2"),
    ("f16", "f16", "f16"), ("f16", "e4m3", "e4m3"), ("f16", "e4m3", "e5m2"),
    ("f16", "e5m2", "e4m3"), ("f16", "e5m2", "e5m2"),
    ("s32", "s8", "s8"), ("s32", "s8", "u8"), ("s32", "u8", "s8"), ("s32", "u8", "u8"),
]
# (dtype, ab type, ctype): mma.sync.aligned.m16n8k16.row.col.
MMA_FORMS = [("f32", "bf16", "f32"), ("f32", "f16", "f32"), ("f16", "f16", "f16")]


def kdim(atype):
    return 256 // BITS[atype] if atype != "tf32" else 8


# ------------------------------------------------------------------ PTX
def wgmma_ptx(dtype, atype, btype, n, neg_a, neg_b):
    """One wgmma m64nNk* on A (64 x K) and B (N x K) copied from global
    into shared memory (K-major, no swizzle: LBO 128, SBO 256 bytes), C
    loaded from global into the fragment registers, D stored back."""
    k = kdim(atype)
    f32acc = dtype == "f32"
    nregs = n // 2 if dtype in ("f32", "s32") else n // 4
    eb = 4 if dtype != "f16" else 2
    L = []
    w = L.append
    w(".version 8.4\n.target sm_90a\n.address_size 64\n")
    w(".shared .align 1024 .b8 sA[2048];\n.shared .align 1024 .b8 sB[%d];\n" % (32 * n))
    w(".visible .entry k(.param .u64 pA, .param .u64 pB, .param .u64 pC, .param .u64 pD, .param .u32 pS)\n{")
    w(".reg .b32 %r<64>;\n.reg .b64 %rd<64>;\n.reg .pred %p<8>;")
    w(".reg .%s %%d<%d>;" % ("f32" if f32acc else "b32", nregs))
    w("ld.param.u64 %rd1, [pA];\nld.param.u64 %rd2, [pB];\nld.param.u64 %rd3, [pC];\nld.param.u64 %rd4, [pD];")
    w("ld.param.u32 %r1, [pS];\nsetp.ne.u32 %p1, %r1, 0;")
    w("cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;")
    w("cvta.to.global.u64 %rd3, %rd3;\ncvta.to.global.u64 %rd4, %rd4;")
    w("mov.u32 %r2, %tid.x;\nmov.u32 %r3, %ctaid.x;")
    # A: 64 rows x 32 bytes, one 16-byte chunk per thread.
    w("mul.wide.u32 %rd5, %r3, 2048;\nadd.u64 %rd5, %rd1, %rd5;")
    w("mul.wide.u32 %rd6, %r2, 16;\nadd.u64 %rd6, %rd5, %rd6;")
    w("ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd6];")
    # smem offset: row = tid/2, half = tid%2: (row%8)*16 + (row/8)*256 + half*128
    w("shr.u32 %r4, %r2, 1;\nand.b32 %r5, %r2, 1;\nand.b32 %r6, %r4, 7;\nshr.u32 %r7, %r4, 3;")
    w("mul.lo.u32 %r6, %r6, 16;\nmul.lo.u32 %r7, %r7, 256;\nmul.lo.u32 %r8, %r5, 128;")
    w("add.u32 %r6, %r6, %r7;\nadd.u32 %r6, %r6, %r8;\nmov.u32 %r9, sA;\nadd.u32 %r9, %r9, %r6;")
    w("st.shared.v4.u32 [%r9], {%r10, %r11, %r12, %r13};")
    # B: n rows x 32 bytes = 2n chunks.
    w("mul.wide.u32 %%rd7, %%r3, %d;\nadd.u64 %%rd7, %%rd2, %%rd7;" % (32 * n))
    for it in range((2 * n + 127) // 128):
        w("add.u32 %%r20, %%r2, %d;\nsetp.lt.u32 %%p2, %%r20, %d;" % (128 * it, 2 * n))
        w("mul.wide.u32 %rd8, %r20, 16;\nadd.u64 %rd8, %rd7, %rd8;")
        w("@%p2 ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd8];")
        w("shr.u32 %r4, %r20, 1;\nand.b32 %r5, %r20, 1;\nand.b32 %r6, %r4, 7;\nshr.u32 %r7, %r4, 3;")
        w("mul.lo.u32 %r6, %r6, 16;\nmul.lo.u32 %r7, %r7, 256;\nmul.lo.u32 %r8, %r5, 128;")
        w("add.u32 %r6, %r6, %r7;\nadd.u32 %r6, %r6, %r8;\nmov.u32 %r9, sB;\nadd.u32 %r9, %r9, %r6;")
        w("@%p2 st.shared.v4.u32 [%r9], {%r10, %r11, %r12, %r13};")
    # C fragment: thread base = ((16w + l/4) * n + 2*(l%4)) elements.
    w("shr.u32 %r30, %r2, 5;\nand.b32 %r31, %r2, 31;\nshr.u32 %r32, %r31, 2;\nand.b32 %r33, %r31, 3;")
    w("mul.lo.u32 %r34, %r30, 16;\nadd.u32 %r34, %r34, %r32;")
    w("mul.lo.u32 %%r34, %%r34, %d;\nshl.b32 %%r35, %%r33, 1;\nadd.u32 %%r34, %%r34, %%r35;" % n)
    w("mul.wide.u32 %%rd9, %%r3, %d;\nmul.wide.u32 %%rd10, %%r34, %d;\nadd.u64 %%rd9, %%rd9, %%rd10;" % (64 * n * eb, eb))
    w("add.u64 %rd11, %rd3, %rd9;\nadd.u64 %rd12, %rd4, %rd9;")

    def coff(i):
        # f32 numbering element i: row + 8*((i/2)%2), col + i%2 + 8*(i/4)
        return (8 * ((i // 2) % 2) * n + i % 2 + 8 * (i // 4)) * eb

    offs = [coff(i) for i in range(nregs)] if eb == 4 else [coff(2 * i) for i in range(nregs)]
    for i, o in enumerate(offs):
        w("ld.global.%s %%d%d, [%%rd11+%d];" % ("f32" if f32acc else "b32", i, o))
    w("fence.proxy.async.shared::cta;\nbar.sync 0;")
    # descriptors: start>>4 | (LBO>>4)<<16 | (SBO>>4)<<32
    w("mov.u32 %r40, sA;\nshr.u32 %r40, %r40, 4;\nand.b32 %r40, %r40, 16383;\ncvt.u64.u32 %rd20, %r40;")
    w("or.b64 %rd20, %rd20, 68719476736;\nor.b64 %rd20, %rd20, 524288;")
    w("mov.u32 %r41, sB;\nshr.u32 %r41, %r41, 4;\nand.b32 %r41, %r41, 16383;\ncvt.u64.u32 %rd21, %r41;")
    w("or.b64 %rd21, %rd21, 68719476736;\nor.b64 %rd21, %rd21, 524288;")
    w("wgmma.fence.sync.aligned;")
    regs = "{" + ", ".join("%%d%d" % i for i in range(nregs)) + "}"
    if dtype == "s32":
        tail = "%p1"
    elif atype in ("f16", "bf16"):
        tail = "%%p1, %d, %d, 0, 0" % (-1 if neg_a else 1, -1 if neg_b else 1)
    else:
        tail = "%%p1, %d, %d" % (-1 if neg_a else 1, -1 if neg_b else 1)
    w("wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s %s, %%rd20, %%rd21, %s;" % (
        n, k, dtype, atype, btype, regs, tail))
    w("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;")
    for i, o in enumerate(offs):
        w("st.global.%s [%%rd12+%d], %%d%d;" % ("f32" if f32acc else "b32", o, i))
    w("ret;\n}")
    return "\n".join(L) + "\n"


def mma_ptx(dtype, ab, ctype):
    """mma.sync m16n8k16 row.col: one warp per block. A 16x16 row-major,
    B 8 columns of 16 (K-contiguous), C and D 16x8 row-major."""
    L = []
    w = L.append
    w(".version 8.4\n.target sm_90a\n.address_size 64\n")
    w(".visible .entry k(.param .u64 pA, .param .u64 pB, .param .u64 pC, .param .u64 pD, .param .u32 pS)\n{")
    w(".reg .b32 %r<64>;\n.reg .b64 %rd<64>;\n.reg .f32 %f<8>;\n.reg .b32 %a<4>;\n.reg .b32 %b<2>;\n.reg .b32 %h<4>;")
    w("ld.param.u64 %rd1, [pA];\nld.param.u64 %rd2, [pB];\nld.param.u64 %rd3, [pC];\nld.param.u64 %rd4, [pD];")
    w("cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;")
    w("cvta.to.global.u64 %rd3, %rd3;\ncvta.to.global.u64 %rd4, %rd4;")
    w("mov.u32 %r2, %tid.x;\nmov.u32 %r3, %ctaid.x;")
    w("shr.u32 %r4, %r2, 2;\nand.b32 %r5, %r2, 3;\nshl.b32 %r5, %r5, 1;")  # group, pair
    # A reg r: row group + 8*(r%2), cols pair + 8*(r/2): byte (row*16+col)*2
    w("mul.wide.u32 %rd5, %r3, 512;\nadd.u64 %rd5, %rd1, %rd5;")
    w("mul.lo.u32 %r6, %r4, 16;\nadd.u32 %r6, %r6, %r5;\nmul.wide.u32 %rd6, %r6, 2;\nadd.u64 %rd6, %rd5, %rd6;")
    for r in range(4):
        w("ld.global.b32 %%a%d, [%%rd6+%d];" % (r, (8 * (r % 2) * 16 + 8 * (r // 2)) * 2))
    # B reg r: k = pair + 8r, column group: byte (group*16 + k)*2
    w("mul.wide.u32 %rd7, %r3, 256;\nadd.u64 %rd7, %rd2, %rd7;")
    w("mul.wide.u32 %rd8, %r6, 2;\nadd.u64 %rd8, %rd7, %rd8;")
    for r in range(2):
        w("ld.global.b32 %%b%d, [%%rd8+%d];" % (r, 8 * r * 2))
    # C/D element i: row group + 8(i/2), col pair + i%2: element (row*8+col)
    w("mul.lo.u32 %r7, %r4, 8;\nadd.u32 %r7, %r7, %r5;")
    for (ty, base, reg) in ((ctype, "%rd3", "%rd10"), (dtype, "%rd4", "%rd11")):
        eb = 4 if ty == "f32" else 2
        w("mul.wide.u32 %%rd9, %%r3, %d;\nadd.u64 %s, %s, %%rd9;" % (128 * eb, reg, base))
        w("mul.wide.u32 %%rd9, %%r7, %d;\nadd.u64 %s, %s, %%rd9;" % (eb, reg, reg))
    if ctype == "f32":
        for i in range(4):
            w("ld.global.f32 %%f%d, [%%rd10+%d];" % (i, (8 * (i // 2) * 8 + i % 2) * 4))
        cregs = "{%f0, %f1, %f2, %f3}"
    else:
        for r in range(2):
            w("ld.global.b32 %%h%d, [%%rd10+%d];" % (r, 8 * r * 8 * 2))
        cregs = "{%h0, %h1}"
    dregs = "{%f4, %f5, %f6, %f7}" if dtype == "f32" else "{%h2, %h3}"
    w("mma.sync.aligned.m16n8k16.row.col.%s.%s.%s.%s %s, {%%a0, %%a1, %%a2, %%a3}, {%%b0, %%b1}, %s;" % (
        dtype, ab, ab, ctype, dregs, cregs))
    if dtype == "f32":
        for i in range(4):
            w("st.global.f32 [%%rd11+%d], %%f%d;" % ((8 * (i // 2) * 8 + i % 2) * 4, 4 + i))
    else:
        for r in range(2):
            w("st.global.b32 [%%rd11+%d], %%h%d;" % (8 * r * 8 * 2, 2 + r))
    w("ret;\n}")
    return "\n".join(L) + "\n"


SPECIAL = ["ex2.approx.f32", "ex2.approx.ftz.f32", "lg2.approx.f32", "rcp.approx.f32",
           "rsqrt.approx.f32", "sin.approx.f32", "cos.approx.f32", "tanh.approx.f32",
           "ex2.approx.f16", "ex2.approx.ftz.bf16", "tanh.approx.f16", "tanh.approx.bf16"]


def special_ptx(op):
    """y[i] = op(x[i]) for i < n, one element per thread."""
    ty = op.rsplit(".", 1)[1]
    wide = ty == "f32"
    eb = 4 if wide else 2
    rt = ".f32" if wide else ".b16"
    return "\n".join([
        ".version 8.4\n.target sm_90a\n.address_size 64\n",
        ".visible .entry k(.param .u64 pX, .param .u64 pY, .param .u32 pN)\n{",
        ".reg .b32 %%r<8>;\n.reg .b64 %%rd<8>;\n.reg .pred %%p<2>;\n.reg %s %%x<2>;" % rt,
        "ld.param.u64 %rd1, [pX];\nld.param.u64 %rd2, [pY];\nld.param.u32 %r1, [pN];",
        "cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;",
        "mov.u32 %r2, %tid.x;\nmov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %ntid.x;\nmad.lo.u32 %r2, %r3, %r4, %r2;",
        "setp.ge.u32 %p1, %r2, %r1;\n@%p1 ret;",
        "mul.wide.u32 %%rd3, %%r2, %d;\nadd.u64 %%rd4, %%rd1, %%rd3;\nadd.u64 %%rd5, %%rd2, %%rd3;" % eb,
        "ld.global%s %%x0, [%%rd4];" % rt,
        "%s %%x1, %%x0;" % op,
        "st.global%s [%%rd5], %%x1;" % rt,
        "ret;\n}\n"])


# ---------------------------------------------------------------- inputs
def f32_to_bf16(x):
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def encode(ty, x):
    """Values (float64, already in range) to the type's raw bits, RNE."""
    import ml_dtypes
    x = np.asarray(x, np.float64)
    if ty == "f16":
        return x.astype(np.float16).view(np.uint16)
    if ty == "bf16":
        return f32_to_bf16(x.astype(np.float32))
    if ty in ("tf32", "f32"):
        b = x.astype(np.float32).view(np.uint32)
        if ty == "tf32":
            b = ((b.astype(np.uint64) + 0xFFF + ((b >> 13) & 1)) & 0xFFFFE000).astype(np.uint32)
        return b
    if ty == "e4m3":
        return x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    if ty == "e5m2":
        return x.astype(ml_dtypes.float8_e5m2).view(np.uint8)
    raise ValueError(ty)


def dtype_of(ty):
    return {8: np.uint8, 16: np.uint16, 32: np.uint32}[BITS[ty]]


def scale_of(ty):
    """A spread of normal inputs that keeps every type in range."""
    return {"e4m3": 4.0, "e5m2": 16.0}.get(ty, 1.0)


def rand_bits(rng, ty, shape, lo, hi):
    """Random sign, biased exponent field in [lo, hi], random significand."""
    bits = BITS[ty]
    man = {"f16": 10, "bf16": 7, "tf32": 10, "e4m3": 3, "e5m2": 2, "f32": 23}[ty]
    ebits = bits - 1 - man if ty != "tf32" else 8
    sign = rng.integers(0, 2, shape).astype(np.uint64)
    e = rng.integers(lo, hi + 1, shape).astype(np.uint64)
    m = rng.integers(0, 1 << man, shape).astype(np.uint64)
    if ty == "tf32":
        v = (sign << 31) | (e << 23) | (m << 13)
    else:
        v = (sign << (bits - 1)) | (e << man) | m
    v = v.astype(dtype_of(ty))
    if ty == "e4m3":  # 0x7f / 0xff are NaN
        v = np.where((v & 0x7F) == 0x7F, v ^ 1, v)
    del ebits
    return v


def wide_range(ty):
    bias = {"f16": 15, "bf16": 127, "tf32": 127, "e4m3": 7, "e5m2": 15, "f32": 127}[ty]
    span = {"f16": 6, "bf16": 10, "tf32": 10, "e4m3": 7, "e5m2": 10, "f32": 24}[ty]
    return max(0, bias - span), min(bias + span, (30 if ty == "e5m2" else 10 ** 9))


def special_values(rng, ty, shape):
    """Zeros of both signs, infinities, NaNs with payloads, subnormals."""
    bits = BITS[ty]
    out = rng.integers(0, 1 << min(bits, 32), shape, dtype=np.uint64)
    sign = (rng.integers(0, 2, shape).astype(np.uint64)) << (bits - 1)
    kind = rng.integers(0, 4, shape)
    man = {"f16": 10, "bf16": 7, "tf32": 23, "f32": 23, "e4m3": 3, "e5m2": 2}[ty]
    expmask = ((1 << (bits - 1)) - 1) ^ ((1 << man) - 1)
    payload = rng.integers(0, 1 << man, shape).astype(np.uint64)
    zero = sign
    sub = sign | np.maximum(payload, 1)
    inf = sign | expmask
    nan = sign | expmask | np.maximum(payload, 1)
    if ty == "e4m3":
        inf = sign | 0x7E  # no infinity: the largest finite value
        nan = sign | 0x7F
    out = np.choose(kind, [zero, sub, inf, nan])
    if ty == "tf32":
        out = out & 0xFFFFFFFF
    return out.astype(dtype_of(ty))


def c_values(rng, ctype, shape, how):
    if ctype == "s32":
        return rng.integers(-(1 << 31), 1 << 31, shape, dtype=np.int64).astype(np.uint32)
    if how == "normal":
        v = rng.standard_normal(shape) * np.exp2(rng.integers(-4, 5, shape))
        return encode(ctype, v)
    lo, hi = wide_range(ctype)
    return rand_bits(rng, ctype, shape, lo, hi)


def int_values(rng, ty, shape):
    lo, hi = (-128, 128) if ty == "s8" else (0, 256)
    return rng.integers(lo, hi, shape).astype(np.int64).astype(np.uint8)


def _random(rng, form, mnk, blocks, how):
    dtype, atype, btype, ctype = form
    m, n, k = mnk
    sa, sb = (blocks, m, k), (blocks, n, k)
    if atype in ("s8", "u8"):
        return int_values(rng, atype, sa), int_values(rng, btype, sb), c_values(rng, ctype, (blocks, m, n), "normal")
    if how in ("normal", "special", "zero_c", "neg"):
        a = encode(atype, rng.standard_normal(sa) * scale_of(atype))
        b = encode(btype, rng.standard_normal(sb) * scale_of(btype))
        c = c_values(rng, ctype, (blocks, m, n), "normal")
    elif how == "raw":  # tf32 read from f32 with all 23 bits set
        a = encode("f32", rng.standard_normal(sa)).astype(np.uint32)
        b = encode("f32", rng.standard_normal(sb)).astype(np.uint32)
        c = c_values(rng, ctype, (blocks, m, n), "normal")
    elif how == "wide":
        a = rand_bits(rng, atype, sa, *wide_range(atype))
        b = rand_bits(rng, btype, sb, *wide_range(btype))
        c = c_values(rng, ctype, (blocks, m, n), "wide")
    elif how == "zeros":  # exact cancellations: signs of zero
        va = rng.integers(-1, 2, sa) * np.exp2(rng.integers(-2, 3, sa))
        vb = rng.integers(-1, 2, sb) * np.exp2(rng.integers(-2, 3, sb))
        a, b = encode(atype, va), encode(btype, vb)
        c = (rng.integers(0, 2, (blocks, m, n)).astype(np.uint32) << (BITS[ctype] - 1))
        c = c.astype(dtype_of(ctype))
    else:
        raise ValueError(how)
    if how == "special":
        for arr, ty in ((a, atype), (b, btype), (c, ctype)):
            pick = rng.random(arr.shape) < 0.02
            arr[pick] = special_values(rng, ty, arr.shape)[pick]
    return a, b, c


def probe_groups(rng, form, blocks):
    """Rows +big at p, -big at q, tiny at r (a random triple): the tiny one
    survives where r falls outside the group that cancels p and q. The
    columns scale B so that the tiny product is far below the big ones."""
    dtype, atype, btype, ctype = form
    k = kdim(atype)
    m, n = 64, 8
    big_a = {"f16": 2.0 ** 14, "bf16": 2.0 ** 20, "tf32": 2.0 ** 20, "e4m3": 2.0 ** 8, "e5m2": 2.0 ** 15}[atype]
    tiny_a = {"f16": 2.0 ** -14, "bf16": 2.0 ** -40, "tf32": 2.0 ** -40, "e4m3": 2.0 ** -6, "e5m2": 2.0 ** -14}[atype]
    bval = {"f16": 2.0 ** -14, "bf16": 2.0 ** -20, "tf32": 2.0 ** -20, "e4m3": 2.0 ** -6, "e5m2": 2.0 ** -14}[btype]
    va = np.zeros((blocks, m, k))
    for blk in range(blocks):
        for row in range(m):
            p, q, r = rng.choice(k, 3, replace=False)
            va[blk, row, p] = big_a
            va[blk, row, q] = -big_a
            va[blk, row, r] = tiny_a * (1 + rng.integers(0, 4) / 4)
    # column j: every b = bval * (1 + j/8)  (exact in every type)
    vb = np.zeros((blocks, n, k))
    for j in range(n):
        vb[:, j, :] = bval * (1 + (j % 4) / 4) * (-1 if j >= 4 else 1)
    c = np.zeros((blocks, m, n))
    return encode(atype, va), encode(btype, vb), encode(ctype, c)


def probe_align(rng, form, blocks):
    """Two products, at random positions, a random exponent gap apart,
    random significands and signs; C is 0 in columns 0-1 and a random
    value of random exponent elsewhere (B is +-1)."""
    dtype, atype, btype, ctype = form
    k = kdim(atype)
    m, n = 64, 8
    lo, hi = wide_range(atype)
    bias = {"f16": 15, "bf16": 127, "tf32": 127, "e4m3": 7, "e5m2": 15}[atype]
    a = np.zeros((blocks, m, k), dtype_of(atype))
    for blk in range(blocks):
        for row in range(m):
            p, q = rng.choice(k, 2, replace=False)
            e1 = hi
            e2 = rng.integers(max(0, lo - 3), hi + 1)
            a[blk, row, p] = rand_bits(rng, atype, (), e1, e1)
            a[blk, row, q] = rand_bits(rng, atype, (), e2, e2)
            if rng.random() < 0.5:
                a[blk, row, rng.integers(0, k)] = rand_bits(rng, atype, (), e2, e2)
    del bias
    vb = np.ones((blocks, n, k))
    vb[:, 1::2, :] = -1
    b = encode(btype, vb)
    c = c_values(rng, ctype, (blocks, m, n), "wide")
    c[:, :, :2] = 0
    return a, b, c


def wgmma_cases(rng, big):
    """(name, form, (m, n, k), blocks, flags, a, b, c) of every wgmma probe:
    compact (`big` false: the committed recording) or large random batches."""
    for dtype, atype, btype in WGMMA_FORMS:
        form = (dtype, atype, btype, dtype)
        k = kdim(atype)
        integer = atype in ("s8", "u8")
        if big:
            sets = [("normal", 64, 10, (1, 0, 0))] + ([] if integer else [("wide", 64, 10, (1, 0, 0))])
        elif integer:
            sets = [("normal", 16, 1, (1, 0, 0)), ("zero_c", 8, 1, (0, 0, 0))]
        else:
            sets = [("normal", 16, 2, (1, 0, 0)), ("wide", 16, 2, (1, 0, 0)), ("special", 8, 1, (1, 0, 0)),
                    ("zeros", 8, 1, (1, 0, 0)), ("zero_c", 8, 1, (0, 0, 0)),
                    ("neg", 8, 1, (1, 1, 0)), ("neg", 8, 1, (1, 0, 1))]
            if atype == "tf32":
                sets += [("raw", 16, 1, (1, 0, 0))]
        # One form at each end of N.
        if not big and (dtype, atype) in (("f32", "bf16"), ("f16", "e4m3")):
            sets += [("normal", 256, 1, (1, 0, 0))]
        for how, n, blocks, flags in sets:
            a, b, c = _random(rng, form, (64, n, k), blocks, how)
            yield ("wgmma m64n%dk%d %s %s %s %s %s" % (n, k, dtype, atype, btype, dtype, how),
                   form, (64, n, k), blocks, flags, a, b, c)
        if not big and not integer:
            for how, fn in (("groups", probe_groups), ("align", probe_align)):
                blocks = 2
                a, b, c = fn(rng, form, blocks)
                yield ("wgmma m64n8k%d %s %s %s %s %s" % (k, dtype, atype, btype, dtype, how),
                       form, (64, 8, k), blocks, (1, 0, 0), a, b, c)


def mma_cases(rng, big):
    for dtype, ab, ctype in MMA_FORMS:
        form = (dtype, ab, ab, ctype)
        for how in (["normal", "wide", "special", "zeros"] if not big else ["normal", "wide"]):
            blocks = 8 if not big else 384
            if how in ("special", "zeros"):
                blocks = 4
            a, b, c = _random(rng, form, (16, 8, 16), blocks, how)
            yield ("mma m16n8k16 %s %s %s %s %s" % (dtype, ab, ab, ctype, how),
                   form, (16, 8, 16), blocks, (1, 0, 0), a, b, c)


def decode(ty, raw):
    """Raw bits to float64 values."""
    import ml_dtypes
    raw = np.asarray(raw)
    if ty == "f16":
        return raw.view(np.float16).astype(np.float64)
    if ty == "bf16":
        return (raw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if ty == "tf32":
        return (raw & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if ty == "f32":
        return raw.view(np.float32).astype(np.float64)
    if ty == "e4m3":
        return raw.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    if ty == "e5m2":
        return raw.view(ml_dtypes.float8_e5m2).astype(np.float64)
    if ty == "s8":
        return raw.view(np.int8).astype(np.float64)
    if ty == "u8":
        return raw.astype(np.float64)
    if ty == "s32":
        return raw.view(np.int32).astype(np.float64)
    raise ValueError(ty)


def exact_sum(form, flags, a, b, c):
    """D as products exact, summed exactly (float64 fsum order), + C."""
    dtype, atype, btype, ctype = form
    va, vb, vc = decode(atype, a), decode(btype, b), decode(ctype, c)
    if flags[1]:
        va = -va
    if flags[2]:
        vb = -vb
    with np.errstate(all="ignore"):
        d = np.einsum("bmk,bnk->bmn", va, vb)
        return d + (vc if flags[0] else 0)


def sanity(form, flags, a, b, c, d):
    """How far the GPU is from the exact sum (a wrong layout shows as a
    large relative error)."""
    with np.errstate(all="ignore"):
        ref = exact_sum(form, flags, a, b, c)
        got = decode(form[0], d)
        fin = np.isfinite(ref) & np.isfinite(got)
        rel = np.abs(got - ref)[fin] / np.maximum(np.abs(ref[fin]), 1e-30)
        same = np.mean(got[fin] == ref[fin].astype(np.float32 if form[0] != "f16" else np.float16))
    return "max rel err %.3g, median %.3g, identical to exact-sum model %.4f" % (
        rel.max() if rel.size else 0, np.median(rel) if rel.size else 0, same)


# ---------------------------------------------------------------- running
def compile_ptx(ptx, tmp, name):
    path = os.path.join(tmp, name + ".ptx")
    with open(path, "w") as f:
        f.write(ptx)
    cubin = os.path.join(tmp, name + ".cubin")
    p = subprocess.run([os.environ.get("PTXAS", shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"), "-arch=sm_90a", path, "-o", cubin],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("ptxas failed on %s: %s" % (name, p.stderr))
    return cubin


def record_file(path, cases, run):
    with open(path, "wb") as f:
        f.write(b"ORIMMA01")
        for name, form, (m, n, k), blocks, flags, a, b, c in cases:
            d = run(name, form, (m, n, k), blocks, flags, a, b, c)
            nb = name.encode()
            f.write(struct.pack("<I", len(nb)) + nb)
            f.write(struct.pack("<7I", m, n, k, blocks, *flags))
            for arr in (a, b, c, d):
                f.write(np.ascontiguousarray(arr).tobytes())
            print("ok %-60s blocks=%d" % (name, blocks), flush=True)


def record(outdir):
    import cupy as cp
    tmp = tempfile.mkdtemp(prefix="mma_probe_")
    mods = {}

    def kernel(key, ptx):
        if key not in mods:
            mods[key] = cp.RawModule(path=compile_ptx(ptx, tmp, "k%d" % len(mods))).get_function("k")
        return mods[key]

    def run(name, form, mnk, blocks, flags, a, b, c):
        dtype, atype, btype, ctype = form
        m, n, k = mnk
        if name.startswith("wgmma"):
            fn = kernel(("w", dtype, atype, btype, n, flags[1], flags[2]),
                        wgmma_ptx(dtype, atype, btype, n, flags[1], flags[2]))
            threads = 128
        else:
            fn = kernel(("m", dtype, atype, ctype), mma_ptx(dtype, atype, ctype))
            threads = 32
        da, db, dc = (cp.asarray(np.ascontiguousarray(x)) for x in (a, b, c))
        dd = cp.zeros((blocks, m, n), dtype=dtype_of(dtype))
        outs = []
        for _ in range(2):
            dd.fill(0x5A)
            fn((blocks,), (threads,), (da, db, dc, dd, np.uint32(flags[0])))
            cp.cuda.Device().synchronize()
            outs.append(cp.asnumpy(dd))
        if not np.array_equal(outs[0], outs[1]):
            sys.exit("%s: two runs differ" % name)
        print("   exact-sum check: %s" % sanity(form, flags, a, b, c, outs[0]), flush=True)
        return outs[0]

    props = cp.cuda.runtime.getDeviceProperties(0)
    print("GPU:", props["name"].decode() if isinstance(props["name"], bytes) else props["name"], flush=True)
    print(subprocess.run([os.environ.get("PTXAS", shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"), "--version"], capture_output=True,
                         text=True).stdout.strip().splitlines()[-1], flush=True)
    rng = np.random.default_rng(20261128)
    record_file(os.path.join(outdir, "mma_probes.bin"),
                list(wgmma_cases(rng, False)) + list(mma_cases(rng, False)), run)
    rng = np.random.default_rng(42)
    record_file(os.path.join(outdir, "mma_random_big.bin"),
                list(wgmma_cases(rng, True)) + list(mma_cases(rng, True)), run)
    record_special(outdir, kernel, cp)


def special_inputs(op):
    ty = op.rsplit(".", 1)[1]
    if ty != "f32":
        return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    # every 2^7-th f32 bit pattern, plus a dense sweep of [0.5, 2) and of the
    # range each function is documented on, with a random low part.
    rng = np.random.default_rng(7)
    every = (np.arange(0, 1 << 25, dtype=np.uint64) << 7).astype(np.uint32)
    every |= rng.integers(0, 128, every.shape).astype(np.uint32)
    return every


def special_reference(op, x):
    """The exact value (float64) of `op` at the inputs (float64)."""
    name = op.split(".")[0]
    with np.errstate(all="ignore"):
        return {"ex2": np.exp2, "lg2": np.log2, "rcp": lambda v: 1 / v,
                "rsqrt": lambda v: 1 / np.sqrt(v), "sin": np.sin, "cos": np.cos,
                "tanh": np.tanh}[name](x)


def special_stats(op, x, y):
    """The largest error of the GPU's outputs in ulp of the output type
    (finite exact values only), by input magnitude band."""
    ty = op.rsplit(".", 1)[1]
    if ty == "f32":
        xv = x.view(np.float32).astype(np.float64)
        yv = y.view(np.float32).astype(np.float64)
        mant, emin = 23, -126
    else:
        import ml_dtypes
        t = np.float16 if ty == "f16" else ml_dtypes.bfloat16
        xv = x.view(t).astype(np.float64)
        yv = y.view(t).astype(np.float64)
        mant, emin = (10, -14) if ty == "f16" else (7, -126)
    ref = special_reference(op, xv)
    ok = np.isfinite(ref) & np.isfinite(xv) & (np.abs(ref) < 3e38)
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.abs(ref)))
        e = np.maximum(np.where(np.isfinite(e), e, emin), emin)
        ulp = np.exp2(e - mant)
        err = np.abs(yv - ref) / ulp
    lines = [op]
    ax = np.abs(xv)
    for lo, hi in ((0, 2.0 ** -126), (2.0 ** -126, 0.5), (0.5, 2.0), (2.0, np.pi), (np.pi, 100.0),
                   (100.0, np.inf)):
        sel = ok & (ax >= lo) & (ax < hi) & np.isfinite(err)
        if sel.any():
            i = np.argmax(np.where(sel, err, -1))
            lines.append("  |x| in [%g, %g): %d inputs, max err %.3f ulp (abs %.3g) at x=%r y=%r" % (
                lo, hi, sel.sum(), err[i], abs(yv[i] - ref[i]), xv[i], yv[i]))
    nan_in = ~np.isfinite(xv)
    lines.append("  non-finite inputs: %d, outputs for +inf/-inf/nan: %s" % (
        nan_in.sum(), [hex(int(v)) for v in y[nan_in][:4]]))
    return "\n".join(lines)


def record_special(outdir, kernel, cp):
    with open(os.path.join(outdir, "special_fn.bin"), "wb") as f:
        f.write(b"ORISFN01")
        for op in SPECIAL:
            x = special_inputs(op)
            fn = kernel(("s", op), special_ptx(op))
            dx = cp.asarray(x)
            dy = cp.zeros_like(dx)
            nthreads = 256
            fn(((x.size + nthreads - 1) // nthreads,), (nthreads,), (dx, dy, np.uint32(x.size)))
            cp.cuda.Device().synchronize()
            y = cp.asnumpy(dy)
            print(special_stats(op, x, y), flush=True)
            # Kept: every 256th input of the f32 sweep, all of a 16-bit form.
            if x.dtype == np.uint32:
                keep = np.arange(0, x.size, 256)
                x, y = x[keep], y[keep]
            nb = op.encode()
            f.write(struct.pack("<I", len(nb)) + nb + struct.pack("<I", x.size))
            f.write(x.tobytes() + y.tobytes())
            print("ok %s %d" % (op, x.size), flush=True)


def dump_ptx(outdir):
    os.makedirs(outdir, exist_ok=True)
    for dtype, atype, btype in WGMMA_FORMS:
        for n in (8, 16, 32, 64, 256):
            with open(os.path.join(outdir, "w_%s_%s_%s_%d.ptx" % (dtype, atype, btype, n)), "w") as f:
                f.write(wgmma_ptx(dtype, atype, btype, n, True, False))
    for dtype, ab, ctype in MMA_FORMS:
        with open(os.path.join(outdir, "m_%s_%s_%s.ptx" % (dtype, ab, ctype)), "w") as f:
            f.write(mma_ptx(dtype, ab, ctype))
    for op in SPECIAL:
        with open(os.path.join(outdir, "s_%s.ptx" % op.replace(".", "_")), "w") as f:
            f.write(special_ptx(op))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("ptx", "record"):
        sys.exit(__doc__)
    if sys.argv[1] == "ptx":
        dump_ptx(sys.argv[2])
    else:
        os.makedirs(sys.argv[2], exist_ok=True)
        record(sys.argv[2])
