#!/usr/bin/env python3
"""Record how Triton's launcher encodes each host tensor descriptor of the tma_host
kernels: the compiled kernel's `metadata.tensordesc_meta` (swizzle, element size and
type, block size) from the same `triton.compile` that wrote the committed PTX (checked:
the PTX must be byte-identical). Writes tensordesc_meta.json beside this file.

    /path/to/venv-with-triton-3.9/bin/python tests/host/triton/tensordesc_meta.py

cases.py encodes the descriptors for the host backend and the GPU from this file,
exactly as Triton's driver.py make_tensordesc_arg does.
"""
import json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "xtask"))
import gen_real_triton as g  # noqa: E402


def main():
    out = {}
    for spec in g.plan():
        if spec.fn is not g.tma_host_mm_kernel:
            continue
        k = g.compile_kernel(spec, 90)
        committed = open(os.path.join(REPO, "tests", "real", "triton39", spec.name + ".ptx")).read()
        if k.asm["ptx"] != committed:
            sys.exit(f"{spec.name}: the PTX differs from tests/real/triton39")
        out[spec.name] = k.metadata.tensordesc_meta
        print(spec.name, k.metadata.tensordesc_meta, flush=True)
    with open(os.path.join(HERE, "tensordesc_meta.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
