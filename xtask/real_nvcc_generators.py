"""The C++ code generators of the real-kernel corpus that `gen_real_nvcc.py` builds
besides CUTLASS's collective builder, DeepGEMM and FA3: ThunderKittens, CUTLASS's own
Hopper examples and FlashInfer's sm90 prefill.  Each family is a table of kernels (the
template arguments its launchers use), from which `gen_real_nvcc.py wrappers` writes one
small wrapper .cu per kernel under xtask/real_nvcc/<family>/; `gen_real_nvcc.py build
--family F --<f>-src DIR` then compiles each wrapper to one `.entry` of PTX.

Pinned sources (not vendored; any checkout of the commit will do):

    ThunderKittens  HazyResearch/ThunderKittens @ 0b55588d2769dde0c7a9a606ffc015b0ca7a9551
    CUTLASS         NVIDIA/cutlass v4.7.0 = dcf215af68a2d08d305076c152a06f201728cd53
                    (its include/, tools/util/include/ and examples/, not the 4.2 wheel)
    FlashInfer      flashinfer-ai/flashinfer @ fb28d7242b3506a2348265962041acc1fb56cca4
                    (v0.6.18rc7; include/, csrc/ and its submodules 3rdparty/cutlass @
                    b46b16d003484063bca4ed365e44095c4c6ed633 and 3rdparty/cccl @
                    876867684f7fac130e0f5911236e0a92a970d4fd: a recursive clone)

    git clone https://github.com/HazyResearch/ThunderKittens tk && git -C tk checkout 0b55588d...
    python3 xtask/gen_real_nvcc.py build --family thunderkittens --tk-src tk

ThunderKittens' kernel files end in host code (a benchmark `main`, a test harness or a
PyTorch binding) that needs torch or that launches other instantiations.  The build copies
the checkout's kernels/ into target/tk-cut/ and writes, beside each listed source, a
`<stem>.kernels.cuh` holding the source up to the first line of its host tail (the
regular expression in TK_SOURCES); the wrappers include that copy.  Flags are those of
kernels/common.mk for GPU=H100 (c++20, -O3, --use_fast_math, -DKITTENS_HOPPER), without
-lineinfo (no absolute paths in the PTX).
"""
import os
import re
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC_DIR = os.path.join(ROOT, "xtask", "real_nvcc")
FAMILIES = ("thunderkittens", "cutlass_examples", "flashinfer")

TK_COMMIT = "0b55588d2769dde0c7a9a606ffc015b0ca7a9551"
CUTLASS_TAG, CUTLASS_COMMIT = "v4.7.0", "dcf215af68a2d08d305076c152a06f201728cd53"
FLASHINFER_COMMIT = "fb28d7242b3506a2348265962041acc1fb56cca4"

FAMILY_FLAGS = {
    # kernels/common.mk, GPU=H100, device-relevant flags only.
    "thunderkittens": ["-std=c++20", "-O3", "--use_fast_math", "--expt-extended-lambda",
                       "-DKITTENS_HOPPER", "-Xcompiler=-fno-strict-aliasing"],
    # CUTLASS's top CMakeLists.txt: the nvcc flags every example gets by default.
    "cutlass_examples": ["-std=c++17", "-DCUTLASS_ENABLE_TENSOR_CORE_MMA=1", "-DCUTLASS_TEST_LEVEL=0",
                         "-DCUTLASS_TEST_ENABLE_CACHED_RESULTS=1",
                         "-DCUTLASS_CONV_UNIT_TEST_RIGOROUS_SIZE_ENABLED=1",
                         "-DCUTLASS_DEBUG_TRACE_LEVEL=0", "-ftemplate-backtrace-limit=0"],
    # flashinfer/jit: cpp_ext.build_cuda_cflags + core.sm90a_nvcc_flags (c++17 as torch builds it).
    "flashinfer": ["-std=c++17", "-O3", "-DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED",
                   "-DFLASHINFER_ENABLE_FP8_E8M0", "-DFLASHINFER_ENABLE_FP4_E2M1",
                   "-static-global-template-stub=false"],
}


def add_source_args(p):
    p.add_argument("--tk-src", default=os.environ.get("TK_SRC"),
                   help=f"a ThunderKittens checkout at {TK_COMMIT}")
    p.add_argument("--cutlass-src", default=os.environ.get("CUTLASS_SRC"),
                   help=f"a CUTLASS checkout at {CUTLASS_TAG}")
    p.add_argument("--flashinfer-src", default=os.environ.get("FLASHINFER_SRC"),
                   help=f"a FlashInfer checkout at {FLASHINFER_COMMIT}")


def _need(path, what):
    if not path:
        raise SystemExit(f"pass --{what}-src DIR (see xtask/real_nvcc_generators.py)")
    return os.path.abspath(path)


