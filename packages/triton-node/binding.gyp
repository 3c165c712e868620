# The addon builds on an install when no prebuilt binary fits
# (scripts/install.mjs). The fake engine is a package of its own
# (packages/fake-engine), and so is the benchmark driver (bench/).
{
  "variables": {
    "cxx_flags": ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
  },
  "targets": [
    {
      "target_name": "triton_node",
      "sources": [
        "native/addon.cc",
        "native/env/env_data.cc",
        "native/env/js_call.cc",
        "native/memory/buffer_objects.cc",
        "native/memory/buffer_pool.cc",
        "native/memory/buffer_use.cc",
        "native/memory/cuda_runtime.cc",
        "native/memory/external_outputs.cc",
        "native/memory/js_memory.cc",
        "native/memory/mem_view.cc",
        "native/memory/placements.cc",
        "native/memory/response_allocator.cc",
        "native/objects/buffer_copy.cc",
        "native/objects/constants.cc",
        "native/objects/cuda_buffer.cc",
        "native/objects/cuda_functions.cc",
        "native/objects/fake_functions.cc",
        "native/objects/host_buffer.cc",
        "native/objects/library_functions.cc",
        "native/objects/metric.cc",
        "native/objects/metric_family.cc",
        "native/objects/output_functions.cc",
        "native/objects/server_object.cc",
        "native/request/builder.cc",
        "native/request/callbacks.cc",
        "native/request/trace_log.cc",
        "native/request/completion_queue.cc",
        "native/request/context.cc",
        "native/request/delivery.cc",
        "native/request/event_encoder.cc",
        "native/request/ledger.cc",
        "native/request/kept_requests.cc",
        "native/request/lifecycle.cc",
        "native/request/outputs.cc",
        "native/request/submit_args.cc",
        "native/server/core.cc",
        "native/server/drain.cc",
        "native/server/exit_registry.cc",
        "native/server/js_waker.cc",
        "native/server/operations.cc",
        "native/server/options.cc",
        "native/server/stop.cc",
        "native/server/share.cc",
        "native/server/submit.cc",
        "native/triton/api.cc",
        "native/triton/datatypes.cc",
        "native/triton/errors.cc",
        "native/triton/log_settings.cc",
        "native/triton/server_handles.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native", "native/include"],
      "defines": ["NAPI_VERSION=9", "NODE_ADDON_API_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
      "cflags_cc": ["<@(cxx_flags)", "-fexceptions", "-frtti"],
      "libraries": ["-ldl", "-lpthread"]
    }
  ]
}
