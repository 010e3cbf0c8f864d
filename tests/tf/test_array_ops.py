"""The array, indexing, scatter, sparse, ragged, tensor-list and Case ops against
real TensorFlow: one small module whose tf.functions use them the way models do is saved by
TensorFlow, run by TensorFlow and by our loader on the same inputs, and compared. The saved
graph must contain every op listed in EXPECTED_OPS, so the comparison really covers them."""
import os

import numpy as np
import pytest

import oracle

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _inputs():
    rng = np.random.default_rng(9)
    return {
        "x": rng.standard_normal((2, 4, 6, 3)).astype(np.float32),
        "v": rng.standard_normal((5, 4)).astype(np.float32),
        "ids": np.array([[0, 3], [2, 1], [4, 0]], np.int64),
        "parts": np.array([1, 0, 2, 1, 0], np.int32),
        "lens": np.array([3, 1, 4, 0], np.int64),
        "splits": np.array([0, 3, 4, 8, 8], np.int64),
        "k": np.int32(2),
        "branch": np.int32(1),
        "seq": rng.standard_normal((4, 5)).astype(np.float32),
    }


# Functions of the module: name -> (argument names, ops the traced graph must hold).
FUNCTIONS = {
    "select": (["x", "v", "ids"],
               {"GatherNd", "Slice", "ReverseV2", "Roll", "Split", "SplitV", "Pad", "PadV2",
                "MirrorPad", "Where", "OneHot", "TopKV2", "BroadcastArgs", "EnsureShape",
                "InvertPermutation"}),
    "scatter": (["v", "ids", "parts"],
                {"ScatterNd", "TensorScatterAdd", "TensorScatterUpdate", "TensorScatterMax",
                 "TensorScatterMin", "TensorScatterSub", "DynamicPartition", "DynamicStitch"}),
    "space": (["x"],
              {"SpaceToBatchND", "BatchToSpaceND", "SpaceToDepth", "DepthToSpace",
               "ExtractImagePatches"}),
    "sequence": (["seq", "lens"], {"ReverseSequence"}),
    "ragged": (["v", "splits"],
               {"RaggedRange", "RaggedGather", "RaggedTensorToTensor", "RaggedTensorToSparse",
                "RaggedTensorToVariant", "RaggedTensorFromVariant"}),
    "sparse": (["v", "ids"],
               {"SparseToDense", "SparseFillEmptyRows", "SparseReshape",
                "DenseToDenseSetOperation"}),
    "lists": (["v", "k"],
              {"TensorListGather", "TensorListConcatV2", "TensorListScatterIntoExistingList"}),
    "case": (["v", "branch"], {"StatelessCase"}),
    "stateful_case": (["v", "branch"], {"Case"}),
}


