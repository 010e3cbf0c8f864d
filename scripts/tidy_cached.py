#!/usr/bin/env python3
"""clang-tidy over files, in parallel, skipping files already found clean.

    tidy_cached.py BUILDDIR LOG FILE...

A file is skipped when a stamp exists for the hash of: clang-tidy's version, .clang-tidy, the
file's path and its preprocessed text (its compile command from BUILDDIR/compile_commands.json
with -E, the checkout's own path left out), so any change to the file, a header it includes, a
macro or a flag runs it again, the way ccache keys a compile. Stamps live in $KILN_TIDY_CACHE
(default ~/.cache/kiln-clang-tidy), outside the checkout, so repeated runs of the test command
on one machine, from any checkout, only tidy what changed. Findings go to LOG; the exit status
is 1 when any file has one.
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def preprocess_command(entry):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        out.append(a)
    return out + ["-E", "-P", "-o", "-"]


def main():
    db, log, files = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    root = Path.cwd()
    root_bytes = str(root.resolve()).encode()
    cache = Path(os.environ.get("KILN_TIDY_CACHE",
                                Path.home() / ".cache" / "kiln-clang-tidy"))
    cache.mkdir(parents=True, exist_ok=True)
    entries = {}
    for e in json.loads((db / "compile_commands.json").read_text()):
        entries[str(Path(e["directory"], e["file"]).resolve())] = e
    salt = hashlib.sha256()
    salt.update(subprocess.run(["clang-tidy", "--version"], capture_output=True,
                               check=True).stdout)
    salt.update((root / ".clang-tidy").read_bytes())

    def one(f):
        entry = entries.get(str((root / f).resolve()))
        key = None
        if entry is not None:
            pre = subprocess.run(preprocess_command(entry), cwd=entry["directory"],
                                 capture_output=True)
            if pre.returncode == 0:
                h = salt.copy()
                # The checkout's path (in __FILE__ expansions, generated headers) is left out, so
                # the stamps of one checkout serve another of the same sources.
                h.update(f.encode() + b"\0" + pre.stdout.replace(root_bytes, b"<root>"))
                key = h.hexdigest()
                if (cache / key).exists():
                    return f, True, "", True
        r = subprocess.run(["clang-tidy", "-p", str(db), "--quiet", f], capture_output=True,
                           text=True)
        clean = r.returncode == 0
        if clean and key is not None:
            (cache / key).touch()
        return f, clean, r.stdout + r.stderr, False

    jobs = int(os.environ.get("KILN_JOBS", os.cpu_count() or 1))
    cached = failed = 0
    with ThreadPoolExecutor(jobs) as pool, open(log, "w") as out:
        for f, clean, text, was_cached in pool.map(one, files):
            cached += was_cached
            if not clean:
                failed += 1
                out.write(f"== {f}\n{text}\n")
    print(f"tidy: {len(files)} files, {cached} unchanged since a clean run, {failed} with findings")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
