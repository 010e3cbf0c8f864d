#!/usr/bin/env bash
# Lints deploy/ (yamllint from Debian) and checks the KServe manifests and the Dockerfile
# against KServe's required fields and the flags of the built savedmodel-server.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
yamllint -s -c "$ROOT/deploy/.yamllint" "$ROOT/deploy"
echo "check-deploy: yamllint clean"
python3 "$ROOT/deploy/check_manifests.py" "$BUILD/tools/savedmodel-server"