def includes(family, args, wheel_cutlass_inc):
    if family == "thunderkittens":
        tk = _need(args.tk_src, "tk")
        cut = tk_cut(tk)
        return [f"-I{cut}", f"-I{tk}/include", f"-I{tk}/prototype"]
    if family == "cutlass_examples":
        cutlass = _need(args.cutlass_src, "cutlass")
        return [f"-I{cx_cut(cutlass)}", f"-I{cutlass}/include", f"-I{cutlass}/tools/util/include",
                f"-I{cutlass}/examples", f"-I{cutlass}/examples/common"]
    # FlashInfer builds against its own submodules: CUTLASS and CCCL (by -I, ahead of the CTK's).
    fi = _need(args.flashinfer_src, "flashinfer")
    sub = os.path.join(fi, "3rdparty")
    return [f"-I{fi_render(fi)}", f"-I{fi}/include", f"-I{fi}/csrc",
            f"-I{sub}/cutlass/include", f"-I{sub}/cutlass/tools/util/include",
            f"-I{sub}/cccl/cub", f"-I{sub}/cccl/libcudacxx/include", f"-I{sub}/cccl/thrust"]


# ---------------------------------------------------------------------------
# ThunderKittens: source (under kernels/) -> the first line of its host-side tail.
TK_SOURCES = {
    "attention/mha_h100/mha_h100.cu": r"#ifdef TORCH_COMPILE\s*$",
    "attention/mha_h100_lcf/mha_h100_lcf.cu": r"#include <iostream>",
    "gemm/bf16_h100/bf16_h100_gemm.cu": r"#include <iostream>",
    "gemm/fp8_h100/fp8_h100_gemm.cu": r"#include <iostream>",
    "gemm/fp8_h100_scaled/fp8_h100_gemm_scaled.cu": r"template<typename mmt>",
    "gemm/educational_h100/level_05.cu": r'#include "launch.cu"',
    "gemm/educational_h100/level_06.cu": r'#include "launch.cu"',
    "gemm/educational_h100/level_07.cu": r'#include "launch.cu"',
    "gemm/educational_h100/level_08.cu": r'#include "launch.cu"',
    "based/linear_attn.cu": r"#ifdef TK_COMPILE_BASED",
    "hedgehog/hedgehog.cu": r"#ifdef TK_COMPILE_HEDGEHOG",
    "linear_attention/linear_attention.cu": r"#include <iostream>",
    "mamba2/mamba2.cu": r"#ifdef TK_COMPILE_MAMBA2",
    "fftconv/fftconv_pc.cu": r"template<int SEQ> typename",
    "flux/flux_gate.cu": r"#include <iostream>",
    "flux/flux_gelu.cu": r"#ifdef RUN_MAIN",
}


def cut_sources(src_root, out, cuts):
    """Copy the top directories of the listed sources from src_root to out, and write beside each
    source `<stem>.kernels.cuh`: the source up to its cut.  A cut is a regular expression
    (cut before the first line matching it) or "after:" and one (cut after the statement
    that starts on the first line matching it).  Conditionals left open are closed."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    for d in sorted({rel.split("/")[0] for rel in cuts}):
        shutil.copytree(os.path.join(src_root, d), os.path.join(out, d), dirs_exist_ok=True)
    for rel, spec in cuts.items():
        lines = open(os.path.join(out, rel)).read().splitlines(keepends=True)
        after = spec.startswith("after:")
        pat = spec[len("after:"):] if after else spec
        cut = next((i for i, l in enumerate(lines) if re.match(pat, l)), None)
        if cut is None:
            raise SystemExit(f"no line matching {pat!r} in {rel}")
        if after:
            while not lines[cut].rstrip().endswith(";"):
                cut += 1
            cut += 1
        kept = lines[:cut]
        depth = 0
        for l in kept:
            if re.match(r"\s*#\s*if", l):
                depth += 1
            elif re.match(r"\s*#\s*endif", l):
                depth -= 1
        with open(os.path.join(out, rel[:-3] + ".kernels.cuh"), "w") as f:
            f.writelines(kept + ["\n#endif\n"] * depth)
    return out


def tk_cut(tk):
    """Copy <tk>/kernels to target/tk-cut and write each listed source's device part."""
    return cut_sources(os.path.join(tk, "kernels"), os.path.join(ROOT, "target", "tk-cut"), TK_SOURCES)


LCF, LCSF = "kittens::prototype::lcf::kernel", "kittens::prototype::lcsf::kernel"

