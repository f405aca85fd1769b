// Typed exceptions thrown by liegrad's libraries. Library code never exits; the
// apps/ layer catches these and chooses the exit code. Every message should name
// the op, file, key or value at fault and what was expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace liegrad {

// Base of every liegrad exception.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Array shapes that do not fit an op ("matmul: (3,4) x (5,2): inner sizes 4 != 5").
struct ShapeError : Error {
  using Error::Error;
};
// A value out of its valid range (d < 1, lr <= 0, unknown name, ...).
struct ValueError : Error {
  using Error::Error;
};
// A configuration that is malformed or has unknown keys.
struct ConfigError : Error {
  using Error::Error;
};
// A file that cannot be read or written, or whose contents are not what was expected.
struct IoError : Error {
  using Error::Error;
};
// A numerical failure (non-finite loss, LAPACK failure to converge).
struct NumericError : Error {
  using Error::Error;
};

// A number for an error message, with all 17 significant digits, so the message shows
// exactly the value that was rejected (0.10000000000000001, not 0.1).
inline std::string number_for_message(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// A string from a user's file or command line, made safe to quote in a one-line message:
// control characters become escapes ('\n', '\t', '\x01'); other bytes (UTF-8 included)
// are kept.
inline std::string printable(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20 || u == 0x7f) {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace liegrad
