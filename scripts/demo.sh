#!/usr/bin/env bash
# `make demo`: what symmflow does today, from the build directory $1.
set -euo pipefail
BUILD=${1:-build/dev}
SF="$BUILD/symmflow"
echo "== ring attention on 2 ranks: K/V blocks around the ring, each transfer in flight while the"
echo "   current block is computed; checked bitwise against eager; the overlap explained and traced"
"$SF" run examples/ring_attention/ring_attention.sf --nproc 2 --check --explain --trace "$BUILD/ring_attention.trace.json"
echo "   (open $BUILD/ring_attention.trace.json in https://ui.perfetto.dev: a compute and a communication lane per rank)"
echo
echo "== two ring exchanges interleaved with compute (examples/ring_overlap),"
echo "   traced P2P compiled without copies, checked bitwise against eager on 2 ranks"
"$SF" run examples/ring_overlap/ring_overlap.sf --nproc 2 --check --explain
echo
echo "== what the compiler did to it (rank 0 of 2)"
"$SF" compile examples/ring_overlap/ring_overlap.sf --world 2
echo
echo "== a tensor-parallel MLP in two micro-batches: each all_reduce's input is planned in symmetric memory (0 bytes copied into it)"
"$SF" run examples/tp_mlp/tp_mlp.sf --nproc 2 --check --explain
echo
echo "== the same kernel written in C++ (DESIGN.md §6), eager vs sf::compile"
"$SF" launch --nproc 2 -- "$BUILD/examples/ring_overlap" --check
echo
echo "== symmflow launch --nproc 2: an all_reduce on symmetric memory, checked and timed"
"$SF" launch --nproc 2 --pin -- "$BUILD/examples/allreduce_demo"
