#!/usr/bin/env python3
"""Plant one bug in each of a list of real kernels of the corpus, for the
sanitizer's benchmark (tests/sanitizer_bench.rs, docs/sanitizer.md).

Each bug is a text mutation of the committed PTX that keeps every line
number: the line a bug removes becomes a comment, a line it changes stays
where it was. The script writes the mutated kernels to planted/NAME.ptx and
planted.tsv, one row per kernel: its name, the cases.tsv row (or probe) that
launches it, the mutated PTX, the bug, whether it runs through ori's passes,
and what the sanitizer must report: the hazard kinds accepted (or the
fault), the lines accepted for the access that finds it and for the other
access (`*`: any). The lines are computed here from the PTX, never from a
run of ori.

    python3 tests/sanitizer/plant.py      # from the repository root
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/sanitizer/planted"


def lines_matching(lines, pattern):
    rx = re.compile(pattern)
    return [k + 1 for k, l in enumerate(lines) if rx.search(l.split("//")[0])]


def comment(lines, n, what):
    """Line n (1-based) removed: a comment in its place."""
    lines[n - 1] = f"\t// planted: removed `{lines[n - 1].strip()}` ({what})"


def loop_barriers(lines):
    """The `bar.sync 0` of the main loop that orders the landed cp.async
    tiles before the wgmma (followed by a fence or wgmma.fence within a few
    lines), and the one before the loop refills a stage (followed by a
    cp.async)."""
    before_mma, before_refill = None, None
    for n in lines_matching(lines, r"^\s*bar\.sync\s+0;"):
        after = "\n".join(lines[n : n + 12])
        if before_mma is None and re.search(r"fence\.proxy\.async|wgmma\.fence", after):
            if any("cp.async.wait_group" in l for l in lines[n - 4 : n - 1]):
                before_mma = n
        elif before_mma is not None and before_refill is None:
            # The next barrier of the loop, with the refill's copies after it.
            if "cp.async.cg" in "\n".join(lines[n : n + 60]):
                before_refill = n
    return before_mma, before_refill


def accumulators(line):
    m = re.search(r"wgmma\.mma_async[^{]*\{([^}]*)\}", line)
    return [r.strip() for r in m.group(1).split(",")] if m else []


def first_use_after(lines, n, regs):
    rx = re.compile(r"(?<![\w%])(" + "|".join(re.escape(r) for r in regs) + r")(?!\w)")
    for k in range(n, len(lines)):
        code = lines[k].split("//")[0]
        if rx.search(code):
            return k + 1
    return None


def bar_before_mma(lines):
    b, _ = loop_barriers(lines)
    comment(lines, b, "the barrier between the landed cp.async tiles and the wgmma")
    return ("data-race", set(lines_matching(lines, r"wgmma\.mma_async")),
            set(lines_matching(lines, r"cp\.async\.c[ag]\.")))


def bar_before_refill(lines):
    _, b = loop_barriers(lines)
    wait = [l for l in lines[b - 8 : b] if "wgmma.wait_group" in l]
    if not (wait and wait[-1].split("//")[0].strip().endswith("aligned 1;")):
        sys.exit("rm-bar-before-refill: the loop's wgmma.wait_group before the barrier is not 1")
    comment(lines, b, "the barrier between the wgmma reads of a stage and its refill")
    return ("data-race", set(lines_matching(lines, r"cp\.async\.c[ag]\.")),
            set(lines_matching(lines, r"wgmma\.mma_async")))


def proxy_fence(lines):
    b, _ = loop_barriers(lines)
    f = next(n for n in range(b, b + 12) if "fence.proxy.async" in lines[n - 1])
    comment(lines, f, "the proxy fence between the landed cp.async tiles and the wgmma")
    return ("unfenced-async-copy", set(lines_matching(lines, r"wgmma\.mma_async")),
            set(lines_matching(lines, r"cp\.async\.c[ag]\.")))


def last_wgmma_wait(lines):
    waits = lines_matching(lines, r"wgmma\.wait_group\.sync\.aligned\s+0;")
    w = waits[-1]
    mmas = [n for n in lines_matching(lines, r"wgmma\.mma_async") if n < w]
    regs = accumulators(lines[mmas[-1] - 1])
    comment(lines, w, "the wgmma.wait_group 0 before the epilogue reads the accumulators")
    use = first_use_after(lines, w, regs)
    return ("wgmma-in-flight", {use}, set(mmas))


def mbarrier_wait(lines, k=0):
    """The k-th consumer wait on a TMA load's mbarrier becomes "done"."""
    waits = lines_matching(lines, r"mbarrier\.try_wait\.parity\.shared::cta\.b64\s+\w+,")
    n = waits[k]
    pred = re.search(r"b64\s+(%?\w+),", lines[n - 1]).group(1)
    lines[n - 1] = f"\tmov.pred {pred}, -1; // planted: was `{lines[n - 1].strip()}`"
    return ("tma-not-ready", set(lines_matching(lines, r"wgmma\.mma_async|ld\.shared")),
            set(lines_matching(lines, r"cp\.async\.bulk\.tensor")))