# name, source, kernel expression, what it is (the launcher that uses these arguments)
TK_KERNELS = [
    *[(f"mha_fwd_d{d}_{'causal' if c else 'noncausal'}", "attention/mha_h100/mha_h100.cu",
       f"fwd_attend_ker<{d}, {'true' if c else 'false'}>",
       f"MHA forward, head dim {d}, {'causal' if c else 'non-causal'} (attention_forward dispatch)")
      for d in (64, 128) for c in (False, True)],
    *[(f"mha_bwd_prep_d{d}", "attention/mha_h100/mha_h100.cu", f"bwd_attend_prep_ker<{d}>",
       f"MHA backward prologue (O.dO row sums), head dim {d}") for d in (64, 128)],
    *[(f"mha_bwd_d{d}_{'causal' if c else 'noncausal'}", "attention/mha_h100/mha_h100.cu",
       f"bwd_attend_ker<{d}, {'true' if c else 'false'}>",
       f"MHA backward dQ/dK/dV, head dim {d}, {'causal' if c else 'non-causal'} (attention_backward dispatch)")
      for d in (64, 128) for c in (False, True)],
    *[(f"mha_lcf_fwd_d{d}", "attention/mha_h100_lcf/mha_h100_lcf.cu", f"{LCF}<attn_fwd_template<{d}>>",
       f"MHA forward on the load-compute-finish template, head dim {d}, 3 consumer warpgroups")
      for d in (64, 128)],
    *[(f"gemm_bf16_m{m}_n{n}_super{s}", "gemm/bf16_h100/bf16_h100_gemm.cu",
       f"{LCF}<matmul_template<{m}, {n}, {s}>>",
       f"bf16 GEMM, {m}x{n} 64x64 tiles per block ({m} consumer warpgroups), SUPER_M {s}")
      for m, n, s in ((2, 4, 8), (3, 3, 12), (2, 4, 11))],
    ("gemm_fp8_super8", "gemm/fp8_h100/fp8_h100_gemm.cu", f"{LCF}<matmul_template<8>>",
     "fp8 e4m3 GEMM with fp8 output, SUPER_M 8 (fp8_gemm binding and benchmark)"),
    ("gemm_fp8_scaled_super8", "gemm/fp8_h100_scaled/fp8_h100_gemm_scaled.cu", f"{LCF}<matmul_template<8>>",
     "fp8 e4m3 GEMM with per-row/per-column scales, SUPER_M 8"),
    *[(f"gemm_educational_level{l:02d}", f"gemm/educational_h100/level_{l:02d}.cu", "kernel",
       f"educational bf16 GEMM, level {l}") for l in (5, 6, 7, 8)],
    ("based_linear_attn", "based/linear_attn.cu", "based_linear_attention",
     "Based: Taylor-feature linear attention forward (feature dim 16, head dim 64)"),
    ("hedgehog", "hedgehog/hedgehog.cu", "hedgehog_linear_attention_smd",
     "Hedgehog: learned feature map + sliding window linear attention forward"),
    ("linear_attention", "linear_attention/linear_attention.cu", "la_kernel",
     "causal linear attention forward, head dim 64"),
    ("mamba2_fwd", "mamba2/mamba2.cu", f"{LCSF}<mamba2_fwd_template>",
     "Mamba-2 SSD chunked scan forward (load-compute-store-finish template)"),
    *[(f"fftconv_{n}", "fftconv/fftconv_pc.cu", f"{LCSF}<fft_{n}_template>",
       f"FFT convolution, sequence {n} (Monarch FFT as GEMMs)") for n in (1024, 4096)],
    *[(f"flux_gate_{m}x{n}x{k}", "flux/flux_gate.cu", f"{LCF}<flux_matmul_gate_template<{m}, {n}, {k}>>",
       f"Flux: GEMM + bias + gate + residual epilogue, tile {m}x{n}x{k}")
      for m, n, k in ((192, 192, 64), (128, 256, 64))],
    *[(f"flux_gelu_{m}x{n}x{k}{'_tl' if tl else ''}", "flux/flux_gelu.cu",
       f"{LCF}<flux_matmul_gelu_template<{m}, {n}, {k}, {tl}, 0>>",
       f"Flux: GEMM + bias + GELU epilogue, tile {m}x{n}x{k}{', transposed lhs' if tl else ''}")
      for m, n, k, tl in ((192, 192, 64, 0), (128, 192, 64, 0), (128, 192, 64, 1))],
]


def tk_wrapper(name, source, kernel, what):
    return (f"// ThunderKittens {TK_COMMIT[:12]} kernels/{source}: {what}.\n"
            f"// Kernel: {kernel}.\n"
            f"#include \"{source[:-3]}.kernels.cuh\"\n"
            f"void *ori_kernel_entry() {{ return reinterpret_cast<void *>(&{kernel}); }}\n")


