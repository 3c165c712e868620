// The fake's onnxruntime backend: real ONNX models computed by ONNX Runtime
// (opened at run time, onnxruntime_api.h), following what Triton r25.07's
// onnxruntime backend does:
//   * at load: the model file (default_model_filename, else model.onnx; a
//     directory means <dir>/model.onnx), refused when its external data
//     lies outside its version folder (onnx_external_data.h: the real
//     backend reads such files), one session per version, the
//     config auto-completed from the model when Triton's strict model
//     config is off (max_batch_size, dynamic batching, inputs and outputs),
//     then the config's inputs and outputs checked against the model's,
//     with the real backend's messages;
//   * per execution: the batch's requests concatenated along the batch
//     dimension (max_batch_size > 0), one run for the whole batch, each
//     output split back per request; a run's error is every request's.
//   * sequence batching: the implicit state inputs fed from the sequence's
//     values (scheduling/sequence_batcher.cc), the state outputs kept as its
//     next ones, and the control inputs (START, END, READY, CORRID) the
//     batcher gives each request;
//   * BYTES tensors (TYPE_STRING) as ONNX string tensors: each element
//     becomes a C string (so it ends at its first NUL byte, as in the real
//     backend), string outputs are written back as BYTES elements.
// Not modelled: string states, GPU instances, batch inputs/outputs, ragged
// batching, ONNX Runtime's session options beyond the thread counts.
#include "onnxruntime_backend.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <thread>
#include <unordered_map>

#include "../config/data_types.h"
#include "../core/error.h"
#include "../scheduling/sequence_batcher.h"
#include "../support/cuda_copy.h"
#include "../support/log.h"
#include "../support/release.h"
#include "onnx_external_data.h"
#include "onnxruntime_api.h"

namespace fake {

struct OnnxTensorInfo {
  int type = ort::kUndefined;
  std::vector<int64_t> dims;  // -1 for a symbolic dimension
};
// As the real backend keeps them (its iteration order is the order of
// auto-completed inputs and outputs).
using OnnxTensorInfoMap = std::unordered_map<std::string, OnnxTensorInfo>;

struct OnnxModel {
  const ort::Library* lib = nullptr;
  ort::Session* session = nullptr;
  // The inputs a run needs, and the overridable initializers (inputs with
  // a default); once the config is checked, `inputs` holds both, as a
  // request may give either.
  OnnxTensorInfoMap inputs, outputs, overridable;
  // What every run computes: the config's outputs, in config order.
  std::vector<std::string> run_outputs;
  // Scalar model outputs: the dims the config gives them.
  std::map<std::string, std::vector<int64_t>> scalar_outputs;
  ~OnnxModel() {
    if (session != nullptr) lib->api.ReleaseSession(session);
  }
};

namespace {

const char* kLibraryEnv = "TRITON_NODE_ONNXRUNTIME_LIB";

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

const char* ConfigTypeOfOnnx(int type) {
  switch (type) {
    case ort::kBool:
      return "TYPE_BOOL";
    case ort::kUint8:
      return "TYPE_UINT8";
    case ort::kUint16:
      return "TYPE_UINT16";
    case ort::kUint32:
      return "TYPE_UINT32";
    case ort::kUint64:
      return "TYPE_UINT64";
    case ort::kInt8:
      return "TYPE_INT8";
    case ort::kInt16:
      return "TYPE_INT16";
    case ort::kInt32:
      return "TYPE_INT32";
    case ort::kInt64:
      return "TYPE_INT64";
    case ort::kFloat16:
      return "TYPE_FP16";
    case ort::kFloat:
      return "TYPE_FP32";
    case ort::kDouble:
      return "TYPE_FP64";
    case ort::kString:
      return "TYPE_STRING";
    case ort::kBfloat16:  // in the backend's table since r26.06's
      return AtLeast(Release::kR26_06) ? "TYPE_BF16" : "TYPE_INVALID";
    default:
      return "TYPE_INVALID";
  }
}

// The ONNX element type for a config data type (kUndefined when ONNX has
// none: the real backend's table, which has BF16 from r26.06 on).
int OnnxTypeOfConfig(const std::string& t) {
  static const std::map<std::string, int> kTypes = {
      {"TYPE_BOOL", ort::kBool},     {"TYPE_UINT8", ort::kUint8},
      {"TYPE_UINT16", ort::kUint16}, {"TYPE_UINT32", ort::kUint32},
      {"TYPE_UINT64", ort::kUint64}, {"TYPE_INT8", ort::kInt8},
      {"TYPE_INT16", ort::kInt16},   {"TYPE_INT32", ort::kInt32},
      {"TYPE_INT64", ort::kInt64},   {"TYPE_FP16", ort::kFloat16},
      {"TYPE_FP32", ort::kFloat},    {"TYPE_FP64", ort::kDouble},
      {"TYPE_STRING", ort::kString}};
  if (t == "TYPE_BF16" && AtLeast(Release::kR26_06)) return ort::kBfloat16;
  auto it = kTypes.find(t);
  return it == kTypes.end() ? ort::kUndefined : it->second;
}

// "TYPE_FP32" -> "FP32" as the real backend writes a model's type.
std::string ApiTypeOfOnnx(int type) {
  std::string t = ConfigTypeOfOnnx(type);
  if (t == "TYPE_STRING") return "BYTES";
  return t.substr(5);
}

bool IsDirectory(const std::string& path, bool* is_dir) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  *is_dir = S_ISDIR(st.st_mode);
  return true;
}

// Which of a session's tensors: inputs it needs, outputs, or overridable
// initializers (graph inputs with a default, which a run may leave out).
enum class TensorKind { kInput, kOutput, kOverridable };

// The count, name and type entry points of ONNX Runtime for `kind`.
struct TensorEntryPoints {
  ort::Status* (*count)(const ort::Session*, size_t*);
  ort::Status* (*name)(const ort::Session*, size_t, ort::Allocator*, char**);
  ort::Status* (*type)(const ort::Session*, size_t, ort::TypeInfo**);
};

TensorEntryPoints EntryPointsOf(const ort::Api& a, TensorKind kind) {
  switch (kind) {
    case TensorKind::kInput:
      return {a.SessionGetInputCount, a.SessionGetInputName,
              a.SessionGetInputTypeInfo};
    case TensorKind::kOutput:
      return {a.SessionGetOutputCount, a.SessionGetOutputName,
              a.SessionGetOutputTypeInfo};
    case TensorKind::kOverridable:
      break;
  }
  return {a.SessionGetOverridableInitializerCount,
          a.SessionGetOverridableInitializerName,
          a.SessionGetOverridableInitializerTypeInfo};
}

// One tensor's element type and dims from its type info.
std::string TensorInfoOf(const ort::Library& lib, const std::string& name,
                         ort::TypeInfo* info, OnnxTensorInfo* t) {
  const ort::Api& a = lib.api;
  int onnx_type = 0;
  const ort::TensorInfo* tensor = nullptr;
  size_t rank = 0;
  std::string e = lib.Take(a.GetOnnxTypeFromTypeInfo(info, &onnx_type));
  if (e.empty() && onnx_type != ort::kOnnxTypeTensor) {
    e = "Unsupported ONNX Type for I/O '" + name + "', expected a tensor";
  }
  if (e.empty()) e = lib.Take(a.CastTypeInfoToTensorInfo(info, &tensor));
  if (e.empty()) e = lib.Take(a.GetTensorElementType(tensor, &t->type));
  if (e.empty()) e = lib.Take(a.GetDimensionsCount(tensor, &rank));
  if (e.empty()) {
    t->dims.resize(rank);
    e = lib.Take(a.GetDimensions(tensor, t->dims.data(), rank));
  }
  return e;
}

// A session's tensors of one kind, in the session's order of insertion.
std::string TensorInfos(const ort::Library& lib, ort::Session* s,
                        TensorKind kind, OnnxTensorInfoMap* out) {
  const TensorEntryPoints fn = EntryPointsOf(lib.api, kind);
  size_t n = 0;
  std::string e = lib.Take(fn.count(s, &n));
  for (size_t i = 0; e.empty() && i < n; ++i) {
    char* cname = nullptr;
    e = lib.Take(fn.name(s, i, lib.allocator, &cname));
    if (!e.empty()) break;
    std::string name(cname);
    lib.Take(lib.api.AllocatorFree(lib.allocator, cname));
    ort::TypeInfo* info = nullptr;
    e = lib.Take(fn.type(s, i, &info));
    if (!e.empty()) break;
    OnnxTensorInfo t;
    e = TensorInfoOf(lib, name, info, &t);
    lib.api.ReleaseTypeInfo(info);
    if (e.empty()) out->emplace(std::move(name), std::move(t));
  }
  return e;
}

// The most threads one session may be given through intra_op_thread_count
// or inter_op_thread_count. The real backend passes any number to ONNX
// Runtime, which starts that many threads per instance at load
// ("30000" grows memory without end); the fake refuses more than 4 per
// core (at least 64).
int MaxSessionThreads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::max(64u, 4 * cores));
}

