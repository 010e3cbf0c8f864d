#include "summary.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>
#include <utility>

#include "kiln/core/dtype.h"

namespace kiln::modules::internal {
namespace {

// Characters, not bytes: the box-drawing characters are 3 bytes in UTF-8 (cells hold ASCII).
std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// rich's ratio_reduce with Python's round (half to even).
std::vector<int> RatioReduce(int total, std::vector<int> values) {
  int total_ratio = static_cast<int>(values.size());
  int remaining = total;
  for (int& v : values) {
    const int distributed =
        std::min(v, static_cast<int>(std::nearbyint(static_cast<double>(remaining) / total_ratio)));
    v -= distributed;
    remaining -= distributed;
    --total_ratio;
  }
  return values;
}

// The content width of each column. Keras gives every column a fixed width from its positions;
// rich adds one space of padding on each side, and, the sum then exceeding the line less its
// borders, takes the excess back evenly (rich's last resort in _calculate_column_widths).
std::vector<int> ColumnWidths(const std::vector<double>& positions, int line_length) {
  std::vector<int> widths;
  int current = 0;
  for (double p : positions) {
    const int w = static_cast<int>(p * line_length) - current;
    widths.push_back(w + 2);
    current += w;
  }
  const int max_width = line_length - static_cast<int>(positions.size()) - 1;
  int total = 0;
  for (int w : widths) total += w;
  if (total > max_width) widths = RatioReduce(total - max_width, widths);
  for (int& w : widths) w = std::max(w - 2, 0);
  return widths;
}

// rich's word wrap for a column with overflow "ellipsis" (_wrap.divide_line, fold=False): a word
// with its trailing spaces goes on the line when the word fits, else it starts a new line; a
// word longer than the width keeps a line of its own, cut with "…" by Fit.
std::vector<std::string> Wrap(const std::string& text, int width) {
  std::vector<std::string> lines{""};
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find_first_not_of(' ', pos);
    end = end == std::string::npos ? text.size() : text.find(' ', end);
    if (end == std::string::npos) end = text.size();
    const size_t word_len = end - pos;  // without its trailing spaces
    end = text.find_first_not_of(' ', end);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(pos, end - pos);
    pos = end;
    const int offset = static_cast<int>(lines.back().size());
    if (width - offset >= static_cast<int>(word_len) || offset == 0) {
      lines.back() += word;
    } else {
      lines.push_back(word);
    }
  }
  return lines;
}

// A wrapped line cut to the width: trailing spaces first, then the end replaced by "…"
// (rich's rstrip_end and truncate with overflow "ellipsis"). Returns the text and its width in
// characters.
std::pair<std::string, int> Fit(std::string line, int width) {
  while (static_cast<int>(line.size()) > width && !line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  if (static_cast<int>(line.size()) <= width) return {line, static_cast<int>(line.size())};
  if (width <= 0) return {"", 0};
  return {line.substr(0, static_cast<size_t>(width - 1)) + "…", width};
}

std::string RStrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// One table row: cells wrapped, left- or right-justified, padded to the tallest cell.
std::string Row(const std::vector<std::string>& cells, const std::vector<int>& widths,
                const std::vector<bool>& right, const std::string& bar) {
  std::vector<std::vector<std::string>> wrapped;
  size_t height = 1;
  for (size_t i = 0; i < cells.size(); ++i) {
    wrapped.push_back(Wrap(cells[i], widths[i]));
    height = std::max(height, wrapped.back().size());
  }
  std::string out;
  for (size_t line = 0; line < height; ++line) {
    out += bar;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string text = line < wrapped[i].size() ? wrapped[i][line] : "";
      if (right[i]) text = RStrip(text);
      int shown = 0;
      std::tie(text, shown) = Fit(text, widths[i]);
      const std::string pad(static_cast<size_t>(widths[i] - shown), ' ');
      out += " " + (right[i] ? pad + text : text + pad) + " " + bar;
    }
    out += "\n";
  }
  return out;
}

std::string Rule(const std::vector<int>& widths, const std::string& left, const std::string& fill,
                 const std::string& mid, const std::string& right) {
  std::string out = left;
  for (size_t i = 0; i < widths.size(); ++i) {
    out += Repeat(fill, widths[i] + 2) + (i + 1 == widths.size() ? right : mid);
  }
  return out + "\n";
}

// Keras's readable_memory_size: "211.60 KB".
std::string ReadableSize(double bytes) {
  static const char* kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int unit = 0;
  while (unit < 5 && bytes / 1024 >= 1) {
    bytes /= 1024;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f %s", bytes, kUnits[unit]);
  return buf;
}

struct Count {
  int64_t params = 0;
  double bytes = 0;
};

// Each variable once (a shared layer's appear once in Keras's weights too).
Count CountOf(const std::vector<trace::Variable>& vars) {
  Count c;
  std::set<const void*> seen;
  for (const trace::Variable& v : vars) {
    if (!seen.insert(v.resource().get()).second) continue;
    int64_t n = 1;
    for (int64_t d : v.shape().dims()) n *= d;
    c.params += n;
    c.bytes += static_cast<double>(n) * static_cast<double>(DTypeSize(v.dtype()));
  }
  return c;
}

}  // namespace

std::string WithCommas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string RenderSummary(const trace::Module& model, const std::vector<SummaryRow>& rows,
                          bool with_connections, int line_length) {
  std::vector<double> positions{0.45, 0.80, 1.0};
  std::vector<std::string> header{"Layer (type)", "Output Shape", "Param #"};
  std::vector<bool> right{false, false, true};
  if (with_connections) {
    positions = {0.3, 0.56, 0.74, 1.0};
    header.push_back("Connected to");
    right.push_back(false);
  }
  if (line_length <= 0) line_length = with_connections ? 108 : 88;
  const std::vector<int> widths = ColumnWidths(positions, line_length);

  std::string out = "Model: \"" + model.name() + "\"\n";
  out += Rule(widths, "┏", "━", "┳", "┓");
  out += Row(header, widths, right, "┃");
  out += Rule(widths, "┡", "━", "╇", "┩");
  for (size_t i = 0; i < rows.size(); ++i) {
    const SummaryRow& r = rows[i];
    std::vector<std::string> cells{
        r.name + " (" + r.type + ")", r.shape,
        r.built ? WithCommas(r.params) : WithCommas(r.params) + " (unbuilt)"};
    if (with_connections) cells.push_back(r.connections);
    if (i > 0) out += Rule(widths, "├", "─", "┼", "┤");
    out += Row(cells, widths, right, "│");
  }
  out += Rule(widths, "└", "─", "┴", "┘");
  const Count trainable = CountOf(model.trainable_variables());
  const Count frozen = CountOf(model.non_trainable_variables());
  out += " Total params: " + WithCommas(trainable.params + frozen.params) + " (" +
         ReadableSize(trainable.bytes + frozen.bytes) + ")\n";
  out += " Trainable params: " + WithCommas(trainable.params) + " (" +
         ReadableSize(trainable.bytes) + ")\n";
  out += " Non-trainable params: " + WithCommas(frozen.params) + " (" + ReadableSize(frozen.bytes) +
         ")\n";
  return out;
}

}  // namespace kiln::modules::internal
