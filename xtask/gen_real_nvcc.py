#!/usr/bin/env python3
"""Real-kernel corpus: Hopper (sm_90a) PTX from CUTLASS 3.x/CuTe, DeepGEMM and
FlashAttention-3, built by nvcc 13.0.88 installed from PyPI wheels (CPU only).

Everything is pinned:

    nvidia-cuda-nvcc==13.0.88     nvcc, ptxas, cudafe++       (wheel)
    nvidia-nvvm==13.0.88          cicc, libdevice             (wheel)
    nvidia-cuda-crt==13.0.88      crt/ headers                (wheel)
    nvidia-cuda-runtime==13.0.88  cuda_runtime.h etc.         (wheel)
    nvidia-cuda-cccl==13.0.85     cuda/std, cub, thrust       (wheel)
    nvidia-cutlass==4.2.0.0       CUTLASS/CuTe headers under cutlass_library/source/include
    nvidia-curand==10.4.0.35      curand_kernel.h (CUDA 13.0's), for CUTLASS's examples
    host compiler: the system g++ (Debian 12.2)
    DeepGEMM      deepseek-ai/DeepGEMM @ 54e22612409371d6364144b69086735beb54e98b
    FlashAttn-3   Dao-AILab/flash-attention @ 0251105a2fb19d2957484b7f023cd8c115286ced (hopper/)

pip is always run with --no-deps and explicit pins (nvidia-cuda-nvcc's own
requirements would otherwise pull nvvm/crt 13.5.x, whose cicc emits different
PTX).  The wheels unpack into <toolkit>/nvidia/cu13/{bin,nvvm,include,lib};
the nvcc.profile shipped in bin/ already points at ../nvvm and ../include.

Commands (run from the repository root):

    python3 xtask/gen_real_nvcc.py setup [--toolkit target/cuda-toolkit]
    python3 xtask/gen_real_nvcc.py build [--family cutlass|deepgemm|fa3|all]
            [--only NAME ...] [-j 2] [--deepgemm-src DIR] [--fa3-src DIR]
            [--nvcc PATH] [--cutlass-include DIR]
    python3 xtask/gen_real_nvcc.py check [--family ...] [--ptxas PATH]
            # ptxas -arch=sm_90a on every PTX (default: target/oracle-tools/nvidia/cu13/bin/ptxas)
    python3 xtask/gen_real_nvcc.py deepgemm-wrappers
            # rewrite xtask/real_nvcc/deepgemm/*.cu from the heuristics port below

`build` compiles each kernel source with

    nvcc -arch=sm_90a -std=c++17 --expt-relaxed-constexpr -DNDEBUG --ptx [family flags] \
         -I<family wrapper dir> [-I<DeepGEMM>/deep_gemm/include | -I<FA3>/hopper] \
         -I<cutlass include> SRC -o tests/real/<family>/<name>.ptx

(under `nice -n 10`), refuses any nvcc/cicc other than 13.0.88 (checked on `nvcc --version`
and on the PTX header), and rewrites tests/real/<family>/manifest.tsv (header, then
`name<TAB>family<TAB>source<TAB>config`; config = the wrapper's leading // comment).
--nvcc / --cutlass-include let another nvcc 13.0.88 (e.g. a CUDA 13.0 install) with the same
nvidia-cutlass 4.2.0.0 headers do the build; the PTX is byte-identical to the wheel
toolkit's (checked on a DeepGEMM and an FA3 kernel).

Getting the DeepGEMM / FA3 sources (not vendored; any checkout of the pinned commits):

    git clone https://github.com/deepseek-ai/DeepGEMM && git -C DeepGEMM checkout 54e22612409371d6364144b69086735beb54e98b
    git clone https://github.com/Dao-AILab/flash-attention && git -C flash-attention checkout 0251105a2fb19d2957484b7f023cd8c115286ced
    python3 xtask/gen_real_nvcc.py build --family deepgemm --deepgemm-src DeepGEMM
    python3 xtask/gen_real_nvcc.py build --family fa3 --fa3-src flash-attention

Their git submodules (CUTLASS, fmt) are not needed: both build against the nvidia-cutlass
4.2.0.0 wheel headers (DeepGEMM only needs deep_gemm/include, FA3 only hopper/).

Families:
  cutlass   xtask/real_nvcc/cutlass/<name>.cu: one GemmKernel per file, built with
            cutlass::gemm::collective::CollectiveBuilder / epilogue CollectiveBuilder for
            cutlass::arch::Sm90, GemmUniversal, GemmUniversalAdapter; ORI_EMIT takes the
            address of cutlass::device_kernel<GemmKernel> so exactly one .entry is emitted.
  deepgemm  xtask/real_nvcc/deepgemm/<name>.cu: includes one of DeepGEMM's sm90 kernel
            headers and takes the address of one kernel instantiation, written exactly like
            the code its JIT generates (csrc/jit_kernels/impls/sm90_*.hpp), with the template
            arguments its sm90 heuristics pick for real DeepSeek-V3 shapes (ported below).
  fa3       xtask/real_nvcc/fa3/<name>.cu: includes FlashAttention-3's hopper/ launch
            templates and builds one forward or backward AttnKernel type exactly as
            run_flash_fwd / run_flash_bwd do for Arch 90 (ori_fa3.cuh), with the template
            arguments that run_mha_fwd_ / run_mha_bwd_hdim* dispatch.
Sources of DeepGEMM / FA3 are not vendored; only the small wrapper .cu files are.
"""
import argparse
import concurrent.futures as cf
import os
import shutil
import subprocess
import sys
import tempfile
import time