// A thread count parameter as the real backend reads it (std::stoi: a
// leading integer; <= 0 leaves ONNX Runtime's default), within
// MaxSessionThreads. `*threads` is 1 when the config does not set it: the
// fake runs on small CI machines, and results do not depend on it.
std::string ThreadCount(const ModelConfig& cfg, const char* key, int* threads) {
  *threads = 1;
  auto it = cfg.parameters.find(key);
  if (it == cfg.parameters.end()) return "";
  const std::string& text = it->second;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str()) {
    return "failed to convert '" + text + "' to integral number";
  }
  const int most = MaxSessionThreads();
  if (errno == ERANGE || value > most) {
    return "unable to load model '" + cfg.name + "', parameter '" + key +
           "' is " + text + ": the fake engine allows at most " +
           std::to_string(most) +
           " threads per session (4 per core; each instance's session starts "
           "them at load)";
  }
  *threads = value > 0 ? static_cast<int>(value) : 0;
  return "";
}

// Refuses a model file that is not a regular file (a FIFO would make
// ONNX Runtime's open wait for a writer for good, a device be read without
// end). Links are followed, as ONNX Runtime does.
std::string CheckRegularFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  const char* kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISDIR(st.st_mode)  ? "a directory"
                                            : "not a regular file";
  return "cannot read model file " + path + ": it is " + kind +
         ", not a regular file";
}

