// A character vocabulary: every symbol is one byte, and a symbol's id is its
// position in the symbol string. Built from text (the sorted distinct bytes, as
// nanoGPT's shakespeare_char/prepare.py and TFDS do for Tiny Shakespeare) or from
// an explicit list (a checkpoint's saved vocabulary). The vocabulary's portable
// form is the string of its symbols in id order (`to_string` / `from_string`),
// which a checkpoint can store as a JSON string.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace liegrad::data {

// A byte written for a message: 'a', '\n', '\t', '\'', '\\', '\xc3'.
std::string escape_char(char c);

class Vocab {
 public:
  // An empty vocabulary (size 0) that encodes nothing.
  Vocab();

  // The sorted distinct bytes of `text`; throws ValueError when text is empty.
  static Vocab from_text(std::string_view text);
  // Symbols in id order; throws ValueError when empty or when a byte repeats.
  static Vocab from_symbols(std::string_view symbols);

  // ids (n) of the n bytes of text. Throws ValueError naming how many characters
  // are missing from the vocabulary and which (escaped, at most 10 listed).
  std::vector<int32_t> encode(std::string_view text) const;
  // The text of ids (n); throws ValueError for an id outside [0, size()).
  std::string decode(std::span<const int32_t> ids) const;

  int64_t size() const { return static_cast<int64_t>(symbols_.size()); }
  // The symbols in id order.
  const std::string& symbols() const { return symbols_; }
  bool contains(char c) const { return index_[static_cast<unsigned char>(c)] >= 0; }
  // The id of c; throws ValueError when c is not in the vocabulary.
  int32_t id(char c) const;
  // The symbol with id i; throws ValueError when i is outside [0, size()).
  char symbol(int32_t i) const;

  // Portable form for checkpoints: the symbols in id order.
  std::string to_string() const { return symbols_; }
  static Vocab from_string(std::string_view s) { return from_symbols(s); }

  bool operator==(const Vocab& o) const { return symbols_ == o.symbols_; }

 private:
  std::string symbols_;
  std::array<int32_t, 256> index_;  // byte -> id, or -1 when absent
};

}  // namespace liegrad::data