import real_nvcc_generators as gens

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC_DIR = os.path.join(ROOT, "xtask", "real_nvcc")
OUT_DIR = os.path.join(ROOT, "tests", "real")
FAMILIES = ("cutlass", "deepgemm", "fa3", "thunderkittens", "cutlass_examples", "flashinfer")

WHEELS = [
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-nvvm==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-runtime==13.0.88",
    "nvidia-cuda-cccl==13.0.85",
    "nvidia-cutlass==4.2.0.0",
    "nvidia-curand==10.4.0.35",  # curand_kernel.h, which CUTLASS's example utilities include
]
NVCC_FLAGS = ["-arch=sm_90a", "--expt-relaxed-constexpr", "-DNDEBUG", "--ptx"]
DEFAULT_PTXAS = os.path.join(ROOT, "target", "oracle-tools", "nvidia", "cu13", "bin", "ptxas")


def cuda_home(toolkit):
    return os.path.join(toolkit, "nvidia", "cu13")


def cutlass_include(toolkit):
    return os.path.join(toolkit, "cutlass_library", "source", "include")


def cmd_setup(args):
    tk = os.path.abspath(args.toolkit)
    os.makedirs(tk, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile",
                    "--upgrade", "--target", tk] + WHEELS, check=True)
    nvcc = os.path.join(cuda_home(tk), "bin", "nvcc")
    profile = os.path.join(cuda_home(tk), "bin", "nvcc.profile")
    if not os.path.exists(profile):  # the 13.0.88 wheel ships one; keep a fallback
        with open(profile, "w") as f:
            f.write("TOP = $(_HERE_)/..\nCICC_PATH = $(TOP)/nvvm/bin\n"
                    "NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice\n"
                    "LD_LIBRARY_PATH += $(TOP)/lib:\nPATH += $(CICC_PATH):$(_HERE_):\n"
                    "INCLUDES += \"-I$(TOP)/include\" $(_SPACE_)\n"
                    "SYSTEM_INCLUDES += \"-isystem\" \"$(TOP)/include/cccl\" $(_SPACE_)\n")
    for tool in ("nvcc", "ptxas", "cudafe++", "fatbinary", "bin2c", "nvlink"):
        p = os.path.join(cuda_home(tk), "bin", tool)
        if os.path.exists(p):
            os.chmod(p, 0o755)
    cicc = os.path.join(cuda_home(tk), "nvvm", "bin", "cicc")
    os.chmod(cicc, 0o755)
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    print(out.strip())
    if "V13.0.88" not in out:
        sys.exit("setup: nvcc is not 13.0.88")
    # cicc version check: compile a trivial kernel and read the PTX header
    with tempfile.TemporaryDirectory() as d:
        cu = os.path.join(d, "t.cu")
        with open(cu, "w") as f:
            f.write("__global__ void k(int *p) { p[0] = 1; }\n")
        subprocess.run([nvcc] + NVCC_FLAGS + [cu, "-o", os.path.join(d, "t.ptx")], check=True)
        head = open(os.path.join(d, "t.ptx")).read(400)
        if "V13.0.88" not in head:
            sys.exit("setup: cicc is not 13.0.88:\n" + head)
    print("toolkit ready:", tk)