// Opens the version's model file as the real backend finds it. *code is
// the error's code.
std::string OpenSession(const ort::Library& lib, const std::string& dir,
                        int64_t version, const ModelConfig& cfg,
                        OnnxModel* model, TRITONSERVER_Error_Code* code) {
  std::string file = cfg.default_model_filename.empty()
                         ? "model.onnx"
                         : cfg.default_model_filename;
  // The real backend reads its parameters first (its model state), then
  // looks for the file (each instance).
  *code = TRITONSERVER_ERROR_INVALID_ARG;
  int intra = 1, inter = 1;
  std::string e = ThreadCount(cfg, "intra_op_thread_count", &intra);
  if (e.empty()) e = ThreadCount(cfg, "inter_op_thread_count", &inter);
  if (!e.empty()) return e;
  std::string path = dir + "/" + std::to_string(version) + "/" + file;
  bool is_dir = false;
  if (!IsDirectory(path, &is_dir)) {
    *code = TRITONSERVER_ERROR_INTERNAL;
    return "failed to stat file " + path;
  }
  if (is_dir) path += "/model.onnx";
  bool unused = false;
  if (!IsDirectory(path, &unused)) {
    *code = TRITONSERVER_ERROR_UNAVAILABLE;
    return "unable to find '" + path + "' for model instance '" + cfg.name +
           "'";
  }
  *code = TRITONSERVER_ERROR_INVALID_ARG;
  e = CheckRegularFile(path);
  if (!e.empty()) return e;
  // ONNX Runtime would open whatever file the model's external data names.
  std::string refused = OnnxExternalDataProblem(
      cfg.name, path, dir + "/" + std::to_string(version));
  if (!refused.empty()) return refused;
  const ort::Api& a = lib.api;
  *code = TRITONSERVER_ERROR_INTERNAL;
  ort::SessionOptions* options = nullptr;
  e = lib.Take(a.CreateSessionOptions(&options));
  if (!e.empty()) return e;
  e = lib.Take(a.SetIntraOpNumThreads(options, intra));
  if (e.empty()) e = lib.Take(a.SetInterOpNumThreads(options, inter));
  if (e.empty()) {
    e = lib.Take(a.SetSessionGraphOptimizationLevel(
        options, ort::kGraphOptimizationAll));
  }
  if (e.empty()) {
    e = lib.Take(
        a.CreateSession(lib.env, path.c_str(), options, &model->session));
  }
  a.ReleaseSessionOptions(options);
  if (e.empty()) {
    e = TensorInfos(lib, model->session, TensorKind::kInput, &model->inputs);
  }
  if (e.empty()) {
    e = TensorInfos(lib, model->session, TensorKind::kOutput, &model->outputs);
  }
  if (e.empty()) {
    e = TensorInfos(lib, model->session, TensorKind::kOverridable,
                    &model->overridable);
  }
  return e;
}

// ---- auto-complete (the real ModelState::AutoCompleteConfig) --------------

std::string AutoCompleteMaxBatch(const OnnxModel& m, int default_max_batch,
                                 ModelConfig* cfg) {
  bool can_batch = true;
  for (const auto* infos : {&m.inputs, &m.outputs}) {
    for (const auto& kv : *infos) {
      if (kv.second.dims.empty() || kv.second.dims[0] != -1) can_batch = false;
    }
  }
  if (!can_batch) {
    if (cfg->max_batch_size != 0) {
      return "autofill failed for model '" + cfg->name +
             "': model does not support batching while non-zero "
             "max_batch_size is specified";
    }
    return "";
  }
  if (cfg->max_batch_size == 0) {
    cfg->max_batch_size = std::max(default_max_batch, 0);
    LogWarning("autofilled max_batch_size to " +
               std::to_string(cfg->max_batch_size) + " for model '" +
               cfg->name +
               "' since batching is supported but no max_batch_size is "
               "specified in model configuration");
  }
  if (cfg->max_batch_size > 1 && !cfg->has_sequence_batching &&
      !cfg->dynamic_batching.present) {
    cfg->dynamic_batching.present = true;
  }
  return "";
}

void AutoCompleteIO(const OnnxTensorInfoMap& infos, int max_batch_size,
                    std::vector<TensorConfig>* ios) {
  ios->clear();
  for (const auto& kv : infos) {
    TensorConfig t;
    t.name = kv.first;
    t.data_type = ConfigTypeOfOnnx(kv.second.type);
    t.datatype = DataTypeFromConfigName(t.data_type);
    const auto& dims = kv.second.dims;
    for (size_t i = max_batch_size > 0 ? 1 : 0; i < dims.size(); ++i) {
      t.dims.push_back(dims[i]);
    }
    if (t.dims.empty()) {
      t.dims.push_back(1);
      // A batched scalar is an empty reshape; unbatched, dims [1] alone.
      t.has_reshape = max_batch_size > 0;
    }
    ios->push_back(std::move(t));
  }
}

std::string AutoComplete(const OnnxModel& m, int default_max_batch,
                         ModelConfig* cfg) {
  const size_t inputs = cfg->input.size();
  const size_t outputs = cfg->output.size();
  if (inputs > 0 && outputs > 0) {
    LogInfo("skipping model configuration auto-complete for '" + cfg->name +
            "': inputs and outputs already specified");
    return "";
  }
  std::string e = AutoCompleteMaxBatch(m, default_max_batch, cfg);
  if (!e.empty()) return e;
  if (inputs == 0) AutoCompleteIO(m.inputs, cfg->max_batch_size, &cfg->input);
  if (outputs == 0) {
    AutoCompleteIO(m.outputs, cfg->max_batch_size, &cfg->output);
  }
  // Triton normalizes the completed config again, and checks it: a tensor
  // of a type the backend cannot name (BF16) has no data type.
  FillModelConfigDefaults(cfg->name, cfg);
  for (const auto* ios : {&cfg->input, &cfg->output}) {
    for (const auto& t : *ios) {
      if (t.datatype != TRITONSERVER_TYPE_INVALID) continue;
      return std::string(ios == &cfg->input ? "model input '"
                                            : "model output '") +
             t.name + "' must specify 'data_type' for " + cfg->name;
    }
  }
  return "";
}

// ---- checks at load (the real ValidateInputs / ValidateOutputs) ----------