def _module():
    import tensorflow as tf

    spec = {
        "x": tf.TensorSpec([2, 4, 6, 3], tf.float32, name="x"),
        "v": tf.TensorSpec([5, 4], tf.float32, name="v"),
        "ids": tf.TensorSpec([3, 2], tf.int64, name="ids"),
        "parts": tf.TensorSpec([5], tf.int32, name="parts"),
        "lens": tf.TensorSpec([4], tf.int64, name="lens"),
        "splits": tf.TensorSpec([5], tf.int64, name="splits"),
        "k": tf.TensorSpec([], tf.int32, name="k"),
        "branch": tf.TensorSpec([], tf.int32, name="branch"),
        "seq": tf.TensorSpec([4, 5], tf.float32, name="seq"),
    }

    def sig(name):
        return [spec[a] for a in FUNCTIONS[name][0]]

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.calls = tf.Variable(0.0)

        @tf.function(input_signature=sig("select"))
        def select(self, x, v, ids):
            g = tf.gather_nd(v, ids)
            s = tf.slice(x, [0, 1, 2, 0], [2, 2, -1, 2])
            r = tf.reverse(v, axis=[0, 1])
            ro = tf.roll(v, shift=[2, -1], axis=[0, 1])
            a, b = tf.split(v, 2, axis=1)
            c1, c2, c3 = tf.split(v, [1, -1, 2], axis=0)
            p1 = tf.pad(v, [[1, 2], [0, 1]])
            p2 = tf.pad(v, [[1, 0], [2, 1]], constant_values=-7.0)
            p3 = tf.pad(v, [[2, 1], [1, 3]], mode="REFLECT")
            p4 = tf.pad(v, [[2, 0], [4, 1]], mode="SYMMETRIC")
            w = tf.where(v > 0.3)
            oh = tf.one_hot(ids, 5, on_value=2.0, off_value=-1.0, axis=1)
            tv, ti = tf.math.top_k(v, k=3)
            bshape = tf.raw_ops.BroadcastArgs(s0=tf.shape(v), s1=tf.constant([3, 1, 1]))
            e = tf.ensure_shape(v, [None, 4])
            inv = tf.math.invert_permutation(tf.constant([3, 0, 4, 1, 2]))
            return (g, s, r, ro, a, b, c1, c2, c3, p1, p2, p3, p4, w, oh, tv, ti, bshape, e, inv)

        @tf.function(input_signature=sig("scatter"))
        def scatter(self, v, ids, parts):
            rows = tf.constant([[3], [0], [3]])
            upd = v[:3] * 2.0
            sn = tf.scatter_nd(rows, upd, [6, 4])
            ta = tf.tensor_scatter_nd_add(v, rows, upd)
            tu = tf.tensor_scatter_nd_update(v, ids[:, :1] % 5, v[1:4])
            tmax = tf.tensor_scatter_nd_max(v, ids % 4, tf.constant([1.0, -1.0, 0.5]))
            tmin = tf.tensor_scatter_nd_min(v, ids % 4, tf.constant([1.0, -1.0, 0.5]))
            tsub = tf.tensor_scatter_nd_sub(v, ids % 4, tf.constant([1.0, -1.0, 0.5]))
            p0, p1, p2 = tf.dynamic_partition(v, parts, 3)
            idx = tf.dynamic_partition(tf.range(5), parts, 3)
            st = tf.dynamic_stitch(idx, [p0 * 10.0, p1, p2 - 1.0])
            return sn, ta, tu, tmax, tmin, tsub, p0, p1, p2, st

        @tf.function(input_signature=sig("space"))
        def space(self, x):
            sb = tf.space_to_batch_nd(x, [2, 3], [[1, 1], [0, 3]])
            bs = tf.batch_to_space(sb, [2, 3], [[1, 1], [0, 3]])
            sd = tf.nn.space_to_depth(x[:, :, :4, :], 2)
            ds = tf.nn.depth_to_space(tf.concat([x, x], axis=3)[:, :, :, :4], 2)
            pa = tf.image.extract_patches(x, [1, 2, 3, 1], [1, 2, 2, 1], [1, 1, 2, 1], "SAME")
            pv = tf.image.extract_patches(x, [1, 3, 2, 1], [1, 1, 3, 1], [1, 1, 1, 1], "VALID")
            return sb, bs, sd, ds, pa, pv

        @tf.function(input_signature=sig("sequence"))
        def sequence(self, seq, lens):
            return (tf.reverse_sequence(seq, lens, seq_axis=1, batch_axis=0),
                    tf.reverse_sequence(tf.transpose(seq), lens, seq_axis=0, batch_axis=1))

        @tf.function(input_signature=sig("ragged"))
        def ragged(self, v, splits):
            rr = tf.ragged.range(tf.constant([0, 5, 2, 1], tf.int64), 8, tf.constant([3, -1, 1, 10], tf.int64))
            # validate=False: the checks would add Assert ops, which are not what this tests.
            rt = tf.RaggedTensor.from_row_splits(tf.reshape(v, [-1])[:8], splits, validate=False)
            dense = rt.to_tensor(default_value=-1.0)
            clipped = rt.to_tensor(default_value=9.0, shape=[5, 2])
            nested = tf.RaggedTensor.from_row_splits(rt, [0, 2, 2, 4], validate=False)
            g = tf.gather(nested, [2, 0, 0])
            sp = nested.to_sparse()
            # map_fn over ragged rows packs each row into a variant and stacks them back.
            doubled = tf.map_fn(lambda row: row * 2.0 + tf.reduce_sum(row), rt,
                                fn_output_signature=tf.RaggedTensorSpec([None], tf.float32,
                                                                        ragged_rank=0))
            return (rr.values, rr.row_splits, dense, clipped, g.values.values,
                    g.values.row_splits, g.row_splits, sp.indices, sp.values, sp.dense_shape,
                    doubled.values, doubled.row_splits)

        @tf.function(input_signature=sig("sparse"))
        def sparse(self, v, ids):
            st = tf.sparse.SparseTensor(tf.constant([[0, 1], [2, 0], [2, 3]], tf.int64),
                                        v[0, :3], tf.constant([4, 4], tf.int64))
            dense = tf.sparse.to_dense(st, default_value=0.5)
            filled, empty = tf.sparse.fill_empty_rows(st, -2.0)
            reshaped = tf.sparse.reshape(st, [2, 8])
            a = tf.cast(ids * 3 % 7, tf.int32)
            b = tf.constant([[3, 1], [0, 6], [6, 2]])
            diff = tf.sets.difference(a, b)
            inter = tf.sets.intersection(a, b)
            uni = tf.sets.union(a, b)
            return (dense, filled.indices, filled.values, empty, reshaped.indices,
                    diff.indices, diff.values, inter.indices, inter.values, uni.indices,
                    uni.values, uni.dense_shape)

        @tf.function(input_signature=sig("lists"))
        def lists(self, v, k):
            ta = tf.TensorArray(tf.float32, size=5, element_shape=[4])
            ta = ta.scatter([4, 0, 2], v[:3])
            ta = ta.write(1, v[3] * 2.0)
            ta = ta.write(3, v[4] + 1.0)
            picked = ta.gather([k, 0, 4])
            ragged_ta = tf.TensorArray(tf.float32, size=3, infer_shape=False)
            ragged_ta = ragged_ta.write(0, v[0, :k])
            ragged_ta = ragged_ta.write(1, v[1])
            ragged_ta = ragged_ta.write(2, v[2, :1])
            return picked, ragged_ta.concat()

        @tf.function(input_signature=sig("case"))
        def case(self, v, branch):
            return tf.switch_case(branch, [lambda: v * 2.0, lambda: -v, lambda: v + 1.0])

        @tf.function(input_signature=sig("stateful_case"))
        def stateful_case(self, v, branch):
            def counted():
                self.calls.assign_add(1.0)
                return v * self.calls
            return tf.switch_case(branch, [lambda: v * 2.0, counted])

    return M()