def read_config(src):
    """The leading // comment lines of a wrapper .cu, joined: the manifest's config."""
    lines = []
    for line in open(src):
        if not line.startswith("//"):
            break
        lines.append(line[2:].strip())
    return " ".join(lines).replace("\t", " ")


def family_includes(family, args):
    tk = os.path.abspath(args.toolkit)
    cutlass_inc = args.cutlass_include or cutlass_include(tk)
    inc = [f"-I{os.path.join(SRC_DIR, family)}"]
    if family == "deepgemm":
        if not args.deepgemm_src:
            sys.exit("deepgemm: pass --deepgemm-src DIR (a DeepGEMM checkout)")
        inc += [f"-I{os.path.join(os.path.abspath(args.deepgemm_src), 'deep_gemm', 'include')}"]
    if family == "fa3":
        if not args.fa3_src:
            sys.exit("fa3: pass --fa3-src DIR (a flash-attention checkout)")
        inc += [f"-I{os.path.join(os.path.abspath(args.fa3_src), 'hopper')}"]
    if family in gens.FAMILIES:
        return inc + gens.includes(family, args, cutlass_inc)
    inc += [f"-I{os.path.abspath(cutlass_inc)}"]
    return inc


FAMILY_FLAGS = {
    "cutlass": [],
    # DeepGEMM's JIT (csrc/jit/compiler.hpp) adds these diagnostics suppressions; it
    # defaults to -std=c++20, but its sm90 kernels build identically with c++17.
    "deepgemm": ["--diag-suppress=39,161,174,177,186,940,2389"],
    # FA3's hopper/setup.py nvcc flags that affect device code (not -lineinfo).
    "fa3": ["--use_fast_math", "-DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED",
            "-DCUTLASS_ENABLE_GDC_FOR_SM90", "-DCUTLASS_DEBUG_TRACE_LEVEL=0"],
}


NICE = "10"


def compile_one(nvcc, family, src, inc, out):
    tmp = out + ".tmp"
    flags = gens.FAMILY_FLAGS.get(family) or ["-std=c++17"] + FAMILY_FLAGS[family]
    flags = flags + gens.extra_flags(src)
    cmd = ["nice", "-n", NICE, nvcc] + NVCC_FLAGS + flags + inc + [src, "-o", tmp]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.time() - t0
    if r.returncode != 0:
        if os.path.exists(tmp):
            os.remove(tmp)
        out = r.stderr + r.stdout
        errs = [l for l in out.splitlines() if "error" in l][:6]
        return False, dt, "\n".join(errs) + "\n...\n" + out[-1500:]
    text = open(tmp).read()
    if "V13.0.88" not in text[:400]:
        os.remove(tmp)
        return False, dt, "PTX header is not from cicc 13.0.88"
    entries = sum(1 for l in text.splitlines() if l.lstrip().startswith((".entry", ".visible .entry")))
    if entries == 0:
        os.remove(tmp)
        return False, dt, "no .entry in PTX"
    os.replace(tmp, out)
    return True, dt, f"{entries} entry"


def write_manifest(family):
    d = os.path.join(OUT_DIR, family)
    rows = []
    for ptx in sorted(os.listdir(d)):
        if not ptx.endswith(".ptx"):
            continue
        name = ptx[:-4]
        src = os.path.join(SRC_DIR, family, name + ".cu")
        if not os.path.exists(src):
            continue
        rel = os.path.relpath(src, ROOT)
        rows.append(f"{name}\t{family}\t{rel}\t{read_config(src)}")
    with open(os.path.join(d, "manifest.tsv"), "w") as f:
        f.write("name\tfamily\tsource\tconfig\n")
        for r in rows:
            f.write(r + "\n")
    return len(rows)


