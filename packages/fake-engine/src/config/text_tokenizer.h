// Internal to the config.pbtxt reader: the tokens of protobuf text format
// (identifiers, numbers, quoted strings with their escapes decoded, single
// symbols), each with the line and column it starts at, read with the
// engine's one lexer (support/lexer.h).
#ifndef TRITON_NODE_FAKE_CONFIG_TEXT_TOKENIZER_H_
#define TRITON_NODE_FAKE_CONFIG_TEXT_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "../support/lexer.h"

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
  explicit TextTokenizer(const std::string& text) : lex_(text) {}

  // Reads the next token into *tok. False with *error on a lexical error.
  bool Next(Token* tok, std::string* error);

 private:
  static bool IsLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }

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

  Lexer lex_;
};

}  // namespace config
}  // namespace fake

#endif  // TRITON_NODE_FAKE_CONFIG_TEXT_TOKENIZER_H_
