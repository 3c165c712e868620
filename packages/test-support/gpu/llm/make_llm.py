"""Makes the GPU LLM of issue 42 into a Triton model repository, with the
references the tests compare against. Nothing here is committed output: run
it on the machine that serves the model.

    python make_llm.py --out DIR [--gpu-memory-utilization 0.5] [--max-model-len 1024]
    python make_llm.py --out DIR --check [--device cpu --num-blocks 512]

The model: transformers' LlamaForCausalLM with a small config that still
makes a GPU work (12 layers, hidden 768, 12 query heads over 4 KV heads,
MLP 2048), random weights from a fixed seed, over a byte-level vocabulary
(engine.py). Its LM head's rows for bytes outside printable ASCII and for
the end token are zero, so that greedy text stays readable.

DIR/llm_gpu/ is the model (config.pbtxt; 1/model.py, 1/engine.py, 1/weights/
from save_pretrained). DIR/references/llm.json holds, for each prompt, the
tokens of transformers' own `generate(do_sample=False)` run alone (batch 1),
and the tokens and time of its batched `generate` over all prompts at once.
`--check` runs engine.py directly (no Triton) on the prompts, alone and all
together, and exits 1 unless every token equals the reference.
"""

import argparse
import json
import os
import shutil
import sys
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from engine import BOS, EOS, OFFSET, PAD, VOCAB, Engine, SamplingParams, Sequence, decode, encode  # noqa: E402

SEED = 42
PROMPTS = [
    "The quick brown fox",
    "Triton serves models in process.",
    "Once upon a time, in a land far away, there lived",
    "def fibonacci(n):",
    "Zürich, Kraków, 東京 and São Paulo",
    "a",
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
    "Node.js streams tokens to many clients at once; each one sees its own text.",
]
NEW_TOKENS = 48


def model_config(args):
    return LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        max_position_embeddings=args.max_model_len,
        bos_token_id=BOS,
        eos_token_id=EOS,
        pad_token_id=PAD,
        tie_word_embeddings=False,
    )


def make_model(args):
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(model_config(args))
    with torch.no_grad():
        keep = torch.zeros(VOCAB, dtype=torch.bool)
        for byte in list(range(0x20, 0x7F)) + [0x0A]:
            keep[byte + OFFSET] = True
        model.lm_head.weight[~keep] = 0
    return model.eval()


def config_pbtxt(args, report_file):
    params = {
        "gpu_memory_utilization": str(args.gpu_memory_utilization),
        "max_model_len": str(args.max_model_len),
        "block_size": "16",
        "max_num_seqs": str(args.max_num_seqs),
        "dtype": args.dtype,
        "max_tokens_default": "16",
    }
    if report_file:
        params["report_file"] = report_file
    if args.num_blocks:
        params["num_blocks"] = str(args.num_blocks)
    lines = ",\n".join(
        "  { key: %s value: { string_value: %s } }" % (json.dumps(k), json.dumps(v)) for k, v in params.items()
    )
    optional = [
        ("stream", "TYPE_BOOL"),
        ("sampling_parameters", "TYPE_STRING"),
        ("exclude_input_in_output", "TYPE_BOOL"),
        ("return_finish_reason", "TYPE_BOOL"),
        ("return_num_input_tokens", "TYPE_BOOL"),
        ("return_num_output_tokens", "TYPE_BOOL"),
        ("return_token_ids", "TYPE_BOOL"),
    ]
    inputs = ['  { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] }'] + [
        '  { name: "%s" data_type: %s dims: [ 1 ] optional: true }' % (n, t) for n, t in optional
    ]
    outputs = [
        '  { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] }',
        '  { name: "finish_reason" data_type: TYPE_STRING dims: [ -1 ] }',
        '  { name: "num_input_tokens" data_type: TYPE_UINT32 dims: [ 1 ] }',
        '  { name: "num_output_tokens" data_type: TYPE_UINT32 dims: [ -1 ] }',
        '  { name: "token_ids" data_type: TYPE_INT64 dims: [ -1 ] }',
    ]
    return """name: "%s"
backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [
%s
]
output [
%s
]
instance_group [ %s ]
parameters [
%s
]
""" % (
        args.name,
        ",\n".join(inputs),
        ",\n".join(outputs),
        "{ count: 1 kind: KIND_GPU gpus: [ 0 ] }" if args.device != "cpu" else "{ count: 1 kind: KIND_CPU }",
        lines,
    )


