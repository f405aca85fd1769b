// The resume state of a seeded batcher (RandomWindowBatcher, WordBatcher) as one line
// of text, "<tag> <shape...> <batches drawn> <Rng state>": the shape numbers are the
// sizes the state fits (N B T for random windows, B min_len max_len for words), so a
// state saved for another batcher is refused rather than silently continued.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/rng.hpp"

namespace liegrad::data {

// The shape numbers as a batcher names them in an error, e.g. "N=10, B=2, T=4".
using DescribeShape = std::string (*)(const std::vector<int64_t>& shape);

std::string write_batcher_state(const std::string& tag, const std::vector<int64_t>& shape, int64_t drawn,
                                const Rng& rng);

// Reads a state written by write_batcher_state with the same tag and shape into drawn
// and rng. ValueError "<who>::set_state: malformed state '<text>'" for anything else
// (another tag, missing numbers, a negative count), "<who>::set_state: the state was
// saved for <describe(saved)> but this batcher has <describe(shape)>" for another
// shape, and Rng::set_state's for a malformed generator state; drawn and rng are left
// as they were on any error.
void read_batcher_state(const std::string& text, const std::string& tag, const std::vector<int64_t>& shape,
                        const std::string& who, DescribeShape describe, int64_t& drawn, Rng& rng);

}  // namespace liegrad::data
