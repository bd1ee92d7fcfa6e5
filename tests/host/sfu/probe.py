#!/usr/bin/env python3
"""Probe the GPU's special-function unit (MUFU) through the PTX forms that
ptxas 13.0.88 lowers to it, on dense sets of inputs.

Each PTX kernel applies one instruction to one input per thread
(`y[i] = op(x[i])`, or `op(x[i], z[i])` for the divisions). The inputs are
sets of f32 bit patterns, all built here without randomness from a library:

  binade S E  all 2^23 patterns of sign S and biased exponent E, in order;
  range LO N  N consecutive patterns from LO;
  sweep K     every 2^K-th pattern of the 2^32, with its low K bits from
              splitmix64 of its index (seed 0x5F0), in pattern order;
  pairs N     N (a, b) pairs for the divisions: the patterns of splitmix64
              of 2i and 2i+1, the exponents kept within 2^-30..2^30 of 1.

    python3 tests/host/sfu/probe.py ptx DIR       # write the kernels (compile with ptxas)
    python3 tests/host/sfu/probe.py record OUTDIR [CUBINDIR]   # on an sm_90a GPU

`record` writes OUTDIR/GROUP.npz.xz for each group of instructions: for each
(instruction, set) the key "OP|SET" holds the outputs delta-coded (the
first output, then each minus the one before, as the smallest signed
integer type that holds them), so that smooth outputs compress; and
"OP|SET|first" the first output, "OP|SET|sha" a SHA-256 digest of the raw
outputs, which `load` checks. Each group is one .npz, xz-compressed. The 16-bit forms take every 16-bit input. The log holds statistics
against the correctly rounded value (numpy float64, then rounded).
"""
import hashlib
import io
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

