"""Op coverage of the generated models: which generated models run on our runtime, and which ops
the rest need, ranked by how many models need each.

    KILN_BUILD_DIR=build .venv-oracle/bin/python tests/tf/coverage_report.py \
        [--models DIR] [--out FILE] [--sets keras_layers,applications,models]

--models: where the generated models live (default $KILN_MODELS_DIR, else
$KILN_BUILD_DIR/generated-models); a set that is missing or was written by an older generator is
generated there first (make_keras_layers.py, make_applications.py, make_deployed_models.py; the
tests reuse the same directory when KILN_MODELS_DIR points at it).

For every model: the ops of its saved_model.pb (every node of every meta graph's graph and of
every function in its library; a node whose op names a library function is a call, not an op),
the ops among them this build cannot run (`bench_op_coverage --known` lists the ones it can),
and whether each recorded signature runs through `savedmodel-cli run` with TensorFlow's outputs
(1e-4 relative, as the tests compare). Then the missing ops, ranked by the number of models that
need them, marked when the target list (../shared/spec/tf-ops-target.txt) does not have them.
"""
import argparse
import collections
import datetime
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import oracle  # noqa: E402
import recording  # noqa: E402

SETS = ["keras_layers", "applications", "models"]
OP_COVERAGE = oracle.BUILD / "bench" / "bench_op_coverage"
TARGET_LIST = Path(os.environ.get("KILN_OP_TARGET_LIST",
                                  oracle.ROOT.parent / "shared" / "spec" / "tf-ops-target.txt"))


def _generator(set_name):
    if set_name == "keras_layers":
        import make_keras_layers as g
        return g, list(g.CASES)
    if set_name == "applications":
        import make_applications as g
        return g, list(g.APPS)  # the heavy ones too: the op engineers need every op
    import make_deployed_models as g
    return g, list(g.MODELS)


def _node_name(tensor):
    return tensor.lstrip("^").split(":")[0]


def _function_refs(node):
    """Library functions a node calls: by op name or through func / list(func) attrs (the `f` of
    calls, If/While branches and bodies)."""
    refs = [node.op]
    for a in node.attr.values():
        if a.HasField("func"):
            refs.append(a.func.name)
        refs += [f.name for f in a.list.func]
    return refs


def bundle_ops(bundle):
    """(needed, library_only): the ops of what our loader prepares and runs, and the ops that
    appear only elsewhere in saved_model.pb (the checkpoint save/restore functions, unused
    functions), which a load never runs.

    Needed: the main-graph nodes the signatures' outputs depend on (TF1 bundles also the saver's
    restore op and the init op), and every function reachable from those nodes, from the
    signatures' functions and from the object graph's functions (but not from the save/restore
    functions of its saveable objects), through calls, If/While branches and bodies."""
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    sm.ParseFromString((Path(bundle) / "saved_model.pb").read_bytes())
    needed, every = set(), set()
    for mg in sm.meta_graphs:
        library = {f.signature.name: f for f in mg.graph_def.library.function}
        nodes = {n.name: n for n in mg.graph_def.node}
        for f in library.values():
            every |= {n.op for n in f.node_def if n.op not in library}
        every |= {n.op for n in nodes.values() if n.op not in library}

        # Main-graph nodes the loader runs: backwards from the signature tensors (and, for TF1,
        # the restore and init ops).
        start = [t.name for sd in mg.signature_def.values()
                 for t in list(sd.outputs.values()) + list(sd.inputs.values())]
        og = mg.object_graph_def if mg.HasField("object_graph_def") else None
        if og is None or not og.nodes:
            start.append(mg.saver_def.restore_op_name)
            for key in ("saved_model_main_op", "legacy_init_op"):
                if key in mg.collection_def:
                    start += list(mg.collection_def[key].node_list.value)
        seen, stack = set(), [_node_name(t) for t in start if t]
        functions = []
        while stack:
            name = stack.pop()
            if name in seen or name not in nodes:
                continue
            seen.add(name)
            stack += [_node_name(i) for i in nodes[name].input]
            functions += [f for f in _function_refs(nodes[name]) if f in library]
        needed |= {nodes[n].op for n in seen if nodes[n].op not in library}

        # Functions of the object graph, without the saveables' save/restore functions.
        if og is not None:
            saver_fns = {i for obj in og.nodes for s in obj.saveable_objects.values()
                         for i in (s.save_function, s.restore_function)}
            for i, obj in enumerate(og.nodes):
                if i in saver_fns:
                    continue
                if obj.HasField("function"):
                    functions += list(obj.function.concrete_functions)
                elif obj.HasField("bare_concrete_function"):
                    functions.append(obj.bare_concrete_function.concrete_function_name)
        done = set()
        while functions:
            fname = functions.pop()
            if fname in done or fname not in library:
                continue
            done.add(fname)
            for n in library[fname].node_def:
                refs = [f for f in _function_refs(n) if f in library]
                functions += refs
                if n.op not in library:
                    needed.add(n.op)
    return needed, every - needed


