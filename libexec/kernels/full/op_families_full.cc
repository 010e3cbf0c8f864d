// The full runtime's op table: every family (op_families.h).
#include "kernels/op_families.h"
#include "kernels/op_table_builder.h"

namespace kiln::exec {

void ListOpFamilies(OpTableBuilder& b) {
#define KILN_ADD_FAMILY(F) b.Add(#F, F##OpDefs(), F##CpuKernels());
  KILN_OP_FAMILIES(KILN_ADD_FAMILY)
  KILN_OP_FAMILIES_FULL_ONLY(KILN_ADD_FAMILY)
#undef KILN_ADD_FAMILY
}

std::string_view OpTableNote() { return ""; }

}  // namespace kiln::exec
