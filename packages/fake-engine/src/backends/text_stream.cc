// fake_text_stream: the fake's own text backend (no Triton backend has this
// name), shaped like the vLLM example model of Triton's guidance so that
// the gateway's OpenAI routes can be tested without an LLM:
//   inputs  text_input (BYTES [1]); optional stream (BOOL [1]),
//           sampling_parameters (BYTES [1], a JSON object),
//           exclude_input_in_output (BOOL [1]);
//   output  text_output (BYTES).
// It "generates" the prompt's words again, one per word_delay_ms (config
// parameter, default 0): max_tokens words (sampling_parameters, else the
// request parameter max_tokens, else as many as the prompt has), cycling
// through the prompt, stopping before a word listed in `stop`. With stream
// true it sends one response per word (" word" after the first), else one
// response with the whole text (the prompt first unless
// exclude_input_in_output; a stream with exclude_input_in_output false is
// refused, as the vLLM backend refuses it); then a NULL response with
// FINAL. Like square it releases the request at once and answers from a
// stream thread of its own, and stops early when the request is cancelled.
// With temperature > 0 and a seed it starts at word seed mod the prompt's
// length ("sampling": different seeds, different texts; a seed, one text).
// Like the vLLM backend's additional outputs, BOOL inputs
// return_finish_reason, return_num_input_tokens and return_num_output_tokens
// (where the config has them and the outputs finish_reason BYTES,
// num_input_tokens and num_output_tokens UINT32) add to every response its
// finish reason ("length", "stop"; "None" before the last word), the
// prompt's words and the words since the previous response; a stop word
// counts as generated (vLLM generates the token, then cuts it out), and a
// stream stopped by one ends with an empty response that carries it.
#include <cstring>
#include <sstream>
#include <system_error>
#include <thread>

#include "../core/error.h"
#include "../core/response.h"
#include "../support/clock.h"
#include "../support/cuda_copy.h"
#include "../support/json.h"
#include "backends.h"

