#!/usr/bin/env python3
"""Fit the special-function unit's interpolation tables to GPU recordings and
write them as Rust (`crates/ori-host/src/mufu/tables.rs`).

    python3 tests/host/sfu/fit.py convert SPECIAL_FN.BIN h100_special.bin.gz
    python3 tests/host/sfu/fit.py fit h100_special.bin.gz crates/ori-host/src/mufu/tables.rs
    python3 tests/host/sfu/fit.py fit DIR crates/ori-host/src/mufu/tables.rs

`fit` reads either the committed recording or a directory of `probe.py
record` output (GROUP.npz.xz, the inputs regenerated from each set's
name), where the `.ftz` forms (the unit alone) are preferred.

`convert` turns the special-function recording of `tests/host/mma_probe.py`
(ORISFN01: per instruction its name, the count, the inputs and the GPU's
outputs) into the committed form: the same records, each array stored as
byte planes (all first bytes, then all second bytes, ...) so that gzip
finds the structure (ORISFP01, gzip-compressed).

`fit` models three MUFU functions (rcp, rsq, ex2) as the multifunction interpolators of the
literature (Oberman and Siu, ARITH 2005): the argument's fraction split into
a segment index (its top bits) and an offset t in [0, 1); the result's
24-bit mantissa is floor(c0 + c2 t^2 + the weights of the offset's set
bits), the linear term as a multiplier's rows, one weight per bit (on the
dense recording no c0 + c1 t + c2 t^2 reproduces a whole segment; the rows
halve the differences). Each segment's coefficients are the centre
(largest margin) of the set that reproduces every recorded output in it,
found by linear programming (needs numpy and scipy), then moved to
reproduce the most outputs where that set is empty, as it is for every
segment of the dense recording. What the recordings show of the argument
handling is in `crates/ori-host/src/mufu.rs`.
"""
import gzip
import struct
import sys

import numpy as np

SEG_BITS = {"rcp": 7, "ex2": 6, "rsq": 6}


# ------------------------------------------------------------------ files
def read_sfn(path):
    """ORISFN01 (mma_probe.py's special_fn.bin): {name: (x, y)}."""
    b = open(path, "rb").read()
    assert b[:8] == b"ORISFN01", path
    p, out = 8, {}
    while p < len(b):
        (n,) = struct.unpack_from("<I", b, p)
        name = b[p + 4:p + 4 + n].decode()
        p += 4 + n
        (cnt,) = struct.unpack_from("<I", b, p)
        p += 4
        dt = np.uint32 if name.endswith("f32") else np.uint16
        w = np.dtype(dt).itemsize
        x = np.frombuffer(b, dt, cnt, p)
        y = np.frombuffer(b, dt, cnt, p + cnt * w)
        p += 2 * cnt * w
        out[name] = (x, y)
    return out


def planes(a):
    w = a.dtype.itemsize
    return a.view(np.uint8).reshape(-1, w).T.tobytes()


def unplanes(b, n, dt):
    w = np.dtype(dt).itemsize
    return np.frombuffer(b, np.uint8, n * w).reshape(w, n).T.copy().view(dt).reshape(n)


def write_sfp(path, records):
    out = [b"ORISFP01"]
    for name, (x, y) in records.items():
        nb = name.encode()
        out.append(struct.pack("<I", len(nb)) + nb + struct.pack("<II", x.size, x.dtype.itemsize))
        out.append(planes(x) + planes(y))
    with open(path, "wb") as f:
        f.write(gzip.compress(b"".join(out), 9, mtime=0))


def read_sfp(path):
    b = gzip.decompress(open(path, "rb").read())
    assert b[:8] == b"ORISFP01", path
    p, out = 8, {}
    while p < len(b):
        (n,) = struct.unpack_from("<I", b, p)
        name = b[p + 4:p + 4 + n].decode()
        p += 4 + n
        cnt, w = struct.unpack_from("<II", b, p)
        p += 8
        dt = {4: np.uint32, 2: np.uint16}[w]
        x = unplanes(b[p:p + cnt * w], cnt, dt)
        y = unplanes(b[p + cnt * w:p + 2 * cnt * w], cnt, dt)
        p += 2 * cnt * w
        out[name] = (x, y)
    return out


