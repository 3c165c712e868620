/**
 * An LLM-shaped model for real Triton's Python backend, written at run time
 * into a repository the caller names: decoupled, with the tensors of the
 * vLLM backend's example model (inputs `text_input` BYTES [1]; optional
 * `stream` BOOL [1], `sampling_parameters` BYTES [1] (JSON),
 * `exclude_input_in_output` BOOL [1]; output `text_output` BYTES [-1]).
 *
 * It generates real text, one word per token: a word-level Markov chain
 * (order 2, falling back to order 1) built from test/fixtures/llm-corpus.txt,
 * continuing from the last prompt words the corpus knows. Temperature 0 (its
 * default, where vLLM's is 1) takes the most frequent next word, the first
 * seen on a tie; above 0 it samples with weights count^(1/temperature) from
 * a generator seeded by `seed`. Each token is " word". It honours
 * `max_tokens` (default: the config's `max_tokens_default`) and `stop` (a
 * string or a list, matched in the generated text and left out of it, as
 * vLLM does: text that could begin a stop string is held back until it
 * cannot). Sampling parameters come from the `sampling_parameters` tensor,
 * else from the request parameters (as the vLLM backend reads them; the
 * generate endpoint's `parameters`).
 *
 * Like the vLLM backend: `stream` true sends one response per token from a
 * thread of the model (the last with the FINAL flag), else one response with
 * the whole text, the prompt first unless `exclude_input_in_output`; a
 * stream with `exclude_input_in_output` false is an error. Between tokens it
 * sleeps `token_delay_ms` (config parameter) and checks
 * `request.is_cancelled()`, stopping on a cancel. With `report_file` set, it
 * appends one JSON line per finished request to that file: its id, the
 * tokens it generated, the responses it sent and why it ended ("length",
 * "stop", "cancelled").
 *
 * Like the vLLM backend's additional outputs, per request: BOOL inputs
 * `return_finish_reason`, `return_num_input_tokens`,
 * `return_num_output_tokens` (optional) add to every response
 * `finish_reason` (BYTES: "length", "stop", or "None" before the end),
 * `num_input_tokens` (UINT32: the prompt's words) and `num_output_tokens`
 * (UINT32: tokens generated since the previous response, the one a stop
 * string cut out included). A stream whose last token was cut out still
 * sends a last response then (empty text) to carry them. The config lists
 * them unless `additionalOutputs: false`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The corpus the chain is built from. */
export const LLM_CORPUS = fileURLToPath(new URL('../fixtures/llm-corpus.txt', import.meta.url));

