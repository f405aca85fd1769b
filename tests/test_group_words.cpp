// The group word generator (data/finite_group.hpp, data/group_words.hpp): the
// running products against an independent computation of each group law
// (permutation composition written out here, addition mod n for the cyclic
// groups), the groups' orders, parity and generating sets, determinism from the
// seed, disjoint split seeds, resumable batches, and one-line errors for bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "core/errors.hpp"
#include "data/group_words.hpp"

using namespace liegrad;
using data::FiniteGroup;
using data::WordTask;

namespace {

using Perm = std::vector<int32_t>;

// "a then b", written independently of the library: (a . b)[i] = b[a[i]].
Perm then_words(const Perm& a, const Perm& b) {
  Perm c(a.size());
  for (size_t i = 0; i < a.size(); ++i) c[i] = b.at(static_cast<size_t>(a[i]));
  return c;
}

// Parity by counting inversions (the library counts cycles).
bool is_even(const Perm& p) {
  int64_t inv = 0;
  for (size_t i = 0; i < p.size(); ++i)
    for (size_t j = i + 1; j < p.size(); ++j) inv += p[i] > p[j];
  return inv % 2 == 0;
}

int64_t factorial(int64_t n) { return n <= 1 ? 1 : n * factorial(n - 1); }

// A batcher with `schedule`, saved after `skip` batches and restored into one with another
// seed, gives the same next `compare` batches (lengths and symbols) as the original.
// Returns the saved state.
std::string check_resumes(const WordTask& task, const data::WordSchedule& schedule, int skip, int compare) {
  data::WordBatcher a(task, 2, 1, 64, 3, schedule);
  for (int i = 0; i < skip; ++i) a.next();
  const std::string saved = a.state();
  data::WordBatcher b(task, 2, 1, 64, 1, schedule);
  b.set_state(saved);
  for (int i = 0; i < compare; ++i) {
    CAPTURE(i);
    CHECK(b.longest() == a.longest());
    CHECK(b.next().inputs == a.next().inputs);
  }
  return saved;
}

// The expected order from the name: n for Z<n>, n! for S<n>, n!/2 for A<n>.
int64_t expected_order(const std::string& name) {
  const int64_t n = std::stoll(name.substr(1));
  return name[0] == 'Z' ? n : name[0] == 'S' ? factorial(n) : factorial(n) / 2;
}

bool one_line(const std::string& s) { return s.find('\n') == std::string::npos; }

}  // namespace

TEST_CASE("group words: the running product matches permutation composition for every group") {
  for (const std::string name : {"Z2", "Z5", "S3", "A5", "S5", "Z7", "S4", "A4"}) {
    CAPTURE(name);
    const FiniteGroup g(name);
    REQUIRE(g.order() == expected_order(name));
    // Every element is a distinct permutation of the right parity; 0 is the identity.
    std::set<Perm> seen;
    for (int32_t i = 0; i < g.order(); ++i) {
      Perm p = g.element(i), sorted = p;
      std::sort(sorted.begin(), sorted.end());
      Perm iota(p.size());
      std::iota(iota.begin(), iota.end(), 0);
      CHECK(sorted == iota);
      CHECK(seen.insert(p).second);
      if (name[0] == 'A') CHECK(is_even(p));
      if (name[0] == 'Z') CHECK(p[0] == i);  // element k is the rotation by k
    }
    Perm id(static_cast<size_t>(g.degree()));
    std::iota(id.begin(), id.end(), 0);
    CHECK(g.element(0) == id);

    for (const std::string inputs : {"all", "generators"}) {
      CAPTURE(inputs);
      const WordTask task(name, inputs);
      CHECK(task.classes() == g.order());
      Rng rng(11);
      const data::Batch words = task.sample(rng, 6, 40);
      REQUIRE(words.inputs.size() == 240);
      for (int64_t b = 0; b < 6; ++b) {
        Perm state = id;
        int64_t residue = 0;
        for (int64_t t = 0; t < 40; ++t) {
          const auto i = static_cast<size_t>(b * 40 + t);
          const int32_t x = words.inputs[i];
          REQUIRE(x >= 0);
          REQUIRE(x < task.input_vocab());
          const Perm& g_x = g.element(task.element_of(x));
          state = then_words(state, g_x);
          CHECK(g.element(words.targets[i]) == state);
          if (name[0] == 'Z') {  // addition mod n, with no permutations at all
            residue = (residue + task.element_of(x)) % g.order();
            CHECK(words.targets[i] == residue);
          }
        }
      }
      // running_products agrees with the batch's targets.
      const std::vector<int32_t> row(words.inputs.begin(), words.inputs.begin() + 40);
      const std::vector<int32_t> tg(words.targets.begin(), words.targets.begin() + 40);
      CHECK(task.running_products(row) == tg);
    }
  }
}

