// Einsum's type list, equation parsing and op state, shared by its definition (and the
// one-product plan of einsum_plan.h) and its CPU kernel.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <complex>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::einsum {

using EinsumTypes =
    TypeList<float, double, int32_t, int64_t, std::complex<float>, std::complex<double>>;

// An equation: per input and for the output, its labels. Named labels are their characters;
// an ellipsis stands for ellipsis_rank dims labelled -1, -2, ... from the right.
struct Equation {
  std::vector<std::string> inputs;  // subscripts as written
  std::string output;
  bool has_output = false;  // "->" given (else: labels seen once, in order, plus ellipsis)
};

inline Result<Equation> ParseEquation(const std::string& eq, int n_inputs) {
  Equation e;
  const size_t arrow = eq.find("->");
  const std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  if (arrow != std::string::npos) {
    e.output = eq.substr(arrow + 2);
    e.has_output = true;
  }
  size_t start = 0;
  for (;;) {
    const size_t comma = lhs.find(',', start);
    e.inputs.push_back(
        lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(e.inputs.size()) != n_inputs)
    return InvalidArgument("equation '", eq, "' has ", e.inputs.size(), " input subscripts for ",
                           n_inputs, " inputs");
  auto check = [&](const std::string& s) -> Status {
    const size_t dots = s.find("...");
    if (dots != std::string::npos && s.find("...", dots + 3) != std::string::npos)
      return InvalidArgument("equation '", eq, "': more than one ellipsis in '", s, "'");
    for (size_t i = 0; i < s.size(); ++i) {
      if (dots != std::string::npos && i >= dots && i < dots + 3) continue;
      const char c = s[i];
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return InvalidArgument("equation '", eq, "': '", std::string(1, c),
                               "' is not a label (letters and one '...')");
    }
    return OkStatus();
  };
  for (const std::string& s : e.inputs) KILN_RETURN_IF_ERROR(check(s));
  KILN_RETURN_IF_ERROR(check(e.output));
  return e;
}

// Labels of a subscript for an operand of `rank` dims: letters as themselves, ellipsis dims as
// -k ... -1, numbered from the right so that ellipses of different ranks align.
inline Result<std::vector<int>> Labels(const std::string& s, int rank, int* ellipsis_rank) {
  const size_t dots = s.find("...");
  const int named = static_cast<int>(s.size()) - (dots == std::string::npos ? 0 : 3);
  std::vector<int> labels;
  if (dots == std::string::npos) {
    if (rank >= 0 && rank != named)
      return InvalidArgument("subscript '", s, "' has ", named, " labels for an input of rank ",
                             rank);
    for (char c : s) labels.push_back(c);
    return labels;
  }
  const int ell = rank >= 0 ? rank - named : 0;
  if (ell < 0)
    return InvalidArgument("subscript '", s, "' has ", named, " labels for an input of rank ",
                           rank);
  *ellipsis_rank = std::max(*ellipsis_rank, ell);
  for (size_t i = 0; i < dots; ++i) labels.push_back(s[i]);
  for (int k = ell; k >= 1; --k) labels.push_back(-k);  // -k: k-th ellipsis dim from the right
  for (size_t i = dots + 3; i < s.size(); ++i) labels.push_back(s[i]);
  return labels;
}

// The output labels: as written, or (implicit mode) the ellipsis then the labels that appear
// exactly once, in alphabetical order, as numpy does.
inline std::vector<int> OutputLabels(const Equation& e, const std::vector<std::vector<int>>& in,
                                     int ellipsis_rank) {
  std::vector<int> out;
  if (e.has_output) {
    const size_t dots = e.output.find("...");
    for (size_t i = 0; i < e.output.size(); ++i) {
      if (dots != std::string::npos && i == dots) {
        for (int k = ellipsis_rank; k >= 1; --k) out.push_back(-k);
        i += 2;
        continue;
      }
      out.push_back(e.output[i]);
    }
    return out;
  }
  for (int k = ellipsis_rank; k >= 1; --k) out.push_back(-k);
  std::map<int, int> count;
  for (const auto& labels : in)
    for (int l : labels)
      if (l > 0) ++count[l];
  for (const auto& [l, n] : count)
    if (n == 1) out.push_back(l);
  return out;
}

struct EinsumState : OpState {
  Equation eq;
  DType dtype = DType::kFloat;
  // Operand i's subscript repeats a letter ("bii"): the kernel takes its diagonal first.
  std::array<bool, 2> diagonal{};
};

}  // namespace kiln::exec::einsum
