"""Compile one Triton kernel for sm_90a on the CPU, with Triton's ptxas step
going through ori's wrapper (TRITON_PTXAS_PATH=.../ori-ptxas).

Run by crates/ori-cli/tests/ptxas_wrapper.rs with the environment set
(TRITON_PTXAS_PATH, ORI_PTXAS, ORI_PTXAS_LOG, TRITON_CACHE_DIR). The kernel
is the real-corpus kernel mm_f16acc_64x64x64_s3_w4 of xtask/gen_real_triton.py
(an f16-accumulator matmul, for which ptxas 13.0.88 injects a wait, C7517).
Prints the path of the cubin Triton got from the wrapper.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "xtask"))

import gen_real_triton as g  # noqa: E402

spec = next(s for s in g.plan() if s.name == "mm_f16acc_64x64x64_s3_w4")
ptx = g.compile_spec(spec, 90)
assert ".entry mm_kernel" in ptx
print("compiled")
