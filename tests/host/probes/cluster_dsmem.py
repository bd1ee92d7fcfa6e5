#!/usr/bin/env python3
"""Probe: thread-block clusters of 2 CTAs on the GPU, for the host backend's
cluster support (tests/host_backend.rs replays it).

cluster_dsmem.ptx (clusters of 2 by `.reqnctapercluster`, 4 CTAs of 128
threads) reads and writes its peer's shared memory (`mapa`,
`ld/st/red.shared::cluster`), arrives on the peer's mbarrier, meets at
`barrier.cluster`, reads the cluster special registers and receives one
TMA multicast load (rank 0 issues it with ctaMask 0b11). What it writes
is the ground truth.

Run on a machine with an sm_90a GPU (the CUDA driver only; no CuPy):

    python3 tests/host/probes/cluster_dsmem.py CUBIN > tests/host/probes/cluster_dsmem.json

CUBIN is `ptxas -arch=sm_90a cluster_dsmem.ptx` (ptxas 13.0.88, built
where the toolkit is). The JSON holds the GPU's name, the input words and
the device address they were at, the tensor map the driver encoded for
them (128 bytes, hex) and the output words. The kernel runs twice; both
outputs must be the same.
"""
import ctypes
import json
import sys

ROWS, COLS, CTAS = 64, 16, 4
OUT_WORDS = 1024 * CTAS


def check(rc, what):
    if rc != 0:
        sys.exit(f"{what} failed ({rc})")


def main():
    cubin = open(sys.argv[1], "rb").read()
    cu = ctypes.CDLL("libcuda.so.1")
    check(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    name = ctypes.create_string_buffer(256)
    cu.cuDeviceGetName(name, 256, dev)
    ctx = ctypes.c_void_p()
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    mod = ctypes.c_void_p()
    check(cu.cuModuleLoadData(ctypes.byref(mod), cubin), "cuModuleLoadData")
    fn = ctypes.c_void_p()
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"cluster_probe"), "cuModuleGetFunction")
    words = [(i * 2654435761 + 12345) & 0xFFFFFFFF for i in range(ROWS * COLS)]
    src = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(src), 4 * len(words)), "cuMemAlloc")
    host_in = (ctypes.c_uint32 * len(words))(*words)
    check(cu.cuMemcpyHtoD_v2(src, host_in, 4 * len(words)), "cuMemcpyHtoD")
    tm = (ctypes.c_uint8 * 128)()
    dims = (ctypes.c_uint64 * 2)(COLS, ROWS)
    strides = (ctypes.c_uint64 * 1)(4 * COLS)
    box = (ctypes.c_uint32 * 2)(16, 16)
    es = (ctypes.c_uint32 * 2)(1, 1)
    # UINT32 (2); interleave none, swizzle none, L2 promotion none, zero fill
    check(cu.cuTensorMapEncodeTiled(tm, 2, 2, ctypes.c_void_p(src.value), dims, strides, box, es,
                                    0, 0, 0, 0), "cuTensorMapEncodeTiled")
    outs = []
    for _ in range(2):
        out = ctypes.c_uint64()
        check(cu.cuMemAlloc_v2(ctypes.byref(out), 4 * OUT_WORDS), "cuMemAlloc")
        check(cu.cuMemsetD8_v2(out, 0, 4 * OUT_WORDS), "cuMemsetD8")
        arg_out = ctypes.c_uint64(out.value)
        params = (ctypes.c_void_p * 2)(ctypes.cast(tm, ctypes.c_void_p),
                                       ctypes.cast(ctypes.byref(arg_out), ctypes.c_void_p))
        check(cu.cuLaunchKernel(fn, CTAS, 1, 1, 128, 1, 1, 0, None, params, None), "cuLaunchKernel")
        check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
        host_out = (ctypes.c_uint32 * OUT_WORDS)()
        check(cu.cuMemcpyDtoH_v2(host_out, out, 4 * OUT_WORDS), "cuMemcpyDtoH")
        outs.append(list(host_out))
    if outs[0] != outs[1]:
        sys.exit("two runs differ")
    print(json.dumps({"gpu": name.value.decode(), "input_addr": f"{src.value:#x}",
                      "input": words, "tensormap": bytes(tm).hex(), "out": outs[0]}))


if __name__ == "__main__":
    main()
