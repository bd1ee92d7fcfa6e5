#!/usr/bin/env python3
"""Generate the GPU-ground-truth wgmma cases for the ori-host interpreter.

Writes, for every case NAME, tests/host/cases/NAME.ptx and
tests/host/cases/NAME.in.bin.  Deterministic: each case's data comes from a
random.Random seeded with sha256(NAME), drawn only through getrandbits, so
re-running reproduces the same bytes.  Python 3 standard library only.

See tests/host/README.md for the conventions.
"""
import hashlib
import math
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
# The random-normal cases (`--random-normal`), recorded apart from the others.
CASES_RN = os.path.join(HERE, "cases_rn")
THREADS = 128

# element size in bytes, and instruction K, per input type
ESIZE = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1}
KDIM = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}
SWZ_MODE = {0: 0, 128: 1, 64: 2, 32: 3}  # descriptor bits 62-63


# ---------------------------------------------------------------- encoders
def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f16_bits(v):
    return struct.unpack("<H", struct.pack("<e", v))[0]


def bf16_bits(v):  # only used for values exactly representable in bf16
    b = f32_bits(v)
    assert b & 0xFFFF == 0, v
    return b >> 16


def fp8_bits(v, ebits, mbits, bias):
    """Exact encoding of a small integer into an fp8 format."""
    if v == 0:
        return 0
    s = 0x80 if v < 0 else 0
    a = abs(v)
    e = a.bit_length() - 1  # a = 1.m * 2^e
    m = a - (1 << e)
    assert m < (1 << e) or e == 0
    # mantissa bits: m / 2^e * 2^mbits
    mant = (m << mbits) >> e if e else 0
    assert (mant << e) >> mbits == m, v
    return s | ((e + bias) << mbits) | mant


def enc_elem(t, v):
    """bytes of one element of type t holding the number v."""
    if t == "f16":
        return struct.pack("<H", f16_bits(v))
    if t == "bf16":
        return struct.pack("<H", bf16_bits(v))
    if t == "tf32":
        return struct.pack("<I", f32_bits(v))
    if t == "e4m3":
        return bytes([fp8_bits(int(v), 4, 3, 7)])
    if t == "e5m2":
        return bytes([fp8_bits(int(v), 5, 2, 15)])
    if t == "s8":
        return struct.pack("<b", int(v))
    if t == "u8":
        return struct.pack("<B", int(v))
    raise ValueError(t)


