// JSON value, strict parser (on the engine's one lexer, lexer.h) and
// compact writer for the fake engine. The
// writer follows Triton's JSON output byte for byte (compact, keys in
// insertion order, the same string escapes and double formatting), because
// callers compare the documents the fake returns with real Triton's.
#include "json.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "lexer.h"

namespace fake {

Json Json::Bool(bool v) {
  Json j;
  j.type_ = Type::kBool;
  j.bool_ = v;
  return j;
}

Json Json::Int(int64_t v) {
  Json j;
  j.type_ = Type::kInt;
  j.int_ = v;
  return j;
}

Json Json::Uint(uint64_t v) {
  Json j;
  j.type_ = Type::kUint;
  j.uint_ = v;
  return j;
}

Json Json::Double(double v) {
  Json j;
  j.type_ = Type::kDouble;
  j.double_ = v;
  return j;
}

Json Json::Str(std::string v) {
  Json j;
  j.type_ = Type::kString;
  j.str_ = std::move(v);
  return j;
}

Json Json::Array() {
  Json j;
  j.type_ = Type::kArray;
  return j;
}

Json Json::Object() {
  Json j;
  j.type_ = Type::kObject;
  return j;
}

bool Json::is_number() const {
  return type_ == Type::kInt || type_ == Type::kUint || type_ == Type::kDouble;
}

bool Json::is_integral() const {
  if (type_ == Type::kInt || type_ == Type::kUint) return true;
  return type_ == Type::kDouble && std::isfinite(double_) &&
         std::floor(double_) == double_;
}

int64_t Json::as_int() const {
  switch (type_) {
    case Type::kInt:
      return int_;
    case Type::kUint:
      return uint_ > static_cast<uint64_t>(INT64_MAX)
                 ? INT64_MAX
                 : static_cast<int64_t>(uint_);
    case Type::kDouble:
      // Saturate instead of invoking undefined behaviour on out-of-range
      // conversions; callers that care check is_integral() and the range.
      if (!(double_ == double_)) return 0;
      if (double_ >= 9223372036854775807.0) return INT64_MAX;
      if (double_ <= -9223372036854775808.0) return INT64_MIN;
      return static_cast<int64_t>(double_);
    case Type::kBool:
      return bool_ ? 1 : 0;
    default:
      return 0;
  }
}

uint64_t Json::as_uint() const {
  switch (type_) {
    case Type::kInt:
      return int_ < 0 ? 0 : static_cast<uint64_t>(int_);
    case Type::kUint:
      return uint_;
    case Type::kDouble:
      if (!(double_ > 0)) return 0;
      if (double_ >= 18446744073709551615.0) return UINT64_MAX;
      return static_cast<uint64_t>(double_);
    case Type::kBool:
      return bool_ ? 1 : 0;
    default:
      return 0;
  }
}

double Json::as_double() const {
  switch (type_) {
    case Type::kInt:
      return static_cast<double>(int_);
    case Type::kUint:
      return static_cast<double>(uint_);
    case Type::kDouble:
      return double_;
    case Type::kBool:
      return bool_ ? 1.0 : 0.0;
    default:
      return 0.0;
  }
}

Json& Json::push(Json v) {
  if (type_ != Type::kArray) {
    // Pushing onto a non-array turns it into one; a builder misuse would
    // otherwise silently drop the element.
    *this = Array();
  }
  items_.emplace_back(std::string(), std::move(v));
  return items_.back().second;
}

size_t Json::size() const {
  return (type_ == Type::kArray || type_ == Type::kObject) ? items_.size() : 0;
}

Json& Json::set(const std::string& key, Json v) {
  if (type_ != Type::kObject) *this = Object();
  for (auto& item : items_) {
    if (item.first == key) {
      item.second = std::move(v);
      return item.second;
    }
  }
  items_.emplace_back(key, std::move(v));
  return items_.back().second;
}

const Json* Json::find(const std::string& key) const {
  if (type_ != Type::kObject) return nullptr;
  for (const auto& item : items_) {
    if (item.first == key) return &item.second;
  }
  return nullptr;
}

Json* Json::find(const std::string& key) {
  if (type_ != Type::kObject) return nullptr;
  for (auto& item : items_) {
    if (item.first == key) return &item.second;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Writer

void JsonEscape(const std::string& s, std::string* out) {
  static const char kHex[] = "0123456789ABCDEF";
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else {
          // Bytes >= 0x80 pass through: strings are UTF-8 already.
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

namespace {

// The shortest decimal digits that read back as exactly v (> 0, finite),
// with v = d.ddd * 10^exp10. Locale-independent where <charconv> supports
// doubles: the engine runs inside processes that may call setlocale().
void ShortestDigits(double v, std::string* digits, int* exp10) {
  char buf[64];
  const char* end = buf;
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific)
            .ptr;
#else
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  end = buf + std::strlen(buf);
#endif
  // buf is "d.ddde[+-]xx" (the decimal point may be locale-specific).
  const char* p = buf;
  for (; p < end && *p != 'e'; ++p) {
    if (*p >= '0' && *p <= '9') digits->push_back(*p);
  }
  *exp10 = 0;
  if (p < end) {
    ++p;
    bool negative = false;
    if (*p == '-' || *p == '+') negative = (*p++ == '-');
    int e = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) e = e * 10 + (*p - '0');
    *exp10 = negative ? -e : e;
  }
}

void AppendExponent(int e, std::string* out) {
  if (e < 0) {
    out->push_back('-');
    e = -e;
  }
  out->append(std::to_string(e));
}

}  // namespace

void JsonFormatDouble(double v, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  if (v == 0) {
    out->append(std::signbit(v) ? "-0.0" : "0.0");
    return;
  }
  if (v < 0) {
    out->push_back('-');
    v = -v;
  }
  std::string digits;
  int exp10 = 0;
  ShortestDigits(v, &digits, &exp10);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int length = static_cast<int>(digits.size());
  // value = digits * 10^k; 10^(kk-1) <= value < 10^kk.
  const int kk = exp10 + 1;
  const int k = kk - length;
  if (k >= 0 && kk <= 21) {
    out->append(digits);
    out->append(static_cast<size_t>(k), '0');
    out->append(".0");
  } else if (kk > 0 && kk <= 21) {
    out->append(digits, 0, static_cast<size_t>(kk));
    out->push_back('.');
    out->append(digits, static_cast<size_t>(kk), std::string::npos);
  } else if (kk > -6 && kk <= 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-kk), '0');
    out->append(digits);
  } else if (length == 1) {
    out->append(digits);
    out->push_back('e');
    AppendExponent(kk - 1, out);
  } else {
    out->push_back(digits[0]);
    out->push_back('.');
    out->append(digits, 1, std::string::npos);
    out->push_back('e');
    AppendExponent(kk - 1, out);
  }
}

void Json::dump_to(std::string* out) const {
  switch (type_) {
    case Type::kNull:
      out->append("null");
      break;
    case Type::kBool:
      out->append(bool_ ? "true" : "false");
      break;
    case Type::kInt:
      out->append(std::to_string(int_));
      break;
    case Type::kUint:
      out->append(std::to_string(uint_));
      break;
    case Type::kDouble:
      JsonFormatDouble(double_, out);
      break;
    case Type::kString:
      JsonEscape(str_, out);
      break;
    case Type::kArray: {
      out->push_back('[');
      bool first = true;
      for (const auto& item : items_) {
        if (!first) out->push_back(',');
        first = false;
        item.second.dump_to(out);
      }
      out->push_back(']');
      break;
    }
    case Type::kObject: {
      out->push_back('{');
      bool first = true;
      for (const auto& item : items_) {
        if (!first) out->push_back(',');
        first = false;
        JsonEscape(item.first, out);
        out->push_back(':');
        item.second.dump_to(out);
      }
      out->push_back('}');
      break;
    }
  }
}

std::string Json::dump() const {
  std::string out;
  dump_to(&out);
  return out;
}

// ---------------------------------------------------------------------------
// Parser

namespace {

// Roughly log10 of a decimal number token: digits before the point (without
// leading zeros) plus the exponent. Only its sign matters.
long DecimalMagnitude(const std::string& token) {
  long int_digits = 0;
  size_t i = 0;
  if (i < token.size() && token[i] == '-') ++i;
  while (i < token.size() && token[i] == '0') ++i;
  while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
    ++int_digits;
    ++i;
  }
  long exponent = 0;
  const size_t e = token.find_first_of("eE");
  if (e != std::string::npos) {
    size_t j = e + 1;
    bool negative = false;
    if (j < token.size() && (token[j] == '+' || token[j] == '-')) {
      negative = token[j] == '-';
      ++j;
    }
    for (; j < token.size(); ++j) {
      if (exponent < 100000) exponent = exponent * 10 + (token[j] - '0');
    }
    if (negative) exponent = -exponent;
  }
  return int_digits + exponent;
}

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : text_(text), lex_(text) {}