def wrong_parity(lines, k=0):
    """The k-th parity wait waits for the other parity."""
    waits = lines_matching(lines, r"mbarrier\.try_wait\.parity\.shared::cta\.b64\s+\w+,")
    n = waits[k]
    old = lines[n - 1]
    m = re.search(r"\],\s*(%?\w+);", old)
    parity = m.group(1)
    new = f"not.b32 {parity}, {parity}; " + old.strip() + f" not.b32 {parity}, {parity};"
    # One line: flip, wait, flip back (the line number stays).
    lines[n - 1] = "\t" + new + " // planted: the other parity"
    # Depending on whether the phase completed before the wait looked, the
    # wait passes too early (a read of the tile before its load) or never
    # (a deadlock there).
    return ("tma-not-ready|parity-aliased|deadlock",
            set(lines_matching(lines, r"wgmma\.mma_async|ld\.shared|mbarrier\.try_wait")), "*")


def wrong_expect_tx(lines, k=0):
    """The k-th arrive.expect_tx expects 16 bytes more than its loads bring."""
    arrives = lines_matching(lines, r"mbarrier\.arrive\.expect_tx\.shared::cta\.b64\s+_,\s*\[[^\]]+\],\s*\d+;")
    n = arrives[k]
    old = lines[n - 1]
    lines[n - 1] = re.sub(r"(\d+);", lambda m: f"{int(m.group(1)) + 16};", old) + " // planted: 16 bytes too many"
    return ("deadlock", set(lines_matching(lines, r"mbarrier\.try_wait")), "*")


def cluster_wait(lines):
    """The probe's wait for the peer's remote arrivals (its st.shared::cluster
    into this CTA's smem_b) becomes "done": the read of smem_b races with the
    peer's remote store."""
    n = lines_matching(lines, r"mbarrier\.try_wait\.parity\.acquire\.cluster")[0]
    pred = re.search(r"b64\s+(%?\w+),", lines[n - 1]).group(1)
    lines[n - 1] = f"\tmov.pred {pred}, -1; // planted: was `{lines[n - 1].strip()}`"
    pair = set(lines_matching(lines, r"st\.shared::cluster")) | {n + 2}
    return ("data-race", pair, pair)


BUGS = {
    "rm-bar-before-mma": bar_before_mma,
    "rm-bar-before-refill": bar_before_refill,
    "rm-proxy-fence": proxy_fence,
    "rm-wgmma-wait": last_wgmma_wait,
    "rm-mbarrier-wait": mbarrier_wait,
    "wrong-parity": wrong_parity,
    "wrong-expect-tx": wrong_expect_tx,
    "cluster-race": cluster_wait,
}

