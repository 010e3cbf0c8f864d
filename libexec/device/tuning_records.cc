#include "device/tuning_records.h"

#include <map>
#include <mutex>

#include "kiln/exec/device.h"

namespace kiln::exec::tuning {
namespace {

// Keyed by the device's name ("gpu:0"): devices live for the process, and a name is what a
// plan records.
struct Store {
  std::mutex mu;
  std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> records;
};

Store& TheStore() {
  static Store* store = new Store();  // never destroyed: kernels may record during exit
  return *store;
}

bool Fits(std::string_view key, std::string_view value) {
  return !key.empty() && key.size() <= kMaxKeyBytes && value.size() <= kMaxValueBytes;
}

}  // namespace

std::optional<std::string> Find(const Device& device, std::string_view key) {
  Store& s = TheStore();
  std::lock_guard lock(s.mu);
  auto d = s.records.find(device.name());
  if (d == s.records.end()) return std::nullopt;
  auto it = d->second.find(key);
  if (it == d->second.end()) return std::nullopt;
  return it->second;
}

bool Put(const Device& device, std::string_view key, std::string_view value) {
  if (!Fits(key, value)) return false;
  Store& s = TheStore();
  std::lock_guard lock(s.mu);
  auto& records = s.records[device.name()];
  auto it = records.find(key);
  if (it != records.end()) {
    it->second = std::string(value);
    return true;
  }
  if (records.size() >= kMaxRecords) return false;
  records.emplace(std::string(key), std::string(value));
  return true;
}

std::vector<Record> Export(const Device& device) {
  Store& s = TheStore();
  std::lock_guard lock(s.mu);
  std::vector<Record> out;
  auto d = s.records.find(device.name());
  if (d == s.records.end()) return out;
  out.reserve(d->second.size());
  for (const auto& [key, value] : d->second) out.push_back({key, value});
  return out;
}

size_t Import(const Device& device, std::span<const Record> records) {
  Store& s = TheStore();
  std::lock_guard lock(s.mu);
  auto& mine = s.records[device.name()];
  size_t added = 0;
  for (const Record& r : records) {
    if (!Fits(r.key, r.value) || mine.size() >= kMaxRecords) continue;
    added += mine.emplace(r.key, r.value).second ? 1 : 0;
  }
  return added;
}

void Clear(const Device& device) {
  Store& s = TheStore();
  std::lock_guard lock(s.mu);
  s.records.erase(device.name());
}

}  // namespace kiln::exec::tuning
