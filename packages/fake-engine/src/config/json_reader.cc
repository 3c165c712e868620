// The reader of a load-time "config" override: the JSON form of ModelConfig
// (field names as in the proto or camelCase, int64 fields as numbers or
// strings) into the intermediate form of schema.h, then into a
// ModelConfig. Errors name the field path ("input[0].dims[1]: ...").
#include <limits>
#include <utility>

#include "intermediate.h"
#include "schema.h"
#include "model_config.h"

namespace fake {
namespace config {
namespace {

std::string CamelCase(const char* snake) {
  std::string out;
  bool upper = false;
  for (const char* p = snake; *p != '\0'; ++p) {
    if (*p == '_') {
      upper = true;
    } else if (upper) {
      out.push_back(static_cast<char>(*p >= 'a' && *p <= 'z' ? *p - 32 : *p));
      upper = false;
    } else {
      out.push_back(*p);
    }
  }
  return out;
}

const FieldDesc* FindJsonField(const MessageDesc& desc,
                               const std::string& key) {
  if (const FieldDesc* f = desc.Find(key)) return f;
  for (const auto& f : desc.fields) {
    if (CamelCase(f.name) == key) return &f;
  }
  return nullptr;
}

class JsonNormalizer {
 public:
  explicit JsonNormalizer(std::vector<std::string>* ignored)
      : ignored_(ignored) {}

  bool Message(const MessageDesc& desc, const Json& in, const std::string& path,
               Json* out, std::string* error, int depth = 0) {
    if (depth > 64) return Fail(path, "nesting is too deep", error);
    if (!in.is_object()) {
      return Fail(
          path, std::string("expected a JSON object for message ") + desc.name,
          error);
    }
    *out = Json::Object();
    int oneof_seen = 0;
    std::string oneof_field;
    for (const auto& item : in.items()) {
      const FieldDesc* f = FindJsonField(desc, item.first);
      const std::string field_path =
          path.empty() ? item.first : path + "." + item.first;
      if (f == nullptr) {
        return Fail(
            path,
            "Cannot find field: " + item.first + " in message " + desc.name,
            error);
      }
      if (out->find(f->name) != nullptr) {
        return Fail(field_path, "field given twice", error);
      }
      if (item.second.is_null()) continue;  // JSON null means "not set"
      if (f->oneof != 0) {
        if (oneof_seen == f->oneof) {
          return Fail(path,
                      std::string("fields \"") + oneof_field + "\" and \"" +
                          f->name + "\" are both members of oneof \"" +
                          desc.oneof_name + "\"",
                      error);
        }
        oneof_seen = f->oneof;
        oneof_field = f->name;
      }
      const std::string canonical_path =
          path.empty() ? f->name : path + "." + f->name;
      Json value;
      if (!Field(*f, item.second, canonical_path, &value, error, depth)) {
        return false;
      }
      out->set(f->name, std::move(value));
    }
    return true;
  }

 private:
  static bool Fail(const std::string& path, const std::string& what,
                   std::string* error) {
    *error = (path.empty() ? std::string() : path + ": ") + what;
    return false;
  }

  bool Field(const FieldDesc& f, const Json& in, const std::string& path,
             Json* out, std::string* error, int depth) {
    if (f.type == FieldType::kSkippedMessage) {
      if (!in.is_object() && !(f.repeated && in.is_array())) {
        return Fail(path, "expected a JSON object", error);
      }
      NoteIgnoredField(path, ignored_);
      *out = Json::Object();  // presence only
      return true;
    }
    if (f.is_map) {
      if (!in.is_object()) return Fail(path, "expected a JSON object", error);
      const FieldDesc& key_desc = f.message->fields[0];
      const FieldDesc& value_desc = f.message->fields[1];
      *out = Json::Object();
      for (const auto& item : in.items()) {
        std::string key = item.first;
        if (key_desc.type != FieldType::kString) {
          Json k;
          if (!Integer(key_desc, Json::Str(key), path + "." + key, &k, error)) {
            return false;
          }
          key = std::to_string(k.as_uint());
        }
        Json v;
        if (!Field(value_desc, item.second, path + "." + item.first, &v, error,
                   depth + 1)) {
          return false;
        }
        out->set(key, std::move(v));
      }
      return true;
    }
    if (f.repeated) {
      if (!in.is_array()) return Fail(path, "expected a JSON array", error);
      *out = Json::Array();
      for (size_t i = 0; i < in.size(); ++i) {
        Json v;
        if (!Single(f, in.at(i), path + "[" + std::to_string(i) + "]", &v,
                    error, depth)) {
          return false;
        }
        out->push(std::move(v));
      }
      return true;
    }
    return Single(f, in, path, out, error, depth);
  }

