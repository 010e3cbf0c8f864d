#include "device/cpu_quota.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace kiln::exec::internal {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::optional<long long> ParseInt(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  const std::string text(s);
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// One hierarchy: where it is mounted and the process's path inside it.
struct Hierarchy {
  std::string dir;  // the process's cgroup directory
  std::string top;  // the mount point: the walk up stops here
};

// The mount of a hierarchy (cgroup2, or the v1 one whose super options name `controller`) and
// the process's directory in it; nullopt when there is none.
std::optional<Hierarchy> FindHierarchy(std::string_view mountinfo, bool v2,
                                       std::string_view controller, std::string_view path) {
  for (std::string_view line : Split(mountinfo, '\n')) {
    const size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const std::vector<std::string_view> pre = Split(line.substr(0, dash), ' ');
    const std::vector<std::string_view> post = Split(line.substr(dash + 3), ' ');
    if (pre.size() < 5 || post.size() < 3) continue;
    if (v2 != (post[0] == "cgroup2")) continue;
    if (!v2) {
      if (post[0] != "cgroup") continue;
      const std::vector<std::string_view> opts = Split(post[2], ',');
      if (std::find(opts.begin(), opts.end(), controller) == opts.end()) continue;
    }
    // The mount shows the hierarchy from `root` down (a container sees its own cgroup as /).
    std::string_view root = pre[3], rel = path;
    if (root != "/") {
      if (rel.substr(0, root.size()) != root) continue;
      rel.remove_prefix(root.size());
    }
    std::string dir(pre[4]);
    if (!rel.empty() && rel != "/") dir += std::string(rel);
    return Hierarchy{dir, std::string(pre[4])};
  }
  return std::nullopt;
}

// Walks from the process's directory up to the mount point; the smallest quota wins.
template <typename QuotaAt>
std::optional<double> SmallestUp(const Hierarchy& h, QuotaAt quota_at) {
  std::optional<double> best;
  std::string dir = h.dir;
  while (true) {
    if (std::optional<double> q = quota_at(dir)) best = best ? std::min(*best, *q) : *q;
    if (dir.size() <= h.top.size()) break;
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos || slash < h.top.size()) break;
    dir.resize(std::max(slash, h.top.size()));
  }
  return best;
}

}  // namespace

std::optional<int> CgroupCpuLimit(std::string_view cgroup, std::string_view mountinfo,
                                  const ReadTextFn& read) {
  std::optional<double> cpus;
  auto take = [&cpus](std::optional<double> q) {
    if (q) cpus = cpus ? std::min(*cpus, *q) : *q;
  };
  for (std::string_view line : Split(cgroup, '\n')) {
    const std::vector<std::string_view> f = Split(line, ':');
    if (f.size() < 3) continue;
    // Field 3 is the path, which may itself hold ':'.
    const std::string_view path = line.substr(f[0].size() + f[1].size() + 2);
    if (f[0] == "0" && f[1].empty()) {
      if (auto h = FindHierarchy(mountinfo, true, "", path)) {
        take(SmallestUp(*h, [&read](const std::string& dir) -> std::optional<double> {
          // "max 100000" or "<quota> <period>".
          const std::optional<std::string> text = read(dir + "/cpu.max");
          if (!text) return std::nullopt;
          const std::vector<std::string_view> v = Split(*text, ' ');
          if (v.size() < 2) return std::nullopt;
          const auto quota = ParseInt(v[0]), period = ParseInt(v[1]);
          if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
          return static_cast<double>(*quota) / static_cast<double>(*period);
        }));
      }
      continue;
    }
    const std::vector<std::string_view> controllers = Split(f[1], ',');
    if (std::find(controllers.begin(), controllers.end(), "cpu") == controllers.end()) continue;
    if (auto h = FindHierarchy(mountinfo, false, "cpu", path)) {
      take(SmallestUp(*h, [&read](const std::string& dir) -> std::optional<double> {
        const std::optional<std::string> q = read(dir + "/cpu.cfs_quota_us");
        const std::optional<std::string> p = read(dir + "/cpu.cfs_period_us");
        if (!q || !p) return std::nullopt;
        const auto quota = ParseInt(*q), period = ParseInt(*p);  // quota -1: none
        if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
        return static_cast<double>(*quota) / static_cast<double>(*period);
      }));
    }
  }
  if (!cpus) return std::nullopt;
  // Round up: a 1.5-CPU quota can keep two threads busy three quarters of the time.
  const double rounded = std::ceil(*cpus - 1e-9);
  return std::max(1, static_cast<int>(std::min(rounded, 1e6)));
}

std::optional<int> ProcessCpuQuota() {
  const ReadTextFn read = [](const std::string& path) -> std::optional<std::string> {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::optional<std::string> cgroup = read("/proc/self/cgroup");
  const std::optional<std::string> mountinfo = read("/proc/self/mountinfo");
  if (!cgroup || !mountinfo) return std::nullopt;
  return CgroupCpuLimit(*cgroup, *mountinfo, read);
}

}  // namespace kiln::exec::internal
