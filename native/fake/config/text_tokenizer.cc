// The tokenizer of the config.pbtxt reader (protobuf text format). Its
// error messages are those of protobuf's own tokenizer.
#include "text_tokenizer.h"

namespace fake {
namespace config {

bool TextTokenizer::Next(Token* tok, std::string* error) {
  SkipSpaceAndComments();
  tok->line = line_;
  tok->column = column_;
  tok->text.clear();
  if (AtEnd()) {
    tok->kind = Token::Kind::kEnd;
    return true;
  }
  const char c = text_[pos_];
  if (IsLetter(c)) {
    tok->kind = Token::Kind::kIdent;
    while (!AtEnd() && (IsLetter(text_[pos_]) || IsDigit(text_[pos_]))) {
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

char TextTokenizer::Advance() {
  const char c = text_[pos_++];
  if (c == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  return c;
}

void TextTokenizer::SkipSpaceAndComments() {
  while (!AtEnd()) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f') {
      Advance();
    } else if (c == '#') {
      while (!AtEnd() && text_[pos_] != '\n') Advance();
    } else {
      break;
    }
  }
}

bool TextTokenizer::Fail(const std::string& what, std::string* error) {
  *error = std::to_string(line_) + ":" + std::to_string(column_) + ": " + what;
  return false;
}

// ---------------------------------------------------------------------------
// Numbers

bool TextTokenizer::ReadNumber(Token* tok, std::string* error) {
  tok->kind = Token::Kind::kInt;
  const bool hex = text_[pos_] == '0' && pos_ + 1 < text_.size() &&
                   (text_[pos_ + 1] == 'x' || text_[pos_ + 1] == 'X');
  if (!(hex ? ReadHexNumber(tok, error) : ReadDecimalNumber(tok, error))) {
    return false;
  }
  if (!AtEnd() && (IsLetter(text_[pos_]) || text_[pos_] == '.')) {
    return Fail("Need space between number and identifier.", error);
  }
  return true;
}

bool TextTokenizer::ReadHexNumber(Token* tok, std::string* error) {
  tok->text.push_back(Advance());
  tok->text.push_back(Advance());
  if (AtEnd() || !IsHexDigit(text_[pos_])) {
    return Fail("\"0x\" must be followed by hex digits.", error);
  }
  while (!AtEnd() && IsHexDigit(text_[pos_])) {
    tok->text.push_back(Advance());
  }
  return true;
}

bool TextTokenizer::ReadDecimalNumber(Token* tok, std::string* error) {
  ReadDigits(tok);
  if (!AtEnd() && text_[pos_] == '.') {
    tok->kind = Token::Kind::kFloat;
    tok->text.push_back(Advance());
    ReadDigits(tok);
  }
  if (!AtEnd() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    tok->kind = Token::Kind::kFloat;
    tok->text.push_back(Advance());
    if (!AtEnd() && (text_[pos_] == '+' || text_[pos_] == '-')) {
      tok->text.push_back(Advance());
    }
    if (AtEnd() || !IsDigit(text_[pos_])) {
      return Fail("\"e\" must be followed by exponent.", error);
    }
    ReadDigits(tok);
  }
  if (!AtEnd() && (text_[pos_] == 'f' || text_[pos_] == 'F')) {
    tok->kind = Token::Kind::kFloat;
    tok->text.push_back(Advance());
  }
  return true;
}

void TextTokenizer::ReadDigits(Token* tok) {
  while (!AtEnd() && IsDigit(text_[pos_])) {
    tok->text.push_back(Advance());
  }
}

// ---------------------------------------------------------------------------
// Strings

bool TextTokenizer::ReadString(Token* tok, std::string* error) {
  tok->kind = Token::Kind::kString;
  const char quote = Advance();
  while (true) {
    if (AtEnd()) return Fail("Unexpected end of string.", error);
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
    if (AtEnd()) return Fail("Unexpected end of string.", error);
    if (!ReadEscape(Advance(), &tok->text, error)) return false;
  }
}

bool TextTokenizer::ReadEscape(char e, std::string* out, std::string* error) {
  switch (e) {
    case 'a':
      out->push_back('\a');
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
    case 'v':
      out->push_back('\v');
      return true;
    case '\\':
    case '\'':
    case '"':
    case '?':
      out->push_back(e);
      return true;
    case 'x':
    case 'X':
      return ReadHexEscape(out, error);
    case 'u':
    case 'U':
      return ReadUnicodeEscape(e, out, error);
    default:
      if (e >= '0' && e <= '7') {
        ReadOctalEscape(e, out);
        return true;
      }
      return Fail(std::string("Invalid escape sequence in string literal."),
                  error);
  }
}

// One or two hex digits, as protobuf reads them.
bool TextTokenizer::ReadHexEscape(std::string* out, std::string* error) {
  if (AtEnd() || !IsHexDigit(text_[pos_])) {
    return Fail("Expected hex digits for escape sequence.", error);
  }
  uint32_t v = 0;
  for (int i = 0; i < 2 && !AtEnd() && IsHexDigit(text_[pos_]); ++i) {
    v = v * 16 + HexValue(Advance());
  }
  out->push_back(static_cast<char>(v));
  return true;
}

// \uXXXX (a high surrogate may be followed by \uXXXX for its low half) or
// \UXXXXXXXX, appended as UTF-8.
bool TextTokenizer::ReadUnicodeEscape(char e, std::string* out,
                                      std::string* error) {
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
  AppendUtf8(cp, out);
  return true;
}

// Up to three octal digits, the first already read.
void TextTokenizer::ReadOctalEscape(char first, std::string* out) {
  uint32_t v = static_cast<uint32_t>(first - '0');
  for (int i = 0; i < 2 && !AtEnd() && text_[pos_] >= '0' && text_[pos_] <= '7';
       ++i) {
    v = v * 8 + static_cast<uint32_t>(Advance() - '0');
  }
  out->push_back(static_cast<char>(v & 0xFF));
}

bool TextTokenizer::ReadHex(int count, uint32_t* out, std::string* error) {
  uint32_t v = 0;
  for (int i = 0; i < count; ++i) {
    if (AtEnd() || !IsHexDigit(text_[pos_])) {
      return Fail("Expected hex digits for escape sequence.", error);
    }
    v = v * 16 + HexValue(Advance());
  }
  *out = v;
  return true;
}

void TextTokenizer::AppendUtf8(uint32_t cp, std::string* out) {
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

}  // namespace config
}  // namespace fake
