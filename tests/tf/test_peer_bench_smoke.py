"""The peer benchmark harness once on a tiny model (`run_peers.py --smoke`): every engine
(kiln's `savedmodel-cli bench`, TensorFlow, ONNX Runtime) gives figures. No timing asserts."""
import json
import sys

import oracle


def test_peer_bench_smoke_run_gives_every_engines_figures():
    proc = oracle.run([sys.executable, oracle.ROOT / "bench" / "peers" / "run_peers.py",
                       "--smoke", "--json"], timeout=600,
                      env={"KILN_BUILD_DIR": str(oracle.BUILD)})
    out = json.loads(proc.stdout)
    (row,) = out["rows"]
    assert list(row["results"]) == ["1"]
    for engine, fig in row["results"]["1"].items():
        assert "error" not in fig, f"{engine}: {fig['error']}"
        assert fig["p50_us"] > 0 and fig["p90_us"] >= fig["p50_us"], (engine, fig)
        assert fig["load_ms"] >= 0 and fig["first_call_ms"] >= 0 and fig["peak_rss_kb"] > 0
