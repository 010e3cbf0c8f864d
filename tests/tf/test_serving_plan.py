"""Issue 12: every signature and restored method of every bundle our samples write and
TensorFlow writes (tests/tf/make_tf_models.py, the deployed-model architectures and Keras
Applications, the shared TF-written fixtures) gives the same outputs with and without its
serving plan (`savedmodel-cli compile`). Outputs are compared bit for bit (NaNs equal): a plan
changes how a bundle is loaded, never what it computes. Where the plan is self-contained, the
protobuf-free runtime (kiln-run) gives those same outputs too, or refuses naming the op it lacks;
elsewhere it refuses saying why. TensorFlow still loads a compiled bundle and gives its outputs
(assets.extra/ is ignored by TensorFlow)."""
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import make_applications
import make_deployed_models
import make_tf_models
import oracle


def _linked_copy(d, dst):
    """A copy of the bundle whose files are hard links (cheap); compile adds a new file."""
    shutil.copytree(d, dst, copy_function=os.link)
    return dst


def _compile(d, signatures):
    """Plans every function when this runtime can prepare them all, else the tested
    signatures; returns whether the plan covers everything (methods included) and whether
    loads from it need not read saved_model.pb (self-contained)."""
    whole = oracle.run([oracle.KILN_CLI, "compile", "--dir", d], check=False)
    if whole.returncode == 0:
        return True, "need not read saved_model.pb" in whole.stdout
    cmd = [oracle.KILN_CLI, "compile", "--dir", d]
    for s in signatures:
        cmd += ["--signature_def", s]
    some = oracle.run(cmd)
    return False, "need not read saved_model.pb" in some.stdout


def _run_minimal(d, signature, inputs, outdir):
    """kiln-run's outputs, or its error text when it refuses the bundle."""
    os.makedirs(outdir)
    cmd = [oracle.KILN_RUN, "--dir", d, "--signature_def", signature, "--outdir", outdir]
    arg = ";".join(f"{k}={v}" for k, v in sorted(inputs.items()))
    if arg:
        cmd += ["--inputs", arg]
    proc = oracle.run(cmd, check=False)
    if proc.returncode != 0:
        assert proc.stderr.startswith("kiln-run: "), proc.stderr
        return proc.stderr
    return {p.stem: np.load(p) for p in Path(outdir).glob("*.npy")}


def _run(d, signature, inputs, outdir, plan):
    if any(Path(f).suffix == ".str" for f in inputs.values()):
        # savedmodel-cli's .npy reader takes no strings: run it through the loader API.
        oracle.run([oracle.KILN_CALL, d, "signature", signature, outdir] +
                   [f"{k}={v}" for k, v in sorted(inputs.items())], env={"KILN_CALL_PLAN": plan})
        return {p.stem: oracle.load_value(p) for p in Path(outdir).iterdir()}
    arg = ";".join(f"{k}={v}" for k, v in sorted(inputs.items()))
    cmd = [oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve", "--signature_def",
           signature, "--outdir", outdir, "--plan", plan]
    if arg:
        cmd += ["--inputs", arg]
    oracle.run(cmd)
    return {p.stem: np.load(p) for p in Path(outdir).glob("*.npy")}


def _call(d, method, inputs, outdir, plan):
    oracle.run([oracle.KILN_CALL, d, "function", method, outdir] + [str(f) for f in inputs],
               env={"KILN_CALL_PLAN": plan})
    files = sorted(Path(outdir).iterdir(), key=lambda p: int(p.stem.split("_")[1]))
    return [oracle.load_value(p) for p in files]


