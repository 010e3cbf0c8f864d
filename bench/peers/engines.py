"""The three engines of the peer benchmark, each measured in processes of its own so that
thread settings and memory figures never mix.

- kiln: `savedmodel-cli bench --json` (one process per round; it reports load, first call,
  per-call percentiles and peak RSS itself).
- TensorFlow and ONNX Runtime: a worker process per (engine, thread setting), started as
  `python engines.py --engine tf|ort ...`, which imports its engine, then answers JSON-line
  commands on stdin: {"op": "load"} (load + first call), {"op": "run", "runs", "warmup"}
  (per-call times), {"op": "quit"}. TensorFlow fixes its thread pools at start, hence one
  process per thread setting.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time


def _rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def _peak_rss_kb():
    """This process's peak RSS since its exec: VmHWM. (getrusage's ru_maxrss would carry over
    the harness's high-water mark, which a forked child inherits.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class TfEngine:
    """tf.saved_model.load + the concrete signature function (graph mode)."""

    def __init__(self, threads):
        import tensorflow as tf
        # 1 thread: intra 1 and inter 1; all cores: N and N (TensorFlow's default on N cores).
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
        self.tf = tf

    def load(self, model, signature, feed):
        self.loaded = self.tf.saved_model.load(model)
        self.fn = self.loaded.signatures[signature]
        self.feed = {k: self.tf.constant(v) for k, v in feed.items()}

    def call(self):
        # Eager calls of a concrete function run synchronously on CPU: the outputs are computed
        # when it returns.
        return self.fn(**self.feed)


class OrtEngine:
    """InferenceSession with intra_op_num_threads N, sequential execution, all graph
    optimisations."""

    def __init__(self, threads):
        import onnxruntime as ort
        self.ort = ort
        self.threads = threads

    def load(self, model, signature, feed):
        so = self.ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.execution_mode = self.ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = self.ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = self.ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        names = [i.name for i in self.session.get_inputs()]
        # tf2onnx names the inputs after the signature's keys (sometimes with ":0").
        self.feed = {n: feed[n.split(":")[0]] for n in names}

    def call(self):
        return self.session.run(None, self.feed)


def worker(args):
    """The worker loop: JSON commands on stdin, JSON answers on stdout."""
    import numpy as np
    engine = (TfEngine if args.engine == "tf" else OrtEngine)(args.threads)
    feed = {k: np.load(v) for k, v in json.loads(args.inputs).items()}
    print(json.dumps({"ready": True, "rss_kb": _rss_kb()}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            if cmd["op"] == "quit":
                return
            if cmd["op"] == "load":
                t0 = time.perf_counter()
                engine.load(args.model, args.signature, feed)
                t1 = time.perf_counter()
                engine.call()
                t2 = time.perf_counter()
                answer = {"load_ms": (t1 - t0) * 1e3, "first_call_ms": (t2 - t1) * 1e3,
                          "rss_after_load_kb": _rss_kb()}
            elif cmd["op"] == "run":
                for _ in range(cmd["warmup"]):
                    engine.call()
                times = []
                for _ in range(cmd["runs"]):
                    t0 = time.perf_counter()
                    engine.call()
                    times.append((time.perf_counter() - t0) * 1e6)
                answer = {"times_us": times}
            else:
                answer = {"error": f"unknown op {cmd['op']!r}"}
        except Exception as e:  # noqa: BLE001 - reported to the harness as this engine's n/a
            answer = {"error": f"{type(e).__name__}: {e}"}
        answer["peak_rss_kb"] = _peak_rss_kb()
        print(json.dumps(answer), flush=True)


class PeerWorker:
    """The harness's side of a worker process."""

    def __init__(self, engine, threads, model, signature, inputs):
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3",
               # numpy's BLAS and OpenMP stay out of the engine's way.
               "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1"}
        self.name = f"{engine}/{threads}"
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--engine", engine, "--threads",
             str(threads), "--model", str(model), "--signature", signature, "--inputs",
             json.dumps({k: str(v) for k, v in inputs.items()})],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env)
        self.ready = None

    def _answer(self):
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read()[-2000:]
            raise RuntimeError(f"{self.name} worker exited {self.proc.wait()}: {err}")
        return json.loads(line)

    def request(self, **cmd):
        if self.ready is None:
            self.ready = self._answer()
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        answer = self._answer()
        if "error" in answer:
            raise RuntimeError(f"{self.name}: {answer['error']}")
        return answer

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


# The keys `savedmodel-cli bench --json` prints (docs/cli.md); the harness needs all of them.
KILN_BENCH_KEYS = {"dir", "signature", "threads", "runs", "warmup", "bundle_bytes", "load_ms",
                   "first_call_ms", "p50_us", "p90_us", "p99_us", "mean_us", "min_us",
                   "calls_per_s", "examples_per_s", "peak_rss_kb", "rss_after_load_kb",
                   "inputs"}


def kiln_bench(cli, model, signature, inputs, threads, runs, warmup):
    """One `savedmodel-cli bench` process; its JSON object."""
    arg = ";".join(f"{k}={v}" for k, v in sorted(inputs.items()))
    cmd = [str(cli), "bench", "--dir", str(model), "--tag_set", "serve", "--signature_def",
           signature, "--threads", str(threads), "--runs", str(runs), "--warmup", str(warmup),
           "--json"]
    if arg:
        cmd += ["--inputs", arg]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if "error:" in line]
        why = (errors or lines or [f"exit status {proc.returncode}"])[0]
        raise RuntimeError(f"savedmodel-cli bench exited {proc.returncode}: {why}")
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"savedmodel-cli bench --json printed no JSON object: {e}") from e
    missing = KILN_BENCH_KEYS - set(out)
    if missing:
        raise RuntimeError(f"savedmodel-cli bench --json lacks keys {sorted(missing)}")
    return out


def best_sgemm_gflops(threads, n=2048, reps=3):
    """The machine's best float32 GEMM: numpy's BLAS in this venv at n x n, in a subprocess with
    the BLAS thread count fixed before numpy loads."""
    code = f"""
import time, numpy as np
a = np.random.default_rng(0).standard_normal(({n}, {n})).astype(np.float32)
b = np.random.default_rng(1).standard_normal(({n}, {n})).astype(np.float32)
a @ b
best = min((lambda t0: (a @ b, time.perf_counter() - t0)[1])(time.perf_counter())
           for _ in range({reps}))
print(2 * {n} ** 3 / best / 1e9)
"""
    env = {**os.environ}
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-1000:])
    return float(proc.stdout.strip())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="peer benchmark worker (started by run_peers.py)")
    ap.add_argument("--engine", choices=["tf", "ort"], required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--signature", required=True)
    ap.add_argument("--inputs", required=True, help="JSON {key: .npy path}")
    worker(ap.parse_args())
