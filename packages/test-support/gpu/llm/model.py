"""A decoupled Triton Python model that serves the Llama-shaped LM of
make_llm.py through engine.py, with the tensors of Triton's vLLM backend.

Inputs: `text_input` BYTES [1]; optional `stream`, `exclude_input_in_output`
BOOL [1]; `sampling_parameters` BYTES [1] (JSON: max_tokens, temperature,
top_p, top_k, seed, stop, ignore_eos; else the request's parameters, as the
vLLM backend reads them); the vLLM backend's additional outputs asked for per
request with `return_finish_reason`, `return_num_input_tokens`,
`return_num_output_tokens`, and ours, `return_token_ids` (BOOL [1]).
Outputs: `text_output`, and `finish_reason`, `num_input_tokens`,
`num_output_tokens` (tokens since the previous response), `token_ids` (those
tokens) when asked for.

One thread runs the engine: between steps it takes the requests that
arrived, checks every running request for cancellation (a cancelled one is
ended and its cache blocks freed before the next step) and sends each
stream its new text. Config parameters: `gpu_memory_utilization`,
`max_model_len`, `block_size`, `max_num_seqs`, `max_num_batched_tokens`,
`dtype` (float32, bfloat16, float16), `cuda_graphs` (true: decode passes replayed from CUDA graphs),
`max_tokens_default`, `report_file`
(one JSON line at start with the cache's arithmetic, one per finished request).
The cache's state is published as gauges in Triton's metrics.
"""

import json
import os
import queue
import sys
import threading
import time
import traceback

import numpy as np
import torch
import triton_python_backend_utils as pb_utils
from transformers import LlamaForCausalLM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import Engine, RequestError, SamplingParams, Sequence, encode  # noqa: E402

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def first(request, name):
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    if tensor is None:
        return None
    value = tensor.as_numpy().reshape(-1)
    if value.size != 1:
        raise RequestError("%s: expected one element, got %d" % (name, value.size))
    value = value[0]
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as e:
            raise RequestError("%s: not UTF-8 (%s)" % (name, e))
    return value


class Job:
    """A request's Triton side: its sender and what its responses carry."""

    def __init__(self, request):
        self.request = request
        self.sender = request.get_response_sender()
        self.prompt = first(request, "text_input")
        if not isinstance(self.prompt, str):
            raise RequestError("text_input: expected one BYTES element")
        self.stream = bool(first(request, "stream") or False)
        exclude = first(request, "exclude_input_in_output")
        self.prepend = (not bool(exclude)) if exclude is not None else not self.stream
        if self.prepend and self.stream:
            raise RequestError("When streaming, `exclude_input_in_output` = False is not allowed.")
        self.want = {
            name: bool(first(request, "return_" + name) or False)
            for name in ("finish_reason", "num_input_tokens", "num_output_tokens", "token_ids")
        }
        self.unsent = []

    def sampling(self, max_tokens_default):
        raw = first(self.request, "sampling_parameters")
        if raw is None:
            raw = self.request.parameters()
        try:
            values = json.loads(raw) if raw else {}
        except json.JSONDecodeError as e:
            raise RequestError("sampling_parameters: expected a JSON object (%s)" % e)
        if isinstance(values, dict) and isinstance(values.get("stop"), str) and values["stop"].startswith("["):
            values["stop"] = json.loads(values["stop"])
        return SamplingParams(values, max_tokens_default)

    def response(self, text, seq, final):
        outputs = [pb_utils.Tensor("text_output", np.array([text.encode("utf-8")], dtype=np.object_))]
        if self.want["finish_reason"] and final:
            reason = seq.finish_reason or ""
            outputs.append(pb_utils.Tensor("finish_reason", np.array([reason.encode()], dtype=np.object_)))
        if self.want["num_input_tokens"]:
            outputs.append(pb_utils.Tensor("num_input_tokens", np.array([len(seq.prompt)], dtype=np.uint32)))
        if self.want["num_output_tokens"]:
            outputs.append(pb_utils.Tensor("num_output_tokens", np.array([len(self.unsent)], dtype=np.uint32)))
        if self.want["token_ids"]:
            outputs.append(pb_utils.Tensor("token_ids", np.array(self.unsent, dtype=np.int64)))
        self.unsent = []
        return pb_utils.InferenceResponse(output_tensors=outputs)


