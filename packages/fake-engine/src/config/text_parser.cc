// The config.pbtxt reader: protobuf text format (`field: value`,
// `message { ... }`, `[ ... ]` lists, repeated fields, # comments, quoted
// strings, enum identifiers) into the intermediate form of schema.h,
// then into a ModelConfig. Error messages are those of protobuf's text
// parser, plus the dotted path of the field being read.
#include <cstdlib>
#include <set>
#include <utility>

#include "intermediate.h"
#include "schema.h"
#include "text_tokenizer.h"
#include "model_config.h"

namespace fake {
namespace config {
namespace {

// Reads protobuf text into the intermediate Json form, one token of
// lookahead. Every error names line:column of the offending token.
class TextParser {
 public:
  TextParser(const std::string& text, std::vector<std::string>* ignored)
      : tokenizer_(text), ignored_(ignored) {}

  bool Parse(Json* out, std::string* error) {
    if (!Read()) return Finish(error);
    *out = Json::Object();
    if (!ParseFields(ModelConfigDesc(), out, "", nullptr, nullptr, 0)) {
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

  // A `[ ... ]` list, the current token being its "[": `element` reads
  // one element at a time (false on error).
  template <typename Element>
  bool ParseList(Element element) {
    const Token list_open = tok_;
    if (!Read()) return false;
    if (IsSymbol("]")) return Read();
    while (true) {
      if (!element()) return false;
      if (IsSymbol("]")) return Read();
      if (tok_.kind == Token::Kind::kEnd) return Unclosed("]", &list_open);
      if (!Consume(",")) return false;
    }
  }

  bool FailNotRepeated(const FieldDesc& field) {
    return Fail(std::string("Field \"") + field.name +
                "\" is not a repeated field; a list is not allowed.");
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
      const FieldDesc* field = desc.Find(tok_.text);
      if (field == nullptr) {
        return Fail(std::string("Message type \"") + desc.name +
                    "\" has no field named \"" + tok_.text + "\".");
      }
      const std::string field_path =
          path.empty() ? field->name : path + "." + field->name;
      context_ = field_path;
      if (!CheckFirstMention(desc, *field, seen)) return false;
      seen.insert(field->name);
      if (!Read()) return false;
      const bool is_message = field->type == FieldType::kMessage ||
                              field->type == FieldType::kSkippedMessage;
      if (!(is_message ? ParseMessageField(*field, obj, field_path, depth)
                       : ParseScalarField(*field, obj))) {
        return false;
      }
      // Optional separator after a field.
      if (IsSymbol(";") || IsSymbol(",")) {
        if (!Read()) return false;
      }
    }
  }

  // A non-repeated field may be given once, and one member of a oneof at
  // most. The current token is the field's name.
  bool CheckFirstMention(const MessageDesc& desc, const FieldDesc& field,
                         const std::set<std::string>& seen) {
    if (field.repeated) return true;
    if (seen.count(field.name) != 0) {
      return Fail(std::string("Non-repeated field \"") + field.name +
                  "\" is specified multiple times.");
    }
    if (field.oneof == 0) return true;
    for (const auto& other : desc.fields) {
      if (other.oneof == field.oneof && seen.count(other.name) != 0) {
        return Fail(std::string("Field \"") + field.name +
                    "\" is specified along with field \"" + other.name +
                    "\", another member of oneof \"" + desc.oneof_name + "\".");
      }
    }
    return true;
  }

  // The value(s) of a message field, after its name: an optional ":", then
  // one message or a `[ ... ]` list of them.
  bool ParseMessageField(const FieldDesc& field, Json* obj,
                         const std::string& field_path, int depth) {
    if (!TryConsume(":")) return false;
    auto one = [&]() {
      if (!ParseMessageValue(field, obj, field_path, depth)) return false;
      context_ = field_path;
      return true;
    };
    if (IsSymbol("[")) {
      if (!field.repeated) return FailNotRepeated(field);
      if (!ParseList(one)) return false;
    } else if (!one()) {
      return false;
    }
    if (field.type == FieldType::kMessage && field.repeated && !field.is_map &&
        obj->find(field.name) == nullptr) {
      obj->set(field.name, Json::Array());  // `input []`
    }
    return true;
  }

  // The value(s) of a scalar field, after its name: ":", then one value or
  // a `[ ... ]` list of them.
  bool ParseScalarField(const FieldDesc& field, Json* obj) {
    if (!IsSymbol(":")) {
      return Fail(std::string("Expected \":\", found \"") + Describe(tok_) +
                  "\".");
    }
    if (!Read()) return false;
    if (IsSymbol("[")) {
      if (!field.repeated) return FailNotRepeated(field);
      Json* list = obj->find(field.name);
      if (list == nullptr) list = &obj->set(field.name, Json::Array());
      return ParseList([&]() {
        Json v;
        if (!ParseScalar(field, &v)) return false;
        list->push(std::move(v));
        return true;
      });
    }
    Json v;
    if (!ParseScalar(field, &v)) return false;
    if (field.repeated) {
      Json* list = obj->find(field.name);
      if (list == nullptr) list = &obj->set(field.name, Json::Array());
      list->push(std::move(v));
    } else {
      obj->set(field.name, std::move(v));
    }
    return true;
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
      NoteIgnoredField(path, ignored_);
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
      StoreMapEntry(field, value, obj);
    } else if (field.repeated) {
      Json* list = obj->find(field.name);
      if (list == nullptr) list = &obj->set(field.name, Json::Array());
      list->push(std::move(value));
    } else {
      obj->set(field.name, std::move(value));
    }
    return true;
  }