def splitmix64(i):
    """splitmix64 of the uint64 array `i` (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = (i.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def binade(sign, exp):
    lo = (sign << 31) | (exp << 23)
    return np.arange(lo, lo + (1 << 23), dtype=np.uint64).astype(np.uint32)


def prange(lo, n):
    return np.arange(lo, lo + n, dtype=np.uint64).astype(np.uint32)


def sweep(k):
    idx = np.arange(0, 1 << (32 - k), dtype=np.uint64)
    low = splitmix64(idx + np.uint64(0x5F0)) & np.uint64((1 << k) - 1)
    return ((idx << np.uint64(k)) | low).astype(np.uint32)


def pairs(n):
    """(a, b): random signs and mantissas, exponents 97..157 (2^-30..2^30)."""
    r = splitmix64(np.arange(0, 2 * n, dtype=np.uint64)).reshape(n, 2)
    sign = (r >> np.uint64(63)) << np.uint64(31)
    mant = r & np.uint64(0x7FFFFF)
    exp = (((r >> np.uint64(32)) & np.uint64(0xFFFF)) * np.uint64(61) >> np.uint64(16)) + np.uint64(97)
    x = (sign | (exp << np.uint64(23)) | mant).astype(np.uint32)
    return x[:, 0].copy(), x[:, 1].copy()


SET_MAKERS = {"binade": lambda a: binade(int(a[0]), int(a[1])),
              "range": lambda a: prange(int(a[0], 0), int(a[1], 0)),
              "sweep": lambda a: sweep(int(a[0]))}


def make_set(spec):
    kind, *args = spec.split()
    return SET_MAKERS[kind](args)


SW = "sweep 14"
# file group -> [(op, [set specs])]. Binade exponents are biased (127 is [1, 2)).
GROUPS = {
    "ex2a": [
        ("ex2.approx.ftz.f32", ["binade 0 126", "binade 0 127", "binade 1 126", SW]),
        ("ex2.approx.f32", [SW]),
    ],
    "ex2b": [
        ("ex2.approx.ftz.f32", ["binade 1 127", "binade 1 128", "binade 1 130"]),
        ("ex2.approx.f32", ["range 0xc3000000 0x100000"]),
    ],
    "rcp": [
        ("rcp.approx.ftz.f32", ["binade 0 127", "binade 0 253", SW]),
        ("rcp.approx.f32", ["range 0x1 0x100000", SW]),
        ("sqrt.approx.ftz.f32", ["binade 0 127", SW]),
        ("sqrt.approx.f32", [SW]),
        ("rsqrt.approx.ftz.f32", ["binade 0 127", "binade 0 128", SW]),
        ("rsqrt.approx.f32", ["range 0x1 0x100000", SW]),
    ],
    "lg2": [
        ("lg2.approx.ftz.f32", ["binade 0 126", "binade 0 127", "binade 0 128", SW]),
        ("lg2.approx.f32", ["range 0x1 0x100000", SW]),
    ],
    "trig": [
        ("sin.approx.ftz.f32", ["binade 0 128", SW]),
        ("cos.approx.ftz.f32", ["binade 0 128", SW]),
        ("sin.approx.f32", [SW]),
        ("tanh.approx.f32", ["binade 0 126", "binade 0 127", SW]),
    ],
    "div": [
        ("div.full.f32", ["pairs 262144"]),
        ("div.full.ftz.f32", ["pairs 262144"]),
        ("div.approx.f32", ["pairs 262144"]),
        ("div.approx.ftz.f32", ["pairs 262144"]),
    ] + [(op, ["all16"]) for op in ("ex2.approx.f16", "ex2.approx.ftz.bf16",
                                     "tanh.approx.f16", "tanh.approx.bf16")],
}


# ------------------------------------------------------------------ PTX
def kernel_ptx(op):
    """y[i] = op(x[i]) (or op(x[i], z[i]) for div), i < n."""
    ty = op.rsplit(".", 1)[1]
    two = op.startswith("div")
    eb, rt = (4, "f32") if ty == "f32" else (2, "b16")
    body = ["ld.global.%s %%x2, [%%rd8];" % rt, "%s %%x1, %%x0, %%x2;" % op] if two else \
        ["%s %%x1, %%x0;" % op]
    return "\n".join([
        ".version 8.4", ".target sm_90a", ".address_size 64", "",
        ".visible .entry k(.param .u64 pX, .param .u64 pY, .param .u64 pZ, .param .u32 pN)", "{",
        ".reg .b32 %%r<8>;\n.reg .b64 %%rd<10>;\n.reg .pred %%p<2>;\n.reg .%s %%x<4>;" % rt,
        "ld.param.u64 %rd1, [pX];\nld.param.u64 %rd2, [pY];\nld.param.u64 %rd7, [pZ];",
        "ld.param.u32 %r1, [pN];",
        "cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\ncvta.to.global.u64 %rd7, %rd7;",
        "mov.u32 %r2, %tid.x;\nmov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %ntid.x;",
        "mad.lo.u32 %r2, %r3, %r4, %r2;", "setp.ge.u32 %p1, %r2, %r1;", "@%p1 ret;",
        "mul.wide.u32 %%rd3, %%r2, %d;" % eb,
        "add.u64 %rd4, %rd1, %rd3;\nadd.u64 %rd5, %rd2, %rd3;\nadd.u64 %rd8, %rd7, %rd3;",
        "ld.global.%s %%x0, [%%rd4];" % rt] + body + [
        "st.global.%s [%%rd5], %%x1;" % rt, "ret;", "}", ""])


def kernel_name(op):
    return op.replace(".", "_")


def all_ops():
    return [op for g in GROUPS.values() for op, _ in g]


def dump_ptx(outdir):
    os.makedirs(outdir, exist_ok=True)
    for op in all_ops():
        with open(os.path.join(outdir, kernel_name(op) + ".ptx"), "w") as f:
            f.write(kernel_ptx(op))


# ---------------------------------------------------------------- encoding
def digest(y):
    """A hash of the raw output bytes: SHA-256's first 8 bytes, little-endian."""
    return int.from_bytes(hashlib.sha256(np.ascontiguousarray(y).tobytes()).digest()[:8], "little")


def delta_encode(y):
    """(first output, each later one minus the one before) in the smallest
    signed type that holds the differences."""
    d = np.diff(y.astype(np.int64))
    for t in (np.int8, np.int16, np.int32):
        info = np.iinfo(t)
        if d.size == 0 or (d.min() >= info.min and d.max() <= info.max):
            return np.int64(y[0]), d.astype(t)
    return np.int64(y[0]), d


def delta_decode(first, d, dtype):
    out = np.empty(d.size + 1, dtype=np.int64)
    out[0] = first
    np.cumsum(d.astype(np.int64), out=out[1:])
    out[1:] += first
    return out.astype(dtype)


