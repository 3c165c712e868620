// The fake's one lexer (lexer.h).
#include "lexer.h"

#include <cstring>

namespace fake {

char Lexer::Advance() {
  const char c = text_[pos_++];
  if (c == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  return c;
}

bool Lexer::LookingAt(const char* s) const {
  return text_.compare(pos_, std::strlen(s), s) == 0;
}

bool Lexer::Consume(const char* s) {
  if (!LookingAt(s)) return false;
  for (size_t n = std::strlen(s); n > 0; --n) Advance();
  return true;
}

bool Lexer::ReadHex(int count, uint32_t* out) {
  uint32_t v = 0;
  for (int i = 0; i < count; ++i) {
    if (AtEnd() || !IsHexDigit(text_[pos_])) return false;
    v = v * 16 + HexValue(Advance());
  }
  *out = v;
  return true;
}

void Lexer::Rewind(size_t pos) {
  pos_ = 0;
  line_ = 1;
  column_ = 1;
  while (pos_ < pos && !AtEnd()) Advance();
}

void Lexer::AppendUtf8(uint32_t cp, std::string* out) {
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

}  // namespace fake
