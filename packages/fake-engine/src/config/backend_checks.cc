// The checks the fake's backends make on a model's config when the
// model is created: those of the real identity, repeat and square backends
// (their ModelInitialize), in their order and with their messages, plus the
// fake's own rule that repeat and square models are decoupled. Like the
// real ones, repeat and square read their tensors by position, not by name.
#include <map>
#include <utility>

#include "model_config.h"

namespace fake {
namespace {

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// Expectations on one tensor; each sets *problem and returns false when
// the tensor does not meet it.
bool ExpectName(const TensorConfig& t, const char* position, const char* want,
                std::string* problem) {
  if (t.name == want) return true;
  *problem = std::string("expected ") + position + " tensor name to be " +
             want + ", got " + t.name;
  return false;
}

bool ExpectShape(const TensorConfig& t, const char* what,
                 const std::vector<int64_t>& want, std::string* problem) {
  if (t.dims == want) return true;
  *problem = std::string("expected ") + what + " shape to be " +
             DimsText(want) + ", got " + DimsText(t.dims);
  return false;
}

bool ExpectType(const TensorConfig& t, const char* what, const char* want,
                std::string* problem) {
  if (t.data_type == std::string("TYPE_") + want) return true;
  *problem = std::string("expected ") + what + " datatype to be " + want +
             ", got " + t.data_type;
  return false;
}

// Repeat and square only work as decoupled models; the real backends do
// not check it at load (a non-decoupled model fails on its second
// response), the fake refuses such a config up front.
bool RequireDecoupled(const ModelConfig& cfg, std::string* problem) {
  if (cfg.decoupled) return true;
  *problem = cfg.backend +
             " backend requires a decoupled model: set "
             "model_transaction_policy { decoupled: true } in the model "
             "configuration";
  return false;
}

// index suffix -> (data type, shape or reshape); the first entry of a
// duplicated index wins.
using TensorsByIndex =
    std::map<std::string, std::pair<std::string, std::vector<int64_t>>>;

void AddByIndex(const TensorConfig& t, size_t prefix_length,
                TensorsByIndex* out) {
  out->emplace(t.name.substr(prefix_length),
               std::make_pair(t.data_type, t.has_reshape ? t.reshape : t.dims));
}

// Identity: INPUTn/OUTPUTn pairs of the same data type and shape.
bool CheckIdentity(const ModelConfig& cfg, std::string* problem) {
  if (cfg.input.size() != cfg.output.size()) {
    *problem = "model configuration must have equal input/output pairs";
    return false;
  }
  TensorsByIndex inputs, outputs;
  for (size_t i = 0; i < cfg.input.size(); ++i) {
    const TensorConfig& in = cfg.input[i];
    const TensorConfig& out = cfg.output[i];
    if (in.name.compare(0, 5, "INPUT") != 0) {
      *problem = "expected input name to follow INPUT<index> pattern, got '" +
                 in.name + "'";
      return false;
    }
    if (out.name.compare(0, 6, "OUTPUT") != 0) {
      *problem = "expected output name to follow OUTPUT<index> pattern, got '" +
                 out.name + "'";
      return false;
    }
    AddByIndex(in, 5, &inputs);
    AddByIndex(out, 6, &outputs);
  }
  for (const auto& out : outputs) {
    auto in = inputs.find(out.first);
    if (in == inputs.end()) {
      *problem = "expected input and output indices to match";
      return false;
    }
    if (in->second.first != out.second.first) {
      *problem = "expected input and output datatype to match, got " +
                 in->second.first + " and " + out.second.first;
      return false;
    }
    if (in->second.second != out.second.second) {
      *problem = "expected input and output shape to match, got " +
                 DimsText(in->second.second) + " and " +
                 DimsText(out.second.second);
      return false;
    }
  }
  return true;
}

// Repeat: inputs IN, DELAY, WAIT and outputs OUT, IDX, unbatched.
bool CheckRepeat(const ModelConfig& cfg, std::string* p) {
  if (cfg.max_batch_size != 0) {
    *p = "repeat backend only supports models with max_batch_size == 0";
    return false;
  }
  if (cfg.input.size() != 3) {
    *p = "expected 3 inputs, got " + std::to_string(cfg.input.size());
    return false;
  }
  if (cfg.output.size() != 2) {
    *p = "expected 2 outputs, got " + std::to_string(cfg.output.size());
    return false;
  }
  const TensorConfig& in = cfg.input[0];
  const TensorConfig& delay = cfg.input[1];
  const TensorConfig& wait = cfg.input[2];
  const TensorConfig& out = cfg.output[0];
  const TensorConfig& idx = cfg.output[1];
  if (!ExpectName(in, "first input", "IN", p) ||
      !ExpectName(delay, "second input", "DELAY", p) ||
      !ExpectName(wait, "third input", "WAIT", p) ||
      !ExpectName(out, "first output", "OUT", p) ||
      !ExpectName(idx, "second output", "IDX", p)) {
    return false;
  }
  if (in.dims.size() != 1) {
    *p = "expected IN shape to have one dimension, got " + DimsText(in.dims);
    return false;
  }
  if (in.dims != delay.dims) {
    *p = "expected IN and DELAY shape to match, got " + DimsText(in.dims) +
         " and " + DimsText(delay.dims);
    return false;
  }
  return ExpectShape(wait, "WAIT", {1}, p) && ExpectShape(out, "OUT", {1}, p) &&
         ExpectShape(idx, "IDX", {1}, p) && ExpectType(in, "IN", "INT32", p) &&
         ExpectType(delay, "DELAY", "UINT32", p) &&
         ExpectType(wait, "WAIT", "UINT32", p) &&
         ExpectType(out, "OUT", "INT32", p) &&
         ExpectType(idx, "IDX", "UINT32", p) && RequireDecoupled(cfg, p);
}

// Square: input IN and output OUT, both INT32 of shape [1].
bool CheckSquare(const ModelConfig& cfg, std::string* p) {
  if (cfg.input.size() != 1) {
    *p = "expected 1 input, got " + std::to_string(cfg.input.size());
    return false;
  }
  if (cfg.output.size() != 1) {
    *p = "expected 1 output, got " + std::to_string(cfg.output.size());
    return false;
  }
  const TensorConfig& in = cfg.input[0];
  const TensorConfig& out = cfg.output[0];
  return ExpectName(in, "first input", "IN", p) &&
         ExpectName(out, "first output", "OUT", p) &&
         ExpectShape(in, "IN", {1}, p) && ExpectShape(out, "OUT", {1}, p) &&
         ExpectType(in, "IN", "INT32", p) &&
         ExpectType(out, "OUT", "INT32", p) && RequireDecoupled(cfg, p);
}

// fake_text_stream (the fake's own, backends/text_stream.cc): the vLLM
// example's tensors, found by name, and the vLLM backend's additional
// outputs (each asked for by a BOOL return_<output> input); unbatched and
// decoupled.
bool CheckTextStream(const ModelConfig& cfg, std::string* p) {
  if (cfg.max_batch_size != 0) {
    *p = "fake_text_stream backend only supports models with "
         "max_batch_size == 0";
    return false;
  }
  static const std::map<std::string, const char*> kInputs = {
      {"text_input", "STRING"},
      {"stream", "BOOL"},
      {"sampling_parameters", "STRING"},
      {"exclude_input_in_output", "BOOL"},
      {"return_finish_reason", "BOOL"},
      {"return_num_input_tokens", "BOOL"},
      {"return_num_output_tokens", "BOOL"}};
  static const std::map<std::string, const char*> kOutputs = {
      {"text_output", "STRING"},
      {"finish_reason", "STRING"},
      {"num_input_tokens", "UINT32"},
      {"num_output_tokens", "UINT32"}};
  bool has_text_input = false;
  for (const TensorConfig& t : cfg.input) {
    auto known = kInputs.find(t.name);
    if (known == kInputs.end()) {
      *p = "fake_text_stream: unexpected input '" + t.name +
           "' (expected text_input, stream, sampling_parameters, "
           "exclude_input_in_output, return_finish_reason, "
           "return_num_input_tokens, return_num_output_tokens)";
      return false;
    }
    if (!ExpectType(t, t.name.c_str(), known->second, p)) return false;
    has_text_input |= t.name == "text_input";
  }
  if (!has_text_input) {
    *p = "fake_text_stream: expected an input named text_input";
    return false;
  }
  if (cfg.output.empty()) {
    *p = "expected 1 output, got 0";
    return false;
  }
  if (!ExpectName(cfg.output[0], "first output", "text_output", p)) {
    return false;
  }
  for (const TensorConfig& t : cfg.output) {
    auto known = kOutputs.find(t.name);
    if (known == kOutputs.end()) {
      *p = "fake_text_stream: unexpected output '" + t.name +
           "' (expected text_output, finish_reason, num_input_tokens, "
           "num_output_tokens)";
      return false;
    }
    if (!ExpectType(t, t.name.c_str(), known->second, p)) return false;
  }
  return RequireDecoupled(cfg, p);
}

// fake_text_embedding (the fake's own, backends/text_embedding.cc): one
// BYTES input of dims [1] (a text per batch element), one FP32 output of
// dims [D]; batching.
bool CheckTextEmbedding(const ModelConfig& cfg, std::string* p) {
  if (cfg.max_batch_size <= 0) {
    *p = "fake_text_embedding backend only supports models with "
         "max_batch_size > 0";
    return false;
  }
  if (cfg.input.size() != 1 || cfg.output.size() != 1) {
    *p = "fake_text_embedding: expected 1 input and 1 output, got " +
         std::to_string(cfg.input.size()) + " and " +
         std::to_string(cfg.output.size());
    return false;
  }
  const TensorConfig& in = cfg.input[0];
  const TensorConfig& out = cfg.output[0];
  if (!ExpectType(in, in.name.c_str(), "STRING", p) ||
      !ExpectShape(in, in.name.c_str(), {1}, p) ||
      !ExpectType(out, out.name.c_str(), "FP32", p)) {
    return false;
  }
  if (out.has_reshape || out.dims.size() != 1 || out.dims[0] < 1 ||
      out.dims[0] > 65536) {
    *p = "fake_text_embedding: expected " + out.name +
         " shape to be [D] with D from 1 to 65536, got " + DimsText(out.dims);
    return false;
  }
  return true;
}

}  // namespace

bool ValidateForBackend(const ModelConfig& cfg, std::string* error) {
  std::string problem;
  bool ok = true;
  if (cfg.backend == "identity") {
    ok = CheckIdentity(cfg, &problem);
  } else if (cfg.backend == "repeat") {
    ok = CheckRepeat(cfg, &problem);
  } else if (cfg.backend == "square") {
    ok = CheckSquare(cfg, &problem);
  } else if (cfg.backend == "fake_text_stream") {
    ok = CheckTextStream(cfg, &problem);
  } else if (cfg.backend == "fake_text_embedding") {
    ok = CheckTextEmbedding(cfg, &problem);
  }
  if (!ok && error != nullptr) *error = problem;
  return ok;
}

}  // namespace fake