  // A map entry `{ key: ... value: ... }` becomes one member of the map's
  // object; a missing key or value takes its type's default.
  static void StoreMapEntry(const FieldDesc& field, const Json& entry,
                            Json* obj) {
    Json* map = obj->find(field.name);
    if (map == nullptr) map = &obj->set(field.name, Json::Object());
    std::string key;
    if (const Json* k = entry.find("key")) {
      key = k->is_string()                   ? k->as_string()
            : k->type() == Json::Type::kUint ? std::to_string(k->as_uint())
                                             : std::to_string(k->as_int());
    } else if (field.message->fields[0].type != FieldType::kString) {
      key = "0";
    }
    const Json* v = entry.find("value");
    map->set(key, v != nullptr ? *v
                  : field.message->fields[1].type == FieldType::kMessage
                      ? Json::Object()
                      : Json::Str(""));
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
        if (!ParseList([&]() { return SkipValue(true, depth); })) {
          return false;
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
    switch (f.type) {
      case FieldType::kString:
        return ParseString(out);
      case FieldType::kBool:
        return ParseBool(f, out);
      case FieldType::kEnum:
        return ParseEnum(f, out);
      case FieldType::kFloat:
        return ParseFloat(out);
      default:
        return ParseInteger(f, out);
    }
  }

  bool ParseString(Json* out) {
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

  bool ParseBool(const FieldDesc& f, Json* out) {
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
      return Fail(std::string("Invalid value for boolean field \"") + f.name +
                  "\". Value: \"" + Describe(tok_) + "\".");
    }
    return Read();
  }

  // An enum value by name, or by number.
  bool ParseEnum(const FieldDesc& f, Json* out) {
    const Token start = tok_;
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
                               std::string(negative ? "-" : "") + tok_.text +
                               "\" for field \"" + f.name + "\".");
    }
    *out = Json::Str(name);
    return Read();
  }

  // A float: an integer or a decimal number, optionally negative (an 'f'
  // suffix, as protobuf's text format allows, is the tokenizer's).
  bool ParseFloat(Json* out) {
    bool negative = false;
    if (IsSymbol("-")) {
      negative = true;
      if (!Read()) return false;
    }
    if (tok_.kind != Token::Kind::kInt && tok_.kind != Token::Kind::kFloat) {
      return Fail("Expected double, got: " + Describe(tok_));
    }
    const double v = std::strtod(tok_.text.c_str(), nullptr);
    *out = Json::Double(negative ? -v : v);
    return Read();
  }

  bool ParseInteger(const FieldDesc& f, Json* out) {
    const Token start = tok_;
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

  TextTokenizer tokenizer_;
  Token tok_;
  std::string error_;
  std::string context_;  // dotted path of the field being read
  std::vector<std::string>* ignored_;
};

}  // namespace
}  // namespace config

bool ParseModelConfigText(const std::string& text, ModelConfig* out,
                          std::string* error) {
  ModelConfig cfg;
  Json intermediate;
  std::string message;
  config::TextParser parser(text, &cfg.ignored_fields);
  if (!parser.Parse(&intermediate, &message) ||
      !config::FromIntermediate(intermediate, &cfg, &message)) {
    if (error != nullptr) *error = message;
    return false;
  }
  *out = std::move(cfg);
  return true;
}

}  // namespace fake
