"""TensorFlow reads what the seed samples write (every samples/*.cc that saves a bundle, beyond
the DemoModule and the MLP of test_tf_reads_ours.py): each bundle the sample leaves under the
directory it is given loads in TensorFlow without warnings, shows as ours shows it, and every
signature gives our outputs on inputs made from its TensorSpecs."""
import numpy as np
import pytest
import tensorflow as tf

import oracle

# test_tf_reads_ours.py; train_mnist needs its data and has test_train_mnist.py.
COVERED = {"demo_module_export", "mlp_export", "train_mnist"}
# Stateful random ops: unseeded (seed == seed2 == 0) they draw differently on every load, in TF
# as in kiln, so only dtype and shape of a signature that uses one can be compared.
RANDOM_OPS = {"RandomStandardNormal", "RandomUniform", "RandomUniformInt", "TruncatedNormal",
              "RandomShuffle", "Multinomial", "RandomGamma", "RandomPoisson", "RandomPoissonV2"}


def _unseeded_random_ops(d):
    from tensorflow.core.protobuf import saved_model_pb2
    proto = saved_model_pb2.SavedModel()
    proto.ParseFromString((d / "saved_model.pb").read_bytes())
    graph = proto.meta_graphs[0].graph_def
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return sorted({n.op for n in nodes if n.op in RANDOM_OPS
                   and n.attr["seed"].i == 0 and n.attr["seed2"].i == 0})


def _saving_samples():
    return sorted(p.stem for p in (oracle.ROOT / "samples").glob("*.cc")
                  if "Save(" in p.read_text() and not p.stem.endswith("_load")
                  and p.stem not in COVERED)


SAMPLES = _saving_samples()


@pytest.fixture(scope="module")
def sample_bundles(tmp_path_factory):
    """{sample: [bundle dirs]}, each sample run once with a fresh directory."""
    cache = {}

    def get(name):
        if name not in cache:
            out = tmp_path_factory.mktemp(name) / "out"
            oracle.run([oracle.SAMPLES / name, out])
            cache[name] = sorted(p.parent for p in out.rglob("saved_model.pb"))
            assert cache[name], f"sample {name} wrote no bundle under {out}"
        return cache[name]

    return get


@pytest.mark.parametrize("name", SAMPLES)
def test_saved_model_cli_show_all_equals_ours(sample_bundles, name):
    for d in sample_bundles(name):
        oracle.assert_show_equal(oracle.kiln_show_all(d), oracle.tf_show_all(d), f"{name}: {d}")


@pytest.mark.parametrize("name", SAMPLES)
def test_tf_loads_and_signatures_give_our_outputs(sample_bundles, name, tmp_path):
    for i, d in enumerate(sample_bundles(name)):
        what = f"{name}: {d.name}"
        with oracle.tf_warnings() as logged:
            keys = sorted(tf.saved_model.load(str(d)).signatures.keys())
        oracle.assert_no_warnings(logged, what)
        for key in keys:
            # A fresh load per signature on both sides: stateful functions start from the save.
            fn = tf.saved_model.load(str(d)).signatures[key]
            feed = oracle.example_inputs(fn, seed=i)
            theirs = {k: np.asarray(v.numpy())
                      for k, v in fn(**{k: tf.constant(v) for k, v in feed.items()}).items()}
            files = {k: oracle.save_value(tmp_path / f"{i}_{key}_{k}", v) for k, v in feed.items()}
            mine = oracle.kiln_call_signature(d, key, files, tmp_path / f"out_{i}_{key}")
            if _unseeded_random_ops(d):
                theirs = {k: (v.dtype, v.shape) for k, v in theirs.items()}
                mine = {k: (np.asarray(v).dtype, np.asarray(v).shape) for k, v in mine.items()}
                assert mine == theirs, f"{what} signature {key}: ours {mine}, TF {theirs}"
                continue
            oracle.assert_outputs(mine, theirs, f"{what} signature {key}")
