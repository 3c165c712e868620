// The fake's own text backend, fake_text_stream (backends/text_stream.cc):
// words streamed one response each, the whole text in one response, max_tokens
// and stop from sampling_parameters or request parameters, bad requests
// and configs, and cancellation stopping the stream early.
#include "engine_support.h"

using namespace fake_engine_test;

namespace {

const char* const kTextModel =
    "name: \"%s\" backend: \"fake_text_stream\" max_batch_size: 0\n"
    "model_transaction_policy { decoupled: true }\n"
    "input [ { name: \"text_input\" data_type: TYPE_STRING dims: [ 1 ] },\n"
    "  { name: \"stream\" data_type: TYPE_BOOL dims: [ 1 ] optional: true },\n"
    "  { name: \"sampling_parameters\" data_type: TYPE_STRING dims: [ 1 ]\n"
    "    optional: true },\n"
    "  { name: \"exclude_input_in_output\" data_type: TYPE_BOOL dims: [ 1 ]\n"
    "    optional: true } ]\n"
    "output [ { name: \"text_output\" data_type: TYPE_STRING dims: [ -1 ] } "
    "]\n"
    "parameters { key: \"word_delay_ms\" value: { string_value: \"%s\" } }\n";

void AddModel(const std::string& repo, const std::string& name,
              const std::string& config) {
  ::mkdir((repo + "/" + name).c_str(), 0755);
  ::mkdir((repo + "/" + name + "/1").c_str(), 0755);
  WriteFile(repo + "/" + name + "/config.pbtxt", config);
}

std::string TextConfig(const char* name, const char* delay_ms) {
  char buf[1024];
  std::snprintf(buf, sizeof(buf), kTextModel, name, delay_ms);
  return buf;
}

TRITONSERVER_Server* TextServer(std::string* repo) {
  char tmpl[] = "/tmp/fake-text-test-XXXXXX";
  *repo = ::mkdtemp(tmpl);
  AddModel(*repo, "text_fast", TextConfig("text_fast", "0"));
  AddModel(*repo, "text_slow", TextConfig("text_slow", "20"));
  std::string bad = TextConfig("text_bad", "0");
  bad.replace(bad.find("TYPE_BOOL"), 9, "TYPE_INT32");
  AddModel(*repo, "text_bad", bad);
  TRITONSERVER_ServerOptions* o = nullptr;
  E(A().TRITONSERVER_ServerOptionsNew(&o));
  E(A().TRITONSERVER_ServerOptionsSetModelRepositoryPath(o, repo->c_str()));
  E(A().TRITONSERVER_ServerOptionsSetModelControlMode(
      o, TRITONSERVER_MODEL_CONTROL_EXPLICIT));
  E(A().TRITONSERVER_ServerOptionsSetLogInfo(o, false));
  E(A().TRITONSERVER_ServerOptionsSetLogError(o, false));
  TRITONSERVER_Server* s = nullptr;
  CHECK_EQ(E(A().TRITONSERVER_ServerNew(&s, o)), std::string());
  E(A().TRITONSERVER_ServerOptionsDelete(o));
  CHECK_EQ(E(A().TRITONSERVER_ServerLoadModel(s, "text_fast")), std::string());
  CHECK_EQ(E(A().TRITONSERVER_ServerLoadModel(s, "text_slow")), std::string());
  WaitLoadTail();
  return s;
}

// The texts of every response of one request (or its error).
struct Texts {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> texts;
  std::string error;
  bool final = false, released = false;
};

void TextResponse(TRITONSERVER_InferenceResponse* resp, const uint32_t flags,
                  void* userp) {
  auto* t = static_cast<Texts*>(userp);
  std::lock_guard<std::mutex> l(t->mu);
  if (resp != nullptr) {
    TRITONSERVER_Error* err = A().TRITONSERVER_InferenceResponseError(resp);
    if (err != nullptr) t->error = E(err);
    uint32_t n = 0;
    A().TRITONSERVER_InferenceResponseOutputCount(resp, &n);
    for (uint32_t i = 0; i < n; ++i) {
      const char* name;
      TRITONSERVER_DataType dt;
      const int64_t* shape;
      uint64_t dims;
      const void* base;
      size_t size;
      TRITONSERVER_MemoryType mt;
      int64_t id;
      void* up;
      A().TRITONSERVER_InferenceResponseOutput(
          resp, i, &name, &dt, &shape, &dims, &base, &size, &mt, &id, &up);
      uint32_t len = 0;
      if (dt == TRITONSERVER_TYPE_BYTES && size >= 4) {
        std::memcpy(&len, base, 4);
        t->texts.emplace_back(static_cast<const char*>(base) + 4, len);
      }
    }
    E(A().TRITONSERVER_InferenceResponseDelete(resp));
  }
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) t->final = true;
  t->cv.notify_all();
}

