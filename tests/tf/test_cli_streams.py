"""Machine-readable output stays machine-readable: `savedmodel-cli bench --json` prints one JSON
object on stdout even when the model prints to stdout itself (tf.print(...,
output_stream=sys.stdout)); the model's text goes to stderr."""
import json
import sys

import oracle


def test_bench_json_is_not_spoiled_by_model_prints(tmp_path):
    import tensorflow as tf

    class Printer(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def f(self, x):
            tf.print("hello from the model", x, output_stream=sys.stdout)
            return {"y": x * 2.0}

    m = Printer()
    d = tmp_path / "printer"
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.f})
    proc = oracle.run([oracle.KILN_CLI, "bench", "--dir", d, "--runs", "3", "--warmup", "1",
                       "--json"])
    report = json.loads(proc.stdout)
    assert report["runs"] == 3
    assert proc.stderr.count("hello from the model") == 5, proc.stderr  # first + 1 + 3
