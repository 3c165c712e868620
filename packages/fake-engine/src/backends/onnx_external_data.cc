// An ONNX model file's external data locations, read with a protobuf wire
// reader of our own over the mapped file (ONNX Runtime is opened at run
// time and has no API for it): only the messages that can hold a tensor
// are walked, and a tensor's raw bytes are skipped, never touched.
#include "onnx_external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace fake {
namespace {

// Nesting deeper than protobuf's own default limit is refused: ONNX
// Runtime's parser refuses it too.
constexpr int kMaxDepth = 100;

// ONNX Runtime's tag for a location that is a memory address (the offset is
// the pointer): never a file of the model's.
constexpr char kMemoryAddressTag[] = "*/_ORT_MEM_ADDR_/*";

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// The onnx.proto messages that lead to a TensorProto.
enum class Kind {
  kModel,
  kTrainingInfo,
  kFunction,
  kGraph,
  kNode,
  kAttribute,
  kSparseTensor,
  kTensor,
  kEntry,  // StringStringEntryProto
};

struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  const uint8_t* data = nullptr;  // kLengthDelimited: the payload
  size_t size = 0;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool AtEnd() const { return p_ == end_; }

  // The next field; false with *error set when the bytes are malformed.
  bool Next(Field* f, std::string* error) {
    uint64_t key = 0;
    if (!Varint(&key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) {
      *error = "a malformed field key";
      return false;
    }
    f->number = static_cast<uint32_t>(key >> 3);
    f->wire = static_cast<uint32_t>(key & 7);
    return Skip(f, error);
  }

 private:
  bool Varint(uint64_t* v) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && p_ != end_; shift += 7) {
      const uint8_t b = *p_++;
      r |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = r;
        return true;
      }
    }
    return false;
  }

  bool Take(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    p_ += n;
    return true;
  }

  // Moves past the field's value (a group: up to its matching end).
  bool Skip(Field* f, std::string* error) {
    uint64_t n = 0;
    switch (f->wire) {
      case kVarint:
        if (Varint(&n)) return true;
        break;
      case kFixed64:
        if (Take(8)) return true;
        break;
      case kFixed32:
        if (Take(4)) return true;
        break;
      case kLengthDelimited:
        if (Varint(&n) && n <= static_cast<uint64_t>(end_ - p_)) {
          f->data = p_;
          f->size = static_cast<size_t>(n);
          p_ += n;
          return true;
        }
        break;
      case kStartGroup:
        return SkipGroup(f->number, 1, error);
      default:
        break;
    }
    *error = "a malformed value of field " + std::to_string(f->number);
    return false;
  }

  // A group's fields up to its end (groups are long deprecated, but the
  // protobuf parser ONNX Runtime uses still accepts them as unknown fields).
  bool SkipGroup(uint32_t number, int depth, std::string* error) {
    if (depth > kMaxDepth) {
      *error = "groups nested too deep";
      return false;
    }
    for (;;) {
      uint64_t key = 0;
      if (!Varint(&key)) {
        *error = "an unterminated group";
        return false;
      }
      Field f;
      f.number = static_cast<uint32_t>(key >> 3);
      f.wire = static_cast<uint32_t>(key & 7);
      if (f.wire == kEndGroup) {
        if (f.number == number) return true;
        *error = "a group end that matches no group";
        return false;
      }
      const bool ok = f.wire == kStartGroup
                          ? SkipGroup(f.number, depth + 1, error)
                          : Skip(&f, error);
      if (!ok) return false;
    }
  }

  const uint8_t* p_;
  const uint8_t* end_;
};

// The message a length-delimited field of a `parent` message holds, when it
// is one that can lead to a tensor.
bool ChildKind(Kind parent, uint32_t field, Kind* child) {
  switch (parent) {
    case Kind::kModel:  // graph, training_info, functions
      if (field == 7) *child = Kind::kGraph;
      if (field == 20) *child = Kind::kTrainingInfo;
      if (field == 25) *child = Kind::kFunction;
      return field == 7 || field == 20 || field == 25;
    case Kind::kTrainingInfo:  // initialization, algorithm
      *child = Kind::kGraph;
      return field == 1 || field == 2;
    case Kind::kFunction:  // node, attribute_proto
      if (field == 7) *child = Kind::kNode;
      if (field == 11) *child = Kind::kAttribute;
      return field == 7 || field == 11;
    case Kind::kGraph:  // node, initializer, sparse_initializer
      if (field == 1) *child = Kind::kNode;
      if (field == 5) *child = Kind::kTensor;
      if (field == 15) *child = Kind::kSparseTensor;
      return field == 1 || field == 5 || field == 15;
    case Kind::kNode:  // attribute
      *child = Kind::kAttribute;
      return field == 5;
    case Kind::kAttribute:  // t, g, tensors, graphs, sparse_tensor(s)
      if (field == 5 || field == 10) *child = Kind::kTensor;
      if (field == 6 || field == 11) *child = Kind::kGraph;
      if (field == 22 || field == 23) *child = Kind::kSparseTensor;
      return field == 5 || field == 10 || field == 6 || field == 11 ||
             field == 22 || field == 23;
    case Kind::kSparseTensor:  // values, indices
      *child = Kind::kTensor;
      return field == 1 || field == 2;
    case Kind::kTensor:  // external_data
      *child = Kind::kEntry;
      return field == 13;
    case Kind::kEntry:
      return false;
  }
  return false;
}

