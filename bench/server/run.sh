#!/usr/bin/env bash
# Load test of savedmodel-server on loopback (docs/benchmarks.md, "Model server"): wrk on the
# REST endpoint (TF Serving :predict, JSON) and a gRPC load from TF Serving's Python client,
# for the MLP (784-512-512-10) and a small CNN, batch 1; then, with KILN_SOAK_SECONDS set, a
# soak of mixed REST traffic that samples the server's RSS every 10 s.
#   KILN_BUILD_DIR=build bash bench/server/run.sh [seconds per run, default 20]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
PY="${KILN_ORACLE_VENV:-$ROOT/.venv-oracle}/bin/python"
SECS="${1:-20}"
WORK="$(mktemp -d)"
trap 'kill $SERVER_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/models/mlp"
"$BUILD/samples/mlp_export" "$WORK/models/mlp/1" "$WORK/io" >/dev/null
PYTHONPATH="$ROOT/tests/server" "$PY" -c "
import make_models, numpy as np
make_models.make_cnn('$WORK/models/cnn/1')
np.save('$WORK/io/cnn_x1.npy', np.random.default_rng(0).random((1, 28, 28, 1), dtype=np.float32))
"
cp "$WORK/io/x_1.npy" "$WORK/io/mlp_x1.npy"
"$PY" -c "
import json, numpy as np
for m in ('mlp', 'cnn'):
    x = np.load('$WORK/io/%s_x1.npy' % m)
    json.dump({'instances': x.tolist()}, open('$WORK/%s.json' % m, 'w'))
"
cat > "$WORK/models.config" <<CFG
model_config_list {
  config { name: "mlp" base_path: "$WORK/models/mlp" }
  config { name: "cnn" base_path: "$WORK/models/cnn" }
}
CFG
REST=18601 GRPC=18600
"$BUILD/tools/savedmodel-server" --port=$GRPC --rest_api_port=$REST --bind_address=127.0.0.1 \
  --model_config_file="$WORK/models.config" 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$REST/v2/health/ready" >/dev/null && break
  sleep 0.1
done
echo "== $(nproc) cores; server pid $SERVER_PID; ${SECS}s per run"
for m in mlp cnn; do
  echo "-- REST :predict $m batch 1 (wrk -t2 -c8)"
  KILN_BODY="$WORK/$m.json" wrk -t2 -c8 -d"${SECS}s" -s "$ROOT/bench/server/post.lua" \
    "http://127.0.0.1:$REST/v1/models/$m:predict" | grep RESULT
  echo "-- gRPC Predict $m batch 1 (8 client threads)"
  "$PY" "$ROOT/bench/server/grpc_load.py" "127.0.0.1:$GRPC" $m "$WORK/models/$m/1" \
    "$WORK/io/${m}_x1.npy" 8 "$SECS" | grep RESULT
done
echo "RSS after load: $(grep VmRSS /proc/$SERVER_PID/status)"
if [ -n "${KILN_SOAK_SECONDS:-}" ]; then
  echo "-- soak: ${KILN_SOAK_SECONDS}s of wrk on mlp, RSS every 10 s"
  KILN_BODY="$WORK/mlp.json" wrk -t2 -c8 -d"${KILN_SOAK_SECONDS}s" -s "$ROOT/bench/server/post.lua" \
    "http://127.0.0.1:$REST/v1/models/mlp:predict" > "$WORK/soak.txt" &
  WRK=$!
  while kill -0 $WRK 2>/dev/null; do
    echo "soak t=$(date +%s) $(grep VmRSS /proc/$SERVER_PID/status)"
    sleep 10
  done
  grep RESULT "$WORK/soak.txt"
fi
kill -TERM $SERVER_PID
wait $SERVER_PID
echo "server exit: $?"
