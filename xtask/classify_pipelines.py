#!/usr/bin/env python3
"""Classify where ori's phase-87 messages differ from ptxas's on recorded cases.

Each case's `.expected` (ptxas 13.0.88) is compared, function by function, with what
`ori compile --message-format ptxas` prints for its `.ptx` (with the header's
`// oracle-flags:`, as `cargo xtask oracle check` runs it). A case falls in the first class
that fits, in the order of CLASSES: whether each function is serialized, then the
serialization's code, then the advisories (C7519 arrives, C7517 waits) printed before it.
The advisories are compared as (code, function, line) items: ori printing a superset of
ptxas's ("extra"), a subset ("missing"), the same items in another order, or both extra and
missing ones ("mixed").

    python3 xtask/classify_pipelines.py [--ori PATH] [--list CLASS | --pairs] DIR...

prints a table of classes with counts (Markdown); --list CLASS, the cases of one class;
--pairs, the cases whose serialization differs grouped by ptxas's and ori's serialization
messages, as (function, code) sets.
"""
import argparse
import collections
import pathlib
import re
import subprocess
import sys

MSG = re.compile(r"^ptxas (info|warning|error) *: \((C\d+)\) (.*)$")
LINE = re.compile(r"around line (\d+)")
FUNC = re.compile(r"function '([^']*)'")
ADVISORIES = {"C7519", "C7517"}

CLASSES = [
    ("agree", "messages agree"),
    ("ser-missing", "ptxas serializes a function ori does not"),
    ("ser-extra", "ori serializes a function ptxas does not"),
    ("ser-code", "both serialize, with another code"),
    ("adv-extra-before-ser", "same serialization; ori prints extra advisories"),
    ("adv-missing-before-ser", "same serialization; ori misses advisories"),
    ("adv-mixed-before-ser", "same serialization; advisories both extra and missing"),
    ("adv-order-before-ser", "same serialization; same advisories in another order"),
    ("adv-extra", "no serialization; ori prints extra advisories"),
    ("adv-missing", "no serialization; ori misses advisories"),
    ("adv-mixed", "no serialization; advisories both extra and missing"),
    ("adv-order", "no serialization; same advisories in another order"),
    ("other", "other messages differ"),
]


def parse(lines):
    """Messages as (code, function, line) in the order printed."""
    out = []
    for text in lines:
        m = MSG.match(text.strip())
        if not m:
            continue
        f = FUNC.search(m.group(3))
        ln = LINE.search(m.group(3))
        out.append((m.group(2), f.group(1) if f else None, int(ln.group(1)) if ln else None))
    return out


def expected_messages(path):
    lines, on = [], False
    for text in path.read_text().splitlines():
        if text.startswith("messages:"):
            on = True
        elif on and not text.startswith("ptxas"):
            break
        elif on:
            lines.append(text)
    return parse(lines)


def oracle_flags(ptx):
    """The `// oracle-flags:` of the case's header, given to ori as ptxas got them."""
    flags = []
    for text in ptx.read_text().splitlines()[:30]:
        if not text.startswith("//"):
            break
        if text[2:].strip().startswith("oracle-flags:"):
            flags += text.split(":", 1)[1].split()
    return flags


def ori_messages(ori, ptx):
    r = subprocess.run(
        [ori, "compile", ptx.name, "--message-format", "ptxas", "--emit", "sass"]
        + oracle_flags(ptx),
        cwd=ptx.parent, capture_output=True, text=True, check=False,
    )
    return parse(r.stderr.splitlines())


def serialized(msgs):
    return {(f, c) for c, f, _ in msgs if c not in ADVISORIES}


def show(ser):
    return " ".join(f"{f} {c}" for f, c in sorted(ser)) or "-"


def classify(exp, obs):
    if exp == obs:
        return "agree"
    se, so = serialized(exp), serialized(obs)
    fe, fo = {f for f, _ in se}, {f for f, _ in so}
    if fe - fo:
        return "ser-missing"
    if fo - fe:
        return "ser-extra"
    if se != so:
        return "ser-code"
    ae = [m for m in exp if m[0] in ADVISORIES]
    ao = [m for m in obs if m[0] in ADVISORIES]
    ce, co = collections.Counter(ae), collections.Counter(ao)
    tail = "-before-ser" if se else ""
    if ce == co:
        return ("adv-order" + tail) if ae != ao else "other"
    if not (ce - co):
        return "adv-extra" + tail
    if not (co - ce):
        return "adv-missing" + tail
    return "adv-mixed" + tail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ori", default=str(pathlib.Path(__file__).parent.parent / "target/release/ori"))
    ap.add_argument("--list", metavar="CLASS")
    ap.add_argument("--pairs", action="store_true")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    found = collections.defaultdict(list)
    pairs = collections.defaultdict(list)
    for d in a.dirs:
        for exp in sorted(pathlib.Path(d).glob("*.expected")):
            ptx = exp.with_suffix(".ptx")
            e, o = expected_messages(exp), ori_messages(a.ori, ptx)
            key = classify(e, o)
            found[key].append(str(ptx.with_suffix("")))
            if key.startswith("ser-"):
                pairs[(key, show(serialized(e)), show(serialized(o)))].append(ptx.stem)
    if a.pairs:
        print("| class | ptxas | ori | cases | e.g. |\n|---|---|---|---:|---|")
        for (key, e, o), v in sorted(pairs.items(), key=lambda kv: -len(kv[1])):
            print(f"| {key} | {e} | {o} | {len(v)} | {', '.join(v[:3])} |")
        return
    if a.list:
        print("\n".join(found[a.list]))
        return
    total = sum(len(v) for v in found.values())
    print("| class | meaning | cases |\n|---|---|---:|")
    for key, meaning in CLASSES:
        print(f"| {key} | {meaning} | {len(found[key])} |")
    print(f"| **all** | | {total} |")


if __name__ == "__main__":
    sys.exit(main())
