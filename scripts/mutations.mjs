// The mutations `npm run mutate` applies, one at a time, to a copy of the
// repository: each breaks one promise of the library, and at least one of
// the named test files must then fail (the mutation is "killed").
//
// Each is an exact text replacement in one file: `search` must occur exactly
// once there (test/mutations.test.ts checks it on every `npm test`, so the
// list cannot silently drift from the code; update a search text when the
// code it names changes). `gpu: true` runs the GPU project on the CUDA stub
// (packages/test-support/gpu/stub-cudart.c), which makes pinned/device memory and early frees
// visible on a machine without a GPU.

import { MUTATIONS as EMBEDDINGS } from './mutations/embeddings.mjs';
import { MUTATIONS as EXIT_ORDER } from './mutations/exit-order.mjs';
import { MUTATIONS as FAKE_CLIENTS } from './mutations/fake-clients.mjs';
import { MUTATIONS as FILES_DEPLOY } from './mutations/files-deploy.mjs';
import { MUTATIONS as FIRST_CLI } from './mutations/first-cli.mjs';
import { MUTATIONS as GATEWAY_PROTOCOL } from './mutations/gateway-protocol.mjs';
import { MUTATIONS as GPU_LIFECYCLE } from './mutations/gpu-lifecycle.mjs';
import { MUTATIONS as GPU_LINT_DOCTOR } from './mutations/gpu-lint-doctor.mjs';
import { MUTATIONS as GPU_LLM } from './mutations/gpu-llm.mjs';
import { MUTATIONS as GUARD_REDIS } from './mutations/guard-redis.mjs';
import { MUTATIONS as HOSTILE_ENGINE } from './mutations/hostile-engine.mjs';
import { MUTATIONS as HOSTILE_GATEWAY } from './mutations/hostile-gateway.mjs';
import { MUTATIONS as HOSTILE_MODELS } from './mutations/hostile-models.mjs';
import { MUTATIONS as HOSTILE_REDIS } from './mutations/hostile-redis.mjs';
import { MUTATIONS as HOSTILE_WORKERS } from './mutations/hostile-workers.mjs';
import { MUTATIONS as HOSTILE } from './mutations/hostile.mjs';
import { MUTATIONS as KEPT_REQUESTS } from './mutations/kept-requests.mjs';
import { MUTATIONS as LLM_GATEWAY } from './mutations/llm-gateway.mjs';
import { MUTATIONS as LOGGING_EXT } from './mutations/logging-ext.mjs';
import { MUTATIONS as ONNX_MODELS } from './mutations/onnx-models.mjs';
import { MUTATIONS as R26 } from './mutations/r26.mjs';
import { MUTATIONS as REAL_MODELS } from './mutations/real-models.mjs';
import { MUTATIONS as SHIPPED } from './mutations/shipped.mjs';
import { MUTATIONS as TENANT_FRONT } from './mutations/tenant-front.mjs';
import { MUTATIONS as TRACE_OTEL } from './mutations/trace-otel.mjs';
import { MUTATIONS as WIRE_FIXES } from './mutations/wire-fixes.mjs';

/**
 * @typedef {object} Mutation
 * @property {string} name
 * @property {string} why  the promise it breaks
 * @property {string} file  path from the repository root
 * @property {string} search  exact text, found exactly once
 * @property {string} replace
 * @property {string[]} tests  test files that must catch it
 * @property {boolean} [gpu]  run the GPU project on the CUDA stub
 */

