#!/usr/bin/env python3
"""Record what an H100 computes for every case of cases.py: NAME.gpu.npy.

Run on a machine with an sm_90a GPU, ptxas 13.0 and CuPy:

    python3 tests/host/triton/record_gpu.py --out DIR [--random] [NAME-SUBSTRING ...]

For each case: `ptxas -arch=sm_90a` compiles the kernel's PTX to a cubin (ptxas must
accept it), CuPy loads the cubin and launches it on the case's grid with 32 threads per warp, 227 KiB of dynamic shared memory, A and B as device copies of the inputs, C zeroed,
the scalars as u32, descriptor scratch as zeroed buffers and the trailing pointers
null; 32 threads per warp, or the kernel's .reqntid. C is written to DIR/NAME.gpu.npy.gz
(the case's dtype and shape), gzipped. Every case runs twice and the two outputs must be the same
bytes. The first line printed is the GPU; any error exits non-zero.
"""
import gzip, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402

SHARED = 227 * 1024
# The hardware element-type codes of Triton's metadata -> CUtensorMapDataType
# (Triton's TMA_DTYPE_DEVICE_TO_HOST).
CU_DTYPE = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 10, 9: 8, 10: 9}


def tensor_map(buf, shape, code, swizzle, box):
    """A row-major matrix's CUtensorMap, encoded as Triton's fill_tma_descriptor_tiled
    does (dimensions innermost first, byte strides, element strides 1, no interleave,
    L2 promotion 128B, zero fill), as a 128-byte struct argument."""
    import ctypes
    import numpy as np
    lib = ctypes.CDLL("libcuda.so.1")
    esz = {0: 1, 1: 2, 6: 2, 10: 2, 2: 4, 3: 4, 7: 4, 8: 4, 4: 8, 5: 8, 9: 8}[code]
    tm = (ctypes.c_uint8 * 128)()
    dims = (ctypes.c_uint64 * 2)(shape[1], shape[0])
    strides = (ctypes.c_uint64 * 1)(shape[1] * esz)
    boxd = (ctypes.c_uint32 * 2)(*box)
    es = (ctypes.c_uint32 * 2)(1, 1)
    rc = lib.cuTensorMapEncodeTiled(tm, CU_DTYPE[code], 2, ctypes.c_void_p(buf.data.ptr), dims,
                                    strides, boxd, es, 0, swizzle, 2, 0)
    if rc != 0:
        sys.exit(f"cuTensorMapEncodeTiled failed ({rc})")
    return np.frombuffer(bytes(tm), dtype=np.dtype([("b", np.uint8, 128)], align=True))[0]


def main():
    import cupy as cp
    import numpy as np
    args = sys.argv[1:]
    out = "."
    if args[:1] == ["--out"]:
        out, args = args[1], args[2:]
    # --random: the random-normal cases (cases_rn.tsv) instead.
    every = cases.random_cases() if "--random" in args else cases.cases()
    args = [a for a in args if a != "--random"]
    os.makedirs(out, exist_ok=True)
    ptxas = os.environ.get("PTXAS") or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    ver = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    print(f"GPU: {name} (sm_{props['major']}{props['minor']}), ptxas {ver}, CuPy {cp.__version__}")
    tmp = tempfile.mkdtemp()
    done = 0
    for c in every:
        if args and not any(a in c["name"] for a in args):
            continue
        ptx = os.path.join(cases.REPO, c["ptx"])
        cubin = os.path.join(tmp, c["name"] + ".cubin")
        p = subprocess.run([ptxas, "-arch=sm_90a", ptx, "-o", cubin], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"ptxas failed on {ptx}: {p.stderr}")
        mod = cp.RawModule(path=cubin)
        entry = [l.split("(")[0].split()[-1] for l in open(ptx) if ".entry" in l][0]
        fn = mod.get_function(entry)
        fn.max_dynamic_shared_size_bytes = SHARED
        nparams = sum(1 for l in open(ptx) if l.strip().startswith(".param"))
        results = []
        for _ in range(2):
            a = cp.asarray(np.frombuffer(c["a"][0], dtype=np.uint8))
            b = cp.asarray(np.frombuffer(c["b"][0], dtype=np.uint8))
            descr, size, shape = c["c"]
            cbuf = cp.zeros(shape[0] * shape[1] * size, dtype=np.uint8)
            bufs = {"A": a, "B": b, "C": cbuf}
            if "v" in c:
                bufs["V"] = cp.asarray(np.frombuffer(c["v"][0], dtype=np.uint8))
            if "m_out" in c:
                bufs["MO"] = cp.zeros(4 * c["m_out"][2][0], dtype=np.uint8)
            for xname, data, _descr, _shape, _dtype in c.get("extra", []):
                bufs[xname] = cp.asarray(np.frombuffer(data, dtype=np.uint8))
            shapes = {"A": c["a"][2], "B": c["b"][2], "C": c["c"][2]}
            params = []
            for p in c["params"]:
                if isinstance(p, tuple) and p[0] == "f32":
                    params.append(np.float32(p[1]))
                elif isinstance(p, tuple) and p[0] == "tmap":
                    params.append(tensor_map(bufs[p[1]], shapes[p[1]], p[2], p[3], p[4]))
                elif isinstance(p, tuple):
                    params.append(cp.zeros(p[1], dtype=np.uint8))
                elif isinstance(p, str):
                    params.append(bufs[p])
                else:
                    params.append(np.uint32(p))
            params += [np.uint64(0)] * (nparams - len(params))
            fn(tuple(c["grid"]), (c["block"], 1, 1), tuple(params), shared_mem=SHARED)
            cp.cuda.runtime.deviceSynchronize()
            results.append(cbuf.get().tobytes() + (bufs["MO"].get().tobytes() if "MO" in bufs else b""))
        if results[0] != results[1]:
            sys.exit(f"{c['name']}: two runs differ")
        descr, size, shape = c["c"]
        c_bytes = shape[0] * shape[1] * size
        # gzip without a timestamp: the same bytes every time.
        with open(os.path.join(out, c["name"] + ".gpu.npy.gz"), "wb") as f:
            f.write(gzip.compress(cases.npy(results[0][:c_bytes], descr, shape), mtime=0))
        if "m_out" in c:
            with open(os.path.join(out, c["name"] + ".M.gpu.npy.gz"), "wb") as f:
                f.write(gzip.compress(cases.npy(results[0][c_bytes:], "<f4", c["m_out"][2]), mtime=0))
        done += 1
        print(f"{c['name']}: grid {c['grid']}, {len(results[0])} bytes")
    print(f"{done} cases recorded")


if __name__ == "__main__":
    main()
