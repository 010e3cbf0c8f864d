#include "kiln/exec/tensor_bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "bundle/coding.h"
#include "bundle/crc32c.h"
#include "bundle/sstable.h"
#include "kiln/core/file_util.h"
#include "kiln/core/proto_convert.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace fs = std::filesystem;

namespace {

constexpr int kTensorBundleVersion = 1;  // what this reader and writer speak
constexpr int kTensorBundleMinProducer = 0;

std::string DataFilename(const fs::path& prefix, int shard, int num_shards) {
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".data-%05d-of-%05d", shard, num_shards);
  return prefix.string() + suffix;
}

std::string IndexFilename(const fs::path& prefix) { return prefix.string() + ".index"; }

// Element count of `shape`, or nullopt-like -1 when it does not fit in int64.
int64_t CheckedNumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape.dims()) {
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

// Element byte swap for bundles written on a big-endian host. Complex numbers swap per part.
void ByteSwapInPlace(char* data, size_t bytes, DType dtype) {
  size_t unit = DTypeSize(dtype);
  if (IsComplex(dtype)) unit /= 2;
  if (unit <= 1) return;
  for (size_t i = 0; i + unit <= bytes; i += unit) std::reverse(data + i, data + i + unit);
}

// One data file, opened on first use. pread keeps concurrent reads independent.
struct ShardFile {
  std::string path;
  std::once_flag once;
  Status open_status;
  int fd = -1;
  uint64_t size = 0;
  // OpenFromMemory: the shard's bytes, read instead of a file.
  bool in_memory = false;
  std::string memory;

  ~ShardFile() {
    if (fd >= 0) ::close(fd);
  }

  Status EnsureOpen() {
    if (in_memory) {
      size = memory.size();
      return OkStatus();
    }
    std::call_once(once, [this] {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        int err = errno;
        std::string msg =
            internal::StrCat("cannot open bundle data file '", path, "': ", std::strerror(err));
        open_status =
            err == ENOENT ? Status(StatusCode::kNotFound, msg) : Status(StatusCode::kDataLoss, msg);
        return;
      }
      struct stat st;
      if (::fstat(fd, &st) != 0) {
        open_status = DataLoss("cannot stat bundle data file '", path, "': ", std::strerror(errno));
        return;
      }
      size = static_cast<uint64_t>(st.st_size);
    });
    return open_status;
  }

  Status ReadAt(uint64_t offset, void* dst, size_t n, std::string_view key) const {
    if (in_memory) {
      if (offset > memory.size() || n > memory.size() - offset)
        return DataLoss("bundle data '", path, "' is truncated: '", key, "' runs past its end");
      if (n) std::memcpy(dst, memory.data() + offset, n);
      return OkStatus();
    }
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
      if (got < 0) {
        if (errno == EINTR) continue;
        return DataLoss("reading '", key, "' from bundle data file '", path,
                        "': ", std::strerror(errno));
      }
      if (got == 0) {
        return DataLoss("bundle data file '", path, "' is truncated: '", key,
                        "' runs past its end");
      }
      p += got;
      offset += static_cast<uint64_t>(got);
      n -= static_cast<size_t>(got);
    }
    return OkStatus();
  }
};

