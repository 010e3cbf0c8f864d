// Progress (progress.h): a subcommand's long work on its err stream.
#include "progress.h"

#include <unistd.h>

#include <iostream>

namespace kiln::cli {
namespace {

constexpr int kBarWidth = 20;
constexpr double kTerminalEvery = 0.1;

}  // namespace

Progress::Progress(std::ostream& err, std::string what, int64_t total)
    : Progress(err, std::move(what), total, &err == &std::cerr && ::isatty(STDERR_FILENO) == 1) {}

Progress::Progress(std::ostream& err, std::string what, int64_t total, bool terminal)
    : err_(err), what_(std::move(what)), total_(total), terminal_(terminal) {}

std::string Progress::Line(std::string_view what, int64_t done, int64_t total, double seconds,
                           std::string_view detail) {
  std::string line(what);
  line += " " + std::to_string(done);
  if (total > 0) {
    line += "/" + std::to_string(total) + " [";
    const auto filled = static_cast<int>(kBarWidth * std::min<int64_t>(done, total) / total);
    line.append(static_cast<size_t>(filled), '=');
    if (filled < kBarWidth) line += '>';
    line.append(static_cast<size_t>(kBarWidth - filled - (filled < kBarWidth ? 1 : 0)), '.');
    line += "]";
  }
  line += " " + std::to_string(static_cast<int64_t>(seconds)) + "s";
  if (!detail.empty()) line += " " + std::string(detail);
  return line;
}

void Progress::Update(int64_t done, std::string_view detail) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  if (done > total_) total_ = 0;  // more than expected (bench's --min_seconds): a count
  if (terminal_) {
    if (last_ >= 0 && seconds - last_ < kTerminalEvery && done != total_) return;
    const std::string line = Line(what_, done, total_, seconds, detail);
    err_ << "\r" << line;
    if (width_ > line.size()) err_ << std::string(width_ - line.size(), ' ');
    width_ = line.size();
  } else {
    if (seconds < kPlainAfter || (last_ >= 0 && seconds - last_ < kPlainEvery)) return;
    err_ << Line(what_, done, total_, seconds, detail) << "\n";
  }
  err_.flush();
  last_ = seconds;
}

void Progress::Done() {
  if (terminal_ && width_ > 0) {
    err_ << "\r" << std::string(width_, ' ') << "\r";
    err_.flush();
  }
  width_ = 0;
}

}  // namespace kiln::cli
