// Progbar (kiln/modules/progress.h): Keras's Progbar arithmetic, drawn for a terminal or a log.
#include "kiln/modules/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>

namespace kiln::modules {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename... Ts>
std::string Format(const char* format, Ts... args) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), format, args...);
  return std::string(buf, n < 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1));
}

// Keras's ETA text: "1:02:03" over an hour, "2:03" over a minute, else "45s".
std::string EtaText(double eta) {
  const auto s = static_cast<long long>(eta);
  if (eta > 3600) return Format("%lld:%02lld:%02lld", s / 3600, (s % 3600) / 60, s % 60);
  if (eta > 60) return Format("%lld:%02lld", s / 60, s % 60);
  return Format("%llds", s);
}

}  // namespace

Progbar::Progbar(int64_t target, ProgbarOptions options)
    : target_(target < 0 ? 0 : target), options_(std::move(options)) {
  if (!options_.clock) options_.clock = SteadySeconds;
  if (options_.stream == nullptr) options_.stream = stdout;
  switch (options_.display) {
    case ProgbarOptions::Display::kTerminal:
      terminal_ = true;
      break;
    case ProgbarOptions::Display::kPlain:
      terminal_ = false;
      break;
    case ProgbarOptions::Display::kAuto:
      terminal_ = ::isatty(::fileno(options_.stream)) == 1;
      break;
  }
  start_ = options_.clock();
}

void Progbar::Update(int64_t current, const std::vector<std::pair<std::string, double>>& values) {
  for (const auto& [name, value] : values) {
    Metric* m = nullptr;
    for (Metric& existing : metrics_) {
      if (existing.name == name) m = &existing;
    }
    if (m == nullptr) m = &metrics_.emplace_back(Metric{.name = name});
    if (options_.stateful_metrics.count(name) != 0) {
      m->sum = value;
      m->weight = 1;
    } else {
      // Keras: the value stands for every step since the last update (at least one).
      const auto steps = static_cast<double>(std::max<int64_t>(current - seen_, 1));
      m->sum += value * steps;
      m->weight += steps;
    }
  }
  seen_ = current;
  const double now = options_.clock();
  Draw(now, target_ > 0 && current >= target_);
}

void Progbar::Add(int64_t n, const std::vector<std::pair<std::string, double>>& values) {
  Update(seen_ + n, values);
}

void Progbar::Finish() {
  if (!finished_) Draw(options_.clock(), /*finalize=*/true);
}

double Progbar::Value(const std::string& name) const {
  for (const Metric& m : metrics_) {
    if (m.name == name) return m.sum / std::max(m.weight, 1.0);
  }
  return 0;
}

// Keras's _estimate_step_duration: once past the first step, the steps after it (the first
// one traces or warms caches); before that, the average since the start.
double Progbar::StepSeconds(double now) {
  if (seen_ == 0) return 0;
  double per_step = 0;
  if (after_first_step_ >= 0 && seen_ > 1) {
    per_step = (now - after_first_step_) / static_cast<double>(seen_ - 1);
  } else {
    per_step = (now - start_) / static_cast<double>(seen_);
  }
  if (seen_ == 1) after_first_step_ = now;
  return per_step;
}

void Progbar::AppendTimePerUnit(std::string& s, double seconds, const std::string& unit) {
  if (seconds >= 1 || seconds == 0) {
    s += Format(" %.0fs/", seconds);
  } else if (seconds >= 1e-3) {
    s += Format(" %.0fms/", seconds * 1e3);
  } else {
    s += Format(" %.0fus/", seconds * 1e6);
  }
  s += unit;
}

std::string Progbar::Line(double now, bool finalize) {
  const double per_step = StepSeconds(now);
  std::string line;
  if (target_ > 0) {
    const int digits = static_cast<int>(std::log10(static_cast<double>(target_))) + 1;
    line = Format("%*lld/%lld [", digits, static_cast<long long>(seen_),
                  static_cast<long long>(target_));
    const double done = std::min(1.0, static_cast<double>(seen_) / static_cast<double>(target_));
    const int filled = static_cast<int>(options_.width * done);
    if (filled > 0) {
      line.append(static_cast<size_t>(filled - 1), '=');
      line += seen_ < target_ ? '>' : '=';
    }
    line.append(static_cast<size_t>(options_.width - filled), '.');
    line += ']';
  } else {
    line = Format("%7lld/Unknown", static_cast<long long>(seen_));
  }
  line += Format(" - %.0fs", now - start_);
  AppendTimePerUnit(line, per_step, options_.unit_name);
  for (const Metric& m : metrics_) {
    const double v = m.sum / std::max(m.weight, 1.0);
    line += " - " + m.name + ": " + Format(std::fabs(v) > 1e-3 ? "%.4f" : "%.4e", v);
  }
  if (!finalize && target_ > 0) {
    line += " - ETA: " + EtaText(per_step * static_cast<double>(target_ - seen_));
  }
  return line;
}

void Progbar::Draw(double now, bool finalize) {
  const double interval = terminal_ ? options_.interval : options_.plain_interval;
  if (!finalize && last_draw_ >= 0 && now - last_draw_ < interval) {
    StepSeconds(now);  // keeps the first-step mark, as Keras computes it on every update
    return;
  }
  std::string line = Line(now, finalize);
  std::string text;
  if (terminal_) {
    // Redraw in place; blank what a longer previous line left.
    const size_t width = line.size();
    text = "\r" + line;
    if (prev_width_ > width) text.append(prev_width_ - width, ' ');
    prev_width_ = width;
    if (finalize) text += '\n';
  } else {
    text = line + "\n";
  }
  std::fwrite(text.data(), 1, text.size(), options_.stream);
  std::fflush(options_.stream);
  last_draw_ = now;
  finished_ = finalize;
}

}  // namespace kiln::modules
