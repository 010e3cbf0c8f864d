"""bench/peers (issue 8's peer benchmark): the goal checks, the table and the docs rewrite,
on hand-made results (what the measuring part returns). The harness itself runs in
test_peer_bench_smoke.py."""
import sys

import oracle

sys.path.insert(0, str(oracle.ROOT / "bench" / "peers"))

import report  # noqa: E402
import workloads  # noqa: E402

WL = {w.name: w for w in workloads.WORKLOADS}


def _res(kiln=None, tf=None, ort=None):
    def fig(p50):
        if p50 is None:
            return {"error": "not measured"}
        return {"p50_us": p50, "p90_us": p50 * 1.1, "load_ms": 2.0, "first_call_ms": 1.0,
                "peak_rss_kb": 20480}
    return {"kiln": fig(kiln), "tf": fig(tf), "ort": fig(ort)}


def test_ratio_is_peer_time_over_ours():
    assert report.ratio(_res(kiln=2.0, ort=3.0), "ort") == 1.5
    assert report.ratio(_res(kiln=None, ort=3.0), "ort") is None
    assert report.ratio(_res(kiln=2.0, ort=None), "ort") is None


def test_goal_checks():
    res = _res(kiln=0.5, tf=0.625, ort=0.75)  # exact in binary: ratios 1.25 and 1.5
    assert report.check_goal("latency_1us", WL["scalar_add"], {}, res, None) == ("0.50 us", True)
    assert report.check_goal("ort_1.5", WL["scalar_add"], {}, res, None) == ("1.50x", True)
    assert report.check_goal("tf_1.2", WL["cnn_b1"], {}, res, None) == ("1.25x", True)
    assert report.check_goal("ort_1.5", WL["scalar_add"], {}, _res(kiln=1.0, ort=1.4), None)[1] \
        is False
    # n/a when our figure is missing: never counted as met.
    assert report.check_goal("ort_1.2", WL["mlp_b1"], {}, _res(ort=3.0), None) == (None, None)
    # 1 MFLOP per example, batch 256, 1 ms per call: 256 GFLOP/s, 85 % of 300 is 255.
    meta = {"flops_per_example": 1e6}
    measured, met = report.check_goal("sgemm_85", WL["mlp_b256"], meta, _res(kiln=1000.0), 300.0)
    assert measured == "256.0 of 300.0 GFLOP/s" and met is True
    measured, met = report.check_goal("cnn_load_10ms", WL["cnn_b1"], {}, _res(kiln=5.0), None)
    assert measured == "3.0 ms" and met is True
    meta = {"weights_bytes": 10 * 2**20, "activation_bytes_per_example": 2**20}
    measured, met = report.check_goal("cnn_rss", WL["cnn_b1"], meta, _res(kiln=5.0), None)
    assert measured == "20.0 MB of 19.0 MB" and met is False


def test_every_workload_goal_is_known():
    for w in workloads.WORKLOADS:
        assert set(w.goals) <= set(report.GOALS), w.name
        assert w.bundle in workloads.BUNDLES, w.name


def _run():
    return {"rows": [{"name": "mlp_b1", "results": {"1": _res(kiln=10.0, tf=30.0, ort=None)}}],
            "goals": [{"goal": "ort_1.2", "workload": "mlp_b1", "threads": "1",
                       "measured": None, "met": None}],
            "sgemm": {"1": 50.0}, "sgemm_n": 2048}


def test_markdown_table_marks_missing_figures_na():
    md = report.markdown(_run())
    row = [line for line in md.splitlines() if line.startswith("| mlp_b1 |")]
    assert row == ["| mlp_b1 | 1 | 10.00 us (11.00 us) | 30.00 us (33.00 us) | n/a | 3.00x | n/a "
                   "| 3.0 / 3.0 / n/a | 20 / 20 / n/a |"]
    assert "| ONNX Runtime / kiln >= 1.2 | mlp_b1 | 1 | n/a | n/a |" in md
    assert "- mlp_b1, ONNX Runtime (1 thread(s)): not measured" in md
    assert "50.0 GFLOP/s at 1 thread(s)" in md


def test_markdown_names_the_isa_kiln_ran():
    run = {**_run(), "machine": {"cpu": "Some CPU", "cores": 2,
                                 "kiln_isa": "avx2 (capped by KILN_MAX_CPU_ISA=avx2; the CPU "
                                             "has avx512)"}}
    assert report.markdown(run).startswith(
        "kiln's kernels ran: avx2 (capped by KILN_MAX_CPU_ISA=avx2; the CPU has avx512)\n\n|")
    assert not report.markdown(_run()).startswith("kiln's kernels")


def test_update_docs_rewrites_only_its_section(tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Server\n\nserver figures\n")
    report.update_docs(str(doc), _run(), "first table")
    report.update_docs(str(doc), _run(), "second table")
    text = doc.read_text()
    assert text.startswith("# Benchmarks\n\n## Server\n\nserver figures\n")
    assert "second table" in text and "first table" not in text
    assert text.count(report.BEGIN) == 1 and text.count(report.END) == 1


def test_docs_section_names_the_command_machine_and_workloads():
    import run_peers
    run = {**_run(), "date": "2026-01-02", "seconds": 12.5, "command": "bench/peers/run_peers.py",
           "machine": {"cpu": "Some CPU", "cores": 2, "tensorflow-cpu": "2.21.0",
                       "onnxruntime": "1.24.4", "numpy": "2.4.6"}}
    run["rows"][0]["note"] = "the MLP at batch 1"
    text = run_peers.docs_section(run)
    assert text.startswith("Measured 2026-01-02 with `bench/peers/run_peers.py` (12.5 s) on "
                           "Some CPU, 2 cores; TensorFlow 2.21.0, ONNX Runtime 1.24.4, numpy "
                           "2.4.6.")
    assert "- `mlp_b1`: the MLP at batch 1\n" in text and report.markdown(run) in text
