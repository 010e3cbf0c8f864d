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


def opdef_allows(op, attr, names):
    """The dtype names of `names` that the OpDef of `op` allows for `attr`. A dtype the OpDef does
    not allow is one no graph holds: TF refuses the node before a kernel sees it (Acos registers
    int kernels that its OpDef never lets run)."""
    from tensorflow.python.framework import dtypes, op_def_registry
    d = op_def_registry.get(op)
    allowed = [a for a in d.attr if a.name == attr and a.allowed_values.list.type] if d else []
    if not allowed:
        return set(names)
    return set(names) & {dtypes.as_dtype(t).name for t in allowed[0].allowed_values.list.type}


def tf_cpu_ops():
    """{op: sorted dtype names of its primary type constraint (T, dtype, or the first)}, as the
    op's OpDef allows them."""
    from tensorflow.python.framework import dtypes, kernels
    ops = collections.defaultdict(set)
    attrs = {}
    for k in kernels.get_all_registered_kernels().kernel:
        if k.device_type != "CPU":
            continue
        ops[k.op]
        cons = {c.name: c for c in k.constraint}
        c = cons.get("T") or cons.get("dtype") or (k.constraint[0] if k.constraint else None)
        if c is not None:
            attrs[k.op] = c.name
            for t in c.allowed_values.list.type:
                ops[k.op].add(dtypes.as_dtype(t).name)
    return {op: sorted(opdef_allows(op, attrs[op], ts) if op in attrs else ts)
            for op, ts in ops.items()}


def tf_dtype_bindings(ops):
    """{op: (attr, [dtype names], [input binding])} for each of ops with a type constraint: the
    primary constraint's attr and dtypes (as tf_cpu_ops picks it), and for each input arg of the
    op's OpDef what its dtype is bound to: "=" the primary attr, "-" anything else, and "*N" after
    it when the arg is a list whose length the int attr N gives."""
    from tensorflow.python.framework import dtypes, kernels, op_def_registry
    chosen = collections.defaultdict(collections.Counter)
    types = collections.defaultdict(set)
    for k in kernels.get_all_registered_kernels().kernel:
        if k.device_type != "CPU" or k.op not in ops:
            continue
        cons = {c.name: c for c in k.constraint}
        c = cons.get("T") or cons.get("dtype") or (k.constraint[0] if k.constraint else None)
        if c is None:
            continue
        chosen[k.op][c.name] += 1
        types[(k.op, c.name)].update(dtypes.as_dtype(t).name for t in c.allowed_values.list.type)
    out = {}
    for op, counts in chosen.items():
        attr = counts.most_common(1)[0][0]
        d = op_def_registry.get(op)
        if d is None:
            continue
        args = []
        for a in d.input_arg:
            b = "=" if a.type_attr == attr else "-"
            if a.number_attr:
                b += "*" + a.number_attr
            elif a.type_list_attr:
                b += "#" + a.type_list_attr
            args.append(b)
        out[op] = (attr, sorted(opdef_allows(op, attr, types[(op, attr)])), args)
    return out