class Rng:
    def __init__(self, name):
        self.r = random.Random(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little"))

    def int_in(self, lo, hi):  # inclusive, via getrandbits + rejection (version-stable)
        n = hi - lo + 1
        k = n.bit_length()
        while True:
            x = self.r.getrandbits(k)
            if x < n:
                return lo + x

    def unit(self):  # uniform in [0,1) with 24 bits
        return self.r.getrandbits(24) / float(1 << 24)


def small_elem(rng, t):
    if t == "u8":
        return enc_elem(t, rng.int_in(0, 3))
    return enc_elem(t, rng.int_in(-3, 3))


def random_elem(rng, t):
    """A non-integer value for the *_random cases."""
    v = (rng.unit() * 4.0) - 2.0
    if t == "f16":
        return struct.pack("<H", f16_bits(v))
    if t == "bf16":
        return struct.pack("<H", f32_bits(v) >> 16)  # truncation of a 24-bit value: exact bf16
    if t == "tf32":
        return struct.pack("<I", f32_bits(v) & 0xFFFFE000)  # tf32-representable f32
    raise ValueError(t)


def normal(rng):
    """A standard normal value (Box-Muller on two 53-bit uniforms)."""
    u1 = (rng.r.getrandbits(53) + 1) / float(1 << 53)
    u2 = rng.r.getrandbits(53) / float(1 << 53)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def fp8_nearest(v, ebits, mbits, bias, top):
    """v rounded to nearest even into an fp8 format, saturated at the
    largest finite code `top`."""
    s = 0x80 if v < 0 else 0
    m, ex = math.frexp(abs(v))  # |v| = m * 2^ex, m in [0.5, 1)
    if m == 0:
        return s
    e = max(ex - 1, 1 - bias)  # the exponent of the code (subnormals: 1 - bias)
    q = round(abs(v) / 2.0 ** e * (1 << mbits))  # half to even
    if q >= 2 << mbits:
        e, q = e + 1, q >> 1
    code = q if q < 1 << mbits else ((e + bias) << mbits) | (q - (1 << mbits))
    return s | min(code, top)


def bf16_nearest(v):
    b = f32_bits(v)
    return (b + 0x7FFF + ((b >> 16) & 1)) >> 16


def normal_elem(rng, t, scale=1.0):
    """A random normal value rounded to nearest even into type t (the
    integer types: uniform over their whole range; tf32: every f32 bit)."""
    if t == "s8":
        return struct.pack("<b", rng.int_in(-128, 127))
    if t == "u8":
        return struct.pack("<B", rng.int_in(0, 255))
    v = scale * normal(rng)
    if t == "f16":
        return struct.pack("<H", f16_bits(v))
    if t == "bf16":
        return struct.pack("<H", bf16_nearest(v))
    if t == "tf32":
        return struct.pack("<I", f32_bits(v))
    if t == "e4m3":
        return bytes([fp8_nearest(v, 4, 3, 7, 0x7E)])
    if t == "e5m2":
        return bytes([fp8_nearest(v, 5, 2, 15, 0x7B)])
    raise ValueError(t)


def elem(rng, t, rand):
    """One element: random normal (rand == "rn"), random non-integer (True)
    or a small integer."""
    if rand == "rn":
        return normal_elem(rng, t)
    return random_elem(rng, t) if rand else small_elem(rng, t)


def fill(rng, t, nbytes, rand):
    out = bytearray()
    es = ESIZE[t]
    assert nbytes % es == 0
    for _ in range(nbytes // es):
        out += elem(rng, t, rand)
    return bytes(out)


def acc_word(rng, dtype, rand):
    """One 32-bit accumulator register's initial bits."""
    if rand == "rn":
        if dtype == "f32":
            return struct.pack("<I", f32_bits(4.0 * normal(rng)))
        if dtype == "f16":
            return struct.pack("<HH", f16_bits(4.0 * normal(rng)), f16_bits(4.0 * normal(rng)))
        return struct.pack("<i", rng.int_in(-(1 << 20), 1 << 20))
    if dtype == "f32":
        v = (rng.unit() * 8.0 - 4.0) if rand else float(rng.int_in(-3, 3))
        return struct.pack("<I", f32_bits(v))
    if dtype == "f16":  # f16x2
        a = rng.int_in(-3, 3)
        b = rng.int_in(-3, 3)
        return struct.pack("<HH", f16_bits(a), f16_bits(b))
    if dtype == "s32":
        return struct.pack("<i", rng.int_in(-3, 3))
    raise ValueError(dtype)


# ---------------------------------------------------------------- layouts
def operand_layout(rows, es, nk, major, swz, variant):
    """Canonical shared-memory layout of one operand (PTX ISA "Shared Memory
    Matrix Layout"), in bytes.  rows = M (A) or N (B); every K slice of one
    wgmma is 32 bytes of K.  Returns (size, lbo, sbo, slice_advance, text)."""
    kb = 32  # bytes of K per slice
    if major == "k":
        if swz == 0:
            # ((8,m),(T,2k)):((1T,SBO),(1,LBO)); core matrix = 8 rows x 16 B
            ncm = 2 * nk  # core matrices along K
            if variant == 0:
                lbo, sbo = 128, ncm * 128
            else:
                sbo, lbo = 128, (rows // 8) * 128
            return rows * kb * nk, lbo, sbo, 2 * lbo, "K-major no swizzle LBO=%d SBO=%d" % (lbo, sbo)
        # ((8,m),(T,2k)):((sw/16 T,SBO),(1,T)); atom = 8 rows x swz bytes
        atom = 8 * swz
        sbo = atom
        lbo = 16  # unused for swizzled K-major (encoded field 1)
        per = swz // kb  # K slices per swizzle row
        if per >= nk:
            size = (rows // 8) * atom
            adv = kb
        else:  # 32B swizzle, 2 slices: second slice is a separate block
            size = (rows // 8) * atom * nk
            adv = (rows // 8) * atom
        return size, lbo, sbo, adv, "K-major %dB swizzle SBO=%d" % (swz, sbo)
    # MN-major (2-byte types only): T = 8 elements = 16 B along MN
    assert es == 2
    kg = 2 * nk  # groups of 8 K rows
    if swz == 0:
        # ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)); core matrix = 8 K rows x 16 B
        if variant == 0:
            sbo, lbo = 128, (rows // 8) * 128
        else:
            lbo, sbo = 128, kg * 128
        return rows * 2 * 16 * nk, lbo, sbo, 2 * lbo, "MN-major no swizzle LBO=%d SBO=%d" % (lbo, sbo)
    # ((T,sw/16,m),(8,k)):((1,T,LBO),(sw/16 T,SBO)); atom = 8 K rows x swz bytes of MN
    atom = 8 * swz
    mn_per_atom = swz // 2
    assert rows % mn_per_atom == 0, (rows, swz)
    na = rows // mn_per_atom
    if variant == 0:
        sbo, lbo = atom, kg * atom
    else:
        lbo, sbo = atom, na * atom
    return na * kg * atom, lbo, sbo, 2 * sbo, "MN-major %dB swizzle LBO=%d SBO=%d" % (swz, lbo, sbo)


def align(x, a):
    return (x + a - 1) // a * a


# ---------------------------------------------------------------- cases
class Case:
    def __init__(self, name, dtype, atype, btype, n, a, b, nk=1, scale_d=1, sa=1, sb=1,
                 two_groups=False, rand=False, av=0, bv=0):
        self.__dict__.update(locals())
        del self.__dict__["self"]


def case_list(normal=False):
    C = []

    def add(dtype, atype, btype, n, a, b, **kw):
        """a, b: (major, swizzle) with major in k/m/r (r = register A)."""
        k = KDIM[atype]
        lay = "a%s%d_b%s%d" % (a[0], a[1], b[0], b[1]) if a[0] != "r" else "areg_b%s%d" % b
        name = "%s_%s_%s_m64n%d_k%d_%s" % (dtype, atype, btype, n, k, lay)
        if kw.get("av") or kw.get("bv"):
            name += "_v%d%d" % (kw.get("av", 0), kw.get("bv", 0))
        if kw.get("two_groups"):
            name += "_2groups"
        elif kw.get("nk", 1) == 2:
            name += "_chain2"
        if kw.get("scale_d", 1) == 0:
            name += "_sd0"
        if kw.get("sa", 1) == -1:
            name += "_nega"
        if kw.get("sb", 1) == -1:
            name += "_negb"
        if kw.get("rand") == "rn":
            name += "_rn"
        elif kw.get("rand"):
            name += "_random"
        C.append(Case(name, dtype, atype, btype, n, a, b, **kw))

    K = lambda s: ("k", s)
    M = lambda s: ("m", s)
    R = ("r", 0)
    # f32.f16.f16
    f = ("f32", "f16", "f16")
    add(*f, 8, K(0), K(0))
    add(*f, 16, K(32), K(32))
    add(*f, 64, K(64), K(64))
    add(*f, 128, K(128), K(128))
    add(*f, 256, K(128), K(128), nk=2)
    add(*f, 64, K(0), K(0), nk=2, av=1, bv=1)
    add(*f, 64, K(128), K(0))
    add(*f, 64, M(0), M(0))
    add(*f, 128, M(128), M(128))
    add(*f, 64, M(32), M(64))
    add(*f, 128, K(128), M(128), nk=2, bv=1)
    add(*f, 64, R, K(128))
    add(*f, 128, R, M(128), nk=2)
    add(*f, 64, K(128), K(128), scale_d=0)
    add(*f, 16, K(0), K(0), sa=-1)
    add(*f, 64, M(128), K(64), sa=-1, sb=-1)
    add(*f, 64, K(128), K(128), nk=2, two_groups=True)
    add(*f, 64, K(128), K(128), rand=True)
    # f32.bf16.bf16
    f = ("f32", "bf16", "bf16")
    add(*f, 8, K(0), K(0))
    add(*f, 64, K(128), K(128))
    add(*f, 128, M(0), M(0), av=1, bv=1)
    add(*f, 64, M(128), M(128), nk=2)
    add(*f, 16, R, K(32))
    add(*f, 256, K(64), K(64), scale_d=0)
    add(*f, 64, K(128), M(128), sb=-1)
    add(*f, 128, M(128), K(128), rand=True)
    # f16.f16.f16
    f = ("f16", "f16", "f16")
    add(*f, 8, K(0), K(0))
    add(*f, 64, K(128), K(128))
    add(*f, 128, M(128), M(128))
    add(*f, 256, K(64), K(64))
    add(*f, 64, R, K(128))
    add(*f, 16, K(32), K(32), scale_d=0)
    add(*f, 64, M(0), M(0), nk=2)
    # f32.tf32.tf32
    f = ("f32", "tf32", "tf32")
    add(*f, 8, K(0), K(0))
    add(*f, 64, K(128), K(128))
    add(*f, 128, K(32), K(32), nk=2)
    add(*f, 64, R, K(64))
    add(*f, 16, K(128), K(128), scale_d=0)
    add(*f, 64, K(64), K(128), sa=-1, sb=-1)
    add(*f, 64, K(128), K(128), rand=True)
    # f32.e4m3.e4m3
    f = ("f32", "e4m3", "e4m3")
    add(*f, 16, K(0), K(0))
    add(*f, 128, K(128), K(128), nk=2)
    add(*f, 64, R, K(64))
    add(*f, 8, K(32), K(32), scale_d=0)
    # f32.e5m2.e4m3
    f = ("f32", "e5m2", "e4m3")
    add(*f, 64, K(128), K(128))
    add(*f, 256, K(0), K(0))
    add(*f, 16, K(64), K(64), scale_d=0)
    # f16.e4m3.e5m2
    f = ("f16", "e4m3", "e5m2")
    add(*f, 64, K(64), K(64))
    add(*f, 128, R, K(128))
    add(*f, 8, K(0), K(0), scale_d=0)
    # s32.s8.s8
    f = ("s32", "s8", "s8")
    add(*f, 8, K(0), K(0))
    add(*f, 64, K(128), K(128), nk=2)
    add(*f, 128, R, K(32))
    add(*f, 16, K(64), K(64), scale_d=0)
    # s32.u8.s8
    f = ("s32", "u8", "s8")
    add(*f, 64, K(128), K(128))
    add(*f, 256, K(0), K(0))
    add(*f, 16, K(32), K(32), scale_d=0)
    # s32.s8.u8
    f = ("s32", "s8", "u8")
    add(*f, 64, K(64), K(64))
    add(*f, 16, R, K(128))
    add(*f, 8, K(0), K(0), scale_d=0)
    if normal:
        before = len(C)
        random_normal_cases(C, add)
        return C[before:]
    return C


def random_normal_cases(C, add):
    """Every case above again on random normal data (`_rn`), then a sweep
    of N over every dense form: K-major B with each swizzle, MN-major B
    where the form has it, A in shared memory or in registers."""
    for c in list(C):
        if not c.rand:
            kw = {k: getattr(c, k) for k in ("nk", "scale_d", "sa", "sb", "two_groups", "av", "bv")}
            add(c.dtype, c.atype, c.btype, c.n, c.a, c.b, rand="rn", **kw)
    forms = [("f32", "f16", "f16"), ("f32", "bf16", "bf16"), ("f32", "tf32", "tf32"),
             ("f16", "f16", "f16"), ("f32", "e4m3", "e4m3"), ("f32", "e4m3", "e5m2"),
             ("f32", "e5m2", "e4m3"), ("f32", "e5m2", "e5m2"), ("f16", "e4m3", "e4m3"),
             ("f16", "e4m3", "e5m2"), ("f16", "e5m2", "e4m3"), ("f16", "e5m2", "e5m2"),
             ("s32", "s8", "s8"), ("s32", "s8", "u8"), ("s32", "u8", "s8"), ("s32", "u8", "u8")]
    sweep = [(24, ("k", 0), ("k", 0)), (40, ("k", 64), ("k", 0)), (96, ("r", 0), ("k", 64)),
             (136, ("k", 32), ("k", 0)), (192, ("m", 128), ("m", 128)), (240, ("r", 0), ("k", 128)),
             (64, ("m", 0), ("m", 32))]
    for f in forms:
        transposable = f[1] in ("f16", "bf16")
        for n, a, b in sweep:
            if not transposable and "m" in (a[0], b[0]):
                continue
            if f[0] == "s32" and n > 24 and n % 16:
                continue  # the integer forms' N: 8, 16, 24, then multiples of 16
            add(*f, n, a, b, rand="rn")


# ---------------------------------------------------------------- emission
def acc_regs(dtype, n):
    return n // 2 if dtype in ("f32", "s32") else n // 4


def build(c):
    es_a, es_b = ESIZE[c.atype], ESIZE[c.btype]
    K = KDIM[c.atype]
    reg_a = c.a[0] == "r"
    rng = Rng(c.name)
    ngroups = 2 if c.two_groups else 1
    r1 = acc_regs(c.dtype, c.n)
    R = r1 * ngroups

    # smem layout: [A region][B region], each 1024-aligned
    off = 0
    parts = []  # (offset, size, type)
    if not reg_a:
        a_size, a_lbo, a_sbo, a_adv, a_txt = operand_layout(64, es_a, c.nk, c.a[0], c.a[1], c.av)
        a_base = 0
        parts.append((a_base, align(a_size, 1024), c.atype))
        off = align(a_size, 1024)
    b_size, b_lbo, b_sbo, b_adv, b_txt = operand_layout(c.n, es_b, c.nk, c.b[0], c.b[1], c.bv)
    b_base = off
    off = align(off + b_size, 1024)
    S = max(2048, align(off, 2048))
    parts.append((b_base, S - b_base, c.btype))

    img = bytearray()
    for (o, sz, t) in parts:
        assert o == len(img)
        img += fill(rng, t, sz, c.rand)
    assert len(img) == S
    c_off = S
    cbytes = bytearray()
    for _ in range(THREADS * R):
        cbytes += acc_word(rng, c.dtype, c.rand)
    a_off = None
    abytes = bytearray()
    RA = 4 * c.nk if reg_a else 0
    if reg_a:
        a_off = c_off + len(cbytes)
        per_reg = 4 // es_a
        for _ in range(THREADS * RA):
            for _ in range(per_reg):
                abytes += elem(rng, c.atype, c.rand)
    inbin = bytes(img) + bytes(cbytes) + bytes(abytes)
    out_bytes = THREADS * R * 4

    # ---- header and text
    mode = "%s.%s.%s" % (c.dtype, c.atype, c.btype)
    desc = ["wgmma m64n%dk%d %s" % (c.n, K, mode)]
    if reg_a:
        desc.append("A in registers (%d regs/thread)" % RA)
    else:
        desc.append("A %s%s" % (a_txt, " trans-a=1" if c.a[0] == "m" else ""))
    desc.append("B %s%s" % (b_txt, " trans-b=1" if c.b[0] == "m" else ""))
    if c.nk == 2 and not c.two_groups:
        desc.append("two wgmma chained along K")
    if c.two_groups:
        desc.append("two commit groups on two accumulator sets (K slice 0 -> d0.., K slice 1 -> d%d..)" % r1)
    if c.scale_d == 0:
        desc.append("scale-d=0")
    if c.sa == -1:
        desc.append("imm-scale-a=-1")
    if c.sb == -1:
        desc.append("imm-scale-b=-1")
    desc.append({"rn": "random normal data rounded to each type: exact",
                 True: "random non-integer data: compare with tolerance"}.get(c.rand, "small-integer data: exact"))
    L = []
    L.append("// host-case: threads=%d out_bytes=%d s_bytes=%d c_off=%d a_off=%s %s"
             % (THREADS, out_bytes, S, c_off, "none" if a_off is None else a_off, "; ".join(desc)))
    L.append("// generated by tests/host/gen_cases.py; do not edit")
    # ptxas 13.0 rejects mixed integer types (u8.s8 / s8.u8) below PTX ISA 8.4
    mixed_int = c.atype in ("s8", "u8") and c.atype != c.btype
    L.append(".version 8.4" if mixed_int else ".version 8.0")
    L.append(".target sm_90a")
    L.append(".address_size 64")
    L.append("")
    L.append(".shared .align 1024 .b8 smem[%d];" % S)
    L.append("")
    L.append(".visible .entry k(.param .u64 p_in, .param .u64 p_out)")
    L.append("{")
    ftype = ".f32" if c.dtype == "f32" else ".b32"
    nchunk = S // 2048
    nr = 16 + 4 * nchunk + RA
    L.append("  .reg .b32 %%r<%d>;" % nr)
    L.append("  .reg .b64 %rd<32>;")
    L.append("  .reg %s %%f<%d>;" % (ftype, R))
    L.append("")
    L.append("  ld.param.u64 %rd0, [p_in];")
    L.append("  ld.param.u64 %rd1, [p_out];")
    L.append("  cvta.to.global.u64 %rd2, %rd0;")
    L.append("  cvta.to.global.u64 %rd3, %rd1;")
    L.append("  mov.u32 %r0, %tid.x;")
    L.append("  mov.u32 %r1, smem;")
    L.append("  // (a) copy p_in[0, s_bytes) to smem: thread tid copies 16-byte chunks tid + 128*j")
    L.append("  shl.b32 %r2, %r0, 4;")
    L.append("  cvt.u64.u32 %rd4, %r2;")
    L.append("  add.u64 %rd5, %rd2, %rd4;")
    L.append("  add.u32 %r3, %r1, %r2;")
    for j in range(nchunk):
        b = 16 + 4 * j
        regs = "{%%r%d, %%r%d, %%r%d, %%r%d}" % (b, b + 1, b + 2, b + 3)
        L.append("  ld.global.v4.b32 %s, [%%rd5+%d];" % (regs, 2048 * j))
        L.append("  st.shared.v4.b32 [%%r3+%d], %s;" % (2048 * j, regs))
    L.append("  // (b)")
    L.append("  fence.proxy.async.shared::cta;")
    L.append("  bar.sync 0;")
    L.append("  // (c) initial accumulators: p_in[c_off + (tid*%d + i)*4]" % R)
    L.append("  mul.lo.u32 %%r4, %%r0, %d;" % (R * 4))
    L.append("  cvt.u64.u32 %rd6, %r4;")
    L.append("  add.u64 %rd7, %rd2, %rd6;")
    for i in range(R):
        L.append("  ld.global.b32 %%f%d, [%%rd7+%d];" % (i, c_off + 4 * i))
    ra0 = 16 + 4 * nchunk
    if reg_a:
        L.append("  // A fragments: p_in[a_off + (tid*%d + i)*4]" % RA)
        L.append("  mul.lo.u32 %%r5, %%r0, %d;" % (RA * 4))
        L.append("  cvt.u64.u32 %rd8, %r5;")
        L.append("  add.u64 %rd9, %rd2, %rd8;")
        for i in range(RA):
            L.append("  ld.global.b32 %%r%d, [%%rd9+%d];" % (ra0 + i, a_off + 4 * i))
    L.append("  // (d) descriptors: ((addr>>4)&0x3fff) | (LBO>>4)<<16 | (SBO>>4)<<32 | swizzle<<62")
    L.append("  cvt.u64.u32 %rd10, %r1;")

    def mkdesc(dst, base_off, lbo, sbo, swz, comment):
        hi = ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (SWZ_MODE[swz] << 62)
        L.append("  // %%rd%d: %s" % (dst, comment))
        L.append("  add.u64 %%rd%d, %%rd10, %d;" % (dst, base_off))
        L.append("  shr.u64 %%rd%d, %%rd%d, 4;" % (dst, dst))
        L.append("  and.b64 %%rd%d, %%rd%d, 16383;" % (dst, dst))
        L.append("  or.b64 %%rd%d, %%rd%d, %d;" % (dst, dst, hi))

    da = []
    db = []
    for j in range(c.nk):
        if not reg_a:
            mkdesc(12 + j, a_base + j * a_adv, a_lbo, a_sbo, c.a[1], "A, K slice %d (smem+%d)" % (j, a_base + j * a_adv))
            da.append("%%rd%d" % (12 + j))
        mkdesc(16 + j, b_base + j * b_adv, b_lbo, b_sbo, c.b[1], "B, K slice %d (smem+%d)" % (j, b_base + j * b_adv))
        db.append("%%rd%d" % (16 + j))

    L.append("  // (e)")
    L.append("  wgmma.fence.sync.aligned;")
    shape = "m64n%dk%d" % (c.n, K)
    for j in range(c.nk):
        g = j if c.two_groups else 0
        dl = "{" + ", ".join("%%f%d" % (g * r1 + i) for i in range(r1)) + "}"
        aop = ("{" + ", ".join("%%r%d" % (ra0 + 4 * j + i) for i in range(4)) + "}") if reg_a else da[j]
        sd = c.scale_d
        if c.atype in ("f16", "bf16"):
            tail = "%d, %d, %d" % (sd, c.sa, c.sb)
            tail += (", %d" % (1 if c.b[0] == "m" else 0)) if reg_a else \
                (", %d, %d" % (1 if c.a[0] == "m" else 0, 1 if c.b[0] == "m" else 0))
        elif c.atype in ("s8", "u8"):
            tail = "%d" % sd
        else:
            tail = "%d, %d, %d" % (sd, c.sa, c.sb)
        L.append("  wgmma.mma_async.sync.aligned.%s.%s.%s.%s %s, %s, %s, %s;"
                 % (shape, c.dtype, c.atype, c.btype, dl, aop, db[j], tail))
        if c.two_groups:
            L.append("  wgmma.commit_group.sync.aligned;")
    if not c.two_groups:
        L.append("  wgmma.commit_group.sync.aligned;")
    L.append("  wgmma.wait_group.sync.aligned 0;")
    L.append("  // (f) p_out[(tid*%d + i)*4] = d_i" % R)
    L.append("  add.u64 %rd11, %rd3, %rd6;")
    for i in range(R):
        L.append("  st.global.b32 [%%rd11+%d], %%f%d;" % (4 * i, i))
    L.append("  ret;")
    L.append("}")
    return "\n".join(L) + "\n", inbin


def main():
    """Write the cases (with --random-normal, the `_rn` cases into cases_rn/)."""
    normal = "--random-normal" in sys.argv
    out = CASES_RN if normal else CASES
    os.makedirs(out, exist_ok=True)
    cases = case_list(normal)
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    for c in cases:
        ptx, inbin = build(c)
        with open(os.path.join(out, c.name + ".ptx"), "w", newline="\n") as f:
            f.write(ptx)
        with open(os.path.join(out, c.name + ".in.bin"), "wb") as f:
            f.write(inbin)
    print("%d cases written to %s" % (len(cases), out))
    if "-v" in sys.argv:
        for n in names:
            print(" ", n)

if __name__ == "__main__":
    main()
