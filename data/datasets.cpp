// Corpus loaders, the data-directory search and the ptb.char parser. Format facts
// (file names, the symbol-space layout, split rules and counts) are from
// shared/data/README.md and docs/models.md §7.
#include "data/datasets.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/errors.hpp"

namespace liegrad::data {

namespace fs = std::filesystem;

namespace {

const char* const kDataHint =
    "Point liegrad at the data with --data-dir DIR or the LIEGRAD_DATA environment variable, "
    "or download it with scripts/get-data.sh DIR.";

// Every split that is meant to hold symbols needs one input and one target.
void check_split(const std::string& corpus, const char* split, const std::vector<int32_t>& ids) {
  if (ids.size() < 2)
    throw ValueError("corpus '" + corpus + "': the " + split + " split has " + std::to_string(ids.size()) +
                     " symbol(s); at least 2 are needed (one input and one target)");
}

// Encodes a split, turning an unknown-symbol error into one that names the file.
std::vector<int32_t> encode_file(const Vocab& vocab, std::string_view symbols, const std::string& path,
                                 const std::string& vocab_source) {
  try {
    return vocab.encode(symbols);
  } catch (const ValueError& e) {
    throw IoError(path + ": holds symbols missing from the vocabulary built from " + vocab_source + ": " + e.what());
  }
}

// Cuts text at train_end and val_end into three encoded streams.
Corpus split_contiguous(std::string name, std::string_view text, size_t train_end, size_t val_end) {
  Corpus c;
  c.name = std::move(name);
  c.vocab = Vocab::from_text(text);
  const std::vector<int32_t> all = c.vocab.encode(text);
  c.train.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(train_end));
  c.val.assign(all.begin() + static_cast<std::ptrdiff_t>(train_end), all.begin() + static_cast<std::ptrdiff_t>(val_end));
  c.test.assign(all.begin() + static_cast<std::ptrdiff_t>(val_end), all.end());
  return c;
}

std::string exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

// A directory named by the user (flag or environment) must exist.
std::string checked_dir(const std::string& dir, const char* source) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return dir;
  const bool exists = fs::exists(dir, ec);
  throw IoError("data directory '" + dir + "' (from " + source + ") " +
                (exists ? "is not a directory" : "does not exist") + ". " + kDataHint);
}

}  // namespace

std::string read_file_bytes(const std::string& path, bool data_hint) {
  const std::string hint = data_hint ? std::string(" ") + kDataHint : std::string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw IoError("cannot read '" + path + "': no such file." + hint);
  if (fs::is_directory(path, ec)) throw IoError("cannot read '" + path + "': it is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open '" + path + "' for reading." + hint);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw IoError("cannot determine the size of '" + path + "'");
  if (size == 0) throw IoError("'" + path + "' is empty");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0, std::ios::beg);
  in.read(bytes.data(), size);
  if (in.gcount() != size) throw IoError("short read from '" + path + "'");
  return bytes;
}

std::string ptb_char_symbols(std::string_view raw, const std::string& path) {
  std::string symbols((raw.size() + 1) / 2, '\0');
  for (size_t i = 0; i < raw.size(); i += 2) {
    if (raw[i] == ' ')
      throw IoError(path + ": expected a symbol at even byte offset " + std::to_string(i) +
                    " but found a space (ptb.char format: every symbol is followed by exactly one space)");
    if (i + 1 < raw.size() && raw[i + 1] != ' ')
      throw IoError(path + ": expected a space at odd byte offset " + std::to_string(i + 1) + " but found " +
                    escape_char(raw[i + 1]) + " (ptb.char format: every symbol is followed by exactly one space)");
    symbols[i / 2] = raw[i];
  }
  return symbols;
}

Corpus load_tiny_shakespeare(const std::string& dir) {
  const std::string path = (fs::path(dir) / "tinyshakespeare" / "input.txt").string();
  const std::string text = read_file_bytes(path, true);
  // TFDS tiny_shakespeare: i = int(n * 0.9); the remainder is halved (int(m * 0.5)).
  const size_t n = text.size();
  const auto train_end = static_cast<size_t>(static_cast<double>(n) * 0.9);
  const size_t val_end = train_end + (n - train_end) / 2;
  Corpus c = split_contiguous("tinyshakespeare", text, train_end, val_end);
  check_split(c.name, "train", c.train);
  check_split(c.name, "val", c.val);
  check_split(c.name, "test", c.test);
  return c;
}