  bool Single(const FieldDesc& f, const Json& in, const std::string& path,
              Json* out, std::string* error, int depth) {
    switch (f.type) {
      case FieldType::kString:
        if (!in.is_string()) return Fail(path, "expected a string", error);
        *out = in;
        return true;
      case FieldType::kBool:
        if (!in.is_bool()) return Fail(path, "expected true or false", error);
        *out = in;
        return true;
      case FieldType::kEnum:
        if (in.is_string()) {
          if (!EnumHas(*f.enum_desc, in.as_string())) {
            return Fail(path,
                        "invalid value \"" + in.as_string() + "\" for enum " +
                            f.enum_desc->name,
                        error);
          }
          *out = in;
          return true;
        }
        if (in.is_integral()) {
          const int64_t v = in.as_int();
          const char* name = (v >= 0 && v <= 1000 && in.as_double() == v)
                                 ? EnumName(*f.enum_desc, v)
                                 : nullptr;
          if (name == nullptr) {
            return Fail(
                path,
                "invalid value " + in.dump() + " for enum " + f.enum_desc->name,
                error);
          }
          *out = Json::Str(name);
          return true;
        }
        return Fail(path, "expected an enum name", error);
      case FieldType::kMessage:
        return Message(*f.message, in, path, out, error, depth + 1);
      case FieldType::kFloat:
        if (!in.is_number()) return Fail(path, "expected a number", error);
        *out = Json::Double(in.as_double());
        return true;
      default:
        return Integer(f, in, path, out, error);
    }
  }

  // Protobuf's JSON form writes 64-bit integers as strings and accepts
  // both; Triton accepted "max_batch_size":"3" and "dims":["-1"] too.
  static bool Integer(const FieldDesc& f, const Json& in,
                      const std::string& path, Json* out, std::string* error) {
    bool negative = false;
    uint64_t magnitude = 0;
    if (in.is_string()) {
      const std::string& s = in.as_string();
      size_t i = 0;
      if (!s.empty() && s[0] == '-') {
        negative = true;
        i = 1;
      }
      const std::string digits = s.substr(i);
      bool ok = !digits.empty() && digits.size() <= 20;
      for (char c : digits) ok = ok && c >= '0' && c <= '9';
      // Decimal only: "010" is ten here, as protobuf's JSON reader has it.
      uint64_t v = 0;
      for (size_t k = 0; ok && k < digits.size(); ++k) {
        const uint64_t d = static_cast<uint64_t>(digits[k] - '0');
        if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) {
          return Fail(path, "Integer out of range (" + s + ")", error);
        }
        v = v * 10 + d;
      }
      if (!ok) return Fail(path, "invalid integer \"" + s + "\"", error);
      magnitude = v;
    } else if (in.type() == Json::Type::kInt) {
      negative = in.as_int() < 0;
      magnitude = negative ? static_cast<uint64_t>(-(in.as_int() + 1)) + 1
                           : static_cast<uint64_t>(in.as_int());
    } else if (in.type() == Json::Type::kUint) {
      magnitude = in.as_uint();
    } else if (in.type() == Json::Type::kDouble) {
      const double d = in.as_double();
      if (!in.is_integral()) {
        return Fail(path, "expected an integer, got " + in.dump(), error);
      }
      if (d >= 18446744073709551616.0 || d <= -9223372036854775809.0) {
        return Fail(path, "Integer out of range (" + in.dump() + ")", error);
      }
      negative = d < 0;
      magnitude = negative ? static_cast<uint64_t>(-(d + 1)) + 1
                           : static_cast<uint64_t>(d);
    } else {
      return Fail(path, "expected an integer", error);
    }
    std::string problem;
    if (!MakeInteger(f, negative, magnitude, out, &problem)) {
      return Fail(path, problem, error);
    }
    return true;
  }

  std::vector<std::string>* ignored_;
};

}  // namespace
}  // namespace config

bool ParseModelConfigJson(const std::string& json_text, ModelConfig* out,
                          std::string* error) {
  Json doc;
  std::string message;
  if (!Json::Parse(json_text, &doc, &message)) {
    if (error != nullptr) *error = message;
    return false;
  }
  ModelConfig cfg;
  config::JsonNormalizer normalizer(&cfg.ignored_fields);
  Json intermediate;
  if (!normalizer.Message(config::ModelConfigDesc(), doc, "", &intermediate,
                          &message) ||
      !config::FromIntermediate(intermediate, &cfg, &message)) {
    if (error != nullptr) *error = message;
    return false;
  }
  *out = std::move(cfg);
  return true;
}

}  // namespace fake
