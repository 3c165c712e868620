// Triton's checks of a request at submission (InferenceRequest::Normalize),
// in its order and words: a raw input's shape, the outputs to send, the
// number of inputs, the batch size, then each input's data type, shape and
// data size (BYTES: its elements).
#include "request_validation.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../config/data_types.h"
#include "../support/release.h"
#include "error.h"

namespace fake {

namespace {

const TensorConfig* FindTensor(const std::vector<TensorConfig>& list,
                               const std::string& name) {
  for (const auto& t : list) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Triton's element count: 0 for no dimensions, -1 when a dimension is -1
// (variable), else the product (other negative values included).
int64_t ElementCount(const std::vector<int64_t>& dims) {
  if (dims.empty()) return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d == -1) return -1;
    n *= d;
  }
  return n;
}

// Triton's byte size of a shape: -1 when unknown (BYTES or a -1 dimension).
int64_t ByteSize(TRITONSERVER_DataType dt, const std::vector<int64_t>& dims) {
  const int64_t es = DataTypeSize(dt);
  if (es == 0) return -1;
  const int64_t n = ElementCount(dims);
  if (n == -1) return -1;
  return n * es;
}

std::string ModelInputLookupError(const std::string& name,
                                  const std::string& model) {
  return "unexpected inference input '" + name + "' for model '" + model + "'";
}

// r26.06 counts a shape's elements with checks (common's GetElementCount):
// the first -1 makes it unknown, a dimension below -1 before that is an
// error, as is a count past INT64_MAX. r25.07 multiplied without them.
enum class Count { kKnown, kWildcard, kInvalid, kOverflow };
Count CheckedElementCount(const std::vector<int64_t>& dims, int64_t* n) {
  *n = 0;
  bool first = true;
  for (int64_t d : dims) {
    if (d == -1) return Count::kWildcard;
    if (d < 0) return Count::kInvalid;
    if (first) {
      *n = d;
      first = false;
    } else if (d != 0 && *n > INT64_MAX / d) {
      return Count::kOverflow;
    } else {
      *n *= d;
    }
  }
  return Count::kKnown;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// r26.06's refusal of a shape whose size cannot be computed, before the
// size is compared (Normalize's GetByteSize / ValidateBytesInputs'
// GetElementCount, model_config_utils.h); null on r25.07 and for sizes.
TRITONSERVER_Error* UncountableShape(const std::string& name,
                                     const RequestInput& in) {
  if (!AtLeast(Release::kR26_06)) return nullptr;
  int64_t n = 0;
  const Count c = CheckedElementCount(in.batch_shape, &n);
  const bool bytes = in.datatype == TRITONSERVER_TYPE_BYTES;
  if (c == Count::kInvalid) {
    return ErrArg("tensor '" + name + "' contains an invalid dimension " +
                  (bytes ? "in shape " : "") + DimsText(in.batch_shape));
  }
  const std::string max = std::to_string(INT64_MAX);
  if (c == Count::kOverflow) {
    return ErrArg((bytes ? "element count" : "byte size") +
                  std::string(" for tensor '") + name +
                  "' exceeds maximum size of " + max);
  }
  const int64_t es = DataTypeSize(in.datatype);
  if (c == Count::kKnown && !bytes && es > 0 && n > INT64_MAX / es) {
    return ErrArg("byte size for tensor '" + name +
                  "' exceeds maximum size of " + max);
  }
  return nullptr;
}

// Walks a BYTES input's buffers as Triton does: each element is a 4-byte
// length and that many bytes, an element may continue into the next buffer
// but a length may not be split; host memory only (a GPU buffer ends the
// check, Triton leaves those to the backend).
TRITONSERVER_Error* ValidateBytes(TRITONSERVER_InferenceRequest* r,
                                  const std::string& name,
                                  const RequestInput& in,
                                  const std::string& model) {
  const int64_t expected = ElementCount(in.batch_shape);
  int64_t checked = 0;
  size_t element_left = 0;
  size_t next = 0;
  const char* p = nullptr;
  size_t left = 0;
  while (left > 0 || next < in.data.size()) {
    if (left == 0) {
      const InputData& d = in.data[next++];
      if (d.type == TRITONSERVER_MEMORY_GPU) return nullptr;
      p = static_cast<const char*>(d.base);
      left = d.size;
    }
    if (element_left == 0) {
      if (left < 4) {
        return ErrArg(r->Prefix() +
                      "incomplete string length indicator for inference "
                      "input '" +
                      name + "' for model '" + model +
                      "', expecting 4 bytes but only " + std::to_string(left) +
                      " bytes available. Please make sure the string length "
                      "indicator is in one buffer.");
      }
      uint32_t len;
      std::memcpy(&len, p, 4);
      element_left = len;
      ++checked;
      if (checked > expected) {
        return ErrArg(r->Prefix() + "unexpected number of string elements " +
                      std::to_string(checked) + " for inference input '" +
                      name + "' for model '" + model + "', expecting " +
                      std::to_string(expected));
      }
      p += 4;
      left -= 4;
    }
    if (left >= element_left) {
      p += element_left;
      left -= element_left;
      element_left = 0;
    } else {
      element_left -= left;
      left = 0;
    }
  }
  if (checked != expected) {
    return ErrArg(r->Prefix() + "expected " + std::to_string(expected) +
                  " string elements for inference input '" + name +
                  "' for model '" + model + "', got " +
                  std::to_string(checked));
  }
  return nullptr;
}

// The name lists of Triton's input-count message: "['A','B']", and what
// Triton's string handling makes of an empty list ("]").
std::string NameList(const std::vector<std::string>& names) {
  std::string s = "[";
  for (const auto& n : names) s += "'" + n + "',";
  s.pop_back();
  return s + "]";
}

// Fills a raw input's datatype and shape from the model's only input, as
// Triton does at submission.
TRITONSERVER_Error* NormalizeRawInput(TRITONSERVER_InferenceRequest* r,
                                      Model* m) {
  const ModelConfig& c = m->config;
  if (r->inputs.size() != 1 || c.input.size() != 1) {
    return ErrArg(r->Prefix() + "Raw request must only have 1 input (found " +
                  std::to_string(r->inputs.size()) +
                  ") to be deduced but got " + std::to_string(c.input.size()) +
                  " inputs in '" + m->name + "' model configuration");
  }
  auto it = r->inputs.begin();
  if (r->raw_input_name != it->first) {
    return ErrArg(r->Prefix() + "Unexpected reference name for raw input '" +
                  r->raw_input_name + "' got '" + it->first + "'");
  }
  const TensorConfig& t = c.input[0];
  RequestInput& in = it->second;
  std::vector<int64_t> shape;
  if (c.max_batch_size != 0) shape.push_back(1);
  int64_t dynamic_axis = -1;
  uint64_t known = 1;
  for (int64_t d : t.dims) {
    if (d == -1) {
      if (dynamic_axis != -1) {
        return ErrArg(r->Prefix() + "The shape of the raw input '" + t.name +
                      "' can not be deduced because there are more than one "
                      "variable-sized dimension");
      }
      dynamic_axis = static_cast<int64_t>(shape.size());
    } else {
      known *= static_cast<uint64_t>(d);
    }
    shape.push_back(d);
  }
  if (t.datatype == TRITONSERVER_TYPE_BYTES) {
    if (dynamic_axis != -1 || known != 1) {
      return ErrArg(r->Prefix() + "For BYTE datatype raw input '" + t.name +
                    "', the model must have input shape [1]");
    }
    // Triton prepends the element's length; the fake does not support
    // that case.
    return Err(TRITONSERVER_ERROR_UNSUPPORTED,
               "raw BYTES inputs are not supported by the fake engine");
  }
  if (dynamic_axis != -1 && known > 0) {
    shape[dynamic_axis] =
        static_cast<int64_t>(in.total / known / DataTypeSize(t.datatype));
  }
  in.name = t.name;
  in.datatype = t.datatype;
  in.shape = shape;
  return nullptr;
}

// The outputs to send: those the request names, or every output of the
// model when it names none.
TRITONSERVER_Error* SelectOutputs(TRITONSERVER_InferenceRequest* r, Model* m) {
  const ModelConfig& c = m->config;
  r->outputs_to_send.clear();
  if (r->requested_outputs.empty()) {
    std::set<std::string> all;
    for (const auto& o : c.output) all.insert(o.name);
    for (const auto& n : all) {
      r->outputs_to_send.push_back(FindTensor(c.output, n));
    }
    return nullptr;
  }
  for (const auto& n : r->requested_outputs) {
    const TensorConfig* o = FindTensor(c.output, n);
    if (o == nullptr) {
      return ErrArg("unexpected inference output '" + n + "' for model '" +
                    m->name + "'");
    }
    r->outputs_to_send.push_back(o);
  }
  return nullptr;
}

// Only the number of inputs is checked here (names and shapes later).
TRITONSERVER_Error* CheckInputCount(TRITONSERVER_InferenceRequest* r,
                                    Model* m) {
  const ModelConfig& c = m->config;
  size_t required = 0;
  for (const auto& t : c.input) required += t.optional ? 0 : 1;
  if (r->inputs.size() <= c.input.size() && r->inputs.size() >= required) {
    return nullptr;
  }
  std::vector<std::string> missing, got;
  for (const auto& t : c.input) {
    if (!t.optional && r->FindInput(t.name) == nullptr) {
      missing.push_back(t.name);
    }
  }
  for (const auto& kv : r->inputs) got.push_back(kv.first);
  std::string got_list = got.empty() ? "[]" : NameList(got);
  std::string tail = " but got " + std::to_string(r->inputs.size()) +
                     " inputs for model '" + m->name + "'. Got input(s) " +
                     got_list + ", but missing required input(s) " +
                     NameList(missing) +
                     ". Please provide all required input(s).";
  if (c.input.size() == required) {
    return ErrArg(r->Prefix() + "expected " + std::to_string(c.input.size()) +
                  " inputs" + tail);
  }
  return ErrArg(r->Prefix() + "expected number of inputs between " +
                std::to_string(required) + " and " +
                std::to_string(c.input.size()) + tail);
}

// The batch size: the first dimension of the inputs of a batching model
// (Triton keeps it in a uint32_t; the first input with a non-zero one sets
// it). *shapes gets each input's shape without the batch dimension.
TRITONSERVER_Error* FindBatchSize(
    TRITONSERVER_InferenceRequest* r, Model* m, uint32_t* batch,
    std::map<std::string, std::vector<int64_t>>* shapes) {
  const ModelConfig& c = m->config;
  const std::string& model = m->name;
  for (auto& kv : r->inputs) {
    RequestInput& in = kv.second;
    if (FindTensor(c.input, in.name) == nullptr) {
      return ErrArg(ModelInputLookupError(in.name, model));
    }
    std::vector<int64_t>& shape = (*shapes)[kv.first];
    shape = in.shape;
    if (c.max_batch_size == 0) continue;
    if (in.shape.empty()) {
      return ErrArg(r->Prefix() + "input '" + in.name +
                    "' has no shape but model requires batch dimension for '" +
                    model + "'");
    }
    if (*batch == 0) {
      *batch = static_cast<uint32_t>(in.shape[0]);
    } else if (in.shape[0] != static_cast<int64_t>(*batch)) {
      return ErrArg(r->Prefix() + "input '" + in.name +
                    "' batch size does not match other inputs for '" + model +
                    "'");
    }
    shape.erase(shape.begin());
  }
  if (static_cast<int64_t>(*batch) > c.max_batch_size) {
    return ErrArg(r->Prefix() + "inference request batch-size must be <= " +
                  std::to_string(c.max_batch_size) + " for '" + model + "'");
  }
  return nullptr;
}

// An input's shape (without the batch dimension) against the model's dims:
// every dimension given, and equal where the model fixes it.
TRITONSERVER_Error* CheckInputShape(TRITONSERVER_InferenceRequest* r, Model* m,
                                    const std::string& name,
                                    const RequestInput& in,
                                    const TensorConfig& t,
                                    const std::vector<int64_t>& shape) {
  const ModelConfig& c = m->config;
  bool match = shape.size() == t.dims.size();
  for (size_t i = 0; match && i < shape.size(); ++i) {
    if (shape[i] == -1) {
      return ErrArg(
          r->Prefix() + "All input dimensions should be specified for input '" +
          name + "' for model '" + m->name + "', got " + ShapeString(in.shape));
    }
    if (t.dims[i] != -1 && t.dims[i] != shape[i]) match = false;
  }
  if (match) return nullptr;
  std::vector<int64_t> full;
  if (c.max_batch_size > 0) full.push_back(-1);
  full.insert(full.end(), t.dims.begin(), t.dims.end());
  std::string note =
      c.max_batch_size > 0
          ? "NOTE: Setting a non-zero max_batch_size in the model config "
            "requires a batch dimension to be prepended to each input "
            "shape. If you want to specify the full shape including the "
            "batch dim in your input dims config, try setting "
            "max_batch_size to zero. See the model configuration docs for "
            "more info on max_batch_size."
          : "";
  return ErrArg(r->Prefix() + "unexpected shape for input '" + name +
                "' for model '" + m->name + "'. Expected " + ShapeString(full) +
                ", got " + ShapeString(in.shape) + ". " + note);
}

// The shape a reshaped input has for the backend: the model's reshape, its
// variable dimensions taken from the request's in order.
void ApplyReshape(const TensorConfig& t, std::vector<int64_t>* shape) {
  std::vector<int64_t> variable;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i] == -1) variable.push_back((*shape)[i]);
  }
  size_t next = 0;
  shape->clear();
  for (int64_t d : t.reshape) {
    shape->push_back(d == -1 && next < variable.size() ? variable[next++] : d);
  }
}