namespace fake {
namespace {

struct TextJob {
  std::shared_ptr<Model> model;
  ResponseTarget target;
  std::shared_ptr<std::atomic<bool>> cancelled;
  const TensorConfig* output = nullptr;
  std::vector<std::string> words;  // to generate, in order
  std::string prefix;              // the prompt, in a non-streaming answer
  bool stream = false;
  // The additional outputs asked for (null: not asked, or not in the config).
  const TensorConfig* finish_reason = nullptr;
  const TensorConfig* num_input_tokens = nullptr;
  const TensorConfig* num_output_tokens = nullptr;
  uint32_t prompt_words = 0;
  bool stopped = false;  // a stop word ended the words
  std::string reason;    // the finish reason once the words are out
  bool Reports() const {
    return finish_reason != nullptr || num_input_tokens != nullptr ||
           num_output_tokens != nullptr;
  }
};

// The whole input in host memory.
std::string ReadAll(const RequestInput& in, std::string* out) {
  out->resize(in.total);
  size_t off = 0;
  for (const auto& d : in.data) {
    std::string e = CopyBuffer(&(*out)[off], TRITONSERVER_MEMORY_CPU, 0, d.base,
                               d.type, d.type_id, d.size, in.name);
    if (!e.empty()) return e;
    off += d.size;
  }
  return "";
}

// The first element of a BYTES input (4-byte little-endian length, then
// the bytes); "" into *problem when it reads.
std::string FirstString(TRITONSERVER_InferenceRequest* r, const char* name,
                        std::string* problem) {
  RequestInput* in = r->FindInput(name);
  if (in == nullptr) return "";
  std::string raw;
  *problem = ReadAll(*in, &raw);
  if (!problem->empty()) return "";
  uint32_t n = 0;
  if (raw.size() < 4) {
    *problem = std::string(name) + ": expected one BYTES element";
    return "";
  }
  std::memcpy(&n, raw.data(), 4);
  if (raw.size() - 4 < n) {
    *problem = std::string(name) + ": element of " + std::to_string(n) +
               " bytes runs past the input's " + std::to_string(raw.size()) +
               " bytes";
    return "";
  }
  return raw.substr(4, n);
}

bool FirstBool(TRITONSERVER_InferenceRequest* r, const char* name) {
  RequestInput* in = r->FindInput(name);
  if (in == nullptr) return false;
  std::string raw;
  return ReadAll(*in, &raw).empty() && !raw.empty() && raw[0] != 0;
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream s(text);
  std::vector<std::string> out;
  for (std::string w; s >> w;) out.push_back(w);
  return out;
}

// What the request asks for: max_tokens (-1: not given) and stop words.
struct Sampling {
  int64_t max_tokens = -1;
  std::vector<std::string> stop;
  int64_t offset = 0;  // where a seeded sampling starts in the prompt
};

std::string ReadSampling(TRITONSERVER_InferenceRequest* r, Sampling* s) {
  for (const auto& p : r->parameters) {
    if (p->name == "max_tokens" && p->type == TRITONSERVER_PARAMETER_INT) {
      s->max_tokens = p->i;
    }
  }
  std::string problem;
  const std::string text = FirstString(r, "sampling_parameters", &problem);
  if (!problem.empty() || text.empty()) return problem;
  Json doc;
  std::string error;
  if (!Json::Parse(text, &doc, &error) || !doc.is_object()) {
    return "sampling_parameters: expected a JSON object" +
           (error.empty() ? std::string() : " (" + error + ")");
  }
  if (const Json* mt = doc.find("max_tokens")) {
    if (!mt->is_integral() || mt->as_int() < 0) {
      return "sampling_parameters: max_tokens must be a non-negative integer";
    }
    s->max_tokens = mt->as_int();
  }
  if (const Json* stop = doc.find("stop")) {
    if (stop->is_string()) s->stop.push_back(stop->as_string());
    for (size_t i = 0; stop->is_array() && i < stop->size(); ++i) {
      if (stop->at(i).is_string()) s->stop.push_back(stop->at(i).as_string());
    }
  }
  const Json* seed = doc.find("seed");
  const Json* temperature = doc.find("temperature");
  if (seed != nullptr && seed->is_integral() && temperature != nullptr &&
      temperature->is_number() && temperature->as_double() > 0) {
    s->offset = seed->as_int();
  }
  if (s->max_tokens > 1000000) {
    return "sampling_parameters: max_tokens above 1000000";
  }
  return "";
}

// The words to generate: max_tokens of the prompt's words, cycling from
// the sampling's offset, cut before the first stop word (*stopped then).
std::vector<std::string> Generate(const std::vector<std::string>& prompt,
                                  const Sampling& s, bool* stopped) {
  std::vector<std::string> out;
  *stopped = false;
  if (prompt.empty()) return out;
  const size_t n =
      s.max_tokens < 0 ? prompt.size() : static_cast<size_t>(s.max_tokens);
  const int64_t size = static_cast<int64_t>(prompt.size());
  const size_t start = static_cast<size_t>(((s.offset % size) + size) % size);
  for (size_t i = 0; i < n; ++i) {
    const std::string& w = prompt[(start + i) % prompt.size()];
    for (const auto& stop : s.stop) {
      if (w == stop) {
        *stopped = true;
        return out;
      }
    }
    out.push_back(w);
  }
  return out;
}

// One BYTES element: its 4-byte little-endian length, then the bytes.
std::string BytesElement(const std::string& text) {
  std::string bytes(4 + text.size(), '\0');
  const uint32_t n = static_cast<uint32_t>(text.size());
  std::memcpy(&bytes[0], &n, 4);
  std::memcpy(&bytes[4], text.data(), text.size());
  return bytes;
}

std::string Uint32Element(uint32_t v) {
  std::string bytes(4, '\0');
  std::memcpy(&bytes[0], &v, 4);
  return bytes;
}

// Adds output `cfg` of shape [1] holding `bytes` to the response.
TRITONSERVER_Error* AddOutput(TRITONSERVER_InferenceResponse* resp,
                              TextJob* job, const TensorConfig* cfg,
                              const std::string& bytes) {
  ResponseOutput* o = nullptr;
  TRITONSERVER_Error* err =
      AllocateOutput(resp, job->target, cfg, {1}, bytes.size(), &o);
  if (err != nullptr) return err;
  std::string e =
      CopyBuffer(o->buffer, o->memory_type, o->memory_type_id, bytes.data(),
                 TRITONSERVER_MEMORY_CPU, 0, bytes.size(), cfg->name);
  return e.empty() ? nullptr : Err(TRITONSERVER_ERROR_INTERNAL, e);
}

// One response with text_output = [text], and the additional outputs asked
// for: `reason` ("None" before the end) and `words` generated since the
// previous response. False when it failed.
bool SendText(TextJob* job, const std::string& text, const std::string& reason,
              uint32_t words) {
  TRITONSERVER_InferenceResponse* resp = NewResponse(job->model, job->target);
  TRITONSERVER_Error* err =
      AddOutput(resp, job, job->output, BytesElement(text));
  if (err == nullptr && job->finish_reason != nullptr) {
    err = AddOutput(resp, job, job->finish_reason, BytesElement(reason));
  }
  if (err == nullptr && job->num_input_tokens != nullptr) {
    err = AddOutput(resp, job, job->num_input_tokens,
                    Uint32Element(job->prompt_words));
  }
  if (err == nullptr && job->num_output_tokens != nullptr) {
    err = AddOutput(resp, job, job->num_output_tokens, Uint32Element(words));
  }
  resp->error = err;
  DeliverResponse(job->target, resp, 0);
  return err == nullptr;
}

void RecordWord(Model* m, size_t index, uint64_t t0, bool ok) {
  std::lock_guard<std::mutex> lock(m->stats.mu);
  ResponseStat& s = m->stats.response[index];
  const uint64_t d = SteadyNs() - t0;
  if (ok) {
    s.compute_infer.Add(d);
    s.success.Add(d);
  } else {
    s.fail.Add(d);
  }
}

void RunTextStream(TextJob* job) {
  Model* m = job->model.get();
  std::string text = job->prefix;
  bool ok = true;
  for (size_t i = 0; ok && i < job->words.size(); ++i) {
    const uint64_t t0 = SteadyNs();
    if (job->cancelled->load()) {
      std::lock_guard<std::mutex> lock(m->stats.mu);
      m->stats.response[i].cancel.Add(0);
      ok = false;
      break;
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(m->word_delay_ns));
    const std::string piece = (i == 0 ? "" : " ") + job->words[i];
    if (job->stream) {
      const bool last = i + 1 == job->words.size() && !job->stopped;
      ok = SendText(job, piece, last ? job->reason : "None", 1);
      RecordWord(m, i, t0, ok);
    } else {
      text += (text.empty() || i > 0 ? "" : " ") + piece;
    }
  }
  // The stop word, generated and cut out: its count and the reason still go
  // out.
  const uint32_t cut = job->stopped ? 1 : 0;
  if (ok && !job->stream) {
    SendText(job, text, job->reason,
             static_cast<uint32_t>(job->words.size()) + cut);
  } else if (ok && job->Reports() && (job->stopped || job->words.empty())) {
    SendText(job, "", job->reason, cut);
  }
  DeliverResponse(job->target, nullptr, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  m->engine->active_inferences.fetch_sub(1);
  m->Release();
}

void StartTextStream(TextJob* job, bool inline_mode) {
  RunStreamThread(job->model->engine.get(), inline_mode, [job] {
    RunTextStream(job);
    delete job;
  });
}

}  // namespace

void TextStreamExecute(Model* m, TRITONSERVER_InferenceRequest* r,
                       bool inline_mode) {
  m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
  std::string problem;
  const std::string prompt = FirstString(r, "text_input", &problem);
  Sampling sampling;
  if (problem.empty()) problem = ReadSampling(r, &sampling);
  // The vLLM backend's rule: a stream never carries the prompt.
  const bool stream = FirstBool(r, "stream");
  if (problem.empty() && stream &&
      r->FindInput("exclude_input_in_output") != nullptr &&
      !FirstBool(r, "exclude_input_in_output")) {
    problem =
        "When streaming, `exclude_input_in_output` = False is not allowed.";
  }
  if (!problem.empty()) {
    FailRequest(m, r, ErrArg(problem), true);
    return;
  }
  auto* job = new TextJob();
  job->model = r->model;
  job->target = r->target;
  job->cancelled = r->cancelled;
  for (const auto& t : m->config.output) {
    if (t.name == "text_output") job->output = &t;
    if (t.name == "finish_reason" && FirstBool(r, "return_finish_reason")) {
      job->finish_reason = &t;
    }
    if (t.name == "num_input_tokens" &&
        FirstBool(r, "return_num_input_tokens")) {
      job->num_input_tokens = &t;
    }
    if (t.name == "num_output_tokens" &&
        FirstBool(r, "return_num_output_tokens")) {
      job->num_output_tokens = &t;
    }
  }
  job->stream = stream;
  const std::vector<std::string> prompt_words = Words(prompt);
  job->prompt_words = static_cast<uint32_t>(prompt_words.size());
  job->words = Generate(prompt_words, sampling, &job->stopped);
  job->reason =
      !job->stopped && sampling.max_tokens >= 0 &&
              job->words.size() == static_cast<size_t>(sampling.max_tokens)
          ? "length"
          : "stop";
  if (!job->stream && !FirstBool(r, "exclude_input_in_output")) {
    job->prefix = prompt;
  }
  m->AddRef();
  if (r->trace != nullptr) {
    r->trace->Report(TRITONSERVER_TRACE_REQUEST_END, SteadyNs());
    r->trace->Release();
  }
  ReleaseRequest(r);  // like square: the request goes before the answers
  StartTextStream(job, inline_mode);
}

}  // namespace fake
