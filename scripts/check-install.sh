#!/usr/bin/env bash
# Installs the build to a scratch prefix, then, as a user would:
#  1. builds tests/consumer (a project of a user's own) with find_package(kiln) and runs it on a
#     TensorFlow-written bundle;
#  2. follows docs/getting-started.md verbatim: its files (<!-- file: NAME --> blocks) make a
#     project, its commands (<!-- run --> blocks) build it with CMake and with pkg-config,
#     export, load and run the model and run the CLI; then serves the model and asks it over
#     REST, and checks the answers the page shows;
#  3. builds two installed samples from share/kiln/samples and runs them.
# The check that the installed package config and pkg-config files find every dependency.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
JOBS="${KILN_JOBS:-$(nproc)}"
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "check-install: $*" >&2; exit 1; }

# The page installs to "$HOME/kiln": a scratch HOME keeps its commands verbatim.
export HOME="$WORK/home"
PREFIX="$HOME/kiln"
mkdir -p "$HOME"
cmake --install "$BUILD" --prefix "$PREFIX" > "$WORK/install.log"
export PATH="$PREFIX/bin:$PATH"

# 1. tests/consumer
cmake -S "$ROOT/tests/consumer" -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DCMAKE_BUILD_TYPE=Release > "$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; exit 1; }
cmake --build "$WORK/consumer" -j"$JOBS" > "$WORK/build.log" 2>&1 ||
  { tail -40 "$WORK/build.log"; exit 1; }
FIXTURES="${KILN_FIXTURES_DIR:-$ROOT/../shared/fixtures/tf-written}"
got="$("$WORK/consumer/run_bundle" "$FIXTURES/half_plus_two_v2" serving_default x 1 2 5)"
want=$'y 2.5\ny 3\ny 4.5'
[[ "$got" == "$want" ]] || fail "run_bundle printed:"$'\n'"$got"$'\n'"expected:"$'\n'"$want"
echo "check-install: tests/consumer found kiln with find_package, linked kiln::exec and ran" \
  "half_plus_two_v2"

# 2. docs/getting-started.md
PROJECT="$WORK/hello_kiln"
mkdir -p "$PROJECT"
awk -v dir="$PROJECT" '
  /^<!-- file: .* -->$/ { name = $3; next }
  /^<!-- run -->$/ { run = 1; next }
  /^```/ {
    if (inside) { inside = 0; name = ""; run = 0; next }
    if (name != "" || run) { inside = 1; next }
  }
  inside && name != "" { print > (dir "/" name); next }
  inside && run { print > (dir "/commands.sh"); next }
' "$ROOT/docs/getting-started.md"
for f in CMakeLists.txt export_model.cc run_model.cc commands.sh; do
  [[ -s "$PROJECT/$f" ]] || fail "docs/getting-started.md gave no $f"
done
(cd "$PROJECT" && bash -euo pipefail commands.sh) > "$WORK/page.log" 2>&1 ||
  { tail -60 "$WORK/page.log"; fail "a command of docs/getting-started.md failed"; }
for line in 'convert([0, 100]) = [32 212]' 'saved models/fahrenheit/1' \
  'fahrenheit = [-40 32 98.6]'; do
  grep -qxF "$line" "$WORK/page.log" || { cat "$WORK/page.log"; fail "missing output line: $line"; }
done
# run_model twice (CMake and pkg-config builds), savedmodel-cli run once: three answers.
[[ "$(grep -cxF 'fahrenheit = [-40 32 98.6]' "$WORK/page.log")" == 2 ]] ||
  { cat "$WORK/page.log"; fail "the pkg-config build did not print the answer"; }
grep -qF '[-40.   32.   98.6]' "$WORK/page.log" ||
  { cat "$WORK/page.log"; fail "savedmodel-cli run did not print the answer"; }

# The page's serving step, on a free port.
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
savedmodel-server --rest_api_port "$PORT" --port 0 --bind_address 127.0.0.1 \
  --model_name fahrenheit --model_base_path "$PROJECT/models/fahrenheit" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
answer=""
for _ in $(seq 1 100); do
  if answer="$(python3 - "$PORT" 2>/dev/null <<'PY'
import json, sys, urllib.request
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v1/models/fahrenheit:predict",
                             data=json.dumps({"instances": [-40, 0, 37]}).encode())
print(urllib.request.urlopen(req, timeout=5).read().decode())
PY
)"; then break; fi
  sleep 0.2
done
kill "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
python3 -c 'import json, sys; assert json.loads(sys.argv[1]) == {"predictions": [-40.0, 32.0, 98.6]}, sys.argv[1]' \
  "$answer" || { cat "$WORK/server.log"; fail "the server answered: $answer"; }
echo "check-install: docs/getting-started.md works verbatim (CMake and pkg-config builds," \
  "export, load, CLI, REST serving)"

# 3. Samples from the install.
cmake -S "$PREFIX/share/kiln/samples" -B "$WORK/samples" -DCMAKE_PREFIX_PATH="$PREFIX" \
  > "$WORK/samples-configure.log" 2>&1 || { cat "$WORK/samples-configure.log"; exit 1; }
cmake --build "$WORK/samples" -j"$JOBS" --target demo_module_export demo_module_load \
  > "$WORK/samples-build.log" 2>&1 || { tail -40 "$WORK/samples-build.log"; exit 1; }
"$WORK/samples/demo_module_export" "$WORK/demo_module" > "$WORK/demo.log"
"$WORK/samples/demo_module_load" "$WORK/demo_module" >> "$WORK/demo.log"
grep -qF "serving_default output_0 = 61" "$WORK/demo.log" ||
  { cat "$WORK/demo.log"; fail "the installed samples did not run as in the build tree"; }
echo "check-install: the installed samples build from share/kiln/samples and run"