# (cases.tsv row or probe, bug). Kernels the host backend runs with known
# launch arguments; each at most once per bug.
PLANTS = [
    *[(f"triton39_mm_{k}", "rm-bar-before-mma") for k in [
        "f16_128x128x64_s3_w4", "f16_128x256x64_s3_w8", "bf16_64x128x64_s4_w4",
        "tf32_128x64x32_s4_w4", "e4m3_128x128x128_s3_w4_bt", "i8_128x128x64_s3_w4_bt",
        "f16acc_64x64x64_s3_w4", "f16_64x32x32_s5_w4"]],
    # Two warpgroups, a wgmma left in flight over the refill (wait_group 1)
    # and more K tiles than stages: then the other warpgroup may still read
    # the stage refilled (with one warpgroup, its own wait completes the
    # reads; with wait_group 0 or a single K tile there is nothing to race).
    *[(f"triton39_mm_{k}", "rm-bar-before-refill") for k in [
        "f16_256x128x64_s3_w8", "bf16_128x256x64_s3_w8", "tf32_128x256x32_s3_w8",
        "f16_128x256x32_s3_w8", "bf16_128x128x32_s5_w8", "f16_128x128x64_s4_w8",
        "bf16_256x128x64_s3_w8", "tf32_128x128x16_s4_w8"]],
    *[(f"triton39_mm_{k}", "rm-proxy-fence") for k in [
        "f16_64x128x32_s4_w4", "bf16_128x256x64_s3_w8", "tf32_64x64x32_s4_w4", "e4m3_64x128x64_s4_w4_bt"]],
    *[(f"triton39_mm_{k}", "rm-wgmma-wait") for k in [
        "f16_128x64x32_s4_w4", "bf16_128x64x64_s4_w4", "f16_128x128x64_s4_w8", "tf32_128x256x32_s3_w8"]],
    *[(f"triton39_{k}", "rm-mbarrier-wait") for k in [
        "tma_device_f16_64x64x64_s4_w4", "tma_host_f16_128x128x64_s3_w4_bt", "tma_host_bf16_128x128x64_s4_w4"]],
    *[(f"triton39_{k}", "wrong-parity") for k in [
        "tma_device_f16_128x128x64_s3_w4_bt", "tma_host_f16_64x128x64_s4_w4"]],
    *[(f"triton39_{k}", "wrong-expect-tx") for k in [
        "tma_device_f16_128x256x64_s3_w8", "tma_host_e4m3_128x128x128_s3_w4_bt"]],
    ("probe_cluster_dsmem", "cluster-race"),
]


def main():
    cases = {}
    for row in (ROOT / "tests/host/triton/cases.tsv").read_text().splitlines()[1:]:
        f = row.split("\t")
        cases[f[0]] = f[1]
    cases["probe_cluster_dsmem"] = "tests/host/probes/cluster_dsmem.ptx"
    OUT.mkdir(parents=True, exist_ok=True)
    rows = ["name\tbase\tptx\tbug\tpasses\texpect\tlines\tother_lines"]
    for base, bug in PLANTS:
        ptx = cases.get(base)
        if ptx is None:
            sys.exit(f"no case {base}")
        lines = (ROOT / ptx).read_text().split("\n")
        kind, at, other = BUGS[bug](lines)
        name = f"{bug}__{base}"
        out = OUT / f"{name}.ptx"
        out.write_text("\n".join(lines))
        fmt = lambda s: s if s == "*" else ",".join(str(n) for n in sorted(s))
        passes = "no" if bug == "rm-wgmma-wait" else "yes"
        rows.append("\t".join([name, base, str(out.relative_to(ROOT)), bug, passes, kind, fmt(at), fmt(other)]))
    (ROOT / "tests/sanitizer/planted.tsv").write_text("\n".join(rows) + "\n")
    print(f"{len(rows) - 1} kernels planted")


if __name__ == "__main__":
    main()