TEST_CASE("group words: the standard generators generate the whole group") {
  for (const std::string name : {"Z2", "Z5", "S2", "S3", "A3", "A5", "S5", "S6", "A6"}) {
    CAPTURE(name);
    const FiniteGroup g(name);
    const WordTask task(name, "generators");
    std::vector<Perm> gens;
    for (int32_t s = 0; s < task.input_vocab(); ++s) gens.push_back(g.element(task.element_of(s)));
    // Closure under right multiplication by the generators, by breadth-first search.
    Perm id(static_cast<size_t>(g.degree()));
    std::iota(id.begin(), id.end(), 0);
    std::set<Perm> reached = {id};
    std::vector<Perm> frontier = {id};
    while (!frontier.empty()) {
      std::vector<Perm> next;
      for (const auto& p : frontier)
        for (const auto& s : gens)
          if (reached.insert(then_words(p, s)).second) next.push_back(then_words(p, s));
      frontier = std::move(next);
    }
    CHECK(static_cast<int64_t>(reached.size()) == g.order());
  }
  CHECK(WordTask("S5", "generators").input_vocab() == 2);  // (0 1) and (0 1 2 3 4)
  CHECK(WordTask("A5", "generators").input_vocab() == 3);  // (0 1 k), k = 2, 3, 4
  CHECK(WordTask("S5").input_vocab() == 120);
}

TEST_CASE("group words: a length curriculum grows the longest length linearly, then draws as without it") {
  const WordTask task("S3");
  data::WordBatcher cur(task, 2, 1, 64, 7, {10});  // 10 batches from 1..7 to 1..64
  std::vector<int64_t> longest;
  for (int i = 0; i < 12; ++i) {
    longest.push_back(cur.longest());
    const data::Batch b = cur.next();
    CHECK(b.T >= 1);
    CHECK(b.T <= longest.back());
  }
  // min_len + ceil(63 (i + 1) / 10): 1 + 7, 1 + 13, ..., 1 + 63 at i = 9, then max_len.
  CHECK(longest == std::vector<int64_t>{8, 14, 20, 27, 33, 39, 46, 52, 58, 64, 64, 64});
  // Its state carries the curriculum and resumes mid-way exactly.
  data::WordBatcher a(task, 2, 1, 64, 3, {100});
  for (int i = 0; i < 5; ++i) a.next();
  const std::string saved = a.state();
  const data::Batch expected = a.next();
  data::WordBatcher b(task, 2, 1, 64, 1, {100});
  b.set_state(saved);
  CHECK(b.batches_drawn() == 5);
  const data::Batch got = b.next();
  CHECK(got.inputs == expected.inputs);
  CHECK(b.longest() == a.longest());
  data::WordBatcher other(task, 2, 1, 64, 1, {50});
  CHECK_THROWS_WITH_AS(other.set_state(saved),
                       "WordBatcher::set_state: the state was saved for B=2, lengths 1..64, curriculum 100 batches "
                       "but this batcher has B=2, lengths 1..64, curriculum 50 batches",
                       ValueError);
  CHECK_THROWS_AS(data::WordBatcher(task, 2, 1, 64, 1, {-1}), ValueError);
}