def save_group(path, arrays):
    """`arrays` as an uncompressed .npz, the whole compressed by xz."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    with open(path, "wb") as f:
        f.write(lzma.compress(buf.getvalue(), preset=6))


# ---------------------------------------------------------------- statistics
def reference(op, x, z=None):
    name = op.split(".")[0]
    with np.errstate(all="ignore"):
        if name == "div":
            return x / z
        return {"ex2": np.exp2, "lg2": np.log2, "rcp": lambda v: 1 / v,
                "rsqrt": lambda v: 1 / np.sqrt(v), "sqrt": np.sqrt, "sin": np.sin,
                "cos": np.cos, "tanh": np.tanh}[name](x)


def stats(op, spec, x, y, z=None):
    """ulp distance from the correctly rounded value (finite values only)."""
    half = not op.endswith("f32")
    if half:
        import ml_dtypes
        t = np.float16 if op.endswith("f16") else ml_dtypes.bfloat16
        xv, yv = x.view(t).astype(np.float64), y.view(t)
        cr = reference(op, xv).astype(t)
        ib = lambda v: v.view(np.uint16).astype(np.int64)
        sgn = lambda v: np.where(ib(v) >> 15, -(ib(v) & 0x7FFF), ib(v) & 0x7FFF)
    else:
        xv, yv = x.view(np.float32).astype(np.float64), y.view(np.float32)
        zv = None if z is None else z.view(np.float32).astype(np.float64)
        cr = reference(op, xv, zv).astype(np.float32)
        ib = lambda v: v.view(np.uint32).astype(np.int64)
        sgn = lambda v: np.where(ib(v) >> 31, -(ib(v) & 0x7FFFFFFF), ib(v) & 0x7FFFFFFF)
    ok = np.isfinite(cr) & np.isfinite(yv)
    dist = (sgn(yv) - sgn(cr))[ok]
    if dist.size == 0:
        return "%-22s %-20s %9d inputs, no finite outputs" % (op, spec, x.size)
    vals, counts = np.unique(np.clip(dist, -9, 9), return_counts=True)
    hist = " ".join("%+d:%d" % (v, c) for v, c in zip(vals, counts))
    return "%-22s %-20s %9d inputs, equal to correctly rounded %.4f, ulp hist %s" % (
        op, spec, x.size, np.mean(dist == 0), hist)


# ---------------------------------------------------------------- recording
def compile_all(tmp, cubindir):
    ptxas = os.environ.get("PTXAS", shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")
    out = {}
    for op in all_ops():
        name = kernel_name(op)
        pre = cubindir and os.path.join(cubindir, name + ".cubin")
        if pre and os.path.exists(pre):
            out[op] = pre
            continue
        path = os.path.join(tmp, name + ".ptx")
        with open(path, "w") as f:
            f.write(kernel_ptx(op))
        out[op] = os.path.join(tmp, name + ".cubin")
        subprocess.run([ptxas, "-arch=sm_90a", path, "-o", out[op]], check=True)
    return out


def inputs(spec):
    if spec == "all16":
        return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16), None
    if spec.startswith("pairs"):
        return pairs(int(spec.split()[1]))
    return make_set(spec), None


def run_op(cp, fn, x, z):
    dx = cp.asarray(x)
    dz = cp.asarray(z if z is not None else x)
    dy = cp.zeros_like(dx)
    outs = []
    for _ in range(2):
        dy.fill(0x5A)
        fn(((x.size + 255) // 256,), (256,), (dx, dy, dz, np.uint32(x.size)))
        cp.cuda.Device().synchronize()
        outs.append(cp.asnumpy(dy))
    if not np.array_equal(outs[0], outs[1]):
        sys.exit("two runs differ")
    return outs[0]


def record(outdir, cubindir=None):
    import cupy as cp
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    print("GPU:", name.decode() if isinstance(name, bytes) else name, flush=True)
    cubins = compile_all(tempfile.mkdtemp(prefix="sfu_"), cubindir)
    for group, ops in GROUPS.items():
        arrays = {}
        for op, specs in ops:
            fn = cp.RawModule(path=cubins[op]).get_function("k")
            for spec in specs:
                x, z = inputs(spec)
                y = run_op(cp, fn, x, z)
                first, arrays[op + "|" + spec] = delta_encode(y)
                arrays[op + "|" + spec + "|first"] = first
                arrays[op + "|" + spec + "|sha"] = np.uint64(digest(y))
                print(stats(op, spec, x, y, z), flush=True)
        path = os.path.join(outdir, group + ".npz.xz")
        save_group(path, arrays)
        print("wrote %s %d bytes" % (path, os.path.getsize(path)), flush=True)


def load(path):
    """{(op, spec): outputs} from a recorded group, each checked against its hash."""
    out = {}
    with open(path, "rb") as f:
        z = np.load(io.BytesIO(lzma.decompress(f.read())))
    for key in z.files:
        if key.count("|") != 1:
            continue
        op, spec = key.split("|")
        dt = np.uint32 if op.endswith("f32") else np.uint16
        y = delta_decode(int(z[key + "|first"]), z[key], dt)
        if digest(y) != int(z[key + "|sha"]):
            sys.exit("%s: %s does not match its hash" % (path, key))
        out[(op, spec)] = y
    return out


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("ptx", "record"):
        sys.exit(__doc__)
    if sys.argv[1] == "ptx":
        dump_ptx(sys.argv[2])
    else:
        os.makedirs(sys.argv[2], exist_ok=True)
        record(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