/** @type {Mutation[]} */
const CORE = [
  {
    name: 'inputs-copied',
    why: 'zero copy: every CPU input that goes the general way ({ data, shape }, DataView, ...) is copied before submission',
    file: 'packages/triton-node/lib/request/submit-layout.ts',
    search: '  b.args.push(name, input.data);\n',
    replace:
      '  b.args.push(\n' +
      '    name,\n' +
      '    ArrayBuffer.isView(input.data)\n' +
      '      ? new Uint8Array(input.data.buffer.slice(input.data.byteOffset, input.data.byteOffset + input.data.byteLength))\n' +
      '      : input.data,\n' +
      '  );\n',
    tests: ['packages/triton-node/test/request/zero-copy.test.ts'],
  },
  {
    name: 'cancel-not-sent',
    why: 'cancellation: Cancel() no longer calls TRITONSERVER_InferenceRequestCancel',
    file: 'packages/triton-node/native/request/ledger.cc',
    search: '  DropError(Api().TRITONSERVER_InferenceRequestCancel(request));\n',
    replace: '  (void)request;\n',
    tests: ['packages/triton-node/test/request/cancellation.test.ts'],
  },
  {
    name: 'recycle-keeps-references',
    why: 'no leak: a recycled request context no longer drops the references to inputs and destinations',
    file: 'packages/triton-node/native/request/context.cc',
    search:
      '  ReleaseBufferUses(&ctx->buffer_uses);  // may free a disposed buffer\n' +
      '  for (napi_ref ref : ctx->refs) napi_delete_reference(env, ref);\n' +
      '  ctx->refs.clear();\n' +
      '  ctx->holds.clear();  // may free memory the caller detached meanwhile\n',
    replace: '  ReleaseBufferUses(&ctx->buffer_uses);  // may free a disposed buffer\n  ctx->refs.clear();\n',
    tests: [
      'packages/triton-node/test/memory/no-growth.test.ts',
      'packages/triton-node/test/request/zero-copy.test.ts',
    ],
  },
  {
    name: 'context-never-recycled',
    why: 'no leak: the JS side never sees FINAL for a response, so the request context is never recycled',
    file: 'packages/triton-node/native/request/delivery.cc',
    search: '  if (final) ctx->lifecycle.JsSaw(Ending::kFinal);\n',
    replace: '',
    tests: [
      'packages/triton-node/test/memory/no-growth.test.ts',
      'packages/triton-node/test/request/zero-copy.test.ts',
    ],
  },
  {
    name: 'request-never-deleted',
    why: 'ownership: a released and final request is never deleted',
    file: 'packages/triton-node/native/request/ledger.cc',
    search: '    if (ended.delete_request) to_delete = ctx->request;\n',
    replace: '    (void)ended.delete_request;\n',
    tests: ['packages/triton-node/test/request/infer.test.ts'],
  },
  {
    name: 'response-never-deleted',
    why: 'ownership: responses are not deleted after their outputs are converted',
    file: 'packages/triton-node/native/request/completion_queue.cc',
    search:
      '    TRITONSERVER_Error* err =\n        Api().TRITONSERVER_InferenceResponseDelete(c->response);\n',
    replace: '    TRITONSERVER_Error* err = nullptr;\n',
    tests: ['packages/triton-node/test/request/infer.test.ts'],
  },
  {
    name: 'finalizer-keeps-output',
    why: 'no leak: a collected output ArrayBuffer no longer gives its pooled buffer back',
    file: 'packages/triton-node/native/memory/external_outputs.cc',
    search: '  if (give_back) GiveBack(handle->buffer);\n  if (!keep_handle) delete handle;\n',
    replace: '  if (!keep_handle) delete handle;\n',
    tests: [
      'packages/triton-node/test/memory/no-growth.test.ts',
      'packages/triton-node/test/request/zero-copy.test.ts',
      'packages/triton-node/test/request/infer.test.ts',
    ],
  },
  {
    name: 'outputs-copied',
    why: 'zero copy: CPU outputs are copied instead of handed over as the allocator buffer',
    file: 'packages/triton-node/native/request/outputs.cc',
    search: '                   buffer->ptr == out.base && !data->CopyOutputs();\n',
    replace: '                   buffer->ptr == out.base && false;\n',
    tests: ['packages/triton-node/test/request/zero-copy.test.ts'],
  },
  {
    name: 'into-ignored',
    why: 'zero copy: an output destination (`into`) is ignored; the output lands in a pooled buffer',
    file: 'packages/triton-node/native/request/builder.cc',
    search: '  p.has_into = true;\n',
    replace: '  p.has_into = false;\n',
    tests: ['packages/triton-node/test/request/zero-copy.test.ts'],
  },
  {
    name: 'dispose-keeps-output',
    why: 'tensor.dispose() no longer gives the output memory back',
    file: 'packages/triton-node/lib/tensor/tensor.ts',
    search: '    if (owned instanceof ArrayBuffer) addon().releaseOutput(owned);\n',
    replace: '    if (owned instanceof ArrayBuffer) void owned;\n',
    tests: [
      'packages/triton-node/test/memory/no-growth.test.ts',
      'packages/triton-node/test/request/zero-copy.test.ts',
    ],
  },
  {
    name: 'stream-final-ignored',
    why: 'stream end: FINAL no longer ends a stream',
    file: 'packages/triton-node/lib/request/inference.ts',
    search: '        if (ev.final) stream._end();\n',
    replace: '',
    tests: ['packages/triton-node/test/request/stream.test.ts'],
  },
  {
    name: 'stream-abort-not-cancelling',
    why: "cancellation: a stream's AbortSignal settles JS but no longer cancels the request",
    file: 'packages/triton-node/lib/request/inference.ts',
    search:
      '      if (!state.done && state.token >= 0) this.#cancel(state.token);\n      state.done = true;\n',
    replace: '      state.done = true;\n',
    tests: ['packages/triton-node/test/request/cancellation.test.ts'],
  },
  {
    name: 'error-code-misnamed',
    why: "errors: Triton's NOT_FOUND reaches JS as UNAVAILABLE",
    file: 'packages/triton-node/native/triton/errors.cc',
    search: '    {TRITONSERVER_ERROR_NOT_FOUND, "NOT_FOUND"},\n',
    replace: '    {TRITONSERVER_ERROR_NOT_FOUND, "UNAVAILABLE"},\n',
    tests: ['packages/triton-node/test/request/infer.test.ts'],
  },
  {
    name: 'priority-dropped',
    why: 'request properties: priority is validated but never sent',
    file: 'packages/triton-node/lib/request/submit-layout.ts',
    search: "    nums[SUBMIT_SLOTS.priority] = nonNegativeInteger('request.priority', request.priority);\n",
    replace: "    nonNegativeInteger('request.priority', request.priority);\n",
    tests: ['packages/triton-node/test/request/request-fields.test.ts'],
  },
  {
    name: 'correlation-id-dropped',
    why: 'request properties: the correlation id is validated but never sent',
    file: 'packages/triton-node/lib/request/submit-layout.ts',
    search: '  if (request.correlationId !== undefined) b.args[2] = correlationId(request.correlationId);\n',
    replace: '  if (request.correlationId !== undefined) correlationId(request.correlationId);\n',
    tests: ['packages/triton-node/test/request/request-fields.test.ts'],
  },
  {
    name: 'int-parameter-as-double',
    why: 'request parameters: integral numbers go to Triton as doubles',
    file: 'packages/triton-node/lib/request/validate.ts',
    search: "      if (Number.isSafeInteger(value)) out.push([key, 'int', value]);\n",
    replace: "      if (Number.isSafeInteger(value)) out.push([key, 'double', value]);\n",
    tests: ['packages/triton-node/test/request/request-fields.test.ts'],
  },
  {
    name: 'placement-ignored',
    why: 'allocator placement: outputs go where the backend prefers (CPU), not where the caller asked',
    file: 'packages/triton-node/native/memory/response_allocator.cc',
    search:
      '  int kind = placement    ? placement->kind\n' +
      '             : placements ? placements->default_kind\n' +
      '                          : static_cast<int>(kMemCpu);\n',
    replace: '  int kind = static_cast<int>(preferred_type);\n',
    tests: ['packages/triton-node/test/gpu/infer.test.ts'],
    gpu: true,
  },
  {
    name: 'pinned-from-pageable',
    why: "pinned memory: 'pinned' output buffers come from malloc, not cudaHostAlloc",
    file: 'packages/triton-node/native/memory/buffer_pool.cc',
    search: '    case kMemPinned:\n      return static_cast<uint8_t*>(CudaAllocHost(bytes, error));\n',
    replace:
      '    case kMemPinned:\n      return static_cast<uint8_t*>(std::malloc(bytes == 0 ? 1 : bytes));\n',
    tests: ['packages/triton-node/test/gpu/memory.test.ts'],
    gpu: true,
  },
  {
    name: 'gpu-output-never-returned',
    why: 'no leak: a disposed or collected GPU/pinned output never goes back to the pool',
    file: 'packages/triton-node/native/memory/external_outputs.cc',
    search:
      '    BufferPool::live_js_buffers.fetch_sub(1, std::memory_order_relaxed);\n' +
      '    BufferPool::Return(buffer);\n  };\n',
    replace: '    BufferPool::live_js_buffers.fetch_sub(1, std::memory_order_relaxed);\n  };\n',
    tests: ['packages/triton-node/test/gpu/memory.test.ts'],
    gpu: true,
  },
  {
    name: 'host-buffer-early-free',
    why: 'release order: a pinned buffer disposed during a request is freed at once, under the request',
    file: 'packages/triton-node/native/objects/host_buffer.cc',
    search: '  if (!disposed_) {\n    disposed_ = true;\n    if (users() == 0) ReleaseMemory();\n  }\n',
    replace: '  if (!disposed_) {\n    disposed_ = true;\n    ReleaseMemory();\n  }\n',
    tests: ['packages/triton-node/test/gpu/infer.test.ts'],
    gpu: true,
  },
  {
    name: 'cuda-buffer-early-free',
    why: 'release order: a device buffer disposed during a request is freed at once, under the request',
    file: 'packages/triton-node/native/objects/cuda_buffer.cc',
    search: '  if (disposed_) return;\n  disposed_ = true;\n  if (users() == 0) ReleaseMemory();\n',
    replace: '  if (disposed_) return;\n  disposed_ = true;\n  ReleaseMemory();\n',
    tests: ['packages/triton-node/test/gpu/infer.test.ts'],
    gpu: true,
  },
  {
    name: 'buffer-use-not-counted',
    why: 'release order: a request no longer counts as a user of the HostBuffer/CudaBuffer it borrows',
    file: 'packages/triton-node/native/request/builder.cc',
    search: '    view.use->Acquire();\n',
    replace: '',
    tests: ['packages/triton-node/test/gpu/infer.test.ts'],
    gpu: true,
  },
  {
    name: 'host-buffer-double-free',
    why: 'ownership: a disposed pinned buffer is freed again when collected',
    file: 'packages/triton-node/native/objects/host_buffer.cc',
    search: 'void HostBufferWrap::ReleaseMemory() {\n  if (release_) release_();\n  release_ = nullptr;\n}\n',
    replace: 'void HostBufferWrap::ReleaseMemory() {\n  if (release_) release_();\n}\n',
    tests: ['packages/triton-node/test/gpu/memory.test.ts'],
    gpu: true,
  },
  {
    name: 'input-memory-not-held',
    why: 'memory under an in-flight request: an input ArrayBuffer detached while in flight is no longer kept alive',
    file: 'packages/triton-node/native/request/builder.cc',
    search: '    ctx->holds.push_back(std::move(use));\n  }\n  ctx->holds.push_back(std::move(hold));\n}\n',
    replace:
      '    ctx->holds.push_back(std::move(use));\n  }\n  if (kind == JsMemoryKind::kResizable) ctx->holds.push_back(std::move(hold));\n}\n',
    tests: ['packages/triton-node/test/memory/caller-memory.test.ts'],
  },
  {
    name: 'resizable-input-not-copied',
    why: 'memory under an in-flight request: an input on a resizable ArrayBuffer goes in uncopied (it can shrink under the request)',
    file: 'packages/triton-node/native/request/builder.cc',
    search: '  if (kind == JsMemoryKind::kResizable) {\n    std::shared_ptr<uint8_t> copy(',
    replace: '  if (false) {\n    std::shared_ptr<uint8_t> copy(',
    tests: ['packages/triton-node/test/memory/caller-memory.test.ts'],
  },
  {
    name: 'null-ipc-handle',
    why: 'real GPU Triton: every device input is appended with a null CUDA IPC handle (Triton copies 64 bytes from it)',
    file: 'packages/triton-node/native/request/builder.cc',
    search:
      '  if (ipc) {\n' +
      '    Check(env, api.TRITONSERVER_BufferAttributesSetCudaIpcHandle(\n' +
      '                   attrs, const_cast<unsigned char*>(view.ipc->bytes)));\n' +
      '  }\n',
    replace:
      '  Check(env, api.TRITONSERVER_BufferAttributesSetCudaIpcHandle(\n' +
      '                 attrs, ipc ? const_cast<unsigned char*>(view.ipc->bytes) : nullptr));\n',
    tests: [
      'packages/triton-node/test/gpu/infer.test.ts',
      'packages/triton-node/test/gpu/placements.test.ts',
    ],
    gpu: true,
  },
  {
    name: 'exit-code-lost',
    why: "exit paths: a process whose stop timed out with a request in a backend goes on into Triton's static destructors",
    file: 'packages/triton-node/native/server/exit_registry.cc',
    search: '  if (!triton_running && !g_server_left.load()) return;\n',
    replace: '  (void)triton_running;\n  return;\n',
    tests: ['packages/triton-node/test/lifecycle/process.test.ts'],
  },
  {
    name: 'timed-out-stop-not-cancelling',
    why: 'stop: requests still in flight when the exit timeout expires are not cancelled (they run the queue out)',
    file: 'packages/triton-node/native/server/stop.cc',
    search: '    if (deferred) {\n      CancelInflight();\n      CancelAttachments();\n    }\n',
    replace: '    (void)deferred;\n',
    tests: ['packages/triton-node/test/api/server.test.ts'],
  },
  {
    name: 'attached-server-deploys',
    why: 'an attached server deploys (the owner keeps the history and canaries; a worker would start a second one)',
    file: 'packages/triton-node/lib/api/server.ts',
    search: '    if (!this.#attached) return;\n',
    replace: '    return;\n',
    tests: ['packages/triton-node/test/lifecycle/shared-server.test.ts'],
  },
  {
    name: 'owner-stop-leaves-attachments-stopping',
    why: "the owner's stop never lets its attached servers count as stopped: their workers' event loops are held for good",
    file: 'packages/triton-node/native/server/share.cc',
    search: '    if (phase_ == Phase::kStopping) {\n',
    replace: '    if (false) {\n',
    tests: ['packages/triton-node/test/lifecycle/shared-server.test.ts'],
  },
  {
    name: 'timed-out-stop-deleted',
    why: "stop: a server whose stop timed out is deleted (once its requests settle), and Triton's model deleter threads then use the deleted server",
    file: 'packages/triton-node/native/server/stop.cc',
    search: '    if (failed) {\n      // A stop that timed out is never followed by ServerDelete.',
    replace: '    if (false) {\n      // A stop that timed out is never followed by ServerDelete.',
    tests: ['packages/triton-node/test/lifecycle/late-callbacks.test.ts'],
  },
  {
    name: 'unload-right-after-load',
    why: "model control: an unload or a stop no longer keeps off a load that just returned (Triton's instance thread may still be returning from the warm-up)",
    file: 'packages/triton-node/native/server/core.h',
    search: '  static constexpr std::chrono::milliseconds kLoadSettle{100};\n',
    replace: '  static constexpr std::chrono::milliseconds kLoadSettle{0};\n',
    tests: ['packages/triton-node/test/lifecycle/late-callbacks.test.ts'],
  },
  {
    name: 'nul-accepted',
    why: 'strings: a NUL in a request id or parameter is passed on, and Triton cuts the string there',
    file: 'packages/triton-node/native/request/submit_args.cc',
    search: "  if (std::memchr(data_, '\\0', length_) == nullptr) return;\n",
    replace: '  return;\n',
    tests: ['packages/triton-node/test/memory/caller-memory.test.ts'],
  },
  {
    name: 'planned-inputs-copied',
    why: "zero copy on the fast path: a TypedArray input of the input's own class is copied before submission",
    file: 'packages/triton-node/lib/request/submit-layout.ts',
    search: '  b.args.push(name, value as TypedArray);\n',
    replace: '  b.args.push(name, (value as TypedArray).slice());\n',
    tests: ['packages/triton-node/test/request/zero-copy.test.ts'],
  },
  {
    name: 'parameters-stale-names',
    why: "a result's parameters are its own: the decoder reuses the object maker of an earlier list of names",
    file: 'packages/triton-node/lib/addon/events.ts',
    search: '    for (let k = 0; same && k < count; k++) same = this.lastNames[k] === names[k];\n',
    replace: '\n',
    tests: ['packages/triton-node/test/request/request-fields.test.ts'],
  },
  {
    name: 'slab-rewritten',
    why: "small outputs are the result's own: each drain writes the slab from its start, over earlier results",
    file: 'packages/triton-node/native/request/event_encoder.cc',
    search: '  *base = AlignSlab(slab_used_);\n',
    replace: '  *base = 0;\n',
    tests: ['packages/triton-node/test/memory/output-slab.test.ts'],
  },
  {
    name: 'startup-reasons-dropped',
    why: 'errors name the thing: a failed start says only "failed to load all models", not which model failed and why',
    file: 'packages/triton-node/lib/api/server.ts',
    search: "  return Promise.reject(withHint(err, failures.map(formatStartupFailure).join('; ')));\n",
    replace: '  return Promise.reject(err);\n',
    tests: [
      'packages/triton-node/test/api/startup-options.test.ts',
      'packages/triton-node/test/api/startup-causes.test.ts',
    ],
  },
  {
    name: 'startup-causes-not-read-from-files',
    why: "errors name the thing: a model whose folder fails Triton's poll (a config that does not parse, no version folder) is reported without its cause",
    file: 'packages/triton-node/lib/api/startup-causes.ts',
    search: '        : modelFolderProblem(join(folder.repo, model), model, options);\n',
    replace: '        : undefined;\n',
    tests: ['packages/triton-node/test/api/startup-causes.test.ts'],
  },
  {
    name: 'failed-server-handed-out',
    why: 'no crash: a server that failed before its model repository (not live) is handed to the caller, whose model calls crash real Triton',
    file: 'packages/triton-node/lib/api/server.ts',
    search: '  if (!(await handle.isLive().catch(() => false))) {\n',
    replace: '  if (false) {\n',
    tests: ['packages/triton-node/test/api/startup-options.test.ts'],
  },
  {
    name: 'fake-lookup-unheld',
    why: "no hung Promise: the fake takes a request's reference on its model after the lookup's lock (a preemption there lets an unload finalize the model under the new request, which then never runs)",
    file: 'packages/fake-engine/src/core/engine.cc',
    search:
      '  std::lock_guard<std::mutex> lock(mu);\n' +
      '  TRITONSERVER_Error* e = FindReadyLocked(name, version, out);\n' +
      '  if (e == nullptr) (*out)->AddRef();\n',
    replace:
      '  TRITONSERVER_Error* e;\n' +
      '  {\n' +
      '    std::lock_guard<std::mutex> lock(mu);\n' +
      '    e = FindReadyLocked(name, version, out);\n' +
      '  }\n' +
      '  std::this_thread::sleep_for(std::chrono::microseconds(300));\n' +
      '  if (e == nullptr) (*out)->AddRef();\n',
    tests: ['packages/fake-engine/test/native-tests.test.ts'],
  },
  {
    name: 'fake-rate-limiter-unchecked',
    why: 'the fake as strict as Triton: a model needing more of a rate-limiter resource than the server has loads anyway',
    file: 'packages/fake-engine/src/scheduling/rate_limiter.cc',
    search: '        if (count < r.second) {\n',
    replace: '        if (false) {\n',
    tests: ['packages/triton-node/test/api/scheduling-options.test.ts'],
  },
  {
    name: 'deploy-pin-ignored',
    why: "safe rollout: unversioned requests go to Triton's highest ready version instead of the pinned one, so a new version takes traffic before its canary",
    file: 'packages/triton-node/lib/api/server.ts',
    search: '    return this.#deployments.infer(name, (v) => this.#inference.infer(name, v, request));\n',
    replace: '    return this.#inference.infer(name, modelVersion, request);\n',
    tests: ['packages/triton-node/test/deploy/deploy.test.ts'],
  },
  {
    name: 'deploy-failed-canary-kept',
    why: 'safe rollout: a version whose canary failed is pinned anyway',
    file: 'packages/triton-node/lib/deploy/deploy.ts',
    search: '    if (verdict.failure !== undefined) {\n',
    replace: '    if (false) {\n',
    tests: ['packages/triton-node/test/deploy/deploy.test.ts'],
  },
  {
    name: 'config-map-as-list',
    why: 'lossless config text: map fields are written as plain lists, which do not read back as maps',
    file: 'packages/triton-node/lib/config/pbtxt.ts',
    search: '  if (isMapField(name, path) && isMessage(value)) {\n',
    replace: '  if (false) {\n',
    tests: ['packages/triton-node/test/config/model-config.test.ts'],
  },
  {
    name: 'tune-original-not-restored',
    why: 'tune puts the original config back: after a run the model keeps the last configuration measured',
    file: 'packages/triton-node/lib/tune/index.ts',
    search: '    await server.loadModel(name, { config: original });\n',
    replace: '',
    tests: ['packages/triton-node/test/tune/tune.test.ts'],
  },
  {
    name: 'lint-positions-lost',
    why: 'lint findings point at the field: every finding lands on line 1, column 1',
    file: 'packages/triton-node/lib/lint/index.ts',
    search: '    if (p !== undefined) ({ line, column } = p);\n',
    replace: '',
    tests: ['packages/triton-node/test/lint/lint.test.ts'],
  },
  {
    name: 'ensemble-wrong-tensor',
    why: "ensembles: a step reads the tensor its input map names (here: always the ensemble's first input)",
    file: 'packages/fake-engine/src/scheduling/ensemble_plan.cc',
    search: '      step.input_to_tensor.emplace(m.first, m.second);\n',
    replace: '      step.input_to_tensor.emplace(m.first, cfg.input.front().name);\n',
    tests: ['packages/triton-node/test/backends/ensemble.test.ts'],
  },
  {
    name: 'ensemble-error-unprefixed',
    why: "ensembles: a failing step's error reaches the caller prefixed \"in ensemble '<name>', \" as Triton words it",
    file: 'packages/fake-engine/src/scheduling/ensemble_outputs.cc',
    search: '    status_.message = "in ensemble \'" + plan_.name + "\', " + status_.message;\n',
    replace: '\n',
    tests: ['packages/triton-node/test/backends/ensemble.test.ts'],
  },
  {
    name: 'stopped-server-deleted',
    why: "a stopped server is parked while another runs: deleting it tears down Triton's process-wide memory managers and every ensemble of the running server fails",
    file: 'packages/triton-node/native/triton/server_handles.cc',
    search: '  if (!running.empty()) {\n    registry.parked.push_back(server);\n    return nullptr;\n  }\n',
    replace: '',
    tests: ['packages/triton-node/test/backends/ensemble.test.ts'],
  },
  {
    name: 'stand-in-unmarked',
    why: 'stand-ins say so: every response of a stand-in backend carries the parameter triton_node_stand_in',
    file: 'packages/fake-engine/src/backends/stand_ins.cc',
    search: '  resp->extra_params.emplace_back(marker);\n',
    replace: '  delete marker;\n',
    tests: ['packages/triton-node/test/backends/stand-ins.test.ts'],
  },
  {
    name: 'stand-in-uninvited',
    why: 'stand-ins are opt-in: without fakeEngine.standIns() a model of a missing backend fails to load as on Triton',
    file: 'packages/fake-engine/src/backends/stand_ins.cc',
    search: '  if (it == g_stand_ins->end()) return false;\n',
    replace: '  if (it == g_stand_ins->end()) {\n    *mode = "zeros";\n    return true;\n  }\n',
    tests: ['packages/triton-node/test/backends/stand-ins.test.ts'],
  },
  {
    name: 'guard-any-api-key',
    why: 'authentication: any API key is taken for the first configured one',
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '      if (timingSafeEqual(hash, entry.hash) && found === undefined) {\n',
    replace: '      if (found === undefined) {\n',
    tests: ['packages/gateway/test/guard.test.ts'],
  },
  {
    name: 'guard-audience-ignored',
    why: 'authentication: a token for another audience is accepted',
    file: 'packages/gateway/lib/guard/jwt.ts',
    search: '      ...(options.audience === undefined ? {} : { audience: options.audience }),\n',
    replace: '',
    tests: ['packages/gateway/test/guard.test.ts'],
  },
  {
    name: 'guard-forbidden-model-served',
    why: 'tenant isolation: a tenant reaches models outside its allow-list',
    file: 'packages/gateway/lib/guard/guard.ts',
    search: '    if (request.model !== undefined && !tenant.models.some((p) => p.test(request.model!))) {\n',
    replace: '    if (false) {\n',
    tests: ['packages/gateway/test/guard.test.ts'],
  },
  {
    name: 'openai-disconnect-not-cancelled',
    why: 'cancellation: a client that leaves an OpenAI stream no longer cancels its Triton request (neither when it leaves nor when the route stops reading)',
    file: 'packages/gateway/lib/openai/routes.ts',
    search:
      "    call.res.once('close', gone);\n" +
      '    // The client may have left while the body was read and the requests built.\n' +
      '    if (call.res.destroyed) gone();\n' +
      '    try {\n' +
      '      if (g.stream) await this.#streamed(call, kind, entry, g, choices);\n' +
      '      else await this.#whole(call, kind, entry, g, choices);\n' +
      '    } finally {\n' +
      '      this.#ctx.cancels.delete(cancel);\n' +
      "      call.res.off('close', gone);\n" +
      '      gone();\n',
    replace:
      '    try {\n' +
      '      if (g.stream) await this.#streamed(call, kind, entry, g, choices);\n' +
      '      else await this.#whole(call, kind, entry, g, choices);\n' +
      '    } finally {\n' +
      '      this.#ctx.cancels.delete(cancel);\n',
    tests: ['packages/gateway/test/openai.test.ts', 'packages/gateway/test/openai-choices.test.ts'],
  },
  {
    name: 'openai-tokens-unlimited',
    why: "rate limits: generated tokens are no longer spent against the tenant's bucket",
    file: 'packages/gateway/lib/openai/routes.ts',
    search: '!(await call.ex.admission.spendTokens(tokens, entry.model))',
    replace: 'false',
    tests: ['packages/gateway/test/openai.test.ts'],
  },
  {
    name: 'isolation-no-restart',
    why: 'process isolation: a group whose process died is never restarted',
    file: 'packages/gateway/lib/isolation/group.ts',
    search: '    this.#scheduleRestart();\n',
    replace: '',
    tests: ['packages/gateway/test/isolation.test.ts'],
  },
];

// Areas added later keep their own lists in scripts/mutations/.
/** @type {Mutation[]} */
export const MUTATIONS = [
  ...CORE,
  ...TENANT_FRONT,
  ...GUARD_REDIS,
  ...HOSTILE,
  ...GPU_LIFECYCLE,
  ...HOSTILE_REDIS,
  ...HOSTILE_WORKERS,
  ...GATEWAY_PROTOCOL,
  ...FILES_DEPLOY,
  ...SHIPPED,
  ...REAL_MODELS,
  ...ONNX_MODELS,
  ...EXIT_ORDER,
  ...KEPT_REQUESTS,
  ...LLM_GATEWAY,
  ...TRACE_OTEL,
  ...LOGGING_EXT,
  ...HOSTILE_MODELS,
  ...HOSTILE_ENGINE,
  ...EMBEDDINGS,
  ...HOSTILE_GATEWAY,
  ...GPU_LINT_DOCTOR,
  ...GPU_LLM,
  ...WIRE_FIXES,
  ...R26,
  ...FAKE_CLIENTS,
  ...FIRST_CLI,
];
