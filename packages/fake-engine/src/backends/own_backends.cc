// The three test backends, as Triton's identity, repeat and square behave:
//   identity: copies INPUTn to OUTPUTn; one FINAL response per request; the
//             whole batch shares one execution (execute_delay_ms sleeps).
//   repeat:   decoupled; the instance thread starts a stream thread for
//             the request, waits WAIT ms and releases the request (also
//             after a bad request's error response); the stream thread
//             sends one response per IN element, then a NULL response with
//             FINAL. Ignores cancellation.
//   square:   decoupled; releases the request at once, a stream thread
//             sends IN responses (stopping early when cancelled), then NULL
//             FINAL.
// The fake's own text backend, fake_text_stream, is in text_stream.cc (its
// embedding backend, fake_text_embedding, in text_embedding.cc);
// responses are made and delivered through core/response.h.
// Like the real backends, every decoupled request gets its own stream
// thread, so streams of one instance run at the same time and responses
// keep coming after RELEASE_ALL.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>
#include <thread>

#include "../config/data_types.h"
#include "../core/error.h"
#include "../core/process_state.h"
#include "../core/response.h"
#include "../support/clock.h"
#include "../support/cuda_copy.h"
#include "../support/log.h"
#include "backends.h"
#include "../scheduling/sequence_batcher.h"
#include "onnxruntime_backend.h"
#include "stand_ins.h"