# ---------------------------------------------------------------------------
# CUTLASS examples.  Most define their kernel types at file scope: the build cuts each
# example after the statement that defines the type a wrapper names (or before `main`).
CX_SOURCES = {
    "48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu": r"after:using Gemm =",
    "49_hopper_gemm_with_collective_builder/49_collective_builder.cu": r"int main",
    "54_hopper_fp8_warp_specialized_gemm/54_hopper_fp8_warp_specialized_gemm.cu": r"after:using Gemm =",
    "55_hopper_mixed_dtype_gemm/55_hopper_int4_bf16_gemm.cu": r"after:using GemmScaleWithZeroPointShuffled =",
    "55_hopper_mixed_dtype_gemm/55_hopper_int4_fp8_gemm.cu": r"after:using GemmShuffled +=",
    "55_hopper_mixed_dtype_gemm/55_hopper_mixed_dtype_gemm.cu": r"after:using GemmScaleWithZeroPoint =",
    "56_hopper_ptr_array_batched_gemm/56_hopper_ptr_array_batched_gemm.cu": r"after:using GemmPingpong =",
    "57_hopper_grouped_gemm/57_hopper_grouped_gemm.cu": r"after:using GemmPingpong =",
    "61_hopper_gemm_with_topk_and_softmax/61_hopper_gemm_with_topk_and_softmax.cu": r"after:using Gemm =",
    "62_hopper_sparse_gemm/62_hopper_sparse_gemm.cu": r"after:using Gemm =",
    "63_hopper_gemm_with_weight_prefetch/63_hopper_gemm_with_weight_prefetch.cu": r"after:using Gemm =",
    "67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling/67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling.cu": r"after:using Gemm =",
    "67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling/67_hopper_fp8_warp_specialized_gemm_with_groupwise_scaling.cu": r"after:using Gemm =",
    "68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling/68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling.cu": r"after:using Gemm =",
    "68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling/68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling_with_sparse_groups.cu": r"after:using Gemm =",
    "69_hopper_mixed_dtype_grouped_gemm/69_hopper_int4_bf16_grouped_gemm.cu": r"after:using GemmScaleOnly =",
    "69_hopper_mixed_dtype_grouped_gemm/69_hopper_int4_fp8_grouped_gemm.cu": r"after:using GemmScaleOnly =",
    "69_hopper_mixed_dtype_grouped_gemm/69_hopper_mixed_dtype_grouped_gemm.cu": r"after:using GemmScaleOnly =",
    "113_hopper_gemm_activation_fusion/113_hopper_gemm_fused_act.cu": r"after:using Gemm =",
    "113_hopper_gemm_activation_fusion/113_hopper_gemm_fused_gated_act.cu": r"after:using Gemm =",
    "113_hopper_gemm_activation_fusion/113_hopper_grouped_gemm_fused_act.cu": r"after:using Gemm =",
    "113_hopper_gemm_activation_fusion/113_hopper_grouped_gemm_fused_gated_act.cu": r"after:using Gemm =",
}


def cx_cut(cutlass):
    return cut_sources(os.path.join(cutlass, "examples"),
                       os.path.join(ROOT, "target", "cutlass-examples-cut"), CX_SOURCES)


def _cx(name, source, adapter, what):
    """A kernel a cut example defines: `adapter` is its GemmUniversalAdapter type."""
    src = next(k for k in CX_SOURCES if k.split("/")[1].startswith(source))
    text = (f"// CUTLASS {CUTLASS_TAG} examples/{src}: {what}.\n"
            f"// Kernel: cutlass::device_kernel<{adapter}::GemmKernel>.\n"
            f"#include \"{src[:-3]}.kernels.cuh\"\n"
            f"void *ori_kernel_entry() {{\n"
            f"  return reinterpret_cast<void *>(&cutlass::device_kernel<{adapter}::GemmKernel>);\n}}\n")
    return name, text


def _fmha(name, elem, tile, policy, fusion, what, opts=""):
    el = {"f16": "cutlass::half_t", "e4m3": "cutlass::float_e4m3_t"}[elem]
    t = "cute::Shape<" + ", ".join(f"cute::_{x}" for x in tile) + ">"
    return name, (f"// CUTLASS {CUTLASS_TAG} examples/88_hopper_fmha: forward, {what}.\n"
                  f"// FwdRunner<{t}, {policy}, {fusion}{opts}> as run_fwd_{tile[2]} instantiates it"
                  f"{' (FP8 build)' if elem == 'e4m3' else ''}.\n"
                  "// nvcc-extra: --use_fast_math\n"
                  "#include \"ori_fmha88.cuh\"\n"
                  f"ORI_EMIT(ori::Fwd<{el}, {t}, ori::{policy}, ori::{fusion}{opts}>::Kernel)\n")


