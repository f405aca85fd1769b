// Character vocabulary: construction, encode/decode with user-facing errors.
#include "data/vocab.hpp"

#include <cstdio>

#include "core/errors.hpp"

namespace liegrad::data {

std::string escape_char(char c) {
  switch (c) {
    case '\n': return "'\\n'";
    case '\t': return "'\\t'";
    case '\r': return "'\\r'";
    case '\0': return "'\\0'";
    case '\'': return "'\\''";
    case '\\': return "'\\\\'";
    default: break;
  }
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "'\\x%02x'", static_cast<unsigned>(u));
  return buf;
}

Vocab::Vocab() { index_.fill(-1); }

Vocab Vocab::from_text(std::string_view text) {
  if (text.empty()) throw ValueError("Vocab::from_text: cannot build a vocabulary from empty text");
  std::array<bool, 256> seen{};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::string symbols;
  for (int b = 0; b < 256; ++b)
    if (seen[static_cast<size_t>(b)]) symbols.push_back(static_cast<char>(b));
  return from_symbols(symbols);
}

Vocab Vocab::from_symbols(std::string_view symbols) {
  if (symbols.empty()) throw ValueError("Vocab::from_symbols: the symbol list is empty");
  Vocab v;
  for (size_t i = 0; i < symbols.size(); ++i) {
    int32_t& slot = v.index_[static_cast<unsigned char>(symbols[i])];
    if (slot >= 0)
      throw ValueError("Vocab::from_symbols: symbol " + escape_char(symbols[i]) + " appears twice (ids " +
                       std::to_string(slot) + " and " + std::to_string(i) + ")");
    slot = static_cast<int32_t>(i);
  }
  v.symbols_ = std::string(symbols);
  return v;
}

std::vector<int32_t> Vocab::encode(std::string_view text) const {
  std::vector<int32_t> ids(text.size());
  int64_t n_unknown = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const int32_t id = index_[static_cast<unsigned char>(text[i])];
    ids[i] = id;
    n_unknown += id < 0;
  }
  if (n_unknown == 0) return ids;

  // Distinct unknown bytes in order of first appearance.
  constexpr size_t kMaxListed = 10;
  std::array<bool, 256> listed{};
  std::string distinct;
  size_t first = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    if (ids[i] >= 0) continue;
    if (first == text.size()) first = i;
    const auto u = static_cast<unsigned char>(text[i]);
    if (!listed[u]) {
      listed[u] = true;
      distinct.push_back(text[i]);
    }
  }
  std::string names;
  for (size_t k = 0; k < distinct.size() && k < kMaxListed; ++k) {
    if (k) names += ", ";
    names += escape_char(distinct[k]);
  }
  if (distinct.size() > kMaxListed) names += ", ... (" + std::to_string(distinct.size() - kMaxListed) + " more)";
  throw ValueError("cannot encode text: " + std::to_string(n_unknown) + " of its " + std::to_string(text.size()) +
                   " characters (" + std::to_string(distinct.size()) + " distinct) are not in the " +
                   std::to_string(size()) + "-symbol vocabulary: " + names + " (first at offset " +
                   std::to_string(first) + ")");
}

std::string Vocab::decode(std::span<const int32_t> ids) const {
  std::string out(ids.size(), '\0');
  for (size_t i = 0; i < ids.size(); ++i) out[i] = symbol(ids[i]);
  return out;
}

int32_t Vocab::id(char c) const {
  const int32_t i = index_[static_cast<unsigned char>(c)];
  if (i < 0) throw ValueError("Vocab::id: " + escape_char(c) + " is not in the vocabulary");
  return i;
}

char Vocab::symbol(int32_t i) const {
  if (i < 0 || i >= size())
    throw ValueError("Vocab: id " + std::to_string(i) + " is outside [0, " + std::to_string(size()) + ")");
  return symbols_[static_cast<size_t>(i)];
}

}  // namespace liegrad::data
