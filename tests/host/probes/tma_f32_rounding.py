#!/usr/bin/env python3
"""Probe: what a TMA load leaves in shared memory for 32-bit float words, per
tensor-map element type: FLOAT32 (7), FLOAT32_FTZ (10), TFLOAT32 (11) and
TFLOAT32_FTZ (12) of the driver's CUtensorMapDataType.

The input is 512 words chosen to tell rounding modes apart (every low-13-bit
pattern around the tf32 halfway point, with the kept bit even and odd, both
signs; the overflow edge; subnormals; infinities and NaNs; zeros), then
random words. tma_f32_rounding.ptx loads them as one 32x16 box and copies
shared memory out unchanged.

Run on a machine with an sm_90a GPU, ptxas 13.0 and CuPy:

    python3 tests/host/probes/tma_f32_rounding.py > tests/host/probes/tma_f32_rounding.jsonl

Each output line: {"dtype": code, "input": [...hex words], "smem": [...hex words]}.
ori-host's tensor_map tests replay the kernel through the host backend and
require its words (tests/host_backend.rs).
"""
import ctypes, json, os, random, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs():
    words = []
    for sign in (0, 0x80000000):
        for kept in (0, 0x2000):
            for low in (0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF):
                words.append(sign | 0x3F800000 | 0x00554000 & ~0x3FFF | kept | low)
    words += [0x7F7FFFFF, 0x7F7FF000, 0x7F7FEFFF, 0xFF7FFFFF, 0x7F7FE000]
    words += [0x00000001, 0x00001000, 0x00001001, 0x00003000, 0x007FFFFF, 0x00400000,
              0x80000001, 0x807FFFFF, 0x00800000, 0x00801000, 0x00803000]
    words += [0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC00001, 0x7F800001, 0x7F801000,
              0x7FFFFFFF, 0xFFFFFFFF, 0x00000000, 0x80000000]
    rng = random.Random(90)
    while len(words) < 512:
        words.append(rng.getrandbits(32))
    return words


def tensor_map(lib, ptr, code):
    tm = (ctypes.c_uint8 * 128)()
    dims = (ctypes.c_uint64 * 2)(32, 16)
    strides = (ctypes.c_uint64 * 1)(128)
    box = (ctypes.c_uint32 * 2)(32, 16)
    es = (ctypes.c_uint32 * 2)(1, 1)
    # interleave none, swizzle none, L2 promotion none, out-of-bounds zero fill
    rc = lib.cuTensorMapEncodeTiled(tm, code, 2, ctypes.c_void_p(ptr), dims, strides, box, es, 0, 0, 0, 0)
    if rc != 0:
        sys.exit(f"cuTensorMapEncodeTiled(dtype {code}) failed ({rc})")
    return bytes(tm)


def main():
    import cupy as cp
    import numpy as np
    ptxas = os.environ.get("PTXAS") or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    tmp = tempfile.mkdtemp()
    cubin = os.path.join(tmp, "probe.cubin")
    subprocess.run([ptxas, "-arch=sm_90a", os.path.join(HERE, "tma_f32_rounding.ptx"), "-o", cubin], check=True)
    fn = cp.RawModule(path=cubin).get_function("tma_probe")
    lib = ctypes.CDLL("libcuda.so.1")
    words = inputs()
    src = cp.asarray(np.array(words, dtype=np.uint32))
    for code in (7, 10, 11, 12):
        out = cp.zeros(512, dtype=np.uint32)
        tm = np.frombuffer(tensor_map(lib, src.data.ptr, code),
                           dtype=np.dtype([("b", np.uint8, 128)], align=True))[0]
        fn((1,), (128,), (tm, out))
        cp.cuda.runtime.deviceSynchronize()
        print(json.dumps({"dtype": code, "input": [f"{w:08x}" for w in words],
                          "smem": [f"{int(w):08x}" for w in out.get()]}))


if __name__ == "__main__":
    main()
