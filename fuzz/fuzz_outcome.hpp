// The contract every fuzz target checks: an input ends in success or in a typed
// liegrad::Error whose message is one line. Anything else (another exception, an
// empty or multi-line message) aborts, which libFuzzer reports as a crash with the
// input; crashes, leaks, hangs and undefined behaviour are caught by libFuzzer, ASan
// and UBSan themselves.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/errors.hpp"

namespace liegrad::fuzz {

[[noreturn]] inline void fail(const char* what, const std::string& message) {
  std::fprintf(stderr, "fuzz contract broken: %s: %s\n", what, message.c_str());
  std::abort();
}

// Runs f(); returns normally on success or on a typed one-line error.
template <class F>
void expect_clean_outcome(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    const std::string m = e.what();
    if (m.empty()) fail("empty error message", m);
    if (m.find('\n') != std::string::npos || m.find('\r') != std::string::npos) fail("multi-line error message", m);
  } catch (const std::exception& e) {
    fail("untyped exception (not a liegrad::Error)", e.what());
  } catch (...) {
    fail("non-std exception", "");
  }
}

}  // namespace liegrad::fuzz
