"""TensorFlow as the oracle for the tables of tensors: a module exported by TF 2.21 with a
tf.lookup.experimental.MutableHashTable of vectors (MutableHashTableOfTensorsV2) and
DenseHashTables (MutableDenseHashTableV2) that inserts, finds, removes, sizes and exports inside
its signature, run by our `savedmodel-cli run` and by TF. The dense tables' exports are compared
bucket for bucket (TF's hashing and probing); the hash table's export in sorted order (TF gives
its unordered_map's order). String keys come out as fingerprints (int64)."""
import numpy as np
import pytest

import oracle


def _module():
    import tensorflow as tf

    class Tables(tf.Module):
        def __init__(self):
            super().__init__()
            self.pairs = tf.lookup.experimental.MutableHashTable(
                key_dtype=tf.string, value_dtype=tf.float32, default_value=[0., 0.])
            # Restored from the checkpoint (LookupTableImportV2) before the signature runs.
            self.pairs.insert(tf.constant([b"kept", b"gone"]), tf.constant([[9., 8.], [7., 6.]]))
            self.dense = tf.lookup.experimental.DenseHashTable(
                key_dtype=tf.int64, value_dtype=tf.float32, default_value=[-1., -1.],
                empty_key=-1, deleted_key=-2, initial_num_buckets=8)
            self.dense.insert(tf.constant([100], tf.int64), tf.constant([[1., 2.]]))
            self.words = tf.lookup.experimental.DenseHashTable(
                key_dtype=tf.string, value_dtype=tf.int64, default_value=-1,
                empty_key="", deleted_key="<deleted>", initial_num_buckets=4)

        @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
        def run(self, x):
            fp = tf.strings.to_hash_bucket_fast
            big = 2**62
            self.pairs.insert(tf.constant([b"a", b"b", b"c"]),
                              tf.stack([x, 2. * x, x + 1.]))
            self.pairs.remove(tf.constant([b"b", b"gone", b"zz"]))
            pk, pv = self.pairs.export()
            order = tf.argsort(fp(pk, big))
            keys = tf.constant([3, 11, 19, 5, 27, 7, 2], tf.int64)
            self.dense.insert(keys, tf.reshape(tf.range(14, dtype=tf.float32), [7, 2]) + x)
            self.dense.remove(tf.constant([11, 4], tf.int64))
            self.dense.insert(tf.constant([35], tf.int64), tf.reshape(x, [1, 2]))
            dk, dv = self.dense.export()
            words = tf.constant([b"apple", b"banana", b"cherry", b"date", b"elder", b"fig"])
            self.words.insert(words, tf.range(6, dtype=tf.int64))
            self.words.remove(tf.constant([b"cherry"]))
            wk, wv = self.words.export()
            return {
                "pairs_find": self.pairs.lookup(tf.constant([b"a", b"b", b"kept", b"q"])),
                "pairs_size": self.pairs.size(),
                "pairs_keys": tf.gather(fp(pk, big), order),
                "pairs_values": tf.gather(pv, order),
                "dense_find": self.dense.lookup(tf.constant([3, 11, 35, 100, 8], tf.int64)),
                "dense_size": self.dense.size(),
                "dense_keys": dk,
                "dense_values": dv,
                "words_find": self.words.lookup(tf.constant([b"fig", b"cherry", b"kiwi"])),
                "words_size": self.words.size(),
                "words_keys": fp(wk, big),
                "words_values": wv,
            }

    return Tables()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    import tensorflow as tf

    d = tmp_path_factory.mktemp("mutable_tables") / "model"
    m = _module()
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.run})
    return d


def test_mutable_tables_match_tf(bundle, tmp_path):
    import tensorflow as tf

    x = np.array([0.5, -1.5], np.float32)
    oracle.save_value(tmp_path / "x", x)
    ours = oracle.kiln_run(bundle, "serving_default", {"x": tmp_path / "x.npy"}, tmp_path / "out")
    loaded = tf.saved_model.load(str(bundle))
    theirs = {k: v.numpy() for k, v in loaded.signatures["serving_default"](x=x).items()}
    oracle.assert_outputs(ours, theirs, "mutable tables")