def families(args):
    return FAMILIES if args.family == "all" else (args.family,)


def cmd_build(args):
    global NICE
    NICE = args.nice
    tk = os.path.abspath(args.toolkit)
    nvcc = args.nvcc or os.path.join(cuda_home(tk), "bin", "nvcc")
    if not os.path.exists(nvcc):
        sys.exit(f"no nvcc at {nvcc}: run `setup` first")
    ver = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    if "V13.0.88" not in ver:
        sys.exit(f"{nvcc} is not nvcc 13.0.88:\n{ver}")
    failed = []
    for fam in families(args):
        sdir = os.path.join(SRC_DIR, fam)
        if not os.path.isdir(sdir):
            continue
        srcs = sorted(f[:-3] for f in os.listdir(sdir) if f.endswith(".cu"))
        if args.only:
            srcs = [s for s in args.only if s in srcs]  # in the order given
        if not srcs:
            continue
        inc = family_includes(fam, args)
        odir = os.path.join(OUT_DIR, fam)
        os.makedirs(odir, exist_ok=True)
        jobs = {}
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            for name in srcs:
                out = os.path.join(odir, name + ".ptx")
                if args.skip_existing and os.path.exists(out):
                    continue
                jobs[ex.submit(compile_one, nvcc, fam, os.path.join(sdir, name + ".cu"), inc, out)] = name
            for fut in cf.as_completed(jobs):
                name = jobs[fut]
                ok, dt, msg = fut.result()
                print(f"[{fam}] {'ok  ' if ok else 'FAIL'} {name} ({dt:.0f}s) {msg if ok else ''}",
                      flush=True)
                if not ok:
                    failed.append((fam, name))
                    print(msg, flush=True)
        n = write_manifest(fam)
        print(f"[{fam}] manifest: {n} kernels")
    if failed:
        print("failed:", " ".join(f"{f}/{n}" for f, n in failed))
        sys.exit(1)


# ---------------------------------------------------------------------------
# DeepGEMM: port of its sm90 JIT heuristics (csrc/jit_kernels/heuristics/sm90.hpp,
# common.hpp, utils.hpp at the pinned commit) so that the wrapper .cu files carry the
# template arguments DeepGEMM's JIT would generate for the listed shapes.
# `python3 xtask/gen_real_nvcc.py deepgemm-wrappers` rewrites xtask/real_nvcc/deepgemm/*.cu.
import math
import struct

DG_NUM_SMS = 132  # H100/H800 SXM
DG_SMEM_CAPACITY = 232448
ESIZE = {"bf16": 2, "fp8": 1, "f32": 4}
CD_TYPE = {"bf16": "cutlass::bfloat16_t", "f32": "float"}


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _ceil_div(a, b):
    return (a + b - 1) // b


def _align(a, b):
    return _ceil_div(a, b) * b


def _swizzle(block_size, elem):
    for mode in (128, 64, 32, 16):
        if (block_size * elem) % mode == 0:
            return mode
    raise ValueError


class DgDesc:
    def __init__(self, gemm_type, kernel_type, m, n, k, num_groups, ab, cd, major_a="K", major_b="K",
                 with_acc=False, compiled_dims="nk", expected_m=0, expected_n=0, expected_k=0,
                 expected_num_groups=0):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    em = property(lambda s: s.expected_m or s.m)
    en = property(lambda s: s.expected_n or s.n)
    ek = property(lambda s: s.expected_k or s.k)
    eg = property(lambda s: s.expected_num_groups or s.num_groups)


def dg_storage(d, bm, bn, bk):
    store_bm = 64 if d.kernel_type == "1D1D" else bm
    sa = _swizzle(bk if d.major_a == "K" else bm, ESIZE[d.ab])
    sb = _swizzle(bk if d.major_b == "K" else bn, ESIZE[d.ab])
    scd = _swizzle(bn, ESIZE[d.cd]) if d.cd != "f32" else 0
    return dict(store_bm=store_bm, sa=sa, sb=sb, scd=scd)


