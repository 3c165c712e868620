"""The torch side of `npm run bench -- --vs torch`: the same model files, driven by torch directly.

    python driver.py --repository DIR [--batches 1,8,32,64] [--duration S] [--warmup S]

For each model and batch size, a loop on one Python thread (what a sidecar serving torch does):
the batch starts in host memory (pageable, as an application has it; and pinned), goes to the
GPU, runs, and the result comes back to host memory; also with the batch already on the GPU.
Prints one JSON document on stdout: per case items/s and the latency of one call (p50, p99).
"""

import argparse
import json
import os
import sys
import time

import torch


def log(message):
    print(f"torch-driver: {message}", file=sys.stderr, flush=True)


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, int(round(p / 100 * (len(sorted_values) - 1)))))
    return sorted_values[index]


def timed_loop(step, duration, warmup):
    end = time.perf_counter() + warmup
    while time.perf_counter() < end:
        step()
    latencies = []
    start = time.perf_counter()
    end = start + duration
    while True:
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        latencies.append(t1 - t0)
        if t1 >= end:
            break
    return latencies, time.perf_counter() - start


def resnet_cases(path, batches, duration, warmup):
    net = torch.jit.load(path, map_location="cuda").eval()
    out = []
    for batch in batches:
        host = torch.rand(batch, 3, 224, 224)
        pinned = host.pin_memory()
        device = host.cuda()
        placements = {
            "host": lambda: net(host.to("cuda")).cpu(),
            "pinned": lambda: net(pinned.to("cuda", non_blocking=True)).cpu(),
            "device": lambda: net(device).cpu(),
        }
        for placement, step in placements.items():
            with torch.inference_mode():
                latencies, elapsed = timed_loop(step, duration, warmup)
            latencies.sort()
            case = {
                "model": "resnet50",
                "placement": placement,
                "batch": batch,
                "calls": len(latencies),
                "itemsPerSecond": len(latencies) * batch / elapsed,
                "p50Ms": percentile(latencies, 50) * 1000,
                "p99Ms": percentile(latencies, 99) * 1000,
            }
            log(json.dumps(case))
            out.append(case)
    return out


def encoder_cases(version_dir, batches, duration, warmup, texts):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tokenizers import Tokenizer
    from transformers import BertModel

    scope = {"torch": torch}
    source = open(os.path.join(version_dir, "model.py"), encoding="utf-8").read()
    embed_source = source[source.index("def embed") : source.index("class TritonPythonModel")]
    exec(compile(embed_source, "embed", "exec"), scope)
    tokenizer = Tokenizer.from_file(os.path.join(version_dir, "tokenizer.json"))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    tokenizer.enable_truncation(max_length=64)
    net = BertModel.from_pretrained(os.path.join(version_dir, "bert"), add_pooling_layer=False).cuda().eval()
    out = []
    for batch in batches:
        chosen = [texts[i % len(texts)] for i in range(batch)]

        def step():
            return scope["embed"](net, tokenizer, chosen, torch.device("cuda")).cpu()

        with torch.inference_mode():
            latencies, elapsed = timed_loop(step, duration, warmup)
        latencies.sort()
        case = {
            "model": "encoder",
            "placement": "host",
            "batch": batch,
            "calls": len(latencies),
            "itemsPerSecond": len(latencies) * batch / elapsed,
            "p50Ms": percentile(latencies, 50) * 1000,
            "p99Ms": percentile(latencies, 99) * 1000,
        }
        log(json.dumps(case))
        out.append(case)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repository", required=True)
    parser.add_argument("--batches", default="1,8,32,64")
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--models", default="resnet50,encoder")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch sees no CUDA device"}))
        return 3
    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    models = args.models.split(",")
    result = {
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0),
        "cases": [],
    }
    if "resnet50" in models:
        path = os.path.join(args.repository, "resnet50_pt", "1", "model.pt")
        result["cases"] += resnet_cases(path, batches, args.duration, args.warmup)
    if "encoder" in models:
        texts_path = os.path.join(args.repository, "references", "texts.json")
        texts = json.load(open(texts_path, encoding="utf-8"))
        version_dir = os.path.join(args.repository, "encoder", "1")
        result["cases"] += encoder_cases(version_dir, batches, args.duration, args.warmup, texts)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