def _fmha_bwd(name, tile, fusion, what):
    t = "cute::Shape<" + ", ".join(f"cute::_{x}" for x in tile) + ">"
    return name, (f"// CUTLASS {CUTLASS_TAG} examples/88_hopper_fmha: backward (dQ/dK/dV), {what}.\n"
                  f"// BwdRunner<{t}, KernelCooperative, {fusion}> as run_bwd_{tile[2]} instantiates it.\n"
                  "// nvcc-extra: --use_fast_math\n"
                  "#include \"ori_fmha88.cuh\"\n"
                  f"ORI_EMIT(ori::Bwd<{t}, ori::{fusion}>::Kernel)\n")


def _ssd(name, elem, has_d, d_has_hdim, has_z, what):
    el = {"bf16": "cutlass::bfloat16_t", "f16": "cutlass::half_t"}[elem]
    b = lambda v: "true" if v else "false"
    return name, (f"// CUTLASS {CUTLASS_TAG} examples/111_hopper_ssd: Mamba-2 SSD chunk kernel, {what}.\n"
                  f"// Sm90SsdBuilder<{elem}, float, float, {elem}, (L, D, N) = (128, 64, 128), HAS_D {b(has_d)},"
                  f" D_HAS_HDIM {b(d_has_hdim)}, HAS_Z {b(has_z)}> as the example's TestBed builds it.\n"
                  "#include \"ori_ssd111.cuh\"\n"
                  f"ORI_EMIT(ori::Ssd<{el}, 128, 64, 128, {b(has_d)}, {b(d_has_hdim)}, {b(has_z)}>)\n")


def _runner49(name, args, what):
    return _cx(name, "49_", f"ExampleRunner<{args}>", what)


