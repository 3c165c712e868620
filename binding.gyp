# The addon and the fake engine build everywhere, on an install too (when no
# prebuilt binary fits). The fake engine's C++ tests and the benchmark driver
# build only where their sources are, that is in the repository: the package
# does not ship them, so an install never compiles them.
{
  "variables": {
    "triton_node_dev_targets%": "<!(node -p \"+require('fs').existsSync('native/fake/test')\")",
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
        "native/request/completion_queue.cc",
        "native/request/context.cc",
        "native/request/delivery.cc",
        "native/request/event_encoder.cc",
        "native/request/ledger.cc",
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
        "native/server/submit.cc",
        "native/triton/api.cc",
        "native/triton/datatypes.cc",
        "native/triton/errors.cc",
        "native/triton/server_handles.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native", "native/include"],
      "defines": ["NAPI_VERSION=9", "NODE_ADDON_API_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
      "cflags_cc": ["<@(cxx_flags)", "-fexceptions", "-frtti"],
      "libraries": ["-ldl", "-lpthread"]
    },
    {
      "target_name": "tritonserver",
      "type": "shared_library",
      "product_name": "tritonserver",
      "product_prefix": "lib",
      "sources": [
        "native/fake/api_basic.cc",
        "native/fake/backends.cc",
        "native/fake/config_backend_checks.cc",
        "native/fake/config_convert.cc",
        "native/fake/config_defaults.cc",
        "native/fake/config_ensemble_checks.cc",
        "native/fake/config_documents.cc",
        "native/fake/config_json_reader.cc",
        "native/fake/config_schema.cc",
        "native/fake/config_text_parser.cc",
        "native/fake/config_text_tokenizer.cc",
        "native/fake/config_validate.cc",
        "native/fake/cuda_loader.cc",
        "native/fake/ensemble_models.cc",
        "native/fake/ensemble_scheduler.cc",
        "native/fake/inference.cc",
        "native/fake/json.cc",
        "native/fake/leak_counters.cc",
        "native/fake/metrics.cc",
        "native/fake/model_repository.cc",
        "native/fake/onnxruntime_api.cc",
        "native/fake/onnxruntime_backend.cc",
        "native/fake/precondition.cc",
        "native/fake/rate_limiter.cc",
        "native/fake/scheduler.cc",
        "native/fake/sequence_batcher.cc",
        "native/fake/server.cc",
        "native/fake/stand_ins.cc",
        "native/fake/statistics.cc",
        "native/fake/text_stream.cc",
        "native/fake/trace.cc"
      ],
      "include_dirs": ["native/include"],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
      "cflags_cc": ["<@(cxx_flags)", "-fexceptions", "-frtti"],
      "libraries": ["-ldl", "-lpthread"]
    },
    {
      "target_name": "fake_engine_layout",
      "type": "none",
      "dependencies": ["tritonserver"],
      "copies": [
        {
          "destination": "<(module_root_dir)/build/fake",
          "files": ["<(PRODUCT_DIR)/libtritonserver.so"]
        }
      ]
    }
  ],
  "conditions": [
    ["triton_node_dev_targets==1", {
      "targets": [
        {
          "target_name": "fake_engine_tests",
          "type": "executable",
          "sources": [
            "native/fake/config_backend_checks.cc",
            "native/fake/config_convert.cc",
            "native/fake/config_defaults.cc",
            "native/fake/config_ensemble_checks.cc",
            "native/fake/config_documents.cc",
            "native/fake/config_json_reader.cc",
            "native/fake/config_schema.cc",
            "native/fake/config_text_parser.cc",
            "native/fake/config_text_tokenizer.cc",
            "native/fake/config_validate.cc",
            "native/fake/json.cc",
            "native/fake/test/config_tests.cc",
            "native/fake/test/engine_tests.cc",
            "native/fake/test/fake_engine_tests.cc",
            "native/fake/test/precondition_tests.cc",
            "native/fake/test/text_stream_tests.cc"
          ],
          "include_dirs": ["native/include"],
          "cflags!": ["-fno-exceptions", "-fno-rtti"],
          "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
          "cflags_cc": ["<@(cxx_flags)", "-fexceptions", "-frtti"],
          "libraries": ["-ldl", "-lpthread"]
        },
        {
          "target_name": "bench_driver",
          "type": "executable",
          "sources": [
            "bench/native/driver.cc"
          ],
          "include_dirs": ["native/include"],
          "cflags!": ["-fno-exceptions", "-fno-rtti"],
          "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
          "cflags_cc": ["<@(cxx_flags)", "-fexceptions", "-frtti"],
          "libraries": ["-ldl", "-lpthread"]
        }
      ]
    }]
  ]
}
