#!/usr/bin/env bash
# Builds the fuzz preset (clang, libFuzzer, ASan + UBSan) and runs every harness
# of tests/fuzz over its seed corpus (tests/fuzz/corpus/<harness>/).
#
#   tests/fuzz/run.sh smoke        # `make test`: a bounded run, RUNS inputs each (default 3000)
#   tests/fuzz/run.sh 60           # `make fuzz`: 60 seconds each
#
# New inputs go to build/fuzz/corpus/<harness>/ (never into the repository); a
# crash leaves build/fuzz/crash/<harness>-crash-* and makes this script fail.
# Each crash becomes a gtest regression case beside the code it tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-smoke}
cmake --preset fuzz > /dev/null
cmake --build build/fuzz -j "${JOBS:-$(nproc)}"
mkdir -p build/fuzz/crash
status=0
for h in sf_parser schema_parser npy_reader inputs; do
  mkdir -p "build/fuzz/corpus/$h"
  if [ "$mode" = smoke ]; then limit="-runs=${RUNS:-3000}"; else limit="-max_total_time=$mode"; fi
  start=$(date +%s)
  # -timeout: one input taking seconds is a hang; -rss_limit_mb: the harnesses
  # allocate nothing close to it unless a size check is missing.
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
       "build/fuzz/fuzz_$h" "$limit" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
         -artifact_prefix="build/fuzz/crash/$h-" "build/fuzz/corpus/$h" "tests/fuzz/corpus/$h" \
         > "build/fuzz/$h.log" 2>&1; then
    echo "fuzz $h: FAILED (log: build/fuzz/$h.log)"; tail -40 "build/fuzz/$h.log"; status=1
  else
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build/fuzz/$h.log" | grep -o '[0-9]*$' || echo '?')
    echo "fuzz $h: ok, $runs inputs in $(( $(date +%s) - start )) s"
  fi
done
exit $status
