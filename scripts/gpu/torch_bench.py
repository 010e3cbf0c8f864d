"""PyTorch on the same GPU, for scripts/gpu-check.sh: the models of make_models.py built the
same way in PyTorch (random weights: timings do not depend on them), timed eager and, where
asked, with torch.compile. float32 without TF32, as kiln computes float32. One JSON line per
row: {"engine": "torch-eager"|"torch-compile", "model", "batch", "p50_us", "mean_us"}.

usage: torch_bench.py MODEL:BATCH [MODEL:BATCH ...] [--compile]
"""
import json
import sys
import time

import torch
from torch import nn

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = False


def mlp():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10), nn.Softmax(-1)), (784,)


def cnn():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        nn.ZeroPad2d((0, 1, 0, 1)), nn.Conv2d(16, 32, 3, stride=2), nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1, groups=32), nn.ReLU6(), nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 1), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(128, 10),
        nn.Softmax(-1)), (3, 32, 32)


def mobilenet_v2():
    import torchvision
    return torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=10), (3, 96, 96)


def encoder():
    layer = nn.TransformerEncoderLayer(64, 4, 256, dropout=0.0, activation="gelu",
                                       batch_first=True)
    return nn.Sequential(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)), (32, 64)


MODELS = {"keras_mlp": mlp, "keras_cnn": cnn, "mobilenet_v2": mobilenet_v2, "encoder": encoder}


def time_it(fn, x, runs):
    with torch.inference_mode():
        for _ in range(5):
            fn(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn(x)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return times[len(times) // 2], sum(times) / len(times)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    compile_too = "--compile" in sys.argv
    for spec in args:
        name, batch = spec.split(":")
        model, shape = MODELS[name]()
        model = model.cuda().eval()
        x = torch.randn((int(batch),) + shape, device="cuda")
        engines = [("torch-eager", model)]
        if compile_too:
            engines.append(("torch-compile", torch.compile(model)))
        for engine, fn in engines:
            p50, mean = time_it(fn, x, 50)
            print(json.dumps({"engine": engine, "model": name, "batch": int(batch),
                              "p50_us": round(p50, 1), "mean_us": round(mean, 1)}), flush=True)


if __name__ == "__main__":
    main()
