#!/usr/bin/env bash
# What a Triton user sees with ori, on a machine with a Hopper GPU and
# Triton (and PyTorch) installed: the wheel from target/wheels (or
# ORI_WHEEL) goes into a fresh virtual environment that sees the machine's
# packages, installed with no package index; then gpu_check.py runs the
# two kernels of python/tests/kernels.py on the GPU through the hook and
# through the wrapper and prints what each prints.
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-python3}
wheel=${ORI_WHEEL:-$(ls -t target/wheels/ori-*.whl | head -1)}
work=$(mktemp -d)
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --quiet --no-index --no-deps "$wheel"
echo "installed $wheel into $work/venv"
"$work/venv/bin/python" tests/triton_hook/gpu_check.py