TEST_CASE("group words: an alphabet curriculum draws only the generators, then every element, and resumes exactly") {
  const WordTask task("A5");
  const std::vector<int32_t> gens = task.generator_symbols();
  CHECK(gens.size() == 3);
  CHECK(WordTask("A5", "generators").generator_symbols() == std::vector<int32_t>{0, 1, 2});
  data::WordBatcher cur(task, 8, 1, 16, 5, {0, 4});
  for (int i = 0; i < 4; ++i) {
    const data::Batch b = cur.next();
    for (size_t k = 0; k < b.inputs.size(); ++k) {
      CHECK(std::find(gens.begin(), gens.end(), b.inputs[k]) != gens.end());
      // the targets are still the running products of the elements read
    }
    for (int64_t r = 0; r < b.B; ++r) {
      const std::span<const int32_t> row(b.inputs.data() + r * b.T, static_cast<size_t>(b.T));
      CHECK(task.running_products(row) == std::vector<int32_t>(b.targets.begin() + r * b.T, b.targets.begin() + (r + 1) * b.T));
    }
  }
  std::set<int32_t> later;
  for (int i = 0; i < 50; ++i)
    for (int32_t s : cur.next().inputs) later.insert(s);
  CHECK(later.size() > 40);  // every element is an input again (60 of them)
  // The state carries the alphabet curriculum and resumes mid-way exactly.
  const std::string saved = check_resumes(task, {10, 6}, 3, 5);
  data::WordBatcher other(task, 2, 1, 64, 1, {10, 7});
  CHECK_THROWS_WITH_AS(other.set_state(saved),
                       "WordBatcher::set_state: the state was saved for B=2, lengths 1..64, curriculum 10 batches, "
                       "generators only for 6 batches but this batcher has B=2, lengths 1..64, curriculum 10 "
                       "batches, generators only for 7 batches",
                       ValueError);
  CHECK_THROWS_AS(data::WordBatcher(task, 2, 1, 64, 1, {0, -1}), ValueError);
  Rng rng(1);
  const std::vector<int32_t> outside{60};
  CHECK_THROWS_AS(task.sample(rng, 1, 4, outside), ValueError);
}

TEST_CASE("group words: a ramp out of the alphabet curriculum mixes in every element at a growing share") {
  const WordTask task("A5");
  const std::vector<int32_t> gens = task.generator_symbols();
  // 2 generator batches, then a ramp of 3 (shares 1/4, 2/4, 3/4), then all elements.
  data::WordBatcher ramp(task, 400, 64, 64, 11, {0, 2, 3});
  auto outside_share = [&](const data::Batch& b) {
    int64_t outside = 0;
    for (int32_t s : b.inputs) outside += std::find(gens.begin(), gens.end(), s) == gens.end();
    for (int64_t r = 0; r < b.B; ++r) {
      const std::span<const int32_t> row(b.inputs.data() + r * b.T, static_cast<size_t>(b.T));
      CHECK(task.running_products(row) ==
            std::vector<int32_t>(b.targets.begin() + r * b.T, b.targets.begin() + (r + 1) * b.T));
    }
    return static_cast<double>(outside) / static_cast<double>(b.inputs.size());
  };
  CHECK(outside_share(ramp.next()) == 0.0);
  CHECK(outside_share(ramp.next()) == 0.0);
  // A symbol drawn from all 60 elements is outside the 3 generators with probability 57/60;
  // 25,600 symbols a batch put each share within 0.02 of share * 57/60 (about 7 sigma).
  for (int i = 1; i <= 3; ++i) CHECK(std::abs(outside_share(ramp.next()) - 0.25 * i * 57.0 / 60.0) < 0.02);
  CHECK(std::abs(outside_share(ramp.next()) - 57.0 / 60.0) < 0.02);
  // The ramp is part of the state, and a batcher without it refuses that state.
  const std::string saved = check_resumes(task, {10, 4, 5}, 5, 6);
  data::WordBatcher no_ramp(task, 2, 1, 64, 1, {10, 4});
  CHECK_THROWS_AS(no_ramp.set_state(saved), ValueError);
  CHECK_THROWS_WITH_AS(data::WordBatcher(task, 2, 1, 64, 1, {0, 0, 3}),
                       "WordBatcher: generator_ramp must be >= 0, and 0 without generator batches, got 3 with 0",
                       ValueError);
  Rng rng(1);
  CHECK_THROWS_AS(task.sample(rng, 1, 4, gens, 1.0), ValueError);
}