std::string Allowed(const OnnxTensorInfoMap& infos) {
  std::set<std::string> names;  // sorted, as the real backend lists them
  for (const auto& kv : infos) names.insert(kv.first);
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// CompareDimsSupported: the config's dims (with the batch dimension when
// max_batch_size > 0) against the model's; `exact` for outputs.
std::string CompareDims(const std::string& model, const std::string& tensor,
                        const std::vector<int64_t>& model_shape,
                        const std::vector<int64_t>& dims, int max_batch,
                        bool exact) {
  const std::string named = "model '" + model + "', tensor '" + tensor + "': ";
  std::vector<int64_t> full = dims;
  if (max_batch > 0) {
    if (model_shape.empty() || model_shape[0] != -1) {
      return named +
             "for the model to support batching the shape should have at "
             "least 1 dimension and the first dimension must be -1; but "
             "shape expected by the model is " +
             ShapeText(model_shape);
    }
    full.insert(full.begin(), -1);
  }
  bool ok = model_shape.size() == full.size();
  for (size_t i = 0; ok && i < full.size(); ++i) {
    if (exact || model_shape[i] != -1) ok = model_shape[i] == full[i];
  }
  if (ok) return "";
  std::string msg = named + "the model expects " +
                    std::to_string(model_shape.size()) + " dimensions (shape " +
                    ShapeText(model_shape) +
                    ") but the model configuration specifies " +
                    std::to_string(full.size()) + " dimensions ";
  if (max_batch > 0) {
    return msg +
           "(an initial batch dimension because max_batch_size > 0 followed "
           "by the explicit tensor shape, making complete shape " +
           ShapeText(full) + ")";
  }
  return msg + "(shape " + ShapeText(dims) + ")";
}

std::string CheckScalar(const std::string& model, const std::string& tensor,
                        const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (d != 1) {
      return "unable to load model '" + model + "', scalar tensor '" + tensor +
             "', should only provide 1 in the model configuration when the "
             "model doesn't support batching. Model configuration "
             "provided: " +
             ShapeText(dims) + ".";
    }
  }
  return "";
}

// One config tensor against the model's (inputs, or outputs when
// `output`). *code: INTERNAL for a data type ONNX has not, else INVALID_ARG.
std::string CheckTensor(const ModelConfig& cfg, const TensorConfig& t,
                        const OnnxTensorInfoMap& infos, bool output,
                        OnnxModel* m, TRITONSERVER_Error_Code* code) {
  const char* what = output ? "output" : "input";
  auto it = infos.find(t.name);
  if (it == infos.end()) {
    return std::string("unexpected inference ") + what + " '" + t.name +
           "', allowed " + what + "s are: " + Allowed(infos);
  }
  const int onnx_type = OnnxTypeOfConfig(t.data_type);
  if (onnx_type == ort::kUndefined) {
    *code = TRITONSERVER_ERROR_INTERNAL;
    return "unsupported datatype " + t.data_type + " for " + what + " '" +
           t.name + "' for model '" + cfg.name + "'";
  }
  if (onnx_type != it->second.type) {
    return "unable to load model '" + cfg.name +
           "', configuration expects datatype " + t.data_type + " for " + what +
           " '" + t.name + "', model provides TYPE_" +
           ApiTypeOfOnnx(it->second.type);
  }
  const std::vector<int64_t>& dims = t.has_reshape ? t.reshape : t.dims;
  if (!it->second.dims.empty()) {
    return CompareDims(cfg.name, t.name, it->second.dims, dims,
                       cfg.max_batch_size, output);
  }
  std::string e = CheckScalar(cfg.name, t.name, dims);
  if (e.empty() && output) m->scalar_outputs[t.name] = dims;
  return e;
}

// ONNX's name of an element type, as the real backend writes it.
std::string OnnxTypeName(int type) {
  switch (type) {
    case ort::kFloat:
      return "FLOAT";
    case ort::kFloat16:
      return "FLOAT16";
    case ort::kDouble:
      return "DOUBLE";
    case ort::kBfloat16:
      return "BFLOAT16";
    case ort::kUndefined:
      return "UNDEFINED";
    default:
      return ApiTypeOfOnnx(type) == "BYTES" ? "STRING" : ApiTypeOfOnnx(type);
  }
}

// A sequence control input against the model's input of that name
// (ValidateBooleanSequenceControl / ValidateTypedSequenceControl).
std::string CheckControl(const ModelConfig& cfg, const OnnxModel& m,
                         const std::string& kind, size_t* expected,
                         TRITONSERVER_Error_Code* code) {
  SequenceControl c;
  std::string e = FindSequenceControl(cfg, kind, &c);
  if (!e.empty() || c.tensor.empty()) return e;
  ++*expected;
  auto it = m.inputs.find(c.tensor);
  if (it == m.inputs.end()) {
    *code = TRITONSERVER_ERROR_INTERNAL;
    return "configuration specified sequence control '" + c.tensor +
           "', but model does not provide that input";
  }
  const std::vector<int64_t>& dims = it->second.dims;
  std::vector<int64_t> debatched(
      dims.begin() +
          std::min<size_t>(cfg.max_batch_size > 0 ? 1 : 0, dims.size()),
      dims.end());
  if (debatched.size() != 1 || debatched[0] != 1) {
    return "unable to load model '" + cfg.name + "', sequence control '" +
           c.tensor + "' in model has dims " + ShapeText(debatched) +
           " but dims [1] is expected";
  }
  if (OnnxTypeOfConfig(c.data_type) != it->second.type) {
    return "unable to load model '" + cfg.name + "', sequence control '" +
           c.tensor + "', the model expects data-type " +
           OnnxTypeName(it->second.type) +
           " but the model configuration specifies data-type " + c.data_type;
  }
  return "";
}

