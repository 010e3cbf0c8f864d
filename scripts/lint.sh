#!/usr/bin/env bash
# Style checks the test command enforces:
#   lint.sh format         every tracked C++ file is formatted by .clang-format, and no file
#                          under libexec/ is over 800 lines
#   lint.sh tidy BUILDDIR  clang-tidy (.clang-tidy's checks) on the libraries, zero findings;
#                          BUILDDIR holds compile_commands.json of a Clang build
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
case "${1:-}" in
  format)
    mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
    if ! clang-format --dry-run --Werror "${files[@]}"; then
      echo "lint: the files above are not formatted; run: clang-format -i <file>" >&2
      exit 1
    fi
    echo "lint: ${#files[@]} files formatted"
    # The project's rule: no file under libexec/ over 800 lines; split a long one by topic.
    max_lines=800
    long=()
    while IFS= read -r f; do
      [[ -f "$f" ]] || continue
      n=$(wc -l <"$f")
      if ((n > max_lines)); then long+=("  $f: $n lines"); fi
    done < <(git ls-files 'libexec/*.cc' 'libexec/*.h' 'libexec/*.cu' 'libexec/*.cuh')
    if ((${#long[@]} > 0)); then
      echo "lint: these files under libexec/ have over $max_lines lines; split them by topic:" >&2
      printf '%s\n' "${long[@]}" >&2
      exit 1
    fi
    # ctest splits a test's name at ';' (CMake's list separator): such a doctest case would be
    # registered as pieces that match nothing and "pass" without running.
    if grep -rnE 'TEST_CASE\("[^"]*;' tests; then
      echo "lint: the test cases above have ';' in their names; ctest would not run them" >&2
      exit 1
    fi
    ;;
  tidy)
    db="${2:?usage: lint.sh tidy BUILDDIR}"
    # The CUDA device's host files (libexec/*/cuda/) are not in the sanitizer build, which
    # leaves CUDA out (CMakeLists.txt); they are checked against the Release build's commands.
    mapfile -t files < <(git ls-files 'libexec/*.cc' 'libtrace/*.cc' 'modules/*.cc' 'libserve/*.cc' 'tools/*.cc' 'runtime/*.cc' \
      'format/*.cc' | grep -v '/cuda/')
    log="$db/clang-tidy.log"
    # Files whose preprocessed text is unchanged since a clean run are skipped
    # (scripts/tidy_cached.py; the stamps live outside the checkout).
    if ! python3 "$ROOT/scripts/tidy_cached.py" "$db" "$log" "${files[@]}"; then
      grep -E "(warning|error):" -A3 "$log" | head -100 >&2
      echo "lint: clang-tidy found problems (full log: $log)" >&2
      exit 1
    fi
    echo "lint: clang-tidy clean on ${#files[@]} files"
    mapfile -t cuda_files < <(git ls-files 'libexec/*/cuda/*.cc')
    cuda_db="$ROOT/build"
    if [[ ${#cuda_files[@]} -gt 0 && -f "$cuda_db/compile_commands.json" ]] &&
      grep -q "/cuda/" "$cuda_db/compile_commands.json"; then
      if ! python3 "$ROOT/scripts/tidy_cached.py" "$cuda_db" "$cuda_db/clang-tidy-cuda.log" \
        "${cuda_files[@]}"; then
        grep -E "(warning|error):" -A3 "$cuda_db/clang-tidy-cuda.log" | head -100 >&2
        echo "lint: clang-tidy found problems in the CUDA device's host files" >&2
        exit 1
      fi
      echo "lint: clang-tidy clean on ${#cuda_files[@]} CUDA host files"
    fi
    ;;
  *) echo "usage: lint.sh format | tidy BUILDDIR" >&2; exit 2 ;;
esac
