// The one lexer under the fake's two text readers, the JSON parser
// (json.cc) and the config.pbtxt tokenizer (config/text_tokenizer.cc): a
// cursor over the text, one byte at a time, that knows the line and column
// it stands at (both from 1, a column per byte, as both readers report
// them), and the pieces both readers decode alike: digits, hex escapes and
// code points written as UTF-8. What makes a token is each reader's own.
#ifndef TRITON_NODE_FAKE_SUPPORT_LEXER_H_
#define TRITON_NODE_FAKE_SUPPORT_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace fake {

class Lexer {
 public:
  // `text` must outlive the lexer.
  explicit Lexer(const std::string& text) : text_(text) {}

  bool AtEnd() const { return pos_ >= text_.size(); }
  // The byte `ahead` places on; '\0' past the end.
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  // Moves one byte on (not at the end) and returns it.
  char Advance();
  // Whether the text goes on with `s` here; nothing is consumed.
  bool LookingAt(const char* s) const;
  // Moves past `s` when the text goes on with it.
  bool Consume(const char* s);
  // Reads exactly `count` hex digits as one value; false at the first byte
  // that is not one (the lexer then stands on it).
  bool ReadHex(int count, uint32_t* out);

  size_t pos() const { return pos_; }
  size_t left() const { return text_.size() - pos_; }
  // Moves back to `pos`, so that an error is reported where something
  // began (its line and column are counted again).
  void Rewind(size_t pos);
  int line() const { return line_; }
  int column() const { return column_; }

  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }
  static bool IsHexDigit(char c) {
    return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
  static uint32_t HexValue(char c) {
    return static_cast<uint32_t>(
        IsDigit(c) ? c - '0' : (c >= 'a' ? c - 'a' + 10 : c - 'A' + 10));
  }
  // Appends code point `cp` (at most 0x10FFFF) as UTF-8.
  static void AppendUtf8(uint32_t cp, std::string* out);

 private:
  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace fake

#endif  // TRITON_NODE_FAKE_SUPPORT_LEXER_H_
