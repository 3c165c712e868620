// Internal to the config.pbtxt reader: the tokens of protobuf text format
// (identifiers, numbers, quoted strings with their escapes decoded, single
// symbols), each with the line and column it starts at.
#ifndef TRITON_NODE_FAKE_CONFIG_TEXT_TOKENIZER_H_
#define TRITON_NODE_FAKE_CONFIG_TEXT_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace fake {
namespace config {

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
  bool Next(Token* tok, std::string* error);

 private:
  static bool IsLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  static bool IsHexDigit(char c) {
    return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
  static uint32_t HexValue(char c) {
    return static_cast<uint32_t>(
        IsDigit(c) ? c - '0' : (c >= 'a' ? c - 'a' + 10 : c - 'A' + 10));
  }
  static void AppendUtf8(uint32_t cp, std::string* out);

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Advance();
  void SkipSpaceAndComments();
  bool Fail(const std::string& what, std::string* error);

  bool ReadNumber(Token* tok, std::string* error);
  // The digits after a leading "0x".
  bool ReadHexNumber(Token* tok, std::string* error);
  // Digits, an optional fraction, exponent and "f" suffix.
  bool ReadDecimalNumber(Token* tok, std::string* error);
  void ReadDigits(Token* tok);

  bool ReadString(Token* tok, std::string* error);
  // The escape after a backslash, `e` already read; appends what it means.
  bool ReadEscape(char e, std::string* out, std::string* error);
  bool ReadHexEscape(std::string* out, std::string* error);
  bool ReadUnicodeEscape(char e, std::string* out, std::string* error);
  void ReadOctalEscape(char first, std::string* out);
  bool ReadHex(int count, uint32_t* out, std::string* error);

  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace config
}  // namespace fake

#endif  // TRITON_NODE_FAKE_CONFIG_TEXT_TOKENIZER_H_
