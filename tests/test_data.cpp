// Tests of data/: the character vocabulary, corpus loaders and their errors,
// the ptb.char parser, the three batchers, and (when the shared data is present)
// the exact split sizes of docs/models.md §7.
#include <doctest/doctest.h>

#include "tests/temp_dir.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "data/batcher.hpp"
#include "data/datasets.hpp"
#include "data/vocab.hpp"
#include "tests/test_helpers.hpp"

namespace fs = std::filesystem;
using namespace liegrad;
using namespace liegrad::data;

namespace {

// The shared temporary directory, plus a helper that writes a file into it.
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("data") {}

  std::string write(const std::string& rel, const std::string& bytes) const {
    const fs::path p = path / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
};

// The message of the liegrad::Error that f throws ("" if none).
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Writes each symbol followed by a space (the ptb.char layout).
std::string ptb_spaced(const std::string& symbols) {
  std::string out;
  for (char c : symbols) {
    out.push_back(c);
    out.push_back(' ');
  }
  return out;
}

// Generated text of n bytes over a small alphabet, with newlines.
std::string generated_text(size_t n) {
  std::string s(n, 'a');
  for (size_t i = 0; i < n; ++i) s[i] = (i % 17 == 16) ? '\n' : static_cast<char>('a' + (i * 7 + i / 5) % 26);
  return s;
}

std::vector<int32_t> iota_stream(int32_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

// The shared data directory, or "" when it cannot be found.
std::string shared_data_dir() {
  try {
    return find_data_dir("");
  } catch (const IoError&) {
  }
#ifdef LIEGRAD_SOURCE_DIR
  const fs::path guess = fs::path(LIEGRAD_SOURCE_DIR) / ".." / "shared" / "data";
  if (fs::is_directory(guess)) return guess.lexically_normal().string();
#endif
  return "";
}

}  // namespace

TEST_CASE("Vocab: construction, round trip and portable form") {
  const Vocab v = Vocab::from_text("hello world\n");
  CHECK(v.size() == 9);
  CHECK(v.symbols() == std::string("\n dehlorw"));
  CHECK(v.contains('h'));
  CHECK_FALSE(v.contains('z'));
  CHECK(v.id('\n') == 0);
  CHECK(v.symbol(8) == 'w');

  const std::string text = "low\nhold";
  const auto ids = v.encode(text);
  REQUIRE(ids.size() == text.size());
  CHECK(ids[0] == v.id('l'));
  CHECK(v.decode(ids) == text);

  const Vocab back = Vocab::from_string(v.to_string());
  CHECK(back == v);
  CHECK(back.encode(text) == ids);

  const Vocab explicit_order = Vocab::from_symbols("zyx");
  CHECK(explicit_order.id('z') == 0);
  CHECK(explicit_order.decode(std::vector<int32_t>{2, 1, 0}) == "xyz");

  CHECK_THROWS_AS(Vocab::from_symbols("abca"), ValueError);
  CHECK_THROWS_AS(Vocab::from_symbols(""), ValueError);
  CHECK_THROWS_AS(Vocab::from_text(""), ValueError);
  CHECK_THROWS_AS(v.decode(std::vector<int32_t>{9}), ValueError);
  CHECK_THROWS_AS(v.decode(std::vector<int32_t>{-1}), ValueError);
  CHECK(Vocab().size() == 0);
}

TEST_CASE("Vocab: encode error names the unknown characters") {
  const Vocab v = Vocab::from_text("abc");
  const std::string msg = error_message([&] { v.encode("abXc\nX\t"); });
  INFO(msg);
  CHECK(has(msg, "4 of its 7 characters"));
  CHECK(has(msg, "3 distinct"));  // X (twice), \n and \t
  CHECK(has(msg, "offset 2"));
  CHECK(has(msg, "'X'"));
  CHECK(has(msg, "'\\n'"));
  CHECK(has(msg, "'\\t'"));
  CHECK(has(msg, "3-symbol vocabulary"));
  CHECK_THROWS_AS(v.encode("z"), ValueError);

  // At most 10 listed, the rest counted.
  const std::string many = error_message([&] { v.encode("0123456789ABCDEF"); });
  INFO(many);
  CHECK(has(many, "'9'"));
  CHECK_FALSE(has(many, "'A'"));
  CHECK(has(many, "6 more"));
  CHECK(escape_char('\xc3') == "'\\xc3'");
  CHECK(escape_char('\'') == "'\\''");
}

TEST_CASE("load_text_file: split sizes and fractions") {
  TempDir dir;
  const std::string text = generated_text(1000);
  const std::string path = dir.write("t.txt", text);

  SUBCASE("90/5/5 like TFDS") {
    const Corpus c = load_text_file(path, 0.05, 0.05);
    CHECK(c.name == "text:" + path);
    CHECK(c.train.size() == 900);
    CHECK(c.val.size() == 50);
    CHECK(c.test.size() == 50);
    CHECK(c.vocab == Vocab::from_text(text));
    // Contiguous: the three splits concatenated decode to the file.
    CHECK(c.vocab.decode(c.train) + c.vocab.decode(c.val) + c.vocab.decode(c.test) == text);
  }
  SUBCASE("80/15/5 and no test split") {
    const Corpus c = load_text_file(path, 0.15, 0.05);
    CHECK(c.train.size() == 800);
    CHECK(c.val.size() == 150);
    CHECK(c.test.size() == 50);
    const Corpus d = load_text_file(path, 0.1, 0.0);
    CHECK(d.train.size() == 900);
    CHECK(d.val.size() == 100);
    CHECK(d.test.empty());
  }
  SUBCASE("odd length: TFDS rounding") {
    const std::string p = dir.write("odd.txt", generated_text(1115394 / 1000));  // 1115 bytes
    const Corpus c = load_text_file(p, 0.05, 0.05);
    CHECK(c.train.size() == 1003);  // int(1115 * 0.9)
    CHECK(c.val.size() == 56);      // int(112 * 0.5)
    CHECK(c.test.size() == 56);
  }
  SUBCASE("invalid fractions name the value") {
    std::string msg = error_message([&] { load_text_file(path, -0.1, 0.05); });
    CHECK(has(msg, "val_frac"));
    CHECK(has(msg, "-0.1"));
    CHECK_THROWS_AS(load_text_file(path, 1.0, 0.0), ValueError);
    CHECK_THROWS_AS(load_text_file(path, 0.05, 1.5), ValueError);
    msg = error_message([&] { load_text_file(path, 0.6, 0.5); });
    CHECK(has(msg, "0.6"));
    CHECK(has(msg, "below 1"));
  }
  SUBCASE("a split with fewer than 2 symbols") {
    const std::string small = dir.write("small.txt", "abcdefghij");
    CHECK_THROWS_AS(load_text_file(small, 0.05, 0.05), ValueError);  // val of 0 symbols
    CHECK_NOTHROW(load_text_file(small, 0.2, 0.2));
  }
  SUBCASE("load_corpus text: prefix") {
    const Corpus c = load_corpus("text:" + path, "", 0.05, 0.05);
    CHECK(c.train.size() == 900);
    CHECK_THROWS_AS(load_corpus("text:", ""), ValueError);
  }
}

TEST_CASE("missing and empty files name the path") {
  TempDir dir;
  const std::string missing = (dir.path / "nope.txt").string();
  std::string msg = error_message([&] { load_text_file(missing, 0.05, 0.05); });
  CHECK(has(msg, missing));
  CHECK_THROWS_AS(load_text_file(missing, 0.05, 0.05), IoError);

  const std::string empty = dir.write("empty.txt", "");
  msg = error_message([&] { load_text_file(empty, 0.05, 0.05); });
  CHECK(has(msg, empty));
  CHECK(has(msg, "is empty"));

  msg = error_message([&] { load_tiny_shakespeare(dir.path.string()); });
  CHECK(has(msg, (dir.path / "tinyshakespeare" / "input.txt").string()));
  CHECK(has(msg, "--data-dir"));
  CHECK(has(msg, "LIEGRAD_DATA"));
  CHECK(has(msg, "get-data.sh"));
  CHECK_THROWS_AS(load_ptb_char(dir.path.string()), IoError);

  const std::string ghost = (dir.path / "no-such-dir").string();
  msg = error_message([&] { find_data_dir(ghost); });
  CHECK(has(msg, ghost));
  CHECK_THROWS_AS(find_data_dir(ghost), IoError);
  CHECK(find_data_dir(dir.path.string()) == dir.path.string());

  msg = error_message([&] { load_corpus("wikitext", ""); });
  CHECK(has(msg, "wikitext"));
  CHECK(has(msg, "tinyshakespeare"));
  CHECK(has(msg, "ptb_char"));
  CHECK(has(msg, "text:<path>"));
}

TEST_CASE("ptb.char parsing on generated files") {
  TempDir dir;
  // Sentences end with "\n", the file ends with "\n " as Mikolov's files do.
  const std::string train = "a_cat_sat\nthe_dog_ran\n<unk>_N\n";
  const std::string valid = "the_cat\na_dog\n";
  const std::string test = "N_ran\n";
  dir.write("ptb-char/ptb.char.train.txt", ptb_spaced(train));
  dir.write("ptb-char/ptb.char.valid.txt", ptb_spaced(valid));
  dir.write("ptb-char/ptb.char.test.txt", ptb_spaced(test));

  const Corpus c = load_ptb_char(dir.path.string());
  CHECK(c.name == "ptb_char");
  CHECK(c.vocab == Vocab::from_text(train));
  CHECK(c.train.size() == train.size());
  CHECK(c.vocab.decode(c.train) == train);
  CHECK(c.vocab.decode(c.val) == valid);
  CHECK(c.vocab.decode(c.test) == test);
  CHECK(load_corpus("ptb_char", dir.path.string()).train == c.train);

  SUBCASE("a non-space at an odd offset") {
    std::string bad = ptb_spaced(valid);
    bad[5] = 'x';
    const std::string p = dir.write("ptb-char/ptb.char.valid.txt", bad);
    const std::string msg = error_message([&] { load_ptb_char(dir.path.string()); });
    INFO(msg);
    CHECK_THROWS_AS(load_ptb_char(dir.path.string()), IoError);
    CHECK(has(msg, p));
    CHECK(has(msg, "offset 5"));
  }
  SUBCASE("word-level text is rejected") {
    dir.write("ptb-char/ptb.char.train.txt", " the cat sat \n");
    const std::string msg = error_message([&] { load_ptb_char(dir.path.string()); });
    CHECK(has(msg, "ptb.char.train.txt"));
    CHECK(has(msg, "offset 0"));
  }
  SUBCASE("a test symbol missing from train") {
    dir.write("ptb-char/ptb.char.test.txt", ptb_spaced("zebra\n"));
    const std::string msg = error_message([&] { load_ptb_char(dir.path.string()); });
    INFO(msg);
    CHECK_THROWS_AS(load_ptb_char(dir.path.string()), IoError);
    CHECK(has(msg, "ptb.char.test.txt"));
    CHECK(has(msg, "'z'"));
  }
  SUBCASE("an empty file") {
    const std::string p = dir.write("ptb-char/ptb.char.valid.txt", "");
    const std::string msg = error_message([&] { load_ptb_char(dir.path.string()); });
    CHECK(has(msg, p));
    CHECK(has(msg, "is empty"));
  }
  CHECK(ptb_char_symbols("a b c", "x") == "abc");  // odd length: last symbol without space
}

TEST_CASE("RandomWindowBatcher: shapes, shifted targets, determinism, resume") {
  const auto stream = iota_stream(100);  // symbol i at offset i: windows are easy to check
  RandomWindowBatcher rb(stream, 4, 8, 42);
  const Batch b = rb.next();
  CHECK(b.B == 4);
  CHECK(b.T == 8);
  REQUIRE(b.inputs.size() == 32);
  REQUIRE(b.targets.size() == 32);
  CHECK(b.starts_new_pass);
  for (int64_t r = 0; r < 4; ++r) {
    const int32_t s = b.inputs[static_cast<size_t>(r * 8)];
    CHECK(s >= 0);
    CHECK(s <= 100 - 8 - 1);
    for (int64_t t = 0; t < 8; ++t) {
      CHECK(b.inputs[static_cast<size_t>(r * 8 + t)] == s + t);
      CHECK(b.targets[static_cast<size_t>(r * 8 + t)] == s + t + 1);
    }
  }

  // Same seed, same batches; a different seed differs.
  RandomWindowBatcher same(stream, 4, 8, 42), other(stream, 4, 8, 43);
  CHECK(same.next().inputs == b.inputs);
  CHECK(other.next().inputs != b.inputs);

  // Resume from state(): the continuation is identical.
  const std::string st = rb.state();
  const Batch next1 = rb.next(), next2 = rb.next();
  RandomWindowBatcher resumed(stream, 4, 8, 999);
  resumed.set_state(st);
  CHECK(resumed.batches_drawn() == 1);
  CHECK(resumed.next().inputs == next1.inputs);
  CHECK(resumed.next().inputs == next2.inputs);

  RandomWindowBatcher wrong_shape(stream, 2, 8, 42);
  CHECK_THROWS_AS(wrong_shape.set_state(st), ValueError);
  CHECK_THROWS_AS(resumed.set_state("garbage"), ValueError);

  // Every valid start is reachable, including the last (N - T - 1).
  const auto small = iota_stream(6);
  RandomWindowBatcher rs(small, 1, 3, 7);
  std::vector<bool> seen(3, false);
  for (int i = 0; i < 200; ++i) seen[static_cast<size_t>(rs.next().inputs[0])] = true;
  CHECK(std::all_of(seen.begin(), seen.end(), [](bool x) { return x; }));

  std::string msg = error_message([&] { RandomWindowBatcher(stream, 0, 8, 1); });
  CHECK(has(msg, "batch"));
  CHECK(has(msg, "0"));
  CHECK_THROWS_AS(RandomWindowBatcher(stream, 1, 0, 1), ValueError);
  msg = error_message([&] { RandomWindowBatcher(stream, 1, 100, 1); });
  CHECK(has(msg, "100"));
  CHECK_NOTHROW(RandomWindowBatcher(stream, 1, 99, 1));
}

TEST_CASE("SequentialBatcher: lanes continue across windows and wrap") {
  const auto stream = iota_stream(103);  // 4 lanes of 25 (3 symbols unused)
  SequentialBatcher sb(stream, 4, 6);
  CHECK(sb.lane_length() == 25);
  CHECK(sb.windows_per_pass() == 4);  // (25 - 1) / 6

  Batch prev = sb.next();
  CHECK(prev.starts_new_pass);
  CHECK(prev.epoch == 0);
  for (int64_t b = 0; b < 4; ++b) CHECK(prev.inputs[static_cast<size_t>(b * 6)] == b * 25);
  for (int k = 1; k < 4; ++k) {
    const Batch cur = sb.next();
    CHECK_FALSE(cur.starts_new_pass);
    for (int64_t b = 0; b < 4; ++b) {
      const auto row = static_cast<size_t>(b * 6);
      // The window continues the previous one in the same lane...
      CHECK(cur.inputs[row] == prev.inputs[row + 5] + 1);
      CHECK(cur.inputs[row] == prev.targets[row + 5]);
      for (size_t t = 0; t < 6; ++t) CHECK(cur.targets[row + t] == cur.inputs[row + t] + 1);
      // ... and stays inside its lane (targets included).
      CHECK(cur.targets[row + 5] < (b + 1) * 25);
    }
    prev = cur;
  }
  CHECK(sb.epoch() == 1);
  const Batch wrapped = sb.next();
  CHECK(wrapped.starts_new_pass);
  CHECK(wrapped.epoch == 1);
  CHECK(wrapped.inputs[0] == 0);

  // Resume from position().
  const int64_t pos = sb.position();
  const Batch a = sb.next();
  SequentialBatcher resumed(stream, 4, 6);
  resumed.set_position(pos);
  const Batch c = resumed.next();
  CHECK(c.inputs == a.inputs);
  CHECK(c.starts_new_pass == a.starts_new_pass);
  CHECK_THROWS_AS(resumed.set_position(-1), ValueError);

  CHECK_THROWS_AS(SequentialBatcher(stream, 0, 6), ValueError);
  CHECK_THROWS_AS(SequentialBatcher(stream, 4, 0), ValueError);
  const std::string msg = error_message([&] { SequentialBatcher(stream, 4, 25); });
  CHECK(has(msg, "25"));
  CHECK_NOTHROW(SequentialBatcher(stream, 4, 24));
}

TEST_CASE("EvalWindows: every symbol after the first predicted exactly once") {
  for (int32_t n : {2, 3, 10, 11, 17, 100}) {
    for (int64_t T : {1, 3, 4, 10, 200}) {
      CAPTURE(n);
      CAPTURE(T);
      const auto stream = iota_stream(n);
      const EvalWindows ew(stream, T);
      CHECK(ew.predictions() == n - 1);
      CHECK(ew.size() == (n - 1 + T - 1) / T);
      std::vector<int> predicted(static_cast<size_t>(n), 0);
      int64_t total = 0, expected_start = 0, count = 0;
      for (const auto& w : ew) {
        CHECK(w.start == expected_start);
        CHECK(w.length >= 1);
        CHECK(w.length <= T);
        REQUIRE(w.inputs.size() == static_cast<size_t>(w.length));
        REQUIRE(w.targets.size() == static_cast<size_t>(w.length));
        for (size_t t = 0; t < w.inputs.size(); ++t) {
          CHECK(w.inputs[t] == w.start + static_cast<int64_t>(t));
          CHECK(w.targets[t] == w.inputs[t] + 1);
          ++predicted[static_cast<size_t>(w.targets[t])];
        }
        total += w.length;
        expected_start += w.length;
        ++count;
      }
      CHECK(count == ew.size());
      CHECK(total == n - 1);
      CHECK(predicted[0] == 0);
      CHECK(std::all_of(predicted.begin() + 1, predicted.end(), [](int p) { return p == 1; }));
      // Only the last window may be short.
      if (ew.size() > 1) CHECK(ew[0].length == T);
      CHECK(ew[ew.size() - 1].length == n - 1 - (ew.size() - 1) * T);
    }
  }
  const auto stream = iota_stream(10);
  CHECK_THROWS_AS(EvalWindows(stream, 0), ValueError);
  const auto one = iota_stream(1);
  CHECK_THROWS_AS(EvalWindows(one, 4), ValueError);
  const EvalWindows ew(stream, 4);
  CHECK_THROWS_AS(ew[3], ValueError);
}

TEST_CASE("real data: exact split sizes (skipped when the data is absent)") {
  const std::string dir = shared_data_dir();
  if (dir.empty()) LIEGRAD_SKIP_TEST("the shared data directory was not found (--data-dir, $LIEGRAD_DATA, ../shared/data)");
  for (const char* f : {"tinyshakespeare/input.txt", "ptb-char/ptb.char.train.txt"})
    if (!fs::exists(fs::path(dir) / f)) LIEGRAD_SKIP_TEST(f << " not found under " << dir);
  MESSAGE("data directory: " << dir);
  const Corpus ts = load_corpus("tinyshakespeare", dir);
  CHECK(ts.train.size() == 1003854);
  CHECK(ts.val.size() == 55770);
  CHECK(ts.test.size() == 55770);
  CHECK(ts.vocab.size() == 65);
  CHECK(ts.vocab.symbols().substr(0, 2) == "\n ");
  // The generic loader with 5/5 fractions gives the same split.
  const Corpus tf = load_text_file((fs::path(dir) / "tinyshakespeare" / "input.txt").string(), 0.05, 0.05);
  CHECK(tf.train.size() == ts.train.size());
  CHECK(tf.val.size() == ts.val.size());
  CHECK(tf.test == ts.test);
  const Corpus ptb = load_corpus("ptb_char", dir);
  CHECK(ptb.train.size() == 5017482);
  CHECK(ptb.val.size() == 393042);
  CHECK(ptb.test.size() == 442423);
  CHECK(ptb.vocab.size() == 50);
  CHECK(ptb.vocab.contains('_'));
  CHECK(ptb.vocab.contains('\n'));
  CHECK_FALSE(ptb.vocab.contains(' '));
}
