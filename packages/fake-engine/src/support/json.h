// A small JSON value for the fake engine: parse, build, serialize compactly.
// Object keys keep insertion order (Triton's JSON output is order-sensitive).
#ifndef TRITON_NODE_FAKE_SUPPORT_JSON_H_
#define TRITON_NODE_FAKE_SUPPORT_JSON_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fake {

class Json {
 public:
  enum class Type {
    kNull,
    kBool,
    kInt,
    kUint,
    kDouble,
    kString,
    kArray,
    kObject
  };

  Json() = default;  // null
  static Json Bool(bool v);
  static Json Int(int64_t v);
  static Json Uint(uint64_t v);
  static Json Double(double v);
  static Json Str(std::string v);
  static Json Array();
  static Json Object();

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_number() const;
  // kInt/kUint, or a kDouble with no fractional part.
  bool is_integral() const;
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }
  bool as_bool() const { return bool_; }
  int64_t as_int() const;  // kInt/kUint/kDouble converted
  uint64_t as_uint() const;
  double as_double() const;
  const std::string& as_string() const { return str_; }

  // Arrays.
  Json& push(Json v);
  size_t size() const;  // elements of an array, members of an object
  const Json& at(size_t i) const { return items_[i].second; }
  const std::vector<std::pair<std::string, Json>>& items() const {
    return items_;
  }

  // Objects: set() replaces an existing key in place or appends.
  Json& set(const std::string& key, Json v);
  const Json* find(const std::string& key) const;  // null if absent
  Json* find(const std::string& key);

  // Compact serialization, no spaces (as Triton writes its JSON).
  std::string dump() const;
  void dump_to(std::string* out) const;

  // Strict RFC 8259 parse. Returns false and sets *error on failure (the
  // message names line and column). Integers that fit int64 become kInt,
  // larger non-negative ones that fit uint64 kUint, everything else kDouble.
  // Nesting deeper than kMaxDepth is rejected rather than risking the stack.
  static bool Parse(const std::string& text, Json* out, std::string* error);
  static constexpr int kMaxDepth = 256;

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  uint64_t uint_ = 0;
  double double_ = 0;
  std::string str_;
  // Arrays use items_ with empty keys.
  std::vector<std::pair<std::string, Json>> items_;
};

// Appends `s` to `out` as a JSON string literal (quotes and escapes).
void JsonEscape(const std::string& s, std::string* out);

// Appends the shortest text that reads back as exactly `v`, written the way
// Triton's JSON writer writes doubles (123.123, 1.0, 1e-7, 1.5e30). NaN and
// infinities have no JSON form and are written as null.
void JsonFormatDouble(double v, std::string* out);

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SUPPORT_JSON_H_
