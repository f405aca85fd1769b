// Batcher resume states as text (see batcher_state.hpp).
#include "data/batcher_state.hpp"

#include <sstream>

#include "core/errors.hpp"

namespace liegrad::data {

std::string write_batcher_state(const std::string& tag, const std::vector<int64_t>& shape, int64_t drawn,
                                const Rng& rng) {
  std::ostringstream os;
  os << tag;
  for (const int64_t x : shape) os << ' ' << x;
  os << ' ' << drawn << ' ' << rng.state();
  return os.str();
}

void read_batcher_state(const std::string& text, const std::string& tag, const std::vector<int64_t>& shape,
                        const std::string& who, DescribeShape describe, int64_t& drawn, Rng& rng) {
  std::istringstream is(text);
  std::string saved_tag;
  std::vector<int64_t> saved(shape.size());
  int64_t saved_drawn = 0;
  is >> saved_tag;
  // Another version of the same family ("words-v5" read as "words-v3"): a batcher built
  // with another schedule, which its numbers alone would not say.
  const auto family = [](const std::string& t) { return t.substr(0, t.rfind("-v")); };
  if (saved_tag != tag && saved_tag.rfind("-v") != std::string::npos && family(saved_tag) == family(tag))
    throw ValueError(who + "::set_state: the state was saved as " + saved_tag + " by a batcher with another schedule, "
                     "but this batcher has " + describe(shape) + " (" + tag + ")");
  for (auto& x : saved) is >> x;
  if (!(is >> saved_drawn) || saved_tag != tag || saved_drawn < 0)
    throw ValueError(who + "::set_state: malformed state '" + text + "'");
  if (saved != shape)
    throw ValueError(who + "::set_state: the state was saved for " + describe(saved) + " but this batcher has " +
                     describe(shape));
  std::string rest;
  std::getline(is >> std::ws, rest);
  Rng r;
  r.set_state(rest);
  rng = r;
  drawn = saved_drawn;
}

}  // namespace liegrad::data