CX_KERNELS = [
    _cx("ws_gemm_48", "48_", "Gemm", "warp-specialized GEMM (example 48)"),
    _runner49("builder_auto_49", "", "collective builder, auto schedule and stages"),
    _runner49("builder_tma_nosmem_49", "cutlass::gemm::KernelTma, cutlass::epilogue::NoSmemWarpSpecialized",
              "collective builder, KernelTma + NoSmemWarpSpecialized epilogue"),
    _runner49("builder_pingpong_49", "cutlass::gemm::KernelTmaWarpSpecializedPingpong, "
              "cutlass::epilogue::TmaWarpSpecialized", "collective builder, ping-pong + TMA epilogue"),
    _runner49("builder_coop_streamk_49", "cutlass::gemm::KernelTmaWarpSpecializedCooperative, "
              "cutlass::epilogue::TmaWarpSpecializedCooperative, cutlass::gemm::collective::StageCountAuto, "
              "cutlass::gemm::StreamKScheduler", "collective builder, cooperative + stream-K"),
    _runner49("builder_coop_custom_evt_49", "cutlass::gemm::KernelTmaWarpSpecializedCooperative, "
              "cutlass::epilogue::TmaWarpSpecializedCooperative, cutlass::gemm::collective::StageCountAuto, "
              "cutlass::gemm::PersistentScheduler, true", "collective builder, cooperative + custom EVT epilogue"),
    _cx("fp8_gemm_54", "54_", "Gemm", "fp8 e4m3 GEMM with scaled, amax and aux output epilogue"),
    _cx("mixed_int4_bf16_convert_55", "55_hopper_int4_bf16", "GemmConvertOnly", "int4 x bf16, convert only"),
    _cx("mixed_int4_bf16_scale_55", "55_hopper_int4_bf16", "GemmScaleOnly", "int4 x bf16, group scales"),
    _cx("mixed_int4_bf16_scale_zero_55", "55_hopper_int4_bf16", "GemmScaleWithZeroPoint",
        "int4 x bf16, group scales and zero points"),
    _cx("mixed_int4_bf16_scale_shuffled_55", "55_hopper_int4_bf16", "GemmScaleOnlyShuffled",
        "int4 x bf16, group scales, shuffled (reordered) int4 layout"),
    _cx("mixed_int4_fp8_scale_55", "55_hopper_int4_fp8", "GemmScaleOnly", "int4 x fp8 e4m3, group scales (lookup-table convert)"),
    _cx("mixed_int4_fp8_shuffled_55", "55_hopper_int4_fp8", "GemmShuffled", "int4 x fp8 e4m3, shuffled layout"),
    _cx("mixed_dtype_convert_55", "55_hopper_mixed_dtype", "GemmConvertOnly", "int8 x fp16 mixed input, convert only"),
    _cx("mixed_dtype_scale_zero_55", "55_hopper_mixed_dtype", "GemmScaleWithZeroPoint",
        "int8 x fp16 mixed input, scales and zero points"),
    _cx("ptr_array_coop_56", "56_", "Gemm", "ptr-array batched GEMM, cooperative"),
    _cx("ptr_array_pingpong_56", "56_", "GemmPingpong", "ptr-array batched GEMM, ping-pong"),
    _cx("grouped_coop_57", "57_", "Gemm", "grouped GEMM, cooperative"),
    _cx("grouped_pingpong_57", "57_", "GemmPingpong", "grouped GEMM, ping-pong"),
    _cx("topk_softmax_evt_61", "61_", "Gemm", "GEMM with a top-k + softmax EVT epilogue"),
    _cx("sparse_gemm_62", "62_", "Gemm", "2:4 structured-sparse GEMM"),
    _cx("weight_prefetch_63", "63_", "Gemm", "fp8 GEMM with weight prefetch"),
    _cx("fp8_blockwise_67", "67_hopper_fp8_warp_specialized_gemm_with_blockwise", "Gemm", "fp8 GEMM, blockwise scaling"),
    _cx("fp8_groupwise_67", "67_hopper_fp8_warp_specialized_gemm_with_groupwise", "Gemm", "fp8 GEMM, groupwise scaling"),
    _cx("fp8_grouped_blockwise_68", "68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling.cu", "Gemm",
        "grouped fp8 GEMM, blockwise scaling"),
    _cx("fp8_grouped_blockwise_sparse_groups_68", "68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling_with",
        "Gemm", "grouped fp8 GEMM, blockwise scaling, sparse groups"),
    _cx("grouped_mixed_int4_bf16_scale_69", "69_hopper_int4_bf16", "GemmScaleOnly", "grouped int4 x bf16, group scales"),
    _cx("grouped_mixed_int4_fp8_scale_69", "69_hopper_int4_fp8", "GemmScaleOnly", "grouped int4 x fp8, group scales"),
    _cx("grouped_mixed_dtype_scale_69", "69_hopper_mixed_dtype", "GemmScaleOnly", "grouped int8 x fp16, group scales"),
    _cx("fused_act_113", "113_hopper_gemm_fused_act", "Gemm", "GEMM + scaled activation epilogue"),
    _cx("fused_gated_act_113", "113_hopper_gemm_fused_gated_act", "Gemm", "GEMM + gated activation (SwiGLU-style)"),
    _cx("grouped_fused_act_113", "113_hopper_grouped_gemm_fused_act", "Gemm", "grouped GEMM + activation"),
    _cx("grouped_fused_gated_act_113", "113_hopper_grouped_gemm_fused_gated_act", "Gemm", "grouped GEMM + gated activation"),
    _fmha("fmha_fwd_f16_d64_tma_64x128", "f16", (64, 128, 64), "KernelTma", "DefaultFusion", "f16, head dim 64, KernelTma 64x128"),
    _fmha("fmha_fwd_f16_d64_coop_128x64", "f16", (128, 64, 64), "KernelCooperative", "DefaultFusion", "f16, head dim 64, cooperative 128x64"),
    _fmha("fmha_fwd_f16_d64_pingpong_causal", "f16", (128, 64, 64), "KernelPingpong", "CausalFusion", "f16, head dim 64, ping-pong, causal"),
    _fmha("fmha_fwd_f16_d128_coop", "f16", (128, 128, 128), "KernelCooperative", "DefaultFusion", "f16, head dim 128, cooperative"),
    _fmha("fmha_fwd_f16_d128_coop_causal", "f16", (128, 128, 128), "KernelCooperative", "CausalFusion", "f16, head dim 128, cooperative, causal"),
    _fmha("fmha_fwd_f16_d128_pingpong_residual", "f16", (128, 128, 128), "KernelPingpong", "ResidualFusion", "f16, head dim 128, ping-pong, residual mask"),
    _fmha("fmha_fwd_f16_d256_coop", "f16", (128, 64, 256), "KernelCooperative", "DefaultFusion", "f16, head dim 256, cooperative 128x64"),
    _fmha("fmha_fwd_e4m3_d128_coop_accf16", "e4m3", (128, 256, 128), "KernelCooperative", "DefaultFusion",
          "e4m3, head dim 128, cooperative 128x256, f16 QK accumulator", ", ori::Option<ori::Tag::kAccQK, cutlass::half_t>"),
    _fmha("fmha_fwd_e4m3_d128_coop_causal", "e4m3", (128, 256, 128), "KernelCooperative", "CausalFusion",
          "e4m3, head dim 128, cooperative 128x256, causal"),
    _fmha("fmha_fwd_e4m3_d256_pingpong", "e4m3", (128, 128, 256), "KernelPingpong", "DefaultFusion", "e4m3, head dim 256, ping-pong"),
    _fmha_bwd("fmha_bwd_f16_d64_64x128", (64, 128, 64), "DefaultFusion", "f16, head dim 64, 64x128"),
    _fmha_bwd("fmha_bwd_f16_d64_128x128_causal", (128, 128, 64), "CausalFusion", "f16, head dim 64, 128x128, causal"),
    _fmha_bwd("fmha_bwd_f16_d128", (64, 128, 128), "DefaultFusion", "f16, head dim 128"),
    _fmha_bwd("fmha_bwd_f16_d128_causal", (64, 128, 128), "CausalFusion", "f16, head dim 128, causal"),
    _ssd("ssd_bf16_d_z", "bf16", True, True, True, "bf16, with D (per head dim) and Z gating (the example's options)"),
    _ssd("ssd_bf16_plain", "bf16", False, False, False, "bf16, no D, no Z"),
]


