#!/usr/bin/env bash
# bench-gpu.sh: the runs behind docs/BENCHMARKS.md, on a GPU host, after a build (make, or
# scripts/gpu-check.sh). Each piece stops starting new cases after its time limit, so the
# whole script fits in one 10-minute call; write everything under OUT (default ./bench-out).
#   topk bench and peers.py: the llm family, and the figk / fign sweeps (AIR Top-K paper Fig. 6/7)
#   pycall.py: topk.topk vs torch.topk from Python on the llm, dsa and rowwise families
#   plot.py: PNGs from all of it
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${OUT:-$PWD/bench-out}
PIECES=${PIECES:-llm figk fign pycall plot}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TOPK_LIBRARY="$PWD/$BUILD/libtopk.so"
want() { [[ " $PIECES " == *" $1 "* ]]; }

# Per-suite time limits (s) for topk bench and peers.py, so the whole script fits one call.
declare -A BENCH_LIMIT=([llm]=70 [figk]=60 [fign]=45) PEERS_LIMIT=([llm]=110 [figk]=70 [fign]=50)
for suite in llm figk fign; do
  want $suite || continue
  "$BUILD/topk" bench --suites bench/suites.txt --suite $suite --time-limit ${BENCH_LIMIT[$suite]} \
    -o "$OUT/bench_$suite.csv" >"$OUT/bench_$suite.txt" 2>"$OUT/bench_$suite.log" || echo "bench $suite: exit $?"
  python3 bench/peers.py --suites bench/suites.txt --suite $suite --lib "$BUILD/libtopk.so" --time-limit ${PEERS_LIMIT[$suite]} \
    --csv "$OUT/peers_$suite.csv" --md "$OUT/peers_$suite.md" >"$OUT/peers_$suite.log" 2>&1 || echo "peers $suite: exit $?"
  tail -n 6 "$OUT/peers_$suite.md" 2>/dev/null
done
if want pycall; then
  python3 bench/pycall.py --family llm --family dsa --family rowwise --time-limit 120 \
    --csv "$OUT/pycall.csv" --md "$OUT/pycall.md" >"$OUT/pycall.log" 2>&1 || echo "pycall: exit $?"
  tail -n 8 "$OUT/pycall.md" 2>/dev/null
fi
if want plot; then
  bench_csvs=() peer_csvs=()
  for f in "$OUT"/bench_*.csv; do [ -f "$f" ] && bench_csvs+=(--bench "$f"); done
  for f in "$OUT"/peers_*.csv; do [ -f "$f" ] && peer_csvs+=(--peers "$f"); done
  python3 bench/plot.py "${bench_csvs[@]}" "${peer_csvs[@]}" --out "$OUT/plots" >"$OUT/plot.log" 2>&1 || echo "plot: exit $?"
  ls "$OUT/plots"
fi
