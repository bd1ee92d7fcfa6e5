#!/usr/bin/env python3
"""Generates tests/corpus/*.ptx (the committed cases are the plain files).

Usage: python3 xtask/gen_corpus.py          # (re)writes every generated case
Then:  cargo xtask oracle record            # records NAME.expected with real ptxas

Every case is one kernel `k` (plus helper functions where the case needs them),
opening with `//` comments saying what it probes. All accumulators are stored
to global memory at the end so that nothing is dead.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "corpus")

FENCE = "wgmma.fence.sync.aligned;"
COMMIT = "wgmma.commit_group.sync.aligned;"


def WAIT(n=0):
    return f"wgmma.wait_group.sync.aligned {n};"


# family -> (k, a-type.b-type suffix, default dtype, desc-A tail, reg-A tail)
FAM = {
    "f16": (16, "f16.f16", "f32", ", 1, 1, 0, 0", ", 1, 1, 0"),
    "bf16": (16, "bf16.bf16", "f32", ", 1, 1, 0, 0", ", 1, 1, 0"),
    "tf32": (8, "tf32.tf32", "f32", ", 1, 1", ", 1, 1"),
    "e4m3": (32, "e4m3.e4m3", "f32", ", 1, 1", ", 1, 1"),
    "e5m2": (32, "e5m2.e5m2", "f32", ", 1, 1", ", 1, 1"),
    "e4m3e5m2": (32, "e4m3.e5m2", "f32", ", 1, 1", ", 1, 1"),
    "s8": (32, "s8.s8", "s32", "", ""),
    "u8": (32, "u8.u8", "s32", "", ""),
    "s8u8": (32, "s8.u8", "s32", "", ""),
    "b1": (256, "b1.b1.and.popc", "s32", "", ""),
}


def nregs(n, dtype):
    return n // 4 if dtype == "f16" else n // 2


def regs(prefix, count, start=0):
    return [f"{prefix}{i}" for i in range(start, start + count)]


def mma(fam, n, dregs, a="a", b="b", scale="1", dtype=None, sat=False, shape=None):
    k, ab, dt, tail_desc, tail_reg = FAM[fam]
    dt = dtype or dt
    regA = a.startswith("{")
    tail = tail_reg if regA else tail_desc
    shape = shape or f"m64n{n}k{k}"
    satf = ".satfinite" if sat else ""
    return (
        f"wgmma.mma_async.sync.aligned.{shape}{satf}.{dt}.{ab} "
        f"{{{', '.join(dregs)}}}, {a}, {b}, {scale}{tail};"
    )


def init(rs, val="0f00000000"):
    return [f"mov.b32 {r}, {val};" for r in rs]


def stores(rs, base=0):
    return [f"st.global.b32 [ptr+{4 * (base + i)}], {r};" for i, r in enumerate(rs)]


HEAD = """.version 8.0
.target sm_90a
.address_size 64
"""

DECLS = """  .reg .f32 d<256>;
  .reg .f32 e<256>;
  .reg .b32 h<128>;
  .reg .s32 s<256>;
  .reg .b32 ra<8>;
  .reg .b32 r<16>;
  .reg .f32 f<16>;
  .reg .b64 a, b, a2, b2, ptr, t64;
  .reg .pred p<8>;
  ld.param.u64 ptr, [p_out];
  ld.param.u64 a, [p_da];
  ld.param.u64 b, [p_db];
  ld.param.u32 r15, [p_n];"""

PARAMS = ".param .u64 p_out, .param .u64 p_da, .param .u64 p_db, .param .u32 p_n"


def kernel(comment, body, flags=None, notcomp=None, pre="", name="k", target="sm_90a",
           version="8.0", extra_decls=""):
    lines = [f"// {c}" for c in comment.strip().splitlines()]
    if flags:
        lines.append(f"// oracle-flags: {flags}")
    if notcomp:
        lines.append(f"// skeleton: not-comparable: {notcomp}")
    head = HEAD.replace("sm_90a", target).replace("8.0", version)
    text = "\n".join(lines) + "\n" + head + "\n"
    if pre:
        text += pre.strip("\n") + "\n\n"
    text += f".visible .entry {name}({PARAMS})\n{{\n{DECLS}\n"
    if extra_decls:
        text += extra_decls.rstrip("\n") + "\n"
    for l in body:
        if l.endswith(":") and not l.startswith(" "):
            text += l + "\n"
        else:
            text += "  " + l + "\n"
    text += "  ret;\n}\n"
    return text


CASES = {}


def case(name, comment, body, **kw):
    assert name not in CASES, name
    CASES[name] = kernel(comment, body, **kw)


def raw(name, text):
    assert name not in CASES, name
    CASES[name] = text


# ---------------------------------------------------------------------------
# Clean pipelines per type family and N
# ---------------------------------------------------------------------------

def clean_single(fam, n, dtype=None, sat=False, two=True, regA=False):
    dt = dtype or FAM[fam][2]
    cnt = nregs(n, dt)
    pfx = {"f32": "d", "s32": "s", "f16": "h"}[dt]
    D = regs(pfx, cnt)
    a = "{ra0, ra1, ra2, ra3}" if regA else "a"
    body = []
    if regA:
        body += [f"ld.global.b32 ra{i}, [ptr+{4096 + 4 * i}];" for i in range(4)]
    body += init(D, "0" if dt != "f32" else "0f00000000")
    body += [FENCE, mma(fam, n, D, a=a, dtype=dtype, sat=sat)]
    if two:
        body += [mma(fam, n, D, a=a, dtype=dtype, sat=sat)]
    body += [COMMIT, WAIT(0)] + stores(D)
    return body


for fam, ns in {
    "f16": [8, 16, 64, 128, 256],
    "bf16": [8, 32, 128, 256],
    "tf32": [8, 24, 64, 256],
    "e4m3": [8, 64, 256],
    "e5m2": [16, 128],
    "e4m3e5m2": [32],
    "s8": [8, 64, 224],
    "u8": [16, 96],
    "b1": [8, 64, 256],
}.items():
    for n in ns:
        case(f"clean_{fam}_n{n}",
             f"Clean pipeline: fence, two {fam} m64n{n} wgmma on one accumulator set, commit, wait 0.\n"
             "Expect no messages.",
             clean_single(fam, n))

case("clean_s8u8_n48", "Clean mixed s8 x u8 pipeline (needs PTX ISA 8.4).",
     clean_single("s8u8", 48), version="8.4")
case("err_mixed_int_ptx80", "Error: mixed s8 x u8 wgmma under .version 8.0 (needs 8.4).",
     clean_single("s8u8", 48))
case("clean_f16_f16acc_n64", "Clean f16 pipeline with .f16 accumulators (f16x2 in b32 registers).",
     clean_single("f16", 64, dtype="f16"))
case("clean_f16_f16acc_n256", "Clean f16 pipeline with .f16 accumulators, n256 (64 b32 registers).",
     clean_single("f16", 256, dtype="f16"))
case("clean_e4m3_f16acc_n64", "Clean e4m3 pipeline with .f16 accumulators.",
     clean_single("e4m3", 64, dtype="f16"))
case("clean_s8_satfinite_n64", "Clean s8 pipeline with .satfinite.", clean_single("s8", 64, sat=True))
case("clean_u8_satfinite_n32", "Clean u8 pipeline with .satfinite.", clean_single("u8", 32, sat=True))
case("clean_single_mma_f16_n8", "Smallest clean pipeline: a single wgmma.",
     clean_single("f16", 8, two=False))
for fam in ["f16", "bf16", "tf32", "e4m3", "s8", "b1"]:
    case(f"clean_rega_{fam}_n64",
         f"Clean pipeline with A from registers ({fam}), A fragment loaded before the fence.",
         clean_single(fam, 64, regA=True))


exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_corpus_gmma.py")).read())


exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_corpus_renames.py")).read())
for _old, _new in RENAMES.items():
    assert _new not in CASES, _new
    CASES[_new] = CASES.pop(_old)


def write():
    os.makedirs(OUT, exist_ok=True)
    only = set(sys.argv[1:])
    for name, text in sorted(CASES.items()):
        if only and name not in only:
            continue
        with open(os.path.join(OUT, name + ".ptx"), "w") as f:
            f.write(text)
    print(f"wrote {len(CASES) if not only else len(only)} case(s) to {OUT}")


if __name__ == "__main__":
    write()
