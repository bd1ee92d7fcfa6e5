#!/usr/bin/env python3
"""Hand-edited variants of accread_partial_fp16_64x128x64_s3_w4.ptx that
isolate its ori/ptxas disagreement (see README.md, "Disagreement").

Each variant is written to --out (default /tmp/triton2_probes), then ptxas
13.0.88 (the local oracle) and ori are run on it and their codes printed.
The edits change the kernel's semantics; they only serve to find which
instructions the two tools react to.

  base  the kernel as Triton wrote it
  a     the partial-store branch (bb.4) made unreachable: `@%p28 bra` -> `bra.uni`
  b     the 64 accumulator zero-inits of the zero-trip block $L__BB0_1 deleted
  c     block $L__BB0_1 moved in front of the loop (layout only; it then branches to $L__BB0_6)
  d     a `wgmma.wait_group 0` put on the loop-exit edge, before the join $L__BB0_6
  e     the zero-inits of $L__BB0_1 hoisted above the loop guard (`@%p6 bra`), the rest of $L__BB0_1 kept
  f     e, plus the rest of $L__BB0_1 hoisted too ($L__BB0_1 left empty)
  g     the 64 copies `mov %r234.., %r453..` of bb.4 overwritten with 0 after their last use (before the bar.sync)

Usage: python3 tests/triton2/probe_accread_partial.py [--ori target/release/ori]
"""

import argparse
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
PTXAS = "/work/oracle-tools/nvidia/cu13/bin/ptxas"
ACC = re.compile(r"^\tmov\.b32 \t%r(4[5-9][0-9]|50[0-9]|51[0-6]), ")  # %r453..%r516


def idx(L, pred, what):
    hits = [i for i, l in enumerate(L) if pred(l)]
    assert len(hits) == 1, (what, hits)
    return hits[0]


def variants(base):
    L = base.split("\n")
    out = {"base": L}
    br28 = idx(L, lambda l: l.strip() == "@%p28 bra \t$L__BB0_5;", "p28")
    a = list(L)
    a[br28] = "\tbra.uni \t$L__BB0_5;"
    out["a"] = a
    s = idx(L, lambda l: l.startswith("$L__BB0_1:"), "BB0_1")
    e = idx(L, lambda l: l.startswith("$L__BB0_6:"), "BB0_6")
    in_bb1 = lambda i: s < i < e
    out["b"] = [l for i, l in enumerate(L) if not (in_bb1(i) and ACC.match(l))]
    guard = idx(L, lambda l: l.strip().startswith("@%p6 bra"), "p6")
    blk = L[s:e]
    rest = L[:s] + L[e:]
    out["c"] = rest[:guard + 2] + blk + ["\tbra.uni \t$L__BB0_6;"] + rest[guard + 2:]
    exit_br = idx(L, lambda l: l.strip() == "bra.uni \t$L__BB0_6;", "exit")
    d = list(L)
    d[exit_br] = "\tbra.uni \t$L__XW;"
    d = d[:e] + ["\tbra.uni \t$L__BB0_6;", "$L__XW:", "\twgmma.wait_group.sync.aligned 0;",
                 "\tbra.uni \t$L__BB0_6;"] + d[e:]
    out["d"] = d
    movs = [l for i, l in enumerate(L) if in_bb1(i) and ACC.match(l)]
    keep = [l for i, l in enumerate(L) if not (in_bb1(i) and ACC.match(l))]
    g2 = idx(keep, lambda l: l.strip().startswith("@%p6 bra"), "p6'")
    ev = keep[:g2] + movs + keep[g2:]
    out["e"] = ev
    s2 = idx(ev, lambda l: l.startswith("$L__BB0_1:"), "BB0_1'")
    e2 = idx(ev, lambda l: l.startswith("$L__BB0_6:"), "BB0_6'")
    g3 = idx(ev, lambda l: l.strip().startswith("@%p6 bra"), "p6''")
    out["f"] = ev[:g3] + ev[s2 + 1:e2] + ev[g3:s2 + 1] + ev[e2:]
    # last st.shared of the copies %r234..%r297, then the bar.sync
    last = idx(L, lambda l: "st.shared.v4.b32" in l and "%r297}" in l, "last copy use")
    assert L[last + 1].strip().startswith("bar.sync")
    out["g"] = L[:last + 1] + ["\tmov.b32 \t%%r%d, 0;" % r for r in range(234, 298)] + L[last + 1:]
    return out


def codes(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    found = re.findall(r"\(C(75\d\d)\)(?:[^\n]*?around line (\d+))?", r.stdout + r.stderr)
    return " ".join(f"C{c}" + (f"@{l}" if l else "") for c, l in found) or "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ori", default=os.path.join(HERE, "..", "..", "target", "release", "ori"))
    ap.add_argument("--out", default="/tmp/triton2_probes")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(HERE, "accread_partial_fp16_64x128x64_s3_w4.ptx")) as f:
        base = f.read()
    print("| variant | ptxas 13.0.88 | ori |")
    print("| --- | --- | --- |")
    for name, lines in variants(base).items():
        p = os.path.join(args.out, f"{name}.ptx")
        with open(p, "w") as f:
            f.write("\n".join(lines))
        pt = codes([PTXAS, "-arch=sm_90a", p, "-o", os.path.join(args.out, f"{name}.cubin")])
        ori = codes([args.ori, "compile", p, "--message-format", "ptxas"])
        print(f"| {name} | {pt} | {ori} |")


if __name__ == "__main__":
    main()