# ---------------------------------------------------------------------------
# FlashInfer's sm90 (fa3 backend) prefill, as its JIT builds a module
# (flashinfer/jit/attention/modules.py, gen_customize_{single,batch}_prefill_module with
# backend "fa3"): the build renders the checkout's csrc/*_sm90_customize_config.jinja with the
# same arguments into target/flashinfer-gen/<name>/, and the wrapper holds the one explicit
# instantiation that csrc/*_sm90_kernel_inst.jinja renders for its mask mode (the batch ones
# render two, SAME_SCHEDULER_FOR_ALL_HEADS true and false: the wrapper takes one).
FI_DTYPE = {"f16": "half", "bf16": "nv_bfloat16", "e4m3": "__nv_fp8_e4m3"}
FI_MASK = {"none": "MaskMode::kNone", "causal": "MaskMode::kCausal"}


def _fi_params(fp8, batch):
    """(tensor names, tensor dtypes, scalar names, scalar dtypes) of the fa3 default variants."""
    if fp8:
        return (["maybe_scale_q", "maybe_scale_k", "maybe_scale_v"], ["float"] * 3,
                ["sm_scale", "scale_q_scalar", "scale_k_scalar", "scale_v_scalar"], ["double"] * 4)
    if batch:
        return (["maybe_prefix_len_ptr", "maybe_token_pos_in_items_ptr", "maybe_max_item_len_ptr",
                 "maybe_scale_v"], ["uint32_t", "uint16_t", "uint16_t", "float"],
                ["logits_soft_cap", "sm_scale", "scale_v_scalar", "token_pos_in_items_len"],
                ["double", "double", "double", "int64_t"])
    return (["maybe_scale_v"], ["float"], ["logits_soft_cap", "sm_scale", "scale_v_scalar"],
            ["double", "double", "double"])


def fi_config(k):
    """The jinja arguments of one kernel (generate_additional_params with is_sm90_template)."""
    fp8 = k["dtype"] == "e4m3"
    tn, tdt, sn, sdt = _fi_params(fp8, k["kind"] != "single")
    decl = "".join(f"{d}* {v};\n" for d, v in zip(tdt, tn)) + "".join(f"{d} {v};\n" for d, v in zip(sdt, sn))
    func = "".join(f", Optional<ffi::Tensor> {v}" for v in tn) + "".join(f", {d} {v}" for d, v in zip(sdt, sn))
    setter = " \\\n".join(
        [f"params.additional_params.{v} = {v} ? static_cast<{d}*>({v}.value().data_ptr()): nullptr;"
         for d, v in zip(tdt, tn)] + [f"params.additional_params.{v} = {v};" for v in sn])
    variant = "DefaultFP8Attention" if fp8 else f"DefaultAttention<{str(k['softcap']).lower()}>"
    dto = FI_DTYPE["bf16" if fp8 else k["dtype"]]
    return {"variant_decl": "#include<flashinfer/attention/hopper/variants.cuh>", "variant_name": variant,
            "dtype_q": FI_DTYPE[k["dtype"]], "dtype_kv": FI_DTYPE[k["dtype"]], "dtype_o": dto,
            "idtype": "int32_t", "require_fp4_kv_cache": False,
            "head_dim_qk": k["dqk"], "head_dim_vo": k["dvo"], "pos_encoding_mode": "PosEncodingMode::kNone",
            "use_sliding_window": str(k["swa"]).lower(), "use_logits_soft_cap": str(k["softcap"]).lower(),
            "use_fp16_qk_reduction": "false", "additional_params_decl": decl,
            "additional_func_params": func, "additional_params_setter": setter}


def _fi(kind, dtype, dqk, mask, swa=False, softcap=False, dvo=None):
    k = dict(kind=kind, dtype=dtype, dqk=dqk, dvo=dvo or dqk, mask=mask, swa=swa, softcap=softcap)
    name = f"{kind}_{dtype}_d{dqk}" + (f"_{dvo}" if dvo else "") + f"_{mask}"
    name += "_swa" if swa else ""
    name += "_softcap" if softcap else ""
    k["name"] = name
    return k