  bool ParseDocument(Json* out, std::string* error) {
    SkipWhitespace();
    if (!ParseValue(out, 0)) {
      *error = error_;
      return false;
    }
    SkipWhitespace();
    if (!lex_.AtEnd()) {
      Fail("unexpected text after the JSON value");
      *error = error_;
      return false;
    }
    return true;
  }

 private:
  bool Fail(const std::string& what) {
    if (!error_.empty()) return false;  // keep the first (innermost) error
    error_ = "invalid JSON at line " + std::to_string(lex_.line()) +
             " column " + std::to_string(lex_.column()) + ": " + what;
    return false;
  }

  void SkipWhitespace() {
    while (!lex_.AtEnd()) {
      const char c = lex_.Peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        lex_.Advance();
      } else {
        break;
      }
    }
  }

  bool ParseValue(Json* out, int depth) {
    if (depth > Json::kMaxDepth) return Fail("nesting too deep");
    if (lex_.AtEnd()) return Fail("unexpected end of input, expected a value");
    const char c = lex_.Peek();
    switch (c) {
      case '{':
        return ParseObject(out, depth);
      case '[':
        return ParseArray(out, depth);
      case '"': {
        std::string s;
        if (!ParseString(&s)) return false;
        *out = Json::Str(std::move(s));
        return true;
      }
      case 't':
        if (lex_.Consume("true")) {
          *out = Json::Bool(true);
          return true;
        }
        break;
      case 'f':
        if (lex_.Consume("false")) {
          *out = Json::Bool(false);
          return true;
        }
        break;
      case 'n':
        if (lex_.Consume("null")) {
          *out = Json();
          return true;
        }
        break;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
    }
    return Fail(std::string("unexpected character '") + c +
                "', expected a value");
  }

  bool ParseObject(Json* out, int depth) {
    lex_.Advance();  // '{'
    *out = Json::Object();
    SkipWhitespace();
    if (lex_.Peek() == '}') {
      lex_.Advance();
      return true;
    }
    while (true) {
      SkipWhitespace();
      if (lex_.Peek() != '"') return Fail("expected a string key");
      std::string key;
      if (!ParseString(&key)) return false;
      SkipWhitespace();
      if (lex_.Peek() != ':') return Fail("expected ':' after an object key");
      lex_.Advance();
      SkipWhitespace();
      Json value;
      if (!ParseValue(&value, depth + 1)) return false;
      out->set(key, std::move(value));
      SkipWhitespace();
      if (lex_.Peek() == ',') {
        lex_.Advance();
        continue;
      }
      if (lex_.Peek() == '}') {
        lex_.Advance();
        return true;
      }
      return Fail("expected ',' or '}' in an object");
    }
  }

  bool ParseArray(Json* out, int depth) {
    lex_.Advance();  // '['
    *out = Json::Array();
    SkipWhitespace();
    if (lex_.Peek() == ']') {
      lex_.Advance();
      return true;
    }
    while (true) {
      SkipWhitespace();
      Json value;
      if (!ParseValue(&value, depth + 1)) return false;
      out->push(std::move(value));
      SkipWhitespace();
      if (lex_.Peek() == ',') {
        lex_.Advance();
        continue;
      }
      if (lex_.Peek() == ']') {
        lex_.Advance();
        return true;
      }
      return Fail("expected ',' or ']' in an array");
    }
  }

  bool ParseHex4(uint32_t* v) {
    if (lex_.left() < 4) return Fail("truncated \\u escape");
    if (!lex_.ReadHex(4, v)) return Fail("invalid hex digit in \\u escape");
    return true;
  }

  bool ParseString(std::string* out) {
    lex_.Advance();  // opening quote
    while (true) {
      if (lex_.AtEnd()) return Fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(lex_.Peek());
      if (c == '"') {
        lex_.Advance();
        return true;
      }
      if (c < 0x20) return Fail("control character in a string");
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        lex_.Advance();
        continue;
      }
      lex_.Advance();
      if (lex_.AtEnd()) return Fail("unterminated string");
      if (!ParseEscape(lex_.Advance(), out)) return false;
    }
  }

  // The escape after a backslash, `e` already consumed.
  bool ParseEscape(char e, std::string* out) {
    switch (e) {
      case '"':
        out->push_back('"');
        return true;
      case '\\':
        out->push_back('\\');
        return true;
      case '/':
        out->push_back('/');
        return true;
      case 'b':
        out->push_back('\b');
        return true;
      case 'f':
        out->push_back('\f');
        return true;
      case 'n':
        out->push_back('\n');
        return true;
      case 'r':
        out->push_back('\r');
        return true;
      case 't':
        out->push_back('\t');
        return true;
      case 'u':
        return ParseUnicodeEscape(out);
      default:
        lex_.Rewind(lex_.pos() - 1);
        return Fail(std::string("invalid escape '\\") + e + "'");
    }
  }

  // \uXXXX, a high surrogate followed by \uXXXX for its low half.
  bool ParseUnicodeEscape(std::string* out) {
    uint32_t cp = 0;
    if (!ParseHex4(&cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return Fail("lone low surrogate in \\u escape");
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (!lex_.LookingAt("\\u")) {
        return Fail("high surrogate not followed by a low surrogate");
      }
      lex_.Advance();
      lex_.Advance();
      uint32_t low = 0;
      if (!ParseHex4(&low)) return false;
      if (low < 0xDC00 || low > 0xDFFF) {
        return Fail("high surrogate not followed by a low surrogate");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    Lexer::AppendUtf8(cp, out);
    return true;
  }

  bool IsDigitAhead() const { return Lexer::IsDigit(lex_.Peek()); }

  bool ParseNumber(Json* out) {
    const size_t start = lex_.pos();
    bool negative = false;
    bool is_float = false;
    if (!ScanNumber(&negative, &is_float)) return false;
    const std::string token = text_.substr(start, lex_.pos() - start);
    // Out of 64-bit range, an integer is kept as a double like other JSON
    // readers do.
    if (!is_float && IntegerValue(token, negative, out)) return true;
    return DoubleValue(token, negative, start, out);
  }

  // Moves past a number's JSON syntax: sign, integer part (no leading
  // zeros), fraction, exponent.
  bool ScanNumber(bool* negative, bool* is_float) {
    if (lex_.Peek() == '-') {
      *negative = true;
      lex_.Advance();
    }
    if (lex_.Peek() == '0') {
      lex_.Advance();
      if (IsDigitAhead()) {
        return Fail("leading zeros are not allowed in numbers");
      }
    } else if (lex_.Peek() >= '1' && lex_.Peek() <= '9') {
      while (IsDigitAhead()) lex_.Advance();
    } else {
      return Fail("expected a digit");
    }
    if (lex_.Peek() == '.') {
      *is_float = true;
      lex_.Advance();
      if (!IsDigitAhead()) {
        return Fail("expected a digit after the decimal point");
      }
      while (IsDigitAhead()) lex_.Advance();
    }
    if (lex_.Peek() == 'e' || lex_.Peek() == 'E') {
      *is_float = true;
      lex_.Advance();
      if (lex_.Peek() == '+' || lex_.Peek() == '-') lex_.Advance();
      if (!IsDigitAhead()) {
        return Fail("expected a digit in the exponent");
      }
      while (IsDigitAhead()) lex_.Advance();
    }
    return true;
  }

  // An integer token as kInt (kUint above INT64_MAX); false when it does
  // not fit 64 bits.
  static bool IntegerValue(const std::string& token, bool negative, Json* out) {
    errno = 0;
    if (negative) {
      const long long v = std::strtoll(token.c_str(), nullptr, 10);
      if (errno != 0) return false;
      *out = Json::Int(static_cast<int64_t>(v));
      return true;
    }
    const unsigned long long v = std::strtoull(token.c_str(), nullptr, 10);
    if (errno != 0) return false;
    if (v <= static_cast<unsigned long long>(INT64_MAX)) {
      *out = Json::Int(static_cast<int64_t>(v));
    } else {
      *out = Json::Uint(static_cast<uint64_t>(v));
    }
    return true;
  }

  // A number token as a double; an overflow is an error (reported at the
  // number's start), an underflow is zero.
  bool DoubleValue(const std::string& token, bool negative, size_t start,
                   Json* out) {
    double d = 0;
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
    const auto result =
        std::from_chars(token.data(), token.data() + token.size(), d);
    bool overflow = false;
    if (result.ec == std::errc::result_out_of_range) {
      // d is left untouched: tell overflow from underflow by magnitude.
      overflow = DecimalMagnitude(token) > 0;
      d = negative ? -0.0 : 0.0;
    }
#else
    errno = 0;
    d = std::strtod(token.c_str(), nullptr);
    const bool overflow = errno == ERANGE && std::isinf(d);
#endif
    if (overflow) {
      lex_.Rewind(start);
      return Fail("number out of range: " + token);
    }
    *out = Json::Double(d);
    return true;
  }

  const std::string& text_;
  Lexer lex_;
  std::string error_;
};

}  // namespace

bool Json::Parse(const std::string& text, Json* out, std::string* error) {
  JsonParser parser(text);
  Json value;
  std::string message;
  if (!parser.ParseDocument(&value, &message)) {
    if (error != nullptr) *error = message;
    return false;
  }
  *out = std::move(value);
  return true;
}

}  // namespace fake