std::string Validate(const ModelConfig& cfg, OnnxModel* m,
                     TRITONSERVER_Error_Code* code) {
  *code = TRITONSERVER_ERROR_INVALID_ARG;
  // An optional input is one with a default in the model (an overridable
  // initializer): the count is of the inputs a run needs, sequence
  // controls and states included.
  size_t expected = cfg.sequence_batching.state.size();
  if (cfg.has_sequence_batching) {
    for (const char* kind :
         {"CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_END",
          "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_CORRID"}) {
      std::string e = CheckControl(cfg, *m, kind, &expected, code);
      if (!e.empty()) return e;
    }
  }
  for (const auto& t : cfg.input) expected += t.optional ? 0 : 1;
  if (m->inputs.size() != expected) {
    return "unable to load model '" + cfg.name + "', configuration expects " +
           std::to_string(expected) + " inputs, model provides " +
           std::to_string(m->inputs.size());
  }
  for (const auto& kv : m->overridable) m->inputs[kv.first] = kv.second;
  for (const auto& t : cfg.input) {
    if (t.optional && cfg.max_batch_size != 0) {
      return "unable to load model '" + cfg.name + "', optional input '" +
             t.name + "' is not supported for models that support batching";
    }
    std::string e = CheckTensor(cfg, t, m->inputs, false, m, code);
    if (!e.empty()) return e;
  }
  for (const auto& t : cfg.output) {
    std::string e = CheckTensor(cfg, t, m->outputs, true, m, code);
    if (!e.empty()) return e;
    m->run_outputs.push_back(t.name);
  }
  // Implicit state: the state outputs are computed by every run too.
  for (const auto& st : cfg.sequence_batching.state) {
    if (std::find(m->run_outputs.begin(), m->run_outputs.end(),
                  st.output_name) == m->run_outputs.end()) {
      m->run_outputs.push_back(st.output_name);
    }
  }
  return "";
}

}  // namespace

std::string OnnxRuntimeLibraryProblem(const OnnxRuntimeSource& source,
                                      const ort::Library** lib) {
  const char* env = std::getenv(kLibraryEnv);
  std::string path = env != nullptr && *env != '\0' ? env : source.library;
  if (path.empty()) {
    return "the fake engine's onnxruntime backend needs ONNX Runtime, and "
           "none was found (tried: " +
           std::string(kLibraryEnv) + ", unset; " +
           (source.searched.empty() ? std::string("nothing else")
                                    : source.searched) +
           "). Install it with `npm install onnxruntime-node` (its "
           "libonnxruntime.so.1 is used), or set " +
           kLibraryEnv + " to the path of a libonnxruntime.so.1";
  }
  std::string error;
  *lib = ort::OpenOnnxRuntime(path, &error);
  if (*lib == nullptr) {
    return "the fake engine's onnxruntime backend cannot use ONNX Runtime: " +
           error +
           (env != nullptr && *env != '\0'
                ? " (from " + std::string(kLibraryEnv) + ")"
                : std::string()) +
           "; `npm install onnxruntime-node` provides one";
  }
  return "";
}

namespace {
std::mutex g_backend_mu;
// The server in which an onnxruntime model failed to load first, if any.
std::weak_ptr<Engine> g_failed_in;
bool g_failed = false;
}  // namespace

void OnnxBackendLoadFailed(Engine* engine) {
  std::lock_guard<std::mutex> lock(g_backend_mu);
  if (g_failed) return;
  g_failed = true;
  g_failed_in = engine->self;
}

std::string OnnxBackendRestartProblem(Engine* engine,
                                      TRITONSERVER_Error_Code* code) {
  std::lock_guard<std::mutex> lock(g_backend_mu);
  if (!g_failed) return "";
  std::shared_ptr<Engine> first = g_failed_in.lock();
  if (first.get() == engine) return "";
  // While that server runs, a second one shares its backend (not seen
  // failing); once it stopped, the backend must start again and cannot.
  if (first != nullptr && !first->stopping.load()) return "";
  *code = TRITONSERVER_ERROR_ALREADY_EXISTS;
  return "OnnxLoader singleton already initialized (as in Triton r25.07: "
         "after an onnxruntime model failed to load on an earlier server of "
         "this process, the onnxruntime backend cannot start again; use one "
         "server per process)";
}

std::string OnnxRuntimeLoad(const ort::Library* lib, const std::string& dir,
                            int64_t version, const OnnxLoadOptions& options,
                            ModelConfig* cfg, std::shared_ptr<OnnxModel>* out,
                            TRITONSERVER_Error_Code* code,
                            bool* session_leaked) {
  *session_leaked = false;
  auto m = std::make_shared<OnnxModel>();
  m->lib = lib;
  std::string e = OpenSession(*lib, dir, version, *cfg, m.get(), code);
  if (!e.empty()) return e;
  if (options.auto_complete) {
    *code = TRITONSERVER_ERROR_INVALID_ARG;
    e = AutoComplete(*m, options.default_max_batch_size, cfg);
    if (!e.empty()) return e;
  }
  for (const auto& st : cfg->sequence_batching.state) {
    if (st.datatype == TRITONSERVER_TYPE_BYTES) {
      *code = TRITONSERVER_ERROR_UNSUPPORTED;
      return "the fake engine's onnxruntime backend does not support "
             "TYPE_STRING sequence states ('" +
             st.input_name + "')";
    }
  }
  e = Validate(*cfg, m.get(), code);
  if (!e.empty()) {
    // The real backend checks in its instance's constructor, whose session
    // is then never released: its ONNX Runtime loader cannot stop again.
    *session_leaked = true;
    return e;
  }
  *out = std::move(m);
  return "";
}

