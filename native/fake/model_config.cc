// ModelConfig for the fake engine: a protobuf-text reader for config.pbtxt,
// a reader for the JSON "config" load override, Triton's defaults and
// checks, and the config/metadata JSON documents Triton returns.
//
// Both readers are driven by one description of the ModelConfig messages
// (the field names, types and enum values are those of Triton's
// model_config.proto) and produce the same intermediate form: a Json object
// whose scalars are already checked and typed (ints as kInt/kUint, enums as
// their names, maps as objects). One converter then turns that into the
// ModelConfig struct, so both inputs obey the same rules.
#include "model_config.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

namespace fake {

namespace {

// ---------------------------------------------------------------------------
// Message descriptions

enum class FieldType {
  kString,
  kBool,
  kInt32,
  kInt64,
  kUint32,
  kUint64,
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

FieldDesc Scalar(const char* name, FieldType type, bool repeated = false,
                 int64_t min_value = std::numeric_limits<int64_t>::min()) {
  FieldDesc f{name, type};
  f.repeated = repeated;
  f.min_value = min_value;
  return f;
}

FieldDesc Enum(const char* name, const EnumDesc* e) {
  FieldDesc f{name, FieldType::kEnum};
  f.enum_desc = e;
  return f;
}

FieldDesc Message(const char* name, const MessageDesc* m, bool repeated = false,
                  int oneof = 0) {
  FieldDesc f{name, FieldType::kMessage};
  f.message = m;
  f.repeated = repeated;
  f.oneof = oneof;
  return f;
}

FieldDesc Map(const char* name, const MessageDesc* entry) {
  FieldDesc f{name, FieldType::kMessage};
  f.message = entry;
  f.repeated = true;
  f.is_map = true;
  return f;
}

FieldDesc Skipped(const char* name, bool repeated = false) {
  FieldDesc f{name, FieldType::kSkippedMessage};
  f.repeated = repeated;
  return f;
}

const EnumDesc kDataTypeEnum{"inference.DataType",
                             {{"TYPE_INVALID", 0},
                              {"TYPE_BOOL", 1},
                              {"TYPE_UINT8", 2},
                              {"TYPE_UINT16", 3},
                              {"TYPE_UINT32", 4},
                              {"TYPE_UINT64", 5},
                              {"TYPE_INT8", 6},
                              {"TYPE_INT16", 7},
                              {"TYPE_INT32", 8},
                              {"TYPE_INT64", 9},
                              {"TYPE_FP16", 10},
                              {"TYPE_FP32", 11},
                              {"TYPE_FP64", 12},
                              {"TYPE_STRING", 13},
                              {"TYPE_BF16", 14}}};
const EnumDesc kFormatEnum{
    "inference.ModelInput.Format",
    {{"FORMAT_NONE", 0}, {"FORMAT_NHWC", 1}, {"FORMAT_NCHW", 2}}};
const EnumDesc kKindEnum{
    "inference.ModelInstanceGroup.Kind",
    {{"KIND_AUTO", 0}, {"KIND_GPU", 1}, {"KIND_CPU", 2}, {"KIND_MODEL", 3}}};
const EnumDesc kTimeoutActionEnum{"inference.ModelQueuePolicy.TimeoutAction",
                                  {{"REJECT", 0}, {"DELAY", 1}}};

const MessageDesc kReshapeDesc{"inference.ModelTensorReshape",
                               {Scalar("shape", FieldType::kInt64, true, -1)}};

const MessageDesc kInputDesc{
    "inference.ModelInput",
    {Scalar("name", FieldType::kString), Enum("data_type", &kDataTypeEnum),
     Enum("format", &kFormatEnum), Scalar("dims", FieldType::kInt64, true, -1),
     Message("reshape", &kReshapeDesc),
     Scalar("is_shape_tensor", FieldType::kBool),
     Scalar("allow_ragged_batch", FieldType::kBool),
     Scalar("optional", FieldType::kBool),
     Scalar("is_non_linear_format_io", FieldType::kBool)}};

const MessageDesc kOutputDesc{
    "inference.ModelOutput",
    {Scalar("name", FieldType::kString), Enum("data_type", &kDataTypeEnum),
     Scalar("dims", FieldType::kInt64, true, -1),
     Message("reshape", &kReshapeDesc),
     Scalar("label_filename", FieldType::kString),
     Scalar("is_shape_tensor", FieldType::kBool),
     Scalar("is_non_linear_format_io", FieldType::kBool)}};

const MessageDesc kInstanceGroupDesc{
    "inference.ModelInstanceGroup",
    {Scalar("name", FieldType::kString), Enum("kind", &kKindEnum),
     Scalar("count", FieldType::kInt32, false, 0), Skipped("rate_limiter"),
     Scalar("gpus", FieldType::kInt32, true, 0),
     Skipped("secondary_devices", true),
     Scalar("profile", FieldType::kString, true),
     Scalar("passive", FieldType::kBool),
     Scalar("host_policy", FieldType::kString)}};

const MessageDesc kQueuePolicyDesc{
    "inference.ModelQueuePolicy",
    {Enum("timeout_action", &kTimeoutActionEnum),
     Scalar("default_timeout_microseconds", FieldType::kUint64),
     Scalar("allow_timeout_override", FieldType::kBool),
     Scalar("max_queue_size", FieldType::kUint32)}};

const MessageDesc kPriorityQueuePolicyEntryDesc{
    "inference.ModelDynamicBatching.PriorityQueuePolicyEntry",
    {Scalar("key", FieldType::kUint64), Message("value", &kQueuePolicyDesc)}};

const MessageDesc kDynamicBatchingDesc{
    "inference.ModelDynamicBatching",
    {Scalar("preferred_batch_size", FieldType::kInt32, true),
     Scalar("max_queue_delay_microseconds", FieldType::kUint64),
     Scalar("preserve_ordering", FieldType::kBool),
     Scalar("priority_levels", FieldType::kUint64),
     Scalar("default_priority_level", FieldType::kUint64),
     Message("default_queue_policy", &kQueuePolicyDesc),
     Map("priority_queue_policy", &kPriorityQueuePolicyEntryDesc)}};

const MessageDesc kLatestDesc{"inference.ModelVersionPolicy.Latest",
                              {Scalar("num_versions", FieldType::kUint32)}};
const MessageDesc kAllDesc{"inference.ModelVersionPolicy.All", {}};
const MessageDesc kSpecificDesc{"inference.ModelVersionPolicy.Specific",
                                {Scalar("versions", FieldType::kInt64, true)}};

const MessageDesc kVersionPolicyDesc{
    "inference.ModelVersionPolicy",
    {Message("latest", &kLatestDesc, false, 1),
     Message("all", &kAllDesc, false, 1),
     Message("specific", &kSpecificDesc, false, 1)},
    "policy_choice"};

const MessageDesc kParameterDesc{"inference.ModelParameter",
                                 {Scalar("string_value", FieldType::kString)}};

const MessageDesc kParametersEntryDesc{
    "inference.ModelConfig.ParametersEntry",
    {Scalar("key", FieldType::kString), Message("value", &kParameterDesc)}};

const MessageDesc kStringMapEntryDesc{
    "inference.ModelConfig.StringEntry",
    {Scalar("key", FieldType::kString), Scalar("value", FieldType::kString)}};

const MessageDesc kTransactionPolicyDesc{
    "inference.ModelTransactionPolicy",
    {Scalar("decoupled", FieldType::kBool)}};

const MessageDesc kModelConfigDesc{
    "inference.ModelConfig",
    {Scalar("name", FieldType::kString),
     Scalar("platform", FieldType::kString),
     Scalar("backend", FieldType::kString),
     Scalar("runtime", FieldType::kString),
     Message("version_policy", &kVersionPolicyDesc),
     Scalar("max_batch_size", FieldType::kInt32, false, 0),
     Message("input", &kInputDesc, true),
     Message("output", &kOutputDesc, true),
     Skipped("batch_input", true),
     Skipped("batch_output", true),
     Skipped("optimization"),
     Message("dynamic_batching", &kDynamicBatchingDesc),
     Skipped("sequence_batching"),
     Skipped("ensemble_scheduling"),
     Message("instance_group", &kInstanceGroupDesc, true),
     Scalar("default_model_filename", FieldType::kString),
     Map("cc_model_filenames", &kStringMapEntryDesc),
     Map("metric_tags", &kStringMapEntryDesc),
     Map("parameters", &kParametersEntryDesc),
     Skipped("model_warmup", true),
     Skipped("model_operations"),
     Message("model_transaction_policy", &kTransactionPolicyDesc),
     Skipped("model_repository_agents"),
     Skipped("response_cache")}};

// Range of an integer field type, combined with the field's own minimum.
void IntegerRange(const FieldDesc& f, int64_t* lo, uint64_t* hi) {
  switch (f.type) {
    case FieldType::kInt32:
      *lo = std::numeric_limits<int32_t>::min();
      *hi = std::numeric_limits<int32_t>::max();
      break;
    case FieldType::kInt64:
      *lo = std::numeric_limits<int64_t>::min();
      *hi = std::numeric_limits<int64_t>::max();
      break;
    case FieldType::kUint32:
      *lo = 0;
      *hi = std::numeric_limits<uint32_t>::max();
      break;
    default:
      *lo = 0;
      *hi = std::numeric_limits<uint64_t>::max();
      break;
  }
  if (f.min_value > *lo) *lo = f.min_value;
}

bool IsUnsignedType(FieldType t) {
  return t == FieldType::kUint32 || t == FieldType::kUint64;
}

// Checks a parsed integer (sign + magnitude) against the field's range and
// returns it typed for the intermediate form.
bool MakeInteger(const FieldDesc& f, bool negative, uint64_t magnitude,
                 Json* out, std::string* problem) {
  int64_t lo;
  uint64_t hi;
  IntegerRange(f, &lo, &hi);
  const std::string text =
      (negative && magnitude != 0 ? "-" : "") + std::to_string(magnitude);
  if (negative && magnitude != 0) {
    // -magnitude >= lo  <=>  magnitude <= -lo (lo < 0 here, or fail).
    const uint64_t max_negative =
        lo >= 0 ? 0 : static_cast<uint64_t>(-(lo + 1)) + 1;
    if (magnitude > max_negative) {
      *problem = lo == f.min_value && lo > std::numeric_limits<int32_t>::min()
                     ? "Value " + text +
                           " is out of range: must be >= " + std::to_string(lo)
                     : "Integer out of range (" + text + ")";
      return false;
    }
    // magnitude <= 2^63 here, so the negation is representable.
    *out = Json::Int(magnitude == (uint64_t{1} << 63)
                         ? std::numeric_limits<int64_t>::min()
                         : -static_cast<int64_t>(magnitude));
    return true;
  }
  if (magnitude > hi) {
    *problem = "Integer out of range (" + text + ")";
    return false;
  }
  if (lo > 0 && magnitude < static_cast<uint64_t>(lo)) {
    *problem =
        "Value " + text + " is out of range: must be >= " + std::to_string(lo);
    return false;
  }
  if (IsUnsignedType(f.type)) {
    *out = Json::Uint(magnitude);
  } else {
    *out = Json::Int(static_cast<int64_t>(magnitude));
  }
  return true;
}

// Parses decimal, 0x hex or 0-prefixed octal digits (no sign) into a
// magnitude. False on overflow or a stray character.
bool ParseMagnitude(const std::string& digits, uint64_t* out) {
  if (digits.empty()) return false;
  int base = 10;
  size_t i = 0;
  if (digits.size() > 2 && digits[0] == '0' &&
      (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    i = 2;
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;
    i = 1;
  }
  uint64_t v = 0;
  for (; i < digits.size(); ++i) {
    const char c = digits[i];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    if (d >= base) return false;
    if (v > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(d)) /
                static_cast<uint64_t>(base)) {
      return false;
    }
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

const char* EnumName(const EnumDesc& e, int64_t value) {
  for (const auto& v : e.values) {
    if (v.second == value) return v.first;
  }
  return nullptr;
}

bool EnumHas(const EnumDesc& e, const std::string& name) {
  for (const auto& v : e.values) {
    if (name == v.first) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Protobuf text format

struct Token {
  enum class Kind { kEnd, kIdent, kInt, kFloat, kString, kSymbol } kind;
  std::string text;  // identifier, number text, decoded string, symbol
  int line = 1;
  int column = 1;
};

class TextTokenizer {
 public:
  explicit TextTokenizer(const std::string& text) : text_(text) {}

  // Reads the next token into *tok. False with *error on a lexical error.
  bool Next(Token* tok, std::string* error) {
    SkipSpaceAndComments();
    tok->line = line_;
    tok->column = column_;
    tok->text.clear();
    if (pos_ >= text_.size()) {
      tok->kind = Token::Kind::kEnd;
      return true;
    }
    const char c = text_[pos_];
    if (IsLetter(c)) {
      tok->kind = Token::Kind::kIdent;
      while (pos_ < text_.size() &&
             (IsLetter(text_[pos_]) || IsDigit(text_[pos_]))) {
        tok->text.push_back(Advance());
      }
      return true;
    }
    if (IsDigit(c) ||
        (c == '.' && pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1]))) {
      return ReadNumber(tok, error);
    }
    if (c == '"' || c == '\'') return ReadString(tok, error);
    tok->kind = Token::Kind::kSymbol;
    tok->text.push_back(Advance());
    return true;
  }

 private:
  static bool IsLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  static bool IsHexDigit(char c) {
    return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  char Advance() {
    const char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    return c;
  }

  void SkipSpaceAndComments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
          c == '\f') {
        Advance();
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') Advance();
      } else {
        break;
      }
    }
  }

  bool Fail(const std::string& what, std::string* error) {
    *error =
        std::to_string(line_) + ":" + std::to_string(column_) + ": " + what;
    return false;
  }

  bool ReadNumber(Token* tok, std::string* error) {
    tok->kind = Token::Kind::kInt;
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() &&
        (text_[pos_ + 1] == 'x' || text_[pos_ + 1] == 'X')) {
      tok->text.push_back(Advance());
      tok->text.push_back(Advance());
      if (pos_ >= text_.size() || !IsHexDigit(text_[pos_])) {
        return Fail("\"0x\" must be followed by hex digits.", error);
      }
      while (pos_ < text_.size() && IsHexDigit(text_[pos_])) {
        tok->text.push_back(Advance());
      }
    } else {
      while (pos_ < text_.size() && IsDigit(text_[pos_])) {
        tok->text.push_back(Advance());
      }
      if (pos_ < text_.size() && text_[pos_] == '.') {
        tok->kind = Token::Kind::kFloat;
        tok->text.push_back(Advance());
        while (pos_ < text_.size() && IsDigit(text_[pos_])) {
          tok->text.push_back(Advance());
        }
      }
      if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        tok->kind = Token::Kind::kFloat;
        tok->text.push_back(Advance());
        if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
          tok->text.push_back(Advance());
        }
        if (pos_ >= text_.size() || !IsDigit(text_[pos_])) {
          return Fail("\"e\" must be followed by exponent.", error);
        }
        while (pos_ < text_.size() && IsDigit(text_[pos_])) {
          tok->text.push_back(Advance());
        }
      }
      if (pos_ < text_.size() && (text_[pos_] == 'f' || text_[pos_] == 'F')) {
        tok->kind = Token::Kind::kFloat;
        tok->text.push_back(Advance());
      }
    }
    if (pos_ < text_.size() && (IsLetter(text_[pos_]) || text_[pos_] == '.')) {
      return Fail("Need space between number and identifier.", error);
    }
    return true;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool ReadHex(int count, uint32_t* out, std::string* error) {
    uint32_t v = 0;
    for (int i = 0; i < count; ++i) {
      if (pos_ >= text_.size() || !IsHexDigit(text_[pos_])) {
        return Fail("Expected hex digits for escape sequence.", error);
      }
      const char c = Advance();
      v = v * 16 +
          static_cast<uint32_t>(
              IsDigit(c) ? c - '0' : (c >= 'a' ? c - 'a' + 10 : c - 'A' + 10));
    }
    *out = v;
    return true;
  }

