#include "request/builder.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "memory/cuda_runtime.h"
#include "memory/external_outputs.h"
#include "memory/js_memory.h"
#include "memory/mem_view.h"
#include "request/callbacks.h"
#include "request/kept_requests.h"
#include "request/submit_args.h"
#include "request/submit_layout.h"
#include "triton/api.h"
#include "triton/datatypes.h"
#include "triton/errors.h"

namespace triton_node {
namespace {

void RequireCudaFor(Napi::Env env, int kind, const Subject& what) {
  if (kind == kMemCpu || Cuda().available) return;
  throw MakeError(env, "UNSUPPORTED",
                  what.str() + ": " + (kind == kMemGpu ? "GPU" : "pinned") +
                      " memory needs CUDA, which is not available (" +
                      Cuda().reason + ")");
}

void Check(Napi::Env env, TRITONSERVER_Error* err) {
  if (err != nullptr) ThrowIfError(env, err);
}

// Inputs: the memory must stay alive and in place until RELEASE_ALL, whatever
// the caller does with its buffer. HostBuffer/CudaBuffer memory is ours (its
// use count defers a dispose()); an ArrayBuffer's memory is held through its
// backing store, and a resizable one, which could shrink under the request,
// is copied first (`view` then points at the copy).
void KeepInput(Napi::Env env, RequestContext* ctx, MemView* view) {
  if (view->use != nullptr) {
    napi_ref ref = nullptr;
    napi_create_reference(env, view->owner, 1, &ref);
    ctx->refs.push_back(ref);
    view->use->Acquire();
    ctx->buffer_uses.push_back(view->use);
    return;
  }
  JsMemoryKind kind = JsMemoryKind::kFixed;
  std::shared_ptr<void> hold = HoldJsMemory(view->array_buffer, &kind);
  if (hold == nullptr) {
    throw MakeError(env, "INTERNAL", "input memory has no ArrayBuffer");
  }
  if (kind == JsMemoryKind::kResizable) {
    std::shared_ptr<uint8_t> copy(new uint8_t[view->size > 0 ? view->size : 1],
                                  std::default_delete<uint8_t[]>());
    if (view->size > 0) std::memcpy(copy.get(), view->ptr, view->size);
    view->ptr = copy.get();
    hold = std::move(copy);
  } else if (auto use = UseExternalOutput(env, view->array_buffer)) {
    // An output of an earlier request: its dispose() must wait for this one.
    ctx->holds.push_back(std::move(use));
  }
  ctx->holds.push_back(std::move(hold));
}

// Destinations (`into`): held like inputs, plus a reference to the caller's
// object, which the result hands back. A resizable ArrayBuffer could shrink
// before Triton writes, so it is refused.
void KeepDestination(Napi::Env env, RequestContext* ctx, const MemView& view,
                     const Subject& what) {
  if (view.use == nullptr) {
    JsMemoryKind kind = JsMemoryKind::kFixed;
    std::shared_ptr<void> hold = HoldJsMemory(view.array_buffer, &kind);
    if (hold == nullptr) {
      throw MakeError(env, "INTERNAL", what.str() + " has no ArrayBuffer");
    }
    if (kind == JsMemoryKind::kResizable) {
      ThrowTypeError(env, what.str() +
                              ": a resizable ArrayBuffer cannot be a "
                              "destination (it could shrink before Triton "
                              "writes); use a fixed-length one");
    }
    if (auto use = UseExternalOutput(env, view.array_buffer)) {
      ctx->holds.push_back(std::move(use));
    }
    ctx->holds.push_back(std::move(hold));
  } else {
    view.use->Acquire();
    ctx->buffer_uses.push_back(view.use);
  }
  napi_ref ref = nullptr;
  napi_create_reference(env, view.owner, 1, &ref);
  ctx->refs.push_back(ref);
}

// A device input goes in with its buffer attributes (memory type, device,
// size and, for memory opened from another process, its CUDA IPC handle).
void AppendDeviceInput(Napi::Env env, RequestContext* ctx, const char* name,
                       const MemView& view, size_t byte_length) {
  const TritonApi& api = Api();
  const bool ipc = view.ipc != nullptr;
  TRITONSERVER_BufferAttributes*& slot =
      ipc ? ctx->ipc_attributes : ctx->attributes;
  if (slot == nullptr) Check(env, api.TRITONSERVER_BufferAttributesNew(&slot));
  TRITONSERVER_BufferAttributes* attrs = slot;
  Check(env, api.TRITONSERVER_BufferAttributesSetMemoryType(
                 attrs, TRITONSERVER_MEMORY_GPU));
  Check(env,
        api.TRITONSERVER_BufferAttributesSetMemoryTypeId(attrs, view.device));
  Check(env, api.TRITONSERVER_BufferAttributesSetByteSize(attrs, byte_length));
  if (ipc) {
    Check(env, api.TRITONSERVER_BufferAttributesSetCudaIpcHandle(
                   attrs, const_cast<unsigned char*>(view.ipc->bytes)));
  }
  Check(env,
        api.TRITONSERVER_InferenceRequestAppendInputDataWithBufferAttributes(
            ctx->request, name, view.ptr, attrs));
}

struct Counts {
  uint32_t inputs;
  uint32_t outputs;
  uint32_t parameters;
};

// The counts of the header, checked against the number of arguments.
Counts ReadCounts(const Napi::CallbackInfo& info, const SubmitNumbers& nums) {
  Counts n{nums.Count(kSlotInputCount, "input count"),
           nums.Count(kSlotOutputCount, "output count"),
           nums.Count(kSlotParameterCount, "parameter count")};
  const size_t expected =
      kSubmitFixedArgs +
      2 * (static_cast<size_t>(n.inputs) + n.outputs + n.parameters);
  if (info.Length() != expected) {
    ThrowTypeError(info.Env(),
                   "submit: expected " + std::to_string(expected) +
                       " arguments for " + std::to_string(n.inputs) +
                       " inputs, " + std::to_string(n.outputs) +
                       " outputs and " + std::to_string(n.parameters) +
                       " parameters, got " + std::to_string(info.Length()));
  }
  return n;
}

void ResetForBuild(RequestContext* ctx) {
  ctx->request = nullptr;
  ctx->kept_record = nullptr;
  ctx->trace = nullptr;
  ctx->placements.count = 0;
  ctx->placements.default_kind = kMemCpu;
  ctx->placements.default_device = 0;
  ctx->refs.clear();
  std::memset(ctx->timestamps, 0, sizeof(ctx->timestamps));
}

// Placement defaults: validated before Triton sees anything.
void ReadPlacementDefaults(Napi::Env env, const SubmitNumbers& nums,
                           RequestContext* ctx) {
  int kind = nums.Enum(kSlotOutputMemory, kMemGpu, "outputMemory");
  if (kind >= 0) {
    ctx->placements.default_kind = kind;
    RequireCudaFor(env, kind, "outputMemory");
  }
  int64_t device = nums.Optional(kSlotOutputDevice, "outputDevice");
  if (device >= 0) ctx->placements.default_device = static_cast<int>(device);
}

void SetCorrelationId(Napi::Env env, TRITONSERVER_InferenceRequest* r,
                      napi_value v) {
  const TritonApi& api = Api();
  napi_valuetype type;
  napi_typeof(env, v, &type);
  if (type == napi_string) {
    Utf8 cid(env, v, "correlationId");
    Check(env, api.TRITONSERVER_InferenceRequestSetCorrelationIdString(
                   r, cid.c_str()));
  } else {
    Check(env, api.TRITONSERVER_InferenceRequestSetCorrelationId(
                   r, ToUint64(env, v, "correlationId")));
  }
}

// The request itself and its options (id, priority, timeout, correlation
// id, flags).
void CreateRequest(const Napi::CallbackInfo& info, const SubmitNumbers& nums,
                   TRITONSERVER_Server* server, RequestContext* ctx) {
  const TritonApi& api = Api();
  Napi::Env env = info.Env();
  Utf8 model(env, info[1], "model");
  int64_t version = nums.Optional(kSlotVersion, "version");
  Check(env, api.TRITONSERVER_InferenceRequestNew(&ctx->request, server,
                                                  model.c_str(), version));
  TRITONSERVER_InferenceRequest* r = ctx->request;
  if (!IsNullish(env, info[2])) {
    Utf8 id(env, info[2], "request id");
    Check(env, api.TRITONSERVER_InferenceRequestSetId(r, id.c_str()));
  }
  int64_t n = nums.Optional(kSlotPriority, "priority");
  if (n >= 0) {
    Check(env, api.TRITONSERVER_InferenceRequestSetPriorityUInt64(
                   r, static_cast<uint64_t>(n)));
  }
  n = nums.Optional(kSlotTimeout, "timeoutMicroseconds");
  if (n >= 0) {
    Check(env, api.TRITONSERVER_InferenceRequestSetTimeoutMicroseconds(
                   r, static_cast<uint64_t>(n)));
  }
  if (!IsNullish(env, info[3])) SetCorrelationId(env, r, info[3]);
  n = nums.Optional(kSlotFlags, "flags");
  if (n >= 0) {
    if (n > UINT32_MAX) ThrowRangeError(env, "flags is out of range");
    Check(env, api.TRITONSERVER_InferenceRequestSetFlags(
                   r, static_cast<uint32_t>(n)));
  }
}

// An input's shape from nums (on the stack up to 16 dimensions).
class Shape {
 public:
  Shape(Napi::Env env, SubmitNumbers& nums, const Subject& what) {
    rank_ = nums.Count(nums.Next(), "rank");
    if (rank_ > 16) {
      heap_.resize(rank_);
      dims_ = heap_.data();
    }
    for (uint32_t d = 0; d < rank_; ++d) {
      double dim = nums.At(nums.Next());
      if (!IsInteger(dim)) {
        ThrowTypeError(env, what.str() + ": shape must hold integers");
      }
      dims_[d] = static_cast<int64_t>(dim);
    }
  }
  const int64_t* dims() const { return dims_; }
  uint32_t rank() const { return rank_; }

