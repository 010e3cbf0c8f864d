"""Issue 21's target: every op with a CPU kernel in the oracle TensorFlow's registry
(tensorflow.python.framework.kernels.get_all_registered_kernels()), less the categories of
op_exclusions.txt, against what this build runs (`bench_op_coverage --known`).

    KILN_BUILD_DIR=build .venv-oracle/bin/python tests/tf/op_coverage.py [--write docs/op-coverage.md]

Prints the figures (ops covered of the target, by area) and, with --write, the table by area.
test_op_coverage.py runs it in the test command and fails when the figure falls below
op_coverage_floor.txt (raise the floor as ops land).
"""
import argparse
import collections
import os
import re
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import oracle  # noqa: E402

EXCLUSIONS = os.path.join(HERE, "op_exclusions.txt")
FLOOR = os.path.join(HERE, "op_coverage_floor.txt")

# Areas of the table: the first pattern an op's name matches (searched anywhere in the name).
AREAS = [
    ("parsing and serialization", r"^Parse|^Decode|^Encode|^Serialize|^Deserialize|Proto"),
    ("strings and text", r"String|^Regex|Unicode|^Substr|^AsString|^ReduceJoin|^StaticRegex|"
                         r"^Base64|Fingerprint|^Ngram|^StringNGrams"),
    ("images", r"Image|^Resize|^Crop|Jpeg|Png|Gif|Bmp|^Adjust|^Hsv|^Rgb|^NonMaxSuppression|"
               r"^ExtractGlimpse|BoundingBox|^SampleDistortedBoundingBox|^DrawBoundingBoxes"),
    ("linear algebra", r"^Matrix|^Cholesky|^Qr$|^Svd$|^SelfAdjoint|^Lu$|^LogMatrix|^Eig$|"
                       r"^Tridiagonal|^BandedTriangular|^BatchMatrix|^BatchCholesky|^BatchSvd|"
                       r"^BatchSelfAdjoint"),
    ("signal (FFT)", r"FFT"),
    ("random", r"Random|^Multinomial|^Stateless|^TruncatedNormal|^Parameterized|^RngSkip|"
               r"^RngReadAndSkip|CandidateSampler|^AllCandidate"),
    ("quantization", r"Quantize|Quantized|FakeQuant|^Requantize|^Dequantize"),
    ("sparse", r"Sparse|^SerializeSparse|^AddManySparse|^TakeManySparse"),
    ("ragged", r"Ragged"),
    ("control flow", r"^If$|^While$|^Case$|^Stateless(If|While|Case)$|^Switch$|^Merge$|^Enter$|"
                     r"^Exit$|^NextIteration$|^LoopCond$|^ControlTrigger$|^For$|^RemoteCall$|"
                     r"PartitionedCall$|^SymbolicGradient$"),
    ("tensor lists and arrays", r"^TensorList|^TensorArray|^EmptyTensorList"),
    ("lookup tables", r"Table|^LookupTable"),
    ("variables and resources", r"Variable|^VarHandle|^VarIsInitialized|^DestroyResource|"
                                r"^ResourceGather|^ResourceScatter|^ResourceApply|^Assign"),
    ("checkpoints and I/O", r"^RestoreV2$|^SaveV2$|^MergeV2Checkpoints|^ReadFile$|^IO|Checkpoint"),
    ("neural network", r"^Conv|Pool|^Relu|^Elu|^Selu|^Softmax|^LogSoftmax|^BiasAdd|^FusedBatch|"
                       r"^BatchNorm|^LRN|^Dilation|^Erosion|^Depthwise|^CTC|^InTopK|^TopK|^L2Loss|"
                       r"Softplus|Softsign|^LeakyRelu|^CudnnRNN|^BlockLSTM|^GRUBlock|^LSTMBlock|"
                       r"CrossEntropy|^NthElement|^DataFormat"),
    ("math", r""),
]


def read_exclusions(path=EXCLUSIONS):
    """[(category, reason, [compiled patterns])] from op_exclusions.txt."""
    cats = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("## "):
                name, _, reason = line[3:].partition(":")
                cats.append((name.strip(), reason.strip(), []))
            elif line.strip() and not line.startswith("#"):
                if not cats:
                    raise ValueError(f"{path}: pattern {line!r} before any category")
                cats[-1][2].append(re.compile(line.strip()))
    return cats


# Besides the patterns: ops whose OpDef carries a deprecation (TF refuses them in graphs of
# GraphDef versions after it), which TF 2 graphs do not hold.
DEPRECATED = ("deprecated", "ops whose OpDef is deprecated (OpDef.deprecation): TensorFlow "
                            "refuses them in graphs of newer GraphDef versions, so TF 2 graphs do "
                            "not hold them")


# And the ops of TensorFlow's own unit tests (tensorflow/python/framework/test_ops: KernelLabel,
# SleepOp, ResourceCreateOp...), whose kernels the pip package registers; no model holds them.
# Two more live outside that module: ConstructionFails (a kernel whose constructor always fails,
# for TF's executor tests) and Fact (tensorflow/core/user_ops/fact.cc, the example user op).
TEST_ONLY = ("test-only", "ops TensorFlow's own unit tests and examples define "
                          "(tensorflow/python/framework/test_ops, ConstructionFails, the example "
                          "user op Fact); the pip package registers their kernels, but they "
                          "compute nothing a model uses")
