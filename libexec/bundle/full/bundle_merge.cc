#include "bundle/bundle_merge.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <system_error>

#include "bundle/sstable.h"
#include "kiln/core/file_util.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace fs = std::filesystem;

namespace {

std::string DataName(const std::string& prefix, int shard, int num_shards) {
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".data-%05d-of-%05d", shard, num_shards);
  return prefix + suffix;
}

struct Source {
  std::string prefix;
  tensorflow::BundleHeaderProto header;
  std::vector<sstable::TableEntry> entries;  // without the header entry
};

Result<Source> ReadIndex(const std::string& prefix) {
  Source src;
  src.prefix = prefix;
  const std::string index = prefix + ".index";
  KILN_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(index));
  KILN_ASSIGN_OR_RETURN(src.entries, sstable::ReadTable(contents, index));
  if (src.entries.empty() || !src.entries.front().key.empty() ||
      !src.header.ParseFromString(src.entries.front().value))
    return DataLoss(index, ": bundle index has no header entry");
  if (src.header.num_shards() <= 0)
    return DataLoss(index, ": bundle header has num_shards ", src.header.num_shards());
  src.entries.erase(src.entries.begin());
  return src;
}

}  // namespace

Status MergeBundles(const std::vector<std::string>& sources, const std::string& destination,
                    const MergeOptions& options) {
  std::vector<Source> srcs;
  for (const std::string& prefix : sources) {
    if (options.allow_missing_files && !fs::exists(prefix + ".index")) continue;
    KILN_ASSIGN_OR_RETURN_CTX(Source s, ReadIndex(prefix), "merging checkpoint '", prefix, "'");
    if (!srcs.empty() && s.header.endianness() != srcs.front().header.endianness())
      return Unimplemented("merging checkpoint '", prefix,
                           "': bundles of different endianness cannot be merged");
    srcs.push_back(std::move(s));
  }
  int total_shards = 0;
  for (const Source& s : srcs) total_shards += s.header.num_shards();
  if (srcs.empty()) return InvalidArgument("merging checkpoints: no source bundle to merge");

  // Every key once; shard ids move by the shards of the sources before.
  std::map<std::string, std::string> merged;  // key -> serialized entry
  int shard_base = 0;
  for (const Source& s : srcs) {
    for (const sstable::TableEntry& e : s.entries) {
      tensorflow::BundleEntryProto entry;
      if (!entry.ParseFromString(e.value))
        return DataLoss("merging checkpoint '", s.prefix, "': cannot parse the entry for '", e.key,
                        "'");
      entry.set_shard_id(entry.shard_id() + shard_base);
      std::string value;
      entry.SerializeToString(&value);
      if (!merged.emplace(e.key, std::move(value)).second)
        return InvalidArgument("merging checkpoints: tensor '", e.key, "' appears in '", s.prefix,
                               "' and in an earlier source");
    }
    shard_base += s.header.num_shards();
  }

  std::error_code ec;
  const fs::path dest_dir = fs::path(destination).parent_path();
  if (!dest_dir.empty()) fs::create_directories(dest_dir, ec);
  if (ec)
    return Status(
        StatusCode::kPermissionDenied,
        internal::StrCat("cannot create directory '", dest_dir.string(), "': ", ec.message()));
  shard_base = 0;
  for (const Source& s : srcs) {
    for (int k = 0; k < s.header.num_shards(); ++k) {
      const std::string from = DataName(s.prefix, k, s.header.num_shards());
      const std::string to = DataName(destination, shard_base + k, total_shards);
      fs::rename(from, to, ec);
      if (ec)
        return DataLoss("merging checkpoints: cannot move '", from, "' to '", to,
                        "': ", ec.message());
    }
    shard_base += s.header.num_shards();
  }

  tensorflow::BundleHeaderProto header = srcs.front().header;
  header.set_num_shards(total_shards);
  sstable::TableBuilder builder;
  std::string value;
  header.SerializeToString(&value);
  KILN_RETURN_IF_ERROR(builder.Add("", value));
  for (const auto& [key, entry] : merged) KILN_RETURN_IF_ERROR(builder.Add(key, entry));
  KILN_RETURN_IF_ERROR(WriteStringToFile(destination + ".index", builder.Finish()));

  for (const Source& s : srcs) {
    if (s.prefix + ".index" != destination + ".index") fs::remove(s.prefix + ".index", ec);
    if (options.delete_old_dirs) {
      const fs::path dir = fs::path(s.prefix).parent_path();
      if (!dir.empty() && fs::is_empty(dir, ec)) fs::remove(dir, ec);  // only when empty
    }
  }
  return OkStatus();
}

}  // namespace kiln::exec
