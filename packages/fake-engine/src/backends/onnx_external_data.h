// Where an ONNX model file says its tensors' data is (onnx_external_data.cc):
// TensorProto.external_data's `location`, which ONNX Runtime opens relative
// to the model file's folder, or as given when it is absolute. A hostile
// model names `/etc/hostname` or `../../secret.bin` there and gets that
// file back as a tensor; the fake's onnxruntime backend refuses such a
// model before ONNX Runtime opens it.
#ifndef TRITON_NODE_FAKE_BACKENDS_ONNX_EXTERNAL_DATA_H_
#define TRITON_NODE_FAKE_BACKENDS_ONNX_EXTERNAL_DATA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fake {

struct OnnxExternalData {
  std::string tensor;    // the TensorProto's name
  std::string location;  // its external_data "location", as written
};

// Every external_data location of the serialized ModelProto in [data,
// data + size): initializers, sparse initializers, tensor attributes, the
// graphs nested in attributes, training graphs and functions. "" with
// *found filled, else why the bytes are not a ModelProto this reader can
// walk (a load must then be refused: ONNX Runtime might read them).
std::string FindOnnxExternalData(const uint8_t* data, size_t size,
                                 std::vector<OnnxExternalData>* found);

// The problem with the external data of the model file `model_path` of
// model `model`, whose version folder is `version_dir`: a location that is
// absolute, has a '..' segment, is ONNX Runtime's in-memory address tag, or
// resolves (links followed) outside `version_dir`. "" when every location
// stays inside (or the file is not a regular file: ONNX Runtime reports
// that itself).
std::string OnnxExternalDataProblem(const std::string& model,
                                    const std::string& model_path,
                                    const std::string& version_dir);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_BACKENDS_ONNX_EXTERNAL_DATA_H_
