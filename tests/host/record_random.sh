#!/bin/sh
# The random-normal recordings in one GPU call (an sm_90 machine with ptxas
# and CuPy): generate the cases (deterministic, the same bytes as here),
# record them, and leave everything in two tar files under DIR:
#   DIR/cases_rn.tar  tests/host/cases_rn/NAME.gpu.bin
#   DIR/gpu_rn.tar    tests/host/triton/gpu_rn/NAME.gpu.npy.gz
# with the logs beside them. Back on the CPU, run the two generators with
# --random-normal, unpack the tars into those folders, and commit inputs,
# recordings and logs together.
#
#   sh tests/host/record_random.sh DIR
set -e
out=${1:?usage: record_random.sh DIR}
mkdir -p "$out" /tmp/rn/cases /tmp/rn/triton
python3 tests/host/gen_cases.py --random-normal
python3 tests/host/triton/cases.py --random-normal
names=$(cd tests/host/cases_rn && ls *.ptx | sed 's/\.ptx$//')
python3 tests/host/record_gpu.py --cases tests/host/cases_rn --out /tmp/rn/cases $names \
    > "$out/cases_rn.log" 2>&1
python3 tests/host/triton/record_gpu.py --out /tmp/rn/triton --random > "$out/gpu_rn.log" 2>&1
tar cf "$out/cases_rn.tar" -C /tmp/rn/cases .
tar cf "$out/gpu_rn.tar" -C /tmp/rn/triton .
tail -n 2 "$out/cases_rn.log" "$out/gpu_rn.log"