  bool ReadString(Token* tok, std::string* error) {
    tok->kind = Token::Kind::kString;
    const char quote = Advance();
    while (true) {
      if (pos_ >= text_.size()) return Fail("Unexpected end of string.", error);
      const char c = text_[pos_];
      if (c == quote) {
        Advance();
        return true;
      }
      if (c == '\n') {
        return Fail("String literals cannot cross line boundaries.", error);
      }
      if (c != '\\') {
        tok->text.push_back(Advance());
        continue;
      }
      Advance();
      if (pos_ >= text_.size()) return Fail("Unexpected end of string.", error);
      const char e = Advance();
      switch (e) {
        case 'a':
          tok->text.push_back('\a');
          break;
        case 'b':
          tok->text.push_back('\b');
          break;
        case 'f':
          tok->text.push_back('\f');
          break;
        case 'n':
          tok->text.push_back('\n');
          break;
        case 'r':
          tok->text.push_back('\r');
          break;
        case 't':
          tok->text.push_back('\t');
          break;
        case 'v':
          tok->text.push_back('\v');
          break;
        case '\\':
        case '\'':
        case '"':
        case '?':
          tok->text.push_back(e);
          break;
        case 'x':
        case 'X': {
          // One or two hex digits, as protobuf reads them.
          if (pos_ >= text_.size() || !IsHexDigit(text_[pos_])) {
            return Fail("Expected hex digits for escape sequence.", error);
          }
          uint32_t v = 0;
          for (int i = 0;
               i < 2 && pos_ < text_.size() && IsHexDigit(text_[pos_]); ++i) {
            const char h = Advance();
            v = v * 16 + static_cast<uint32_t>(
                             IsDigit(h)
                                 ? h - '0'
                                 : (h >= 'a' ? h - 'a' + 10 : h - 'A' + 10));
          }
          tok->text.push_back(static_cast<char>(v));
          break;
        }
        case 'u':
        case 'U': {
          uint32_t cp = 0;
          if (!ReadHex(e == 'u' ? 4 : 8, &cp, error)) return false;
          if (e == 'u' && cp >= 0xD800 && cp <= 0xDBFF &&
              text_.compare(pos_, 2, "\\u") == 0) {
            Advance();
            Advance();
            uint32_t low = 0;
            if (!ReadHex(4, &low, error)) return false;
            if (low < 0xDC00 || low > 0xDFFF) {
              return Fail("Invalid surrogate pair in escape sequence.", error);
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            return Fail("Invalid surrogate in escape sequence.", error);
          }
          if (cp > 0x10FFFF) {
            return Fail("Invalid code point in escape sequence.", error);
          }
          AppendUtf8(cp, &tok->text);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            // Up to three octal digits.
            uint32_t v = static_cast<uint32_t>(e - '0');
            for (int i = 0; i < 2 && pos_ < text_.size() &&
                            text_[pos_] >= '0' && text_[pos_] <= '7';
                 ++i) {
              v = v * 8 + static_cast<uint32_t>(Advance() - '0');
            }
            tok->text.push_back(static_cast<char>(v & 0xFF));
            break;
          }
          return Fail(std::string("Invalid escape sequence in string literal."),
                      error);
      }
    }
  }

  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

// Reads protobuf text into the intermediate Json form, one token of
// lookahead. Every error names line:column of the offending token.
class TextParser {
 public:
  TextParser(const std::string& text, std::vector<std::string>* ignored)
      : tokenizer_(text), ignored_(ignored) {}

  bool Parse(Json* out, std::string* error) {
    if (!Read()) return Finish(error);
    *out = Json::Object();
    if (!ParseFields(kModelConfigDesc, out, "", nullptr, nullptr, 0)) {
      return Finish(error);
    }
    return true;
  }

 private:
  bool Finish(std::string* error) {
    *error = "Error parsing text-format inference.ModelConfig: " + error_;
    return false;
  }

  // Advances to the next token.
  bool Read() {
    std::string lex_error;
    if (!tokenizer_.Next(&tok_, &lex_error)) {
      if (error_.empty()) error_ = lex_error + ContextSuffix();
      return false;
    }
    return true;
  }

  bool FailAt(const Token& at, const std::string& what) {
    if (error_.empty()) {
      error_ = std::to_string(at.line) + ":" + std::to_string(at.column) +
               ": " + what + ContextSuffix();
    }
    return false;
  }

  // Names the field whose value (or, between fields, whose message) was
  // being read when an error was found.
  std::string ContextSuffix() const {
    return context_.empty() ? std::string() : " (field \"" + context_ + "\")";
  }
  bool Fail(const std::string& what) { return FailAt(tok_, what); }

  bool IsSymbol(const char* s) const {
    return tok_.kind == Token::Kind::kSymbol && tok_.text == s;
  }
  bool TryConsume(const char* s) {
    if (!IsSymbol(s)) return true;  // nothing consumed, no error
    return Read();
  }
  bool Consume(const char* s) {
    if (!IsSymbol(s)) {
      return Fail(std::string("Expected \"") + s + "\", found \"" +
                  Describe(tok_) + "\".");
    }
    return Read();
  }

  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case Token::Kind::kEnd:
        return "end of input";
      case Token::Kind::kString:
        return "\"" + t.text + "\"";
      default:
        return t.text;
    }
  }