def _saved_ops(d):
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    with open(os.path.join(d, "saved_model.pb"), "rb") as f:
        sm.ParseFromString(f.read())
    ops = set()
    for mg in sm.meta_graphs:
        ops.update(n.op for n in mg.graph_def.node)
        for fn in mg.graph_def.library.function:
            ops.update(n.op for n in fn.node_def)
    return ops


@pytest.fixture(scope="module")
def array_module(tmp_path_factory):
    """The saved module, its ops, and {function: (input files, TF's outputs)}."""
    import tensorflow as tf
    d = tmp_path_factory.mktemp("array_ops")
    bundle = str(d / "bundle")
    tf.saved_model.save(_module(), bundle)
    inputs = _inputs()
    loaded = tf.saved_model.load(bundle)
    calls = {}
    for name, (args, _) in FUNCTIONS.items():
        files = [oracle.save_value(d / f"{name}.{a}", inputs[a]) for a in args]
        out = getattr(loaded, name)(*[tf.constant(inputs[a]) for a in args])
        flat = [np.asarray(t) for t in tf.nest.flatten(out)]
        calls[name] = (files, flat)
    return bundle, _saved_ops(bundle), calls


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_array_ops_match_tensorflow(array_module, name, tmp_path):
    bundle, ops, calls = array_module
    missing = FUNCTIONS[name][1] - ops
    assert not missing, f"{name}: TensorFlow's graph has none of {sorted(missing)}"
    files, theirs = calls[name]
    ours = oracle.kiln_call_function(bundle, name, files, tmp_path / "out")
    assert len(ours) == len(theirs), f"{name}: {len(ours)} outputs, TF {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        oracle.assert_same(a, b, f"{name} output {i}")
