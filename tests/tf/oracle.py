"""Helpers shared by the TensorFlow oracle tests: where things are, running our tools and
TensorFlow's, reading their outputs and comparing them."""
import ast
import contextlib
import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
FIXTURES = Path(os.environ.get("KILN_FIXTURES_DIR",
                               ROOT.parent / "shared" / "fixtures" / "tf-written"))
KILN_CLI = BUILD / "tools" / "savedmodel-cli"
KILN_CALL = BUILD / "tests" / "kiln_call"
KILN_RUN = BUILD / "runtime" / "kiln-run"  # the protobuf-free runtime (runtime/)
KILN_LAYER = BUILD / "tests" / "kiln_layer"
KILN_MODEL = BUILD / "tests" / "kiln_model"
KILN_CF_TRAIN = BUILD / "tests" / "kiln_cf_train"
SAMPLES = BUILD / "samples"
# TensorFlow's CLI, from the same venv as the Python running the tests.
TF_CLI = Path(sys.executable).parent / "saved_model_cli"

# Floats: within 1e-5 relative; the absolute floor is for values that are almost 0 (softmax
# tails, sums that cancel), where a relative bound means nothing.
RTOL = 1e-5
ATOL = 1e-6

# The generated models (tests/tf/test_keras_layers.py, test_keras_applications.py,
# test_deployed_models.py) are compared within 1e-4 relative: they are deeper, and
# TensorFlow computes them with oneDNN, whose summation order differs from ours. The absolute
# floor scales with the tensor (1e-5 of its largest magnitude): an element that cancels to near
# 0 in a long sum carries the rounding of the sum's terms, not of its own size.
MODEL_RTOL = 1e-4
MODEL_ATOL_OF_MAX = 1e-5

_OPS_LINE = re.compile(r"^(The MetaGraph with tag set \[.*\] contains the following ops: )(.*)$")


def run(cmd, timeout=300, check=True, env=None):
    """Runs a command; on failure the assertion names the command and shows its stderr."""
    cmd = [str(c) for c in cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}\n"
                             f"stderr:\n{proc.stderr[-4000:]}\nstdout:\n{proc.stdout[-2000:]}")
    return proc


def kiln_show_all(d):
    return run([KILN_CLI, "show", "--dir", d, "--all"]).stdout


def tf_show_all(d):
    return run([TF_CLI, "show", "--dir", d, "--all"]).stdout


def assert_show_equal(ours, theirs, what):
    """Line for line; the ops line is a Python set (arbitrary order), compared as a set."""
    a, b = ours.splitlines(), theirs.splitlines()
    diffs = []
    for i in range(max(len(a), len(b))):
        la = a[i] if i < len(a) else "<missing>"
        lb = b[i] if i < len(b) else "<missing>"
        ma, mb = _OPS_LINE.match(la), _OPS_LINE.match(lb)
        if ma and mb:
            sa, sb = _ops(ma.group(2)), _ops(mb.group(2))
            if ma.group(1) != mb.group(1) or sa != sb:
                diffs.append(f"line {i + 1}: ops ours-only {sorted(sa - sb)}, "
                             f"TF-only {sorted(sb - sa)}")
        elif la != lb:
            diffs.append(f"line {i + 1}:\n  ours: {la!r}\n  TF:   {lb!r}")
    assert not diffs, f"{what}: show --all differs from saved_model_cli:\n" + "\n".join(diffs[:20])


def _ops(text):
    return set() if text == "set()" else set(ast.literal_eval(text))


def load_value(path):
    """A .npy array, or the bytes of a .str file (a string scalar)."""
    path = Path(path)
    if path.suffix == ".str":
        return np.array(path.read_bytes(), dtype=object)
    return np.load(path, allow_pickle=False)


def save_value(path_stem, value):
    """Writes .npy, or .str for a string scalar; returns the path."""
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        raw = value.item()
        path = Path(str(path_stem) + ".str")
        path.write_bytes(raw if isinstance(raw, bytes) else str(raw).encode())
        return path
    path = Path(str(path_stem) + ".npy")
    np.save(path, value)
    return path


