"""What the PTX generators of tests/real's code-generator families share.

Each generator (gen_real_cutedsl.py, gen_real_quack.py, gen_real_tilelang.py,
gen_world_triton.py) knows how to turn one planned kernel into PTX; this
module runs the plan: every kernel made, optionally checked by ptxas
(-arch=sm_90a, a rejected kernel is dropped and reported), written as
NAME.ptx, and the family's manifest.tsv rewritten in the plan's order
(with --only, the other kernels' rows are kept). Standard library only.
"""

import os
import subprocess
import tempfile
import time


def ptxas_ok(ptxas, ptx):
    """(accepted, the tail of ptxas's stderr) for `ptx` compiled for sm_90a."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        with open(p, "w") as f:
            f.write(ptx)
        r = subprocess.run([ptxas, "-arch=sm_90a", p, "-o", os.path.join(d, "k.cubin")], capture_output=True,
                           text=True)
        return r.returncode == 0, r.stderr.strip()[-2000:]


def one_line(text, limit):
    return " ".join(str(text).split())[:limit]


def generate(todo, name_of, make, out, ptxas=None, why_limit=300):
    """Make each kernel of `todo` into out/NAME.ptx. `make(item)` returns
    (ptx, row): row is what the manifest is written from. Returns (rows,
    failed), failed as (name, why); a failure is reported and the run goes
    on."""
    rows, failed = [], []
    for i, item in enumerate(todo):
        name, at, t = name_of(item), f"[{i + 1}/{len(todo)}]", time.time()
        try:
            ptx, row = make(item)
        except Exception as e:  # noqa: BLE001 - report and go on
            failed.append((name, type(e).__name__ + ": " + one_line(e, why_limit)))
            print(f"{at} FAIL {name}: {failed[-1][1]}", flush=True)
            continue
        if ptxas:
            ok, err = ptxas_ok(ptxas, ptx)
            if not ok:
                failed.append((name, "ptxas: " + one_line(err, 300)))
                print(f"{at} PTXAS-REJECT {name}: {err[:300]}", flush=True)
                continue
        with open(os.path.join(out, name + ".ptx"), "w") as f:
            f.write(ptx)
        rows.append(row)
        print(f"{at} ok {name} ({len(ptx) // 1024} KiB, wgmma={ptx.count('wgmma.mma_async')}, "
              f"{time.time() - t:.1f}s)", flush=True)
    return rows, failed


def write_manifest(out, header, entries, plan_names, subset):
    """out/manifest.tsv: `header`, then a row per kernel in the plan's
    order. `entries` maps a name to its tab-separated row; with `subset`
    (an --only run) the rows already there for other kernels are kept."""
    man = os.path.join(out, "manifest.tsv")
    rows = {}
    if os.path.exists(man) and subset:
        with open(man) as f:
            next(f, None)
            for line in f:
                if line.strip():
                    rows[line.split("\t", 1)[0]] = line.rstrip("\n")
    rows.update(entries)
    order = {n: i for i, n in enumerate(plan_names)}
    with open(man, "w") as f:
        f.write(header + "\n")
        for n in sorted(rows, key=lambda n: order.get(n, 1 << 30)):
            f.write(rows[n] + "\n")


def print_failures(failed):
    for n, why in failed:
        print(f"FAILED\t{n}\t{why}")
