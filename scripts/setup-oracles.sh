#!/usr/bin/env bash
# Installs the test oracles (TensorFlow, numpy, tf2onnx, onnxruntime, tensorboard, pytest) into
# a virtual environment of their own, $ROOT/.venv-oracle (or $KILN_ORACLE_VENV), at pinned
# versions from PyPI; and KServe's SDK with schemathesis into $ROOT/.venv-kserve (or
# $KILN_KSERVE_VENV) from tests/kserve/requirements.txt. Used only by tests/tf, tests/server and
# tests/kserve; nothing in the libraries or tools depends on Python.
# Idempotent: does nothing when the venv already has exactly these versions. Fails (exit 1)
# when anything cannot be installed: a missing TensorFlow is a test failure, never a skip.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${KILN_ORACLE_VENV:-$ROOT/.venv-oracle}"
PYTHON="${KILN_PYTHON:-python3}"

# Pins, checked together with TensorFlow 2.21.0:
# - tensorflow-cpu 2.21.0 needs protobuf >=6.31.1,<8 and numpy >=1.26; keras 3 comes with it.
# - tf2onnx 1.17.0 only asks protobuf>=3.20 and numpy>=1.23.5, so it shares TF's protobuf 7.
# - onnx/onnxruntime: recent releases with wheels for CPython 3.11 (Debian 12's python3).
PINS=(
  "tensorflow-cpu==2.21.0"
  "keras==3.15.1"
  "numpy==2.4.6"
  "protobuf==7.36.2"
  "tf2onnx==1.17.0"
  "onnx==1.23.2"
  "onnxruntime==1.24.4"
  "pytest==9.2.0"
  # tensorboard 2.21.0: its event reader checks the events training writes (test_tensorboard.py).
  "tensorboard==2.21.0"
)
# Clients for the model server tests (tests/server), installed without their dependency pins:
# tensorflow-serving-api 2.21.0 asks for the `tensorflow` distribution (we have tensorflow-cpu,
# the same code), and tritonclient[grpc] 2.73.0 asks for protobuf<7 while TF 2.21 runs on 7.x;
# both import and work with the versions above (their generated code is one protobuf major
# behind, which protobuf 7 accepts). Their real runtime dependencies are pinned here instead.
NODEPS_PINS=(
  # tf_keras 2.21.0: Keras 2 (what TF <= 2.15 saved), for the recurrent loops it exports
  # (tests/tf/test_recurrent_fusion.py); it asks for the `tensorflow` distribution too.
  "tf_keras==2.21.0"
  "tensorflow-serving-api==2.21.0"
  "tritonclient==2.73.0"
  "python-rapidjson==1.25"
  "geventhttpclient==2.6.1"
  "gevent==26.9.0"
  "greenlet==3.3.2"
  "zope.event==6.2"
  "zope.interface==8.7"
  "brotli==1.2.1"
  "certifi==2026.10.18"
)

fail() { echo "setup-oracles: error: $*" >&2; exit 1; }

# Prints the installed "name==version" lines of the pinned distributions, lower-cased, sorted.
installed_pins() {
  "${VENV}/bin/python" - "$@" <<'EOF' 2>/dev/null
import sys
from importlib import metadata
for pin in sys.argv[1:]:
    name = pin.split("==")[0]
    try:
        print(f"{name.lower()}=={metadata.version(name)}")
    except metadata.PackageNotFoundError:
        print(f"{name.lower()}==<missing>")
EOF
}

# The KServe venv: every distribution pinned in tests/kserve/requirements.txt, no others asked.
setup_kserve() {
  local kvenv="${KILN_KSERVE_VENV:-$ROOT/.venv-kserve}"
  local req="$ROOT/tests/kserve/requirements.txt"
  local -a kpins
  mapfile -t kpins < <(grep -E '^[A-Za-z0-9_.-]+==' "$req")
  local kwanted
  kwanted="$(printf '%s\n' "${kpins[@]}" | tr 'A-Z_' 'a-z-')"
  if [ -x "$kvenv/bin/python" ] &&
     [ "$(VENV="$kvenv" installed_pins "${kpins[@]}" | tr '_' '-')" = "$kwanted" ]; then
    echo "setup-oracles: $kvenv already has the pinned versions"
    return 0
  fi
  if [ ! -x "$kvenv/bin/python" ]; then
    echo "setup-oracles: creating $kvenv"
    "$PYTHON" -m venv "$kvenv" || fail "cannot create a venv with $PYTHON"
  fi
  echo "setup-oracles: installing tests/kserve/requirements.txt into $kvenv"
  "$kvenv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$req" ||
    fail "pip install failed for $req"
  "$kvenv/bin/python" -c "import kserve, schemathesis, pytest" ||
    fail "kserve and schemathesis are installed but do not import"
}

wanted="$(printf '%s\n' "${PINS[@]}" "${NODEPS_PINS[@]}" | tr 'A-Z' 'a-z')"
if [ -x "$VENV/bin/python" ] && [ "$(installed_pins "${PINS[@]}" "${NODEPS_PINS[@]}")" = "$wanted" ]; then
  echo "setup-oracles: $VENV already has the pinned versions"
  setup_kserve
  exit 0
fi

command -v "$PYTHON" >/dev/null ||
  fail "$PYTHON not found (scripts/install-deps.sh installs python3)"
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup-oracles: creating $VENV"
  "$PYTHON" -m venv "$VENV" ||
    fail "cannot create a venv with $PYTHON (on Debian: apt-get install python3-venv)"
fi
echo "setup-oracles: installing ${PINS[*]}"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip ||
  fail "pip upgrade failed"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}" ||
  fail "pip install failed for ${PINS[*]}"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
  "${NODEPS_PINS[@]}" || fail "pip install failed for ${NODEPS_PINS[*]}"

got="$(installed_pins "${PINS[@]}" "${NODEPS_PINS[@]}")"
[ "$got" = "$wanted" ] || fail "installed versions differ from the pins:"$'\n'"$got"
# The oracles must import, not only be installed.
TF_CPP_MIN_LOG_LEVEL=3 "$VENV/bin/python" -c "import tensorflow, tensorboard, tf2onnx, onnxruntime, pytest, \
requests, tensorflow_serving.apis.prediction_service_pb2_grpc, tritonclient.http, tritonclient.grpc" ||
  fail "the oracles are installed but do not import"
echo "setup-oracles: ready ($VENV)"
setup_kserve