// Parses a DT_STRING value (savedmodel-format.md §3.5) into t and checks both checksums.
// Returns the entry crc (unmasked) computed over the bytes.
Result<uint32_t> DecodeStrings(std::string_view bytes, Tensor* t, std::string_view key,
                               std::string_view file) {
  const int64_t n = t->NumElements();
  auto bad = [&](std::string_view why) {
    return DataLoss("Invalid size in bundle entry: key '", key, "' in '", file, "': ", why);
  };
  std::string_view in = bytes;
  std::vector<uint64_t> lengths(static_cast<size_t>(n));
  uint32_t crc = 0;
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len;
    if (!coding::GetVarint64(&in, &len)) return bad("string lengths are truncated");
    lengths[i] = len;
    if (len <= UINT32_MAX) {
      std::string le;
      coding::PutFixed32(&le, static_cast<uint32_t>(len));
      crc = crc32c::Extend(crc, le);
    } else {
      std::string le;
      coding::PutFixed64(&le, len);
      crc = crc32c::Extend(crc, le);
    }
    if (len > bytes.size()) return bad("a string length exceeds the entry size");
    total += len;
  }
  if (in.size() < 4) return bad("the length checksum is missing");
  uint32_t stored_length_crc = coding::DecodeFixed32(in.data());
  if (crc32c::Unmask(stored_length_crc) != crc) {
    return DataLoss("checksum mismatch for '", key, "' in bundle data file '", file,
                    "': string lengths checksum does not match");
  }
  crc = crc32c::Extend(crc, in.data(), 4);
  in.remove_prefix(4);
  if (total != in.size()) {
    return bad(internal::StrCat("string bytes total ", total, " but the entry has ", in.size(),
                                " bytes left"));
  }
  crc = crc32c::Extend(crc, in);
  std::string* out = t->data<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    out[i].assign(in.data(), lengths[i]);
    in.remove_prefix(lengths[i]);
  }
  return crc;
}

// Encodes a DT_STRING tensor as TF's WriteStringTensor does; returns the unmasked entry crc.
uint32_t EncodeStrings(const Tensor& t, std::string* out) {
  const std::string* strings = t.data<std::string>();
  const int64_t n = t.NumElements();
  uint32_t crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len = strings[i].size();
    coding::PutVarint64(out, len);
    std::string le;
    if (len <= UINT32_MAX) {
      coding::PutFixed32(&le, static_cast<uint32_t>(len));
    } else {
      coding::PutFixed64(&le, len);
    }
    crc = crc32c::Extend(crc, le);
  }
  std::string masked;
  coding::PutFixed32(&masked, crc32c::Mask(crc));
  out->append(masked);
  crc = crc32c::Extend(crc, masked);
  for (int64_t i = 0; i < n; ++i) {
    out->append(strings[i]);
    crc = crc32c::Extend(crc, strings[i]);
  }
  return crc;
}

// Buffered sequential writer with the project's error model.
class FileWriter {
 public:
  ~FileWriter() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Open(std::string path) {
    path_ = std::move(path);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) return Error("cannot create");
    return OkStatus();
  }
  Status Append(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t put = ::write(fd_, p, n);
      if (put < 0) {
        if (errno == EINTR) continue;
        return Error("cannot write");
      }
      p += put;
      n -= static_cast<size_t>(put);
    }
    return OkStatus();
  }
  Status Close() {
    int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) return Error("cannot close");
    return OkStatus();
  }

 private:
  Status Error(std::string_view what) {
    int err = errno;
    std::string msg = internal::StrCat(what, " bundle file '", path_, "': ", std::strerror(err));
    if (err == EACCES || err == EPERM || err == EROFS)
      return Status(StatusCode::kPermissionDenied, msg);
    if (err == ENOENT) return Status(StatusCode::kNotFound, msg);
    return Status(StatusCode::kDataLoss, msg);
  }
  std::string path_;
  int fd_ = -1;
};

}  // namespace

struct BundleReader::Impl {
  fs::path prefix;
  std::string index_path;
  tensorflow::BundleHeaderProto header;
  bool swap_bytes = false;
  std::map<std::string, tensorflow::BundleEntryProto, std::less<>> entries;
  std::vector<std::unique_ptr<ShardFile>> shards;
};

BundleReader::BundleReader() : impl_(std::make_unique<Impl>()) {}
BundleReader::~BundleReader() = default;

Result<std::unique_ptr<BundleReader>> BundleReader::Open(const fs::path& prefix) {
  KILN_ASSIGN_OR_RETURN_CTX(std::string contents, ReadFileToString(IndexFilename(prefix)),
                            "opening tensor bundle index");
  return OpenIndex(prefix, contents, nullptr);
}

