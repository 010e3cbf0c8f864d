// `savedmodel-cli show --placement`: loads the bundle on a device list and prints, per
// signature, where each step of its schedule runs and what crosses between devices per call.
#include <iomanip>
#include <sstream>

#include "kiln/exec/saved_model.h"
#include "run.h"
#include "show.h"

namespace kiln::cli {
namespace {

void PrintFunction(const exec::PreparedFunction& fn, std::ostream& out) {
  const exec::PlanStats& st = fn.plan_stats();
  out << "  " << st.steps << " steps:";
  for (const auto& [device, n] : st.device_steps) out << " " << device << " " << n << ";";
  out << " copies " << st.copies;
  if (st.copies > 0) {
    out << " (";
    if (st.copy_bytes >= 0) {
      out << st.copy_bytes << " bytes per call)";
    } else {
      out << "bytes depend on the input shapes)";
    }
  }
  out << "\n";
  size_t width = 4;
  const std::vector<exec::ScheduledStep> schedule = fn.Schedule();
  for (const exec::ScheduledStep& s : schedule) width = std::max(width, s.node_name.size());
  for (const exec::ScheduledStep& s : schedule) {
    out << "    " << std::left << std::setw(static_cast<int>(width)) << s.node_name << "  "
        << std::setw(24) << s.op << " " << s.device;
    if (!s.from.empty()) {
      out << " <- " << s.from;
      if (s.bytes >= 0) out << " (" << s.bytes << " bytes)";
    }
    out << "\n";
  }
}

}  // namespace

Status ShowPlacement(const PlacementOptions& options, std::ostream& out) {
  exec::LoadOptions lo;
  lo.restored_functions = false;  // signatures only, as the server loads
  lo.tags = SplitCommaList(options.tag_set);
  lo.devices = SplitCommaList(options.devices);
  if (options.signature_def) lo.signatures = {*options.signature_def};
  KILN_ASSIGN_OR_RETURN(auto model, exec::SavedModel::Load(options.dir, lo));
  KILN_ASSIGN_OR_RETURN(std::vector<exec::Device*> devices, exec::ResolveDevices(lo.devices));
  std::ostringstream text;
  text << "Devices, in priority order:";
  for (const exec::Device* d : devices) text << " " << d->name();
  text << "\n";
  for (const std::string& name : model->SignatureNames()) {
    KILN_ASSIGN_OR_RETURN(const exec::Signature* sig, model->GetSignature(name));
    text << "signature '" << name << "':\n";
    PrintFunction(sig->function(), text);
  }
  out << text.str();
  return OkStatus();
}

}  // namespace kiln::cli
