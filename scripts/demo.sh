#!/usr/bin/env bash
# `make demo`: shows what symmflow can do today, from the build directory $1.
set -euo pipefail
BUILD=${1:-build/dev}
SF="$BUILD/symmflow"
echo "== symmflow ops symm_mem: the symmetric-memory ops and the args they need in symmetric memory"
"$SF" ops symm_mem
echo
echo "== symmflow ops c10d: collectives and point-to-point (PyTorch _c10d_functional schemas)"
"$SF" ops c10d
if "$SF" launch --help > /dev/null 2>&1 && [ -x "$BUILD/examples/allreduce_demo" ]; then
  echo
  echo "== 2 ranks: all_reduce on symmetric memory"
  "$SF" launch --nproc 2 --prefix-output -- "$BUILD/examples/allreduce_demo"
fi
