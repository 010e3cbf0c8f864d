// How many CPUs a cgroup CPU quota grants this process (a container's `--cpus`, systemd's
// CPUQuota=, Kubernetes' CPU limit): cgroup v2's cpu.max and v1's cpu.cfs_quota_us, over the
// process's cgroup and its ancestors. The default thread count follows it, as the JVM, .NET and
// Go's automaxprocs do, so a 2-CPU container on a 64-core host does not run 64 threads.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::exec::internal {

// Reads a file's text; nullopt when it cannot be read.
using ReadTextFn = std::function<std::optional<std::string>(const std::string& path)>;

// The quota in CPUs, rounded up (at least 1); nullopt when no quota applies. `cgroup` and
// `mountinfo` are the texts of /proc/self/cgroup and /proc/self/mountinfo.
std::optional<int> CgroupCpuLimit(std::string_view cgroup, std::string_view mountinfo,
                                  const ReadTextFn& read);
// The same for this process.
std::optional<int> ProcessCpuQuota();

}  // namespace kiln::exec::internal