export const LLM_MODEL_PY = `import json
import random
import re
import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL


def key(word):
    return re.sub(r"[^a-z0-9]", "", word.lower())


class Chain:
    """Next-word counts after each word and each pair of words, in order of first appearance."""

    def __init__(self, text):
        self.words = text.split()
        self.after1 = {}
        self.after2 = {}
        for i in range(1, len(self.words)):
            nxt = self.words[i]
            one = self.after1.setdefault(key(self.words[i - 1]), {})
            one[nxt] = one.get(nxt, 0) + 1
            if i >= 2:
                pair = (key(self.words[i - 2]), key(self.words[i - 1]))
                two = self.after2.setdefault(pair, {})
                two[nxt] = two.get(nxt, 0) + 1

    def start(self, prompt):
        """The last two words of the prompt, from its last word the corpus knows."""
        words = [key(w) for w in prompt.split()]
        words = [w for w in words if w != ""]
        for i in range(len(words) - 1, -1, -1):
            if words[i] in self.after1:
                return [words[i - 1] if i > 0 else "", words[i]]
        return ["", key(self.words[-1])]

    def next(self, state, temperature, rng):
        counts = self.after2.get((state[0], state[1])) or self.after1.get(state[1])
        if not counts:
            counts = {self.words[0]: 1}
        if temperature <= 0:
            best = None
            for word, n in counts.items():
                if best is None or n > counts[best]:
                    best = word
            return best
        words = list(counts.keys())
        weights = [counts[w] ** (1.0 / temperature) for w in words]
        return rng.choices(words, weights=weights)[0]


def first(request, name):
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    if tensor is None:
        return None
    value = tensor.as_numpy().reshape(-1)[0]
    return value.decode("utf-8") if isinstance(value, bytes) else value


def text_response(text, extras=None):
    data = np.array([text.encode("utf-8")], dtype=np.object_)
    tensors = [pb_utils.Tensor("text_output", data)]
    for name, value in (extras or {}).items():
        if name == "finish_reason":
            array = np.array([value.encode("utf-8")], dtype=np.object_)
        else:
            array = np.array([value], dtype=np.uint32)
        tensors.append(pb_utils.Tensor(name, array))
    return pb_utils.InferenceResponse(output_tensors=tensors)


def error_response(message):
    return pb_utils.InferenceResponse(
        error=pb_utils.TritonError(message, pb_utils.TritonError.INVALID_ARG)
    )


class Generation:
    """One request's text so far, with the part that may begin a stop string held back."""

    def __init__(self, stop):
        self.stop = stop
        self.text = ""
        self.sent = 0
        self.stopped = False

    def add(self, piece):
        """Adds a token; returns the text that can go out now."""
        self.text += piece
        cut = min((i for i in (self.text.find(s) for s in self.stop) if i >= 0), default=-1)
        if cut >= 0:
            self.text = self.text[:cut]
            self.stopped = True
            return self.flush()
        hold = 0
        for s in self.stop:
            for n in range(min(len(s) - 1, len(self.text)), hold, -1):
                if self.text.endswith(s[:n]):
                    hold = n
                    break
        safe = len(self.text) - hold
        out = self.text[self.sent:safe] if safe > self.sent else ""
        self.sent = max(self.sent, safe)
        return out

    def flush(self):
        out = self.text[self.sent:]
        self.sent = len(self.text)
        return out


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in config.get("parameters", {}).items()}
        self.delay = float(params.get("token_delay_ms", "0")) / 1000.0
        self.max_tokens_default = int(params.get("max_tokens_default", "16"))
        self.report_file = params.get("report_file", "")
        with open(params["corpus"], encoding="utf-8") as f:
            self.chain = Chain(f.read())
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = []

    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            try:
                job = self.read(request)
            except ValueError as e:
                sender.send(error_response(str(e)), flags=FINAL)
                continue
            t = threading.Thread(target=self.generate, args=(request, sender, job), daemon=True)
            self.threads = [x for x in self.threads if x.is_alive()]
            self.threads.append(t)
            t.start()
        return None

    def read(self, request):
        prompt = first(request, "text_input")
        if prompt is None:
            raise ValueError("text_input: expected one BYTES element")
        stream = bool(first(request, "stream") or False)
        exclude = first(request, "exclude_input_in_output")
        prepend = (not bool(exclude)) if exclude is not None else not stream
        if prepend and stream:
            raise ValueError("When streaming, \`exclude_input_in_output\` = False is not allowed.")
        raw = first(request, "sampling_parameters")
        if raw is None:
            raw = request.parameters()
        try:
            sampling = json.loads(raw) if raw else {}
        except json.JSONDecodeError as e:
            raise ValueError("sampling_parameters: expected a JSON object (%s)" % e)
        if not isinstance(sampling, dict):
            raise ValueError("sampling_parameters: expected a JSON object")
        max_tokens = sampling.get("max_tokens", self.max_tokens_default)
        if isinstance(max_tokens, str) and max_tokens.isdigit():
            max_tokens = int(max_tokens)
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ValueError("sampling_parameters: max_tokens must be a positive integer")
        stop = sampling.get("stop", [])
        if isinstance(stop, str):
            stop = json.loads(stop) if stop.startswith("[") else [stop]
        if not isinstance(stop, list) or not all(isinstance(s, str) and s != "" for s in stop):
            raise ValueError("sampling_parameters: stop must be a string or a list of strings")
        temperature = float(sampling.get("temperature", 0))
        seed = sampling.get("seed")
        wanted = [n for n in ("finish_reason", "num_input_tokens", "num_output_tokens")
                  if bool(first(request, "return_" + n) or False)]
        return {
            "wanted": wanted,
            "prompt": prompt,
            "stream": stream,
            "prepend": prepend,
            "max_tokens": max_tokens,
            "stop": stop,
            "temperature": temperature,
            "rng": random.Random(int(seed) if seed is not None else None),
        }

    def extras(self, job, tokens, reason):
        """The additional outputs asked for, on a response that ends with \`tokens\` generated."""
        values = {
            "finish_reason": reason,
            "num_input_tokens": len(job["prompt"].split()),
            "num_output_tokens": tokens - job["reported"],
        }
        job["reported"] = tokens
        return {n: values[n] for n in job["wanted"]}

    def generate(self, request, sender, job):
        gen = Generation(job["stop"])
        state = self.chain.start(job["prompt"])
        job["reported"] = 0
        tokens = 0
        responses = 0
        reason = "cancelled"
        for _ in range(job["max_tokens"]):
            if request.is_cancelled() or self.stopping.is_set():
                break
            if self.delay > 0:
                time.sleep(self.delay)
            word = self.chain.next(state, job["temperature"], job["rng"])
            state = [state[1], key(word)]
            tokens += 1
            piece = gen.add(" " + word)
            last = gen.stopped or tokens == job["max_tokens"]
            if last:
                piece += gen.flush()
                reason = "stop" if gen.stopped else "length"
            if job["stream"] and last:
                # A last token cut out still has its counts and the reason to carry, when asked for.
                if piece != "" or job["wanted"]:
                    sender.send(text_response(piece, self.extras(job, tokens, reason)), flags=FINAL)
                    responses += 1
                else:
                    sender.send(flags=FINAL)
            elif job["stream"] and piece != "":
                sender.send(text_response(piece, self.extras(job, tokens, "None")))
                responses += 1
            if last:
                break
        if reason == "cancelled":
            sender.send(flags=FINAL)
        elif not job["stream"]:
            text = (job["prompt"] if job["prepend"] else "") + gen.text
            sender.send(text_response(text, self.extras(job, tokens, reason)), flags=FINAL)
            responses += 1
        self.report(request, tokens, responses, reason)

    def report(self, request, tokens, responses, reason):
        if self.report_file == "":
            return
        line = json.dumps(
            {"id": request.request_id(), "tokens": tokens, "responses": responses, "reason": reason}
        )
        with self.lock:
            with open(self.report_file, "a", encoding="utf-8") as f:
                f.write(line + "\\n")

    def finalize(self):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=5)
`;

