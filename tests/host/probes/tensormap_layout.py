#!/usr/bin/env python3
"""Probe: the bytes of the 128-byte CUtensorMap that the driver's
cuTensorMapEncodeTiled writes, over a sweep of every parameter.

Run on a machine with an NVIDIA driver (any GPU; CuPy only creates the context):

    python3 tests/host/probes/tensormap_layout.py > tensormap_layout.jsonl

Each line: the parameters and the 128 bytes (hex). From a base map, one parameter
changes at a time, so that a diff of two lines shows where that parameter lives
(ori-host's tensor_map.rs decodes the layout these lines establish, and its tests
re-encode every line).
"""
import ctypes, json, sys

BASE = dict(dtype=6, rank=2, addr=0x7f0000000000, dims=[1024, 512], strides=[2048],
            box=[64, 128], estrides=[1, 1], interleave=0, swizzle=3, l2=2, oob=0)


def encode(lib, p):
    tm = (ctypes.c_uint8 * 128)()
    r = p["rank"]
    dims = (ctypes.c_uint64 * 5)(*p["dims"])
    strides = (ctypes.c_uint64 * 5)(*p["strides"])
    box = (ctypes.c_uint32 * 5)(*p["box"])
    es = (ctypes.c_uint32 * 5)(*p["estrides"])
    rc = lib.cuTensorMapEncodeTiled(tm, p["dtype"], r, ctypes.c_void_p(p["addr"]), dims, strides,
                                    box, es, p["interleave"], p["swizzle"], p["l2"], p["oob"])
    return rc, bytes(tm).hex()


def variants():
    yield dict(BASE)
    for dt in range(13):
        yield dict(BASE, dtype=dt)
    for a in [0x7f0000000010, 0x7f0000000100, 0x7f0000010000, 0x100000000, 0x12345670, 0x7ffffffffff0]:
        yield dict(BASE, addr=a)
    for d0 in [1, 2, 3, 64, 65, 1000, 65536, 1 << 20, (1 << 32)]:
        yield dict(BASE, dims=[d0, 512])
    for d1 in [1, 2, 7, 4096, 1 << 20]:
        yield dict(BASE, dims=[1024, d1])
    for s in [16, 32, 2064, 4096, 1 << 20, 1 << 36]:
        yield dict(BASE, strides=[s])
    for b0 in [8, 16, 32, 256]:
        yield dict(BASE, box=[b0, 128], swizzle=0)
    for b1 in [1, 2, 64, 256]:
        yield dict(BASE, box=[64, b1])
    for e in [[2, 1], [1, 2], [8, 1], [1, 8], [3, 5]]:
        yield dict(BASE, estrides=e)
    for sw in range(4):
        yield dict(BASE, swizzle=sw, box=[16, 128])
    for l2 in range(4):
        yield dict(BASE, l2=l2)
    for oob in range(2):
        yield dict(BASE, oob=oob)
    for il in range(3):
        yield dict(BASE, interleave=il, swizzle=0, box=[8, 128])
    for rank in range(1, 6):
        yield dict(BASE, rank=rank, dims=[256, 3, 5, 7, 9][:rank],
                   strides=[512, 1536, 7680, 53760][:rank - 1],
                   box=[64, 2, 3, 4, 5][:rank], estrides=[1, 1, 1, 1, 1][:rank])
    yield dict(BASE, rank=5, dims=[256, 3, 5, 7, 9], strides=[512, 1536, 7680, 53760],
               box=[32, 2, 3, 4, 5], estrides=[1, 2, 3, 4, 1])
    yield dict(BASE, dtype=7, dims=[100, 200], strides=[400], box=[32, 16])
    yield dict(BASE, dtype=0, dims=[1000, 10], strides=[1008], box=[128, 4], swizzle=3)


def main():
    import cupy as cp
    cp.cuda.runtime.getDeviceCount()
    cp.zeros(1)  # a context
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuTensorMapEncodeTiled.restype = ctypes.c_int
    for p in variants():
        rc, hexbytes = encode(lib, p)
        print(json.dumps(dict(p, rc=rc, bytes=hexbytes)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
