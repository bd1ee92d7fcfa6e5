#!/usr/bin/env python3
"""Compare ori with ptxas 13.0.88 on the held-out Triton kernels of this folder.

For every ``NAME.ptx`` here, the oracle data is ``NAME.ptxas.txt`` (stdout +
stderr of ``ptxas -arch=sm_90a NAME.ptx -o x.cubin``, ptxas 13.0.88) and
``NAME.sass_sync.txt`` (the ``GMMA|WARPGROUP`` lines of ``cuobjdump -sass``).
ori is run as ``ori compile NAME.ptx --message-format ptxas --emit sass``.

The columns follow ``crates/ori-oracle/src/compare.rs``:

* accepted: ori exits 0 (its front end took the file);
* messages: the same diagnostics in the same order, keyed by
  (severity, code, function), or (severity, text) for lines without a code;
* lines: the same sequence of (code, line) for the C7517/C7519 advisories;
* serialized: the same set of functions named by serialization codes;
* skeleton: the same GMMA skeleton (WARPGROUP.ARRIVE, ?GMMA shape + gsb0,
  WARPGROUP.DEPBAR.LE) -- informational only: ptxas unrolls and schedules
  loops, ori does neither.

Usage (from the repository root, after ``cargo build --release -p ori-cli``):

    python3 tests/triton2/compare_ori.py [--ori target/release/ori] [--json OUT.json]

To regenerate the oracle files (needs the local ptxas/cuobjdump 13.0):

    python3 tests/triton2/compare_ori.py --record-oracle
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE_BIN = "/work/oracle-tools/nvidia/cu13/bin"
ADVISORY = {7517, 7519}
SERIALIZATION = {7509, 7510, 7511, 7512, 7513, 7514, 7515, 7516, 7518, 7520}
SEVERITIES = {"info": "info", "warning": "warning", "error": "error", "fatal": "fatal"}


def parse_message(line):
    """Port of ori_oracle::parse_message: (severity, code, function, line, text) or None."""
    line = line.strip()
    rest = line[len("ptxas"):].lstrip() if line.startswith("ptxas") else line
    loc_line = None
    semi = rest.find(";")
    if semi >= 0:
        head = rest[:semi]
        comma = head.rfind(", line ")
        if comma >= 0:
            try:
                loc_line = int(head[comma + len(", line "):].strip())
                rest = rest[semi + 1:].lstrip()
            except ValueError:
                pass
    colon = rest.find(":")
    if colon < 0:
        return None
    sev = SEVERITIES.get(rest[:colon].strip())
    if sev is None:
        return None
    text = rest[colon + 1:].strip()
    code = None
    m = re.match(r"\(C(\d+)\)\s*", text)
    if m:
        code = int(m.group(1))
        text = text[m.end():]
    fm = re.findall(r"function '([^']*)'", text)
    function = fm[-1] if fm else None
    if loc_line is None:
        lm = re.search(r"around line (\d+)", text)
        loc_line = int(lm.group(1)) if lm else None
    return {"severity": sev, "code": code, "function": function, "line": loc_line, "text": text}


def key(m):
    if m["code"] is not None:
        return f"{m['severity']} C{m['code']} function={m['function'] or '-'}"
    return f"{m['severity']}: {m['text']}"


def skeleton_line(line):
    """Port of ori_oracle::skeleton_line."""
    s = line.strip()
    if s.startswith("/*"):
        end = s.find("*/")
        if end < 0:
            return None
        inner = s[2:end]
        if not inner or not all(c in "0123456789abcdefABCDEF" for c in inner):
            return None
        s = s[end + 2:].lstrip()
    pos = s.find("/*")
    if pos >= 0:
        s = s[:pos]
    s = s.strip().rstrip(";").strip()
    if not s:
        return None
    guard = None
    if s.startswith("@"):
        parts = s.split(None, 1)
        guard, s = parts[0], (parts[1] if len(parts) > 1 else "")
    parts = s.split(None, 1)
    if not parts:
        return None
    opcode = parts[0]
    operands = parts[1].strip() if len(parts) > 1 else ""
    base = opcode.split(".")[0]
    if opcode == "WARPGROUP.ARRIVE":
        kept = opcode
    elif opcode == "WARPGROUP.DEPBAR.LE":
        ops = [o.strip() for o in operands.split(",") if o.strip()]
        kept = f"{opcode} {', '.join(ops)}"
    elif base in ("HGMMA", "IGMMA", "QGMMA", "BGMMA"):
        toks = re.split(r"[,\s]+", operands)
        kept = f"{opcode} gsb0" if "gsb0" in toks else opcode
    else:
        return None
    return f"{guard} {kept}" if guard else kept


def skeleton(text):
    return [k for k in (skeleton_line(l) for l in text.splitlines()) if k is not None]


def record_oracle(names):
    for n in names:
        ptx = os.path.join(HERE, n + ".ptx")
        cubin = f"/tmp/triton2_{n}.cubin"
        r = subprocess.run([os.path.join(ORACLE_BIN, "ptxas"), "-arch=sm_90a", ptx, "-o", cubin],
                           capture_output=True, text=True)
        with open(os.path.join(HERE, n + ".ptxas.txt"), "w") as f:
            f.write(r.stdout + r.stderr)
        d = subprocess.run([os.path.join(ORACLE_BIN, "cuobjdump"), "-sass", cubin],
                           capture_output=True, text=True)
        lines = [l for l in d.stdout.splitlines() if re.search(r"GMMA|WARPGROUP", l)]
        with open(os.path.join(HERE, n + ".sass_sync.txt"), "w") as f:
            f.write("".join(l + "\n" for l in lines))
        print(f"recorded {n}: ptxas rc={r.returncode}")


def compare_one(ori, name):
    ptx = os.path.join(HERE, name + ".ptx")
    with open(os.path.join(HERE, name + ".ptxas.txt")) as f:
        exp_lines = f.read().splitlines()
    with open(os.path.join(HERE, name + ".sass_sync.txt")) as f:
        exp_skel = skeleton(f.read())
    r = subprocess.run([ori, "compile", ptx, "--message-format", "ptxas", "--emit", "sass"],
                       capture_output=True, text=True, timeout=600)
    em = [m for m in (parse_message(l) for l in exp_lines) if m]
    om = [m for m in (parse_message(l) for l in r.stderr.splitlines()) if m]
    ek, ok = [key(m) for m in em], [key(m) for m in om]
    adv = lambda ms: [(m["code"], m["line"]) for m in ms if m["code"] in ADVISORY]
    ser = lambda ms: sorted({m["function"] or "" for m in ms if m["code"] in SERIALIZATION})
    obs_skel = skeleton(r.stdout) if r.returncode == 0 else []
    return {
        "name": name,
        "ori_exit": r.returncode,
        "accepted": r.returncode == 0,
        "ptxas_messages": [l for l in exp_lines if parse_message(l)],
        "ori_messages": [l for l in r.stderr.splitlines() if l.strip()],
        "messages_agree": ek == ok,
        "lines_agree": adv(em) == adv(om),
        "serialized_agree": ser(em) == ser(om),
        "ptxas_serialized": ser(em),
        "ori_serialized": ser(om),
        "ptxas_codes": [f"C{m['code']}" + (f"@{m['line']}" if m["line"] else "") for m in em if m["code"]],
        "ori_codes": [f"C{m['code']}" + (f"@{m['line']}" if m["line"] else "") for m in om if m["code"]],
        "skeleton_agree": exp_skel == obs_skel,
        "ptxas_skeleton_len": len(exp_skel),
        "ori_skeleton_len": len(obs_skel),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ori", default=os.path.join(HERE, "..", "..", "target", "release", "ori"))
    ap.add_argument("--json", default=None, help="write the per-kernel results here")
    ap.add_argument("--record-oracle", action="store_true",
                    help="rerun the local ptxas 13.0.88 + cuobjdump and rewrite *.ptxas.txt / *.sass_sync.txt")
    args = ap.parse_args()
    names = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(HERE, "*.ptx")))
    if args.record_oracle:
        record_oracle(names)
        return 0
    rows = [compare_one(args.ori, n) for n in names]
    yn = lambda b: "yes" if b else "**no**"
    print("| kernel | ori accepted | messages agree | lines agree | serialized agree | skeleton agree | ptxas | ori |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['name']} | {yn(r['accepted'])} | {yn(r['messages_agree'])} | {yn(r['lines_agree'])} | "
              f"{yn(r['serialized_agree'])} | {'yes' if r['skeleton_agree'] else 'no'} "
              f"({r['ptxas_skeleton_len']}/{r['ori_skeleton_len']}) | "
              f"{' '.join(r['ptxas_codes']) or '–'} | {' '.join(r['ori_codes']) or '–'} |")
    tot = lambda k: sum(1 for r in rows if r[k])
    print(f"\n{len(rows)} kernels: accepted {tot('accepted')}, messages {tot('messages_agree')}, "
          f"lines {tot('lines_agree')}, serialized {tot('serialized_agree')}, skeleton {tot('skeleton_agree')}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if all(r["accepted"] and r["messages_agree"] and r["lines_agree"] and r["serialized_agree"]
                    for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