Result<std::unique_ptr<BundleReader>> BundleReader::OpenFromMemory(std::string_view index,
                                                                   std::vector<std::string> shards,
                                                                   const fs::path& prefix) {
  return OpenIndex(prefix, index, &shards);
}

Result<std::unique_ptr<BundleReader>> BundleReader::OpenIndex(const fs::path& prefix,
                                                              std::string_view contents,
                                                              std::vector<std::string>* shards) {
  std::unique_ptr<BundleReader> reader(new BundleReader());
  Impl& im = *reader->impl_;
  im.prefix = prefix;
  im.index_path = IndexFilename(prefix);
  KILN_ASSIGN_OR_RETURN(std::vector<sstable::TableEntry> table,
                        sstable::ReadTable(contents, im.index_path));
  if (table.empty() || !table.front().key.empty()) {
    return DataLoss(im.index_path, ": bundle index has no header entry (empty key)");
  }
  if (!im.header.ParseFromString(table.front().value)) {
    return DataLoss(im.index_path, ": cannot parse the bundle header (BundleHeaderProto)");
  }
  const auto& version = im.header.version();
  if (version.producer() < kTensorBundleMinProducer) {
    return FailedPrecondition(im.index_path, ": bundle producer version ", version.producer(),
                              " is below the minimum ", kTensorBundleMinProducer);
  }
  if (version.min_consumer() > kTensorBundleVersion) {
    return FailedPrecondition(im.index_path, ": bundle needs a reader of version ",
                              version.min_consumer(), "; this reader is version ",
                              kTensorBundleVersion);
  }
  for (int bad : version.bad_consumers()) {
    if (bad == kTensorBundleVersion) {
      return FailedPrecondition(im.index_path, ": bundle disallows reader version ", bad);
    }
  }
  // TF writes one shard per device; the cap keeps a corrupt header from allocating billions.
  constexpr int kMaxShards = 1 << 16;
  if (im.header.num_shards() <= 0 || im.header.num_shards() > kMaxShards) {
    return DataLoss(im.index_path, ": bundle header has num_shards ", im.header.num_shards(),
                    "; expected 1 to ", kMaxShards);
  }
  if (shards && static_cast<int>(shards->size()) != im.header.num_shards()) {
    return DataLoss(im.index_path, ": bundle header has num_shards ", im.header.num_shards(),
                    " but ", shards->size(), " data shards were given");
  }
  const bool host_little = std::endian::native == std::endian::little;
  const bool file_little = im.header.endianness() == tensorflow::BundleHeaderProto::LITTLE;
  im.swap_bytes = host_little != file_little;

  for (size_t i = 1; i < table.size(); ++i) {
    tensorflow::BundleEntryProto entry;
    if (!entry.ParseFromString(table[i].value)) {
      return DataLoss(im.index_path, ": cannot parse the bundle entry for '", table[i].key, "'");
    }
    im.entries.emplace(std::move(table[i].key), std::move(entry));
  }
  const int num_shards = im.header.num_shards();
  im.shards.reserve(num_shards);
  for (int s = 0; s < num_shards; ++s) {
    auto shard = std::make_unique<ShardFile>();
    shard->path = DataFilename(prefix, s, num_shards);
    if (shards) {
      shard->in_memory = true;
      shard->memory = std::move((*shards)[s]);
    }
    im.shards.push_back(std::move(shard));
  }
  return reader;
}

std::vector<std::string> BundleReader::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(impl_->entries.size());
  for (const auto& [k, e] : impl_->entries) keys.push_back(k);
  return keys;
}

bool BundleReader::Contains(std::string_view key) const {
  return impl_->entries.find(key) != impl_->entries.end();
}

Result<tensorflow::BundleEntryProto> BundleReader::Entry(std::string_view key) const {
  auto it = impl_->entries.find(key);
  if (it == impl_->entries.end()) {
    return NotFound("tensor bundle '", impl_->prefix.string(), "' has no key '", key, "'");
  }
  return it->second;
}

