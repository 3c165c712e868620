// Internal to the config readers: the last step both share, from the
// intermediate form (schema.h) to the ModelConfig struct.
#ifndef TRITON_NODE_FAKE_CONFIG_INTERMEDIATE_H_
#define TRITON_NODE_FAKE_CONFIG_INTERMEDIATE_H_

#include <string>

#include "../support/json.h"
#include "model_config.h"

namespace fake {
namespace config {

// Fills *cfg from a checked intermediate object. False with *error when a
// value is valid protobuf but larger than the fake's struct holds.
bool FromIntermediate(const Json& in, ModelConfig* cfg, std::string* error);

}  // namespace config
}  // namespace fake

#endif  // TRITON_NODE_FAKE_CONFIG_INTERMEDIATE_H_
