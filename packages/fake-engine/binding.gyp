# The fake engine builds on an install when no prebuilt library fits
# (scripts/install.mjs). Its C++ tests build only where their sources are,
# that is in the repository: the package does not ship test/.
{
  "variables": {
    "fake_engine_dev_targets%": "<!(node -p \"+require('fs').existsSync('test/native')\")",
    "cxx_flags": ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
  },
  "targets": [
    {
      "target_name": "tritonserver",
      "type": "shared_library",
      "product_name": "tritonserver",
      "product_prefix": "lib",
      "sources": [
        "src/api/allocator.cc",
        "src/api/basics.cc",
        "src/api/custom_metrics.cc",
        "src/api/fake_controls.cc",
        "src/api/metrics.cc",
        "src/api/models.cc",
        "src/api/options.cc",
        "src/api/request.cc",
        "src/api/response.cc",
        "src/api/server.cc",
        "src/api/statistics.cc",
        "src/api/trace.cc",
        "src/backends/execute.cc",
        "src/backends/onnxruntime_api.cc",
        "src/backends/onnx_external_data.cc",
        "src/backends/onnxruntime_backend.cc",
        "src/backends/stand_ins.cc",
        "src/backends/own_backends.cc",
        "src/backends/text_stream.cc",
        "src/backends/text_embedding.cc",
        "src/config/backend_checks.cc",
        "src/config/convert.cc",
        "src/config/data_types.cc",
        "src/config/defaults.cc",
        "src/config/documents.cc",
        "src/config/ensemble_checks.cc",
        "src/config/json_reader.cc",
        "src/config/schema.cc",
        "src/config/text_parser.cc",
        "src/config/text_tokenizer.cc",
        "src/config/validate.cc",
        "src/core/engine.cc",
        "src/core/error.cc",
        "src/core/model.cc",
        "src/core/process_state.cc",
        "src/core/request.cc",
        "src/core/request_validation.cc",
        "src/core/response.cc",
        "src/repository/ensembles.cc",
        "src/repository/model_dir.cc",
        "src/repository/repository.cc",
        "src/scheduling/ensemble_context.cc",
        "src/scheduling/ensemble_outputs.cc",
        "src/scheduling/ensemble_plan.cc",
        "src/scheduling/ensemble_scheduler.cc",
        "src/scheduling/ensemble_steps.cc",
        "src/scheduling/ensemble_tracker.cc",
        "src/scheduling/rate_limiter.cc",
        "src/scheduling/scheduler.cc",
        "src/scheduling/sequence_batcher.cc",
        "src/scheduling/submission.cc",
        "src/support/cuda_copy.cc",
        "src/support/json.cc",
        "src/support/leak_counters.cc",
        "src/support/lexer.cc",
        "src/support/log.cc",
        "src/support/precondition.cc",
        "src/support/release.cc"
      ],
      "include_dirs": ["include"],
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
    ["fake_engine_dev_targets==1", {
      "targets": [
        {
          "target_name": "fake_engine_tests",
          "type": "executable",
          "sources": [
            "src/config/backend_checks.cc",
            "src/config/convert.cc",
            "src/config/data_types.cc",
            "src/config/defaults.cc",
            "src/config/documents.cc",
            "src/config/ensemble_checks.cc",
            "src/config/json_reader.cc",
            "src/config/schema.cc",
            "src/config/text_parser.cc",
            "src/config/text_tokenizer.cc",
            "src/config/validate.cc",
            "src/support/json.cc",
            "src/support/lexer.cc",
            "test/native/config_tests.cc",
            "test/native/engine_tests.cc",
            "test/native/fake_engine_tests.cc",
            "test/native/precondition_tests.cc",
            "test/native/text_stream_tests.cc"
          ],
          "include_dirs": ["include"],
          "cflags!": ["-fno-exceptions", "-fno-rtti"],
          "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
          "cflags_cc": ["<@(cxx_flags)", "-fexceptions", "-frtti"],
          "libraries": ["-ldl", "-lpthread"]
        }
      ]
    }]
  ]
}
