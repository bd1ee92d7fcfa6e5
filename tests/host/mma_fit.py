#!/usr/bin/env python3
"""Which arithmetic gives the tensor core's bits? (python3, stdlib only, ~20 s)

Runs candidate models of one wgmma's sum over every output of the three
`cases/*_random` recordings (f16, bf16 and tf32 inputs, f32 accumulator,
non-integer inputs and C, recorded on an H100) and prints, per case, the
fraction of outputs each model reproduces bit for bit. The model
`crates/ori-host/src/mma_arith.rs` implements for these forms is the first
row; the others are alternatives the data rejects. (`mma/mma_probes.bin`
covers every form; `crates/ori-host/src/mma_recorded.rs` checks it.)

    python3 tests/host/mma_fit.py

A model is a choice of:
  anchor   `factors`: a product is aligned at ea + eb (its factors'
           exponents); `own`: at its own exponent floor(log2 |a b|)
  bits     terms keep their bits of weight >= 2^(anchor - bits)
  trunc    `zero`: toward zero; `floor`: toward minus infinity
  round    the sum to f32: `zero` (toward zero) or `even` (to nearest)
  c_in     C is one of the aligned terms (True) or added to the rounded
           sum of the products afterwards (False)
plus `exact`: the exact sum rounded to nearest once (the former model).
"""
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_ref  # noqa: E402
import gen_cases  # noqa: E402


def f32_even(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_zero(x):
    r = f32_even(x)
    if abs(r) > abs(x):
        r = struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", r))[0] - 1))[0]
    return r


def expo(x):
    return math.frexp(x)[1] - 1


def aligned_sum(terms, anchor, bits, trunc):
    """Exact sum of the terms, each cut to a multiple of 2^(anchor - bits)."""
    s = 0
    for t in terms:
        v = math.ldexp(t, bits - anchor)
        s += math.trunc(v) if trunc == "zero" else math.floor(v)
    return math.ldexp(s, anchor - bits)


def model(c, pairs, anchor, bits, trunc, rnd, c_in):
    prods = [a * b for a, b in pairs if a * b != 0]
    anchors = [expo(a) + expo(b) if anchor == "factors" else expo(a * b)
               for a, b in pairs if a * b != 0]
    terms = prods
    if c_in and c != 0:
        anchors.append(expo(c))
        terms = prods + [c]
    if not anchors:
        return f32_even(c + sum(prods))
    s = aligned_sum(terms, max(anchors), bits, trunc)
    if not c_in:
        s += c
    return f32_zero(s) if rnd == "zero" else f32_even(s)


MODELS = [("factors", 25, "zero", "zero", True)] + [
    m for m in [("own", 25, "zero", "zero", True), ("factors", 24, "zero", "zero", True),
                ("factors", 26, "zero", "zero", True), ("factors", 25, "floor", "zero", True),
                ("factors", 25, "zero", "even", True), ("factors", 25, "zero", "zero", False)]]


def main():
    for case in gen_cases.case_list():
        if not case.rand:
            continue
        outs = []
        check_ref.check(case, outs)
        print("%s: %d outputs" % (case.name, len(outs)))
        exact = sum(f32_even(c + sum(a * b for p in pl for a, b in p)) == d for c, pl, d in outs)
        print("   %-40s %.4f" % ("exact sum, rounded to nearest", exact / len(outs)))
        for m in MODELS:
            ok = 0
            for c, pl, d in outs:
                acc = c
                for pairs in pl:
                    acc = model(acc, pairs, *m)
                ok += acc == d
            print("   %-40s %.4f" % ("anchor=%s bits=%d trunc=%s round=%s c_in=%s" % m, ok / len(outs)))


if __name__ == "__main__":
    main()