void TextRelease(TRITONSERVER_InferenceRequest*, const uint32_t, void* userp) {
  auto* t = static_cast<Texts*>(userp);
  std::lock_guard<std::mutex> l(t->mu);
  t->released = true;
  t->cv.notify_all();
}

TRITONSERVER_Error* TextAlloc(TRITONSERVER_ResponseAllocator*, const char*,
                              size_t size, TRITONSERVER_MemoryType, int64_t,
                              void*, void** buffer, void** buffer_userp,
                              TRITONSERVER_MemoryType* type, int64_t* id) {
  *buffer = size == 0 ? nullptr : std::malloc(size);
  *buffer_userp = nullptr;
  *type = TRITONSERVER_MEMORY_CPU;
  *id = 0;
  return nullptr;
}

TRITONSERVER_Error* TextFree(TRITONSERVER_ResponseAllocator*, void* buffer,
                             void*, size_t, TRITONSERVER_MemoryType, int64_t) {
  std::free(buffer);
  return nullptr;
}

TRITONSERVER_ResponseAllocator* TextAllocator() {
  TRITONSERVER_ResponseAllocator* a = nullptr;
  E(A().TRITONSERVER_ResponseAllocatorNew(&a, TextAlloc, TextFree, nullptr));
  return a;
}

struct Ask {
  const char* model = "text_fast";
  std::string prompt;
  bool stream = true;
  std::string sampling;  // "" leaves the input out
  int64_t max_tokens_parameter = -1;
  int exclude_input = -1;  // -1 leaves exclude_input_in_output out
};

// Keeps the input buffers alive until the request is released.
struct TextRequest {
  std::string prompt, sampling;
  bool stream = false;
  bool exclude = false;
  TRITONSERVER_InferenceRequest* r = nullptr;
};

void AddBytes(TRITONSERVER_InferenceRequest* r, const char* name,
              std::string* holder, const std::string& text) {
  const uint32_t n = static_cast<uint32_t>(text.size());
  *holder = std::string(reinterpret_cast<const char*>(&n), 4) + text;
  int64_t one = 1;
  E(A().TRITONSERVER_InferenceRequestAddInput(r, name, TRITONSERVER_TYPE_BYTES,
                                              &one, 1));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      r, name, holder->data(), holder->size(), TRITONSERVER_MEMORY_CPU, 0));
}

void Submit(TRITONSERVER_Server* s, TRITONSERVER_ResponseAllocator* a,
            const Ask& ask, TextRequest* q, Texts* t) {
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestNew(&q->r, s, ask.model, -1)),
           std::string());
  AddBytes(q->r, "text_input", &q->prompt, ask.prompt);
  if (!ask.sampling.empty()) {
    AddBytes(q->r, "sampling_parameters", &q->sampling, ask.sampling);
  }
  q->stream = ask.stream;
  int64_t one = 1;
  E(A().TRITONSERVER_InferenceRequestAddInput(q->r, "stream",
                                              TRITONSERVER_TYPE_BOOL, &one, 1));
  E(A().TRITONSERVER_InferenceRequestAppendInputData(
      q->r, "stream", &q->stream, 1, TRITONSERVER_MEMORY_CPU, 0));
  if (ask.exclude_input >= 0) {
    q->exclude = ask.exclude_input != 0;
    E(A().TRITONSERVER_InferenceRequestAddInput(
        q->r, "exclude_input_in_output", TRITONSERVER_TYPE_BOOL, &one, 1));
    E(A().TRITONSERVER_InferenceRequestAppendInputData(
        q->r, "exclude_input_in_output", &q->exclude, 1,
        TRITONSERVER_MEMORY_CPU, 0));
  }
  if (ask.max_tokens_parameter >= 0) {
    E(A().TRITONSERVER_InferenceRequestSetIntParameter(
        q->r, "max_tokens", ask.max_tokens_parameter));
  }
  E(A().TRITONSERVER_InferenceRequestSetReleaseCallback(q->r, TextRelease, t));
  E(A().TRITONSERVER_InferenceRequestSetResponseCallback(q->r, a, t,
                                                         TextResponse, t));
  CHECK_EQ(E(A().TRITONSERVER_ServerInferAsync(s, q->r, nullptr)),
           std::string());
}

bool WaitFinal(Texts* t, int ms = 5000) {
  std::unique_lock<std::mutex> l(t->mu);
  return t->cv.wait_for(l, std::chrono::milliseconds(ms),
                        [&] { return t->final && t->released; });
}

