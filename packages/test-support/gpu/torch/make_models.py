"""Writes the GPU test and benchmark models, with torch's own answers to check against.

Real architectures with random weights (fixed seeds): no weights can be downloaded where
this runs. Run with the Python that has torch, torchvision, transformers and tokenizers:

    python make_models.py --out DIR [--images N] [--texts N] [--onnx]

DIR then holds a Triton model repository and a folder of references:

    resnet50_pt/      TorchScript ResNet-50 on the pytorch backend, KIND_GPU, dynamic batching
    resnet50_py/      the same TorchScript file in a Python-backend model that runs every request
                      of an execute() call as one batch (DLPack in and out)
    encoder/          a BERT-shaped sentence encoder in a Python-backend model: text in, the
                      mean-pooled, L2-normalized embedding out (tokenizer trained here)
    similarity/       cosine scores of one query against a set of vectors, on the GPU (Python)
    references/       inputs and torch's outputs on this GPU, and manifest.json describing them
    resnet50.onnx     with --onnx: the same network for onnxruntime-node (torch.onnx.export)

The references run the same files through torch directly on the same GPU: batch 1 for each
image ("single") and all images at once ("batched"), each text alone and all texts at once.
"""

import argparse
import json
import os
import random
import sys
import time

import numpy as np
import torch

RESNET_BATCH = 32
ENCODER_BATCH = 64
EMBEDDING_SIZE = 256
MAX_TOKENS = 64
SEED = 20261206

WORDS = (
    "gpu tensor model batch queue latency kernel memory stream token vector embedding server "
    "request response triton node network layer weight bias image pixel channel feature score "
    "cosine distance search index query document sentence word piece vocabulary attention head "
    "hidden state encoder decoder transformer residual convolution pool linear norm dropout "
    "the a an of to in on for with by from at as is are was were be been being this that these "
    "those it its they them their we our you your he she his her one two three four five six "
    "seven eight nine ten fast slow large small warm cold first last next early late new old"
).split()


def log(message):
    print(f"make_models: {message}", file=sys.stderr, flush=True)


def write_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def save_f32(path, tensor):
    array = tensor.detach().to("cpu", torch.float32).contiguous().numpy()
    array.tofile(path)
    return list(array.shape)


# ---------------------------------------------------------------- ResNet-50

RESNET_PT_CONFIG = """name: "resnet50_pt"
backend: "pytorch"
max_batch_size: {batch}
input [ {{ name: "INPUT__0" data_type: TYPE_FP32 dims: [ 3, 224, 224 ] }} ]
output [ {{ name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 1000 ] }} ]
instance_group [ {{ kind: KIND_GPU count: 1 gpus: [ 0 ] }} ]
dynamic_batching {{ max_queue_delay_microseconds: 200 }}
"""

RESNET_PY_CONFIG = """name: "resnet50_py"
backend: "python"
max_batch_size: {batch}
input [ {{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 3, 224, 224 ] }} ]
output [ {{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1000 ] }} ]
instance_group [ {{ kind: KIND_GPU count: 1 gpus: [ 0 ] }} ]
dynamic_batching {{ max_queue_delay_microseconds: 200 }}
parameters {{ key: "FORCE_CPU_ONLY_INPUT_TENSORS" value: {{ string_value: "no" }} }}
"""

# Every request of one execute() goes through the network as one batch: the
# inputs arrive as DLPack capsules (on the GPU when the caller sent device
# memory), the outputs leave as views of the batch's result, on the GPU.
RESNET_PY_MODEL = '''import os

import torch
import torch.utils.dlpack
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.device = torch.device("cuda", int(args["model_instance_device_id"]))
        here = os.path.dirname(os.path.abspath(__file__))
        self.net = torch.jit.load(os.path.join(here, "resnet50.pt"), map_location=self.device)
        self.net.eval()

    def execute(self, requests):
        parts = []
        for request in requests:
            given = pb_utils.get_input_tensor_by_name(request, "INPUT0")
            parts.append(torch.utils.dlpack.from_dlpack(given.to_dlpack()).to(self.device))
        with torch.inference_mode():
            batch = torch.cat(parts) if len(parts) > 1 else parts[0]
            result = self.net(batch)
        responses = []
        start = 0
        for part in parts:
            rows = result[start : start + part.shape[0]].contiguous()
            start += part.shape[0]
            out = pb_utils.Tensor.from_dlpack("OUTPUT0", torch.utils.dlpack.to_dlpack(rows))
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
'''


