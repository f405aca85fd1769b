// make_group: builds a Group from its spelling in a config or on a command line.
// Grammar (whitespace ignored, names case-insensitive):
//     spec   := factor (sep factor)*      sep := "x" | "X" | "×" | "*"
//     factor := ("SO" | "O" | "U" | "SU" | "T") "(" digits ")"
#include <cctype>

#include "groups/group_impl.hpp"

namespace liegrad::groups {

namespace {

const char* kAccepted =
    "accepted forms: SO(d), O(d), U(d), SU(d), T(d) with d >= 1, or a product of them joined by 'x', "
    "'\xC3\x97' or '*', e.g. \"SO(8)xSO(8)\" or \"SO(3) x U(2)\"";

[[noreturn]] void fail(const std::string& spec, const std::string& why) {
  throw ValueError("make_group: cannot parse \"" + printable(spec) + "\": " + why + "; " + kAccepted);
}

std::unique_ptr<Group> make_factor(const std::string& spec, const std::string& kind, int64_t d) {
  if (d < 1) fail(spec, kind + "(" + std::to_string(d) + ") needs d >= 1");
  if (kind == "SO") return make_special_orthogonal(d);
  if (kind == "O") return make_orthogonal(d);
  if (kind == "U") return make_unitary(d);
  if (kind == "SU") return make_special_unitary(d);
  if (kind == "T") return make_torus(d);
  fail(spec, "unknown group \"" + kind + "\"");
}

}  // namespace

std::unique_ptr<Group> make_group(const std::string& spec) {
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
  std::vector<std::unique_ptr<Group>> factors;
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
    factors.push_back(make_factor(spec, kind, std::stoll(digits)));
    if (i == s.size()) break;
    if (s[i] != 'x' && s[i] != 'X' && s[i] != '*')
      fail(spec, "unexpected '" + printable(std::string(1, s[i])) + "' after a group (expected 'x', '\xC3\x97' or '*')");
    ++i;
  }
  return make_product(std::move(factors));
}

}  // namespace liegrad::groups
