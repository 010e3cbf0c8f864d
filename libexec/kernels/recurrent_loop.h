// Keras's recurrent layers as one fused kernel. Keras exports an LSTM, GRU or SimpleRNN layer
// as a While loop whose body is one cell step over TensorLists; run op by op, every step pays
// the executor's per-op cost and a matrix-vector product per weight. When a While node's body
// and cond are recognised as such a loop (full/recurrent_loop_match.cc lists the forms), the
// loop runs here instead: one GEMM projects the inputs of every step at once, and each step is
// one product with the recurrent kernel and the cell's gates in a tight loop. Anything else, or
// any call whose values do not fit (dtypes, shapes, list bounds), runs the generic loop, which
// gives TF's results and errors. KILN_RECURRENT_FUSION=0 turns the fused kernel off (for
// comparisons); =log says on stderr which nodes it takes.
#pragma once

#include <memory>
#include <mutex>

#include "kiln/exec/op_table.h"

namespace kiln::exec {

struct RecurrentLoop;

// What the CPU kernel keeps between calls of one fused loop: its input projection's weights
// packed for oneDNN, with the weight tensor they were packed from (kept so that its buffer is
// neither freed nor updated in place: a variable's new value is a new buffer, and a new
// buffer is packed again). Repacking on every call was a tenth of a small LSTM's call.
struct RecurrentLoopCache {
  std::mutex mu;
  std::shared_ptr<const void> packed;  // the CPU kernel's own type
};

// The fused form of a While node (its "body" and "cond" attrs, from ctx.library), or null when
// they are not a recognised recurrent loop. Full runtime only (it reads FunctionDefs).
std::shared_ptr<const RecurrentLoop> MatchRecurrentLoop(const PrepareContext& ctx);

// Runs the loop on the While node's inputs and sets its outputs; *ran is false, and nothing is
// set, when this call's values do not fit the fused kernel.
Status RunRecurrentLoop(const RecurrentLoop& loop, RecurrentLoopCache& cache,
                        const KernelContext& ctx, bool* ran);

}  // namespace kiln::exec
