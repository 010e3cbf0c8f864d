// Progbar: Keras's keras.utils.Progbar for a training loop written in C++.
//
//   modules::Progbar bar(steps);
//   for (int step = 1; step <= steps; ++step) {
//     ... run one step ...
//     bar.Update(step, {{"loss", loss}, {"accuracy", accuracy}});
//   }
//
// On a terminal it redraws one line with '\r' (at most every `interval` seconds, and always the
// last step), as Keras's verbose=1 does:
//
//     37/100 [==========>...................] - 1s 21ms/step - loss: 0.2685 - ETA: 1s
//    100/100 [==============================] - 2s 21ms/step - loss: 0.1932
//
// that is: step/target, the bar (Keras 2's ASCII bar), seconds since the start, the time per
// step (Keras's estimate: the first step, which usually traces, is left out once there are
// two), each metric, and the ETA while not finished. Anywhere else (a log file, a pipe) it
// prints the same text as whole lines, never a '\r', at most every `plain_interval` seconds,
// plus the last step's line.
//
// Metrics, as Keras's Progbar: a value not named in `stateful_metrics` is shown as its average
// over the steps so far, each update weighted by the steps it covers (Update(10, ..) after
// Update(4, ..) counts 6 times); a stateful metric (one that already is a running value, such
// as a learning rate or an accuracy the caller accumulates) is shown as last given. Values
// print as Keras prints them: "%.4f", or "%.4e" when |v| <= 1e-3.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kiln::modules {

struct ProgbarOptions {
  enum class Display {
    kAuto,      // a terminal when isatty(fileno(stream))
    kTerminal,  // one line redrawn with '\r'
    kPlain,     // whole lines at a bounded rate
  };
  FILE* stream = stdout;  // Keras prints to stdout; the tools pass stderr
  Display display = Display::kAuto;
  int width = 30;               // characters of the bar
  double interval = 0.05;       // seconds between redraws on a terminal (Keras's default)
  double plain_interval = 1.0;  // seconds between plain lines
  std::string unit_name = "step";
  std::set<std::string> stateful_metrics;
  // Seconds on any monotonic scale; default: std::chrono::steady_clock. Tests inject a fake.
  std::function<double()> clock;
};

class Progbar {
 public:
  // `target`: the number of steps, or 0 when unknown (then "  37/Unknown" and no bar or ETA).
  explicit Progbar(int64_t target, ProgbarOptions options = {});

  // Steps `current` (1-based: the number done) with this step's metric values, in display
  // order (new names are appended to the order). Draws when the display's rate allows it, and
  // always when `current` reaches the target (the final line).
  void Update(int64_t current, const std::vector<std::pair<std::string, double>>& values = {});
  // Update(current + n, values): `n` more steps.
  void Add(int64_t n, const std::vector<std::pair<std::string, double>>& values = {});
  // Draws the current state as the final line, if the target was not reached (an early stop).
  void Finish();

  bool terminal() const { return terminal_; }
  // The metric as displayed now (the average, or the last value of a stateful metric).
  double Value(const std::string& name) const;

 private:
  struct Metric {
    std::string name;
    double sum = 0;     // value x steps, or the last value when stateful
    double weight = 0;  // steps summed
  };
  void Draw(double now, bool finalize);
  std::string Line(double now, bool finalize);
  double StepSeconds(double now);
  static void AppendTimePerUnit(std::string& s, double seconds, const std::string& unit);

  int64_t target_;
  ProgbarOptions options_;
  bool terminal_ = false;
  double start_ = 0;
  double last_draw_ = -1;  // -1: nothing drawn yet
  double after_first_step_ = -1;
  int64_t seen_ = 0;
  size_t prev_width_ = 0;
  bool finished_ = false;
  std::vector<Metric> metrics_;
};

}  // namespace kiln::modules
