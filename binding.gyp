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
        "native/request/trace_log.cc",
        "native/request/completion_queue.cc",
        "native/request/context.cc",
        "native/request/delivery.cc",
        "native/request/event_encoder.cc",
        "native/request/ledger.cc",
        "native/request/spares.cc",
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
        "native/fake/api/allocator.cc",
        "native/fake/api/basics.cc",
        "native/fake/api/custom_metrics.cc",
        "native/fake/api/fake_controls.cc",
        "native/fake/api/metrics.cc",
        "native/fake/api/models.cc",
        "native/fake/api/options.cc",
        "native/fake/api/request.cc",
        "native/fake/api/response.cc",
        "native/fake/api/server.cc",
        "native/fake/api/statistics.cc",
        "native/fake/api/trace.cc",
        "native/fake/backends/execute.cc",
        "native/fake/backends/onnxruntime_api.cc",
        "native/fake/backends/onnx_external_data.cc",
        "native/fake/backends/onnxruntime_backend.cc",
        "native/fake/backends/stand_ins.cc",
        "native/fake/backends/test_backends.cc",
        "native/fake/backends/text_stream.cc",
        "native/fake/backends/text_embedding.cc",
        "native/fake/config/backend_checks.cc",
        "native/fake/config/convert.cc",
        "native/fake/config/data_types.cc",
        "native/fake/config/defaults.cc",
        "native/fake/config/documents.cc",
        "native/fake/config/ensemble_checks.cc",
        "native/fake/config/json_reader.cc",
        "native/fake/config/schema.cc",
        "native/fake/config/text_parser.cc",
        "native/fake/config/text_tokenizer.cc",
        "native/fake/config/validate.cc",
        "native/fake/core/engine.cc",
        "native/fake/core/error.cc",
        "native/fake/core/model.cc",
        "native/fake/core/process_state.cc",
        "native/fake/core/request.cc",
        "native/fake/core/request_validation.cc",
        "native/fake/core/response.cc",
        "native/fake/repository/ensembles.cc",
        "native/fake/repository/model_dir.cc",
        "native/fake/repository/repository.cc",
        "native/fake/scheduling/ensemble_context.cc",
        "native/fake/scheduling/ensemble_outputs.cc",
        "native/fake/scheduling/ensemble_plan.cc",
        "native/fake/scheduling/ensemble_scheduler.cc",
        "native/fake/scheduling/ensemble_steps.cc",
        "native/fake/scheduling/ensemble_tracker.cc",
        "native/fake/scheduling/rate_limiter.cc",
        "native/fake/scheduling/scheduler.cc",
        "native/fake/scheduling/sequence_batcher.cc",
        "native/fake/scheduling/submission.cc",
        "native/fake/support/cuda_copy.cc",
        "native/fake/support/json.cc",
        "native/fake/support/leak_counters.cc",
        "native/fake/support/lexer.cc",
        "native/fake/support/log.cc",
        "native/fake/support/precondition.cc"
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
            "native/fake/config/backend_checks.cc",
            "native/fake/config/convert.cc",
            "native/fake/config/data_types.cc",
            "native/fake/config/defaults.cc",
            "native/fake/config/documents.cc",
            "native/fake/config/ensemble_checks.cc",
            "native/fake/config/json_reader.cc",
            "native/fake/config/schema.cc",
            "native/fake/config/text_parser.cc",
            "native/fake/config/text_tokenizer.cc",
            "native/fake/config/validate.cc",
            "native/fake/support/json.cc",
            "native/fake/support/lexer.cc",
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