def read_probe_dir(path):
    """`probe.py record` output: {instruction: (inputs, outputs)}, every
    set of an instruction concatenated (the hashes checked by `load`)."""
    import glob
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import probe
    parts = {}
    for group in sorted(glob.glob(os.path.join(path, "*.npz.xz"))):
        for (op, spec), y in probe.load(group).items():
            if spec.startswith("pairs"):
                continue
            x = probe.inputs(spec)[0]
            parts.setdefault(op, []).append((x, y))
    return {op: (np.concatenate([p[0] for p in v]), np.concatenate([p[1] for p in v]))
            for op, v in parts.items()}


def read_any(path):
    import os
    return read_probe_dir(path) if os.path.isdir(path) else read_sfp(path)


def unit_form(rec, name):
    """The recorded form of one unit function: `.ftz` (the unit alone)
    when recorded, else the plain form (rescaled inputs are left out)."""
    ftz = name.replace(".approx.", ".approx.ftz.")
    return rec[ftz] if ftz in rec else rec[name]


def convert(src, dst):
    rec = read_sfn(src)
    write_sfp(dst, rec)
    back = read_sfp(dst)
    assert all(np.array_equal(rec[k][0], back[k][0]) and np.array_equal(rec[k][1], back[k][1])
               for k in rec)
    print("wrote %s: %d records" % (dst, len(back)))


# ------------------------------------------------------------------ arguments
def rcp_points(x, y):
    """MUFU.RCP on normal inputs with normal results: (23-bit mantissa g of x,
    the result's mantissa in units of 2^-24 of (0.5, 1]). Inputs whose
    exponent the ptxas sequence rescales are left out."""
    xb, yb = x.astype(np.int64), y.astype(np.int64)
    ex, ey = (xb >> 23) & 255, (yb >> 23) & 255
    s = (ex > 0) & (ex < 253) & (ey > 0) & (ey < 255)
    g = xb[s] & 0x7FFFFF
    mant = np.where(g == 0, 1 << 24, (yb[s] & 0x7FFFFF) + (1 << 23))
    return g, mant


def rsq_points(x, y):
    """MUFU.RSQ on positive normal inputs with normal results: (the parity
    of x's exponent, its 23-bit mantissa g, the result's mantissa in units
    of 2^-24 of (1/2, 1]: 1/sqrt(m) for an even exponent, 1/sqrt(2m) for
    an odd one)."""
    xb, yb = x.astype(np.int64), y.astype(np.int64)
    ex, ey = (xb >> 23) & 255, (yb >> 23) & 255
    s = (ex > 0) & (ex < 255) & (ey > 0) & (ey < 255) & ((xb >> 31) == 0)
    odd = (ex[s] - 127) & 1
    half = (ex[s] - 127 - odd) // 2
    r = y[s].view(np.float32).astype(np.float64)
    mant = np.round(r * np.exp2(half.astype(np.float64)) * 2.0 ** 24).astype(np.int64)
    return odd, xb[s] & 0x7FFFFF, mant


def ex2_points(x, y):
    """MUFU.EX2 (the .ftz form): the argument as fixed point with 23
    fraction bits, |x| truncated (`ex2_argument` in mufu.rs); for x < 0
    with a nonzero fraction the integer part less one and the fraction's
    ones' complement (x < 0 with a zero fraction gives an exact power of
    two and is left out). Returns (the 23-bit fraction g, the result's
    mantissa y / 2^n in units of 2^-23). Only inputs with normal results."""
    with np.errstate(invalid="ignore"):
        xf = x.view(np.float32).astype(np.float64)
        yf = y.view(np.float32).astype(np.float64)
    s = np.isfinite(xf) & (np.abs(xf) < 128) & np.isfinite(yf) & (yf >= 2.0 ** -126)
    s &= np.abs(xf) >= 2.0 ** -126
    xf, yf = xf[s], yf[s]
    q = np.trunc(np.abs(xf) * 2.0 ** 23).astype(np.int64)
    keep = (xf >= 0) | ((q & ((1 << 23) - 1)) != 0)
    xf, yf, q = xf[keep], yf[keep], q[keep]
    v = np.where(xf < 0, -q - 1, q)
    n, g = v >> 23, v & ((1 << 23) - 1)
    mant = np.round(yf / np.exp2(n.astype(np.float64)) * 2.0 ** 23).astype(np.int64)
    return g, mant


