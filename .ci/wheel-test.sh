#!/usr/bin/env bash
# The pip wheel as a user gets it: `cargo xtask wheel`, installed into a
# fresh virtual environment with no package index, then the Python tests
# (python/tests) against the installed copy: ori.check on the real Triton
# corpus (checked against ptxas's recorded messages), ori-ptxas as a
# drop-in with a scripted ptxas, and the Triton hook and wrapper under a
# pinned Triton compiling for sm_90a on the CPU. The Triton part is skipped,
# with a message, only when that Triton cannot be installed (no network).
#
#   .ci/wheel-test.sh            build the wheel (dist profile, without PGO:
#                                CI tests what the wheel does, the release
#                                of record is built with `cargo xtask wheel`),
#                                then test it
#   ORI_WHEEL=PATH .ci/wheel-test.sh   test an existing wheel
#   ORI_CI_TRITON=3.6.0          the Triton to test with (default 3.6.0)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
triton_version=${ORI_CI_TRITON:-3.6.0}

wheel=${ORI_WHEEL:-}
if [ -z "$wheel" ]; then
    wheel=$(cargo xtask wheel --no-pgo)
fi
echo "wheel-test: $wheel ($(du -k "$wheel" | cut -f1) KiB)"

venv=target/wheel-test/venv
rm -rf "$venv"
"$python" -m venv "$venv"
start=$EPOCHREALTIME
"$venv/bin/pip" install --quiet --no-index "$wheel"
awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "wheel-test: offline pip install: %.1f s\n", b - a }'

# The tests import the installed `ori`, never the source tree's: they run
# from python/tests, which holds no package `ori`.
cd python/tests
export ORI_REPO="$OLDPWD"
unset ORI_BIN_DIR ORI_PTXAS ORI_TRITON ORI_PTXAS_LOG
../../"$venv"/bin/python -m unittest -v test_check test_ptxas_wrapper

if ../../"$venv"/bin/pip install --quiet "triton==$triton_version" 2>../../target/wheel-test/triton-install.log; then
    ORI_REQUIRE_TRITON=1 ../../"$venv"/bin/python -m unittest -v test_triton_hook
else
    echo "wheel-test: SKIPPED the Triton tests: cannot install triton==$triton_version" \
        "(target/wheel-test/triton-install.log):"
    tail -3 ../../target/wheel-test/triton-install.log
fi