def error_response(message):
    return pb_utils.InferenceResponse(error=pb_utils.TritonError(message, pb_utils.TritonError.INVALID_ARG))


class Gauges:
    """The cache and queue as Triton metrics (labelled by model), when the server has metrics on."""

    def __init__(self, model):
        self.metrics = {}
        self.last = {}
        # A Metric must not outlive its MetricFamily: keep both.
        self.families = []
        try:
            family = pb_utils.MetricFamily
            for key, description in (
                ("llm_kv_cache_blocks_used", "KV cache blocks held by running sequences"),
                ("llm_kv_cache_blocks_total", "KV cache blocks the model allocated"),
                ("llm_running_sequences", "Sequences decoding now"),
                ("llm_waiting_sequences", "Sequences waiting for cache blocks"),
                ("llm_decode_steps", "Decode passes run (each one forward pass over every running sequence)"),
                ("llm_decoded_tokens", "Tokens those passes made"),
            ):
                self.families.append(family(name=key, description=description, kind=family.GAUGE))
                self.metrics[key] = self.families[-1].Metric(labels={"model": model})
        except Exception:  # metrics off: nothing to publish
            self.metrics = {}

    def set(self, engine, counters=False):
        """Publishes what changed (each set is a message to the server); the step counters only when asked."""
        values = {
            "llm_kv_cache_blocks_used": engine.blocks_in_use,
            "llm_kv_cache_blocks_total": engine.num_blocks - 1,
            "llm_running_sequences": len(engine.running),
            "llm_waiting_sequences": len(engine.waiting),
        }
        if counters:
            values["llm_decode_steps"] = engine.decode_steps
            values["llm_decoded_tokens"] = engine.decoded_tokens
        for key, value in values.items():
            metric = self.metrics.get(key)
            if metric is not None and self.last.get(key) != value:
                metric.set(value)
                self.last[key] = value


