"""The seed samples that mirror seed programs without a printed answer of their own
(samples/scaled_elu, simple_relu, dropout_training, conv_timing; docs/samples.md) against
TensorFlow running the same Python program: each sample binary runs, and what it prints is
compared with what TensorFlow computes. Timings are printed by the samples, never checked."""
import re

import numpy as np
import pytest
import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.framework import graph_pb2

import oracle

# tf.print's float form ("-0.950213"): six significant digits.
PRINT_RTOL = 1e-5
PRINT_ATOL = 1e-6
SELU_SCALE = 1.0507009873554805
SELU_ALPHA = 1.6732632423543772
DROPOUT_RATE = 0.2  # the seed's keep_probability, which tf.nn.dropout takes as the rate
DROPOUT_SEED = 7    # samples/dropout_training.cc's kDropoutSeed


def _run_sample(name, *args):
    return oracle.run([oracle.SAMPLES / name, *args]).stdout


def _tensor(text):
    """The values of a printed "tf.Tensor([...], shape=(...), dtype=...)", as an array."""
    m = re.search(r"tf\.Tensor\((.*?), shape=\(([0-9, ]*)\), dtype=(\w+)\)", text, re.S)
    assert m, f"no tf.Tensor(...) in {text!r}"
    shape = tuple(int(d) for d in m.group(2).replace(" ", "").split(",") if d)
    values = [float(v) for v in re.findall(r"-?[0-9.]+(?:e[-+]?[0-9]+)?|nan|-?inf", m.group(1))]
    return np.array(values, dtype=m.group(3)).reshape(shape)


def _after(out, label):
    """What follows the line that starts with `label` (the rest of it, then the next lines)."""
    i = out.index(label)
    return out[i + len(label):]


# --- scaled_elu (seed 002) ---------------------------------------------------------------

def scaled_elu(z, scale=1.0, alpha=1.0):
    is_positive = tf.greater_equal(z, 0.0)
    return scale * tf.where(is_positive, z, alpha * tf.nn.elu(z))


def test_scaled_elu_values_equal_tensorflows():
    out = _run_sample("scaled_elu", "10")
    z = _tensor(_after(out, "z:"))
    scaled_elu_tf = tf.function(scaled_elu)
    expected = {
        "scaled_elu(z):": scaled_elu(tf.constant(z)).numpy(),
        "scaled_elu_tf(z):": scaled_elu_tf(tf.constant(z)).numpy(),
        "scaled_elu_tf(z, scale=": scaled_elu_tf(tf.constant(z), SELU_SCALE, SELU_ALPHA).numpy(),
    }
    np.testing.assert_allclose(expected["scaled_elu_tf(z, scale="],
                               tf.nn.selu(tf.constant(z)).numpy(), rtol=1e-6)
    for label, theirs in expected.items():
        mine = _tensor(_after(out, label).split("\n")[0])
        np.testing.assert_allclose(mine, theirs, rtol=PRINT_RTOL, atol=PRINT_ATOL, err_msg=label)
    # One trace per (scale, alpha) pair, as TensorFlow keys Python floats by value.
    assert re.search(r"^traces: 2$", out, re.M), out
    assert scaled_elu_tf.experimental_get_tracing_count() == 2
    assert re.search(r"^Eager execution: [0-9.e-]+$", out, re.M), out
    assert re.search(r"^Graph execution: [0-9.e-]+ \(10 runs each\)$", out, re.M), out


# --- simple_relu (seed 004) --------------------------------------------------------------

def simple_relu(x):
    if tf.greater(x, 0):
        return x
    else:
        return 0


def _graph_def(out):
    """The GraphDef the sample prints (protobuf text format, "node {" ... "versions {...}")."""
    start = out.index("node {")
    end = out.index("}\n", out.index("versions {")) + 2
    return text_format.Parse(out[start:end], graph_pb2.GraphDef())


def _ops(graph):
    main = sorted({n.op for n in graph.node})
    library = sorted({n.op for f in graph.library.function for n in f.node_def})
    return main, library


def _the_if(graph):
    ifs = [n for n in graph.node if n.op in ("If", "StatelessIf")]
    assert len(ifs) == 1, [n.op for n in graph.node]
    return ifs[0]


def test_simple_relu_is_a_stateless_if_as_tensorflow_builds_it(tmp_path):
    out = _run_sample("simple_relu", tmp_path / "out")
    tf_simple_relu = tf.function(simple_relu)
    for label, x in (("First branch, with graph: ", 1), ("Second branch, with graph: ", -1),
                     ("First branch, eagerly: ", 1), ("Second branch, eagerly: ", -1)):
        assert f"{label}{tf_simple_relu(tf.constant(x)).numpy()}\n" in out, (label, out)
    for x in (1, -1):
        assert f"from the bundle, simple_relu({x}): {tf_simple_relu(tf.constant(x)).numpy()}\n" \
            in out
    assert re.search(r"^traces: 1$", out, re.M), out

    mine = _graph_def(out)
    theirs = tf_simple_relu.get_concrete_function(tf.constant(1)).graph.as_graph_def()
    # The same op types: a StatelessIf with its two branch functions, no Select of both.
    my_main, my_library = _ops(mine)
    their_main, their_library = _ops(theirs)
    assert my_main == their_main, (my_main, their_main)
    for ops in (my_main, my_library, their_main, their_library):
        assert not {"Select", "SelectV2"} & set(ops), ops
    # TF's branches also make AutoGraph's do_return flag (a bool Const); ours return the value.
    assert set(my_library) <= set(their_library), (my_library, their_library)
    assert "StatelessIf" in my_main

    my_if, their_if = _the_if(mine), _the_if(theirs)
    assert my_if.op == their_if.op == "StatelessIf"
    assert my_if.attr["Tcond"] == their_if.attr["Tcond"]
    assert my_if.attr["Tin"] == their_if.attr["Tin"]  # x, captured by the true branch
    assert len(my_if.input) == len(their_if.input) == 2
    # TF's Tout is (do_return: bool, value: int32); ours is the value alone.
    their_tout = [t for t in their_if.attr["Tout"].list.type if t != tf.bool.as_datatype_enum]
    assert list(my_if.attr["Tout"].list.type) == their_tout
    assert my_if.attr["_lower_using_switch_merge"].b
    names = {f.signature.name for f in mine.library.function}
    then_name = my_if.attr["then_branch"].func.name
    else_name = my_if.attr["else_branch"].func.name
    assert then_name.startswith("cond_true_") and else_name.startswith("cond_false_")
    assert names == {then_name, else_name}, names