def make_resnet(out, images, onnx):
    import torchvision

    torch.manual_seed(SEED)
    net = torchvision.models.resnet50(weights=None).eval().cuda()
    example = torch.randn(1, 3, 224, 224, device="cuda")
    with torch.no_grad():
        traced = torch.jit.trace(net, example)
    pt_dir = os.path.join(out, "resnet50_pt", "1")
    os.makedirs(pt_dir, exist_ok=True)
    traced.save(os.path.join(pt_dir, "model.pt"))
    write_text(os.path.join(out, "resnet50_pt", "config.pbtxt"), RESNET_PT_CONFIG.format(batch=RESNET_BATCH))
    py_dir = os.path.join(out, "resnet50_py", "1")
    os.makedirs(py_dir, exist_ok=True)
    traced.save(os.path.join(py_dir, "resnet50.pt"))
    write_text(os.path.join(py_dir, "model.py"), RESNET_PY_MODEL)
    write_text(os.path.join(out, "resnet50_py", "config.pbtxt"), RESNET_PY_CONFIG.format(batch=RESNET_BATCH))
    weight_bytes = sum(p.numel() * p.element_size() for p in net.parameters())
    if onnx:
        try:
            torch.onnx.export(
                net.cpu(),
                example.cpu(),
                os.path.join(out, "resnet50.onnx"),
                input_names=["input"],
                output_names=["logits"],
                dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                opset_version=17,
                dynamo=False,
            )
        except Exception as err:  # the ONNX anchor is optional: say why it is missing
            log(f"no resnet50.onnx: {err}")
            write_text(os.path.join(out, "resnet50.onnx.missing"), str(err))
        net.cuda()

    # torch's own answers from the saved file, as the backends will load it.
    loaded = torch.jit.load(os.path.join(pt_dir, "model.pt"), map_location="cuda").eval()
    gen = torch.Generator().manual_seed(SEED + 1)
    inputs = torch.rand(images, 3, 224, 224, generator=gen) * 4 - 2
    with torch.inference_mode():
        single = torch.cat([loaded(inputs[i : i + 1].cuda()) for i in range(images)])
        batched = loaded(inputs.cuda())
    ref = os.path.join(out, "references")
    return {
        "images": images,
        "inputs": {"file": "resnet_inputs.f32", "shape": save_f32(os.path.join(ref, "resnet_inputs.f32"), inputs)},
        "single": {"file": "resnet_single.f32", "shape": save_f32(os.path.join(ref, "resnet_single.f32"), single)},
        "batched": {"file": "resnet_batched.f32", "shape": save_f32(os.path.join(ref, "resnet_batched.f32"), batched)},
        "singleVsBatchedMaxAbs": float((single - batched).abs().max().item()),
        "weightBytes": int(weight_bytes),
    }


# ---------------------------------------------------------------- the encoder

ENCODER_CONFIG = """name: "encoder"
backend: "python"
max_batch_size: {batch}
input [ {{ name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] }} ]
output [ {{ name: "EMBEDDING" data_type: TYPE_FP32 dims: [ {size} ] }} ]
instance_group [ {{ kind: KIND_GPU count: 1 gpus: [ 0 ] }} ]
dynamic_batching {{ max_queue_delay_microseconds: 500 }}
"""

# Texts of every request of one execute() are tokenized and encoded as one
# padded batch; mean pooling over the attention mask, then L2 normalization.
# The embeddings leave on the GPU (DLPack): the caller decides where they land.
EMBED_SOURCE = """
def embed(net, tokenizer, texts, device):
    encoded = tokenizer.encode_batch(texts)
    ids = torch.tensor([e.ids for e in encoded], dtype=torch.long, device=device)
    mask = torch.tensor([e.attention_mask for e in encoded], dtype=torch.long, device=device)
    hidden = net(input_ids=ids, attention_mask=mask).last_hidden_state
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)
"""

ENCODER_MODEL = (
    """import os

import torch
import torch.utils.dlpack
import triton_python_backend_utils as pb_utils
from tokenizers import Tokenizer
from transformers import BertModel

MAX_TOKENS = %d
"""
    % MAX_TOKENS
    + EMBED_SOURCE
    + """

class TritonPythonModel:
    def initialize(self, args):
        self.device = torch.device("cuda", int(args["model_instance_device_id"]))
        here = os.path.dirname(os.path.abspath(__file__))
        self.tokenizer = Tokenizer.from_file(os.path.join(here, "tokenizer.json"))
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.net = BertModel.from_pretrained(os.path.join(here, "bert"), add_pooling_layer=False)
        self.net = self.net.to(self.device).eval()

    def execute(self, requests):
        texts = []
        counts = []
        for request in requests:
            given = pb_utils.get_input_tensor_by_name(request, "TEXT").as_numpy().reshape(-1)
            counts.append(len(given))
            texts.extend(t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in given)
        with torch.inference_mode():
            vectors = embed(self.net, self.tokenizer, texts, self.device)
        responses = []
        start = 0
        for n in counts:
            rows = vectors[start : start + n].contiguous()
            start += n
            out = pb_utils.Tensor.from_dlpack("EMBEDDING", torch.utils.dlpack.to_dlpack(rows))
            responses.append(pb_utils.InferenceResponse(output_tensors=[out]))
        return responses
"""
)

SIMILARITY_CONFIG = """name: "similarity"
backend: "python"
max_batch_size: 0
input [
  {{ name: "QUERY" data_type: TYPE_FP32 dims: [ {size} ] }},
  {{ name: "DOCS" data_type: TYPE_FP32 dims: [ -1, {size} ] }}
]
output [
  {{ name: "SCORES" data_type: TYPE_FP32 dims: [ -1 ] }},
  {{ name: "ON_GPU" data_type: TYPE_INT32 dims: [ 2 ] }}
]
instance_group [ {{ kind: KIND_GPU count: 1 gpus: [ 0 ] }} ]
parameters {{ key: "FORCE_CPU_ONLY_INPUT_TENSORS" value: {{ string_value: "no" }} }}
"""

