"""Issue 23's TensorBoard logs and progress line: samples/train_mnist --logdir writes event files
(kiln::modules::SummaryWriter) that TensorBoard's own event reader loads: the loss, accuracy and
learning-rate scalars of every step, equal to what the program printed, and the traced train
step's graph. The scalars are the records TF2's tf.summary.scalar writes, compared field by
field with an event file TensorFlow writes here."""
import re

import numpy as np
import pytest

import oracle

STEPS = 5
TAGS = {"loss", "accuracy", "learning_rate"}


def _accumulator(logdir):
    from tensorboard.backend.event_processing import event_accumulator
    files = list(logdir.glob("events.out.tfevents.*"))
    assert len(files) == 1, files
    acc = event_accumulator.EventAccumulator(str(logdir), size_guidance={"tensors": 0})
    acc.Reload()
    return acc, files[0]


def _values(acc, tag):
    from tensorboard.util import tensor_util
    events = acc.Tensors(tag)
    return [e.step for e in events], [float(tensor_util.make_ndarray(e.tensor_proto))
                                      for e in events]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("mnist") / "data"
    oracle.run(["bash", oracle.ROOT / "scripts" / "fetch-mnist.sh", d])
    return d


@pytest.fixture(scope="module")
def printed_run(data, tmp_path_factory):
    """--print-loss: the graph prints each step's loss, so each scalar can be checked."""
    d = tmp_path_factory.mktemp("printed")
    proc = oracle.run([oracle.SAMPLES / "train_mnist", data, d / "cnn", "--steps", STEPS,
                       "--threads", 1, "--logdir", d / "logs", "--print-loss"])
    return d / "logs", proc.stdout


@pytest.fixture(scope="module")
def progress_run(data, tmp_path_factory):
    """The default: the progress line, here plain lines (stdout is a pipe)."""
    d = tmp_path_factory.mktemp("progress")
    proc = oracle.run([oracle.SAMPLES / "train_mnist", data, d / "cnn", "--steps", STEPS,
                       "--threads", 1, "--logdir", d / "logs"])
    return d / "logs", proc.stdout


def test_tensorboard_reads_every_steps_scalars_equal_to_the_printed_losses(printed_run):
    logdir, stdout = printed_run
    acc, path = _accumulator(logdir)
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\..+\.v2", path.name), path.name
    assert TAGS <= set(acc.Tags()["tensors"]), acc.Tags()
    assert set(acc.PluginTagToContent("scalars")) == TAGS
    printed = [float(v) for v in re.findall(r"^loss:  ([0-9.]+)$", stdout, re.M)]
    assert len(printed) == STEPS, stdout[-2000:]
    steps, losses = _values(acc, "loss")
    assert steps == list(range(1, STEPS + 1))
    np.testing.assert_allclose(losses, printed, rtol=1e-6)
    _, accuracies = _values(acc, "accuracy")
    assert all(0 <= a <= 1 and a * 50 == pytest.approx(round(a * 50), abs=1e-4)
               for a in accuracies), accuracies  # a fraction of the batch of 50
    _, rates = _values(acc, "learning_rate")
    np.testing.assert_allclose(rates, [0.001] * STEPS, rtol=1e-6)


def test_tensorboard_reads_the_traced_train_step_graph(printed_run):
    logdir, _ = printed_run
    acc, _ = _accumulator(logdir)
    assert acc.Tags()["graph"]
    ops = {n.op for n in acc.Graph().node}
    for fn in acc.Graph().library.function:
        ops |= {n.op for n in fn.node_def}
    for op in ["Conv2DBackpropFilter", "ResourceApplyAdam", "ArgMax", "PrintV2"]:
        assert op in ops, f"{op} is not in the logged graph: {sorted(ops)}"


def test_the_records_are_tfrecords_with_tf2s_scalar_summaries(printed_run, tmp_path):
    """TensorFlow's own reader checks the framing and CRCs; its tf.summary.scalar writes the
    same Summary.Value (metadata and tensor) as ours for the same tag and value."""
    import tensorflow as tf
    logdir, _ = printed_run
    _, path = _accumulator(logdir)
    ours = list(tf.compat.v1.train.summary_iterator(str(path)))  # raises on a bad CRC
    assert ours[0].file_version == "brain.Event:2"
    first_loss = next(e for e in ours if e.summary.value and e.summary.value[0].tag == "loss")
    value = first_loss.summary.value[0]
    with tf.summary.create_file_writer(str(tmp_path / "tf")).as_default():
        loss = np.frombuffer(value.tensor.tensor_content, np.float32)[0]
        tf.summary.scalar("loss", loss, step=first_loss.step)
    theirs_file = next((tmp_path / "tf").glob("events.out.tfevents.*"))
    theirs = [e for e in tf.compat.v1.train.summary_iterator(str(theirs_file))
              if e.summary.value]
    assert len(theirs) == 1
    assert theirs[0].step == first_loss.step
    assert theirs[0].summary.value[0] == value, (theirs[0].summary.value[0], value)


def test_the_progress_line_shows_the_steps_averages_without_carriage_returns(progress_run):
    logdir, stdout = progress_run
    assert "\r" not in stdout
    assert not re.search(r"^loss:", stdout, re.M)  # no graph print by default
    lines = [l for l in stdout.splitlines() if re.match(rf"\s*\d+/{STEPS} \[", l)]
    assert lines, stdout
    final = lines[-1]
    assert final.startswith(f"{STEPS}/{STEPS} [{'=' * 30}] - "), final
    assert "ETA" not in final and re.search(r" \d+(ms|s|us)/step", final), final
    acc, _ = _accumulator(logdir)
    # Keras's Progbar shows the averages over the steps so far.
    for tag in ["loss", "accuracy"]:
        shown = float(re.search(rf" - {tag}: ([0-9.e+-]+)", final).group(1))
        assert shown == pytest.approx(np.mean(_values(acc, tag)[1]), abs=1e-4), (tag, final)