TEST_KERNEL_OPS = ("ConstructionFails", "Fact")


def excluded_by(op, cats, deprecated=(), test_only=()):
    for name, _, patterns in cats:
        if any(p.search(op) for p in patterns):
            return name
    if op in deprecated:
        return DEPRECATED[0]
    return TEST_ONLY[0] if op in test_only else None


def test_only_ops(names):
    """The ops of names that TF's test-op library defines: the module's own raw-op wrappers (not
    what it imports, such as typing.Any)."""
    from tensorflow.python.framework import test_ops
    return {op for op in names
            if getattr(getattr(test_ops, op, None), "__module__", None) == test_ops.__name__
            or op in TEST_KERNEL_OPS}


def deprecated_ops(names):
    from tensorflow.python.framework import op_def_registry
    out = set()
    for op in names:
        d = op_def_registry.get(op)
        if d is not None and d.HasField("deprecation") and d.deprecation.version > 0:
            out.add(op)
    return out


def tf_cpu_ops():
    """{op: sorted dtype names of its primary type constraint (T, dtype, or the first)}."""
    from tensorflow.python.framework import dtypes, kernels
    ops = collections.defaultdict(set)
    for k in kernels.get_all_registered_kernels().kernel:
        if k.device_type != "CPU":
            continue
        ops[k.op]
        cons = {c.name: c for c in k.constraint}
        c = cons.get("T") or cons.get("dtype") or (k.constraint[0] if k.constraint else None)
        if c is not None:
            for t in c.allowed_values.list.type:
                ops[k.op].add(dtypes.as_dtype(t).name)
    return {op: sorted(ts) for op, ts in ops.items()}


def kiln_known():
    out = subprocess.run([str(oracle.BUILD / "bench" / "bench_op_coverage"), "--known"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def area_of(op):
    return next(name for name, pattern in AREAS if re.search(pattern, op))


def coverage():
    """The figures and the rows of the table."""
    cats = read_exclusions()
    tf_ops = tf_cpu_ops()
    known = kiln_known()
    deprecated = deprecated_ops(tf_ops)
    test_only = test_only_ops(tf_ops)
    rows, excluded = [], collections.Counter()
    for op in sorted(tf_ops):
        cat = excluded_by(op, cats, deprecated, test_only)
        if cat:
            excluded[cat] += 1
            continue
        rows.append((area_of(op), op, op in known, tf_ops[op]))
    covered = sum(1 for r in rows if r[2])
    return {"registry": len(tf_ops), "excluded": dict(excluded), "target": len(rows),
            "covered": covered, "percent": 100.0 * covered / max(1, len(rows)),
            "rows": rows, "categories": [(n, r) for n, r, _ in cats] + [DEPRECATED, TEST_ONLY]}


def markdown(c):
    import tensorflow as tf
    by_area = collections.defaultdict(list)
    for area, op, ok, types in c["rows"]:
        by_area[area].append((op, ok, types))
    lines = [
        "# Op coverage: TensorFlow's CPU op registry as the target",
        "",
        f"Generated by `tests/tf/op_coverage.py --write docs/op-coverage.md` from TensorFlow "
        f"{tf.__version__}'s registered CPU kernels and this build's op table "
        "(`bench_op_coverage --known`). The test command checks the figure against "
        "`tests/tf/op_coverage_floor.txt`.",
        "",
        f"**{c['covered']} of {c['target']} target ops covered ({c['percent']:.1f} %)**; "
        f"the registry has {c['registry']} ops with a CPU kernel, "
        f"{sum(c['excluded'].values())} excluded by category:",
        "",
    ]
    for name, reason in c["categories"]:
        lines.append(f"- *{name}* ({c['excluded'].get(name, 0)} ops): {reason}")
    lines += ["", "| area | covered | target |", "|---|---|---|"]
    for area, _ in AREAS:
        ops = by_area.get(area, [])
        if ops:
            lines.append(f"| {area} | {sum(1 for _, ok, _ in ops if ok)} | {len(ops)} |")
    for area, _ in AREAS:
        ops = by_area.get(area, [])
        if not ops:
            continue
        lines += ["", f"## {area}", "", "| op | kiln | TF CPU dtypes |", "|---|---|---|"]
        for op, ok, types in ops:
            lines.append(f"| {op} | {'yes' if ok else '—'} | {', '.join(types)} |")
    return "\n".join(lines) + "\n"


def floor():
    with open(FLOOR) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                return float(line.split()[-1])
    raise ValueError(f"{FLOOR}: no figure")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", help="write the table (markdown) to this file")
    args = ap.parse_args()
    c = coverage()
    print(f"op coverage: {c['covered']} of {c['target']} target ops ({c['percent']:.1f} %); "
          f"registry {c['registry']}, excluded {sum(c['excluded'].values())}; floor {floor()} %")
    if args.write:
        with open(args.write, "w") as f:
            f.write(markdown(c))
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
