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
  if (s->max_tokens > 1000000) {
    return "sampling_parameters: max_tokens above 1000000";
  }
  return "";
}

// The words to generate: max_tokens of the prompt's words, cycling, cut
// before the first stop word.
std::vector<std::string> Generate(const std::vector<std::string>& prompt,
                                  const Sampling& s) {
  std::vector<std::string> out;
  if (prompt.empty()) return out;
  const size_t n =
      s.max_tokens < 0 ? prompt.size() : static_cast<size_t>(s.max_tokens);
  for (size_t i = 0; i < n; ++i) {
    const std::string& w = prompt[i % prompt.size()];
    for (const auto& stop : s.stop) {
      if (w == stop) return out;
    }
    out.push_back(w);
  }
  return out;
}

// One response with text_output = [text]; false when it failed.
bool SendText(TextJob* job, const std::string& text) {
  TRITONSERVER_InferenceResponse* resp = NewResponse(job->model, job->target);
  std::string bytes(4 + text.size(), '\0');
  const uint32_t n = static_cast<uint32_t>(text.size());
  std::memcpy(&bytes[0], &n, 4);
  std::memcpy(&bytes[4], text.data(), text.size());
  ResponseOutput* o = nullptr;
  TRITONSERVER_Error* err =
      AllocateOutput(resp, job->target, job->output, {1}, bytes.size(), &o);
  if (err == nullptr) {
    std::string e =
        CopyBuffer(o->buffer, o->memory_type, o->memory_type_id, bytes.data(),
                   TRITONSERVER_MEMORY_CPU, 0, bytes.size(), job->output->name);
    if (!e.empty()) err = Err(TRITONSERVER_ERROR_INTERNAL, e);
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
      ok = SendText(job, piece);
      RecordWord(m, i, t0, ok);
    } else {
      text += (text.empty() || i > 0 ? "" : " ") + piece;
    }
  }
  if (ok && !job->stream) SendText(job, text);
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
  }
  job->stream = stream;
  job->words = Generate(Words(prompt), sampling);
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
