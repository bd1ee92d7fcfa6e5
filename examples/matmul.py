#!/usr/bin/env python3
"""Inputs for, and a check of, the README's `ori run` example.

The example runs a Triton 3.9 matmul (tests/real/triton39/mm_f16_64x32x32_s5_w4.ptx:
C = A @ B, f16 in and out, 64x32 tiles) over a 128x128x128 problem on the CPU.

    python3 examples/matmul.py inputs DIR   # writes DIR/a.npy and DIR/b.npy (f16, 128x128)
    python3 examples/matmul.py check DIR    # compares DIR/c.npy with A @ B; exit 1 if it differs

Standard library only (no NumPy needed): .npy version 1.0, little-endian f16.
"""
import random
import struct
import sys
from pathlib import Path

N = 128


def write_npy(path, values):
    header = "{'descr': '<f2', 'fortran_order': False, 'shape': (%d, %d), }" % (N, N)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    data = struct.pack("<%de" % len(values), *values)
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def read_npy(path):
    raw = path.read_bytes()
    if raw[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    (hlen,) = struct.unpack("<H", raw[8:10])
    header = raw[10 : 10 + hlen].decode()
    if "'<f2'" not in header:
        sys.exit(f"{path}: expected f16 data, header {header.strip()}")
    body = raw[10 + hlen :]
    return list(struct.unpack("<%de" % (len(body) // 2), body))


def inputs(out):
    rng = random.Random(0)
    # Small integers: every product and sum is exact in f16 and f32, so the
    # CPU's answer and the GPU's are the same bits.
    for name in "ab":
        write_npy(out / f"{name}.npy", [float(rng.randint(-3, 3)) for _ in range(N * N)])
    print(f"wrote {out}/a.npy and {out}/b.npy: f16, {N}x{N}")


def check(out):
    a, b, c = (read_npy(out / f"{n}.npy") for n in "abc")
    worst = 0.0
    for i in range(N):
        for j in range(N):
            ref = sum(a[i * N + k] * b[k * N + j] for k in range(N))
            worst = max(worst, abs(c[i * N + j] - ref))
    print(f"C = A @ B over {N}x{N}x{N}: max |C - reference| = {worst}")
    sys.exit(0 if worst == 0.0 else 1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("inputs", "check"):
        sys.exit(__doc__)
    d = Path(sys.argv[2])
    d.mkdir(parents=True, exist_ok=True)
    (inputs if sys.argv[1] == "inputs" else check)(d)