Corpus load_ptb_char(const std::string& dir) {
  const fs::path base = fs::path(dir) / "ptb-char";
  const std::string train_path = (base / "ptb.char.train.txt").string();
  const std::string val_path = (base / "ptb.char.valid.txt").string();
  const std::string test_path = (base / "ptb.char.test.txt").string();
  const std::string train = ptb_char_symbols(read_file_bytes(train_path, true), train_path);
  const std::string val = ptb_char_symbols(read_file_bytes(val_path, true), val_path);
  const std::string test = ptb_char_symbols(read_file_bytes(test_path, true), test_path);
  Corpus c;
  c.name = "ptb_char";
  c.vocab = Vocab::from_text(train);
  c.train = c.vocab.encode(train);
  c.val = encode_file(c.vocab, val, val_path, train_path);
  c.test = encode_file(c.vocab, test, test_path, train_path);
  check_split(c.name, "train", c.train);
  check_split(c.name, "val", c.val);
  check_split(c.name, "test", c.test);
  return c;
}

Corpus load_text_file(const std::string& path, double val_frac, double test_frac) {
  auto check_frac = [](const char* what, double f) {
    if (!(f >= 0.0 && f < 1.0))
      throw ValueError(std::string("load_text_file: ") + what + " must be in [0, 1), got " + std::to_string(f));
  };
  check_frac("val_frac", val_frac);
  check_frac("test_frac", test_frac);
  if (!(val_frac + test_frac < 1.0))
    throw ValueError("load_text_file: val_frac + test_frac must be below 1, got " + std::to_string(val_frac) +
                     " + " + std::to_string(test_frac) + " = " + std::to_string(val_frac + test_frac));

  const std::string text = read_file_bytes(path, false);
  const size_t n = text.size();
  // Cut like TFDS: train ends at int(n * train_frac); the rest is shared between
  // val and test in the ratio val_frac : test_frac (val first). The small slack
  // keeps an exact product (n * 0.9 = 9 for n = 10) from rounding down.
  const double train_frac = 1.0 - val_frac - test_frac;
  auto train_end = static_cast<size_t>(std::floor(static_cast<double>(n) * train_frac + 1e-9));
  if (train_end > n) train_end = n;
  size_t val_end = train_end;
  if (val_frac > 0.0) {
    const double share = test_frac > 0.0 ? val_frac / (val_frac + test_frac) : 1.0;
    val_end = train_end + static_cast<size_t>(std::floor(static_cast<double>(n - train_end) * share + 1e-9));
    if (val_end > n) val_end = n;
  }
  Corpus c = split_contiguous("text:" + path, text, train_end, val_end);
  check_split(c.name, "train", c.train);
  if (val_frac > 0.0) check_split(c.name, "val", c.val);
  if (test_frac > 0.0) check_split(c.name, "test", c.test);
  return c;
}

std::vector<std::string> corpus_names() { return {"tinyshakespeare", "ptb_char", "text:<path>"}; }

Corpus load_corpus(const std::string& name, const std::string& data_dir, double val_frac, double test_frac) {
  constexpr std::string_view kText = "text:";
  if (name.starts_with(kText)) {
    const std::string path = name.substr(kText.size());
    if (path.empty()) throw ValueError("corpus name 'text:' needs a file path, as in 'text:notes.txt'");
    return load_text_file(path, val_frac, test_frac);
  }
  if (name == "tinyshakespeare") return load_tiny_shakespeare(find_data_dir(data_dir));
  if (name == "ptb_char") return load_ptb_char(find_data_dir(data_dir));
  std::string known;
  for (const auto& k : corpus_names()) known += (known.empty() ? "" : ", ") + k;
  throw ValueError("unknown corpus '" + printable(name) + "'; known corpora: " + known);
}

std::string find_data_dir(const std::string& cli_value) {
  if (!cli_value.empty()) return checked_dir(cli_value, "--data-dir");
  if (const char* env = std::getenv("LIEGRAD_DATA"); env != nullptr && *env != '\0')
    return checked_dir(env, "LIEGRAD_DATA");

  std::vector<fs::path> bases;
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (!ec) bases.push_back(cwd);
  if (const std::string exe = exe_dir(); !exe.empty()) bases.emplace_back(exe);
  std::string searched;
  for (const auto& b : bases) {
    for (const char* rel : {"../shared/data", "../../shared/data", "../../../shared/data"}) {
      const fs::path candidate = (b / rel).lexically_normal();
      if (fs::is_directory(candidate, ec)) return candidate.string();
      searched += (searched.empty() ? "" : ", ") + candidate.string();
    }
  }
  throw IoError(
      "no data directory found (searched " + searched +
      "). Pass --data-dir DIR, or set the environment variable LIEGRAD_DATA=DIR, or download the data with "
      "scripts/get-data.sh DIR (DIR then holds tinyshakespeare/ and ptb-char/).");
}

}  // namespace liegrad::data
