// The group-kinds table and the parser of group spellings (see group_kinds.hpp).
// Grammar (whitespace ignored, names case-insensitive):
//     spec   := factor (sep factor)*      sep := "x" | "X" | "×" | "*"
//     factor := kind "(" digits ")"       kind := a name in group_kinds()
#include "groups/group_kinds.hpp"

#include <cctype>

#include "core/errors.hpp"

namespace liegrad::groups {

const std::vector<GroupKind>& group_kinds() {
  static const std::vector<GroupKind> kinds = {
      {"SO", 2, &make_special_orthogonal},  // SO(1) is trivial
      {"O", 2, &make_orthogonal},           // O(1) = {+1, -1}
      {"U", 1, &make_unitary},
      {"SU", 2, &make_special_unitary},     // SU(1) is trivial
      {"T", 1, &make_torus},
  };
  return kinds;
}

const GroupKind* find_group_kind(const std::string& name) {
  std::string upper;
  for (char ch : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (const GroupKind& k : group_kinds())
    if (k.name == upper) return &k;
  return nullptr;
}

namespace {

const char* kAccepted =
    "accepted forms: SO(d), O(d), U(d), SU(d), T(d) with d >= 1, or a product of them joined by 'x', "
    "'\xC3\x97' or '*', e.g. \"SO(8)xSO(8)\" or \"SO(3) x U(2)\"";

[[noreturn]] void fail(const std::string& spec, const std::string& why) {
  throw ValueError("make_group: cannot parse \"" + printable(spec) + "\": " + why + "; " + kAccepted);
}

}  // namespace

std::vector<GroupFactor> parse_group_spelling(const std::string& spec) {
  // Drop whitespace and turn the UTF-8 multiplication sign into 'x'.
  std::string s;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(spec[i]))) continue;
    if (spec.compare(i, 2, "\xC3\x97") == 0) {
      s += 'x';
      ++i;
      continue;
    }
    s += spec[i];
  }
  if (s.empty()) fail(spec, "empty group name");
  std::vector<GroupFactor> factors;
  size_t i = 0;
  while (true) {
    std::string kind;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i])))
      kind += static_cast<char>(std::toupper(static_cast<unsigned char>(s[i++])));
    if (kind.empty()) fail(spec, "expected a group name at position " + std::to_string(i));
    if (i >= s.size() || s[i] != '(') fail(spec, "expected '(' after \"" + kind + "\"");
    ++i;
    std::string digits;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) digits += s[i++];
    if (digits.empty()) fail(spec, "expected a size d inside the parentheses of \"" + kind + "\"");
    if (digits.size() > 6) fail(spec, "size " + digits + " is too large");
    if (i >= s.size() || s[i] != ')') fail(spec, "expected ')' after \"" + kind + "(" + digits + "\"");
    ++i;
    const int64_t d = std::stoll(digits);
    if (d < 1) fail(spec, kind + "(" + std::to_string(d) + ") needs d >= 1");
    const GroupKind* k = find_group_kind(kind);
    if (!k) fail(spec, "unknown group \"" + kind + "\"");
    factors.push_back({k, d});
    if (i == s.size()) break;
    if (s[i] != 'x' && s[i] != 'X' && s[i] != '*')
      fail(spec, "unexpected '" + printable(std::string(1, s[i])) + "' after a group (expected 'x', '\xC3\x97' or '*')");
    ++i;
  }
  return factors;
}

}  // namespace liegrad::groups
