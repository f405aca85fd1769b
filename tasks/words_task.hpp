// Group word problems, the task kind "words" (state tracking; data/group_words.hpp,
// docs/state_tracking.md): data.dataset "words:<group>", inputs the group's elements
// or generators, the target at every position the running product, one of |G| classes.
// Every model trains the same way on fresh random words (no state carried between
// batches) with the cross-entropy of the running product at every position; validation
// reports loss and accuracy at length data.max_len, the final evaluation the accuracy
// at every data.eval_lengths (tasks/word_eval.hpp) and, for models whose states are group
// elements, the group-structure diagnosis (tasks/word_diagnosis.hpp); the best
// checkpoint is the one with the lowest validation loss.
//
// Data keys: "inputs" ("all" or "generators"), "min_len", "max_len", "curriculum_steps",
// "eval_lengths", "val_sequences", "test_sequences" (docs/training.md). `liegrad eval`
// takes --lengths 64,1024,... and --sequences N.
#pragma once
#include "data/group_words.hpp"
#include "tasks/registry.hpp"

namespace liegrad::tasks {

TaskSpec words_task_spec();

// The group word task behind a task of this kind, else null (for the words task's own
// tests and tools).
const data::WordTask* word_task_of(const Task& task);

}  // namespace liegrad::tasks
