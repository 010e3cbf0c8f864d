// The arguments of the recurrent cells' gradients (names, ranks and symbolic dims), their kinds
// and prepared state, shared by their definitions (kernels/rnn_grad_ops.cc) and CPU kernels
// (kernels/cpu/rnn_grad_ops.cc).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/kernel_util.h"

namespace kiln::exec::rnn_grad {

// The symbolic dims of the ops' arguments: time, batch, input size, cell size, and the sums and
// multiples of them the weights have.
enum Sym : uint8_t { kT, kB, kN, kH, kNH, k2H, k4H };
inline constexpr const char* kSymNames[] = {
    "time",          "batch_size",   "input_size", "cell_size", "input_size + cell_size",
    "2 * cell_size", "4 * cell_size"};

struct ArgSpec {
  const char* name;
  int rank;
  Sym dims[3];
};

// The ops' arguments, after BlockLSTMGrad's seq_len_max.
inline constexpr ArgSpec kLstmCellIns[] = {
    {"x", 2, {kB, kN}},     {"cs_prev", 2, {kB, kH}}, {"h_prev", 2, {kB, kH}},
    {"w", 2, {kNH, k4H}},   {"wci", 1, {kH}},         {"wcf", 1, {kH}},
    {"wco", 1, {kH}},       {"b", 1, {k4H}},          {"i", 2, {kB, kH}},
    {"cs", 2, {kB, kH}},    {"f", 2, {kB, kH}},       {"o", 2, {kB, kH}},
    {"ci", 2, {kB, kH}},    {"co", 2, {kB, kH}},      {"cs_grad", 2, {kB, kH}},
    {"h_grad", 2, {kB, kH}}};
inline constexpr ArgSpec kLstmCellOuts[] = {{"cs_prev_grad", 2, {kB, kH}},
                                            {"dicfo", 2, {kB, k4H}},
                                            {"wci_grad", 1, {kH}},
                                            {"wcf_grad", 1, {kH}},
                                            {"wco_grad", 1, {kH}}};
inline constexpr ArgSpec kBlockLstmIns[] = {
    {"x", 3, {kT, kB, kN}},     {"cs_prev", 2, {kB, kH}},
    {"h_prev", 2, {kB, kH}},    {"w", 2, {kNH, k4H}},
    {"wci", 1, {kH}},           {"wcf", 1, {kH}},
    {"wco", 1, {kH}},           {"b", 1, {k4H}},
    {"i", 3, {kT, kB, kH}},     {"cs", 3, {kT, kB, kH}},
    {"f", 3, {kT, kB, kH}},     {"o", 3, {kT, kB, kH}},
    {"ci", 3, {kT, kB, kH}},    {"co", 3, {kT, kB, kH}},
    {"h", 3, {kT, kB, kH}},     {"cs_grad", 3, {kT, kB, kH}},
    {"h_grad", 3, {kT, kB, kH}}};
inline constexpr ArgSpec kBlockLstmOuts[] = {
    {"x_grad", 3, {kT, kB, kN}}, {"cs_prev_grad", 2, {kB, kH}}, {"h_prev_grad", 2, {kB, kH}},
    {"w_grad", 2, {kNH, k4H}},   {"wci_grad", 1, {kH}},         {"wcf_grad", 1, {kH}},
    {"wco_grad", 1, {kH}},       {"b_grad", 1, {k4H}}};
inline constexpr ArgSpec kGruIns[] = {
    {"x", 2, {kB, kN}}, {"h_prev", 2, {kB, kH}}, {"w_ru", 2, {kNH, k2H}}, {"w_c", 2, {kNH, kH}},
    {"b_ru", 1, {k2H}}, {"b_c", 1, {kH}},        {"r", 2, {kB, kH}},      {"u", 2, {kB, kH}},
    {"c", 2, {kB, kH}}, {"d_h", 2, {kB, kH}}};
inline constexpr ArgSpec kGruOuts[] = {{"d_x", 2, {kB, kN}},
                                       {"d_h_prev", 2, {kB, kH}},
                                       {"d_c_bar", 2, {kB, kH}},
                                       {"d_r_bar_u_bar", 2, {kB, k2H}}};

enum class Kind { kLstmCell, kBlockLstm, kBlockLstmV2, kGru };

struct RnnGradState : OpState {
  Kind kind = Kind::kLstmCell;
  DType t = DType::kFloat;
  bool peephole = false;
};

struct OpArgs {
  std::span<const ArgSpec> ins, outs;
  int k0;  // index of the first ArgSpec input (1 after BlockLSTMGrad's seq_len_max)
};

inline OpArgs ArgsOf(Kind k) {
  switch (k) {
    case Kind::kLstmCell:
      return {kLstmCellIns, kLstmCellOuts, 0};
    case Kind::kBlockLstm:
    case Kind::kBlockLstmV2:
      return {kBlockLstmIns, kBlockLstmOuts, 1};
    case Kind::kGru:
      break;
  }
  return {kGruIns, kGruOuts, 0};
}

// A dim's value from T, B, N, H (any unknown -1 makes the derived ones unknown).
inline int64_t SymValue(const int64_t d[4], Sym s) {
  switch (s) {
    case kNH:
      return d[kN] < 0 || d[kH] < 0 ? -1 : d[kN] + d[kH];
    case k2H:
      return d[kH] < 0 ? -1 : 2 * d[kH];
    case k4H:
      return d[kH] < 0 ? -1 : 4 * d[kH];
    default:
      return d[s];
  }
}

// "(input_size + cell_size, 4 * cell_size)".
inline std::string SymShapeString(const ArgSpec& a) {
  std::string s = "(";
  for (int k = 0; k < a.rank; ++k) s += std::string(k ? ", " : "") + kSymNames[a.dims[k]];
  return s + (a.rank == 1 ? ",)" : ")");
}

}  // namespace kiln::exec::rnn_grad