def _assert_bitwise(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, f"{what}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    if a.dtype.kind in "fc":
        assert np.array_equal(a, b, equal_nan=True), f"{what}: differs with the plan"
    else:
        assert np.array_equal(a, b), f"{what}: differs with the plan"


def _check(d, data, entry, tmp_path, what):
    copy = _linked_copy(d, tmp_path / "bundle")
    signatures = sorted(entry["signatures"])
    complete, self_contained = _compile(copy, signatures)
    assert (copy / "assets.extra" / "kiln.plan").is_file()
    for key in signatures:
        spec = entry["signatures"][key]
        inputs = {k: Path(data) / f for k, f in spec["inputs"].items()}
        without = _run(copy, key, inputs, tmp_path / f"sig.{key}.without", "ignore")
        with_plan = _run(copy, key, inputs, tmp_path / f"sig.{key}.with", "require")
        assert sorted(without) == sorted(with_plan), f"{what} {key}: output keys differ"
        for k in without:
            _assert_bitwise(without[k], with_plan[k], f"{what} signature {key} output {k}")
        if any(Path(f).suffix == ".str" for f in inputs.values()):
            continue  # kiln-run reads .npy inputs only
        minimal = _run_minimal(copy, key, inputs, tmp_path / f"sig.{key}.minimal")
        if isinstance(minimal, str):
            # kiln-run refuses an op it leaves out (regex, Unicode text, image codecs,
            # checkpoint writing), or a plan that needs saved_model.pb.
            assert "is not an op of this runtime" in minimal or (
                not self_contained and "saved_model.pb" in minimal), f"{what} {key}: {minimal}"
        else:
            assert self_contained, f"{what} {key}: kiln-run ran a plan that is not self-contained"
            assert sorted(minimal) == sorted(without), f"{what} {key}: kiln-run output keys"
            for k in without:
                _assert_bitwise(without[k], minimal[k], f"{what} signature {key} kiln-run {k}")
    for method, spec in sorted(entry.get("methods", {}).items()):
        inputs = [Path(data) / f for f in spec["inputs"]]
        without = _call(copy, method, inputs, tmp_path / f"fn.{method}.without", "ignore")
        with_plan = _call(copy, method, inputs, tmp_path / f"fn.{method}.with",
                          "require" if complete else "auto")
        assert len(without) == len(with_plan), f"{what}.{method}: output count differs"
        for i, (a, b) in enumerate(zip(without, with_plan)):
            _assert_bitwise(a, b, f"{what}.{method} output {i}")


@pytest.mark.parametrize("name", sorted(make_tf_models.BUNDLES))
def test_tf_models_same_with_plan(tf_models, name, tmp_path):
    root, manifest = tf_models
    entry = manifest["bundles"][name]
    _check(root / entry["dir"], root / entry["data"], entry, tmp_path, name)


@pytest.mark.parametrize("name", sorted(make_deployed_models.MODELS))
def test_deployed_models_same_with_plan(deployed_models, name, tmp_path):
    root, manifest = deployed_models
    entry = manifest["models"][name]
    assert entry["error"] is None, entry["error"]
    entry = {**entry, "signatures": {k: v for k, v in entry["signatures"].items()
                                     if k in make_deployed_models.MODELS[name][1]}}
    _check(Path(root) / entry["dir"], Path(root) / entry["data"], entry, tmp_path, name)


@pytest.mark.parametrize("name", make_applications.selected())
def test_applications_same_with_plan(application_models, name, tmp_path):
    root, manifest = application_models
    entry = manifest["models"][name]
    assert entry["error"] is None, entry["error"]
    _check(Path(root) / entry["dir"], Path(root) / entry["data"], entry, tmp_path, name)


def test_samples_same_with_plan(ours, tmp_path):
    for name, (d, inputs) in sorted(ours.items()):
        entry = {"signatures": {"serving_default": {"inputs": {k: str(v) for k, v in inputs.items()}}}}
        _check(d, "/", entry, tmp_path / name, name)


def test_tensorflow_still_loads_a_compiled_bundle(ours, tmp_path):
    import tensorflow as tf
    d, inputs = ours["mlp"]
    copy = _linked_copy(d, tmp_path / "mlp")
    oracle.run([oracle.KILN_CLI, "compile", "--dir", copy])
    x = np.load(inputs["x"])
    theirs = tf.saved_model.load(str(copy)).signatures["serving_default"](x=tf.constant(x))
    mine = _run(copy, "serving_default", inputs, tmp_path / "out", "require")
    for k, v in theirs.items():
        oracle.assert_same(mine[k], v.numpy(), f"mlp {k}")


def test_minimal_runtime_links_no_protobuf():
    """kiln-run needs none of the full runtime's parsing libraries: only oneDNN, libgomp and the
    C and C++ libraries (runtime/CMakeLists.txt)."""
    import subprocess
    libs = subprocess.run(["ldd", str(oracle.KILN_RUN)], capture_output=True, text=True,
                          check=True).stdout
    for lib in ("libprotobuf", "libre2", "libicu", "libjpeg", "libpng", "libz."):
        assert lib not in libs, f"kiln-run links {lib}:\n{libs}"
    undefined = subprocess.run(["nm", "-D", "--undefined-only", "-C", str(oracle.KILN_RUN)],
                               capture_output=True, text=True, check=True).stdout
    assert "google::protobuf" not in undefined


def test_minimal_runtime_refuses_a_stale_or_missing_plan(ours, tmp_path):
    d, inputs = ours["mlp"]
    copy = _linked_copy(d, tmp_path / "mlp")
    proc = oracle.run([oracle.KILN_RUN, "--dir", copy], check=False)
    assert proc.returncode == 1 and "has no serving plan" in proc.stderr, proc.stderr
    assert "savedmodel-cli compile --dir" in proc.stderr
    oracle.run([oracle.KILN_CLI, "compile", "--dir", copy])
    proc = oracle.run([oracle.KILN_RUN, "--dir", copy, "--signature_def", "nope"], check=False)
    assert proc.returncode == 1 and "'nope'" in proc.stderr and "serving_default" in proc.stderr
    # Rewriting saved_model.pb (a new file, not the hard link) makes the plan stale.
    pb = copy / "saved_model.pb"
    data = pb.read_bytes()
    pb.unlink()
    pb.write_bytes(data + b"\0")
    proc = oracle.run([oracle.KILN_RUN, "--dir", copy, "--inputs", f"x={inputs['x']}"],
                      check=False)
    assert proc.returncode == 1 and "stale" in proc.stderr and "saved_model.pb" in proc.stderr, \
        proc.stderr


def test_minimal_runtime_flags_match_the_cli(ours, tmp_path):
    """kiln-run takes --threads as savedmodel-cli bench does (--num_threads still works), a bad
    flag exits 2 as savedmodel-cli's does (docs/cli.md), and fed arrays convert to the input's dtype."""
    d, inputs = ours["mlp"]
    copy = _linked_copy(d, tmp_path / "mlp")
    oracle.run([oracle.KILN_CLI, "compile", "--dir", copy])
    feed = ["--dir", copy, "--inputs", f"x={inputs['x']}"]
    new = oracle.run([oracle.KILN_RUN, *feed, "--threads", "1"])
    old = oracle.run([oracle.KILN_RUN, *feed, "--num_threads", "1"])
    assert new.stdout.startswith("Result for output key output_0:") and new.stdout == old.stdout
    proc = oracle.run([oracle.KILN_RUN, "--dir", copy, "--bogus"], check=False)
    assert proc.returncode == 2 and "--bogus" in proc.stderr, proc.stderr
    assert oracle.run([oracle.KILN_RUN, "--version"]).stdout.startswith("kiln-run (kiln) ")
    # A float64 array feeds the float32 input, converted as savedmodel-cli run (and TF) do.
    x64 = tmp_path / "x64.npy"
    np.save(x64, np.load(inputs["x"]).astype(np.float64))
    wide = oracle.run([oracle.KILN_RUN, "--dir", copy, "--inputs", f"x={x64}"])
    assert wide.stdout == new.stdout


def test_minimal_runtime_takes_input_exprs_as_the_cli_does(tmp_path):
    """kiln-run --input_exprs: the same literal syntax and dtype rules as savedmodel-cli run,
    and the same printed result."""
    import tensorflow as tf

    class Affine(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32),
                                      tf.TensorSpec([], tf.int32)])
        def f(self, x, k):
            return {"y": x * 2.0 + tf.cast(k, tf.float32)}

    m = Affine()
    d = tmp_path / "affine"
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.f})
    oracle.run([oracle.KILN_CLI, "compile", "--dir", d])
    exprs = "x=[1, 2.5, -3];k=4"
    cli = oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve",
                      "--signature_def", "serving_default", "--input_exprs", exprs])
    ours = oracle.run([oracle.KILN_RUN, "--dir", d, "--input_exprs", exprs])
    assert "[ 6.  9. -2.]" in ours.stdout, ours.stdout
    assert ours.stdout.splitlines()[-2:] == cli.stdout.splitlines()[-2:], (ours.stdout, cli.stdout)
    bad = oracle.run([oracle.KILN_RUN, "--dir", d, "--input_exprs", "x=[1, [2]];k=4"],
                     check=False)
    assert bad.returncode == 1 and "ragged" in bad.stderr, bad.stderr