  // Fields until `terminator` (nullptr: end of input), the block having
  // been opened by `opener`. `depth` guards the stack against absurdly
  // nested input.
  bool ParseFields(const MessageDesc& desc, Json* obj, const std::string& path,
                   const char* terminator, const Token* opener, int depth) {
    context_ = path;
    if (depth > 64) return Fail("Message nesting is too deep.");
    std::set<std::string> seen;
    while (true) {
      context_ = path;
      if (terminator == nullptr) {
        if (tok_.kind == Token::Kind::kEnd) return true;
      } else {
        if (IsSymbol(terminator)) return Read();
        if (tok_.kind == Token::Kind::kEnd) {
          return Unclosed(terminator, opener);
        }
      }
      if (tok_.kind != Token::Kind::kIdent) {
        return Fail("Expected identifier, got: " + Describe(tok_));
      }
      const Token name_tok = tok_;
      const FieldDesc* field = desc.Find(tok_.text);
      if (field == nullptr) {
        return Fail(std::string("Message type \"") + desc.name +
                    "\" has no field named \"" + tok_.text + "\".");
      }
      const std::string field_path =
          path.empty() ? field->name : path + "." + field->name;
      context_ = field_path;
      if (!field->repeated) {
        if (seen.count(field->name) != 0) {
          return FailAt(name_tok, std::string("Non-repeated field \"") +
                                      field->name +
                                      "\" is specified multiple times.");
        }
        if (field->oneof != 0) {
          for (const auto& other : desc.fields) {
            if (other.oneof == field->oneof && seen.count(other.name) != 0) {
              return FailAt(name_tok,
                            std::string("Field \"") + field->name +
                                "\" is specified along with field \"" +
                                other.name + "\", another member of oneof \"" +
                                desc.oneof_name + "\".");
            }
          }
        }
      }
      seen.insert(field->name);
      if (!Read()) return false;
      if (field->type == FieldType::kMessage ||
          field->type == FieldType::kSkippedMessage) {
        if (!TryConsume(":")) return false;
        if (IsSymbol("[")) {
          if (!field->repeated) {
            return Fail(std::string("Field \"") + field->name +
                        "\" is not a repeated field; a list is not allowed.");
          }
          const Token list_open = tok_;
          if (!Read()) return false;
          if (IsSymbol("]")) {
            if (!Read()) return false;
          } else {
            while (true) {
              if (!ParseMessageValue(*field, obj, field_path, depth))
                return false;
              context_ = field_path;
              if (IsSymbol("]")) {
                if (!Read()) return false;
                break;
              }
              if (tok_.kind == Token::Kind::kEnd) {
                return Unclosed("]", &list_open);
              }
              if (!Consume(",")) return false;
            }
          }
        } else {
          if (!ParseMessageValue(*field, obj, field_path, depth)) return false;
          context_ = field_path;
        }
        if (field->type == FieldType::kMessage && field->repeated &&
            !field->is_map && obj->find(field->name) == nullptr) {
          obj->set(field->name, Json::Array());  // `input []`
        }
      } else {
        if (!IsSymbol(":")) {
          return Fail(std::string("Expected \":\", found \"") + Describe(tok_) +
                      "\".");
        }
        if (!Read()) return false;
        if (IsSymbol("[")) {
          if (!field->repeated) {
            return Fail(std::string("Field \"") + field->name +
                        "\" is not a repeated field; a list is not allowed.");
          }
          const Token list_open = tok_;
          if (!Read()) return false;
          Json* list = obj->find(field->name);
          if (list == nullptr) list = &obj->set(field->name, Json::Array());
          if (IsSymbol("]")) {
            if (!Read()) return false;
          } else {
            while (true) {
              Json v;
              if (!ParseScalar(*field, &v)) return false;
              list->push(std::move(v));
              if (IsSymbol("]")) {
                if (!Read()) return false;
                break;
              }
              if (tok_.kind == Token::Kind::kEnd) {
                return Unclosed("]", &list_open);
              }
              if (!Consume(",")) return false;
            }
          }
        } else {
          Json v;
          if (!ParseScalar(*field, &v)) return false;
          if (field->repeated) {
            Json* list = obj->find(field->name);
            if (list == nullptr) list = &obj->set(field->name, Json::Array());
            list->push(std::move(v));
          } else {
            obj->set(field->name, std::move(v));
          }
        }
      }
      // Optional separator after a field.
      if (IsSymbol(";") || IsSymbol(",")) {
        if (!Read()) return false;
      }
    }
  }

