// plot_word_accuracy_svg: accuracy against word length for one or several group
// word runs (data.dataset "words:<group>"), read from each DIR/result.json's "test"
// scores (tasks/word_eval.hpp), drawn as one self-contained SVG: one line with
// markers per run, lengths on a log2 axis, accuracy from 0 to 1, a dashed line at
// chance (1/|G|) when every run has the same group, and a dotted line at the
// longest training length when every run has the same one.
#pragma once
#include <string>
#include <vector>

namespace liegrad::report {

// True when the run in DIR is scored by length: its DIR/config.json's data section
// has "eval_lengths" (group word runs); false otherwise or when it does not exist.
bool scored_by_length(const std::string& dir);

// metric: "position_acc", "sequence_acc" or "final_acc" (ValueError otherwise).
// Throws IoError naming a run directory without a readable result.json holding
// test scores (an unfinished run).
std::string plot_word_accuracy_svg(const std::vector<std::string>& run_dirs, const std::string& title = "",
                                   const std::string& metric = "position_acc");

}  // namespace liegrad::report
