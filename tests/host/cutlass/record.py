#!/usr/bin/env python3
"""Build and record the CUTLASS GEMMs of tests/host_cutlass.rs.

    python3 tests/host/cutlass/record.py build NAME...   # here: nvcc 13.0.88 from the wheels
    python3 tests/host/cutlass/record.py check NAME...   # a built recorder's PTX is the corpus kernel
    python3 tests/host/cutlass/record.py run OUTDIR       # on the H100: every built recorder

`build` compiles `record_gemm.cu` with the corpus wrapper
`xtask/real_nvcc/cutlass/NAME.cu` (the flags of `xtask/gen_real_nvcc.py`,
plus a static CUDA runtime) into `target/cutlass-rec/NAME`, and checks that
the sm_90a PTX inside the binary is `tests/real/cutlass/NAME.ptx` token for
token (but for comments and the unused one-byte globals nvcc names after
the source file): the binary runs the kernel the host backend
is given, compiled by the same ptxas 13.0.88. `run` (on the device, the binaries carried there) runs
each recorder on a 256x256x256 problem and writes OUTDIR/NAME/ with
params.bin, meta.txt and the gzipped a/b/c inputs and d output; its
stdout goes to `record.log`. The recorded files are data: never edit
them, re-record.
"""
import gzip
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TK = os.path.join(ROOT, "target", "cuda-toolkit")
BIN = os.path.join(ROOT, "target", "cutlass-rec")
SHAPE = ("256", "256", "256")


def nvcc_cmd(name, extra):
    inc = os.path.join(TK, "cutlass_library", "source")
    return [os.path.join(TK, "nvidia", "cu13", "bin", "nvcc"), "-arch=sm_90a", "-std=c++17",
            "--expt-relaxed-constexpr", "-DNDEBUG",
            "-I" + os.path.join(ROOT, "xtask", "real_nvcc", "cutlass"),
            "-I" + os.path.join(inc, "include"), "-I" + os.path.join(inc, "tools", "util", "include"),
            "-include", os.path.join(ROOT, "xtask", "real_nvcc", "cutlass", name + ".cu"),
            os.path.join(ROOT, "tests", "host", "cutlass", "record_gemm.cu")] + extra


def kernel_text(ptx):
    """The PTX's tokens, without comments and without the one-byte
    placeholder globals nvcc names after the source file
    (`_ZN<len>_INTERNAL_<hash>_<file>_cu_...[1]`, never used by the
    kernel): the recorder's translation unit is another file, and the
    embedded PTX is laid out differently."""
    lines = (l.strip() for l in ptx.splitlines())
    kept = [l for l in lines
            if l and not l.startswith("//")
            and not (l.startswith(".global .align 1 .b8 _ZN") and "_INTERNAL_" in l and l.endswith("[1];"))]
    return " ".join(kept).split()


def embedded_ptx(binary):
    """The sm_90a PTX a recorder carries (cuobjdump; comments and
    indentation are not kept there, so `kernel_text` drops them)."""
    cuobjdump = os.path.join(ROOT, "target", "oracle-tools", "nvidia", "cu13", "bin", "cuobjdump")
    listing = subprocess.run([cuobjdump, "-lptx", binary], capture_output=True, text=True, check=True).stdout
    files = [l.split(":", 1)[1].strip() for l in listing.splitlines() if l.endswith(".sm_90a.ptx")]
    if len(files) != 1:
        sys.exit(f"{binary}: {len(files)} sm_90a PTX files")
    tmp = os.path.join(BIN, "ptx")
    os.makedirs(tmp, exist_ok=True)
    subprocess.run([cuobjdump, "-xptx", files[0], os.path.abspath(binary)], cwd=tmp, check=True, capture_output=True)
    return open(os.path.join(tmp, files[0])).read()


def build(names):
    os.makedirs(BIN, exist_ok=True)
    for name in names:
        lib = os.path.join(TK, "nvidia", "cu13", "lib")
        subprocess.run(nvcc_cmd(name, ["-cudart", "static", "-L" + lib, "-o", os.path.join(BIN, name)]), check=True)
        check(name)
        print("built", name)


def check(name):
    """The recorder's own sm_90a PTX is the committed kernel's."""
    with open(os.path.join(ROOT, "tests", "real", "cutlass", name + ".ptx")) as g:
        if kernel_text(embedded_ptx(os.path.join(BIN, name))) != kernel_text(g.read()):
            sys.exit(f"{name}: the recorder's PTX differs from tests/real/cutlass/{name}.ptx")


def run(out):
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    print("GPU:", gpu)
    for name in sorted(os.listdir(BIN)):
        path = os.path.join(BIN, name)
        if not os.path.isfile(path) or not os.access(path, os.X_OK):
            continue
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        try:
            ok = subprocess.run([path, d, *SHAPE], timeout=60).returncode == 0
        except subprocess.TimeoutExpired:
            ok = False
            print("timed out:", name)
        if not ok:
            # One recorder that cannot run (a kernel whose Arguments differ,
            # or one that hangs) does not stop the others; nothing of it is kept.
            print("failed", name)
            shutil.rmtree(d)
            continue
        first = open(os.path.join(d, "d.bin"), "rb").read()
        # Every recording runs twice; both must write the same bytes.
        again = os.path.join(out, name + ".again")
        os.makedirs(again, exist_ok=True)
        subprocess.run([path, again, *SHAPE], check=True, timeout=60)
        if open(os.path.join(again, "d.bin"), "rb").read() != first:
            sys.exit(f"{name}: two runs differ")
        shutil.rmtree(again)
        for part in "abcd":
            src = os.path.join(d, part + ".bin")
            with open(src, "rb") as f, gzip.GzipFile(src + ".gz", "wb", mtime=0) as g:
                g.write(f.read())
            os.remove(src)
        print("recorded", name, open(os.path.join(d, "meta.txt")).read().replace("\n", "; "))


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "build":
        build(sys.argv[2:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "check":
        for n in sys.argv[2:]:
            check(n)
            print("same kernel", n)
    elif len(sys.argv) == 3 and sys.argv[1] == "run":
        run(sys.argv[2])
    else:
        sys.exit(__doc__)
