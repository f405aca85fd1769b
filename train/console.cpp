// The trainer's progress output (see console.hpp).
#include "train/console.hpp"

#include <cstdio>

namespace liegrad::train {

std::string format_duration(double s) {
  char buf[32];
  const int64_t t = static_cast<int64_t>(s + 0.5);
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(t / 3600), static_cast<long long>(t / 60 % 60));
  else
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(t / 60), static_cast<long long>(t % 60));
  return buf;
}

void Console::say(const std::string& s) {
  if (!log_) return;
  end_progress();
  *log_ << s << "\n" << std::flush;
}

void Console::progress(int64_t done, int64_t total, double loss, const std::string& name, double metric, double tps,
                       double eta) {
  if (!log_) return;
  char line[256];
  if (bar_) {
    const int width = 24;
    const int filled = static_cast<int>(width * done / total);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(static_cast<size_t>(width), '.');
    std::snprintf(line, sizeof line, "\rstep %lld/%lld [%s] loss %.4f  %s %.4f  %.0f tok/s  ETA %s ",
                  static_cast<long long>(done), static_cast<long long>(total), bar.c_str(), loss, name.c_str(), metric,
                  tps, format_duration(eta).c_str());
    *log_ << line << std::flush;
    bar_open_ = true;
  } else {
    std::snprintf(line, sizeof line, "step %lld/%lld loss %.4f %s %.4f %.0f tok/s ETA %s", static_cast<long long>(done),
                  static_cast<long long>(total), loss, name.c_str(), metric, tps, format_duration(eta).c_str());
    *log_ << line << "\n" << std::flush;
  }
}

void Console::end_progress() {
  if (bar_open_ && log_) *log_ << "\n";
  bar_open_ = false;
}

}  // namespace liegrad::train