# ------------------------------------------------------------------ fitting
def features(g, bits, per_bit):
    """The terms of a segment's interpolation at the 23-bit fractions `g`:
    (1, t, t^2), t the offset in [0, 1), or with `per_bit` (1, t^2, then
    each bit of the offset, lowest first): the linear term as the rows of a
    multiplier, one weight per bit of the offset."""
    sh = 23 - bits
    low = g & ((1 << sh) - 1)
    t = low / 2.0 ** sh
    if not per_bit:
        return np.stack([np.ones(t.size), t, t * t], 1)
    cols = [np.ones(t.size), t * t] + [((low >> j) & 1).astype(np.float64) for j in range(sh)]
    return np.stack(cols, 1)


def fit_segments(g, mant, exact, bits, per_bit=False):
    """(coefficients [2^bits x terms], margins): per segment the centre of
    {c : mant <= c . features < mant + 1 at every point}, found by linear
    programming on about 2^14 of the segment's points (an odd stride);
    where no such c exists (a negative margin: the unit is not what the
    features can express, see `mufu.rs`), c0 is then moved by the offset
    in [-0.25, 0.25] that reproduces the most of the segment's points."""
    from scipy.optimize import linprog
    sh = 23 - bits
    k = 3 if not per_bit else 2 + sh
    coef, margin = np.zeros((1 << bits, k)), np.zeros(1 << bits)
    for seg in range(1 << bits):
        s = np.nonzero((g >> sh) == seg)[0]
        if s.size < k:
            sys.exit("segment %d has %d points: too few to fit" % (seg, s.size))
        a_all = features(g[s], bits, per_bit)
        # An odd stride, so that every low bit of the offset is sampled.
        pick = np.arange(0, s.size, (s.size >> 14) | 1)
        a = a_all[pick]
        base = np.linalg.lstsq(a, exact[s][pick], rcond=None)[0]
        lo = mant[s][pick] - a @ base
        one = np.ones((pick.size, 1))
        r = linprog([0] * k + [-1], A_ub=np.vstack([np.hstack([-a, one]), np.hstack([a, one])]),
                    b_ub=np.concatenate([-lo, lo + 1.0]), bounds=[(None, None)] * k + [(None, 0.5)],
                    method="highs")
        c = r.x[:k] + base
        if r.x[k] < 0:
            v = evaluate_raw(c[None, :], g[s] & ((1 << sh) - 1), bits, per_bit)
            shifts = np.linspace(-0.25, 0.25, 101)
            hits = [np.count_nonzero(np.floor(v + d) == mant[s]) for d in shifts]
            c[0] += shifts[int(np.argmax(hits))]
        coef[seg], margin[seg] = c, r.x[k]
    return coef, margin


def evaluate_raw(c, g, bits, per_bit):
    """The unfloored interpolation, the operations in the order mufu.rs does
    them (`c` one row per point, or one row for all)."""
    sh = 23 - bits
    low = g & ((1 << sh) - 1)
    t = low / 2.0 ** sh
    if not per_bit:
        return c[:, 0] + c[:, 1] * t + c[:, 2] * t * t
    v = c[:, 0] + c[:, 1] * (t * t)
    for j in range(sh):
        v = v + np.where((low >> j) & 1 == 1, c[:, 2 + j], 0.0)
    return v


def evaluate(coef, g, bits, per_bit=False):
    """floor of the interpolation, as mufu.rs computes it."""
    return np.floor(evaluate_raw(coef[g >> (23 - bits)], g, bits, per_bit)).astype(np.int64)