namespace {

// One input of the whole batch in host memory: the requests' data one
// after the other.
std::string GatherInput(const std::vector<TRITONSERVER_InferenceRequest*>& b,
                        const std::string& name, std::vector<char>* out) {
  size_t total = 0;
  for (auto* r : b) total += r->FindInput(name)->total;
  out->resize(total);
  size_t off = 0;
  for (auto* r : b) {
    const RequestInput* in = r->FindInput(name);
    for (const auto& d : in->data) {
      std::string e = CopyBuffer(out->data() + off, TRITONSERVER_MEMORY_CPU, 0,
                                 d.base, d.type, d.type_id, d.size, name);
      if (!e.empty()) return e;
      off += d.size;
    }
  }
  return "";
}

// The ORT values of one run, released with it.
struct RunValues {
  const ort::Library* lib;
  std::vector<ort::Value*> inputs, outputs;
  std::vector<std::vector<char>> buffers;
  std::vector<std::string> strings;  // string inputs' elements, run-long
  ~RunValues() {
    for (auto* v : inputs) {
      if (v != nullptr) lib->api.ReleaseValue(v);
    }
    for (auto* v : outputs) {
      if (v != nullptr) lib->api.ReleaseValue(v);
    }
  }
};

// Triton's BYTES elements (a 4-byte little-endian length, then the bytes)
// of a whole batch's input as C strings: each ends at its first NUL, as
// the real backend hands them to ONNX Runtime. The request was checked to
// hold whole elements; a short one ends the walk.
void SplitStrings(const std::vector<char>& data,
                  std::vector<std::string>* out) {
  size_t off = 0;
  while (off + 4 <= data.size()) {
    uint32_t len = 0;
    for (int k = 3; k >= 0; --k) {
      len = (len << 8) | static_cast<unsigned char>(data[off + k]);
    }
    off += 4;
    const size_t n = std::min<size_t>(len, data.size() - off);
    const char* p = data.data() + off;
    out->emplace_back(p, std::find(p, p + n, '\0'));
    off += n;
  }
}

// A string tensor of the batch's elements (ONNX Runtime copies them).
std::string MakeStringInput(const OnnxModel& om, const std::vector<char>& data,
                            const std::vector<int64_t>& shape, bool scalar,
                            RunValues* v, ort::Value** value) {
  const ort::Api& a = om.lib->api;
  const size_t first = v->strings.size();
  SplitStrings(data, &v->strings);
  std::vector<const char*> ptrs;
  for (size_t i = first; i < v->strings.size(); ++i) {
    ptrs.push_back(v->strings[i].c_str());
  }
  std::string e = om.lib->Take(a.CreateTensorAsOrtValue(
      om.lib->allocator, scalar ? nullptr : shape.data(),
      scalar ? 0 : shape.size(), ort::kString, value));
  if (!e.empty()) return e;
  return om.lib->Take(a.FillStringTensor(*value, ptrs.data(), ptrs.size()));
}

std::string MakeInputs(const OnnxModel& om,
                       const std::vector<TRITONSERVER_InferenceRequest*>& b,
                       int64_t total_batch, bool batching,
                       std::vector<std::string>* names, RunValues* v) {
  const ort::Api& a = om.lib->api;
  for (const auto& kv : b[0]->inputs) {
    const RequestInput& in = kv.second;
    auto info = om.inputs.find(in.name);
    if (info == om.inputs.end()) {
      return "Failed to retrieve the ONNX input tensor info from '" + in.name +
             "'.";
    }
    std::vector<int64_t> shape = in.batch_shape;
    if (batching && !shape.empty()) shape[0] = total_batch;
    v->buffers.emplace_back();
    std::string e = GatherInput(b, in.name, &v->buffers.back());
    if (!e.empty()) return e;
    std::vector<char>& data = v->buffers.back();
    ort::Value* value = nullptr;
    const bool scalar = info->second.dims.empty();
    if (in.datatype == TRITONSERVER_TYPE_BYTES) {
      e = MakeStringInput(om, data, shape, scalar, v, &value);
    } else {
      e = om.lib->Take(a.CreateTensorWithDataAsOrtValue(
          om.lib->cpu, data.data(), data.size(),
          scalar ? nullptr : shape.data(), scalar ? 0 : shape.size(),
          info->second.type, &value));
    }
    if (value != nullptr) v->inputs.push_back(value);
    if (!e.empty()) return e;
    names->push_back(in.name);
  }
  return "";
}

// The implicit state inputs of a sequence model's (single) request: the
// sequence's current values.
std::string MakeStateInputs(Model* m, TRITONSERVER_InferenceRequest* r,
                            std::vector<std::string>* names, RunValues* v) {
  const OnnxModel& om = *m->onnx;
  const auto& states = m->config.sequence_batching.state;
  std::vector<std::vector<char>>* values = SequenceStates(m, r, true);
  if (values == nullptr) {
    return "out of memory for the sequence_batching states of model '" +
           m->name + "'";
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const SequenceStateConfig& st = states[i];
    if (om.inputs.find(st.input_name) == om.inputs.end()) {
      return "Failed to retrieve the ONNX input tensor info from '" +
             st.input_name + "'.";
    }
    std::vector<int64_t> shape = st.dims;
    if (m->config.max_batch_size > 0) shape.insert(shape.begin(), 1);
    std::vector<char>& data = (*values)[i];
    ort::Value* value = nullptr;
    std::string e = om.lib->Take(om.lib->api.CreateTensorWithDataAsOrtValue(
        om.lib->cpu, data.data(), data.size(), shape.data(), shape.size(),
        OnnxTypeOfConfig(st.data_type), &value));
    if (!e.empty()) return e;
    v->inputs.push_back(value);
    names->push_back(st.input_name);
  }
  return "";
}

// The control inputs of a sequence model's (single) request, as Triton's
// sequence batcher adds them to it.
std::string MakeControlInputs(Model* m, TRITONSERVER_InferenceRequest* r,
                              std::vector<std::string>* names, RunValues* v) {
  const OnnxModel& om = *m->onnx;
  std::vector<int64_t> shape{1};
  if (m->config.max_batch_size > 0) shape.push_back(1);
  for (ControlTensor& t : SequenceControlTensors(m->config, r)) {
    v->buffers.push_back(std::move(t.bytes));
    std::vector<char>& data = v->buffers.back();
    ort::Value* value = nullptr;
    std::string e;
    if (t.datatype == TRITONSERVER_TYPE_BYTES) {
      e = MakeStringInput(om, data, shape, false, v, &value);
    } else {
      e = om.lib->Take(om.lib->api.CreateTensorWithDataAsOrtValue(
          om.lib->cpu, data.data(), data.size(), shape.data(), shape.size(),
          OnnxTypeOfConfig(ConfigNameFromDataType(t.datatype)), &value));
    }
    if (value != nullptr) v->inputs.push_back(value);
    if (!e.empty()) return e;
    names->push_back(t.name);
  }
  return "";
}

// A state output: the sequence's next value of that state (the backend's
// TRITONBACKEND_StateUpdate). True when `name` is one.
bool KeepState(Model* m, TRITONSERVER_InferenceRequest* r,
               const std::string& name, int type,
               const std::vector<int64_t>& shape, const void* data,
               std::string* error) {
  const auto& states = m->config.sequence_batching.state;
  bool is_state = false;
  for (size_t i = 0; i < states.size(); ++i) {
    if (states[i].output_name != name) continue;
    is_state = true;
    if (OnnxTypeOfConfig(states[i].data_type) != type) {
      *error = "state output '" + name + "' of the model is TYPE_" +
               ApiTypeOfOnnx(type) + ", the sequence_batching state says " +
               states[i].data_type;
      return true;
    }
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const size_t size =
        static_cast<size_t>(n) * DataTypeSize(states[i].datatype);
    const char* bytes = static_cast<const char*>(data);
    std::vector<std::vector<char>>* values = SequenceStates(m, r, false);
    try {
      if (values != nullptr) (*values)[i].assign(bytes, bytes + size);
    } catch (const std::bad_alloc&) {
      values = nullptr;
    }
    if (values == nullptr) {
      *error =
          "out of memory for the next value of state output '" + name + "'";
    }
  }
  return is_state;
}

// A string output as Triton's BYTES elements, one after the other, and
// where each element starts in them (`starts` has one more entry: the end).
std::string SerializeStrings(const ort::Library& lib, ort::Value* value,
                             size_t elements, std::vector<char>* out,
                             std::vector<size_t>* starts) {
  size_t total = 0;
  std::string e = lib.Take(lib.api.GetStringTensorDataLength(value, &total));
  if (!e.empty()) return e;
  std::vector<char> content(total);
  std::vector<size_t> offsets(elements + 1);
  e = lib.Take(lib.api.GetStringTensorContent(value, content.data(), total,
                                              offsets.data(), elements));
  if (!e.empty()) return e;
  offsets[elements] = total;
  out->reserve(total + 4 * elements);
  starts->reserve(elements + 1);
  for (size_t i = 0; i < elements; ++i) {
    starts->push_back(out->size());
    const uint32_t len = static_cast<uint32_t>(offsets[i + 1] - offsets[i]);
    for (int k = 0; k < 4; ++k)
      out->push_back(static_cast<char>(len >> (8 * k)));
    out->insert(out->end(), content.begin() + offsets[i],
                content.begin() + offsets[i + 1]);
  }
  starts->push_back(out->size());
  return "";
}

// The element type and shape of a computed output; a scalar output takes
// the shape the model configuration gives it.
std::string OutputTypeAndShape(const OnnxModel& om, const std::string& name,
                               ort::Value* value, int* type,
                               std::vector<int64_t>* shape) {
  const ort::Api& a = om.lib->api;
  ort::TensorInfo* info = nullptr;
  std::string e = om.lib->Take(a.GetTensorTypeAndShape(value, &info));
  if (!e.empty()) return e;
  size_t rank = 0;
  e = om.lib->Take(a.GetTensorElementType(info, type));
  if (e.empty()) e = om.lib->Take(a.GetDimensionsCount(info, &rank));
  if (e.empty()) {
    shape->resize(rank);
    e = om.lib->Take(a.GetDimensions(info, shape->data(), rank));
  }
  a.ReleaseTensorInfo(info);
  if (!e.empty()) return e;
  if (shape->empty()) {
    auto it = om.scalar_outputs.find(name);
    if (it == om.scalar_outputs.end()) {
      return "Failed to find the scalar output dimension for " + name +
             " in the model configuration.";
    }
    *shape = it->second;
  }
  return "";
}

// A batch's computed output as it is sent: fixed-size elements from ONNX
// Runtime's buffer; strings from their BYTES form, `starts[i]` the offset of
// element i in it.
struct BatchOutput {
  const std::string& name;
  const TensorConfig* config;
  const std::vector<int64_t>& shape;
  int64_t elements;
  bool strings;
  const void* data;
  const std::vector<size_t>& starts;
};

// Gives each request that asked for the output its rows of the batch (the
// whole output when the model does not batch).
void SendRows(const BatchOutput& out,
              const std::vector<TRITONSERVER_InferenceRequest*>& b,
              TRITONSERVER_InferenceResponse** resps, int64_t total_batch,
              bool batching) {
  const std::vector<size_t>& starts = out.starts;
  const size_t element_size =
      out.strings ? 0 : DataTypeSize(out.config->datatype);
  const size_t per_row = static_cast<size_t>(
      batching && total_batch > 0 ? out.elements / total_batch : out.elements);
  size_t offset = 0, element = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    TRITONSERVER_InferenceRequest* r = b[i];
    std::vector<int64_t> mine = out.shape;
    size_t my_elements = static_cast<size_t>(out.elements);
    if (batching) {
      mine[0] = static_cast<int64_t>(r->request_batch);
      my_elements = per_row * r->request_batch;
    }
    const size_t my_bytes =
        out.strings ? starts[element + my_elements] - starts[element]
                    : my_elements * element_size;
    element += my_elements;
    const bool wanted =
        std::find(r->outputs_to_send.begin(), r->outputs_to_send.end(),
                  out.config) != r->outputs_to_send.end();
    if (wanted && resps[i]->error == nullptr) {
      ResponseOutput* o = nullptr;
      TRITONSERVER_Error* err =
          AllocateOutput(resps[i], r->target, out.config, mine, my_bytes, &o);
      if (err == nullptr && my_bytes > 0) {
        std::string ce =
            CopyBuffer(o->buffer, o->memory_type, o->memory_type_id,
                       static_cast<const char*>(out.data) + offset,
                       TRITONSERVER_MEMORY_CPU, 0, my_bytes, out.name);
        if (!ce.empty()) err = Err(TRITONSERVER_ERROR_INTERNAL, ce);
      }
      if (err != nullptr) resps[i]->error = err;
    }
    offset += my_bytes;
  }
}