std::string Walk(Kind kind, const uint8_t* data, size_t size, int depth,
                 std::vector<std::string>* locations,
                 std::vector<OnnxExternalData>* found);

// A tensor: its name (the last one given wins, as protobuf merges) and the
// locations of its external data.
std::string WalkTensor(const uint8_t* data, size_t size, int depth,
                       std::vector<OnnxExternalData>* found) {
  Reader r(data, size);
  std::string name, error;
  std::vector<std::string> locations;
  while (!r.AtEnd()) {
    Field f;
    if (!r.Next(&f, &error)) return error;
    if (f.wire != kLengthDelimited) continue;
    if (f.number == 8)
      name.assign(reinterpret_cast<const char*>(f.data), f.size);
    if (f.number != 13) continue;
    error = Walk(Kind::kEntry, f.data, f.size, depth + 1, &locations, found);
    if (!error.empty()) return error;
  }
  for (auto& l : locations) found->push_back({name, std::move(l)});
  return "";
}

// A StringStringEntryProto: its value when its key is "location".
std::string WalkEntry(const uint8_t* data, size_t size,
                      std::vector<std::string>* locations) {
  Reader r(data, size);
  std::string key, value, error;
  while (!r.AtEnd()) {
    Field f;
    if (!r.Next(&f, &error)) return error;
    if (f.wire != kLengthDelimited) continue;
    const std::string text(reinterpret_cast<const char*>(f.data), f.size);
    if (f.number == 1) key = text;
    if (f.number == 2) value = text;
  }
  if (key == "location") locations->push_back(value);
  return "";
}

std::string Walk(Kind kind, const uint8_t* data, size_t size, int depth,
                 std::vector<std::string>* locations,
                 std::vector<OnnxExternalData>* found) {
  if (depth > kMaxDepth) return "messages nested too deep";
  if (kind == Kind::kTensor) return WalkTensor(data, size, depth, found);
  if (kind == Kind::kEntry) return WalkEntry(data, size, locations);
  Reader r(data, size);
  std::string error;
  while (!r.AtEnd()) {
    Field f;
    if (!r.Next(&f, &error)) return error;
    Kind child;
    if (f.wire != kLengthDelimited || !ChildKind(kind, f.number, &child)) {
      continue;
    }
    error = Walk(child, f.data, f.size, depth + 1, locations, found);
    if (!error.empty()) return error;
  }
  return "";
}

std::string RealPath(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return "";
  std::string out(real);
  std::free(real);
  return out;
}

bool HasDotDotSegment(const std::string& location) {
  size_t start = 0;
  for (size_t i = 0; i <= location.size(); ++i) {
    if (i == location.size() || location[i] == '/' || location[i] == '\\') {
      if (location.compare(start, i - start, "..") == 0 && i - start == 2) {
        return true;
      }
      start = i + 1;
    }
  }
  return false;
}

// Why `location`, opened from folder `model_dir`, is not a file of the
// version folder whose real path is `real_version`; "" when it is.
std::string LocationProblem(const std::string& location,
                            const std::string& model_dir,
                            const std::string& real_version) {
  if (location == kMemoryAddressTag) {
    return "ONNX Runtime's tag for a memory address, not a file";
  }
  if (!location.empty() && location[0] == '/') return "an absolute path";
  if (HasDotDotSegment(location)) return "a path with a '..' segment";
  const std::string real = RealPath(model_dir + "/" + location);
  // A file that is not there: ONNX Runtime's load fails and says so.
  if (real.empty()) return "";
  if (real_version.empty() ||
      real.compare(0, real_version.size() + 1, real_version + "/") != 0) {
    return "a link to " + real;
  }
  return "";
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

std::string FindOnnxExternalData(const uint8_t* data, size_t size,
                                 std::vector<OnnxExternalData>* found) {
  std::vector<std::string> unused;
  return Walk(Kind::kModel, data, size, 0, &unused, found);
}

std::string OnnxExternalDataProblem(const std::string& model,
                                    const std::string& model_path,
                                    const std::string& version_dir) {
  // O_NONBLOCK: a FIFO opens at once (and is then left to ONNX Runtime).
  const int fd = ::open(model_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
    ::close(fd);
    return "";
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  const std::string named = "model '" + model + "': ";
  if (map == MAP_FAILED) {
    return named + "cannot map " + model_path +
           " to check where its tensors' data is";
  }
  std::vector<OnnxExternalData> found;
  std::string error =
      FindOnnxExternalData(static_cast<const uint8_t*>(map), size, &found);
  ::munmap(map, size);
  if (!error.empty()) {
    return named + "cannot read " + model_path +
           " as an ONNX model to check where its tensors' data is (" + error +
           ")";
  }
  const std::string model_dir = Dirname(model_path);
  const std::string real_version = RealPath(version_dir);
  for (const auto& x : found) {
    const std::string why =
        LocationProblem(x.location, model_dir, real_version);
    if (why.empty()) continue;
    return named + "tensor '" + x.tensor + "' of " + model_path +
           " has its external data at '" + x.location + "', " + why +
           ", outside its version folder " + version_dir +
           ": the fake engine's onnxruntime backend refuses it (Triton's "
           "would read that file; check such models with triton-node lint)";
  }
  return "";
}

}  // namespace fake