  // One message value `{ ... }` or `< ... >` for `field`, stored in obj.
  bool ParseMessageValue(const FieldDesc& field, Json* obj,
                         const std::string& path, int depth) {
    const Token open = tok_;
    const char* close = nullptr;
    if (IsSymbol("{")) {
      close = "}";
    } else if (IsSymbol("<")) {
      close = ">";
    } else {
      return Fail(std::string("Expected \"{\", found \"") + Describe(tok_) +
                  "\".");
    }
    if (!Read()) return false;
    if (field.type == FieldType::kSkippedMessage) {
      if (std::find(ignored_->begin(), ignored_->end(), path) ==
          ignored_->end()) {
        ignored_->push_back(path);
      }
      if (!SkipUntil(close, &open, depth + 1)) return false;
      if (obj->find(field.name) == nullptr) {
        obj->set(field.name, Json::Object());  // presence only
      }
      return true;
    }
    Json value = Json::Object();
    if (!ParseFields(*field.message, &value, path, close, &open, depth + 1)) {
      return false;
    }
    if (field.is_map) {
      Json* map = obj->find(field.name);
      if (map == nullptr) map = &obj->set(field.name, Json::Object());
      std::string key;
      if (const Json* k = value.find("key")) {
        key = k->is_string()                   ? k->as_string()
              : k->type() == Json::Type::kUint ? std::to_string(k->as_uint())
                                               : std::to_string(k->as_int());
      } else if (field.message->fields[0].type != FieldType::kString) {
        key = "0";
      }
      const Json* v = value.find("value");
      map->set(key, v != nullptr ? *v
                    : field.message->fields[1].type == FieldType::kMessage
                        ? Json::Object()
                        : Json::Str(""));
    } else if (field.repeated) {
      Json* list = obj->find(field.name);
      if (list == nullptr) list = &obj->set(field.name, Json::Array());
      list->push(std::move(value));
    } else {
      obj->set(field.name, std::move(value));
    }
    return true;
  }

  // Skips the body of an unmodelled message up to its closing symbol,
  // checking only that it is well-formed text format.
  bool SkipUntil(const char* close, const Token* opener, int depth) {
    if (depth > 64) return Fail("Message nesting is too deep.");
    while (true) {
      if (IsSymbol(close)) return Read();
      if (tok_.kind == Token::Kind::kEnd) return Unclosed(close, opener);
      if (tok_.kind != Token::Kind::kIdent) {
        return Fail("Expected identifier, got: " + Describe(tok_));
      }
      if (!Read()) return false;
      const bool had_colon = IsSymbol(":");
      if (!TryConsume(":")) return false;
      if (IsSymbol("[")) {
        const Token list_open = tok_;
        if (!Read()) return false;
        if (IsSymbol("]")) {
          if (!Read()) return false;
        } else {
          while (true) {
            if (!SkipValue(true, depth)) return false;
            if (IsSymbol("]")) {
              if (!Read()) return false;
              break;
            }
            if (tok_.kind == Token::Kind::kEnd) {
              return Unclosed("]", &list_open);
            }
            if (!Consume(",")) return false;
          }
        }
      } else if (!SkipValue(had_colon, depth)) {
        return false;
      }
      if (IsSymbol(";") || IsSymbol(",")) {
        if (!Read()) return false;
      }
    }
  }

  bool SkipValue(bool scalar_allowed, int depth) {
    const Token open = tok_;
    if (IsSymbol("{")) {
      if (!Read()) return false;
      return SkipUntil("}", &open, depth + 1);
    }
    if (IsSymbol("<")) {
      if (!Read()) return false;
      return SkipUntil(">", &open, depth + 1);
    }
    if (!scalar_allowed) {
      return Fail(std::string("Expected \"{\", found \"") + Describe(tok_) +
                  "\".");
    }
    if (IsSymbol("-")) {
      if (!Read()) return false;
    }
    if (tok_.kind == Token::Kind::kString) {
      while (tok_.kind == Token::Kind::kString) {
        if (!Read()) return false;
      }
      return true;
    }
    if (tok_.kind == Token::Kind::kIdent || tok_.kind == Token::Kind::kInt ||
        tok_.kind == Token::Kind::kFloat) {
      return Read();
    }
    return Fail("Expected a value, got: " + Describe(tok_));
  }

  bool ParseScalar(const FieldDesc& f, Json* out) {
    const Token start = tok_;
    switch (f.type) {
      case FieldType::kString: {
        if (tok_.kind != Token::Kind::kString) {
          return Fail("Expected string, got: " + Describe(tok_));
        }
        std::string s;
        while (tok_.kind == Token::Kind::kString) {  // "a" "b" concatenates
          s += tok_.text;
          if (!Read()) return false;
        }
        *out = Json::Str(std::move(s));
        return true;
      }
      case FieldType::kBool: {
        const std::string& t = tok_.text;
        if (tok_.kind == Token::Kind::kIdent &&
            (t == "true" || t == "True" || t == "t")) {
          *out = Json::Bool(true);
        } else if (tok_.kind == Token::Kind::kIdent &&
                   (t == "false" || t == "False" || t == "f")) {
          *out = Json::Bool(false);
        } else if (tok_.kind == Token::Kind::kInt && (t == "0" || t == "1")) {
          *out = Json::Bool(t == "1");
        } else {
          return Fail(std::string("Invalid value for boolean field \"") +
                      f.name + "\". Value: \"" + Describe(tok_) + "\".");
        }
        return Read();
      }
      case FieldType::kEnum: {
        if (tok_.kind == Token::Kind::kIdent) {
          if (!EnumHas(*f.enum_desc, tok_.text)) {
            return Fail("Unknown enumeration value of \"" + tok_.text +
                        "\" for field \"" + f.name + "\".");
          }
          *out = Json::Str(tok_.text);
          return Read();
        }
        bool negative = false;
        if (IsSymbol("-")) {
          negative = true;
          if (!Read()) return false;
        }
        uint64_t magnitude = 0;
        if (tok_.kind != Token::Kind::kInt ||
            !ParseMagnitude(tok_.text, &magnitude)) {
          return Fail("Expected integer or identifier, got: " + Describe(tok_));
        }
        const char* name =
            (negative || magnitude > 1000)
                ? nullptr
                : EnumName(*f.enum_desc, static_cast<int64_t>(magnitude));
        if (name == nullptr) {
          return FailAt(start, "Unknown enumeration value of \"" +
                                   std::string(negative ? "-" : "") +
                                   tok_.text + "\" for field \"" + f.name +
                                   "\".");
        }
        *out = Json::Str(name);
        return Read();
      }
      default:
        break;
    }
    // Integers.
    bool negative = false;
    if (IsSymbol("-")) {
      negative = true;
      if (!Read()) return false;
    }
    if (tok_.kind != Token::Kind::kInt) {
      return Fail("Expected integer, got: " + Describe(tok_));
    }
    uint64_t magnitude = 0;
    if (!ParseMagnitude(tok_.text, &magnitude)) {
      return FailAt(start, "Integer out of range (" +
                               std::string(negative ? "-" : "") + tok_.text +
                               ")");
    }
    std::string problem;
    if (!MakeInteger(f, negative, magnitude, out, &problem)) {
      return FailAt(start, problem + " for field \"" + f.name + "\".");
    }
    return Read();
  }

