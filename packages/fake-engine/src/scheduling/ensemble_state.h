// The plain data of one ensemble request (ensemble_context.h): failures
// as values, the sequence a value belongs to, and Triton's TensorData, the
// values of one ensemble tensor by iteration.
#ifndef TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_STATE_H_
#define TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_STATE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../../include/triton_capi.h"
#include "../core/error.h"
#include "../core/request.h"

namespace fake {
namespace ensemble {

// A failure, kept as plain data (an error object would count as live).
struct Status {
  bool ok = true;
  TRITONSERVER_Error_Code code = TRITONSERVER_ERROR_INTERNAL;
  std::string message;
  static Status Take(TRITONSERVER_Error* e) {
    Status s;
    if (e == nullptr) return s;
    s.ok = false;
    s.code = e->code;
    s.message = e->msg;
    delete e;
    return s;
  }
};

struct Correlation {
  bool is_string = false;
  uint64_t id = 0;
  std::string str;
};

// One value of an ensemble tensor, as the next step's request input.
struct TensorValue {
  TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
  std::vector<int64_t> shape;
  std::vector<InputData> buffers;
  // The memory behind `buffers` when the ensemble allocated it (null: the
  // ensemble request's own inputs, valid until it is released).
  std::shared_ptr<std::vector<char>> memory;
};

// Triton's TensorData: the values of one ensemble tensor by iteration, and
// how many consumers each still has.
struct TensorData {
  struct Slot {
    std::shared_ptr<const TensorValue> value;  // null: not provided
    size_t remaining = 0;
    bool parameter_override = false;  // a step made it
    Correlation correlation;
    uint32_t flags = 0;
  };
  size_t current_iteration = 0;
  size_t outgoing = 0;
  size_t batch_size = 0;
  std::unordered_map<size_t, Slot> slots;

  size_t Add(std::shared_ptr<const TensorValue> v) {
    Slot& s = slots[current_iteration];
    s.value = std::move(v);
    s.remaining = outgoing;
    return current_iteration++;
  }
  size_t Add(std::shared_ptr<const TensorValue> v, const Correlation& c,
             uint32_t flags) {
    Slot& s = slots[current_iteration];
    s.value = std::move(v);
    s.remaining = outgoing;
    s.parameter_override = true;
    s.correlation = c;
    s.flags = flags;
    return current_iteration++;
  }
};

using Updated = std::set<std::pair<std::string, size_t>>;

}  // namespace ensemble
}  // namespace fake

#endif  // TRITON_NODE_FAKE_SCHEDULING_ENSEMBLE_STATE_H_