def test_minimal_runtime_takes_input_examples_as_the_cli_does(tmp_path):
    """kiln-run --input_examples: one serialized tf.Example per dict, as savedmodel-cli run (and
    TF's saved_model_cli) build them; they win over --input_exprs with the CLI's warning, and a
    non-string input is refused, naming it."""
    import tensorflow as tf

    spec = {"x": tf.io.FixedLenFeature([1], tf.float32)}

    class Regress(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def regress(self, inputs):
            return {"outputs": tf.io.parse_example(inputs, spec)["x"] * 0.5 + 2.0}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def plain(self, x):
            return {"y": x + 1.0}

    m = Regress()
    d = tmp_path / "regress"
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.regress, "plain": m.plain})
    oracle.run([oracle.KILN_CLI, "compile", "--dir", d])
    examples = 'inputs=[{"x": [1.0]}, {"x": [4.5]}, {"x": [-2.5], "tag": ["a"]}]'
    cli = oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve",
                      "--signature_def", "serving_default", "--input_examples", examples])
    ours = oracle.run([oracle.KILN_RUN, "--dir", d, "--input_examples", examples])
    assert ours.stdout == "Result for output key outputs:\n[[2.5 ]\n [4.25]\n [0.75]]\n", ours.stdout
    assert ours.stdout == cli.stdout
    both = oracle.run([oracle.KILN_RUN, "--dir", d, "--input_exprs", 'inputs=[b"junk"]',
                       "--input_examples", 'inputs=[{"x": [1.0]}]'])
    assert both.stdout == "Result for output key outputs:\n[[2.5]]\n", both.stdout
    assert "specified in multiple options. Value in --input_examples will be used." in both.stderr
    bad = oracle.run([oracle.KILN_RUN, "--dir", d, "--signature_def", "plain",
                      "--input_examples", 'x=[{"x": [1.0]}]'], check=False)
    assert bad.returncode == 1 and "--input_examples input 'x'" in bad.stderr, bad.stderr


