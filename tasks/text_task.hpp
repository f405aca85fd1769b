// Character-level language modelling, the task kind "text": data.dataset
// "tinyshakespeare", "ptb_char" or "text:<path>" (data/datasets.hpp), the model
// predicting the next symbol at every position and scored in bits per character over
// whole splits (tasks/evaluate.hpp, docs/models.md §7).
//
// Training: transformers read random windows of train.seq_len; recurrent models read
// consecutive windows of B parallel lanes with their state carried across windows
// (truncated back-propagation through time) and reset at each new pass over the data.
// Interim evaluations score the first train.eval_tokens validation symbols (all when 0);
// the final one scores the whole validation and test splits, for the final model and the
// best checkpoint.
//
// Data keys: "val_frac" and "test_frac" (for text:<path> corpora). `liegrad eval` takes
// --text FILE, scored instead of a split.
#pragma once
#include "tasks/registry.hpp"

namespace liegrad::tasks {

TaskSpec text_task_spec();

}  // namespace liegrad::tasks
