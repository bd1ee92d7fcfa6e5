#!/usr/bin/env python3
"""Probe: what `prmt.b32.{f4e,b4e,rc8,ecl,ecr,rc16}` give on the GPU for selectors 0..3.

Run on an sm_90 machine with ptxas and CuPy: prints `mode selector result` lines (hex),
with a = 0x44332211, b = 0x88776655; `prmt_modes.txt` holds the recorded output that
`ori-host`'s `bit_ops` test checks against.
"""
import os, shutil, subprocess, sys, tempfile

MODES = ["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]


def ptx():
    body = []
    for m, mode in enumerate(MODES):
        for s in range(4):
            k = 4 * m + s
            body.append(f"    prmt.b32.{mode} %r3, %r1, %r2, {s};\n    st.global.u32 [%rd1+{4 * k}], %r3;")
    return """.version 8.0
.target sm_90a
.address_size 64
.visible .entry probe(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.b32 %r1, 0x44332211;
    mov.b32 %r2, 0x88776655;
""" + "\n".join(body) + "\n    ret;\n}\n"


def main():
    import cupy as cp
    import numpy as np
    tmp = tempfile.mkdtemp()
    src, cubin = os.path.join(tmp, "p.ptx"), os.path.join(tmp, "p.cubin")
    open(src, "w").write(ptx())
    ptxas = os.environ.get("PTXAS") or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    subprocess.run([ptxas, "-arch=sm_90a", src, "-o", cubin], check=True)
    fn = cp.RawModule(path=cubin).get_function("probe")
    out = cp.zeros(4 * len(MODES), dtype=np.uint32)
    fn((1,), (1,), (out,))
    vals = out.get()
    for m, mode in enumerate(MODES):
        for s in range(4):
            print(f"{mode} {s} {vals[4 * m + s]:#010x}")


if __name__ == "__main__":
    main()