FI_KERNELS = [
    _fi("single", "f16", 128, "none"), _fi("single", "f16", 128, "causal"),
    _fi("single", "bf16", 64, "causal"), _fi("single", "bf16", 256, "none"),
    _fi("single", "bf16", 128, "causal", swa=True), _fi("single", "bf16", 128, "none", softcap=True),
    _fi("single", "bf16", 192, "causal", dvo=128),
    _fi("single", "e4m3", 128, "causal"), _fi("single", "e4m3", 256, "none"),
    _fi("ragged", "bf16", 128, "causal"), _fi("ragged", "f16", 64, "none"),
    _fi("ragged", "bf16", 192, "causal", dvo=128),
    _fi("paged", "bf16", 128, "causal"), _fi("paged", "f16", 256, "none"),
    _fi("paged", "bf16", 64, "causal", softcap=True), _fi("paged", "e4m3", 128, "causal"),
]


def fi_wrapper(k):
    cfg = fi_config(k)
    fp8 = k["dtype"] == "e4m3"
    single = k["kind"] == "single"
    stem = "single_prefill_sm90" if single else "batch_prefill_sm90"
    hdr = "quantization/prefill_sm90.cuh" if fp8 else "prefill_sm90.cuh"
    mask, swa, variant = FI_MASK[k["mask"]], cfg["use_sliding_window"], cfg["variant_name"]
    if single:
        fn = "SingleFP8PrefillWithKVCacheDispatched" if fp8 else "SinglePrefillWithKVCacheDispatched"
        dims = f"{k['dqk']}" if fp8 else f"{k['dqk']}, {k['dvo']}"
        inst = (f"template cudaError_t {fn}\n    <{dims}, {mask}, /*USE_SLIDING_WINDOW=*/{swa}, {variant}, Params>(\n"
                f"    Params& params, cudaStream_t stream);")
    else:
        kind = k["kind"].capitalize()
        fn = f"Batch{'FP8' if fp8 else ''}PrefillWith{kind}KVCacheDispatched"
        dims = f"{k['dqk']}" if fp8 else f"{k['dqk']}, {k['dvo']}"
        inst = (f"template cudaError_t {fn}\n    <{dims}, {mask}, /*USE_SLIDING_WINDOW=*/{swa},\n"
                f"     /*SAME_SCHEDULER_FOR_ALL_HEADS=*/true, {variant}, {kind}Params>(\n"
                f"    {kind}Params& params, bool enable_pdl, cudaStream_t stream);")
    what = (f"{'single' if single else k['kind'] + '-KV batch'} prefill, {k['dtype']}, head dim "
            f"{k['dqk']}{'/' + str(k['dvo']) if k['dvo'] != k['dqk'] else ''}, mask {k['mask']}"
            f"{', sliding window' if k['swa'] else ''}{', logits soft cap' if k['softcap'] else ''}")
    return (f"// FlashInfer {FLASHINFER_COMMIT[:12]} sm90 (fa3) {what}.\n"
            f"// Config: csrc/{stem}_customize_config.jinja rendered into target/flashinfer-gen/{k['name']}/;"
            f" variant {variant}.\n"
            f"#include <flashinfer/attention/hopper/{hdr}>\n"
            f"#include \"{k['name']}/{stem}_config.inc\"\n"
            f"using namespace flashinfer;\nnamespace flashinfer {{\n{inst}\n}}  // namespace flashinfer\n")


def fi_render(fi):
    """Render each kernel's config from the checkout's templates into target/flashinfer-gen."""
    import jinja2
    out = os.path.join(ROOT, "target", "flashinfer-gen")
    for k in FI_KERNELS:
        stem = "single_prefill_sm90" if k["kind"] == "single" else "batch_prefill_sm90"
        with open(os.path.join(fi, "csrc", f"{stem}_customize_config.jinja")) as f:
            templ = jinja2.Template(f.read())
        d = os.path.join(out, k["name"])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"{stem}_config.inc"), "w") as f:
            f.write(templ.render(**fi_config(k)))
    return out


def wrappers():
    """family -> [(name, wrapper text)]"""
    return {
        "thunderkittens": [(n, tk_wrapper(n, s, k, w)) for n, s, k, w in TK_KERNELS],
        "cutlass_examples": CX_KERNELS,
        "flashinfer": [(k["name"], fi_wrapper(k)) for k in FI_KERNELS],
    }


def cmd_wrappers(args):
    for family, items in wrappers().items():
        d = os.path.join(SRC_DIR, family)
        os.makedirs(d, exist_ok=True)
        for name, text in items:
            with open(os.path.join(d, name + ".cu"), "w") as f:
                f.write(text)
        print(f"[{family}] {len(items)} wrappers")


def extra_flags(src):
    """Flags a wrapper's `// nvcc-extra:` line adds (a per-source flag of the project's build)."""
    for line in open(src):
        if not line.startswith("//"):
            break
        if line.startswith("// nvcc-extra:"):
            return line.split(":", 1)[1].split()
    return []
