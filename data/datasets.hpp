// Character-level corpora and their splits (spec models.md §7; formats and counts
// from shared/data/README.md):
//   - Tiny Shakespeare (karpathy/char-rnn data/tinyshakespeare/input.txt): one
//     stream cut contiguously 90/5/5 as TensorFlow Datasets' tiny_shakespeare does
//     (train = first int(n*0.9), the rest halved: 1,003,854 / 55,770 / 55,770);
//     vocabulary = the 65 sorted distinct characters of the whole file.
//   - PTB characters (Mikolov's ptb.char.{train,valid,test}.txt): every symbol is
//     followed by one space, so the symbols are the bytes at even offsets
//     (5,017,482 / 393,042 / 442,423); vocabulary from train (50 symbols).
//   - Any plain text file, cut contiguously by fractions.
// Every stream is a vector of symbol ids, one per character.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/vocab.hpp"

namespace liegrad::data {

struct Corpus {
  std::string name;                    // "tinyshakespeare", "ptb_char" or "text:<path>"
  Vocab vocab;
  std::vector<int32_t> train, val, test;  // symbol ids (N_split)
};

// DIR/tinyshakespeare/input.txt, split 90/5/5 (TFDS).
Corpus load_tiny_shakespeare(const std::string& dir);
// DIR/ptb-char/ptb.char.{train,valid,test}.txt; vocabulary from train. Throws
// IoError when a file breaks the symbol-space format or when valid/test hold a
// symbol that train lacks.
Corpus load_ptb_char(const std::string& dir);
// Any text file: train = the first 1 - val_frac - test_frac of it, then val, then
// test (each fraction in [0, 1), sum < 1). Boundaries as in TFDS: train ends at
// int(n * (1 - val_frac - test_frac)) and the rest is cut in the ratio
// val_frac : test_frac, so fractions 0.05, 0.05 reproduce the Tiny Shakespeare
// split. A split whose fraction is 0 is empty; any other split needs >= 2 symbols.
// Vocabulary from the whole file.
Corpus load_text_file(const std::string& path, double val_frac = 0.05, double test_frac = 0.05);

// Known corpus names, as load_corpus spells them.
std::vector<std::string> corpus_names();  // {"tinyshakespeare", "ptb_char", "text:<path>"}
// Loads a corpus by name:
//   "tinyshakespeare"  Tiny Shakespeare from the data directory
//   "ptb_char"         PTB characters from the data directory
//   "text:<path>"      a plain text file (path as given, relative to the current
//                      directory), split by val_frac and test_frac
// For the first two, data_dir goes through find_data_dir (so "" searches).
// An unknown name throws ValueError listing the known names.
Corpus load_corpus(const std::string& name, const std::string& data_dir = "", double val_frac = 0.05,
                   double test_frac = 0.05);

// The data directory: cli_value (--data-dir) when non-empty, else the environment
// variable LIEGRAD_DATA when set, else the first existing directory among
// ../shared/data, ../../shared/data and ../../../shared/data relative to the
// current directory and then to the executable's directory (/proc/self/exe).
// A given directory that does not exist, or no directory found, throws IoError
// saying how to point at the data (--data-dir, LIEGRAD_DATA, scripts/get-data.sh).
std::string find_data_dir(const std::string& cli_value);

// The whole file in one read. A missing, unreadable or empty file throws IoError
// naming the path; with data_hint the message also says how to point at the data.
std::string read_file_bytes(const std::string& path, bool data_hint = false);

// The symbols of a ptb.char file: the bytes at even offsets of raw, after checking
// that every odd offset is a space and no even offset is. `path` names the file
// in the IoError thrown on a violation (with the offset).
std::string ptb_char_symbols(std::string_view raw, const std::string& path);

}  // namespace liegrad::data
