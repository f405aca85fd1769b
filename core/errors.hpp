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

}  // namespace liegrad
