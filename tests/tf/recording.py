"""Shared by the model generators (make_keras_layers.py, make_applications.py,
make_deployed_models.py): deterministic inputs and weights, exporting, and recording what
TensorFlow computes with the bundle it wrote.

A generator writes, for each model NAME under OUT:
    OUT/NAME/          the SavedModel
    OUT/NAME.data/     <key>.in.<input>.npy and <key>.out.<output>.npy for every signature fed
and OUT/manifest.json with one entry per model:
    {"dir", "data", "how", "seconds", "signatures": {key: {"inputs": {..}, "outputs": {..}}},
     "error": null or the TensorFlow error that stopped the generator for this model}
Strings are written as numpy byte-string arrays (dtype "S"), which np.save writes without
pickling, so a user could feed the same files to `saved_model_cli run` and `savedmodel-cli run`.
"""
import json
import os
import shutil
import time
import traceback
import zlib

import numpy as np


def seed_of(name):
    """A stable per-model seed (Python's hash() is salted per process)."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def to_numpy(value):
    """A tensor or array as a numpy array; strings become byte-string ("S") arrays."""
    value = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if value.dtype.kind in "OU":
        flat = [v if isinstance(v, bytes) else str(v).encode() for v in value.reshape(-1)]
        width = max([len(v) for v in flat] + [1])
        value = np.array(flat, dtype=f"S{width}").reshape(value.shape)
    return value


def write_value(path_stem, value):
    """Writes path_stem.npy; returns the file name (not the path)."""
    np.save(path_stem + ".npy", to_numpy(value), allow_pickle=False)
    return os.path.basename(path_stem) + ".npy"


def randomize_weights(model, seed, scale=0.5):
    """Sets every float variable to deterministic random values, so biases, BatchNorm statistics
    and the like are not the trivial 0/1 of their initialisers. Variances and scales stay
    positive (they feed square roots and divisions)."""
    import keras
    rng = np.random.default_rng(seed)
    for w in model.weights:
        dtype = keras.backend.standardize_dtype(w.dtype)
        if not dtype.startswith("float"):
            continue
        shape = tuple(w.shape)
        name = w.path
        if any(k in name for k in ("variance", "gamma", "moving_var")) or name.endswith("scale"):
            value = rng.uniform(0.5, 1.5, shape)
        else:
            value = rng.uniform(-scale, scale, shape)
        w.assign(value.astype(dtype))


# What TensorFlow's own CPU kernels refuse on some machines: (a fragment of TF's error message,
# the reason the test prints when it skips the comparison). TF runs its Eigen kernels where its
# oneDNN path is off: with TF_ENABLE_ONEDNN_OPTS=0 (which the test command sets, so the oracle is
# the same on every machine) and by default on CPUs without AVX512_VNNI/BF16/AMX.
TF_CPU_LIMITS = [
    ("do not yet support dilation rates larger than 1",
     "TensorFlow's Eigen CPU kernels for transposed convolutions refuse dilation rates > 1"),
    ("Current kernel implementation does not support dilations",
     "TensorFlow's Eigen CPU kernel for depthwise convolutions refuses dilation rates > 1"),
    ("does not support grouped convolutions",
     "TensorFlow's fused CPU convolution (Conv2D + BiasAdd, which its graph optimiser fuses) "
     "refuses grouped convolutions"),
]


def tf_cpu_limit(error):
    """The reason from TF_CPU_LIMITS when `error` is one of those refusals, else None."""
    text = str(error)
    return next((why for fragment, why in TF_CPU_LIMITS if fragment in text), None)


def record_signatures(bundle_dir, feeds):
    """Runs each signature {key: {input: array}} on a fresh tf.saved_model.load of the bundle
    (stateful ones start from the saved state, as our loader does); writes inputs and outputs
    into bundle_dir + ".data". Returns {key: {"inputs": {..}, "outputs": {..}}}. A signature that
    TensorFlow cannot compute on this machine (TF_CPU_LIMITS) gets "tf_cannot_compute" (the
    reason) and "output_specs" ({output: shape with None for unknown dims}) instead of outputs,
    so the test still runs kiln on it."""
    import tensorflow as tf
    data = bundle_dir + ".data"
    os.makedirs(data, exist_ok=True)
    entries = {}
    for key, feed in feeds.items():
        fn = tf.saved_model.load(bundle_dir).signatures[key]
        names = sorted(fn.structured_input_signature[1])
        if len(names) == 1 and len(feed) == 1 and names[0] not in feed:
            # Keras renames an input it has to clone ("imgCLONE"); feed what the bundle says.
            feed = {names[0]: next(iter(feed.values()))}
        inputs = {k: write_value(f"{data}/{key}.in.{k}", v) for k, v in feed.items()}
        try:
            out = fn(**{k: tf.constant(v) for k, v in feed.items()})
        except Exception as e:  # noqa: BLE001 - only TF's known refusals are kept
            reason = tf_cpu_limit(e)
            if reason is None:
                raise
            specs = {k: [d if d is None else int(d) for d in s.shape.as_list()]
                     for k, s in fn.structured_outputs.items()}
            entries[key] = {"inputs": inputs, "outputs": {}, "tf_cannot_compute": reason,
                            "output_specs": specs}
            continue
        entries[key] = {
            "inputs": inputs,
            "outputs": {k: write_value(f"{data}/{key}.out.{k}", v) for k, v in out.items()},
        }
    return entries


def build_and_record(out, name, make, log=print):
    """Calls make(bundle_dir) -> (how, {signature key: feed}) and records TF's outputs. A failure
    is kept in the entry (the model's tests fail with it) instead of stopping the generator."""
    bundle = os.path.join(out, name)
    for stale in (bundle, bundle + ".data"):  # a kept output dir from an older run
        if os.path.islink(stale):
            os.unlink(stale)
        elif os.path.isdir(stale):
            shutil.rmtree(stale)
    t0 = time.monotonic()
    entry = {"dir": name, "data": name + ".data", "signatures": {}, "error": None}
    try:
        how, feeds = make(bundle)
        entry["how"] = how
        entry["signatures"] = record_signatures(bundle, feeds)
    except Exception:  # noqa: BLE001 - the message goes into the manifest and the test
        entry["error"] = traceback.format_exc(limit=4)
    entry["seconds"] = round(time.monotonic() - t0, 2)
    log(f"  {name}: {'ok' if entry['error'] is None else 'FAILED'} ({entry['seconds']} s)")
    return entry


def fingerprint(generator_file):
    """Changes whenever the generator or this file changes: a kept output dir is then stale."""
    crc = 0
    for f in (generator_file, __file__):
        with open(f, "rb") as fh:
            crc = zlib.crc32(fh.read(), crc)
    return f"{crc:08x}"


def write_manifest(out, manifest, generator_file):
    """Writes OUT/manifest.json; models an earlier run of the same generator wrote there and
    this run did not redo are kept (so `make_x.py OUT NAME` refreshes one model)."""
    import keras
    import tensorflow as tf
    path = os.path.join(out, "manifest.json")
    if os.path.exists(path):
        old = read_manifest(out)
        if old.get("generator") == fingerprint(generator_file):
            manifest["models"] = {**old["models"], **manifest["models"]}
    manifest = {"tensorflow": tf.__version__, "keras": keras.__version__,
                "generator": fingerprint(generator_file), **manifest}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    return manifest


def read_manifest(out):
    with open(os.path.join(out, "manifest.json")) as f:
        return json.load(f)


def load_or_make(out, make_all, generator_file, names):
    """The manifest in OUT when the same generator source wrote every model in `names` there
    (set KILN_MODELS_DIR=DIR to keep generated models between runs); else generates."""
    path = os.path.join(out, "manifest.json")
    if os.path.exists(path):
        m = read_manifest(out)
        if m.get("generator") == fingerprint(generator_file) and set(names) <= set(m["models"]):
            return m
    return make_all(out, names)