Result<Tensor> BundleReader::Read(std::string_view key) const {
  const Impl& im = *impl_;
  auto it = im.entries.find(key);
  if (it == im.entries.end()) {
    return NotFound("tensor bundle '", im.prefix.string(), "' has no key '", key, "'");
  }
  const tensorflow::BundleEntryProto& entry = it->second;
  auto in_index = [&] {
    return internal::StrCat("bundle entry '", key, "' in '", im.index_path, "'");
  };
  if (entry.slices_size() > 0) {
    return Unimplemented(in_index(), " is a partitioned (sliced) variable; not supported");
  }
  KILN_ASSIGN_OR_RETURN_CTX(DType dtype, DTypeFromProto(entry.dtype()), in_index());
  if (!HoldsData(dtype)) {
    return Unimplemented(in_index(), " has dtype ", DTypeEnumName(dtype),
                         "; only numeric, bool and string tensors can be read");
  }
  KILN_ASSIGN_OR_RETURN_CTX(Shape shape, ShapeFromProto(entry.shape()), in_index());
  const int64_t n = CheckedNumElements(shape);
  if (n < 0) return DataLoss(in_index(), ": shape ", shape.ToString(), " is too large");
  if (entry.shard_id() < 0 || entry.shard_id() >= static_cast<int>(im.shards.size())) {
    return DataLoss(in_index(), " names shard ", entry.shard_id(), " but the bundle has ",
                    im.shards.size());
  }
  if (entry.offset() < 0 || entry.size() < 0) {
    return DataLoss(in_index(), " has a negative offset or size");
  }
  const uint64_t offset = static_cast<uint64_t>(entry.offset());
  const uint64_t size = static_cast<uint64_t>(entry.size());
  if (DTypeIsPod(dtype)) {
    const uint64_t want = static_cast<uint64_t>(n) * DTypeSize(dtype);
    if (static_cast<uint64_t>(n) > UINT64_MAX / DTypeSize(dtype) || size != want) {
      return DataLoss("Invalid size in bundle entry: key '", key, "' in '", im.index_path,
                      "': stored size ", size, ", expected ", want, " for ", DTypeShortName(dtype),
                      " shape ", shape.ToString());
    }
  } else if (size < static_cast<uint64_t>(n) + 4) {
    return DataLoss("Invalid size in bundle entry: key '", key, "' in '", im.index_path,
                    "': stored size ", size, " is too small for ", n, " strings");
  }

  ShardFile& shard = *im.shards[entry.shard_id()];
  KILN_RETURN_IF_ERROR_CTX(shard.EnsureOpen(), "reading '", key, "'");
  if (offset > shard.size || size > shard.size - offset) {
    return DataLoss("bundle data file '", shard.path, "' is truncated: '", key, "' needs bytes [",
                    offset, ", ", offset + size, ") but the file has ", shard.size, " bytes");
  }

  Tensor t(dtype, shape);
  uint32_t crc;
  if (DTypeIsPod(dtype)) {
    KILN_RETURN_IF_ERROR(shard.ReadAt(offset, t.raw_data(), size, key));
    crc = crc32c::Value(t.raw_data(), size);
    if (dtype == DType::kBool) {
      // Anything but 0/1 in a bool is undefined behaviour in C++: normalize.
      auto* b = static_cast<uint8_t*>(t.raw_data());
      for (uint64_t i = 0; i < size; ++i) b[i] = b[i] != 0;
    }
  } else {
    if (im.swap_bytes) {
      return Unimplemented(in_index(), ": string tensors in a big-endian bundle");
    }
    std::string bytes(size, '\0');
    KILN_RETURN_IF_ERROR(shard.ReadAt(offset, bytes.data(), size, key));
    KILN_ASSIGN_OR_RETURN(crc, DecodeStrings(bytes, &t, key, shard.path));
  }
  if (crc != crc32c::Unmask(entry.crc32c())) {
    return DataLoss("checksum mismatch for '", key, "' in bundle data file '", shard.path,
                    "': stored crc32c ", crc32c::Unmask(entry.crc32c()), ", computed ", crc,
                    " (the file is corrupted)");
  }
  if (im.swap_bytes) ByteSwapInPlace(static_cast<char*>(t.raw_data()), size, dtype);
  return t;
}