# Cosine scores (the vectors are normalized: dot products) computed where
# the inputs are; ON_GPU says whether each input arrived in device memory.
SIMILARITY_MODEL = '''import numpy as np
import torch
import torch.utils.dlpack
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            query = pb_utils.get_input_tensor_by_name(request, "QUERY")
            docs = pb_utils.get_input_tensor_by_name(request, "DOCS")
            on_gpu = np.array([int(not query.is_cpu()), int(not docs.is_cpu())], dtype=np.int32)
            q = torch.utils.dlpack.from_dlpack(query.to_dlpack()).cuda()
            d = torch.utils.dlpack.from_dlpack(docs.to_dlpack()).cuda()
            scores = (d @ q).contiguous()
            out = pb_utils.Tensor.from_dlpack("SCORES", torch.utils.dlpack.to_dlpack(scores))
            responses.append(pb_utils.InferenceResponse(output_tensors=[out, pb_utils.Tensor("ON_GPU", on_gpu)]))
        return responses
'''


def corpus(lines, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        n = rng.randint(3, 24)
        out.append(" ".join(rng.choice(WORDS) for _ in range(n)))
    return out


def make_tokenizer(path):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=2000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    tokenizer.train_from_iterator(corpus(5000, SEED), trainer=trainer)
    tokenizer.save(path)
    return tokenizer


def make_encoder(out, texts):
    from tokenizers import Tokenizer
    from transformers import BertConfig, BertModel

    version = os.path.join(out, "encoder", "1")
    os.makedirs(version, exist_ok=True)
    tok_path = os.path.join(version, "tokenizer.json")
    make_tokenizer(tok_path)
    tokenizer = Tokenizer.from_file(tok_path)
    torch.manual_seed(SEED + 2)
    config = BertConfig(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=EMBEDDING_SIZE,
        num_hidden_layers=4,
        num_attention_heads=4,
        intermediate_size=4 * EMBEDDING_SIZE,
        max_position_embeddings=128,
    )
    net = BertModel(config, add_pooling_layer=False).eval()
    net.save_pretrained(os.path.join(version, "bert"))
    write_text(os.path.join(version, "model.py"), ENCODER_MODEL)
    write_text(
        os.path.join(out, "encoder", "config.pbtxt"),
        ENCODER_CONFIG.format(batch=ENCODER_BATCH, size=EMBEDDING_SIZE),
    )
    write_text(os.path.join(out, "similarity", "config.pbtxt"), SIMILARITY_CONFIG.format(size=EMBEDDING_SIZE))
    write_text(os.path.join(out, "similarity", "1", "model.py"), SIMILARITY_MODEL)

    # torch's answers: the model file's own code, loaded as the stub loads it.
    scope = {"torch": torch}
    exec(compile(EMBED_SOURCE, "encoder", "exec"), scope)
    tok = Tokenizer.from_file(tok_path)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    tok.enable_truncation(max_length=MAX_TOKENS)
    loaded = BertModel.from_pretrained(os.path.join(version, "bert"), add_pooling_layer=False).cuda().eval()
    sentences = corpus(texts, SEED + 3)
    with torch.inference_mode():
        single = torch.cat([scope["embed"](loaded, tok, [s], torch.device("cuda")) for s in sentences])
        batched = scope["embed"](loaded, tok, sentences, torch.device("cuda"))
    ref = os.path.join(out, "references")
    write_text(os.path.join(ref, "texts.json"), json.dumps(sentences))
    return {
        "texts": {"file": "texts.json", "count": len(sentences)},
        "single": {"file": "encoder_single.f32", "shape": save_f32(os.path.join(ref, "encoder_single.f32"), single)},
        "batched": {"file": "encoder_batched.f32", "shape": save_f32(os.path.join(ref, "encoder_batched.f32"), batched)},
        "singleVsBatchedMaxAbs": float((single - batched).abs().max().item()),
        "size": EMBEDDING_SIZE,
        "weightBytes": int(sum(p.numel() * p.element_size() for p in net.parameters())),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--images", type=int, default=8)
    parser.add_argument("--texts", type=int, default=16)
    parser.add_argument("--onnx", action="store_true")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        log("torch sees no CUDA device")
        return 3
    os.makedirs(os.path.join(args.out, "references"), exist_ok=True)
    started = time.time()
    manifest = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "gpu": torch.cuda.get_device_name(0),
        "tf32": {
            "cudnn": bool(torch.backends.cudnn.allow_tf32),
            "matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        },
        "resnet50": make_resnet(args.out, args.images, args.onnx),
    }
    log(f"resnet50 written ({time.time() - started:.1f} s)")
    manifest["encoder"] = make_encoder(args.out, args.texts)
    log(f"encoder written ({time.time() - started:.1f} s)")
    write_text(os.path.join(args.out, "references", "manifest.json"), json.dumps(manifest, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