def greedy_alone(model, device, prompts):
    out = []
    for prompt in prompts:
        ids = torch.tensor([encode(prompt)], device=device)
        gen = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            do_sample=False,
            max_new_tokens=NEW_TOKENS,
            eos_token_id=EOS,
            pad_token_id=PAD,
        )
        out.append(gen[0, ids.shape[1] :].tolist())
    return out


def greedy_batched(model, device, prompts, new_tokens):
    """transformers' batched generate (left padding), the way one would serve a batch without an engine."""
    encoded = [encode(p) for p in prompts]
    width = max(len(e) for e in encoded)
    ids = torch.tensor([[PAD] * (width - len(e)) + e for e in encoded], device=device)
    mask = torch.tensor([[0] * (width - len(e)) + [1] * len(e) for e in encoded], device=device)
    gen = model.generate(
        ids, attention_mask=mask, do_sample=False, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
        eos_token_id=EOS, pad_token_id=PAD,
    )
    return [row[width:].tolist() for row in gen]


def check(model, device, references, num_blocks):
    engine = Engine(model, device, gpu_memory_utilization=0.3, max_model_len=model.config.max_position_embeddings,
                    num_blocks=num_blocks)
    failures = 0

    def run(prompts):
        seqs = [Sequence(encode(p), SamplingParams({"max_tokens": NEW_TOKENS})) for p in prompts]
        for s in seqs:
            engine.add(s)
        while not engine.idle:
            engine.step()
        return [s.tokens for s in seqs]

    alone = [run([r["prompt"]])[0] for r in references]
    together = run([r["prompt"] for r in references])
    for r, a, t in zip(references, alone, together):
        for label, got in (("alone", a), ("together", t)):
            same = got == r["tokens"]
            failures += 0 if same else 1
            print("%-8s %-9s %s %r" % ("same" if same else "DIFFERENT", label, len(got), decode(got)[:60]))
            if not same:
                at = next((i for i, (x, y) in enumerate(zip(got, r["tokens"])) if x != y), min(len(got), len(r["tokens"])))
                print("    first difference at token %d: %s vs transformers %s" % (at, got[at:at + 4], r["tokens"][at:at + 4]))
    print("engine blocks in use after: %d" % engine.blocks_in_use)
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--name", default="llm_gpu")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--intermediate", type=int, default=2048)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--max-model-len", type=int, default=1024)
    parser.add_argument("--max-num-seqs", type=int, default=256)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.5)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--report-file", default="")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--num-blocks", type=int, default=0)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device(args.device)

    model = make_model(args)
    dtype = getattr(torch, args.dtype)
    model = model.to(device=device, dtype=dtype)
    started = time.time()
    alone = greedy_alone(model, device, PROMPTS)
    references = [
        {"prompt": p, "prompt_tokens": encode(p), "tokens": t, "text": decode(t)} for p, t in zip(PROMPTS, alone)
    ]
    if args.check:
        sys.exit(1 if check(model, device, references, args.num_blocks or None) else 0)

    target = os.path.join(args.out, args.name)
    version = os.path.join(target, "1")
    os.makedirs(version, exist_ok=True)
    model.save_pretrained(os.path.join(version, "weights"))
    for name in ("model.py", "engine.py"):
        shutil.copyfile(os.path.join(HERE, name), os.path.join(version, name))
    with open(os.path.join(target, "config.pbtxt"), "w", encoding="utf-8") as f:
        f.write(config_pbtxt(args, args.report_file))
    refs = os.path.join(args.out, "references")
    os.makedirs(refs, exist_ok=True)
    manifest = {
        "model": args.name,
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "dtype": args.dtype,
        "parameters": sum(p.numel() for p in model.parameters()),
        "weight_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
        "config": {k: getattr(model.config, k) for k in ("num_hidden_layers", "hidden_size", "intermediate_size",
                                                          "num_attention_heads", "num_key_value_heads", "vocab_size")},
        "max_model_len": args.max_model_len,
        "gpu_memory_utilization": args.gpu_memory_utilization,
        "new_tokens": NEW_TOKENS,
        "references": references,
        "seconds": time.time() - started,
    }
    with open(os.path.join(refs, "llm.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=1)
    print(json.dumps({k: v for k, v in manifest.items() if k != "references"}))


if __name__ == "__main__":
    main()
