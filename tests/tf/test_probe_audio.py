"""Audio, signal-processing and sampling SavedModels (tf.Module + tf.function(input_signature),
tf.saved_model.save) that once ran differently here than in TensorFlow (or not at all): each
test writes one small module, runs its serving_default through `savedmodel-cli` and compares
with what TensorFlow computes."""
import os

import numpy as np

import oracle

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def test_index_shuffle_matches_tf(tmp_path):
    """tf.random.experimental.index_shuffle (RandomIndexShuffle): TF's Simon-cipher permutation
    for every index and seed dtype, scalar and vector forms, and blocks up to 64 bits."""
    import tensorflow as tf

    def fn(idx, seed, mx):
        return {
            "vec": tf.random.experimental.index_shuffle(idx, seed, mx),
            "i32": tf.random.experimental.index_shuffle(tf.cast(idx, tf.int32), seed + 1, 1000),
            "small": tf.random.experimental.index_shuffle(tf.range(7, dtype=tf.int64), [1, 2], 6),
            "scalar": tf.random.experimental.index_shuffle(tf.constant(3, tf.int64), [3, 4],
                                                           2**40),
            "u64": tf.random.experimental.index_shuffle(
                tf.constant([0, 7, 2**62], tf.uint64), tf.constant([4, 5], tf.uint32),
                tf.constant(2**63 + 5, tf.uint64)),
            # a seed per index: the raw op (index_shuffle pads an [n, 2] seed's dim 0)
            "rows": tf.raw_ops.RandomIndexShuffle(
                index=idx[:3], seed=tf.reshape(tf.range(9, dtype=tf.int64), [3, 3]),
                max_index=mx),
            "max_vec": tf.raw_ops.RandomIndexShuffle(
                index=idx[:4], seed=tf.constant([7, 8, 9], tf.int32),
                max_index=tf.constant([3, 70000, 5, 2**40], tf.int64)),
        }

    ours, theirs = oracle.run_module(
        tmp_path, fn,
        [tf.TensorSpec([None], tf.int64, "idx"), tf.TensorSpec([2], tf.int64, "seed"),
         tf.TensorSpec([], tf.int64, "mx")],
        {"idx": np.arange(20, dtype=np.int64), "seed": np.array([11, -12], np.int64),
         "mx": np.array(19, np.int64)})
    oracle.assert_outputs(ours, theirs, "index_shuffle")
    assert sorted(ours["vec"].tolist()) == list(range(20))  # a permutation


def test_ffts_of_lengths_that_are_not_powers_of_two(tmp_path):
    """STFTs and FFTs of mixed-radix (300 = 4*3*5*5, 62 = 2*31) and prime (257, 1009: Bluestein)
    lengths, every rank and direction, against TensorFlow."""
    import tensorflow as tf

    def fn(x, y):
        s = tf.signal.stft(x, 256, 100, 300, window_fn=tf.signal.hamming_window, pad_end=True)
        o = {"stft300": s,
             "istft300": tf.signal.inverse_stft(s, 256, 100, 300,
                                                window_fn=tf.signal.hamming_window),
             "stft257": tf.abs(tf.signal.stft(x, 200, 50, 257)),
             "rfft62": tf.signal.rfft(x[:, :62]),
             "irfft_odd": tf.signal.irfft(tf.signal.rfft(x[:, :99]), [99]),
             # not Hermitian at X[0] and X[n / 2]: their imaginary parts are ignored
             "irfft_any": tf.signal.irfft(tf.complex(x[:, :33], x[:, 40:73])),
             "irfft_any_odd": tf.signal.irfft(tf.complex(x[:, :33], x[:, 40:73]), [65]),
             "irfft2d_any": tf.signal.irfft2d(tf.complex(y[:, :, :8], y[:, :, 7:])),
             "fft1009": tf.signal.fft(tf.complex(tf.cast(x[:, :1009], tf.float64),
                                                 tf.cast(x[:, 1:1010], tf.float64))),
             "ifft2d": tf.signal.ifft2d(tf.complex(y, -y)),
             "rfft3d": tf.signal.rfft3d(tf.reshape(y, [-1, 2, 6, 15])),
             "irfft2d": tf.signal.irfft2d(tf.signal.rfft2d(y), [6, 15]),
             "spec400": tf.raw_ops.AudioSpectrogram(input=tf.transpose(x), window_size=400,
                                                    stride=160, magnitude_squared=True)}
        return o

    rng = np.random.default_rng(3)
    ours, theirs = oracle.run_module(
        tmp_path, fn,
        [tf.TensorSpec([None, None], tf.float32, "x"),
         tf.TensorSpec([None, 6, 15], tf.float32, "y")],
        {"x": rng.standard_normal((2, 3000)).astype(np.float32),
         "y": rng.standard_normal((4, 6, 15)).astype(np.float32)})
    oracle.assert_model_outputs(ours, theirs, "non-power-of-two FFTs")
    np.testing.assert_allclose(ours["fft1009"], theirs["fft1009"], rtol=1e-10, atol=1e-10)
