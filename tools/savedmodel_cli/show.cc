#include "show.h"

#include "kiln/exec/saved_model.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::cli {

Status Show(const ShowOptions& options, std::ostream& out) {
  if (options.signature_def && !options.tag_set)
    return InvalidArgument("--signature_def needs --tag_set (the tag-set of its MetaGraphDef)");
  KILN_ASSIGN_OR_RETURN(auto model, exec::ReadSavedModelProto(options.dir));
  return options.json ? ShowJson(*model, options, out) : ShowText(*model, options, out);
}

}  // namespace kiln::cli
