// Progress of a subcommand's long work (compile's functions, bench's warmup and timed runs), on
// the command's `err` stream, never on `out` (bench --json stays one JSON object).
//
// The CLI links kiln::exec, not kiln::modules, so this is a small helper of its own rather than
// modules::Progbar (which is Keras's training display, with metric averages and a FILE*):
//  - when `err` is the process's stderr and that is a terminal: one line redrawn with '\r'
//    ("bench: timed runs 120/1000 [=====>.........] 3s"), at most 10 times a second, and
//    cleared when the work is done, so the command's own output is unchanged;
//  - otherwise (a log, a pipe, a test's stream): plain lines, and only for long work: none in
//    the first kPlainAfter seconds, then at most one every kPlainEvery seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace kiln::cli {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr double kPlainAfter = 10;
  static constexpr double kPlainEvery = 10;

  // `what`: "bench: timed runs"; `total`: the steps expected, 0 when unknown.
  Progress(std::ostream& err, std::string what, int64_t total);
  // Same, with the display given (tests).
  Progress(std::ostream& err, std::string what, int64_t total, bool terminal);
  ~Progress() { Done(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` steps finished; `detail` names the current one ("signature 'serving_default'").
  void Update(int64_t done, std::string_view detail = {});
  void set_total(int64_t total) { total_ = total; }
  // Clears a terminal's line (once).
  void Done();

  // The text of a line: "what 3/7 [=========>....] 2s detail" (no bar without a total).
  static std::string Line(std::string_view what, int64_t done, int64_t total, double seconds,
                          std::string_view detail);

 private:
  std::ostream& err_;
  std::string what_;
  int64_t total_;
  bool terminal_;
  Clock::time_point start_ = Clock::now();
  double last_ = -1;  // seconds at the last line drawn; -1: none
  size_t width_ = 0;  // of the line on a terminal
};

}  // namespace kiln::cli
