// The trainer's progress output for people: whole lines ("say"), and the step line,
// either appended as a line per log window or redrawn in place as a bar (terminals).
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

namespace liegrad::train {

// "1h05m" or "3m07s".
std::string format_duration(double seconds);

class Console {
 public:
  // log: null = silent.
  Console(std::ostream* log, bool bar) : log_(log), bar_(bar) {}

  void say(const std::string& line);
  // The step line: step done/total, the window's mean loss, its metric, tokens/s and ETA.
  void progress(int64_t done, int64_t total, double loss, const std::string& metric_name, double metric, double tps,
                double eta_seconds);
  // Ends a redrawn bar with a newline.
  void end_progress();

 private:
  std::ostream* log_;
  bool bar_;
  bool bar_open_ = false;
};

}  // namespace liegrad::train