TEST_CASE("group words: a hand-over curriculum starts the lengths again at the alphabet phase's end") {
  const WordTask task("A5");
  const std::vector<int32_t> gens = task.generator_symbols();
  // A 6-batch length curriculum over 1..64 and 3 generator batches, then a hand-over
  // curriculum of 4 batches: from batch 3 the longest length is the shorter of
  // 1 + ceil(63 (i + 1) / 6) and 1 + ceil(63 (j + 1) / 4), j = i - 3.
  data::WordBatcher cur(task, 8, 1, 64, 5, {6, 3, 0, 4});
  std::vector<int64_t> longest;
  for (int i = 0; i < 9; ++i) {
    longest.push_back(cur.longest());
    const data::Batch b = cur.next();
    CHECK(b.T <= longest.back());
    const bool generators_only = std::all_of(b.inputs.begin(), b.inputs.end(), [&](int32_t s) {
      return std::find(gens.begin(), gens.end(), s) != gens.end();
    });
    if (i < 3) CHECK(generators_only);
  }
  CHECK(longest == std::vector<int64_t>{12, 22, 33, 17, 33, 49, 64, 64, 64});
  // The hand-over curriculum is part of the state; a batcher without it refuses that state.
  const std::string saved = check_resumes(task, {0, 4, 0, 10}, 6, 6);
  data::WordBatcher without(task, 2, 1, 64, 1, {0, 4});
  CHECK_THROWS_WITH_AS(without.set_state(saved),
                       "WordBatcher::set_state: the state was saved as words-v5 by a batcher with another schedule, but "
                       "this batcher has B=2, lengths 1..64, curriculum 0 batches, generators only for 4 batches "
                       "(words-v3)",
                       ValueError);
  CHECK_THROWS_WITH_AS(data::WordBatcher(task, 2, 1, 64, 1, {0, 0, 0, 5}),
                       "WordBatcher: handover_curriculum must be >= 0, and 0 without generator batches, got 5 with 0",
                       ValueError);
}

