// Stand-in backends: opt-in (TRITONFAKE_SetStandIns, or TRITONFAKE_STAND_INS
// when a server is created), so that a service's model repository whose
// models need backends the fake does not have (onnxruntime, pytorch,
// tensorflow, ...) loads in its CI. A stand-in computes nothing: it answers
// each request with outputs of the configured data type and shape, zeros
// ("zeros") or a copy of a compatible input ("echo"). It says so everywhere:
// a warning when a model loads on it, the model's metadata, the server's
// metadata, and a parameter of every response. Never used unless asked for.
#include "stand_ins.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "../config/data_types.h"
#include "../core/error.h"
#include "../support/cuda_copy.h"
#include "../support/json.h"
#include "../support/log.h"

namespace fake {
namespace {

std::mutex g_stand_ins_mu;
// backend name (or "*") -> "zeros" | "echo".
std::map<std::string, std::string>* g_stand_ins =
    new std::map<std::string, std::string>();  // never freed (exit path)

// Parses "<backend>=<mode>[,...]"; false with the problem on a bad item.
bool ParseSpec(const std::string& spec, std::map<std::string, std::string>* out,
               std::string* error) {
  size_t start = 0;
  while (start < spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(start, end - start);
    const size_t eq = item.find('=');
    const std::string backend = item.substr(0, eq);
    const std::string mode =
        eq == std::string::npos ? std::string() : item.substr(eq + 1);
    if (backend.empty() || (mode != "zeros" && mode != "echo")) {
      *error = "stand-in '" + item +
               "': expected <backend>=<mode> with a backend name (or *) and "
               "mode zeros or echo";
      return false;
    }
    (*out)[backend] = mode;
    start = end + 1;
  }
  return true;
}

const TensorConfig* FindConfig(const std::vector<TensorConfig>& list,
                               const std::string& name) {
  for (const auto& t : list) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// The input an output answers to: the one of the same name, else the one
// at the same position in the config; null when the request lacks it.
const RequestInput* MatchingInput(const ModelConfig& c,
                                  TRITONSERVER_InferenceRequest* r,
                                  const TensorConfig* output) {
  if (const RequestInput* same = r->FindInput(output->name)) return same;
  const size_t index = static_cast<size_t>(output - c.output.data());
  if (index >= c.input.size()) return nullptr;
  return r->FindInput(c.input[index].name);
}

// An input's shape without the request's batch dimension.
std::vector<int64_t> ShapeWithoutBatch(const RequestInput& in, uint64_t batch) {
  if (batch == 0 || in.batch_shape.empty()) return in.batch_shape;
  return std::vector<int64_t>(in.batch_shape.begin() + 1, in.batch_shape.end());
}

bool Fits(const std::vector<int64_t>& dims, const std::vector<int64_t>& shape) {
  if (dims.size() != shape.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != -1 && dims[i] != shape[i]) return false;
  }
  return true;
}

// An output of the configured shape: -1 dimensions from the matching input
// when it has as many dimensions, else 1; the batch dimension in front.
std::vector<int64_t> ZerosShape(const TensorConfig& output,
                                const RequestInput* match, uint64_t batch) {
  const std::vector<int64_t>& dims =
      output.has_reshape ? output.reshape : output.dims;
  std::vector<int64_t> from;
  if (match != nullptr) from = ShapeWithoutBatch(*match, batch);
  std::vector<int64_t> shape;
  if (batch != 0) shape.push_back(static_cast<int64_t>(batch));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != -1) {
      shape.push_back(dims[i]);
    } else {
      shape.push_back(from.size() == dims.size() ? from[i] : 1);
    }
  }
  return shape;
}

