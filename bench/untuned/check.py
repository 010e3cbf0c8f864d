"""Does kiln compute what TensorFlow computes on the models of bench/untuned/models.py?
  python bench/untuned/check.py [--all_batches] [names...]
Runs each built model's serving signature at its first batch (or every batch) with kiln (`savedmodel-cli run
--outdir`) and TensorFlow (TF_ENABLE_ONEDNN_OPTS=0), prints per output the largest difference
relative to the output's largest magnitude, and kiln's error where it refuses the model."""
import json, os, subprocess, sys, tempfile
from pathlib import Path
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("UNTUNED_CACHE", ROOT / "bench" / ".cache" / "untuned"))
CLI = Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build")) / "tools" / "savedmodel-cli"

def check(name, built, batch):
    import numpy as np, tensorflow as tf
    inputs = built["inputs"][batch]
    with tempfile.TemporaryDirectory() as out:
        arg = ";".join(f"{k}={v}" for k, v in sorted(inputs.items()))
        p = subprocess.run([str(CLI), "run", "--dir", built["model"], "--tag_set", "serve",
                            "--signature_def", "serving_default", "--inputs", arg, "--outdir", out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return {"model": name, "kiln_error": (p.stderr or p.stdout).strip()[-400:]}
        fn = tf.saved_model.load(built["model"]).signatures["serving_default"]
        want = fn(**{k: tf.constant(np.load(v)) for k, v in inputs.items()})
        res = {"model": name, "batch": int(batch)}
        for k, v in want.items():
            got = np.load(Path(out) / f"{k}.npy").astype(np.float64)
            w = v.numpy().astype(np.float64)
            if got.shape != w.shape:
                res[k] = f"shape {got.shape} != TF's {w.shape}"
                continue
            scale = max(np.abs(w).max(), 1e-30)
            res[k] = float(np.abs(got - w).max() / scale)
        return res

if __name__ == "__main__":
    built = json.loads((CACHE / "built.json").read_text())
    args = sys.argv[1:]
    every = "--all_batches" in args
    args = [a for a in args if a != "--all_batches"]
    for n in args or list(built):
        if "model" not in built.get(n, {}):
            print(json.dumps({"model": n, "build_error": built.get(n, {}).get("error")})); continue
        batches = sorted(built[n]["inputs"], key=int)
        for b in batches if every else batches[:1]:
            print(json.dumps(check(n, built[n], b)), flush=True)