namespace fake {

namespace {

// Reads a whole input into host memory (inputs may live on the GPU).
std::string ReadInput(const RequestInput& in, std::vector<char>* out) {
  out->resize(in.total);
  size_t off = 0;
  for (const auto& d : in.data) {
    std::string e = CopyBuffer(out->data() + off, TRITONSERVER_MEMORY_CPU, 0,
                               d.base, d.type, d.type_id, d.size, in.name);
    if (!e.empty()) return e;
    off += d.size;
  }
  return "";
}

// The outputs a decoupled backend creates in every response, by name, in
// its order (those the config lacks are left out).
std::vector<const TensorConfig*> BackendOutputs(
    const Model* m, std::initializer_list<const char*> names) {
  std::vector<const TensorConfig*> out;
  for (const char* n : names) {
    for (const auto& t : m->config.output) {
      if (t.name == n) out.push_back(&t);
    }
  }
  return out;
}

void Sleep(uint64_t ns) {
  if (ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
}

void AddFail(Model* m, TRITONSERVER_InferenceRequest* r) {
  std::lock_guard<std::mutex> lock(m->stats.mu);
  m->stats.fail.Add(SteadyNs() - r->request_start_ns);
  ++m->stats.fail_backend;
}

void AddExecution(Model* m, uint64_t batch, uint64_t input, uint64_t infer,
                  uint64_t output) {
  std::lock_guard<std::mutex> lock(m->stats.mu);
  ++m->stats.execution_count;
  BatchStat& b = m->stats.batch[batch];
  b.input.Add(input);
  b.infer.Add(infer);
  b.output.Add(output);
}

void AddSuccess(Model* m, TRITONSERVER_InferenceRequest* r, uint64_t start,
                uint64_t input, uint64_t infer, uint64_t output) {
  std::lock_guard<std::mutex> lock(m->stats.mu);
  ModelStats& s = m->stats;
  s.success.Add(SteadyNs() - r->request_start_ns);
  s.queue.Add(start - r->queue_start_ns);
  s.compute_input.Add(input);
  s.compute_infer.Add(infer);
  s.compute_output.Add(output);
  s.inference_count += r->batch_size;
  s.last_inference_ms = WallMs();
  if (r->step_totals != nullptr) {
    std::lock_guard<std::mutex> totals_lock(r->step_totals->mu);
    r->step_totals->input_ns += input;
    r->step_totals->infer_ns += infer;
    r->step_totals->output_ns += output;
  }
}

void ReportCompute(TRITONSERVER_InferenceTrace* trace, uint64_t start,
                   uint64_t input_end, uint64_t output_start, uint64_t end) {
  if (trace == nullptr) return;
  trace->Report(TRITONSERVER_TRACE_COMPUTE_START, start);
  trace->Report(TRITONSERVER_TRACE_COMPUTE_INPUT_END, input_end);
  trace->Report(TRITONSERVER_TRACE_COMPUTE_OUTPUT_START, output_start);
  trace->Report(TRITONSERVER_TRACE_COMPUTE_END, end);
}

// A decoupled stream handed from the execute thread to its own stream
// thread.
struct StreamJob {
  std::shared_ptr<Model> model;
  ResponseTarget target;
  std::shared_ptr<std::atomic<bool>> cancelled;
  std::vector<int32_t> in;
  std::vector<uint32_t> delay;
  int32_t square_n = 0;
  std::vector<const TensorConfig*> outputs;  // requested, config order
};
void RunStream(StreamJob* job);

// The job holds the model (shared_ptr and a reference), so the model cannot
// be finalized or destroyed before the thread has sent FINAL; after that the
// thread touches nothing but its own job.
void PushStream(StreamJob* job, bool inline_mode) {
  RunStreamThread(job->model->engine.get(), inline_mode, [job] {
    RunStream(job);
    delete job;
  });
}

}  // namespace

void RunStreamThread(Engine* engine, bool inline_mode,
                     std::function<void()> run) {
  engine->active_inferences.fetch_add(1);  // until its FINAL
  if (!inline_mode) {
    try {
      BackendWorkBegin();
      std::thread([run] {
        run();
        BackendWorkEnd();
      }).detach();
      return;
    } catch (const std::system_error& e) {
      BackendWorkEnd();
      LogError(std::string("cannot start a stream thread (") + e.what() +
               "); answering on the instance thread");
    }
  }
  run();
}

namespace {

// Triton's backend sees a request's inputs in the order of a second
// unordered_map filled from the first in its iteration order; identity
// takes the batch dimension from the first of them.
const RequestInput* FirstBackendInput(const TRITONSERVER_InferenceRequest* r) {
  std::unordered_map<std::string, const RequestInput*> backend_view;
  for (const auto& kv : r->inputs) backend_view.emplace(kv.first, &kv.second);
  return backend_view.empty() ? nullptr : backend_view.begin()->second;
}

// A requested output whose optional input was left out: zeros of the
// input's config shape (-1 dims as 1, with the batch dimension when there
// is one). Null, or the error that ends the response.
TRITONSERVER_Error* ZerosForMissingInput(Model* m,
                                         TRITONSERVER_InferenceRequest* r,
                                         TRITONSERVER_InferenceResponse* resp,
                                         const TensorConfig* oc,
                                         const std::string& in_name,
                                         int64_t batch_dim) {
  const TensorConfig* ic = nullptr;
  for (const auto& t : m->config.input) {
    if (t.name == in_name) ic = &t;
  }
  if (ic == nullptr || !ic->optional) {
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               "failed to get input '" + in_name + "'");
  }
  std::vector<int64_t> shape = ic->has_reshape ? ic->reshape : ic->dims;
  for (int64_t& d : shape) d = d == -1 ? 1 : d;
  if (batch_dim != 0) shape.insert(shape.begin(), batch_dim);
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  const size_t bytes =
      static_cast<size_t>(elements) * DataTypeSize(ic->datatype);
  ResponseOutput* o = nullptr;
  TRITONSERVER_Error* err =
      AllocateOutput(resp, r->target, oc, shape, bytes, &o);
  if (err == nullptr && o->memory_type == TRITONSERVER_MEMORY_GPU) {
    err = Err(TRITONSERVER_ERROR_UNSUPPORTED,
              "failed to create CPU output buffer");
  }
  if (err != nullptr) return err;
  if (bytes > 0 && o->buffer == nullptr) {
    return Err(TRITONSERVER_ERROR_INTERNAL,
               in_name + ": attempted a copy of " + std::to_string(bytes) +
                   " Bytes to an uninitialized memory");
  }
  if (bytes > 0) std::memset(o->buffer, 0, bytes);
  return nullptr;
}

// OUTPUTn as a copy of INPUTn (shape as the backend sees it). Null, or the
// error that ends the response.
TRITONSERVER_Error* CopyInputToOutput(TRITONSERVER_InferenceRequest* r,
                                      TRITONSERVER_InferenceResponse* resp,
                                      const TensorConfig* oc,
                                      const RequestInput* in) {
  ResponseOutput* o = nullptr;
  TRITONSERVER_Error* err =
      AllocateOutput(resp, r->target, oc, in->batch_shape, in->total, &o);
  if (err != nullptr) return err;
  size_t off = 0;
  for (const auto& d : in->data) {
    std::string e = CopyBuffer(static_cast<char*>(o->buffer) + off,
                               o->memory_type, o->memory_type_id, d.base,
                               d.type, d.type_id, d.size, in->name);
    if (!e.empty()) return Err(TRITONSERVER_ERROR_INTERNAL, e);
    off += d.size;
  }
  return nullptr;
}

// One request of an identity execution, as Triton's identity backend
// answers it: OUTPUTn copies INPUTn (shape as the backend sees it); a
// requested output whose optional input was left out is zeros of the
// input's config shape (-1 dims as 1, with the batch dimension when there
// is one); an error ends the response (outputs made so far stay on it).
void IdentityRespond(Model* m, TRITONSERVER_InferenceRequest* r,
                     TRITONSERVER_InferenceResponse* resp) {
  const ModelConfig& c = m->config;
  // Identity reads the correlation ID as an integer first.
  if (r->corr_is_string) {
    resp->error = ErrArg(r->Prefix() +
                         "correlation ID in request is not an unsigned int");
    return;
  }
  int64_t batch_dim = 0;
  if (c.max_batch_size > 0) {
    const RequestInput* first = FirstBackendInput(r);
    if (first != nullptr && !first->batch_shape.empty()) {
      batch_dim = first->batch_shape[0];
    }
  }
  for (const TensorConfig* oc : r->outputs_to_send) {
    const std::string in_name = "INPUT" + oc->name.substr(6);
    const RequestInput* in = r->FindInput(in_name);
    TRITONSERVER_Error* err =
        in == nullptr ? ZerosForMissingInput(m, r, resp, oc, in_name, batch_dim)
                      : CopyInputToOutput(r, resp, oc, in);
    if (err != nullptr) {
      resp->error = err;
      return;
    }
  }
  resp->identity_params = true;
}

// An echo_request model's response parameters, each a string "<type>:<value>"
// so that JS sees the type the request gave (an int 3 and a double 3 are
// both 3 in JS): the request's own parameters as "request.<name>", then its
// correlation id ("uint:" or "string:"), priority and timeout.
void EchoRequest(const TRITONSERVER_InferenceRequest& r,
                 TRITONSERVER_InferenceResponse* resp) {
  auto add = [resp](const std::string& name, const std::string& value) {
    resp->extra_params.push_back(std::make_unique<TRITONSERVER_Parameter>());
    TRITONSERVER_Parameter* p = resp->extra_params.back().get();
    p->name = "request." + name;
    p->type = TRITONSERVER_PARAMETER_STRING;
    p->str = value;
  };
  for (const auto& in : r.parameters) {
    switch (in->type) {
      case TRITONSERVER_PARAMETER_STRING:
        add(in->name, "string:" + in->str);
        break;
      case TRITONSERVER_PARAMETER_INT:
        add(in->name, "int:" + std::to_string(in->i));
        break;
      case TRITONSERVER_PARAMETER_BOOL:
        add(in->name, in->b ? "bool:true" : "bool:false");
        break;
      case TRITONSERVER_PARAMETER_DOUBLE: {
        char text[40];
        std::snprintf(text, sizeof(text), "double:%.17g", in->d);
        add(in->name, text);
        break;
      }
      default:
        add(in->name, "bytes:" + std::to_string(in->str.size()));
        break;
    }
  }
  add("correlation_id", r.corr_is_string ? "string:" + r.corr_str
                                         : "uint:" + std::to_string(r.corr_id));
  add("priority", "uint:" + std::to_string(r.priority));
  add("timeout_us", "uint:" + std::to_string(r.timeout_us));
  add("flags", "uint:" + std::to_string(r.flags));
}

// Each request's response from the model's backend, in `resps` (the
// onnxruntime backend answered the whole batch before).
void RespondEach(Model* m, const std::vector<TRITONSERVER_InferenceRequest*>& b,
                 TRITONSERVER_InferenceResponse** resps) {
  for (size_t i = 0; i < b.size(); ++i) {
    if (m->backend == BackendKind::kOnnxRuntime) continue;
    if (m->backend == BackendKind::kStandIn) {
      StandInRespond(m, b[i], resps[i]);
      continue;
    }
    if (m->backend == BackendKind::kTextEmbedding) {
      TextEmbeddingRespond(m, b[i], resps[i]);
      continue;
    }
    IdentityRespond(m, b[i], resps[i]);
    if (m->echo_request && resps[i]->error == nullptr) {
      EchoRequest(*b[i], resps[i]);
    }
  }
}

// Sends each request its response, counted in the model's statistics and
// reported to its trace with the execution's times.
void DeliverEach(Model* m, const std::vector<TRITONSERVER_InferenceRequest*>& b,
                 TRITONSERVER_InferenceResponse** resps, uint64_t start,
                 uint64_t input_end, uint64_t output_start, uint64_t end) {
  for (size_t i = 0; i < b.size(); ++i) {
    TRITONSERVER_InferenceRequest* r = b[i];
    TRITONSERVER_InferenceResponse* resp = resps[i];
    if (r->trace != nullptr) {
      ReportCompute(r->trace, start, input_end, output_start, end);
      r->trace->Report(TRITONSERVER_TRACE_REQUEST_END, SteadyNs());
      resp->trace = r->trace;  // released when the response is deleted
    }
    if (resp->error == nullptr) {
      AddSuccess(m, r, start, input_end - start, output_start - input_end,
                 end - output_start);
    } else {
      AddFail(m, r);
    }
    DeliverResponse(r->target, resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  }
}

}  // namespace

void IdentityExecute(Model* m, std::vector<TRITONSERVER_InferenceRequest*>& b,
                     bool inline_mode) {
  (void)inline_mode;
  const uint64_t start = SteadyNs();
  const size_t n = b.size();
  TRITONSERVER_InferenceResponse* small[8];
  std::vector<TRITONSERVER_InferenceResponse*> big;
  TRITONSERVER_InferenceResponse** resps = small;
  if (n > 8) {
    big.resize(n);
    resps = big.data();
  }
  uint64_t batch = 0, in_bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
    resps[i] = NewResponse(b[i]->model, b[i]->target);
    batch += b[i]->batch_size;
    for (const auto& kv : b[i]->inputs) in_bytes += kv.second.total;
  }
  const uint64_t input_end = SteadyNs();
  Sleep(m->execute_delay_ms * 1000000ull);
  if (m->backend == BackendKind::kOnnxRuntime) {
    OnnxRuntimeRespond(m, b, resps);
  }
  const uint64_t output_start = SteadyNs();
  RespondEach(m, b, resps);
  const uint64_t end = SteadyNs();
  {
    std::lock_guard<std::mutex> lock(m->stats.mu);
    m->stats.input_bytes += in_bytes;
  }
  // A sequence's next request runs once this one's response went out and
  // it was released, as in Triton (the batcher schedules it after the
  // backend's execute returned): its response can never overtake this one.
  std::vector<std::pair<std::string, bool>> steps;
  if (m->config.has_sequence_batching) {
    for (auto* r : b) {
      steps.emplace_back(
          SequenceKey(r),
          (r->flags & TRITONSERVER_REQUEST_FLAG_SEQUENCE_END) != 0);
    }
  }
  DeliverEach(m, b, resps, start, input_end, output_start, end);
  // Triton's identity backend reports the execution before it releases the
  // requests, so a released request's execution is already counted (an
  // ensemble's release, which waits for its steps' releases, too); its
  // onnxruntime backend releases first and reports after.
  const bool report_first = m->backend == BackendKind::kIdentity;
  if (report_first) {
    AddExecution(m, batch, input_end - start, output_start - input_end,
                 end - output_start);
  }
  for (size_t i = 0; i < n; ++i) ReleaseRequest(b[i]);
  for (const auto& step : steps) SequenceStepDone(m, step.first, step.second);
  if (!report_first) {
    AddExecution(m, batch, input_end - start, output_start - input_end,
                 end - output_start);
  }
}

void RepeatExecute(Model* m, TRITONSERVER_InferenceRequest* r,
                   bool inline_mode) {
  const uint64_t start = SteadyNs();
  m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
  std::vector<char> in_raw, delay_raw, wait_raw;
  RequestInput* in = r->FindInput("IN");
  RequestInput* delay = r->FindInput("DELAY");
  RequestInput* wait = r->FindInput("WAIT");
  std::string e = ReadInput(*in, &in_raw);
  if (e.empty()) e = ReadInput(*delay, &delay_raw);
  if (e.empty()) e = ReadInput(*wait, &wait_raw);
  uint32_t wait_ms = 0;
  if (wait_raw.size() >= 4) std::memcpy(&wait_ms, wait_raw.data(), 4);
  TRITONSERVER_Error* bad = nullptr;
  if (!e.empty()) {
    bad = Err(TRITONSERVER_ERROR_INTERNAL, e);
  } else if (in->shape != delay->shape) {
    bad = ErrArg("expected IN and DELAY shape to match, got " +
                 ShapeString(in->shape) + " and " + ShapeString(delay->shape));
  }
  if (bad != nullptr) {
    // Real repeat answers a bad request with one error response, then still
    // waits WAIT ms, reports the request as a success and releases it.
    SendErrorResponse(r, bad, true);
    const uint64_t input_end = SteadyNs();
    Sleep(wait_ms * 1000000ull);
    const uint64_t end = SteadyNs();
    AddSuccess(m, r, start, 0, end - input_end, 0);
    ReleaseRequest(r);
    AddExecution(m, 1, 0, end - input_end, 0);
    return;
  }
  auto* job = new StreamJob();
  job->model = r->model;
  job->target = r->target;
  job->cancelled = r->cancelled;
  // Real repeat makes OUT and IDX in every response, requested or not.
  job->outputs = BackendOutputs(m, {"OUT", "IDX"});
  job->in.resize(in_raw.size() / 4);
  std::memcpy(job->in.data(), in_raw.data(), job->in.size() * 4);
  job->delay.resize(delay_raw.size() / 4);
  std::memcpy(job->delay.data(), delay_raw.data(), job->delay.size() * 4);
  m->AddRef();
  const uint64_t input_end = SteadyNs();
  PushStream(job, inline_mode);
  Sleep(wait_ms * 1000000ull);
  const uint64_t end = SteadyNs();
  if (r->trace != nullptr) {
    ReportCompute(r->trace, start, input_end, end, end);
    r->trace->Report(TRITONSERVER_TRACE_REQUEST_END, SteadyNs());
    r->trace->Release();
  }
  AddSuccess(m, r, start, 0, end - input_end, 0);
  ReleaseRequest(r);
  AddExecution(m, 1, 0, end - input_end, 0);
}

void SquareExecute(Model* m, TRITONSERVER_InferenceRequest* r,
                   bool inline_mode) {
  m->stats.pending.fetch_sub(1, std::memory_order_relaxed);
  std::vector<char> raw;
  std::string e = ReadInput(*r->FindInput("IN"), &raw);
  int32_t count = 0;
  if (e.empty() && raw.size() >= 4) std::memcpy(&count, raw.data(), 4);
  if (!e.empty() || count < 0) {
    FailRequest(m, r,
                e.empty() ? ErrArg("square: IN must not be negative, got " +
                                   std::to_string(count))
                          : Err(TRITONSERVER_ERROR_INTERNAL, e),
                true);
    return;
  }
  auto* job = new StreamJob();
  job->model = r->model;
  job->target = r->target;
  job->cancelled = r->cancelled;
  job->outputs = BackendOutputs(m, {"OUT"});
  job->square_n = count;
  m->AddRef();
  if (r->trace != nullptr) {
    r->trace->Report(TRITONSERVER_TRACE_REQUEST_END, SteadyNs());
    r->trace->Release();
  }
  ReleaseRequest(r);  // square lets go of the request before answering
  PushStream(job, inline_mode);
}

namespace {

void RunStream(StreamJob* job) {
  Model* m = job->model.get();
  const ResponseTarget& t = job->target;
  const bool repeat = m->backend == BackendKind::kRepeat;
  const size_t n = repeat ? job->in.size() : static_cast<size_t>(job->square_n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t t0 = SteadyNs();
    if (!repeat && job->cancelled->load()) {
      std::lock_guard<std::mutex> lock(m->stats.mu);
      m->stats.response[i].cancel.Add(SteadyNs() - t0);
      break;
    }
    Sleep(repeat ? (i < job->delay.size() ? job->delay[i] : 0) * 1000000ull
                 : m->square_delay_ns);
    const uint64_t t1 = SteadyNs();
    TRITONSERVER_InferenceResponse* resp = NewResponse(job->model, t);
    for (const TensorConfig* oc : job->outputs) {
      int32_t value = 0;
      if (oc->name == "OUT") {
        value = repeat ? job->in[i] : job->square_n;
      } else {
        value = static_cast<int32_t>(i);  // IDX
      }
      ResponseOutput* o = nullptr;
      TRITONSERVER_Error* err = AllocateOutput(resp, t, oc, {1}, 4, &o);
      if (err == nullptr) {
        std::string ce =
            CopyBuffer(o->buffer, o->memory_type, o->memory_type_id, &value,
                       TRITONSERVER_MEMORY_CPU, 0, 4, oc->name);
        if (!ce.empty()) err = Err(TRITONSERVER_ERROR_INTERNAL, ce);
      }
      if (err != nullptr) {
        resp->error = err;
        break;
      }
    }
    const bool failed = resp->error != nullptr;
    DeliverResponse(t, resp, 0);
    const uint64_t t2 = SteadyNs();
    if (!repeat) {
      std::lock_guard<std::mutex> lock(m->stats.mu);
      ResponseStat& s = m->stats.response[i];
      if (failed) {
        s.fail.Add(t2 - t0);
      } else {
        s.compute_infer.Add(t1 - t0);
        s.compute_output.Add(t2 - t1);
        s.success.Add(t2 - t0);
      }
    }
    if (failed) break;
  }
  DeliverResponse(t, nullptr, TRITONSERVER_RESPONSE_COMPLETE_FINAL);
  m->engine->active_inferences.fetch_sub(1);
  m->Release();
}

}  // namespace

}  // namespace fake
