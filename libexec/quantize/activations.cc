#include "quantize/activations.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/exec/host_callback.h"
#include "quantize/calibration.h"

namespace kiln::exec::quantize {
namespace fs = std::filesystem;
namespace {

// One activation tensor of one scope and the sites that read it.
struct Group {
  int scope = 0;
  std::string tensor;
  std::vector<ActivationSite> sites;
};

std::string NodeOf(const std::string& tensor) { return tensor.substr(0, tensor.find(':')); }

void SetFloatList(tensorflow::NodeDef* n, const char* attr) {
  (*n->mutable_attr())[attr].mutable_list()->add_type(tensorflow::DT_FLOAT);
}

// Removes the calibration copy (its links, never what they point to) however the run ends.
struct RemoveOnExit {
  fs::path dir;
  ~RemoveOnExit() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

constexpr std::string_view kCalibrationPrefix = "kiln-calibration-";

// Removes the calibration copies in `tmp` of runs that died without their RemoveOnExit (kill
// -9): named kiln-calibration-PID-..., their PID no longer alive.
void RemoveStaleCopies(const fs::path& tmp) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(tmp, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(kCalibrationPrefix)) continue;
    const std::string rest = name.substr(kCalibrationPrefix.size());
    const pid_t pid = static_cast<pid_t>(std::atoll(rest.c_str()));
    if (pid <= 0 || rest.find('-') == std::string::npos || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno == EPERM) continue;  // alive
    std::error_code dec;
    if (it->is_directory(dec) && !it->is_symlink(dec)) stale.push_back(it->path());
  }
  for (const fs::path& p : stale) fs::remove_all(p, ec);  // links, never what they point to
}

fs::path CalibrationDir() {
  static std::atomic<int> counter{0};
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  RemoveStaleCopies(tmp);
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  return tmp / (std::string(kCalibrationPrefix) + std::to_string(::getpid()) + "-" +
                std::to_string(stamp) + "-" + std::to_string(counter++));
}

}  // namespace

Status QuantizeActivations(const fs::path& input, const tensorflow::SavedModel& float_proto,
                           int meta_graph, MetaGraphUses* graph,
                           const std::vector<VariableUses>& quantized,
                           const QuantizeOptions& options,
                           std::vector<QuantizedActivation>* activations) {
  std::vector<Group> groups;
  std::map<std::pair<int, std::string>, size_t> index;
  for (const VariableUses& uses : quantized)
    for (const ActivationSite& site : graph->ActivationSites(uses)) {
      const std::string tensor = graph->SiteTensor(site);
      auto [it, fresh] = index.emplace(std::make_pair(site.scope, tensor), groups.size());
      if (fresh) groups.push_back({site.scope, tensor, {}});
      groups[it->second].sites.push_back(site);
    }
  for (const Group& g : groups) {
    QuantizedActivation a;
    a.function = graph->ScopeName(g.scope);
    a.tensor = g.tensor;
    std::set<std::string> ops;
    for (const ActivationSite& s : g.sites)
      if (ops.insert(graph->SiteOp(s)).second) a.consumers.push_back(graph->SiteOp(s));
    activations->push_back(std::move(a));
  }
  if (groups.empty()) return OkStatus();
  if (options.dry_run) {
    for (auto& a : *activations) a.kept_because = "not calibrated (a dry run)";
    return OkStatus();
  }
  if (!options.calibrate)
    return InvalidArgument(
        "--mode int8 needs calibration data: the activations' ranges come "
        "from running the float model on it");

  // The float model with a host callback on each activation, linked to the input's files.
  tensorflow::SavedModel observed = float_proto;
  MetaGraphUses view(observed.mutable_meta_graphs(meta_graph));
  std::vector<std::shared_ptr<RangeObserver>> seen;
  std::vector<std::shared_ptr<const HostCallbackEntry>> callbacks;
  for (const Group& g : groups) {
    auto observer = std::make_shared<RangeObserver>();
    seen.push_back(observer);
    callbacks.push_back(RegisterHostCallback(
        "calibration of '" + g.tensor + "'",
        [observer](std::span<const Tensor> in, std::vector<Tensor>* out) -> Status {
          if (in.size() == 1 && in[0].dtype() == DType::kFloat)
            observer->Add(in[0].data<float>(), in[0].NumElements());
          out->assign(in.begin(), in.end());
          return OkStatus();
        }));
    tensorflow::NodeDef n;
    n.set_op("EagerPyFunc");
    (*n.mutable_attr())["token"].set_s(callbacks.back()->token);
    SetFloatList(&n, "Tin");
    SetFloatList(&n, "Tout");
    (*n.mutable_attr())["is_async"].set_b(false);
    view.InsertOnInputs(g.sites, NodeOf(g.tensor) + "/calibration", std::move(n), "output");
  }
  RemoveOnExit copy{CalibrationDir()};
  KILN_RETURN_IF_ERROR_CTX(WriteLinkedBundle(input, copy.dir, observed),
                           "writing the calibration copy");
  KILN_RETURN_IF_ERROR_CTX(options.calibrate(copy.dir), "calibrating the activations");
  callbacks.clear();

  for (size_t i = 0; i < groups.size(); ++i) {
    QuantizedActivation& a = (*activations)[i];
    ChooseRange(*seen[i], options, &a);
    if (!a.kept_because.empty()) continue;
    tensorflow::NodeDef fq;
    fq.set_op("FakeQuantWithMinMaxArgs");
    (*fq.mutable_attr())["min"].set_f(a.min);
    (*fq.mutable_attr())["max"].set_f(a.max);
    (*fq.mutable_attr())["num_bits"].set_i(8);
    (*fq.mutable_attr())["narrow_range"].set_b(a.narrow_range);
    graph->InsertOnInputs(groups[i].sites, NodeOf(groups[i].tensor) + "/quantize_activation",
                          std::move(fq), "outputs");
  }
  return OkStatus();
}

}  // namespace kiln::exec::quantize
