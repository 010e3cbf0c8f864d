"""Issue 21's coverage figure: the share of TensorFlow's CPU op registry (less the excluded
categories of op_exclusions.txt) this build runs must not fall below op_coverage_floor.txt,
and every exclusion category must have a reason and match something."""
import os
import tempfile

import op_coverage


def test_op_coverage_does_not_fall():
    c = op_coverage.coverage()
    floor = op_coverage.floor()
    assert c["percent"] >= floor, (
        f"op coverage fell: {c['covered']} of {c['target']} ({c['percent']:.1f} %), floor "
        f"{floor} %; missing: {[op for _, op, ok, _ in c['rows'] if not ok][:40]}")


def test_exclusions_are_categories_with_reasons():
    cats = op_coverage.read_exclusions()
    c = op_coverage.coverage()
    for name, reason, patterns in cats:
        assert reason, f"exclusion category {name!r} has no reason"
        assert patterns, f"exclusion category {name!r} has no patterns"
        assert c["excluded"].get(name, 0) > 0, f"exclusion category {name!r} excludes nothing"
    # The areas the issue names stay in the target.
    target = {op for _, op, _, _ in c["rows"]}
    for op in ("ParseExampleV2", "Cholesky", "Svd", "FakeQuantWithMinMaxVarsPerChannel",
               "StatelessRandomUniformV2", "RFFT", "Switch", "Merge", "EncodeProto",
               "DecodeProtoV2", "SparseTensorDenseMatMul", "RaggedGather"):
        assert op in target, f"{op} must be in the target, not excluded"


def test_dtype_coverage_does_not_fall():
    c = op_coverage.coverage()
    floor = op_coverage.floor("dtypes_covered_percent")
    assert c["dtype_percent"] >= floor, (
        f"dtype coverage fell: {c['dtypes_taken']} of {c['dtype_pairs']} "
        f"({c['dtype_percent']:.1f} %), floor {floor} %")


def test_dtype_table_is_current():
    # The op tester reads the checked-in table without TensorFlow; it must be what the oracle
    # registers (regenerate with op_coverage.py --write-dtypes tests/ops/tf_op_dtypes.txt).
    checked_in = os.path.join(op_coverage.HERE, "..", "ops", "tf_op_dtypes.txt")
    with tempfile.TemporaryDirectory() as tmp:
        fresh = os.path.join(tmp, "tf_op_dtypes.txt")
        op_coverage.write_dtypes(fresh, op_coverage.coverage())
        with open(fresh) as a, open(checked_in) as b:
            assert a.read() == b.read(), "tests/ops/tf_op_dtypes.txt is stale: regenerate it"