// One input: data type, shape, then its data's size (or, for BYTES, its
// elements). Sets the input's batch_shape.
TRITONSERVER_Error* CheckInput(TRITONSERVER_InferenceRequest* r, Model* m,
                               const std::string& name, RequestInput* in,
                               uint32_t batch, std::vector<int64_t> shape) {
  const std::string& model = m->name;
  const TensorConfig* t = FindTensor(m->config.input, in->name);
  if (in->datatype != t->datatype) {
    return ErrArg(r->Prefix() + "inference input '" + name +
                  "' data-type is '" + DataTypeName(in->datatype) +
                  "', but model '" + model + "' expects '" +
                  DataTypeName(t->datatype) + "'");
  }
  if (auto* e = CheckInputShape(r, m, name, *in, *t, shape)) return e;
  if (t->has_reshape) ApplyReshape(*t, &shape);
  in->batch_shape.clear();
  if (batch != 0) in->batch_shape.push_back(batch);
  in->batch_shape.insert(in->batch_shape.end(), shape.begin(), shape.end());
  if (auto* e = UncountableShape(name, *in)) return e;
  if (in->datatype == TRITONSERVER_TYPE_BYTES) {
    return ValidateBytes(r, name, *in, model);
  }
  const int64_t expected = ByteSize(in->datatype, in->batch_shape);
  if (in->total > static_cast<size_t>(INT64_MAX) ||
      static_cast<int64_t>(in->total) != expected) {
    return ErrArg(r->Prefix() + "input byte size mismatch for input '" + name +
                  "' for model '" + model + "'. Expected " +
                  std::to_string(expected) + ", got " +
                  std::to_string(in->total));
  }
  return nullptr;
}

// Triton's checks at submission (InferenceRequest::Normalize), in its order
// and words.
TRITONSERVER_Error* Validate(TRITONSERVER_InferenceRequest* r, Model* m) {
  if (!r->raw_input_name.empty()) {
    if (auto* e = NormalizeRawInput(r, m)) return e;
  }
  if (auto* e = SelectOutputs(r, m)) return e;
  if (auto* e = CheckInputCount(r, m)) return e;
  uint32_t batch = 0;
  std::map<std::string, std::vector<int64_t>> shapes;  // without batch dim
  if (auto* e = FindBatchSize(r, m, &batch, &shapes)) return e;
  for (auto& kv : r->inputs) {
    if (auto* e =
            CheckInput(r, m, kv.first, &kv.second, batch, shapes[kv.first])) {
      return e;
    }
  }
  r->batch_size = batch == 0 ? 1 : batch;
  r->request_batch = batch;
  return nullptr;
}

}  // namespace

TRITONSERVER_Error* ValidateRequest(TRITONSERVER_InferenceRequest* r,
                                    Model* m) {
  return Validate(r, m);
}

}  // namespace fake
