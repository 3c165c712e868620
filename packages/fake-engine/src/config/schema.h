// Internal to the config readers (config/*.cc): the description of the
// ModelConfig messages that drives both readers, and the checks on integer
// and enum values they share.
//
// Both readers produce the same intermediate form: a Json object whose
// scalars are already checked and typed (ints as kInt/kUint, enums as their
// names, maps as objects). One converter (intermediate.h) then turns
// that into the ModelConfig struct, so both inputs obey the same rules.
#ifndef TRITON_NODE_FAKE_CONFIG_SCHEMA_H_
#define TRITON_NODE_FAKE_CONFIG_SCHEMA_H_

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../support/json.h"

namespace fake {
namespace config {

enum class FieldType {
  kString,
  kBool,
  kInt32,
  kInt64,
  kUint32,
  kUint64,
  kFloat,  // protobuf float (fp32_false_true)
  kEnum,
  kMessage,
  kSkippedMessage,  // a real ModelConfig message the fake does not model
};

struct EnumDesc {
  const char* name;
  std::vector<std::pair<const char*, int>> values;
};

struct MessageDesc;

struct FieldDesc {
  const char* name;
  FieldType type;
  bool repeated = false;
  const MessageDesc* message = nullptr;  // kMessage
  const EnumDesc* enum_desc = nullptr;   // kEnum
  bool is_map = false;  // repeated entries {key, value}, kept as an object
  int oneof = 0;        // fields sharing a non-zero id are one oneof
  // Smallest accepted value for integer fields. Triton rejects the values
  // below it anyway; rejecting them while reading keeps absurd numbers (a
  // negative instance count, dims < -1) out of the engine.
  int64_t min_value = std::numeric_limits<int64_t>::min();
};

struct MessageDesc {
  const char* name;  // protobuf full name, for error messages
  std::vector<FieldDesc> fields;
  const char* oneof_name = nullptr;

  const FieldDesc* Find(const std::string& field_name) const {
    for (const auto& f : fields) {
      if (field_name == f.name) return &f;
    }
    return nullptr;
  }
};

// inference.DataType, and the whole inference.ModelConfig message. The
// tables themselves have internal linkage: the test binary links these
// sources and loads the engine library built from them, and two exported
// copies of one global table would be constructed and destroyed twice.
const EnumDesc& DataTypeEnum();
const MessageDesc& ModelConfigDesc();

// Checks a parsed integer (sign + magnitude) against the field's range and
// returns it typed for the intermediate form. False with *problem (no field
// name in it) when it is out of range.
bool MakeInteger(const FieldDesc& f, bool negative, uint64_t magnitude,
                 Json* out, std::string* problem);

// Parses decimal, 0x hex or 0-prefixed octal digits (no sign) into a
// magnitude. False on overflow or a stray character.
bool ParseMagnitude(const std::string& digits, uint64_t* out);

// The name of an enum value, or nullptr when the enum has none.
const char* EnumName(const EnumDesc& e, int64_t value);
// Whether the enum has a value of that name.
bool EnumHas(const EnumDesc& e, const std::string& name);

// Records a skipped message's dotted path in `ignored` (once).
void NoteIgnoredField(const std::string& path,
                      std::vector<std::string>* ignored);

}  // namespace config
}  // namespace fake

#endif  // TRITON_NODE_FAKE_CONFIG_SCHEMA_H_
