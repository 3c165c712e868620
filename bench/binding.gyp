# The C++ baseline of the benchmarks (native/driver.cc): an executable that
# drives a libtritonserver.so through the C API, built by npm install here.
{
  "targets": [
    {
      "target_name": "bench_driver",
      "type": "executable",
      "sources": ["native/driver.cc"],
      "include_dirs": ["../packages/triton-node/native/include"],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
      "cflags_cc": ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fexceptions", "-frtti"],
      "libraries": ["-ldl", "-lpthread"]
    }
  ]
}