def kiln_run(d, signature, inputs, outdir):
    """Our `savedmodel-cli run` with --inputs files and --outdir; {output key: array}."""
    arg = ";".join(f"{k}={v}" for k, v in sorted(inputs.items()))
    cmd = [KILN_CLI, "run", "--dir", d, "--tag_set", "serve", "--signature_def", signature,
           "--outdir", outdir]
    if arg:
        cmd += ["--inputs", arg]
    run(cmd)
    return {p.stem: np.load(p) for p in Path(outdir).glob("*.npy")}


def save_module(d, fn, signature):
    """Saves fn (a function returning a dict) as the serving_default of a tf.Module at d."""
    import tensorflow as tf
    module = tf.Module()
    module.f = tf.function(fn, input_signature=signature)
    tf.saved_model.save(module, str(d), signatures=module.f.get_concrete_function())
    return d


def run_module(tmp_path, fn, signature, inputs, save=save_value):
    """fn saved as tmp_path/model (save_module), its serving_default run by TensorFlow and by
    `savedmodel-cli run` on `inputs` (written by `save`); (our outputs, TF's outputs)."""
    import tensorflow as tf
    d = save_module(tmp_path / "model", fn, signature)
    theirs = tf.saved_model.load(str(d)).signatures["serving_default"](
        **{k: tf.constant(v) for k, v in inputs.items()})
    theirs = {k: v.numpy() for k, v in theirs.items()}
    files = {k: save(tmp_path / k, v) for k, v in inputs.items()}
    return kiln_run(d, "serving_default", files, tmp_path / "out"), theirs


def kiln_call_signature(d, signature, inputs, outdir):
    """Our loader through tests/tf/kiln_call.cc (takes string scalars too)."""
    run([KILN_CALL, d, "signature", signature, outdir] +
        [f"{k}={v}" for k, v in sorted(inputs.items())])
    return {p.stem: load_value(p) for p in Path(outdir).iterdir()}


def kiln_call_function(d, name, input_files, outdir):
    """Calls a restored method by name with our loader; outputs in order."""
    run([KILN_CALL, d, "function", name, outdir] + [str(f) for f in input_files])
    files = sorted(Path(outdir).iterdir(), key=lambda p: int(p.stem.split("_")[1]))
    return [load_value(p) for p in files]


def kiln_functions(d):
    out = run([KILN_CALL, d, "list"]).stdout.split("\n")
    return sorted(line.split(" ", 1)[1] for line in out if line.startswith("function "))


def kiln_variables(d, outdir):
    """{object-graph path: value} as our loader restored them."""
    out = run([KILN_CALL, d, "variables", outdir]).stdout
    pairs = [line.split("\t") for line in out.splitlines() if line]
    return {path: np.load(Path(outdir) / f) for path, f in pairs}


def example_inputs(concrete_fn, seed):
    """{name: array} fitting a TF signature's inputs: unknown dims are 2, an unknown rank is a
    scalar; floats in [-2, 2), integers in [0, 10), strings b"kiln0", b"kiln1", ..."""
    import tensorflow as tf
    rng = np.random.default_rng(seed)
    _, specs = concrete_fn.structured_input_signature
    feed = {}
    for k, spec in sorted(specs.items()):
        dims = spec.shape.as_list() if spec.shape.rank is not None else []
        shape = [2 if d is None else d for d in dims]
        if spec.dtype.is_floating:
            feed[k] = (rng.random(shape) * 4 - 2).astype(spec.dtype.as_numpy_dtype)
        elif spec.dtype.is_integer:
            feed[k] = rng.integers(0, 10, shape).astype(spec.dtype.as_numpy_dtype)
        elif spec.dtype == tf.bool:
            feed[k] = rng.random(shape) < 0.5
        elif spec.dtype == tf.string and not shape:
            feed[k] = np.array(f"kiln{len(feed)}".encode(), dtype=object)
        else:
            raise AssertionError(f"no example input for {k}: {spec}")
    return feed