BundleWriter::BundleWriter(fs::path prefix) : prefix_(std::move(prefix)) {}
BundleWriter::~BundleWriter() = default;

Status BundleWriter::Add(std::string key, const Tensor& tensor) {
  if (key.empty()) {
    return InvalidArgument("bundle '", prefix_.string(),
                           "': the empty key is reserved for the bundle header");
  }
  if (!tensor.IsInitialized() || tensor.dtype() == DType::kInvalid) {
    return InvalidArgument("bundle '", prefix_.string(), "': tensor for '", key,
                           "' is not initialized");
  }
  const DType dt = tensor.dtype();
  if (!HoldsData(dt)) {
    return InvalidArgument("bundle '", prefix_.string(), "': tensor for '", key, "' has dtype ",
                           DTypeShortName(dt),
                           "; only numeric, bool and string tensors can be saved");
  }
  if (tensors_.count(key) > 0) {
    return AlreadyExists("bundle '", prefix_.string(), "': key '", key, "' was added twice");
  }
  order_.push_back(key);
  tensors_.emplace(std::move(key), tensor);
  return OkStatus();
}

Status BundleWriter::Finish() {
  const std::string data_path = DataFilename(prefix_, 0, 1);
  const std::string index_path = IndexFilename(prefix_);
  std::map<std::string, tensorflow::BundleEntryProto> entries;

  FileWriter data;
  KILN_RETURN_IF_ERROR(data.Open(data_path));
  uint64_t offset = 0;
  for (const std::string& key : order_) {
    const Tensor& t = tensors_.at(key);
    tensorflow::BundleEntryProto& entry = entries[key];
    entry.set_dtype(static_cast<tensorflow::DataType>(DTypeToProto(t.dtype())));
    ShapeToProto(t.shape(), entry.mutable_shape());
    entry.set_shard_id(0);
    entry.set_offset(static_cast<int64_t>(offset));
    uint32_t crc;
    uint64_t size;
    if (t.dtype() == DType::kString) {
      std::string bytes;
      crc = EncodeStrings(t, &bytes);
      size = bytes.size();
      KILN_RETURN_IF_ERROR(data.Append(bytes.data(), bytes.size()));
    } else {
      size = static_cast<uint64_t>(t.NumElements()) * DTypeSize(t.dtype());
      crc = crc32c::Value(t.raw_data(), size);
      KILN_RETURN_IF_ERROR(data.Append(t.raw_data(), size));
    }
    entry.set_size(static_cast<int64_t>(size));
    entry.set_crc32c(crc32c::Mask(crc));
    offset += size;
  }
  KILN_RETURN_IF_ERROR(data.Close());

  tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(std::endian::native == std::endian::little
                            ? tensorflow::BundleHeaderProto::LITTLE
                            : tensorflow::BundleHeaderProto::BIG);
  header.mutable_version()->set_producer(kTensorBundleVersion);

  sstable::TableBuilder builder;
  std::string value;
  if (!header.SerializeToString(&value)) return Internal("cannot serialize the bundle header");
  KILN_RETURN_IF_ERROR(builder.Add("", value));
  for (const auto& [key, entry] : entries) {
    value.clear();
    if (!entry.SerializeToString(&value)) {
      return Internal("cannot serialize the bundle entry for '", key, "'");
    }
    KILN_RETURN_IF_ERROR(builder.Add(key, value));
  }
  KILN_RETURN_IF_ERROR(WriteStringToFile(index_path, builder.Finish()));
  return OkStatus();
}

}  // namespace kiln::exec