// One computed output for each request that asked for it: its rows of the
// batch (the whole output when the model does not batch).
std::string SplitOutput(Model* m, const std::string& name, ort::Value* value,
                        const std::vector<TRITONSERVER_InferenceRequest*>& b,
                        TRITONSERVER_InferenceResponse** resps,
                        int64_t total_batch, bool batching) {
  const OnnxModel& om = *m->onnx;
  const ort::Api& a = om.lib->api;
  int type = 0;
  std::vector<int64_t> shape;
  std::string e = OutputTypeAndShape(om, name, value, &type, &shape);
  if (!e.empty()) return e;
  const TensorConfig* oc = nullptr;
  for (const auto& t : m->config.output) {
    if (t.name == name) oc = &t;
  }
  const bool strings = type == ort::kString;
  void* data = nullptr;
  if (!strings) {
    e = om.lib->Take(a.GetTensorMutableData(value, &data));
    if (!e.empty()) return e;
  }
  if (m->config.has_sequence_batching &&
      KeepState(m, b[0], name, type, shape, data, &e)) {
    if (!e.empty() || oc == nullptr) return e;
  }
  if (oc == nullptr || OnnxTypeOfConfig(oc->data_type) != type) {
    return "output '" + name + "' of the model is TYPE_" + ApiTypeOfOnnx(type) +
           ", the model configuration says " +
           (oc == nullptr ? std::string("nothing") : oc->data_type);
  }
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  if (batching && (shape.empty() || shape[0] != total_batch)) {
    return "output '" + name + "' has shape " + ShapeText(shape) +
           ", expected a first dimension of " + std::to_string(total_batch) +
           " (the batch)";
  }
  std::vector<char> serialized;
  std::vector<size_t> starts;
  if (strings) {
    e = SerializeStrings(*om.lib, value, static_cast<size_t>(elements),
                         &serialized, &starts);
    if (!e.empty()) return e;
    data = serialized.data();
  }
  SendRows({name, oc, shape, elements, strings, data, starts}, b, resps,
           total_batch, batching);
  return "";
}

}  // namespace

