#!/usr/bin/env python3
"""Record the GPU ground truth for tests/host/cases/*.ptx.

Run on a machine with an sm_90a GPU (H100/H200), ptxas (CUDA 12.3+; recorded
with 13.0) and CuPy (falls back to the CUDA driver API through ctypes when
CuPy is missing):

    python3 tests/host/record_gpu.py [--out DIR] [NAME ...]

For every case: ptxas -arch=sm_90a NAME.ptx -> cubin, launch kernel `k` with
1 block of 128 threads and params (p_in = device copy of NAME.in.bin,
p_out = zeroed buffer of out_bytes from the header), write the p_out bytes
to DIR/NAME.gpu.bin (DIR defaults to tests/host/cases).  Each case is run
twice and the two outputs must agree.  Any error aborts with a non-zero exit.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
HEADER = re.compile(r"^// host-case: threads=(\d+) out_bytes=(\d+) ")


def die(msg):
    sys.stderr.write("record_gpu.py: FATAL: %s\n" % msg)
    sys.exit(1)


def find_ptxas():
    cands = [os.environ.get("PTXAS"), shutil.which("ptxas")]
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            cands.append(os.path.join(os.environ[env], "bin", "ptxas"))
    cands += ["/usr/local/cuda/bin/ptxas", "/work/oracle-tools/nvidia/cu13/bin/ptxas"]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    die("ptxas not found (set PTXAS=...)")


# ------------------------------------------------------------- launchers
class CupyLauncher:
    def __init__(self):
        import cupy as cp
        import numpy as np
        self.cp, self.np = cp, np
        props = cp.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else name
        self.cc = (props["major"], props["minor"])
        self.how = "CuPy %s" % cp.__version__

    def run(self, cubin, inbin, out_bytes, threads):
        cp, np = self.cp, self.np
        mod = cp.RawModule(path=cubin)
        fn = mod.get_function("k")
        d_in = cp.asarray(np.frombuffer(inbin, dtype=np.uint8))
        d_out = cp.zeros(out_bytes, dtype=np.uint8)
        fn((1,), (threads,), (d_in, d_out))
        cp.cuda.Device().synchronize()
        out = cp.asnumpy(d_out).tobytes()
        del mod
        return out


class DriverLauncher:
    """Plain CUDA driver API via ctypes (used only when CuPy is missing)."""

    def __init__(self):
        import ctypes as C
        self.C = C
        self.cu = C.CDLL("libcuda.so.1")
        self.chk(self.cu.cuInit(0), "cuInit")
        dev = C.c_int()
        self.chk(self.cu.cuDeviceGet(C.byref(dev), 0), "cuDeviceGet")
        buf = C.create_string_buffer(256)
        self.chk(self.cu.cuDeviceGetName(buf, 256, dev), "cuDeviceGetName")
        self.name = buf.value.decode()
        ma, mi = C.c_int(), C.c_int()
        self.chk(self.cu.cuDeviceGetAttribute(C.byref(ma), 75, dev), "attr")
        self.chk(self.cu.cuDeviceGetAttribute(C.byref(mi), 76, dev), "attr")
        self.cc = (ma.value, mi.value)
        self.ctx = C.c_void_p()
        self.chk(self.cu.cuDevicePrimaryCtxRetain(C.byref(self.ctx), dev), "ctx")
        self.chk(self.cu.cuCtxSetCurrent(self.ctx), "ctx")
        self.how = "CUDA driver API (ctypes)"

    def chk(self, rc, what):
        if rc != 0:
            die("%s failed: CUresult %d" % (what, rc))

    def run(self, cubin, inbin, out_bytes, threads):
        C, cu = self.C, self.cu
        mod, fn = C.c_void_p(), C.c_void_p()
        self.chk(cu.cuModuleLoad(C.byref(mod), cubin.encode()), "cuModuleLoad")
        self.chk(cu.cuModuleGetFunction(C.byref(fn), mod, b"k"), "cuModuleGetFunction")
        d_in, d_out = C.c_uint64(), C.c_uint64()
        self.chk(cu.cuMemAlloc_v2(C.byref(d_in), C.c_size_t(len(inbin))), "cuMemAlloc")
        self.chk(cu.cuMemAlloc_v2(C.byref(d_out), C.c_size_t(out_bytes)), "cuMemAlloc")
        self.chk(cu.cuMemcpyHtoD_v2(d_in, C.c_char_p(inbin), C.c_size_t(len(inbin))), "HtoD")
        self.chk(cu.cuMemsetD8_v2(d_out, C.c_ubyte(0), C.c_size_t(out_bytes)), "memset")
        args = (C.c_void_p * 2)(C.cast(C.byref(d_in), C.c_void_p), C.cast(C.byref(d_out), C.c_void_p))
        self.chk(cu.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, None, args, None), "cuLaunchKernel")
        self.chk(cu.cuCtxSynchronize(), "cuCtxSynchronize (kernel fault?)")
        out = C.create_string_buffer(out_bytes)
        self.chk(cu.cuMemcpyDtoH_v2(out, d_out, C.c_size_t(out_bytes)), "DtoH")
        cu.cuMemFree_v2(d_in)
        cu.cuMemFree_v2(d_out)
        cu.cuModuleUnload(mod)
        return out.raw


def main():
    global CASES
    args = sys.argv[1:]
    if "--cases" in args:
        # Another case directory (tests/host/cases_rn: gen_cases.py --random-normal).
        i = args.index("--cases")
        CASES = args[i + 1]
        del args[i:i + 2]
    outdir = CASES
    if "--out" in args:
        i = args.index("--out")
        outdir = args[i + 1]
        del args[i:i + 2]
    try:
        L = CupyLauncher()
    except ImportError:
        L = DriverLauncher()
    print("GPU: %s (sm_%d%d)" % (L.name, L.cc[0], L.cc[1]), flush=True)
    if L.cc != (9, 0):
        die("need an sm_90 GPU, got sm_%d%d" % L.cc)
    ptxas = find_ptxas()
    ver = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    print("ptxas: %s (%s)" % (ptxas, ver[-1] if ver else "?"), flush=True)
    print("launcher: %s" % L.how, flush=True)

    names = args or sorted(f[:-4] for f in os.listdir(CASES) if f.endswith(".ptx"))
    if not names:
        die("no cases in %s" % CASES)
    os.makedirs(outdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="host_cases_")
    for name in names:
        ptx = os.path.join(CASES, name + ".ptx")
        with open(ptx) as f:
            first = f.readline()
        m = HEADER.match(first)
        if not m:
            die("%s: bad header line: %r" % (name, first))
        threads, out_bytes = int(m.group(1)), int(m.group(2))
        with open(os.path.join(CASES, name + ".in.bin"), "rb") as f:
            inbin = f.read()
        cubin = os.path.join(tmp, name + ".cubin")
        p = subprocess.run([ptxas, "-arch=sm_90a", ptx, "-o", cubin], capture_output=True, text=True)
        msg = (p.stdout + p.stderr).strip()
        if p.returncode != 0 or msg:
            die("%s: ptxas rc=%d: %s" % (name, p.returncode, msg))
        out1 = L.run(cubin, inbin, out_bytes, threads)
        out2 = L.run(cubin, inbin, out_bytes, threads)
        if len(out1) != out_bytes or out1 != out2:
            die("%s: output differs between two runs" % name)
        with open(os.path.join(outdir, name + ".gpu.bin"), "wb") as f:
            f.write(out1)
        nz = sum(1 for i in range(0, out_bytes, 4) if out1[i:i + 4] != b"\0\0\0\0")
        print("ok %-60s out_bytes=%6d nonzero_words=%d" % (name, out_bytes, nz), flush=True)
    shutil.rmtree(tmp)
    print("recorded %d cases into %s" % (len(names), outdir), flush=True)


if __name__ == "__main__":
    main()