def unique_points(g, mant):
    """One point per argument; exits if two inputs with one argument were
    given different results (the argument would not be what the unit
    keeps)."""
    order = np.argsort(g, kind="stable")
    gs, ms = g[order], mant[order]
    same = gs[1:] == gs[:-1]
    if np.any(same & (ms[1:] != ms[:-1])):
        sys.exit("%d arguments with two different results" % np.count_nonzero(same & (ms[1:] != ms[:-1])))
    u, i = np.unique(gs, return_index=True)
    return u, ms[i]


def fit_all(path):
    rec = read_any(path)
    tables, report = {}, []
    g, mant = rcp_points(*unit_form(rec, "rcp.approx.f32"))
    u, m = unique_points(g[g != 0], mant[g != 0])
    exact = 2.0 ** 47 / (2.0 ** 23 + u)
    tables["RCP"], marg = fit_segments(u, m, exact, SEG_BITS["rcp"], per_bit=True)
    hit = np.mean(evaluate(tables["RCP"], u, SEG_BITS["rcp"], per_bit=True) == m)
    report.append("rcp: %d arguments, %d segments, smallest margin %.4f, reproduced %.5f"
                  % (u.size, 1 << SEG_BITS["rcp"], marg.min(), hit))
    odd, g, mant = rsq_points(*unit_form(rec, "rsqrt.approx.f32"))
    for parity, name in ((0, "RSQ_EVEN"), (1, "RSQ_ODD")):
        # An even power of two (g = 0) is exact, outside the table.
        sel = (odd == parity) & ((g != 0) | (odd == 1))
        u, m = unique_points(g[sel], mant[sel])
        exact = 2.0 ** 24 / np.sqrt((1 + u / 2.0 ** 23) * (1 + parity))
        tables[name], marg = fit_segments(u, m, exact, SEG_BITS["rsq"], per_bit=True)
        hit = np.mean(evaluate(tables[name], u, SEG_BITS["rsq"], per_bit=True) == m)
        report.append("rsq %s exponent: %d arguments, %d segments, smallest margin %.4f, reproduced %.5f"
                      % ("odd" if parity else "even", u.size, 1 << SEG_BITS["rsq"], marg.min(), hit))
    g, mant = ex2_points(*rec["ex2.approx.ftz.f32"])
    u, m = unique_points(g, mant)
    exact = np.exp2(u / 2.0 ** 23) * 2.0 ** 23
    tables["EX2"], marg = fit_segments(u, m, exact, SEG_BITS["ex2"], per_bit=True)
    hit = np.mean(evaluate(tables["EX2"], u, SEG_BITS["ex2"], per_bit=True) == m)
    report.append("ex2: %d arguments, %d segments, smallest margin %.4f, reproduced %.5f"
                  % (u.size, 1 << SEG_BITS["ex2"], marg.min(), hit))
    return tables, report


def rust_tables(tables, report, source):
    out = ["//! Generated by `tests/host/sfu/fit.py fit %s`: do not edit." % source,
           "//! The interpolation coefficients per segment, fitted to the recording,",
           "//! in units of the result's last mantissa bit: (c0, c2, then one",
           "//! weight per bit of the offset, lowest first) of",
           "//! c0 + c2 t^2 + the weights of the offset's set bits.",
           "//!"] + ["//! - %s" % line for line in report] + [""]
    for name, coef in tables.items():
        out.append("#[rustfmt::skip]")
        out.append("pub(super) static %s: [[f64; %d]; %d] = [" % (name, coef.shape[1], coef.shape[0]))
        for c in coef:
            out.append("    [%s]," % ", ".join(repr(float(v)) for v in c))
        out.append("];")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("convert", "fit"):
        sys.exit(__doc__)
    if sys.argv[1] == "convert":
        convert(sys.argv[2], sys.argv[3])
    else:
        tables, report = fit_all(sys.argv[2])
        print("\n".join(report))
        with open(sys.argv[3], "w") as f:
            f.write(rust_tables(tables, report, sys.argv[2].rstrip("/").split("/")[-1]))
