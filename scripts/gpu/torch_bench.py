"""PyTorch on the same GPU, for scripts/gpu-check.sh: the models of make_models.py built the
same way in PyTorch (random weights: timings do not depend on them), timed eager and, where
asked, with torch.compile. float32 without TF32, as kiln computes float32; MODEL_fp16 runs the model in float16. One JSON line per
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
        nn.Conv2d(32, 32, 1), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(512, 10),
        nn.Softmax(-1)), (3, 32, 32)


def mobilenet_v2():
    import torchvision
    return torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=10), (3, 96, 96)


def encoder():
    layer = nn.TransformerEncoderLayer(64, 4, 256, dropout=0.0, activation="gelu",
                                       batch_first=True)
    return nn.Sequential(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)), (32, 64)


def resnet50():
    import torchvision
    return torchvision.models.resnet50(), (3, 224, 224)


class Pooled(nn.Module):
    """An encoder over (batch, seq, width), mean-pooled to a 10-way head (make_models.bert)."""

    def __init__(self, encoder, width):
        super().__init__()
        self.encoder, self.head = encoder, nn.Linear(width, 10)

    def forward(self, x):
        return self.head(self.encoder(x).mean(1))


def bert():
    layer = nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, activation="gelu",
                                       batch_first=True, layer_norm_eps=1e-12)
    return Pooled(nn.TransformerEncoder(layer, 12, enable_nested_tensor=False), 768), (128, 768)


MODELS = {"keras_mlp": mlp, "keras_cnn": cnn, "mobilenet_v2": mobilenet_v2, "encoder": encoder,
          "resnet50": resnet50, "bert": bert}


def time_it(fn, x, runs):
    with torch.inference_mode():
        for _ in range(5):
            fn(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            y = fn(x)
            if y.is_cuda:
                torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return times[len(times) // 2], sum(times) / len(times)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    compile_too = "--compile" in sys.argv
    for spec in args:
        name, batch = spec.split(":")
        half = name.endswith("_fp16")
        model, shape = MODELS[name.removesuffix("_fp16")]()
        model = model.cuda().eval()
        x = torch.randn((int(batch),) + shape, device="cuda")
        if half:
            model, x = model.half(), x.half()
        runs = 50 if int(batch) * x[0].numel() < (1 << 24) else 20
        if compile_too:
            engines = [("torch-compile", torch.compile(model), x)]
        else:
            # "torch-host": the input from host memory and the result back to it, as kiln's
            # bench feeds and fetches host tensors.
            engines = [("torch-eager", model, x),
                       ("torch-host", lambda h: model(h.cuda(non_blocking=False)).cpu(),
                        x.cpu())]
        for engine, fn, arg in engines:
            p50, mean = time_it(fn, arg, runs)
            print(json.dumps({"engine": engine, "model": name, "batch": int(batch),
                              "p50_us": round(p50, 1), "mean_us": round(mean, 1)}), flush=True)


if __name__ == "__main__":
    main()
