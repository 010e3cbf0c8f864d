// Keras 3's model.summary() text (keras/src/utils/summary_utils.py), as `rich` renders it when
// the output is captured (no colours): a box-drawn table with fixed column widths, cells
// word-wrapped within their column, then the parameter totals with their sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/trace/module.h"

namespace kiln::modules::internal {

struct SummaryRow {
  std::string name;   // "dense"
  std::string type;   // "Dense"
  std::string shape;  // "(None, 10)", or "?" when unknown
  int64_t params = 0;
  bool built = true;        // "0 (unbuilt)" otherwise
  std::string connections;  // functional models only: "dense[0][0], x[0][0]" or "-"
};

// `with_connections` selects Keras's functional layout (4 columns, 108 wide) over the
// sequential one (3 columns, 88 wide); `line_length` <= 0 takes that default. The totals count
// `model`'s variables.
std::string RenderSummary(const trace::Module& model, const std::vector<SummaryRow>& rows,
                          bool with_connections, int line_length);

// 54170 -> "54,170" (Python's "{:,}").
std::string WithCommas(int64_t n);

}  // namespace kiln::modules::internal