export interface LlmModelOptions {
  /** Model name (default 'llm'). */
  name?: string;
  /** Sleep before each token, ms (default 0). */
  tokenDelayMs?: number;
  /** max_tokens of a request that gives none (default 16, vLLM's). */
  maxTokensDefault?: number;
  /** A file the model appends one JSON line to per finished request (default: none). */
  reportFile?: string;
  /**
   * List the vLLM backend's additional outputs in the config (`return_*` inputs, `finish_reason`,
   * `num_input_tokens`, `num_output_tokens`), as a model that reports its own counts (default true).
   */
  additionalOutputs?: boolean;
}

/** The vLLM backend's additional outputs: the inputs that ask for them, and the outputs. */
const ADDITIONAL_INPUTS = `,
  { name: "return_finish_reason" data_type: TYPE_BOOL dims: [ 1 ] optional: true },
  { name: "return_num_input_tokens" data_type: TYPE_BOOL dims: [ 1 ] optional: true },
  { name: "return_num_output_tokens" data_type: TYPE_BOOL dims: [ 1 ] optional: true }`;
const ADDITIONAL_OUTPUTS = `,
  { name: "finish_reason" data_type: TYPE_STRING dims: [ -1 ] },
  { name: "num_input_tokens" data_type: TYPE_UINT32 dims: [ -1 ] },
  { name: "num_output_tokens" data_type: TYPE_UINT32 dims: [ -1 ] }`;

/** The model's config.pbtxt. */
export function llmConfig(options: LlmModelOptions = {}): string {
  const params: Record<string, string> = {
    corpus: LLM_CORPUS,
    token_delay_ms: String(options.tokenDelayMs ?? 0),
    max_tokens_default: String(options.maxTokensDefault ?? 16),
  };
  if (options.reportFile !== undefined) params.report_file = options.reportFile;
  const extra = options.additionalOutputs ?? true;
  const parameters = Object.entries(params)
    .map(([k, v]) => `  { key: ${JSON.stringify(k)} value: { string_value: ${JSON.stringify(v)} } }`)
    .join(',\n');
  return `name: ${JSON.stringify(options.name ?? 'llm')}
backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [
  { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },
  { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true },
  { name: "sampling_parameters" data_type: TYPE_STRING dims: [ 1 ] optional: true },
  { name: "exclude_input_in_output" data_type: TYPE_BOOL dims: [ 1 ] optional: true }${extra ? ADDITIONAL_INPUTS : ''}
]
output [
  { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] }${extra ? ADDITIONAL_OUTPUTS : ''}
]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters [
${parameters}
]
`;
}

/** Writes the model into `repository` (`<name>/config.pbtxt`, `<name>/1/model.py`); returns its name. */
export function writeLlmModel(repository: string, options: LlmModelOptions = {}): string {
  const name = options.name ?? 'llm';
  mkdirSync(join(repository, name, '1'), { recursive: true });
  writeFileSync(join(repository, name, 'config.pbtxt'), llmConfig(options));
  writeFileSync(join(repository, name, '1', 'model.py'), LLM_MODEL_PY);
  return name;
}

/** One line of the model's report file. */
export interface LlmReport {
  id: string;
  tokens: number;
  responses: number;
  reason: 'length' | 'stop' | 'cancelled';
}

/** The lines of a report file so far ([] before the first). */
export function readLlmReports(file: string): LlmReport[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LlmReport);
}