 private:
  int64_t inline_[16];
  std::vector<int64_t> heap_;
  int64_t* dims_ = inline_;
  uint32_t rank_ = 0;
};

// The byte length Triton gets: the whole view, or less when asked.
size_t InputByteLength(Napi::Env env, int64_t asked, const MemView& view,
                       const Subject& what) {
  if (asked < 0) return view.size;
  if (static_cast<uint64_t>(asked) > view.size) {
    ThrowRangeError(env, what.str() + ": byteLength " + std::to_string(asked) +
                             " exceeds its data (" + std::to_string(view.size) +
                             " bytes)");
  }
  return static_cast<size_t>(asked);
}

// An input read before Triton sees any of it.
struct PlainInput {
  std::string name;
  int datatype = 0;
  std::vector<int64_t> dims;
  MemView view;
  size_t byte_length = 0;
};

// Reads input `arg` (name, datatype, byteLength, shape, data), checked,
// without touching Triton.
void ReadPlainInput(const Napi::CallbackInfo& info, size_t arg,
                    SubmitNumbers& nums, PlainInput* in) {
  Napi::Env env = info.Env();
  Utf8 name(env, info[arg], "input name");
  const Subject what("input", name.c_str());
  int code = nums.Enum(nums.Next(), kLastDataType, "datatype");
  if (code <= static_cast<int>(TRITONSERVER_TYPE_INVALID)) {
    ThrowTypeError(
        env, what.str() + ": unknown datatype code " + std::to_string(code));
  }
  int64_t byte_length_arg = nums.Optional(nums.Next(), "byteLength");
  Shape shape(env, nums, what);
  in->view = MemView();
  if (!ResolveMemView(env, info[arg + 1], what, &in->view)) {
    ThrowTypeError(env, what.str() +
                            ": data must be an ArrayBufferView, HostBuffer "
                            "or CudaBuffer");
  }
  in->byte_length = InputByteLength(env, byte_length_arg, in->view, what);
  in->name.assign(name.c_str(), name.size());
  in->datatype = code;
  in->dims.assign(shape.dims(), shape.dims() + shape.rank());
}

// Lends an input's memory to the request (held until RELEASE_ALL).
void AppendPlainInput(Napi::Env env, RequestContext* ctx, PlainInput* in) {
  KeepInput(env, ctx, &in->view);
  if (in->view.kind == kMemGpu) {
    AppendDeviceInput(env, ctx, in->name.c_str(), in->view, in->byte_length);
  } else {
    Check(env,
          Api().TRITONSERVER_InferenceRequestAppendInputData(
              ctx->request, in->name.c_str(), in->view.ptr, in->byte_length,
              static_cast<TRITONSERVER_MemoryType>(in->view.kind), 0));
  }
}

// One input, added and appended as it is (borrowed until RELEASE_ALL).
void AddInput(const Napi::CallbackInfo& info, size_t arg, SubmitNumbers& nums,
              RequestContext* ctx) {
  Napi::Env env = info.Env();
  thread_local PlainInput in;  // JS thread only; keeps its capacity
  ReadPlainInput(info, arg, nums, &in);
  Check(env, Api().TRITONSERVER_InferenceRequestAddInput(
                 ctx->request, in.name.c_str(),
                 static_cast<TRITONSERVER_DataType>(in.datatype),
                 in.dims.data(), in.dims.size()));
  AppendPlainInput(env, ctx, &in);
  in.view = MemView();
}

// An `into` destination for output `index`.
void SetDestination(Napi::Env env, napi_value into, uint32_t index,
                    const Subject& what, RequestContext* ctx) {
  OutputPlacement& p = ctx->placements.items[index];
  if (!ResolveMemView(env, into, what.With(" destination"), &p.into)) {
    ThrowTypeError(env, what.str() +
                            ": into must be an ArrayBufferView, "
                            "HostBuffer or CudaBuffer");
  }
  p.has_into = true;
  p.into_tag.owner = OutputBuffer::kCaller;
  p.into_tag.kind = p.into.kind;
  p.into_tag.device = p.into.device;
  p.into_tag.ptr = p.into.ptr;
  p.into_tag.capacity = p.into.size;
  p.into_tag.placement = static_cast<int>(index);
  KeepDestination(env, ctx, p.into, what.With(" destination"));
  p.into_ref = ctx->refs.back();
}

// One requested output's placement (its name in ctx->placements).
void ReadOutput(const Napi::CallbackInfo& info, size_t arg, uint32_t index,
                SubmitNumbers& nums, RequestContext* ctx) {
  Napi::Env env = info.Env();
  Utf8 name(env, info[arg], "output name");
  const Subject what("output", name.c_str());
  OutputPlacement& p = ctx->placements.items[index];
  p.name.assign(name.c_str(), name.size());
  p.kind = ctx->placements.default_kind;
  p.device = ctx->placements.default_device;
  p.has_into = false;
  p.into_ref = nullptr;
  ctx->placements.count = index + 1;
  int mem = nums.Enum(nums.Next(), kMemGpu, "output memory");
  if (mem >= 0) {
    p.kind = mem;
    RequireCudaFor(env, p.kind, what);
  }
  int64_t dev = nums.Optional(nums.Next(), "output device");
  if (dev >= 0) p.device = static_cast<int>(dev);
  if (!IsNullish(env, info[arg + 1])) {
    SetDestination(env, info[arg + 1], index, what, ctx);
  }
}

// One requested output and its placement.
void AddOutput(const Napi::CallbackInfo& info, size_t arg, uint32_t index,
               SubmitNumbers& nums, RequestContext* ctx) {
  ReadOutput(info, arg, index, nums, ctx);
  Check(info.Env(),
        Api().TRITONSERVER_InferenceRequestAddRequestedOutput(
            ctx->request, ctx->placements.items[index].name.c_str()));
}

// One parameter: name and value, typed by the TS layer.
void AddParameter(const Napi::CallbackInfo& info, size_t arg,
                  SubmitNumbers& nums, TRITONSERVER_InferenceRequest* r) {
  const TritonApi& api = Api();
  Napi::Env env = info.Env();
  Utf8 name(env, info[arg], "parameter name");
  napi_value value = info[arg + 1];
  const Subject what("parameter", name.c_str());
  switch (nums.Enum(nums.Next(), kParamBool, "parameter type")) {
    case kParamString: {
      Utf8 s(env, value, what);
      Check(env, api.TRITONSERVER_InferenceRequestSetStringParameter(
                     r, name.c_str(), s.c_str()));
      break;
    }
    case kParamInt:
      Check(env, api.TRITONSERVER_InferenceRequestSetIntParameter(
                     r, name.c_str(), ToInt64(env, value, what)));
      break;
    case kParamDouble:
      Check(env, api.TRITONSERVER_InferenceRequestSetDoubleParameter(
                     r, name.c_str(), ToNumber(env, value, what)));
      break;
    case kParamBool:
      Check(env, api.TRITONSERVER_InferenceRequestSetBoolParameter(
                     r, name.c_str(), ToBool(env, value, what)));
      break;
    default:
      ThrowTypeError(env, what.str() + ": missing type");
  }
}

void SetCallbacks(Napi::Env env, const SubmitNumbers& nums,
                  TRITONSERVER_ResponseAllocator* allocator,
                  RequestContext* ctx) {
  const TritonApi& api = Api();
  TRITONSERVER_InferenceRequest* r = ctx->request;
  Check(env, api.TRITONSERVER_InferenceRequestSetReleaseCallback(
                 r, OnRequestRelease, ctx));
  Check(env, api.TRITONSERVER_InferenceRequestSetResponseCallback(
                 r, allocator, &ctx->placements, OnResponseComplete, ctx));
  if (nums.At(kSlotTiming) != 0) {
    Check(env, api.TRITONSERVER_InferenceTraceNew(
                   &ctx->trace, TRITONSERVER_TRACE_LEVEL_TIMESTAMPS, 0,
                   OnTraceActivity, OnTraceRelease, ctx));
    uint64_t id = 0;
    Check(env, api.TRITONSERVER_InferenceTraceId(ctx->trace, &id));
    ctx->traces.Start(id);
    ctx->lifecycle.Traced();
  }
}

// ---- Plain requests, built on a kept request when one fits ---------------

// No id, correlation id, priority, timeout, flags, parameters or trace:
// nothing that stays on a Triton request object besides its model, inputs
// and requested outputs.
bool IsPlain(const Napi::CallbackInfo& info, const SubmitNumbers& nums,
             const Counts& counts) {
  Napi::Env env = info.Env();
  return counts.parameters == 0 && nums.At(kSlotPriority) == -1 &&
         nums.At(kSlotTimeout) == -1 && nums.At(kSlotFlags) == -1 &&
         nums.At(kSlotTiming) == 0 && IsNullish(env, info[2]) &&
         IsNullish(env, info[3]);
}

// Whether the kept request's inputs are these, each with exactly the bytes
// its shape needs: then only the data is swapped and Triton skips its
// checks, which is safe only because this one holds.
bool SameInputs(const KeptRequest* kept, const std::vector<PlainInput>& inputs,
                uint32_t count) {
  if (kept->input_count != count) return false;
  for (uint32_t i = 0; i < count; ++i) {
    const PlainInput& in = inputs[i];
    const KeptInput& k = kept->inputs[i];
    if (k.datatype != in.datatype || k.name != in.name || k.dims != in.dims) {
      return false;
    }
    // Triton's own size; 0 for BYTES, whose bytes have no fixed size.
    const size_t element = Api().TRITONSERVER_DataTypeByteSize(
        static_cast<TRITONSERVER_DataType>(in.datatype));
    if (element == 0) return false;
    uint64_t elements = 1;
    for (int64_t d : in.dims) {
      if (d < 0) return false;
      elements *= static_cast<uint64_t>(d);
    }
    if (elements * element != in.byte_length) return false;
  }
  return true;
}

bool SameOutputs(const KeptRequest* kept, const OutputPlacements& placements,
                 uint32_t count) {
  if (kept->output_count != count) return false;
  for (uint32_t i = 0; i < count; ++i) {
    if (kept->outputs[i] != placements.items[i].name) return false;
  }
  return true;
}

// The kept request (taken, same inputs) made ready for new data; its
// requested outputs cleared when they differ. Returns whether they match.
bool ReuseKept(Napi::Env env, const std::vector<PlainInput>& inputs,
               const Counts& counts, KeptRequest* kept, RequestContext* ctx) {
  const TritonApi& api = Api();
  // Ours from here: a failed build deletes it with the context's request.
  ctx->request = kept->request;
  ctx->kept_record = kept;
  for (uint32_t i = 0; i < counts.inputs; ++i) {
    Check(env, api.TRITONSERVER_InferenceRequestRemoveAllInputData(
                   ctx->request, inputs[i].name.c_str()));
  }
  if (SameOutputs(kept, ctx->placements, counts.outputs)) return true;
  kept->output_count = 0;
  Check(env, api.TRITONSERVER_InferenceRequestRemoveAllRequestedOutputs(
                 ctx->request));
  return false;
}

// A new request of `model`/`version` with these inputs, and the record
// that keeps it at its release.
KeptRequest* NewKeptRequest(Napi::Env env, const Utf8& model, int64_t version,
                            const std::vector<PlainInput>& inputs,
                            const Counts& counts, TRITONSERVER_Server* server,
                            RequestContext* ctx) {
  const TritonApi& api = Api();
  KeptRequest* kept = ctx->kept_requests->NewRecord();
  ctx->kept_record = kept;
  kept->epoch = ModelEpoch();  // before the request: a later change is seen
  kept->model.assign(model.c_str(), model.size());
  kept->version = version;
  kept->input_count = 0;
  kept->output_count = 0;
  Check(env, api.TRITONSERVER_InferenceRequestNew(&ctx->request, server,
                                                  model.c_str(), version));
  kept->request = ctx->request;
  if (kept->inputs.size() < counts.inputs) kept->inputs.resize(counts.inputs);
  for (uint32_t i = 0; i < counts.inputs; ++i) {
    const PlainInput& in = inputs[i];
    Check(env, api.TRITONSERVER_InferenceRequestAddInput(
                   ctx->request, in.name.c_str(),
                   static_cast<TRITONSERVER_DataType>(in.datatype),
                   in.dims.data(), in.dims.size()));
    KeptInput& k = kept->inputs[i];
    k.name = in.name;
    k.datatype = in.datatype;
    k.dims = in.dims;
    kept->input_count = i + 1;
  }
  return kept;
}

// A plain request: on a kept request of the same model, version and inputs
// when there is one (its requested outputs redone if they differ), else on
// a new one that is kept at its release.
void BuildPlain(const Napi::CallbackInfo& info, SubmitNumbers& nums,
                const Counts& counts, TRITONSERVER_Server* server,
                RequestContext* ctx) {
  const TritonApi& api = Api();
  Napi::Env env = info.Env();
  Utf8 model(env, info[1], "model");
  const int64_t version = nums.Optional(kSlotVersion, "version");
  // JS thread only, and per thread: its strings keep their capacity.
  thread_local std::vector<PlainInput> inputs;
  if (inputs.size() < counts.inputs) inputs.resize(counts.inputs);
  size_t arg = kSubmitFixedArgs;
  for (uint32_t i = 0; i < counts.inputs; ++i, arg += 2) {
    ReadPlainInput(info, arg, nums, &inputs[i]);
  }
  if (ctx->placements.items.size() < counts.outputs) {
    ctx->placements.items.resize(counts.outputs);
  }
  for (uint32_t i = 0; i < counts.outputs; ++i, arg += 2) {
    ReadOutput(info, arg, i, nums, ctx);
  }
  KeptRequestPool* pool = ctx->kept_requests;
  KeptRequest* kept = pool->Take(model.c_str(), model.size(), version);
  if (kept != nullptr && !SameInputs(kept, inputs, counts.inputs)) {
    // Other inputs: a new request. (Triton keeps a request's inputs in an
    // unordered_map, whose order, seen in its error messages, depends on
    // the map's history: a cleared one differs from a new one.)
    DropError(api.TRITONSERVER_InferenceRequestDelete(kept->request));
    pool->Discard(kept);
    kept = nullptr;
  }
  bool same_outputs = false;
  if (kept != nullptr) {
    same_outputs = ReuseKept(env, inputs, counts, kept, ctx);
  } else {
    kept = NewKeptRequest(env, model, version, inputs, counts, server, ctx);
  }
  for (uint32_t i = 0; i < counts.inputs; ++i) {
    AppendPlainInput(env, ctx, &inputs[i]);
  }
  if (!same_outputs) {
    if (kept->outputs.size() < counts.outputs)
      kept->outputs.resize(counts.outputs);
    for (uint32_t i = 0; i < counts.outputs; ++i) {
      const std::string& name = ctx->placements.items[i].name;
      Check(env, api.TRITONSERVER_InferenceRequestAddRequestedOutput(
                     ctx->request, name.c_str()));
      kept->outputs[i] = name;
      kept->output_count = i + 1;
    }
  }
  // Their memory is the caller's: no view outlives this call here.
  for (uint32_t i = 0; i < counts.inputs; ++i) inputs[i].view = MemView();
}

}  // namespace

void BuildRequest(const Napi::CallbackInfo& info, TRITONSERVER_Server* server,
                  TRITONSERVER_ResponseAllocator* allocator,
                  RequestContext* ctx) {
  Napi::Env env = info.Env();
  ResetForBuild(ctx);
  SubmitNumbers nums(env, info);
  const Counts counts = ReadCounts(info, nums);
  ReadPlacementDefaults(env, nums, ctx);
  if (ctx->kept_requests != nullptr && ctx->kept_requests->enabled() &&
      IsPlain(info, nums, counts)) {
    BuildPlain(info, nums, counts, server, ctx);
    SetCallbacks(env, nums, allocator, ctx);
    return;
  }
  CreateRequest(info, nums, server, ctx);
  size_t arg = kSubmitFixedArgs;
  for (uint32_t i = 0; i < counts.inputs; ++i, arg += 2) {
    AddInput(info, arg, nums, ctx);
  }
  if (ctx->placements.items.size() < counts.outputs) {
    ctx->placements.items.resize(counts.outputs);
  }
  for (uint32_t i = 0; i < counts.outputs; ++i, arg += 2) {
    AddOutput(info, arg, i, nums, ctx);
  }
  for (uint32_t i = 0; i < counts.parameters; ++i, arg += 2) {
    AddParameter(info, arg, nums, ctx->request);
  }
  SetCallbacks(env, nums, allocator, ctx);
}

}  // namespace triton_node
