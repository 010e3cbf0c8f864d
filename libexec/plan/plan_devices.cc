// A serving plan's devices: the list it was compiled for (a load for other devices does not use
// it) and the measured choices of their kernels (device/tuning_records.h) a load takes over.
#include <string>
#include <vector>

#include "device/tuning_records.h"
#include "kiln/exec/device.h"
#include "kiln/plan_generated.h"
#include "plan/plan_reader.h"

namespace kiln::exec {

namespace kp = ::kiln::plan;

namespace {

size_t SizeOf(const auto* v) { return v == nullptr ? 0 : v->size(); }

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

std::vector<std::string> ServingPlan::DeviceNames() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < SizeOf(root_->devices()); ++i)
    names.push_back(root_->devices()->Get(i)->str());
  if (names.empty()) names.push_back(HostDevice()->name());  // written before GPU plans
  return names;
}

size_t ServingPlan::ImportTuning(std::span<Device* const> devices) const {
  size_t added = 0;
  for (const Device* d : devices) {
    const std::string name = d->name();
    std::vector<tuning::Record> records;
    for (size_t i = 0; i < SizeOf(root_->tuning()); ++i) {
      const kp::TuningRecord* r = root_->tuning()->Get(i);
      if (r->device()->string_view() != name) continue;
      const auto* v = r->value();
      records.push_back(
          {r->key()->str(), v == nullptr ? std::string() : std::string(v->begin(), v->end())});
    }
    added += tuning::Import(*d, records);
  }
  return added;
}

std::string ServingPlan::DeviceMismatch(std::span<Device* const> devices) const {
  std::vector<std::string> load_devices;
  for (const Device* d : devices) load_devices.push_back(d->name());
  const std::vector<std::string> planned = DeviceNames();
  if (planned == load_devices) return "";
  return "it was compiled for the devices '" + Join(planned) + "', this load places on '" +
         Join(load_devices) + "' (compile with --device " + Join(planned) +
         " for this load's devices)";
}

}  // namespace kiln::exec