TRITONSERVER_Error* Zeros(TRITONSERVER_InferenceRequest* r,
                          TRITONSERVER_InferenceResponse* resp,
                          const TensorConfig* output,
                          std::vector<int64_t> shape) {
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  // BYTES: elements of length 0 (a 4-byte length each).
  const size_t element_size = output->datatype == TRITONSERVER_TYPE_BYTES
                                  ? 4
                                  : DataTypeSize(output->datatype);
  const size_t bytes = static_cast<size_t>(elements) * element_size;
  ResponseOutput* o = nullptr;
  TRITONSERVER_Error* err =
      AllocateOutput(resp, r->target, output, std::move(shape), bytes, &o);
  if (err != nullptr || bytes == 0) return err;
  std::vector<char> zeros(bytes, 0);
  std::string e =
      CopyBuffer(o->buffer, o->memory_type, o->memory_type_id, zeros.data(),
                 TRITONSERVER_MEMORY_CPU, 0, bytes, output->name);
  return e.empty() ? nullptr : Err(TRITONSERVER_ERROR_INTERNAL, e);
}

TRITONSERVER_Error* Echo(TRITONSERVER_InferenceRequest* r,
                         TRITONSERVER_InferenceResponse* resp,
                         const TensorConfig* output, const RequestInput& in) {
  ResponseOutput* o = nullptr;
  TRITONSERVER_Error* err =
      AllocateOutput(resp, r->target, output, in.batch_shape, in.total, &o);
  if (err != nullptr) return err;
  size_t offset = 0;
  for (const InputData& d : in.data) {
    std::string e = CopyBuffer(static_cast<char*>(o->buffer) + offset,
                               o->memory_type, o->memory_type_id, d.base,
                               d.type, d.type_id, d.size, in.name);
    if (!e.empty()) return Err(TRITONSERVER_ERROR_INTERNAL, e);
    offset += d.size;
  }
  return nullptr;
}

}  // namespace

bool StandInFor(const std::string& backend, std::string* mode) {
  std::lock_guard<std::mutex> lock(g_stand_ins_mu);
  auto it = g_stand_ins->find(backend);
  if (it == g_stand_ins->end()) it = g_stand_ins->find("*");
  if (it == g_stand_ins->end()) return false;
  *mode = it->second;
  return true;
}

std::string StandInsJson() {
  std::lock_guard<std::mutex> lock(g_stand_ins_mu);
  if (g_stand_ins->empty()) return "";
  Json o = Json::Object();
  for (const auto& kv : *g_stand_ins) o.set(kv.first, Json::Str(kv.second));
  return o.dump();
}

void ReadStandInsFromEnvironment() {
  const char* spec = std::getenv("TRITONFAKE_STAND_INS");
  if (spec == nullptr) return;
  std::map<std::string, std::string> parsed;
  std::string error;
  if (!ParseSpec(spec, &parsed, &error)) {
    LogError("TRITONFAKE_STAND_INS: " + error);
    return;
  }
  std::lock_guard<std::mutex> lock(g_stand_ins_mu);
  g_stand_ins->swap(parsed);
}

void StandInRespond(Model* m, TRITONSERVER_InferenceRequest* r,
                    TRITONSERVER_InferenceResponse* resp) {
  const ModelConfig& c = m->config;
  const uint64_t batch = c.max_batch_size > 0 ? r->request_batch : 0;
  for (const TensorConfig* oc : r->outputs_to_send) {
    const TensorConfig* output = FindConfig(c.output, oc->name);
    const RequestInput* match = MatchingInput(c, r, output);
    const bool echo = m->stand_in_echoes && match != nullptr &&
                      match->datatype == output->datatype &&
                      Fits(output->has_reshape ? output->reshape : output->dims,
                           ShapeWithoutBatch(*match, batch));
    TRITONSERVER_Error* err =
        echo ? Echo(r, resp, output, *match)
             : Zeros(r, resp, output, ZerosShape(*output, match, batch));
    if (err != nullptr) {
      resp->error = err;
      return;
    }
  }
  auto* marker = new TRITONSERVER_Parameter();
  marker->name = "triton_node_stand_in";
  marker->type = TRITONSERVER_PARAMETER_STRING;
  marker->str = m->stand_in;
  resp->extra_params.emplace_back(marker);
}

bool SetStandIns(const std::string& spec, std::string* error) {
  std::map<std::string, std::string> parsed;
  if (!ParseSpec(spec, &parsed, error)) return false;
  std::lock_guard<std::mutex> lock(g_stand_ins_mu);
  g_stand_ins->swap(parsed);
  return true;
}

}  // namespace fake
