#!/usr/bin/env bash
# `make demo`: what symmflow does today, from the build directory $1.
set -euo pipefail
BUILD=${1:-build/dev}
SF="$BUILD/symmflow"
echo "== symmflow launch --nproc 2: an all_reduce on symmetric memory, checked and timed"
"$SF" launch --nproc 2 --pin -- "$BUILD/examples/allreduce_demo"
echo
echo "== symmflow ops symm_mem: symmetric-memory ops, their PyTorch schemas and the args that must be symmetric"
"$SF" ops symm_mem