TEST_CASE("group words: batches are determined by the seed and the splits use disjoint seeds") {
  const WordTask task("S3");
  data::WordBatcher a(task, 4, 1, 64, 7), b(task, 4, 1, 64, 7), c(task, 4, 1, 64, 8);
  std::set<int64_t> lengths;
  bool differs = false;
  for (int i = 0; i < 400; ++i) {
    const data::Batch x = a.next(), y = b.next(), z = c.next();
    CHECK(x.inputs == y.inputs);
    CHECK(x.targets == y.targets);
    CHECK(x.T >= 1);
    CHECK(x.T <= 64);
    CHECK(x.starts_new_pass);
    differs = differs || x.inputs != z.inputs;
    lengths.insert(x.T);
  }
  CHECK(differs);
  CHECK(lengths.size() == 64);  // 400 draws of 64 lengths reach every one (p of missing one < 1e-2)

  // A batcher restored from state() continues exactly where the original stands.
  data::WordBatcher d(task, 4, 1, 64, 99);
  d.next();
  const std::string saved = d.state();
  const data::Batch expected = d.next();
  data::WordBatcher e(task, 4, 1, 64, 1);
  e.set_state(saved);
  CHECK(e.next().inputs == expected.inputs);
  data::WordBatcher other(task, 5, 1, 64, 1);
  CHECK_THROWS_WITH_AS(other.set_state(saved),
                       "WordBatcher::set_state: the state was saved for B=4, lengths 1..64 but this batcher has B=5, "
                       "lengths 1..64",
                       ValueError);
  // A random-window batcher's state is not a word batcher's, nor the other way round.
  const std::vector<int32_t> stream(100, 0);
  data::RandomWindowBatcher windows(stream, 4, 8, 1);
  const std::string not_windows = "RandomWindowBatcher::set_state: malformed state '" + saved + "'";
  CHECK_THROWS_WITH_AS(windows.set_state(saved), not_windows.c_str(), ValueError);
  const std::string not_words = "WordBatcher::set_state: malformed state '" + windows.state() + "'";
  CHECK_THROWS_WITH_AS(e.set_state(windows.state()), not_words.c_str(), ValueError);

  // Every (run seed, split) pair has its own stream seed.
  std::set<uint64_t> seeds;
  for (uint64_t s = 0; s < 1000; ++s)
    for (auto split : {data::WordSplit::Train, data::WordSplit::Val, data::WordSplit::Test})
      seeds.insert(data::word_split_seed(s, split));
  CHECK(seeds.size() == 3000);
  // Evaluation sets are fixed per (seed, split, length) and differ between splits.
  const auto v1 = data::word_eval_set(task, 1, data::WordSplit::Val, 64, 8);
  const auto v2 = data::word_eval_set(task, 1, data::WordSplit::Val, 64, 8);
  const auto t1 = data::word_eval_set(task, 1, data::WordSplit::Test, 64, 8);
  const auto s2 = data::word_eval_set(task, 2, data::WordSplit::Val, 64, 8);
  CHECK(v1.inputs == v2.inputs);
  CHECK(v1.inputs != t1.inputs);
  CHECK(v1.inputs != s2.inputs);
  // No validation or test word is a training word of the same run.
  data::WordBatcher train(task, 8, 64, 64, data::word_split_seed(1, data::WordSplit::Train));
  std::set<std::vector<int32_t>> train_words;
  for (int i = 0; i < 50; ++i) {
    const data::Batch x = train.next();
    for (int64_t r = 0; r < 8; ++r) train_words.insert({x.inputs.begin() + r * 64, x.inputs.begin() + (r + 1) * 64});
  }
  for (const auto* set : {&v1, &t1})
    for (int64_t r = 0; r < 8; ++r) CHECK(train_words.count({set->inputs.begin() + r * 64, set->inputs.begin() + (r + 1) * 64}) == 0);
}

TEST_CASE("group words: bad input ends in a one-line typed error") {
  auto expect = [](auto&& f, std::initializer_list<std::string> needles) {
    try {
      f();
      FAIL("expected a ValueError");
    } catch (const ValueError& e) {
      const std::string m = e.what();
      CHECK(one_line(m));
      for (const auto& n : needles) CHECK(m.find(n) != std::string::npos);
    }
  };
  expect([] { FiniteGroup("Q8"); }, {"Q8", "S<n>"});
  expect([] { FiniteGroup("S9"); }, {"S9", "n <= 7"});
  expect([] { FiniteGroup("A2"); }, {"A2"});
  expect([] { FiniteGroup("Z1"); }, {"Z1"});
  expect([] { FiniteGroup("Z05"); }, {"Z05"});
  expect([] { WordTask("S5", "some"); }, {"some", "generators"});
  expect([] { data::word_group_of("words:"); }, {"words:<group>"});
  const WordTask task("Z2");
  expect([&] { data::word_eval_set(task, 1, data::WordSplit::Test, 0, 4); }, {"length", ">= 1", "got 0"});
  expect([&] { data::word_eval_set(task, 1, data::WordSplit::Test, data::kMaxWordLength + 1, 4); },
         {std::to_string(data::kMaxWordLength + 1), "over the limit"});
  expect([&] { data::WordBatcher(task, 4, 0, 8, 1); }, {"min_len", "got 0"});
  expect([&] { data::WordBatcher(task, 4, 9, 8, 1); }, {"min_len", "max_len"});
  expect([&] { task.element_of(2); }, {"symbol 2"});
}