# --- dropout_training (seed 002's MyModel) -----------------------------------------------

class MyModel(tf.Module):
    """The seed's MyModel with the Dense layers written out, on the sample's weights."""

    def __init__(self, weights):
        super().__init__()
        self.w = {k: tf.constant(v) for k, v in weights.items()}
        self.traces = 0

    @tf.function
    def call(self, inputs, training=True):
        self.traces += 1
        y = inputs @ self.w["dense1/kernel"] + self.w["dense1/bias"]
        y = y @ self.w["dense2/kernel"] + self.w["dense2/bias"]
        if training:
            return tf.nn.dropout(y, DROPOUT_RATE, seed=DROPOUT_SEED)
        else:
            return y


def _weights(bundle):
    reader = tf.train.load_checkpoint(str(bundle / "variables" / "variables"))
    return {k: reader.get_tensor(f"{k}/.ATTRIBUTES/VARIABLE_VALUE")
            for k in ("dense1/kernel", "dense1/bias", "dense2/kernel", "dense2/bias")}


def test_dropout_training_flag_as_tensorflow_runs_it(tmp_path):
    out = _run_sample("dropout_training", tmp_path / "out")
    x = _tensor(_after(out, "x:"))
    trained = _tensor(_after(out, "model(x, training=True)  # executes a graph, with dropout"))
    again = _tensor(_after(out, "model(x, training=True)  # the same graph, a new mask"))
    inferred = _tensor(_after(out, "model(x, training=False)  # executes a graph, without"))

    # TF's mask comes from the op seed and the global seed, which is unset in a fresh process
    # (TF's default then): an earlier test's tf.random.set_seed (keras.utils.set_random_seed)
    # would give another mask.
    tf.random.set_seed(None)
    model = MyModel(_weights(tmp_path / "out" / "my_model"))
    their_inferred = model.call(tf.constant(x), training=False).numpy()
    their_trained = model.call(tf.constant(x), training=True).numpy()
    assert model.traces == 2
    assert re.search(r"^traces: 2$", out, re.M), out

    # Inference is the identity after the Dense layers.
    np.testing.assert_allclose(inferred, their_inferred, rtol=PRINT_RTOL, atol=PRINT_ATOL)
    # Training keeps a value scaled by 1 / (1 - rate) or drops it, in TF as here.
    for name, t in (("ours", trained), ("ours again", again), ("TF", their_trained)):
        kept = t != 0
        assert 0 < kept.sum() <= t.size, (name, t)
        np.testing.assert_allclose(t[kept], their_inferred[kept] / (1 - DROPOUT_RATE),
                                   rtol=PRINT_RTOL, atol=PRINT_ATOL, err_msg=name)
    assert not np.array_equal(trained, again), "a new mask on every call"
    # The same op seeds draw the same mask: TF's first training call is ours.
    np.testing.assert_array_equal(trained != 0, their_trained != 0)

    # Two graphs, the mask only in the training one, as TF traces them.
    graphs = {}
    for training in (True, False):
        cf = model.call.get_concrete_function(tf.TensorSpec(x.shape, tf.float32), training)
        graphs[training] = {n.op for n in cf.graph.as_graph_def().node}
        mine = set(re.search(rf"^training={training} graph: (.*)$", out, re.M).group(1).split())
        assert ("RandomUniform" in mine) == training == ("RandomUniform" in graphs[training])
        assert ("MatMul" in mine) and ("MatMul" in graphs[training])
    assert "training=False is dense2(dense1(x)): yes" in out
    assert "training=True drops and scales: yes" in out


# --- conv_timing (seed 003, In [41]) -----------------------------------------------------

@pytest.mark.parametrize("size", [12])
def test_conv_timing_runs_both_modes(size):
    out = _run_sample("conv_timing", "2", str(size))
    assert re.search(r"^Eager conv: [0-9.e-]+$", out, re.M), out
    assert re.search(r"^Function conv: [0-9.e-]+$", out, re.M), out
    conv_layer = tf.keras.layers.Conv2D(100, 3)
    shape = tuple(conv_layer(tf.zeros([1, size, size, 100])).shape)
    assert f"output shape: {shape}, traces: 1\n" in out, out
    diff = float(re.search(r"max \|eager - function\| = ([0-9.e-]+)", out).group(1))
    assert diff <= 1e-4, out
