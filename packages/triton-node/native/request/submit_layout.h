// The layout of submit()'s arguments, shared with lib/abi/binding.ts (the addon
// exports these numbers; test/addon/contract.test.ts compares both sides).
//
//   submit(nums, model, id, correlationId,
//          ...[name, data] per input, ...[name, into] per output,
//          ...[name, value] per parameter)
//
// Every number is in one Float64Array `nums`: the header below, then per
// input its datatype code, byteLength, rank and dims; per output its memory
// and device; per parameter its type. Reading arguments and one
// Float64Array costs a few Node-API calls per input, where reading the same
// request from objects by key costs a property read per field.
#ifndef TRITON_NODE_REQUEST_SUBMIT_LAYOUT_H_
#define TRITON_NODE_REQUEST_SUBMIT_LAYOUT_H_

#include <cstddef>

namespace triton_node {

enum SubmitSlot : int {
  kSlotVersion,       // -1: the highest ready version
  kSlotPriority,      // -1: not set
  kSlotTimeout,       // microseconds, -1: not set
  kSlotFlags,         // -1: not set
  kSlotOutputMemory,  // -1 default (cpu), else a MemKind
  kSlotOutputDevice,  // -1: default (0)
  kSlotTiming,        // 1: attach a TIMESTAMPS trace
  kSlotInputCount,
  kSlotOutputCount,  // 0: every output the model produces
  kSlotParameterCount,
  kSubmitHeader
};

// Positional arguments before the inputs: nums, model, id, correlationId.
constexpr size_t kSubmitFixedArgs = 4;

// Parameter type codes (per parameter in nums).
enum SubmitParameterType : int {
  kParamString,
  kParamInt,
  kParamDouble,
  kParamBool
};

}  // namespace triton_node

#endif  // TRITON_NODE_REQUEST_SUBMIT_LAYOUT_H_
