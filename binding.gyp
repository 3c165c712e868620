{
  "variables": {
    "cxx_flags": ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
  },
  "targets": [
    {
      "target_name": "triton_node",
      "sources": [
        "native/addon.cc",
        "native/allocator.cc",
        "native/completion.cc",
        "native/cuda.cc",
        "native/errors.cc",
        "native/js_memory.cc",
        "native/metrics.cc",
        "native/request.cc",
        "native/server_wrap.cc",
        "native/tensor.cc",
        "native/triton_api.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native/include"],
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
        "native/fake/config_documents.cc",
        "native/fake/config_json_reader.cc",
        "native/fake/config_schema.cc",
        "native/fake/config_text_parser.cc",
        "native/fake/config_text_tokenizer.cc",
        "native/fake/config_validate.cc",
        "native/fake/cuda_loader.cc",
        "native/fake/inference.cc",
        "native/fake/json.cc",
        "native/fake/leak_counters.cc",
        "native/fake/metrics.cc",
        "native/fake/model_repository.cc",
        "native/fake/precondition.cc",
        "native/fake/scheduler.cc",
        "native/fake/server.cc",
        "native/fake/statistics.cc",
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
    },
    {
      "target_name": "fake_engine_tests",
      "type": "executable",
      "sources": [
        "native/fake/config_backend_checks.cc",
        "native/fake/config_convert.cc",
        "native/fake/config_defaults.cc",
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
        "native/fake/test/precondition_tests.cc"
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
}
