// The protobuf-free runtime's op table (KILN_MINIMAL_RUNTIME): the families of op_families.h's
// first list, leaving out those that need a library this runtime does not link. A plan that uses
// one of their ops is refused at load, naming the op.
#include "kernels/op_families.h"
#include "kernels/op_table_builder.h"

namespace kiln::exec {

void ListOpFamilies(OpTableBuilder& b) {
#define KILN_ADD_FAMILY(F) b.Add(#F, F##OpDefs(), F##CpuKernels());
  KILN_OP_FAMILIES(KILN_ADD_FAMILY)
#undef KILN_ADD_FAMILY
}

std::string_view OpTableNote() { return ""; }

}  // namespace kiln::exec
