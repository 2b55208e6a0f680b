#!/usr/bin/env bash
# gpu-check.sh: the one command to run on a GPU host.
#   build for sm_90 (or reuse a build carried from a machine with the same checkout path),
#   run the GPU tests (ctest -L gpu), compute-sanitizer memcheck and racecheck on a small
#   GPU test, `topk info --bandwidth`, the quick benchmark suite with its peers, and print a
#   short summary table last.
# Environment: BUILD (build dir, default build), OUT (where logs and CSVs go, default
# ./gpu-check-out), REBUILD=1 (rebuild even if a build exists), SUITE (default quick),
# STEPS (space-separated subset of: build tests sanitizer info bench peers; default all),
# SANITIZERS (compute-sanitizer tools, default "memcheck racecheck initcheck"), GPU_TEST_JOBS
# (GPU tests run at once, default 4: they share the device fine and take ~4 min instead of ~7).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
OUT=${OUT:-$ROOT/gpu-check-out}
SUITE=${SUITE:-quick}
STEPS=${STEPS:-build tests sanitizer info bench peers}
mkdir -p "$OUT"
summary=()
note() { summary+=("$(printf '%-10s %-6s %s' "$1" "$2" "$3")"); }
want() { [[ " $STEPS " == *" $1 "* ]]; }
t0=$SECONDS

# A build made on another machine names its source by absolute path: make that path lead here.
if [ -f "$BUILD/CMakeCache.txt" ]; then
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")
  if [ -n "$src" ] && [ "$src" != "$ROOT" ] && [ ! -e "$src" ]; then
    mkdir -p "$(dirname "$src")" && ln -s "$ROOT" "$src"
  fi
fi

# A carried build also records that machine's cmake (the CLI tests run it) and python3 (the
# Python tests): where either is missing here, configure again (no compiling) to take this
# machine's, or ctest reports those tests "Not Run".
if [ -f "$BUILD/CMakeCache.txt" ] && [ -x "$BUILD/topk" ] && [ "${REBUILD:-0}" != 1 ]; then
  cm=$(sed -n 's/^CMAKE_COMMAND:INTERNAL=//p' "$BUILD/CMakeCache.txt")
  py=$(sed -n 's/^_Python3_EXECUTABLE:INTERNAL=//p' "$BUILD/CMakeCache.txt")
  if { [ -n "$cm" ] && [ ! -x "$cm" ]; } || { [ -n "$py" ] && [ ! -x "$py" ]; }; then
    if cmake -S . -B "$BUILD" -DPython3_EXECUTABLE="$(command -v python3)" -DCMAKE_MAKE_PROGRAM="$(command -v ninja)" \
      >"$OUT/reconfigure.log" 2>&1; then
      note configure ok "carried build: this machine's cmake and python3"
    else
      note configure FAIL "see reconfigure.log"
    fi
  fi
fi

if want build; then
  s=$SECONDS
  if [ -x "$BUILD/topk" ] && [ "${REBUILD:-0}" != 1 ]; then
    note build reuse "$BUILD ($(stat -c %y "$BUILD/topk" | cut -d. -f1))"
  else
    if cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
       cmake --build "$BUILD" -j "$(nproc)" >>"$OUT/build.log" 2>&1; then
      note build ok "$((SECONDS - s)) s"
    else
      tail -n 30 "$OUT/build.log"; note build FAIL "see build.log"
    fi
  fi
fi
TOPK="$BUILD/topk"
SUITES=(--suites "$ROOT/bench/suites.txt")

if want info; then
  if "$TOPK" info --bandwidth >"$OUT/info.txt" 2>&1; then
    note info ok "$(grep -i -m1 'bandwidth' "$OUT/info.txt")"
  else
    note info FAIL "$(tail -n 1 "$OUT/info.txt")"
  fi
  cat "$OUT/info.txt"
fi

if want tests; then
  s=$SECONDS
  (cd "$BUILD" && ctest -L gpu -j "${GPU_TEST_JOBS:-4}" --output-on-failure) >"$OUT/ctest_gpu.log" 2>&1
  rc=$?
  tail -n 25 "$OUT/ctest_gpu.log"
  note ctest-gpu "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -m1 'tests passed' "$OUT/ctest_gpu.log") ($((SECONDS - s)) s)"
  # The CPU tests too: they run in seconds and show the whole suite passes on this machine.
  (cd "$BUILD" && ctest -L cpu) >"$OUT/ctest_cpu.log" 2>&1
  rc=$?
  note ctest-cpu "$([ $rc = 0 ] && echo ok || echo FAIL)" "$(grep -m1 'tests passed' "$OUT/ctest_cpu.log")"
fi

if want sanitizer; then
  for tool in ${SANITIZERS:-memcheck racecheck initcheck}; do
    ok=ok; detail=""
    for t in "$BUILD"/tests/test_gpu_*; do
      name=$(basename "$t")
      compute-sanitizer --tool $tool --error-exitcode 99 "$t" sanitizer_small >"$OUT/sanitizer_${tool}_$name.log" 2>&1 || ok=FAIL
      detail+="$name: $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_${tool}_$name.log" | sed 's/=* *//') "
    done
    note $tool $ok "$detail"
  done
fi

if want bench; then
  s=$SECONDS
  "$TOPK" bench "${SUITES[@]}" --suite "$SUITE" -o "$OUT/bench_$SUITE.csv" 2>"$OUT/bench_$SUITE.log"
  rc=$?
  note bench "$([ $rc = 0 ] && echo ok || echo FAIL)" "suite $SUITE: $(($(wc -l <"$OUT/bench_$SUITE.csv" 2>/dev/null || echo 1) - 1)) rows ($((SECONDS - s)) s)"
fi

if want peers; then
  s=$SECONDS
  PYTHONUNBUFFERED=1 python3 bench/peers.py "${SUITES[@]}" --suite "$SUITE" --lib "$BUILD/libtopk.so" \
    --csv "$OUT/peers_$SUITE.csv" --md "$OUT/peers_$SUITE.md" >"$OUT/peers_$SUITE.log" 2>&1
  rc=$?
  [ -f "$OUT/peers_$SUITE.md" ] && cat "$OUT/peers_$SUITE.md"
  [ $rc = 0 ] || tail -n 20 "$OUT/peers_$SUITE.log"
  note peers "$([ $rc = 0 ] && echo ok || echo FAIL)" "suite $SUITE ($((SECONDS - s)) s)"
fi

echo
echo "== gpu-check summary ($((SECONDS - t0)) s) =="
printf '%s\n' "${summary[@]}"
for line in "${summary[@]}"; do [[ "$line" == *" FAIL "* ]] && exit 1; done
exit 0
