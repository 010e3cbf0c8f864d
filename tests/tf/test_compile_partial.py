"""`savedmodel-cli compile` plans what it can: a bundle with one signature this runtime cannot
prepare (an op it lacks) still gets a plan for the others, the unplannable signature is listed
on stderr, and a load of the planned signature uses the plan."""
import oracle


def test_compile_plans_the_signatures_that_load(tmp_path):
    import tensorflow as tf

    class TwoSignatures(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def double(self, x):
            return {"y": x * 2.0}

        @tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
        def sobol(self, n):
            # SobolSample: an op kiln does not run.
            return {"points": tf.math.sobol_sample(2, n)}

    m = TwoSignatures()
    d = tmp_path / "two"
    tf.saved_model.save(m, str(d), signatures={"double": m.double, "sobol": m.sobol})
    proc = oracle.run([oracle.KILN_CLI, "compile", "--dir", d])
    assert "1 function planned" in proc.stdout, proc.stdout
    assert "signature 'sobol'" in proc.stderr and "SobolSample" in proc.stderr, proc.stderr
    run = oracle.run([oracle.KILN_CLI, "run", "--dir", d, "--tag_set", "serve",
                      "--signature_def", "double", "--input_exprs", "x=[1.5, 2]",
                      "--plan", "require"])
    assert "[3. 4.]" in run.stdout, run.stdout