def known_ops():
    proc = oracle.run([OP_COVERAGE, "--known"])
    return set(proc.stdout.split())


def target_ops():
    return {line.strip() for line in TARGET_LIST.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def run_model(root, entry, tmp):
    """'pass', or why not (the first line of our tool's error, or the outputs that differ)."""
    if entry["error"]:
        return "TensorFlow could not write it: " + entry["error"].strip().splitlines()[-1]
    d, data = Path(root) / entry["dir"], Path(root) / entry["data"]
    for key, spec in entry["signatures"].items():
        inputs = {k: data / f for k, f in spec["inputs"].items()}
        theirs = {k: oracle.load_value(data / f) for k, f in spec["outputs"].items()}
        out = Path(tempfile.mkdtemp(dir=tmp))
        try:
            mine = oracle.kiln_run(d, key, inputs, out)
        except AssertionError as e:
            err = [line for line in str(e).splitlines() if "error:" in line]
            why = err[0].split("error: ", 1)[1] if err else str(e).splitlines()[0]
            return "fails: " + why.replace(str(d), d.name)
        try:
            oracle.assert_model_outputs(mine, theirs, f"signature {key}")
        except AssertionError as e:
            return "wrong outputs: " + " ".join(str(e).split())[:300]
    return "pass"


def report(models_root, sets, log=print):
    known, targets = known_ops(), target_ops()
    rows = []  # (set, model, status, ops, missing)
    library_only = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for set_name in sets:
            g, names = _generator(set_name)
            out = os.path.join(models_root, set_name)
            log(f"coverage_report: {set_name} in {out}")
            manifest = recording.load_or_make(out, g.make_all, g.__file__, names)
            for name in names:
                entry = manifest["models"][name]
                bundle = Path(out) / entry["dir"]
                ops, unused = (bundle_ops(bundle) if (bundle / "saved_model.pb").exists()
                               else (set(), set()))
                library_only.update(unused - known)
                rows.append((set_name, name, run_model(out, entry, tmp), ops, ops - known))

    lines = []
    w = lines.append
    passed = sum(1 for r in rows if r[2] == "pass")
    need = collections.defaultdict(list)
    for set_name, name, _, _, missing in rows:
        for op in missing:
            need[op].append(f"{set_name}/{name}")
    import keras
    import tensorflow as tf
    w(f"kiln op coverage of the generated models ({datetime.date.today()}, TensorFlow "
      f"{tf.__version__}, Keras {keras.__version__})")
    w(f"generated by: tests/tf/coverage_report.py --models {models_root}")
    w(f"this build runs {len(known)} ops (bench_op_coverage --known); the target list has "
      f"{len(targets)}, {len(targets & known)} of them covered")
    w("")
    w(f"models passing (every signature gives TensorFlow's outputs): {passed} of {len(rows)}")
    for set_name in sets:
        r = [x for x in rows if x[0] == set_name]
        w(f"  {set_name:14} {sum(1 for x in r if x[2] == 'pass'):3} of {len(r)}")
    unblocked = sum(1 for r in rows if r[2] != "pass" and not r[4])
    w(f"failing models that use no missing op (a kernel, loader or CLI bug): {unblocked}")
    w("")
    w(f"missing ops ({len(need)}), ranked by how many models need them "
      f"(* = not in the target list):")
    for op, users in sorted(need.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        mark = " " if op in targets else "*"
        shown = ", ".join(users[:6]) + (f", ... (+{len(users) - 6})" if len(users) > 6 else "")
        w(f"  {len(users):3} {mark} {op:34} {shown}")
    w("")
    w("ops this build lacks that appear in the bundles only outside what a load runs (the "
      "checkpoint save/restore functions, unused functions), not counted above:")
    w("  " + (", ".join(sorted(library_only)) or "none"))
    w("")
    w("per model: status; the ops it needs that this build lacks")
    for set_name, name, status, ops, missing in rows:
        w(f"  {set_name}/{name}: {status}")
        if missing:
            w(f"      missing ({len(missing)} of {len(ops)} ops): {', '.join(sorted(missing))}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=os.environ.get("KILN_MODELS_DIR",
                                                       str(oracle.BUILD / "generated-models")))
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--sets", default=",".join(SETS))
    args = ap.parse_args()
    for tool in (oracle.KILN_CLI, OP_COVERAGE):
        if not os.access(tool, os.X_OK):
            sys.exit(f"coverage_report: {tool} is not built (KILN_BUILD_DIR={oracle.BUILD})")
    text = report(args.models, [s for s in args.sets.split(",") if s],
                  log=lambda m: print(m, file=sys.stderr))
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
