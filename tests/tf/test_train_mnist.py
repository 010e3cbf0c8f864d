"""Issue 11's round trip: the seed's CNN trained in C++ (samples/train_mnist.cc) on real MNIST
digits (scripts/fetch-mnist.sh), exported with serving_default and train_one_step; TensorFlow
loads the bundle, its predictions equal ours, and its train_one_step continues from the saved
Adam state with the same losses as our runtime calling the same signature."""
import re

import numpy as np
import pytest

import oracle

STEPS = 20  # short here; the sample's default is the seed's 1000


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("train_mnist")
    data = d / "data"
    oracle.run(["bash", oracle.ROOT / "scripts" / "fetch-mnist.sh", data])
    bundle = d / "cnn"
    # --print-loss: the seed's tf.print in the graph (the default shows a progress line).
    proc = oracle.run([oracle.SAMPLES / "train_mnist", data, bundle, "--steps", STEPS,
                       "--print-loss"])
    return data, bundle, proc.stdout


def test_the_graph_prints_the_loss_every_step_and_the_model_learns(trained):
    _, _, stdout = trained
    losses = [float(v) for v in re.findall(r"^loss:  ([0-9.]+)$", stdout, re.M)]
    assert len(losses) == STEPS, stdout[-2000:]
    assert losses[0] == pytest.approx(np.log(10), abs=0.15)  # untrained: uniform over 10
    assert np.mean(losses[-5:]) < losses[0] - 0.5
    accuracy = float(re.search(r"test accuracy: ([0-9.]+)", stdout).group(1))
    assert accuracy > 0.6, stdout[-500:]


def test_tensorflow_predicts_what_we_predict(trained, tmp_path):
    import tensorflow as tf
    data, bundle, _ = trained
    x = np.load(data / "test_x.npy")[:64]
    ours = oracle.kiln_call_signature(bundle, "serving_default",
                                      {"x": oracle.save_value(tmp_path / "x", x)},
                                      tmp_path / "ours")["output_0"]
    loaded = tf.saved_model.load(str(bundle))
    theirs = loaded.signatures["serving_default"](x=tf.constant(x))["output_0"].numpy()
    oracle.assert_same(ours, theirs, "serving_default", rtol=1e-4, atol=1e-6)
    assert (ours.argmax(1) == theirs.argmax(1)).all()


def test_tensorflow_continues_training_from_our_optimizer_state(trained, tmp_path):
    import tensorflow as tf
    data, bundle, _ = trained
    x = np.load(data / "train_x.npy")
    y = np.load(data / "train_y.npy")
    rng = np.random.default_rng(7)
    batches = [rng.integers(0, len(x), 50) for _ in range(3)]
    loaded = tf.saved_model.load(str(bundle))
    theirs = [float(loaded.signatures["train_one_step"](x=tf.constant(x[b]), y=tf.constant(y[b]))
                    ["output_0"]) for b in batches]
    inputs = []
    for k, b in enumerate(batches):
        inputs += [f"x={oracle.save_value(tmp_path / f'x{k}', x[b])}",
                   f"y={oracle.save_value(tmp_path / f'y{k}', y[b])}"]
    oracle.run([oracle.KILN_CALL, bundle, "calls", "signature", "train_one_step", len(batches),
                tmp_path / "ours"] + inputs)
    ours = [float(np.load(tmp_path / "ours" / str(k) / "output_0.npy"))
            for k in range(len(batches))]
    # Each step moves the weights, so equal later losses mean equal updates (Adam's m, v and
    # step count restored from the checkpoint, the same gradients).
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    assert theirs[-1] < theirs[0] + 0.5


def test_the_exported_train_step_uses_tensorflows_gradient_and_optimizer_ops(trained):
    _, bundle, _ = trained
    text = oracle.tf_show_all(bundle)
    ops = oracle._ops(re.search(r"contains the following ops: (.*)$", text, re.M).group(1))
    for op in ["Conv2DBackpropFilter", "Conv2DBackpropInput", "MaxPoolGrad", "ReluGrad",
               "BiasAddGrad", "ResourceApplyAdam", "SparseSoftmaxCrossEntropyWithLogits",
               "PrintV2"]:
        assert op in ops, f"{op} is not among the bundle's ops: {sorted(ops)}"


def test_saved_model_cli_shows_the_bundle_as_ours_does(trained):
    _, bundle, _ = trained
    oracle.assert_show_equal(oracle.kiln_show_all(bundle), oracle.tf_show_all(bundle),
                             "train_mnist")