class Phases:
    """Where the engine's thread spends its time between two idle moments (a report line at each)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.seconds = {}
        self.steps = 0
        self.responses = 0
        self.mark = time.perf_counter()

    def add(self, phase, since):
        now = time.perf_counter()
        self.seconds[phase] = self.seconds.get(phase, 0.0) + now - since
        self.mark = now

    def line(self):
        line = {"event": "phases", "steps": self.steps, "tokens": self.responses}
        line.update({k: round(v, 4) for k, v in self.seconds.items()})
        self.reset()
        return line


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
        self.name = config["name"]
        if args.get("model_instance_kind") == "GPU":
            device = torch.device("cuda", int(args["model_instance_device_id"]))
            torch.cuda.set_device(device)
        else:
            device = torch.device("cpu")
        # Full FP32 matmuls: greedy tokens must match transformers' own generate.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        dtype = DTYPES[params.get("dtype", "float32")]
        weights = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights")
        model = LlamaForCausalLM.from_pretrained(weights, dtype=dtype).to(device)
        self.max_tokens_default = int(params.get("max_tokens_default", "16"))
        self.report_file = params.get("report_file", "")
        self.engine = Engine(
            model,
            device,
            gpu_memory_utilization=float(params.get("gpu_memory_utilization", "0.85")),
            max_model_len=int(params.get("max_model_len", "1024")),
            block_size=int(params.get("block_size", "16")),
            max_num_seqs=int(params.get("max_num_seqs", "256")),
            max_num_batched_tokens=int(params.get("max_num_batched_tokens", "0")) or None,
            num_blocks=int(params["num_blocks"]) if "num_blocks" in params else None,
            cuda_graphs=params.get("cuda_graphs", "true") == "true",
        )
        self.lock = threading.Lock()
        memory = dict(self.engine.memory, block_bytes=self.engine.block_bytes, num_blocks=self.engine.num_blocks)
        pb_utils.Logger.log_info("%s: KV cache %s" % (self.name, json.dumps(memory)))
        self.report({"event": "start", "memory": memory, "device": str(device)})
        self.gauges = Gauges(self.name)
        self.phases = Phases()
        self.inbox = queue.SimpleQueue()
        self.wake = threading.Event()
        self.stopping = False
        # Responses go out from a thread of their own, in order: a send is a round trip to the server
        # process, which the next step's GPU work overlaps.
        self.outbox = queue.SimpleQueue()
        self.sender = threading.Thread(target=self.send_loop, name="llm-sender", daemon=True)
        self.sender.start()
        self.thread = threading.Thread(target=self.loop, name="llm-engine", daemon=True)
        self.thread.start()

    def send(self, sender, response, flags):
        self.outbox.put((sender, response, flags))

    def send_loop(self):
        while True:
            item = self.outbox.get()
            if item is None:
                return
            sender, response, flags = item
            try:
                if response is None:
                    sender.send(flags=flags)
                else:
                    sender.send(response, flags=flags)
            except Exception as e:  # a request already ended (its client left): nothing to send to
                pb_utils.Logger.log_verbose("%s: a response was not sent: %s" % (self.name, e))

    def execute(self, requests):
        for request in requests:
            self.inbox.put(request)
        self.wake.set()
        return None

    # ---- the engine's thread ------------------------------------------------------

    def loop(self):
        try:
            self.run()
        except BaseException:
            # Never a silent death: every request waiting on this thread would hang.
            pb_utils.Logger.log_error("%s: the engine's thread failed: %s" % (self.name, traceback.format_exc()))
            self.fail_all("the model '%s' failed: see the server's log" % self.name)

    def run(self):
        engine = self.engine
        while not self.stopping:
            if engine.idle and self.inbox.empty():
                self.gauges.set(engine, counters=True)
                self.wake.wait(0.5)
                self.wake.clear()
                continue
            clock = time.perf_counter()
            self.take()
            self.cancel()
            self.phases.add("take_and_cancel", clock)
            try:
                engine.step(self.deliver)
            except Exception:
                self.fail_all("the engine failed: %s" % traceback.format_exc(limit=3))
                continue
            clock = time.perf_counter()
            self.gauges.set(engine, counters=engine.idle or engine.decode_steps % 64 == 0)
            self.phases.add("gauges", clock)
            self.phases.steps += 1
            if engine.idle:
                self.report(self.phases.line())
        self.fail_all("the model '%s' is unloading" % self.name)

    def take(self):
        while True:
            try:
                request = self.inbox.get_nowait()
            except queue.Empty:
                return
            try:
                job = Job(request)
            except RequestError as e:
                self.send(request.get_response_sender(), error_response(str(e)), FINAL)
                continue
            try:
                seq = Sequence(encode(job.prompt), job.sampling(self.max_tokens_default), job)
                self.engine.add(seq)
            except RequestError as e:
                self.send(job.sender, error_response(str(e)), FINAL)

    def cancel(self):
        for seq in list(self.engine.running) + list(self.engine.waiting):
            if seq.tag.request.is_cancelled():
                self.engine.finish(seq, "abort")
                self.send(seq.tag.sender, None, FINAL)
                self.done(seq)

    def deliver(self, events):
        self.phases.add("step", self.phases.mark)
        clock = time.perf_counter()
        for seq, token in events:
            job = seq.tag
            job.unsent.append(token)
            piece = seq.text.add(token)
            if seq.text.stopped and not seq.finished:
                self.engine.finish(seq, "stop")
            if seq.finished:
                piece += seq.text.flush()
                if job.stream:
                    self.send(job.sender, job.response(piece, seq, True), FINAL)
                else:
                    text = (job.prompt if job.prepend else "") + seq.text.text
                    self.send(job.sender, job.response(text, seq, True), FINAL)
                self.done(seq)
            elif job.stream and piece != "":
                self.send(job.sender, job.response(piece, seq, False), 0)
        self.phases.add("deliver", clock)
        self.phases.responses += len(events)

    def fail_all(self, message):
        for seq in list(self.engine.running) + list(self.engine.waiting):
            self.engine.finish(seq, "abort")
            self.send(seq.tag.sender, error_response(message), FINAL)
            self.done(seq)
        while True:
            try:
                request = self.inbox.get_nowait()
            except queue.Empty:
                return
            self.send(request.get_response_sender(), error_response(message), FINAL)

    def done(self, seq):
        self.report(
            {
                "event": "finished",
                "id": seq.tag.request.request_id(),
                "prompt_tokens": len(seq.prompt),
                "tokens": len(seq.tokens),
                "reason": seq.finish_reason,
                "blocks_in_use": self.engine.blocks_in_use,
            }
        )

    def report(self, line):
        if self.report_file == "":
            return
        with self.lock:
            with open(self.report_file, "a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")

    def finalize(self):
        self.stopping = True
        self.wake.set()
        self.thread.join(timeout=10)
        self.outbox.put(None)
        self.sender.join(timeout=10)
