#!/usr/bin/env bash
# Installs the Debian packages the build and tests need. Idempotent: skips what is present.
set -euo pipefail
# ocl-icd-opencl-dev: oneDNN's CMake config looks for OpenCL, which libdnnl-dev only recommends
# (and --no-install-recommends skips).
PKGS=(cmake g++ make pkg-config ccache clang clang-format clang-tidy libclang-rt-14-dev libdnnl-dev
      ocl-icd-opencl-dev
      libprotobuf-dev protobuf-compiler libflatbuffers-dev flatbuffers-compiler
      libeigen3-dev libcli11-dev nlohmann-json3-dev doctest-dev zlib1g-dev
      libgrpc++-dev protobuf-compiler-grpc wrk yamllint
      libjpeg62-turbo-dev libpng-dev libwebp-dev
      libre2-dev libicu-dev
      python3 python3-venv)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