void OnnxRuntimeRespond(Model* m,
                        const std::vector<TRITONSERVER_InferenceRequest*>& b,
                        TRITONSERVER_InferenceResponse** resps) {
  const OnnxModel& om = *m->onnx;
  const bool batching = m->config.max_batch_size > 0;
  int64_t total_batch = 0;
  for (auto* r : b) total_batch += static_cast<int64_t>(r->request_batch);
  RunValues values{om.lib, {}, {}, {}};
  std::vector<std::string> input_names;
  const bool sequence = m->config.has_sequence_batching;
  std::string e =
      MakeInputs(om, b, total_batch, batching, &input_names, &values);
  if (e.empty() && sequence) {
    e = MakeStateInputs(m, b[0], &input_names, &values);
  }
  if (e.empty() && sequence) {
    e = MakeControlInputs(m, b[0], &input_names, &values);
  }
  if (e.empty()) {
    std::vector<const char*> in_names, out_names;
    for (const auto& n : input_names) in_names.push_back(n.c_str());
    for (const auto& n : om.run_outputs) out_names.push_back(n.c_str());
    values.outputs.assign(out_names.size(), nullptr);
    e = om.lib->Take(om.lib->api.Run(om.session, nullptr, in_names.data(),
                                     values.inputs.data(), in_names.size(),
                                     out_names.data(), out_names.size(),
                                     values.outputs.data()));
  }
  for (size_t i = 0; e.empty() && i < om.run_outputs.size(); ++i) {
    e = SplitOutput(m, om.run_outputs[i], values.outputs[i], b, resps,
                    total_batch, batching);
  }
  if (!e.empty()) {
    for (size_t i = 0; i < b.size(); ++i) {
      delete resps[i]->error;
      resps[i]->error = Err(TRITONSERVER_ERROR_INTERNAL, e);
    }
  }
  // The sequences' next requests are queued once these responses went out
  // (IdentityExecute calls SequenceStepDone).
}

}  // namespace fake
