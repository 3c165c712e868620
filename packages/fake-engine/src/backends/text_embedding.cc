// fake_text_embedding: the fake's own embedding backend (no Triton backend
// has this name), shaped like a sentence encoder so that the gateway's
// /v1/embeddings can be tested without a model:
//   input   one BYTES tensor (any name), dims [1]: each batch element a text;
//   output  one FP32 tensor (any name), dims [D]: the text's vector;
//   max_batch_size > 0, so the dynamic batcher merges requests; a batch is
//   one execution (as identity: execute_delay_ms sleeps).
// Each text becomes a hashed bag of words: every word (the bytes between
// ASCII whitespace) is hashed with 32-bit FNV-1a; element hash % D gains 1,
// or loses 1 when the hash's top bit is set; the vector is then
// L2-normalized, in double, each element rounded to float once (a text
// without words is all zeros). Deterministic, cheap, and texts sharing words
// come out close: test/backends/embedder.ts computes the same in TypeScript
// (the tests' reference) and in a Python model for real Triton.
#include <cmath>
#include <cstring>

#include "../core/error.h"
#include "../core/response.h"
#include "../support/cuda_copy.h"
#include "backends.h"

namespace fake {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
         c == '\r';
}

uint32_t Fnv1a(const char* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 16777619u;
  }
  return h;
}

// The vector of one text, appended to *out (`dim` floats).
void Embed(const char* text, size_t n, int64_t dim, std::vector<float>* out) {
  std::vector<double> v(static_cast<size_t>(dim), 0.0);
  size_t i = 0;
  while (i < n) {
    while (i < n && IsSpace(text[i])) ++i;
    const size_t start = i;
    while (i < n && !IsSpace(text[i])) ++i;
    if (i == start) break;
    const uint32_t h = Fnv1a(text + start, i - start);
    v[h % static_cast<uint32_t>(dim)] += (h & 0x80000000u) != 0 ? -1.0 : 1.0;
  }
  double sum = 0;
  for (double x : v) sum += x * x;
  const double norm = std::sqrt(sum);
  for (double x : v)
    out->push_back(norm > 0 ? static_cast<float>(x / norm) : 0);
}

// The input's texts, in host memory; "" or the problem.
std::string ReadTexts(const RequestInput& in, std::vector<std::string>* texts) {
  std::string raw(in.total, '\0');
  size_t off = 0;
  for (const InputData& d : in.data) {
    std::string e = CopyBuffer(&raw[off], TRITONSERVER_MEMORY_CPU, 0, d.base,
                               d.type, d.type_id, d.size, in.name);
    if (!e.empty()) return e;
    off += d.size;
  }
  for (size_t at = 0; at < raw.size();) {
    uint32_t len = 0;
    if (raw.size() - at < 4) return in.name + ": a BYTES element is cut short";
    std::memcpy(&len, raw.data() + at, 4);
    at += 4;
    if (raw.size() - at < len) {
      return in.name + ": element of " + std::to_string(len) +
             " bytes runs past the input's " + std::to_string(raw.size()) +
             " bytes";
    }
    texts->emplace_back(raw.data() + at, len);
    at += len;
  }
  return "";
}

}  // namespace

void TextEmbeddingRespond(Model* m, TRITONSERVER_InferenceRequest* r,
                          TRITONSERVER_InferenceResponse* resp) {
  const ModelConfig& c = m->config;
  const RequestInput* in = r->FindInput(c.input[0].name);
  std::vector<std::string> texts;
  std::string problem = in == nullptr
                            ? "missing input '" + c.input[0].name + "'"
                            : ReadTexts(*in, &texts);
  const int64_t rows =
      in == nullptr || in->batch_shape.empty() ? 0 : in->batch_shape[0];
  if (problem.empty() && static_cast<size_t>(rows) != texts.size()) {
    problem = c.input[0].name + ": expected one text per batch element, got " +
              std::to_string(texts.size()) + " for " + std::to_string(rows);
  }
  if (!problem.empty()) {
    resp->error = ErrArg(r->Prefix() + "fake_text_embedding: " + problem);
    return;
  }
  const int64_t dim = c.output[0].dims[0];
  std::vector<float> values;
  values.reserve(texts.size() * static_cast<size_t>(dim));
  for (const std::string& t : texts) Embed(t.data(), t.size(), dim, &values);
  for (const TensorConfig* oc : r->outputs_to_send) {
    const size_t bytes = values.size() * sizeof(float);
    ResponseOutput* o = nullptr;
    TRITONSERVER_Error* err =
        AllocateOutput(resp, r->target, oc, {rows, dim}, bytes, &o);
    if (err == nullptr && bytes > 0) {
      std::string e = CopyBuffer(o->buffer, o->memory_type, o->memory_type_id,
                                 values.data(), TRITONSERVER_MEMORY_CPU, 0,
                                 bytes, oc->name);
      if (!e.empty()) err = Err(TRITONSERVER_ERROR_INTERNAL, e);
    }
    if (err != nullptr) {
      resp->error = err;
      return;
    }
  }
}

}  // namespace fake