def assert_same(ours, theirs, what, rtol=RTOL, atol=ATOL):
    """Floats within rtol (atol near 0); everything else exactly, dtype and shape included."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if theirs.dtype.kind in "SO" or ours.dtype.kind in "SO":
        assert ours.shape == theirs.shape and ours.tolist() == theirs.tolist(), \
            f"{what}: ours {ours!r}, TF {theirs!r}"
        return
    assert ours.dtype == theirs.dtype, f"{what}: dtype ours {ours.dtype}, TF {theirs.dtype}"
    assert ours.shape == theirs.shape, f"{what}: shape ours {ours.shape}, TF {theirs.shape}"
    if theirs.dtype.kind in "fc":
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(ours, theirs, err_msg=what)


def assert_outputs(ours, theirs, what):
    assert sorted(ours) == sorted(theirs), f"{what}: output keys ours {sorted(ours)}, " \
                                           f"TF {sorted(theirs)}"
    for k in theirs:
        assert_same(ours[k], theirs[k], f"{what} output {k!r}")


def assert_close_model(ours, theirs, what):
    """The generated models' comparison: floats within MODEL_RTOL, the absolute floor MODEL_ATOL_OF_MAX
    of the tensor's largest magnitude (at least ATOL); everything else exactly."""
    theirs_a = np.asarray(theirs)
    atol = ATOL
    if theirs_a.dtype.kind in "fc" and theirs_a.size:
        finite = np.abs(theirs_a[np.isfinite(theirs_a)])
        atol = max(ATOL, MODEL_ATOL_OF_MAX * float(finite.max())) if finite.size else ATOL
    assert_same(ours, theirs, what, rtol=MODEL_RTOL, atol=atol)


def assert_model_outputs(ours, theirs, what):
    """Every output of a signature (keys must match), compared by assert_close_model."""
    assert sorted(ours) == sorted(theirs), f"{what}: output keys ours {sorted(ours)}, " \
                                           f"TF {sorted(theirs)}"
    failures = []
    for k in sorted(theirs):
        try:
            assert_close_model(ours[k], theirs[k], f"{what} output {k!r}")
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, f"{len(failures)} of {len(theirs)} outputs differ:\n" + \
        "\n".join(failures)


def assert_outputs_match_specs(ours, specs, what):
    """Where there is no oracle (TensorFlow cannot compute the signature on this machine): the
    output keys are the signature's, each shape fits its declared shape (None: any), floats
    are finite."""
    assert sorted(ours) == sorted(specs), f"{what}: output keys ours {sorted(ours)}, " \
                                          f"declared {sorted(specs)}"
    for k, shape in specs.items():
        got = np.asarray(ours[k])
        assert got.ndim == len(shape) and all(
            want is None or want == have for want, have in zip(shape, got.shape)), \
            f"{what} output {k!r}: shape {got.shape}, declared {shape}"
        if got.dtype.kind == "f":
            assert np.isfinite(got).all(), f"{what} output {k!r}: not finite"


@contextlib.contextmanager
def tf_warnings():
    """Collects TensorFlow's Python log records (WARNING and up) and Python warnings."""
    import tensorflow as tf
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Collect(level=logging.WARNING)
    logger = tf.get_logger()
    logger.addHandler(handler)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield records
        finally:
            logger.removeHandler(handler)
            records.extend(str(w.message) for w in caught)


def assert_no_warnings(logged, what):
    """None at all; the ones about values left unrestored or unbound are named first."""
    bad = [m for m in logged if any(w in m.lower() for w in (
        "unrestored", "unresolved", "could not be found", "not restored", "unbound",
        "value in checkpoint", "not found in checkpoint"))]
    assert not bad, f"{what}: TensorFlow warned about unrestored values:\n" + "\n".join(bad)
    assert not logged, f"{what}: TensorFlow logged warnings while loading:\n" + "\n".join(logged)
