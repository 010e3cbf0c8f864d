#!/usr/bin/env bash
# Runs every libFuzzer target on its committed seed corpus (fuzz/corpus/<target>/) for
# KILN_FUZZ_SECONDS each (default 8), in memory only: new inputs go to a temporary corpus
# directory that is removed afterwards, crashes to $KILN_FUZZ_ARTIFACTS (default: a temp dir,
# kept and printed when a target fails).
#   fuzz.sh BUILDDIR [target...]      BUILDDIR was configured with -DKILN_FUZZ=ON (Clang)
# Long runs (docs/fuzzing.md): KILN_FUZZ_SECONDS=3600 fuzz.sh build-clang-asan fuzz_npy
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:?usage: fuzz.sh BUILDDIR [target...]}"
shift
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(fuzz_npy fuzz_rest_json fuzz_v2_binary fuzz_bundle fuzz_saved_model fuzz_plan
           fuzz_http_request)
fi
SECONDS_EACH="${KILN_FUZZ_SECONDS:-8}"
ARTIFACTS="${KILN_FUZZ_ARTIFACTS:-$(mktemp -d)}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
status=0
for t in "${TARGETS[@]}"; do
  bin="$BUILD/fuzz/$t"
  [ -x "$bin" ] || { echo "fuzz: $bin is not built (configure with -DKILN_FUZZ=ON)" >&2; exit 1; }
  mkdir -p "$WORK/$t" "$ARTIFACTS/$t"
  log="$WORK/$t.log"
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
     "$bin" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
       -timeout=10 -print_final_stats=1 -artifact_prefix="$ARTIFACTS/$t/" \
       "$WORK/$t" "$ROOT/fuzz/corpus/$t" >"$log" 2>&1; then
    runs="$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')"
    echo "fuzz: $t: $runs runs in ${SECONDS_EACH}s, no crash"
  else
    echo "fuzz: $t FAILED (artifacts in $ARTIFACTS/$t):" >&2
    tail -40 "$log" >&2
    status=1
  fi
done
exit $status