  bool Unclosed(const char* close, const Token* opener) {
    std::string what =
        std::string("Expected \"") + close + "\", found \"end of input\".";
    if (opener != nullptr) {
      what += std::string(" The \"") + opener->text + "\" at " +
              std::to_string(opener->line) + ":" +
              std::to_string(opener->column) + " is not closed.";
    }
    return Fail(what);
  }

  TextTokenizer tokenizer_;
  Token tok_;
  std::string error_;
  std::string context_;  // dotted path of the field being read
  std::vector<std::string>* ignored_;
};

// ---------------------------------------------------------------------------
// JSON override -> intermediate form

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
      if (std::find(ignored_->begin(), ignored_->end(), path) ==
          ignored_->end()) {
        ignored_->push_back(path);
      }
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

// ---------------------------------------------------------------------------
// Intermediate form -> ModelConfig

std::string GetString(const Json& obj, const char* key) {
  const Json* v = obj.find(key);
  return v != nullptr && v->is_string() ? v->as_string() : std::string();
}

bool GetBool(const Json& obj, const char* key) {
  const Json* v = obj.find(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

int64_t GetInt(const Json& obj, const char* key, int64_t dflt = 0) {
  const Json* v = obj.find(key);
  return v != nullptr && v->is_number() ? v->as_int() : dflt;
}

uint64_t GetUint(const Json& obj, const char* key) {
  const Json* v = obj.find(key);
  return v != nullptr && v->is_number() ? v->as_uint() : 0;
}

std::vector<int64_t> GetInt64List(const Json& obj, const char* key) {
  std::vector<int64_t> out;
  if (const Json* v = obj.find(key)) {
    for (size_t i = 0; i < v->size(); ++i) out.push_back(v->at(i).as_int());
  }
  return out;
}

bool ToUint32(uint64_t v, const std::string& what, uint32_t* out,
              std::string* error) {
  if (v > std::numeric_limits<uint32_t>::max()) {
    *error = what + " " + std::to_string(v) +
             " is larger than the fake engine supports";
    return false;
  }
  *out = static_cast<uint32_t>(v);
  return true;
}

TensorConfig ToTensor(const Json& obj) {
  TensorConfig t;
  t.name = GetString(obj, "name");
  if (obj.find("data_type") != nullptr) {
    t.data_type = GetString(obj, "data_type");
  }
  t.datatype = DataTypeFromConfigName(t.data_type);
  if (obj.find("format") != nullptr) t.format = GetString(obj, "format");
  t.dims = GetInt64List(obj, "dims");
  if (const Json* r = obj.find("reshape")) {
    t.has_reshape = true;
    t.reshape = GetInt64List(*r, "shape");
  }
  t.is_shape_tensor = GetBool(obj, "is_shape_tensor");
  t.allow_ragged_batch = GetBool(obj, "allow_ragged_batch");
  t.optional = GetBool(obj, "optional");
  t.label_filename = GetString(obj, "label_filename");
  t.is_non_linear_format_io = GetBool(obj, "is_non_linear_format_io");
  return t;
}

bool ToQueuePolicy(const Json& obj, const std::string& what,
                   QueuePolicyConfig* q, std::string* error) {
  q->present = true;
  if (obj.find("timeout_action") != nullptr) {
    q->timeout_action = GetString(obj, "timeout_action");
  }
  q->default_timeout_microseconds =
      GetUint(obj, "default_timeout_microseconds");
  q->allow_timeout_override = GetBool(obj, "allow_timeout_override");
  return ToUint32(GetUint(obj, "max_queue_size"), what + ".max_queue_size",
                  &q->max_queue_size, error);
}

bool FromIntermediate(const Json& in, ModelConfig* cfg, std::string* error) {
  cfg->name = GetString(in, "name");
  cfg->platform = GetString(in, "platform");
  cfg->backend = GetString(in, "backend");
  cfg->runtime = GetString(in, "runtime");
  if (const Json* vp = in.find("version_policy")) {
    if (const Json* latest = vp->find("latest")) {
      cfg->version_policy.kind = VersionPolicyConfig::Kind::kLatest;
      if (!ToUint32(GetUint(*latest, "num_versions"),
                    "version_policy.latest.num_versions",
                    &cfg->version_policy.num_versions, error)) {
        return false;
      }
    } else if (vp->find("all") != nullptr) {
      cfg->version_policy.kind = VersionPolicyConfig::Kind::kAll;
    } else if (const Json* specific = vp->find("specific")) {
      cfg->version_policy.kind = VersionPolicyConfig::Kind::kSpecific;
      cfg->version_policy.versions = GetInt64List(*specific, "versions");
    }
    // An empty `version_policy {}` chooses nothing; Triton then serves the
    // default (latest 1), which is what the struct already holds.
  }
  cfg->max_batch_size = static_cast<int>(GetInt(in, "max_batch_size"));
  if (const Json* list = in.find("input")) {
    for (size_t i = 0; i < list->size(); ++i) {
      cfg->input.push_back(ToTensor(list->at(i)));
    }
  }
  if (const Json* list = in.find("output")) {
    for (size_t i = 0; i < list->size(); ++i) {
      TensorConfig t = ToTensor(list->at(i));
      t.format = "FORMAT_NONE";
      cfg->output.push_back(std::move(t));
    }
  }
  if (const Json* groups = in.find("instance_group")) {
    for (size_t i = 0; i < groups->size(); ++i) {
      const Json& g = groups->at(i);
      InstanceGroupConfig group;
      group.name = GetString(g, "name");
      group.kind =
          g.find("kind") != nullptr ? GetString(g, "kind") : "KIND_AUTO";
      // 0 (unset) becomes 1 in FillModelConfigDefaults, as in Triton.
      group.count = static_cast<int>(GetInt(g, "count", 0));
      for (int64_t gpu : GetInt64List(g, "gpus")) {
        group.gpus.push_back(static_cast<int>(gpu));
      }
      if (const Json* profiles = g.find("profile")) {
        for (size_t k = 0; k < profiles->size(); ++k) {
          group.profile.push_back(profiles->at(k).as_string());
        }
      }
      group.passive = GetBool(g, "passive");
      group.host_policy = GetString(g, "host_policy");
      cfg->instance_group.push_back(std::move(group));
    }
  }
  if (const Json* db = in.find("dynamic_batching")) {
    DynamicBatchingConfig& d = cfg->dynamic_batching;
    d.present = true;
    for (int64_t size : GetInt64List(*db, "preferred_batch_size")) {
      d.preferred_batch_size.push_back(static_cast<int>(size));
    }
    d.max_queue_delay_microseconds =
        GetUint(*db, "max_queue_delay_microseconds");
    d.preserve_ordering = GetBool(*db, "preserve_ordering");
    if (!ToUint32(GetUint(*db, "priority_levels"),
                  "dynamic_batching.priority_levels", &d.priority_levels,
                  error) ||
        !ToUint32(GetUint(*db, "default_priority_level"),
                  "dynamic_batching.default_priority_level",
                  &d.default_priority_level, error)) {
      return false;
    }
    if (const Json* q = db->find("default_queue_policy")) {
      if (!ToQueuePolicy(*q, "dynamic_batching.default_queue_policy",
                         &d.default_queue_policy, error)) {
        return false;
      }
    }
    if (const Json* pq = db->find("priority_queue_policy")) {
      for (const auto& item : pq->items()) {
        QueuePolicyConfig q;
        if (!ToQueuePolicy(
                item.second,
                "dynamic_batching.priority_queue_policy." + item.first, &q,
                error)) {
          return false;
        }
        d.priority_queue_policy[std::stoull(item.first)] = q;
      }
    }
  }
  cfg->has_sequence_batching = in.find("sequence_batching") != nullptr;
  cfg->has_ensemble_scheduling = in.find("ensemble_scheduling") != nullptr;
  cfg->default_model_filename = GetString(in, "default_model_filename");
  if (const Json* m = in.find("cc_model_filenames")) {
    for (const auto& item : m->items()) {
      cfg->cc_model_filenames[item.first] = item.second.as_string();
    }
  }
  if (const Json* m = in.find("metric_tags")) {
    for (const auto& item : m->items()) {
      cfg->metric_tags[item.first] = item.second.as_string();
    }
  }
  if (const Json* params = in.find("parameters")) {
    for (const auto& item : params->items()) {
      cfg->parameters[item.first] = GetString(item.second, "string_value");
    }
  }
  if (const Json* tp = in.find("model_transaction_policy")) {
    cfg->has_transaction_policy = true;
    cfg->decoupled = GetBool(*tp, "decoupled");
  }
  return true;
}

// ---------------------------------------------------------------------------
// Output helpers

Json Int64Array(const std::vector<int64_t>& values) {
  Json a = Json::Array();
  for (int64_t v : values) a.push(Json::Int(v));
  return a;
}

Json QueuePolicyJson(const QueuePolicyConfig& q) {
  Json o = Json::Object();
  o.set("timeout_action", Json::Str(q.timeout_action));
  o.set("default_timeout_microseconds",
        Json::Uint(q.default_timeout_microseconds));
  o.set("allow_timeout_override", Json::Bool(q.allow_timeout_override));
  o.set("max_queue_size", Json::Uint(q.max_queue_size));
  return o;
}

Json StringMapJson(const std::map<std::string, std::string>& m) {
  Json o = Json::Object();
  for (const auto& item : m) o.set(item.first, Json::Str(item.second));
  return o;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

bool ValidateTensor(const TensorConfig& t, bool is_input,
                    const ModelConfig& cfg, std::string* error) {
  const std::string prefix = is_input ? "model input " : "model output ";
  if (t.name.empty()) {
    *error = prefix + "must specify 'name'";
    return false;
  }
  const std::string named = prefix + "'" + t.name + "' ";
  if (t.datatype == TRITONSERVER_TYPE_INVALID) {
    *error = named + "must specify 'data_type'";
    return false;
  }
  if (t.dims.empty()) {
    *error = named + "must specify 'dims'";
    return false;
  }
  if (t.has_reshape && t.reshape.empty() && cfg.max_batch_size == 0) {
    *error = named +
             "cannot have empty reshape for non-batching model as scalar "
             "tensors are not supported";
    return false;
  }
  for (int64_t d : t.dims) {
    if (d < 1 && d != -1) {
      *error = named +
               "dimension must be integer >= 1, or -1 to indicate a "
               "variable-size dimension";
      return false;
    }
  }
  if (t.has_reshape) {
    for (int64_t d : t.reshape) {
      if (d < 1 && d != -1) {
        *error = named +
                 "reshape dimensions must be integer >= 1, or -1 to indicate "
                 "a variable-size dimension";
        return false;
      }
    }
    // Element counts must agree where both are fixed (an empty reshape
    // stands for a single element).
    auto count = [](const std::vector<int64_t>& dims, bool* variable) {
      int64_t n = 1;
      *variable = false;
      for (int64_t d : dims) {
        if (d == -1) {
          *variable = true;
        } else if (n <= std::numeric_limits<int64_t>::max() / d) {
          n *= d;
        } else {
          n = std::numeric_limits<int64_t>::max();
        }
      }
      return n;
    };
    bool dims_variable = false;
    bool reshape_variable = false;
    const int64_t dims_count = count(t.dims, &dims_variable);
    const int64_t reshape_count = count(t.reshape, &reshape_variable);
    if (dims_variable != reshape_variable ||
        (!dims_variable && dims_count != reshape_count)) {
      *error = named + "has different size for dims and reshape";
      return false;
    }
  }
  if (is_input && t.format != "FORMAT_NONE" && t.dims.size() != 3) {
    *error = "model input NHWC/NCHW require 3 dims";
    return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------
// Public API

bool ParseModelConfigText(const std::string& text, ModelConfig* out,
                          std::string* error) {
  ModelConfig cfg;
  Json intermediate;
  std::string message;
  TextParser parser(text, &cfg.ignored_fields);
  if (!parser.Parse(&intermediate, &message) ||
      !FromIntermediate(intermediate, &cfg, &message)) {
    if (error != nullptr) *error = message;
    return false;
  }
  *out = std::move(cfg);
  return true;
}

bool ParseModelConfigJson(const std::string& json_text, ModelConfig* out,
                          std::string* error) {
  Json doc;
  std::string message;
  if (!Json::Parse(json_text, &doc, &message)) {
    if (error != nullptr) *error = message;
    return false;
  }
  ModelConfig cfg;
  JsonNormalizer normalizer(&cfg.ignored_fields);
  Json intermediate;
  if (!normalizer.Message(kModelConfigDesc, doc, "", &intermediate, &message) ||
      !FromIntermediate(intermediate, &cfg, &message)) {
    if (error != nullptr) *error = message;
    return false;
  }
  *out = std::move(cfg);
  return true;
}

void FillModelConfigDefaults(const std::string& model_name, ModelConfig* cfg) {
  if (cfg->name.empty()) cfg->name = model_name;
  if (cfg->dynamic_batching.present &&
      cfg->dynamic_batching.preferred_batch_size.empty() &&
      cfg->max_batch_size > 0) {
    cfg->dynamic_batching.preferred_batch_size.push_back(cfg->max_batch_size);
  }
  // Ensembles have no instances of their own.
  if (cfg->has_ensemble_scheduling) return;
  if (cfg->instance_group.empty()) {
    InstanceGroupConfig group;
    group.name = cfg->name;
    cfg->instance_group.push_back(group);
  }
  for (size_t i = 0; i < cfg->instance_group.size(); ++i) {
    InstanceGroupConfig& group = cfg->instance_group[i];
    if (group.name.empty()) group.name = cfg->name + "_" + std::to_string(i);
    // The fake engine is a CPU-only build: KIND_AUTO resolves to CPU there.
    // An explicit KIND_GPU stays as written.
    if (group.kind == "KIND_AUTO") group.kind = "KIND_CPU";
    if (group.count < 1) group.count = 1;
  }
}

bool ValidateModelConfig(const ModelConfig& cfg, std::string* error) {
  std::string message;
  auto fail = [&](const std::string& m) {
    if (error != nullptr) *error = m;
    return false;
  };
  if (cfg.name.empty()) {
    return fail("model configuration must specify 'name'");
  }
  if (cfg.backend.empty() && cfg.platform.empty()) {
    return fail("Invalid model name: Could not determine backend for model '" +
                cfg.name +
                "' with no backend in model configuration. Expected model "
                "name of the form 'model.<backend_name>'.");
  }
  if (cfg.backend.empty() && cfg.platform != "ensemble") {
    return fail("unexpected platform type '" + cfg.platform + "' for " +
                cfg.name);
  }
  if (!cfg.backend.empty() && cfg.platform == "ensemble") {
    return fail("Ensemble model '" + cfg.name + "' must have platform type '" +
                cfg.platform + "' and empty backend type");
  }
  if (cfg.max_batch_size < 0) {
    return fail("'max_batch_size' must be non-negative value for " + cfg.name);
  }
  const DynamicBatchingConfig& db = cfg.dynamic_batching;
  if (db.present) {
    for (int size : db.preferred_batch_size) {
      if (size <= 0) {
        return fail("dynamic batching preferred size must be positive for " +
                    cfg.name);
      }
      if (size > cfg.max_batch_size) {
        return fail(
            "dynamic batching preferred size must be <= max batch size for " +
            cfg.name);
      }
    }
    if (db.priority_levels != 0) {
      if (db.default_priority_level == 0 ||
          db.default_priority_level > db.priority_levels) {
        return fail("default priority level must be in range [1, " +
                    std::to_string(db.priority_levels) + "] for " + cfg.name);
      }
      for (const auto& item : db.priority_queue_policy) {
        if (item.first == 0 || item.first > db.priority_levels) {
          return fail(
              "priority queue policy must have priority level in "
              "range [1, " +
              std::to_string(db.priority_levels) + "] for " + cfg.name);
        }
      }
    }
  }
  for (const auto& t : cfg.input) {
    if (!ValidateTensor(t, true, cfg, &message)) return fail(message);
  }
  for (const auto& t : cfg.output) {
    if (!ValidateTensor(t, false, cfg, &message)) return fail(message);
  }
  if (!cfg.has_ensemble_scheduling) {
    if (cfg.instance_group.empty()) {
      return fail("must specify one or more 'instance group's for " + cfg.name);
    }
    for (const auto& g : cfg.instance_group) {
      const std::string group =
          "instance group " + g.name + " of model " + cfg.name;
      if ((g.kind == "KIND_CPU" || g.kind == "KIND_MODEL") && !g.gpus.empty()) {
        return fail(group + " has kind " + g.kind +
                    " but specifies one or more GPUs");
      }
      if (g.kind == "KIND_AUTO") {
        return fail(group + " has unexpected kind KIND_AUTO");
      }
      if (!g.profile.empty()) {
        return fail(group + " and platform " + cfg.platform +
                    "specifies profile field which is only supported for "
                    "TensorRT models");
      }
    }
  }
  return true;
}

bool ValidateForBackend(const ModelConfig& cfg, std::string* error) {
  // The checks and messages of the real identity, repeat and square
  // backends (their ModelInitialize), in their order. Like them, repeat and
  // square read their tensors by position, not by name.
  std::string problem;
  auto fail = [&](const std::string& m) {
    if (error != nullptr) *error = m;
    return false;
  };
  auto expect_shape = [&](const TensorConfig& t, const char* what,
                          const std::vector<int64_t>& want) {
    if (t.dims == want) return true;
    problem = std::string("expected ") + what + " shape to be " +
              DimsText(want) + ", got " + DimsText(t.dims);
    return false;
  };
  auto expect_type = [&](const TensorConfig& t, const char* what,
                         const char* want) {
    if (t.data_type == std::string("TYPE_") + want) return true;
    problem = std::string("expected ") + what + " datatype to be " + want +
              ", got " + t.data_type;
    return false;
  };
  auto expect_name = [&](const TensorConfig& t, const char* position,
                         const char* want) {
    if (t.name == want) return true;
    problem = std::string("expected ") + position + " tensor name to be " +
              want + ", got " + t.name;
    return false;
  };
  // Repeat and square only work as decoupled models; the real backends do
  // not check it at load (a non-decoupled model fails on its second
  // response), the fake refuses such a config up front.
  auto require_decoupled = [&]() {
    if (cfg.decoupled) return true;
    problem = cfg.backend +
              " backend requires a decoupled model: set "
              "model_transaction_policy { decoupled: true } in the model "
              "configuration";
    return false;
  };

  if (cfg.backend == "identity") {
    if (cfg.input.size() != cfg.output.size()) {
      return fail("model configuration must have equal input/output pairs");
    }
    // index suffix -> (data type, shape or reshape); the first entry of a
    // duplicated index wins.
    std::map<std::string, std::pair<std::string, std::vector<int64_t>>> inputs,
        outputs;
    for (size_t i = 0; i < cfg.input.size(); ++i) {
      const TensorConfig& in = cfg.input[i];
      const TensorConfig& out = cfg.output[i];
      if (in.name.compare(0, 5, "INPUT") != 0) {
        return fail(
            "expected input name to follow INPUT<index> pattern, got '" +
            in.name + "'");
      }
      if (out.name.compare(0, 6, "OUTPUT") != 0) {
        return fail(
            "expected output name to follow OUTPUT<index> pattern, got '" +
            out.name + "'");
      }
      inputs.emplace(
          in.name.substr(5),
          std::make_pair(in.data_type, in.has_reshape ? in.reshape : in.dims));
      outputs.emplace(out.name.substr(6),
                      std::make_pair(out.data_type,
                                     out.has_reshape ? out.reshape : out.dims));
    }
    for (const auto& out : outputs) {
      auto in = inputs.find(out.first);
      if (in == inputs.end()) {
        return fail("expected input and output indices to match");
      }
      if (in->second.first != out.second.first) {
        return fail("expected input and output datatype to match, got " +
                    in->second.first + " and " + out.second.first);
      }
      if (in->second.second != out.second.second) {
        return fail("expected input and output shape to match, got " +
                    DimsText(in->second.second) + " and " +
                    DimsText(out.second.second));
      }
    }
    return true;
  }
  if (cfg.backend == "repeat") {
    if (cfg.max_batch_size != 0) {
      return fail(
          "repeat backend only supports models with max_batch_size == 0");
    }
    if (cfg.input.size() != 3) {
      return fail("expected 3 inputs, got " + std::to_string(cfg.input.size()));
    }
    if (cfg.output.size() != 2) {
      return fail("expected 2 outputs, got " +
                  std::to_string(cfg.output.size()));
    }
    const TensorConfig& in = cfg.input[0];
    const TensorConfig& delay = cfg.input[1];
    const TensorConfig& wait = cfg.input[2];
    const TensorConfig& out = cfg.output[0];
    const TensorConfig& idx = cfg.output[1];
    if (!expect_name(in, "first input", "IN") ||
        !expect_name(delay, "second input", "DELAY") ||
        !expect_name(wait, "third input", "WAIT") ||
        !expect_name(out, "first output", "OUT") ||
        !expect_name(idx, "second output", "IDX")) {
      return fail(problem);
    }
    if (in.dims.size() != 1) {
      return fail("expected IN shape to have one dimension, got " +
                  DimsText(in.dims));
    }
    if (in.dims != delay.dims) {
      return fail("expected IN and DELAY shape to match, got " +
                  DimsText(in.dims) + " and " + DimsText(delay.dims));
    }
    if (!expect_shape(wait, "WAIT", {1}) || !expect_shape(out, "OUT", {1}) ||
        !expect_shape(idx, "IDX", {1}) || !expect_type(in, "IN", "INT32") ||
        !expect_type(delay, "DELAY", "UINT32") ||
        !expect_type(wait, "WAIT", "UINT32") ||
        !expect_type(out, "OUT", "INT32") ||
        !expect_type(idx, "IDX", "UINT32") || !require_decoupled()) {
      return fail(problem);
    }
    return true;
  }
  if (cfg.backend == "square") {
    if (cfg.input.size() != 1) {
      return fail("expected 1 input, got " + std::to_string(cfg.input.size()));
    }
    if (cfg.output.size() != 1) {
      return fail("expected 1 output, got " +
                  std::to_string(cfg.output.size()));
    }
    const TensorConfig& in = cfg.input[0];
    const TensorConfig& out = cfg.output[0];
    if (!expect_name(in, "first input", "IN") ||
        !expect_name(out, "first output", "OUT") ||
        !expect_shape(in, "IN", {1}) || !expect_shape(out, "OUT", {1}) ||
        !expect_type(in, "IN", "INT32") || !expect_type(out, "OUT", "INT32") ||
        !require_decoupled()) {
      return fail(problem);
    }
    return true;
  }
  return true;
}

std::string ModelConfigToJson(const ModelConfig& cfg) {
  Json o = Json::Object();
  o.set("name", Json::Str(cfg.name));
  o.set("platform", Json::Str(cfg.platform));
  o.set("backend", Json::Str(cfg.backend));
  o.set("runtime", Json::Str(cfg.runtime));
  Json vp = Json::Object();
  switch (cfg.version_policy.kind) {
    case VersionPolicyConfig::Kind::kLatest: {
      Json latest = Json::Object();
      latest.set("num_versions", Json::Uint(cfg.version_policy.num_versions));
      vp.set("latest", std::move(latest));
      break;
    }
    case VersionPolicyConfig::Kind::kAll:
      vp.set("all", Json::Object());
      break;
    case VersionPolicyConfig::Kind::kSpecific: {
      Json specific = Json::Object();
      specific.set("versions", Int64Array(cfg.version_policy.versions));
      vp.set("specific", std::move(specific));
      break;
    }
  }
  o.set("version_policy", std::move(vp));
  o.set("max_batch_size", Json::Int(cfg.max_batch_size));
  Json inputs = Json::Array();
  for (const auto& t : cfg.input) {
    Json i = Json::Object();
    i.set("name", Json::Str(t.name));
    i.set("data_type", Json::Str(t.data_type));
    i.set("format", Json::Str(t.format));
    i.set("dims", Int64Array(t.dims));
    if (t.has_reshape) {
      Json r = Json::Object();
      r.set("shape", Int64Array(t.reshape));
      i.set("reshape", std::move(r));
    }
    i.set("is_shape_tensor", Json::Bool(t.is_shape_tensor));
    i.set("allow_ragged_batch", Json::Bool(t.allow_ragged_batch));
    i.set("optional", Json::Bool(t.optional));
    i.set("is_non_linear_format_io", Json::Bool(t.is_non_linear_format_io));
    inputs.push(std::move(i));
  }
  o.set("input", std::move(inputs));
  Json outputs = Json::Array();
  for (const auto& t : cfg.output) {
    Json i = Json::Object();
    i.set("name", Json::Str(t.name));
    i.set("data_type", Json::Str(t.data_type));
    i.set("dims", Int64Array(t.dims));
    if (t.has_reshape) {
      Json r = Json::Object();
      r.set("shape", Int64Array(t.reshape));
      i.set("reshape", std::move(r));
    }
    i.set("label_filename", Json::Str(t.label_filename));
    i.set("is_shape_tensor", Json::Bool(t.is_shape_tensor));
    i.set("is_non_linear_format_io", Json::Bool(t.is_non_linear_format_io));
    outputs.push(std::move(i));
  }
  o.set("output", std::move(outputs));
  o.set("batch_input", Json::Array());
  o.set("batch_output", Json::Array());
  if (!cfg.has_ensemble_scheduling) {
    Json opt = Json::Object();
    opt.set("priority", Json::Str("PRIORITY_DEFAULT"));
    Json pinned = Json::Object();
    pinned.set("enable", Json::Bool(true));
    opt.set("input_pinned_memory", pinned);
    opt.set("output_pinned_memory", pinned);
    opt.set("gather_kernel_buffer_threshold", Json::Uint(0));
    opt.set("eager_batching", Json::Bool(false));
    o.set("optimization", std::move(opt));
  }
  if (cfg.dynamic_batching.present) {
    const DynamicBatchingConfig& d = cfg.dynamic_batching;
    Json db = Json::Object();
    Json sizes = Json::Array();
    for (int s : d.preferred_batch_size) sizes.push(Json::Int(s));
    db.set("preferred_batch_size", std::move(sizes));
    db.set("max_queue_delay_microseconds",
           Json::Uint(d.max_queue_delay_microseconds));
    db.set("preserve_ordering", Json::Bool(d.preserve_ordering));
    db.set("priority_levels", Json::Uint(d.priority_levels));
    db.set("default_priority_level", Json::Uint(d.default_priority_level));
    if (d.default_queue_policy.present) {
      db.set("default_queue_policy", QueuePolicyJson(d.default_queue_policy));
    }
    Json pq = Json::Object();
    for (const auto& item : d.priority_queue_policy) {
      pq.set(std::to_string(item.first), QueuePolicyJson(item.second));
    }
    db.set("priority_queue_policy", std::move(pq));
    o.set("dynamic_batching", std::move(db));
  }
  Json groups = Json::Array();
  for (const auto& g : cfg.instance_group) {
    Json j = Json::Object();
    j.set("name", Json::Str(g.name));
    j.set("kind", Json::Str(g.kind));
    j.set("count", Json::Int(g.count));
    Json gpus = Json::Array();
    for (int gpu : g.gpus) gpus.push(Json::Int(gpu));
    j.set("gpus", std::move(gpus));
    j.set("secondary_devices", Json::Array());
    Json profiles = Json::Array();
    for (const auto& p : g.profile) profiles.push(Json::Str(p));
    j.set("profile", std::move(profiles));
    j.set("passive", Json::Bool(g.passive));
    j.set("host_policy", Json::Str(g.host_policy));
    groups.push(std::move(j));
  }
  o.set("instance_group", std::move(groups));
  o.set("default_model_filename", Json::Str(cfg.default_model_filename));
  o.set("cc_model_filenames", StringMapJson(cfg.cc_model_filenames));
  o.set("metric_tags", StringMapJson(cfg.metric_tags));
  Json params = Json::Object();
  for (const auto& item : cfg.parameters) {
    Json p = Json::Object();
    p.set("string_value", Json::Str(item.second));
    params.set(item.first, std::move(p));
  }
  o.set("parameters", std::move(params));
  o.set("model_warmup", Json::Array());
  if (cfg.has_transaction_policy || cfg.has_ensemble_scheduling) {
    Json tp = Json::Object();
    tp.set("decoupled", Json::Bool(cfg.decoupled));
    o.set("model_transaction_policy", std::move(tp));
  }
  return o.dump();
}

std::string ModelMetadataJson(const ModelConfig& cfg,
                              const std::vector<int64_t>& versions) {
  Json o = Json::Object();
  o.set("name", Json::Str(cfg.name));
  Json v = Json::Array();
  for (int64_t version : versions) v.push(Json::Str(std::to_string(version)));
  o.set("versions", std::move(v));
  // Triton reports the platform, or the backend name when there is none.
  o.set("platform",
        Json::Str(cfg.platform.empty() ? cfg.backend : cfg.platform));
  auto tensors = [&](const std::vector<TensorConfig>& list) {
    Json a = Json::Array();
    for (const auto& t : list) {
      Json j = Json::Object();
      j.set("name", Json::Str(t.name));
      j.set("datatype", Json::Str(ApiNameFromDataType(t.datatype)));
      Json shape = Json::Array();
      if (cfg.max_batch_size > 0) shape.push(Json::Int(-1));
      for (int64_t d : t.dims) shape.push(Json::Int(d));
      j.set("shape", std::move(shape));
      a.push(std::move(j));
    }
    return a;
  };
  o.set("inputs", tensors(cfg.input));
  o.set("outputs", tensors(cfg.output));
  return o.dump();
}

TRITONSERVER_DataType DataTypeFromConfigName(const std::string& name) {
  for (const auto& v : kDataTypeEnum.values) {
    if (name == v.first) return static_cast<TRITONSERVER_DataType>(v.second);
  }
  return TRITONSERVER_TYPE_INVALID;
}

const char* ConfigNameFromDataType(TRITONSERVER_DataType dt) {
  const char* name = EnumName(kDataTypeEnum, static_cast<int64_t>(dt));
  return name != nullptr ? name : "TYPE_INVALID";
}

const char* ApiNameFromDataType(TRITONSERVER_DataType dt) {
  switch (dt) {
    case TRITONSERVER_TYPE_BOOL:
      return "BOOL";
    case TRITONSERVER_TYPE_UINT8:
      return "UINT8";
    case TRITONSERVER_TYPE_UINT16:
      return "UINT16";
    case TRITONSERVER_TYPE_UINT32:
      return "UINT32";
    case TRITONSERVER_TYPE_UINT64:
      return "UINT64";
    case TRITONSERVER_TYPE_INT8:
      return "INT8";
    case TRITONSERVER_TYPE_INT16:
      return "INT16";
    case TRITONSERVER_TYPE_INT32:
      return "INT32";
    case TRITONSERVER_TYPE_INT64:
      return "INT64";
    case TRITONSERVER_TYPE_FP16:
      return "FP16";
    case TRITONSERVER_TYPE_FP32:
      return "FP32";
    case TRITONSERVER_TYPE_FP64:
      return "FP64";
    case TRITONSERVER_TYPE_BYTES:
      return "BYTES";
    case TRITONSERVER_TYPE_BF16:
      return "BF16";
    default:
      return "<invalid>";
  }
}

}  // namespace fake
