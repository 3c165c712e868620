// The tokenizer of the config.pbtxt reader (protobuf text format), on the
// engine's one lexer (support/lexer.h). Its error messages are those of
// protobuf's own tokenizer.
#include "text_tokenizer.h"

namespace fake {
namespace config {

bool TextTokenizer::Next(Token* tok, std::string* error) {
  SkipSpaceAndComments();
  tok->line = lex_.line();
  tok->column = lex_.column();
  tok->text.clear();
  if (lex_.AtEnd()) {
    tok->kind = Token::Kind::kEnd;
    return true;
  }
  const char c = lex_.Peek();
  if (IsLetter(c)) {
    tok->kind = Token::Kind::kIdent;
    while (!lex_.AtEnd() &&
           (IsLetter(lex_.Peek()) || Lexer::IsDigit(lex_.Peek()))) {
      tok->text.push_back(lex_.Advance());
    }
    return true;
  }
  if (Lexer::IsDigit(c) || (c == '.' && Lexer::IsDigit(lex_.Peek(1)))) {
    return ReadNumber(tok, error);
  }
  if (c == '"' || c == '\'') return ReadString(tok, error);
  tok->kind = Token::Kind::kSymbol;
  tok->text.push_back(lex_.Advance());
  return true;
}

void TextTokenizer::SkipSpaceAndComments() {
  while (!lex_.AtEnd()) {
    const char c = lex_.Peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f') {
      lex_.Advance();
    } else if (c == '#') {
      while (!lex_.AtEnd() && lex_.Peek() != '\n') lex_.Advance();
    } else {
      break;
    }
  }
}

bool TextTokenizer::Fail(const std::string& what, std::string* error) {
  *error = std::to_string(lex_.line()) + ":" + std::to_string(lex_.column()) +
           ": " + what;
  return false;
}

// ---------------------------------------------------------------------------
// Numbers

bool TextTokenizer::ReadNumber(Token* tok, std::string* error) {
  tok->kind = Token::Kind::kInt;
  const bool hex =
      lex_.Peek() == '0' && (lex_.Peek(1) == 'x' || lex_.Peek(1) == 'X');
  if (!(hex ? ReadHexNumber(tok, error) : ReadDecimalNumber(tok, error))) {
    return false;
  }
  if (!lex_.AtEnd() && (IsLetter(lex_.Peek()) || lex_.Peek() == '.')) {
    return Fail("Need space between number and identifier.", error);
  }
  return true;
}

bool TextTokenizer::ReadHexNumber(Token* tok, std::string* error) {
  tok->text.push_back(lex_.Advance());
  tok->text.push_back(lex_.Advance());
  if (lex_.AtEnd() || !Lexer::IsHexDigit(lex_.Peek())) {
    return Fail("\"0x\" must be followed by hex digits.", error);
  }
  while (!lex_.AtEnd() && Lexer::IsHexDigit(lex_.Peek())) {
    tok->text.push_back(lex_.Advance());
  }
  return true;
}

bool TextTokenizer::ReadDecimalNumber(Token* tok, std::string* error) {
  ReadDigits(tok);
  if (!lex_.AtEnd() && lex_.Peek() == '.') {
    tok->kind = Token::Kind::kFloat;
    tok->text.push_back(lex_.Advance());
    ReadDigits(tok);
  }
  if (!lex_.AtEnd() && (lex_.Peek() == 'e' || lex_.Peek() == 'E')) {
    tok->kind = Token::Kind::kFloat;
    tok->text.push_back(lex_.Advance());
    if (!lex_.AtEnd() && (lex_.Peek() == '+' || lex_.Peek() == '-')) {
      tok->text.push_back(lex_.Advance());
    }
    if (lex_.AtEnd() || !Lexer::IsDigit(lex_.Peek())) {
      return Fail("\"e\" must be followed by exponent.", error);
    }
    ReadDigits(tok);
  }
  if (!lex_.AtEnd() && (lex_.Peek() == 'f' || lex_.Peek() == 'F')) {
    tok->kind = Token::Kind::kFloat;
    tok->text.push_back(lex_.Advance());
  }
  return true;
}

void TextTokenizer::ReadDigits(Token* tok) {
  while (!lex_.AtEnd() && Lexer::IsDigit(lex_.Peek())) {
    tok->text.push_back(lex_.Advance());
  }
}

// ---------------------------------------------------------------------------
// Strings

bool TextTokenizer::ReadString(Token* tok, std::string* error) {
  tok->kind = Token::Kind::kString;
  const char quote = lex_.Advance();
  while (true) {
    if (lex_.AtEnd()) return Fail("Unexpected end of string.", error);
    const char c = lex_.Peek();
    if (c == quote) {
      lex_.Advance();
      return true;
    }
    if (c == '\n') {
      return Fail("String literals cannot cross line boundaries.", error);
    }
    if (c != '\\') {
      tok->text.push_back(lex_.Advance());
      continue;
    }
    lex_.Advance();
    if (lex_.AtEnd()) return Fail("Unexpected end of string.", error);
    if (!ReadEscape(lex_.Advance(), &tok->text, error)) return false;
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
  if (lex_.AtEnd() || !Lexer::IsHexDigit(lex_.Peek())) {
    return Fail("Expected hex digits for escape sequence.", error);
  }
  uint32_t v = 0;
  for (int i = 0; i < 2 && !lex_.AtEnd() && Lexer::IsHexDigit(lex_.Peek());
       ++i) {
    v = v * 16 + Lexer::HexValue(lex_.Advance());
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
  if (e == 'u' && cp >= 0xD800 && cp <= 0xDBFF && lex_.LookingAt("\\u")) {
    lex_.Advance();
    lex_.Advance();
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
  Lexer::AppendUtf8(cp, out);
  return true;
}

// Up to three octal digits, the first already read.
void TextTokenizer::ReadOctalEscape(char first, std::string* out) {
  uint32_t v = static_cast<uint32_t>(first - '0');
  for (int i = 0;
       i < 2 && !lex_.AtEnd() && lex_.Peek() >= '0' && lex_.Peek() <= '7';
       ++i) {
    v = v * 8 + static_cast<uint32_t>(lex_.Advance() - '0');
  }
  out->push_back(static_cast<char>(v & 0xFF));
}

bool TextTokenizer::ReadHex(int count, uint32_t* out, std::string* error) {
  if (!lex_.ReadHex(count, out)) {
    return Fail("Expected hex digits for escape sequence.", error);
  }
  return true;
}

}  // namespace config
}  // namespace fake
