"""The anchor of `bench --vs torch --models llm`: transformers' own batched
`generate` on the same GPU, over the same weights (the llm_gpu model that
test/gpu/llm/make_llm.py made), the same prompts and the same number of new
tokens, greedy. One static batch at a time, as a script that serves with
transformers alone would run it. Prints one JSON line:
{"gpu", "cases": [{batch, tokens, seconds, tokensPerSecond, firstTokenMs}]}.
"""

import argparse
import json
import os
import sys
import time

import torch
from transformers import LlamaForCausalLM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repository", required=True)
    parser.add_argument("--batches", default="1,8,32,64")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    version = os.path.join(args.repository, "llm_gpu", "1")
    sys.path.insert(0, version)
    from engine import EOS, PAD, encode

    with open(os.path.join(args.repository, "references", "llm.json"), encoding="utf-8") as f:
        prompts = [r["prompt"] for r in json.load(f)["references"]]
    device = torch.device("cuda")
    model = LlamaForCausalLM.from_pretrained(os.path.join(version, "weights"), dtype=torch.float32).to(device).eval()

    def run(batch, new_tokens):
        encoded = [encode(prompts[i % len(prompts)]) for i in range(batch)]
        width = max(len(e) for e in encoded)
        ids = torch.tensor([[PAD] * (width - len(e)) + e for e in encoded], device=device)
        mask = torch.tensor([[0] * (width - len(e)) + [1] * len(e) for e in encoded], device=device)
        torch.cuda.synchronize()
        started = time.perf_counter()
        out = model.generate(
            ids, attention_mask=mask, do_sample=False, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
            eos_token_id=EOS, pad_token_id=PAD,
        )
        torch.cuda.synchronize()
        return time.perf_counter() - started, (out.shape[1] - width) * batch

    cases = []
    with torch.inference_mode():
        for batch in [int(b) for b in args.batches.split(",")]:
            run(batch, 4)
            best = None
            for _ in range(args.rounds):
                seconds, tokens = run(batch, args.tokens)
                if best is None or seconds < best[0]:
                    best = (seconds, tokens)
            first = min(run(batch, 1)[0] for _ in range(3))
            cases.append(
                {
                    "batch": batch,
                    "tokens": best[1],
                    "seconds": best[0],
                    "tokensPerSecond": best[1] / best[0],
                    "firstTokenMs": first * 1000,
                }
            )
            print("transformers batch %d: %.0f tokens/s" % (batch, best[1] / best[0]), file=sys.stderr)
    print(json.dumps({"gpu": torch.cuda.get_device_name(device), "cases": cases}))


if __name__ == "__main__":
    main()