def dg_pipeline(d, bm, bn, bk):
    smem_cd = _align(bm * bn * ESIZE[d.cd], 1024)
    barriers = 16 * 8 * 2
    a_st = bm * bk * ESIZE[d.ab]
    b_st = bn * bk * ESIZE[d.ab]
    sfa = 0 if d.kernel_type == "NoSF" else _align(bm * 4, 128)
    sfb = 0 if d.kernel_type != "1D1D" else _align(bn * 4, 128)
    uniform = 1 if bk % bn == 0 else 2
    extra_sfb = 0 if d.kernel_type != "1D2D" else _align(_ceil_div(d.k, bk) * 4 * uniform, 8)
    tmap = 4 * 128 if d.gemm_type == "KGroupedContiguous" else 0
    extra = smem_cd + barriers + extra_sfb + tmap
    per = a_st + b_st + sfa + sfb
    stages = min((DG_SMEM_CAPACITY - extra) // per, 16)
    return stages, extra + stages * per


def dg_best_config(d):
    if d.gemm_type in ("Normal", "Batched", "KGroupedContiguous"):
        bms = [64, 128]
        if d.m <= 16:
            bms.append(16)
        if d.m <= 32:
            bms.append(32)
        if d.cd != "f32":
            bms.append(256)
    elif d.gemm_type in ("MGroupedContiguous",):
        bms = [128]
    else:  # MGroupedMasked
        bms = [64, 128]
    start, step, bns = 16, 16, []
    if d.kernel_type == "1D1D" and d.cd == "f32":
        start = 24
        bns.append(16)
    end = {"1D2D": 192, "1D1D": 160}.get(d.kernel_type, 256)
    bns += list(range(start, end + 1, step))
    bk = 128 // ESIZE[d.ab]
    no_mc = (d.gemm_type == "KGroupedContiguous" and d.num_groups > 4) or d.gemm_type == "Batched"
    cands = []
    for cm in range(1, (1 if no_mc else 2) + 1):
        for cn in range(1, (1 if no_mc else 2) + 1):
            if cm * cn > 2 or DG_NUM_SMS % (cm * cn):
                continue
            for bm in bms:
                for bn in bns:
                    if d.kernel_type == "1D2D" and bn > bk and (bn % (bn - bk) != 0 and bk % (bn - bk) != 0):
                        continue
                    if d.gemm_type == "MGroupedMasked" and _ceil_div(d.n, bn) % (cm * cn) != 0:
                        continue
                    if bm > 128 and bn > 128:
                        continue
                    st = dg_storage(d, bm, bn, bk)
                    if st["sa"] % 64 or st["sb"] % 64:
                        continue
                    stages, _ = dg_pipeline(d, bm, bn, bk)
                    if stages < 3 or (bm * bn < 128 * 192 and stages < 4):
                        continue
                    cands.append((bm, bn, bk, cm, cn))

    def cycles(c):
        bm, bn, bk, cm, cn = c
        nb = _ceil_div(d.em, bm) * _ceil_div(d.en, bn) * d.eg
        waves = _ceil_div(nb, DG_NUM_SMS)
        l2_bw = int(min(64.0 * DG_NUM_SMS, 8e6 / 1.3e3))
        l1_bw = 128 * DG_NUM_SMS
        eab, ecd, ek = ESIZE[d.ab], ESIZE[d.cd], d.ek
        l2_ab = ek * (bm // cn + bn // cm) * eab
        l1_ab = ek * (bm + bn) * eab
        l1_tc = ek * (max(64, bm) + bn) * eab + bm * bn * ecd
        cd = bm * bn * ecd * (2 if d.with_acc else 1)
        l2 = (l2_ab + cd) * nb // l2_bw
        l1 = (l1_ab + l1_tc + cd) * nb // l1_bw
        eff = _f32(_f32(float(nb)) / (waves * DG_NUM_SMS))
        n = int(_f32(_f32(float(max(l1, l2))) / eff))
        if cn * cm > 1 and waves <= 1:
            n = 2 ** 63 - 1
        return n

    best = cands[0]
    best_c = cycles(best)
    for c in cands[1:]:
        cc = cycles(c)
        if cc < best_c:
            best, best_c = c, cc
    bm, bn, bk, cm, cn = best
    st = dg_storage(d, bm, bn, bk)
    stages, smem = dg_pipeline(d, bm, bn, bk)
    return dict(bm=bm, bn=bn, bk=bk, cm=cm, cn=cn, stages=stages, smem=smem,
                math=128 if bm <= 64 else 256, **st)


def _cdim(d, v, name):
    return v if name in d.compiled_dims else 0


def dg_wrapper(name, api, d):
    c = dg_best_config(d)
    major = {"K": "cute::UMMA::Major::K", "MN": "cute::UMMA::Major::MN"}
    gt = "GemmType::" + d.gemm_type
    mc = c["cm"] * c["cn"]
    on_a = "true" if c["cn"] > 1 else "false"
    shape = f"{_cdim(d, d.m, 'm')}, {_cdim(d, d.n, 'n')}, {_cdim(d, d.k, 'k')}"
    if d.kernel_type == "NoSF":
        inc, fn = "sm90_bf16_gemm.cuh", "sm90_bf16_gemm_impl"
        args = (f"{major[d.major_a]}, {major[d.major_b]},\n    {shape}, {d.num_groups},\n"
                f"    {c['bm']}, {c['bn']}, {c['bk']}, {c['sa']}, {c['sb']}, {c['scd']}, {c['stages']},\n"
                f"    128, {c['math']}, {mc}, {on_a}, {DG_NUM_SMS},\n"
                f"    {gt}, {'true' if d.with_acc else 'false'}, {CD_TYPE[d.cd]}")
    elif d.kernel_type == "1D2D":
        inc, fn = "sm90_fp8_gemm_1d2d.cuh", "sm90_fp8_gemm_1d2d_impl"
        args = (f"{major['K']},\n    {shape}, {d.num_groups},\n"
                f"    {c['bm']}, {c['bn']}, {c['bk']}, {c['sa']}, {c['sb']}, {c['scd']}, {c['stages']},\n"
                f"    128, {c['math']}, {mc}, {on_a}, {DG_NUM_SMS}, {gt},\n"
                f"    {CD_TYPE[d.cd]}, epilogue::transform::EpilogueIdentity")
    else:  # 1D1D
        inc, fn = "sm90_fp8_gemm_1d1d.cuh", "sm90_fp8_gemm_1d1d_impl"
        args = (f"{shape}, {d.num_groups},\n"
                f"    {c['bm']}, {c['bn']}, {c['bk']}, {c['sa']}, {c['sb']}, {c['stages']},\n"
                f"    128, {c['math']}, {mc}, {on_a}, {DG_NUM_SMS}, {gt}, {CD_TYPE[d.cd]}")
    shape_note = f"m={d.m} n={d.n} k={d.k} groups={d.num_groups}"
    if d.expected_m or d.expected_k:
        shape_note += f" (expected m={d.em} k={d.ek} groups={d.eg})"
    return (f"// DeepGEMM {api}: {d.kernel_type} kernel, {d.gemm_type}, {d.ab} x {d.ab} -> {d.cd}"
            f"{', accumulate into C' if d.with_acc else ''}, A {d.major_a}-major, B {d.major_b}-major; {shape_note}.\n"
            f"// Config its sm90 heuristics pick ({DG_NUM_SMS} SMs, compiled_dims \"{d.compiled_dims}\"): "
            f"block {c['bm']}x{c['bn']}x{c['bk']}, cluster {c['cm']}x{c['cn']} (TMA multicast {mc}"
            f"{' on A' if c['cn'] > 1 else (' on B' if mc > 1 else '')}), {c['stages']} stages, smem {c['smem']} B, "
            f"swizzle A/B/CD {c['sa']}/{c['sb']}/{c['scd']}, {128 + c['math']} threads.\n"
            f"#include <deep_gemm/impls/{inc}>\n"
            f"using namespace deep_gemm;\n"
            f"void *ori_kernel_entry() {{\n"
            f"  return reinterpret_cast<void *>(&{fn}<\n    {args}>);\n}}\n")


def dg_cases():
    D = DgDesc
    G = 8192 * 4
    return [
        # name, api, desc
        ("bf16_gemm_nt_m4096_n7168_k2048", "bf16_gemm_nt", D("Normal", "NoSF", 4096, 7168, 2048, 1, "bf16", "bf16")),
        ("bf16_gemm_nt_m128_n2112_k7168", "bf16_gemm_nt", D("Normal", "NoSF", 128, 2112, 7168, 1, "bf16", "bf16")),
        ("bf16_gemm_nt_m4096_n24576_k1536", "bf16_gemm_nt", D("Normal", "NoSF", 4096, 24576, 1536, 1, "bf16", "bf16")),
        ("bf16_gemm_nt_m4096_n129280_k7168_f32out", "bf16_gemm_nt", D("Normal", "NoSF", 4096, 129280, 7168, 1, "bf16", "f32")),
        ("bf16_gemm_nt_m4096_n256_k7168_f32acc_c", "bf16_gemm_nt", D("Normal", "NoSF", 4096, 256, 7168, 1, "bf16", "f32", with_acc=True)),
        ("bf16_gemm_nn_m4096_n7168_k2048", "bf16_gemm_nn", D("Normal", "NoSF", 4096, 7168, 2048, 1, "bf16", "bf16", major_b="MN")),
        ("bf16_gemm_tn_m4096_n4096_k7168", "bf16_gemm_tn", D("Normal", "NoSF", 4096, 4096, 7168, 1, "bf16", "bf16", major_a="MN", compiled_dims="mn")),
        ("bf16_m_grouped_contiguous_g4_n6144_k7168", "m_grouped_bf16_gemm_nt_contiguous", D("MGroupedContiguous", "NoSF", G, 6144, 7168, 4, "bf16", "bf16")),
        ("bf16_m_grouped_masked_g6_m1024_n4096_k4096", "m_grouped_bf16_gemm_nt_masked", D("MGroupedMasked", "NoSF", 4096, 4096, 4096, 6, "bf16", "bf16", expected_m=1024, expected_num_groups=6)),
        ("bf16_k_grouped_g4_m4096_n7168_k8192", "k_grouped_bf16_gemm_tn_contiguous", D("KGroupedContiguous", "NoSF", 4096, 7168, 4 * 8192, 4, "bf16", "f32", major_a="MN", major_b="MN", with_acc=True, compiled_dims="mn", expected_m=4096, expected_n=7168, expected_k=8192, expected_num_groups=4)),
        ("fp8_gemm_nt_m4096_n7168_k2048", "fp8_gemm_nt", D("Normal", "1D2D", 4096, 7168, 2048, 1, "fp8", "bf16")),
        ("fp8_gemm_nt_m128_n2112_k7168", "fp8_gemm_nt", D("Normal", "1D2D", 128, 2112, 7168, 1, "fp8", "bf16")),
        ("fp8_gemm_nt_m4096_n24576_k1536", "fp8_gemm_nt", D("Normal", "1D2D", 4096, 24576, 1536, 1, "fp8", "bf16")),
        ("fp8_gemm_nt_m1_n4096_k7168", "fp8_gemm_nt", D("Normal", "1D2D", 1, 4096, 7168, 1, "fp8", "bf16")),
        ("fp8_gemm_nt_m4096_n7168_k16384", "fp8_gemm_nt", D("Normal", "1D2D", 4096, 7168, 16384, 1, "fp8", "bf16")),
        ("fp8_m_grouped_contiguous_g4_n4096_k7168", "m_grouped_fp8_gemm_nt_contiguous", D("MGroupedContiguous", "1D2D", G, 4096, 7168, 4, "fp8", "bf16")),
        ("fp8_m_grouped_contiguous_g8_n7168_k3072", "m_grouped_fp8_gemm_nt_contiguous", D("MGroupedContiguous", "1D2D", 8 * 4096, 7168, 3072, 8, "fp8", "bf16")),
        ("fp8_m_grouped_masked_g32_m192_n6144_k7168", "m_grouped_fp8_gemm_nt_masked", D("MGroupedMasked", "1D2D", 4096, 6144, 7168, 32, "fp8", "bf16", expected_m=192, expected_n=6144, expected_k=7168, expected_num_groups=32)),
        ("fp8_m_grouped_masked_g6_m1024_n4096_k2048", "m_grouped_fp8_gemm_nt_masked", D("MGroupedMasked", "1D2D", 4096, 4096, 2048, 6, "fp8", "bf16", expected_m=1024, expected_n=4096, expected_k=2048, expected_num_groups=6)),
        ("fp8_gemm_nt_1d1d_m4096_n7168_k2048_f32acc_c", "fp8_gemm_nt (recipe 1,1,128)", D("Normal", "1D1D", 4096, 7168, 2048, 1, "fp8", "f32", with_acc=True)),
        ("fp8_k_grouped_g4_m4096_n7168_k8192", "k_grouped_fp8_gemm_tn_contiguous", D("KGroupedContiguous", "1D1D", 4096, 7168, 4 * 8192, 4, "fp8", "f32", with_acc=True, compiled_dims="mn", expected_m=4096, expected_n=7168, expected_k=8192, expected_num_groups=4)),
        ("fp8_k_grouped_g16_m7168_n2048_k2048", "k_grouped_fp8_gemm_tn_contiguous", D("KGroupedContiguous", "1D1D", 7168, 2048, 16 * 2048, 16, "fp8", "f32", with_acc=True, compiled_dims="mn", expected_m=7168, expected_n=2048, expected_k=2048, expected_num_groups=16)),
    ]


def cmd_deepgemm_wrappers(args):
    d = os.path.join(SRC_DIR, "deepgemm")
    os.makedirs(d, exist_ok=True)
    for name, api, desc in dg_cases():
        with open(os.path.join(d, name + ".cu"), "w") as f:
            f.write(dg_wrapper(name, api, desc))
        print(name, dg_best_config(desc))


def cmd_check(args):
    bad = 0
    total = 0
    for fam in families(args):
        d = os.path.join(OUT_DIR, fam)
        if not os.path.isdir(d):
            continue
        for ptx in sorted(os.listdir(d)):
            if not ptx.endswith(".ptx"):
                continue
            total += 1
            with tempfile.TemporaryDirectory() as t:
                r = subprocess.run([args.ptxas, "-arch=sm_90a", os.path.join(d, ptx),
                                    "-o", os.path.join(t, "x.cubin")],
                                   capture_output=True, text=True)
            size = os.path.getsize(os.path.join(d, ptx))
            status = "ok" if r.returncode == 0 else f"FAIL rc={r.returncode}"
            print(f"{fam}/{ptx}\t{size}\t{status}", flush=True)
            if r.returncode != 0:
                bad += 1
                print(r.stderr[-2000:])
    print(f"{total - bad}/{total} accepted by ptxas")
    sys.exit(1 if bad else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("setup", "build", "check", "deepgemm-wrappers", "wrappers"):
        p = sub.add_parser(name)
        p.add_argument("--toolkit", default=os.path.join(ROOT, "target", "cuda-toolkit"))
        if name in ("build", "check"):
            p.add_argument("--family", default="all", choices=FAMILIES + ("all",))
        if name == "build":
            p.add_argument("--only", nargs="*", default=None)
            p.add_argument("-j", "--jobs", type=int, default=2)
            p.add_argument("--skip-existing", action="store_true")
            p.add_argument("--nice", default="10", help="niceness of the nvcc processes")
            p.add_argument("--nvcc", default=None, help="another nvcc 13.0.88 (default: the toolkit's)")
            p.add_argument("--cutlass-include", default=None,
                           help="CUTLASS include dir (default: the toolkit's nvidia-cutlass wheel)")
            p.add_argument("--deepgemm-src", default=os.environ.get("DEEPGEMM_SRC"))
            p.add_argument("--fa3-src", default=os.environ.get("FA3_SRC"))
            gens.add_source_args(p)
        if name == "check":
            p.add_argument("--ptxas", default=DEFAULT_PTXAS)
    args = ap.parse_args()
    {"setup": cmd_setup, "build": cmd_build, "check": cmd_check,
     "deepgemm-wrappers": cmd_deepgemm_wrappers, "wrappers": gens.cmd_wrappers}[args.cmd](args)


if __name__ == "__main__":
    main()