def test_plan_serves_loads_that_freeze_other_variables(tmp_path):
    """tf_keras saves the training call, which assigns the batch norm's moving averages: a load
    of the whole model cannot freeze them, a load of the signatures alone folds them into the
    convolution. The plan holds both graphs, and each load takes its own from it: the same
    outputs and steps as that load without the plan (the protobuf path, and kiln-run through
    the model section)."""
    import tensorflow as tf
    import tf_keras as K
    K.utils.set_random_seed(0)
    x = K.Input(shape=(6, 6, 3), name="x")
    y = K.layers.ReLU()(K.layers.BatchNormalization()(K.layers.Conv2D(4, 3)(x)))
    model = K.Model(x, K.layers.Dense(2)(K.layers.Flatten()(y)))
    model.compile("adam", "mse")
    rng = np.random.RandomState(0)
    model.fit(rng.rand(16, 6, 6, 3), rng.rand(16, 2), epochs=2, verbose=0)
    d = tmp_path / "bn"
    model.save(str(d), save_format="tf")
    xs = rng.rand(2, 6, 6, 3).astype(np.float32)
    np.save(tmp_path / "x.npy", xs)
    ref = tf.saved_model.load(str(d)).signatures["serving_default"](x=tf.constant(xs))
    ref = list(ref.values())[0].numpy()
    compiled = oracle.run([oracle.KILN_CLI, "compile", "--dir", d])
    assert "need not read saved_model.pb" in compiled.stdout, compiled.stdout
    inputs = {"x": tmp_path / "x.npy"}
    sig = {plan: _run(d, "serving_default", inputs, tmp_path / f"sig.{plan}", plan)
           for plan in ("ignore", "require")}
    (key,) = sig["ignore"]
    _assert_bitwise(sig["ignore"][key], sig["require"][key], "signature load")
    np.testing.assert_allclose(sig["require"][key], ref, rtol=1e-5, atol=1e-6)
    minimal = _run_minimal(d, "serving_default", inputs, tmp_path / "minimal")
    _assert_bitwise(sig["ignore"][key], minimal[key], "kiln-run")
    # kiln_call loads the whole model (restored methods too), so it takes the other graph.
    for plan in ("ignore", "require"):
        oracle.run([oracle.KILN_CALL, d, "signature", "serving_default", tmp_path / f"w.{plan}",
                    f"x={tmp_path / 'x.npy'}"], env={"KILN_CALL_PLAN": plan})
    a, b = (oracle.load_value(next((tmp_path / f"w.{p}").iterdir()))
            for p in ("ignore", "require"))
    _assert_bitwise(a, b, "whole-model load")
    np.testing.assert_allclose(b, ref, rtol=1e-5, atol=1e-6)

    def steps(plan):
        out = oracle.run([oracle.KILN_CLI, "bench", "--dir", d, "--inputs",
                          f"x={tmp_path / 'x.npy'}", "--runs", "2", "--plan", plan]).stdout
        return [line for line in out.splitlines() if line.startswith("placement")]
    assert steps("require") == steps("ignore")