// Runs one request to its end; the texts it got.
std::vector<std::string> Run(TRITONSERVER_Server* s,
                             TRITONSERVER_ResponseAllocator* a, const Ask& ask,
                             std::string* error = nullptr) {
  Texts t;
  TextRequest q;
  Submit(s, a, ask, &q, &t);
  CHECK(WaitFinal(&t));
  E(A().TRITONSERVER_InferenceRequestDelete(q.r));
  if (error != nullptr) *error = t.error;
  return t.texts;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "|";
  return out;
}

}  // namespace

TEST(TextStreamAnswersWordByWord) {
  if (!A().ok) return;
  std::string repo;
  TRITONSERVER_Server* s = TextServer(&repo);
  TRITONSERVER_ResponseAllocator* a = TextAllocator();
  Ask ask;
  ask.prompt = "the quick  brown fox";
  CHECK_EQ(Join(Run(s, a, ask)), std::string("the| quick| brown| fox|"));
  ask.sampling = R"({"max_tokens": 6, "temperature": 0.5})";
  CHECK_EQ(Join(Run(s, a, ask)),
           std::string("the| quick| brown| fox| the| quick|"));
  ask.sampling = R"({"max_tokens": 6, "stop": ["fox"]})";
  CHECK_EQ(Join(Run(s, a, ask)), std::string("the| quick| brown|"));
  ask.sampling = "";
  ask.max_tokens_parameter = 2;
  CHECK_EQ(Join(Run(s, a, ask)), std::string("the| quick|"));
  ask.stream = false;
  CHECK_EQ(Join(Run(s, a, ask)),
           std::string("the quick  brown fox the quick|"));
  ask.prompt = "";
  CHECK_EQ(Join(Run(s, a, ask)), std::string("|"));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(TextStreamRefusesBadRequestsAndConfigs) {
  if (!A().ok) return;
  std::string repo;
  TRITONSERVER_Server* s = TextServer(&repo);
  TRITONSERVER_ResponseAllocator* a = TextAllocator();
  Ask ask;
  ask.prompt = "hello";
  ask.sampling = "{not json";
  std::string error;
  CHECK(Run(s, a, ask, &error).empty());
  CHECK(error.find("sampling_parameters: expected a JSON object") !=
        std::string::npos);
  ask.sampling = R"({"max_tokens": -1})";
  Run(s, a, ask, &error);
  CHECK(error.find("max_tokens must be a non-negative integer") !=
        std::string::npos);
  // As the vLLM backend: a stream never carries the prompt.
  ask.sampling = "";
  ask.exclude_input = 0;
  CHECK(Run(s, a, ask, &error).empty());
  CHECK(error.find("When streaming, `exclude_input_in_output` = False") !=
        std::string::npos);
  ask.exclude_input = 1;
  CHECK_EQ(Join(Run(s, a, ask, &error)), std::string("hello|"));
  ask.stream = false;
  ask.exclude_input = 0;
  CHECK_EQ(Join(Run(s, a, ask, &error)), std::string("hello hello|"));
  const std::string load = E(A().TRITONSERVER_ServerLoadModel(s, "text_bad"));
  CHECK(load.find("expected stream datatype to be BOOL, got TYPE_INT32") !=
        std::string::npos);
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}

TEST(TextStreamStopsWhenCancelled) {
  if (!A().ok) return;
  std::string repo;
  TRITONSERVER_Server* s = TextServer(&repo);
  TRITONSERVER_ResponseAllocator* a = TextAllocator();
  Ask ask;
  ask.model = "text_slow";  // 20 ms a word: 100 words would take 2 s
  ask.prompt = "one two three";
  ask.sampling = R"({"max_tokens": 100})";
  Texts t;
  TextRequest q;
  const auto start = std::chrono::steady_clock::now();
  Submit(s, a, ask, &q, &t);
  {
    std::unique_lock<std::mutex> l(t.mu);
    CHECK(t.cv.wait_for(l, std::chrono::seconds(5),
                        [&] { return t.texts.size() >= 2; }));
  }
  CHECK_EQ(E(A().TRITONSERVER_InferenceRequestCancel(q.r)), std::string());
  CHECK(WaitFinal(&t));
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took < std::chrono::milliseconds(1000));
  {
    std::lock_guard<std::mutex> l(t.mu);
    CHECK(t.texts.size() < 10);
  }
  E(A().TRITONSERVER_InferenceRequestDelete(q.r));
  E(A().TRITONSERVER_ResponseAllocatorDelete(a));
  E(A().TRITONSERVER_ServerDelete(s));
  CHECK(AllZero());
}