def write_dtypes(path, c):
    import tensorflow as tf
    ops = {op for _, op, _, _ in c["rows"]}
    lines = [
        f"# TensorFlow {tf.__version__}'s CPU kernels: for each target op (tests/tf/op_coverage.py)",
        "# with a type constraint, the constraint's attr, the dtypes its kernels take, and what",
        "# each input arg's dtype is bound to (= the attr, - another; *N a list of N, #L a type",
        "# list). Written by `tests/tf/op_coverage.py --write-dtypes tests/ops/tf_op_dtypes.txt`;",
        "# the op tester's dtype sweep (tests/ops/dtype_sweep.cc) reads it.",
    ]
    for op, (attr, types, args) in sorted(tf_dtype_bindings(ops).items()):
        lines.append(f"{op} {attr} {','.join(types)} {','.join(args) or '.'}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def kiln_known():
    out = subprocess.run([str(oracle.BUILD / "bench" / "bench_op_coverage"), "--known"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


TAKEN = ("case", "ran", "checked")


def kiln_dtypes():
    """{(op, dtype): status} from the op tester's dtype sweep (tests/ops/dtype_sweep.cc): "case",
    "ran" or "checked" when this build takes the dtype; "refused", "untested" otherwise."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "dtypes.txt")
        subprocess.run([str(oracle.BUILD / "tests" / "kiln_op_tests"),
                        "-tc=op tester: the dtypes*"], env=dict(os.environ,
                                                                 KILN_DTYPE_REPORT=report),
                       capture_output=True, text=True, check=True)
        with open(report) as f:
            return {(line.split()[0], line.split()[1]): line.split()[2] for line in f}


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
    dts = kiln_dtypes()
    taken = sum(1 for status in dts.values() if status in TAKEN)
    return {"registry": len(tf_ops), "excluded": dict(excluded), "target": len(rows),
            "covered": covered, "percent": 100.0 * covered / max(1, len(rows)),
            "rows": rows, "categories": [(n, r) for n, r, _ in cats] + [DEPRECATED, TEST_ONLY],
            "dtypes": dts, "dtype_pairs": len(dts), "dtypes_taken": taken,
            "dtype_percent": 100.0 * taken / max(1, len(dts))}


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
    lines += [
        "",
        f"**Dtypes: {c['dtypes_taken']} of {c['dtype_pairs']} (op, dtype) pairs taken "
        f"({c['dtype_percent']:.1f} %)**: for each covered op with a type constraint, the dtypes "
        "TF's CPU kernels take and the op's OpDef allows (`tests/ops/tf_op_dtypes.txt`), as the "
        "op tester's dtype sweep "
        "(`tests/ops/dtype_sweep.cc`) finds them: an op-tester case of the dtype, or a case "
        "converted to it that prepares and runs (float32 cases converted to half precision and "
        "float64 are checked against float32; resource and variant runs get handles to the "
        "case's values and are checked against the case through them). The last column lists "
        "the dtypes not taken: refused, or not probed (kiln has no such dtype: int4, int2, "
        "float4).",
    ]
    lines += ["", "| area | covered | target |", "|---|---|---|"]
    for area, _ in AREAS:
        ops = by_area.get(area, [])
        if ops:
            lines.append(f"| {area} | {sum(1 for _, ok, _ in ops if ok)} | {len(ops)} |")
    for area, _ in AREAS:
        ops = by_area.get(area, [])
        if not ops:
            continue
        lines += ["", f"## {area}", "",
                  "| op | kiln | TF CPU dtypes | dtypes not taken |", "|---|---|---|---|"]
        for op, ok, types in ops:
            missing = [t for t in types if c["dtypes"].get((op, t), "case") not in TAKEN]
            lines.append(f"| {op} | {'yes' if ok else '—'} | {', '.join(types)} | "
                         f"{', '.join(missing) if ok else ''} |")
    return "\n".join(lines) + "\n"


def floor(key="ops_covered_percent"):
    with open(FLOOR) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 2 and fields[0] == key:
                return float(fields[1])
    raise ValueError(f"{FLOOR}: no {key}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", help="write the table (markdown) to this file")
    ap.add_argument("--write-dtypes", help="write the dtype table of the op tester's sweep")
    args = ap.parse_args()
    c = coverage()
    print(f"op coverage: {c['covered']} of {c['target']} target ops ({c['percent']:.1f} %); "
          f"registry {c['registry']}, excluded {sum(c['excluded'].values())}; floor {floor()} %")
    print(f"dtype coverage: {c['dtypes_taken']} of {c['dtype_pairs']} (op, dtype) pairs "
          f"({c['dtype_percent']:.1f} %); floor {floor('dtypes_covered_percent')} %")
    if args.write:
        with open(args.write, "w") as f:
            f.write(markdown(c))
        print(f"wrote {args.write}")
    if args.write_dtypes:
        write_dtypes(args.write_dtypes, c)
        print(f"wrote {args.write_dtypes}")


if __name__ == "__main__":
    main()
