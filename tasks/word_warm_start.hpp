// The warm start at the alphabet curriculum's end (data.handover_warm_start): every
// element's transition is set to the product of the generators' transitions along a
// shortest word in the generators that spells it, so the model leaves the alphabet
// phase with the representation its generators define extended to every element
// (exact wherever the generators' transitions are a representation), instead of with
// random transitions for the |G| - (generators) symbols it has not read yet.
//
// With inputs "all" symbol g is element g. A breadth-first search of the Cayley graph
// from the identity (right multiplication by the standard generators, in their order)
// gives each element g its parent p and generator s with g = p . s, and its transition
// T_g = T_p N_s (the running product x_1 . ... . x_t is read as H = N_{x_1} ... N_{x_t});
// T_e = I. The products are formed in double.
#pragma once
#include <string>

#include "data/group_words.hpp"
#include "models/capabilities.hpp"

namespace liegrad::tasks {

// Sets every non-generator symbol's transition of `model` (the generators' stay as they
// are) and returns one line for the log. ConfigError from the model when its transitions
// cannot be set; ValueError when the task's inputs are not "all".
std::string warm_start_from_generators(const data::WordTask& task, models::GroupStateReadout<float>& model);

}  // namespace liegrad::tasks
