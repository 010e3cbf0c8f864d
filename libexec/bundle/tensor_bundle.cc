#include "kiln/exec/tensor_bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "bundle/bundle_entry.h"
#include "bundle/coding.h"
#include "bundle/crc32c.h"
#include "bundle/mapped_file.h"
#include "bundle/sstable.h"
#include "bundle/tensor_slices.h"
#include "kiln/core/file_util.h"
#ifndef KILN_NO_PROTOBUF
#include "kiln/core/proto_convert.h"
#include "tensorflow/saved_model.pb.h"
#endif

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

#ifndef KILN_NO_PROTOBUF
// A name beside `path` that no other writer in this or another process uses at the same time.
std::string TempPathFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return internal::StrCat(path, ".tempstate", ::getpid(), "_", counter.fetch_add(1));
}
#endif

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

// One data shard, mapped on first use (or the bytes OpenFromMemory was given). `owner` keeps
// the bytes alive for the tensors that alias them.
struct ShardFile {
  std::string path;
  std::once_flag once;
  Status open_status;
  std::shared_ptr<const void> owner;
  const char* bytes = nullptr;
  uint64_t size = 0;
  bool in_memory = false;  // OpenFromMemory: owner, bytes and size are set already
  bool mapped = false;     // bytes is a mapping of the file (not a copy, not given memory)

  Status EnsureOpen() {
    if (in_memory) return OkStatus();
    std::call_once(once, [this] {
      Result<std::shared_ptr<const MappedFile>> file = MappedFile::Open(path);
      if (!file.ok()) {
        open_status = file.status();
        return;
      }
      bytes = (*file)->data();
      size = (*file)->size();
      mapped = (*file)->mapped();
      owner = std::move(file).value();
    });
    return open_status;
  }
};

// Whether every byte is 0 or 1 (anything else in a bool is undefined behaviour in C++).
bool AreBools(const char* p, uint64_t n) {
  unsigned char bad = 0;
  for (uint64_t i = 0; i < n; ++i) bad |= static_cast<unsigned char>(p[i]) & 0xfe;
  return bad == 0;
}

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

#ifndef KILN_NO_PROTOBUF
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
#endif  // KILN_NO_PROTOBUF

}  // namespace

struct BundleReader::Impl {
  fs::path prefix;
  std::string index_path;
  BundleHeader header;
  bool swap_bytes = false;
  BundleReadOptions options;
  struct Stored {
    BundleEntry entry;
    std::string bytes;  // the entry as stored, for Entry()
  };
  std::map<std::string, Stored, std::less<>> entries;
  std::vector<std::unique_ptr<ShardFile>> shards;
};

BundleReader::BundleReader() : impl_(std::make_unique<Impl>()) {}
BundleReader::~BundleReader() = default;

Result<std::unique_ptr<BundleReader>> BundleReader::Open(const fs::path& prefix,
                                                         const BundleReadOptions& options) {
  KILN_ASSIGN_OR_RETURN_CTX(std::string contents, ReadFileToString(IndexFilename(prefix)),
                            "opening tensor bundle index");
  return OpenIndex(prefix, contents, nullptr, options);
}

Result<std::unique_ptr<BundleReader>> BundleReader::OpenFromMemory(
    std::string_view index, std::vector<std::string> shards, const fs::path& prefix,
    const BundleReadOptions& options) {
  return OpenIndex(prefix, index, &shards, options);
}

Result<std::unique_ptr<BundleReader>> BundleReader::OpenIndex(const fs::path& prefix,
                                                              std::string_view contents,
                                                              std::vector<std::string>* shards,
                                                              const BundleReadOptions& options) {
  std::unique_ptr<BundleReader> reader(new BundleReader());
  Impl& im = *reader->impl_;
  im.prefix = prefix;
  im.options = options;
  im.index_path = IndexFilename(prefix);
  KILN_ASSIGN_OR_RETURN(std::vector<sstable::TableEntry> table,
                        sstable::ReadTable(contents, im.index_path));
  if (table.empty() || !table.front().key.empty()) {
    return DataLoss(im.index_path, ": bundle index has no header entry (empty key)");
  }
  auto header = ParseBundleHeader(table.front().value);
  if (!header.ok()) {
    return DataLoss(im.index_path, ": cannot parse the bundle header (BundleHeaderProto): ",
                    header.status().message());
  }
  im.header = *std::move(header);
  const BundleHeader& h = im.header;
  if (h.producer < kTensorBundleMinProducer) {
    return FailedPrecondition(im.index_path, ": bundle producer version ", h.producer,
                              " is below the minimum ", kTensorBundleMinProducer);
  }
  if (h.min_consumer > kTensorBundleVersion) {
    return FailedPrecondition(im.index_path, ": bundle needs a reader of version ", h.min_consumer,
                              "; this reader is version ", kTensorBundleVersion);
  }
  for (int bad : h.bad_consumers) {
    if (bad == kTensorBundleVersion) {
      return FailedPrecondition(im.index_path, ": bundle disallows reader version ", bad);
    }
  }
  // TF writes one shard per device; the cap keeps a corrupt header from allocating billions.
  constexpr int kMaxShards = 1 << 16;
  if (h.num_shards <= 0 || h.num_shards > kMaxShards) {
    return DataLoss(im.index_path, ": bundle header has num_shards ", h.num_shards,
                    "; expected 1 to ", kMaxShards);
  }
  if (shards && static_cast<int>(shards->size()) != h.num_shards) {
    return DataLoss(im.index_path, ": bundle header has num_shards ", h.num_shards, " but ",
                    shards->size(), " data shards were given");
  }
  const bool host_little = std::endian::native == std::endian::little;
  im.swap_bytes = host_little == h.big_endian;

  for (size_t i = 1; i < table.size(); ++i) {
    auto entry = ParseBundleEntry(table[i].value);
    if (!entry.ok()) {
      return DataLoss(im.index_path, ": cannot parse the bundle entry for '", table[i].key,
                      "': ", entry.status().message());
    }
    im.entries.emplace(std::move(table[i].key),
                       Impl::Stored{*std::move(entry), std::move(table[i].value)});
  }
  const int num_shards = h.num_shards;
  im.shards.reserve(num_shards);
  for (int s = 0; s < num_shards; ++s) {
    auto shard = std::make_unique<ShardFile>();
    shard->path = DataFilename(prefix, s, num_shards);
    if (shards) {
      auto memory = std::make_shared<const std::string>(std::move((*shards)[s]));
      shard->in_memory = true;
      shard->bytes = memory->data();
      shard->size = memory->size();
      shard->owner = std::move(memory);
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

#ifndef KILN_NO_PROTOBUF
Result<tensorflow::BundleEntryProto> BundleReader::Entry(std::string_view key) const {
  auto it = impl_->entries.find(key);
  if (it == impl_->entries.end()) {
    return NotFound("tensor bundle '", impl_->prefix.string(), "' has no key '", key, "'");
  }
  tensorflow::BundleEntryProto entry;
  if (!entry.ParseFromString(it->second.bytes)) {
    return DataLoss("cannot parse the bundle entry for '", key, "'");
  }
  return entry;
}
#endif

Result<Tensor> BundleReader::Read(std::string_view key) const {
  const Impl& im = *impl_;
  auto it = im.entries.find(key);
  if (it == im.entries.end()) {
    return NotFound("tensor bundle '", im.prefix.string(), "' has no key '", key, "'");
  }
  const BundleEntry& entry = it->second.entry;
  auto in_index = [&] {
    return internal::StrCat("bundle entry '", key, "' in '", im.index_path, "'");
  };
  if (entry.num_slices > 0) {
    return Unimplemented(in_index(), " is a partitioned (sliced) variable; not supported");
  }
  KILN_ASSIGN_OR_RETURN_CTX(DType dtype, DTypeFromProto(entry.dtype), in_index());
  if (!HoldsData(dtype)) {
    return Unimplemented(in_index(), " has dtype ", DTypeEnumName(dtype),
                         "; only numeric, bool and string tensors can be read");
  }
  KILN_ASSIGN_OR_RETURN_CTX(Shape shape, entry.shape.ToShape(), in_index());
  const int64_t n = CheckedNumElements(shape);
  if (n < 0) return DataLoss(in_index(), ": shape ", shape.ToString(), " is too large");
  if (entry.shard_id < 0 || entry.shard_id >= static_cast<int>(im.shards.size())) {
    return DataLoss(in_index(), " names shard ", entry.shard_id, " but the bundle has ",
                    im.shards.size());
  }
  if (entry.offset < 0 || entry.size < 0) {
    return DataLoss(in_index(), " has a negative offset or size");
  }
  const uint64_t offset = static_cast<uint64_t>(entry.offset);
  const uint64_t size = static_cast<uint64_t>(entry.size);
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

  ShardFile& shard = *im.shards[entry.shard_id];
  KILN_RETURN_IF_ERROR_CTX(shard.EnsureOpen(), "reading '", key, "'");
  if (offset > shard.size || size > shard.size - offset) {
    return DataLoss("bundle data file '", shard.path, "' is truncated: '", key, "' needs ", size,
                    " bytes at offset ", offset, " but the file has ", shard.size, " bytes");
  }

  const char* src = shard.bytes + offset;
  const uint32_t stored_crc = crc32c::Unmask(entry.crc32c);
  auto mismatch = [&](uint32_t computed) {
    return DataLoss("checksum mismatch for '", key, "' in bundle data file '", shard.path, "' (",
                    size, " bytes at offset ", offset, "): stored crc32c ", stored_crc,
                    ", computed ", computed, " (the file is corrupted)");
  };
  if (!DTypeIsPod(dtype)) {
    if (im.swap_bytes) {
      return Unimplemented(in_index(), ": string tensors in a big-endian bundle");
    }
    // Strings are decoded (a copy); both of their checksums are always checked.
    Tensor t(dtype, shape);
    KILN_ASSIGN_OR_RETURN(uint32_t crc,
                          DecodeStrings(std::string_view(src, size), &t, key, shard.path));
    if (crc != stored_crc) return mismatch(crc);
    return t;
  }
  if (im.options.verify_checksums) {
    const uint32_t crc = ChecksumOf(src, size, im.options.threads, shard.mapped);
    if (crc != stored_crc) return mismatch(crc);
  }
  const bool aligned = reinterpret_cast<uintptr_t>(src) % DTypeSize(dtype) == 0;
  const bool as_stored = !im.swap_bytes && (dtype != DType::kBool || AreBools(src, size));
  if (aligned && as_stored && size > 0) {
    // No copy: a read-only view of the file that keeps the mapping alive. The checksum pass
    // gave the pages it read back; they return when something reads the tensor (a kernel, a
    // fold, a packing), so an entry nothing uses (Keras's second copy of every variable)
    // costs no memory, and what is read is what was checked.
    return Tensor(dtype, shape,
                  TensorBuffer::ReadOnlyView(dtype, n, src, shard.owner, shard.mapped));
  }
  // Unaligned for the dtype (a TensorFlow-written file packs entries), byte-swapped, or bools
  // to normalise: a copy.
  Tensor t(dtype, shape);
  if (size > 0) std::memcpy(t.raw_data(), src, size);
  if (dtype == DType::kBool) {
    auto* b = static_cast<uint8_t*>(t.raw_data());
    for (uint64_t i = 0; i < size; ++i) b[i] = b[i] != 0;
  }
  if (im.swap_bytes) ByteSwapInPlace(static_cast<char*>(t.raw_data()), size, dtype);
  return t;
}

namespace {

// Copies the box of `lengths` at `from` in `src` to `to` in `dst` (same dtype).
void CopyBox(const Tensor& src, const std::vector<int64_t>& from, Tensor* dst,
             const std::vector<int64_t>& to, const std::vector<int64_t>& lengths) {
  const int rank = static_cast<int>(lengths.size());
  const size_t elem = DTypeIsPod(src.dtype()) ? DTypeSize(src.dtype()) : 0;
  std::vector<int64_t> idx(lengths.size(), 0);
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= lengths[d];
  const int64_t inner = rank == 0 ? 1 : lengths[rank - 1];
  if (inner == 0) return;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t s = 0, t = 0;
    for (int d = 0; d < rank; ++d) {
      s = s * src.dim(d) + from[d] + idx[d];
      t = t * dst->dim(d) + to[d] + idx[d];
    }
    if (elem != 0) {
      std::memcpy(static_cast<char*>(dst->raw_data()) + t * elem,
                  static_cast<const char*>(src.raw_data()) + s * elem, inner * elem);
    } else {
      for (int64_t j = 0; j < inner; ++j)
        dst->data<std::string>()[t + j] = src.data<std::string>()[s + j];
    }
    for (int d = rank - 2; d >= 0; --d) {  // next row
      if (++idx[d] < lengths[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

Result<Tensor> BundleReader::ReadSlice(std::string_view key,
                                       std::string_view shape_and_slice) const {
  if (shape_and_slice.empty()) return Read(key);
  const Impl& im = *impl_;
  auto it = im.entries.find(key);
  if (it == im.entries.end())
    return NotFound("tensor bundle '", im.prefix.string(), "' has no key '", key, "'");
  const BundleEntry& entry = it->second.entry;
  KILN_ASSIGN_OR_RETURN(tensor_slices::ShapeAndSlice want,
                        tensor_slices::ParseShapeAndSlice(shape_and_slice));
  KILN_ASSIGN_OR_RETURN(DType dtype, DTypeFromProto(entry.dtype));
  if (!HoldsData(dtype))
    return Unimplemented("'", key, "' has dtype ", DTypeEnumName(dtype),
                         "; only numeric, bool and string tensors can be read");
  KILN_ASSIGN_OR_RETURN(Shape stored, entry.shape.ToShape());
  if (stored != want.full)
    return InvalidArgument("'", shape_and_slice, "': the shape ", want.full.ToString(),
                           " is not the stored ", stored.ToString());
  const int rank = want.full.rank();
  std::vector<int64_t> out_dims, origin;
  for (const auto& [start, length] : want.slice) {
    origin.push_back(start);
    out_dims.push_back(length);
  }
  KILN_ASSIGN_OR_RETURN(Shape out_shape, Shape::FromDims(out_dims));
  Tensor out(dtype, out_shape);
  const std::vector<int64_t> zero(static_cast<size_t>(rank), 0);
  if (entry.num_slices == 0) {  // a whole entry: cut the slice out of it
    KILN_ASSIGN_OR_RETURN(Tensor whole, Read(key));
    CopyBox(whole, origin, &out, zero, out_dims);
    return out;
  }
  // A partitioned variable: every stored slice that meets the one asked for gives its part.
  int64_t covered = 0;
  for (const tensor_slices::Extents& stored_slice : entry.slices) {
    if (static_cast<int>(stored_slice.size()) != rank)
      return DataLoss("'", key, "' in '", im.index_path, "' has a slice of ", stored_slice.size(),
                      " extents for ", rank, " dimensions");
    std::vector<int64_t> piece_dims, from, to, lengths;
    bool meets = true;
    for (int d = 0; d < rank; ++d) {
      const auto [s0, sl] = stored_slice[static_cast<size_t>(d)];
      const int64_t len = sl < 0 ? want.full.dim(d) - s0 : sl;
      piece_dims.push_back(len);
      const int64_t lo = std::max(s0, origin[d]);
      const int64_t hi = std::min(s0 + len, origin[d] + out_dims[d]);
      if (hi <= lo) meets = false;
      from.push_back(lo - s0);
      to.push_back(lo - origin[d]);
      lengths.push_back(std::max<int64_t>(hi - lo, 0));
    }
    if (!meets) continue;
    const std::string data_key = tensor_slices::EncodeTensorNameSlice(key, stored_slice);
    KILN_ASSIGN_OR_RETURN_CTX(Tensor piece, Read(data_key), "a stored slice of '", key, "'");
    KILN_ASSIGN_OR_RETURN(Shape piece_shape, Shape::FromDims(piece_dims));
    if (piece.shape() != piece_shape || piece.dtype() != dtype)
      return DataLoss("a stored slice of '", key, "' is ", DTypeShortName(piece.dtype()), " ",
                      piece.shape().ToString(), "; its extents say ", DTypeShortName(dtype), " ",
                      piece_shape.ToString());
    CopyBox(piece, from, &out, to, lengths);
    int64_t volume = 1;
    for (int64_t l : lengths) volume *= l;
    covered += volume;
  }
  // Slices a saver writes do not overlap: the pieces fill the slice exactly when their volumes
  // add up to it.
  if (covered != out.NumElements())
    return DataLoss("'", key, "' in '", im.index_path, "': the stored slices cover ", covered,
                    " of the ", out.NumElements(), " elements of '", shape_and_slice, "'");
  return out;
}

#ifndef KILN_NO_PROTOBUF
BundleWriter::BundleWriter(fs::path prefix, BundleWriteOptions options)
    : prefix_(std::move(prefix)), options_(options) {}
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

  constexpr int64_t kMaxAlignment = 1 << 20;
  if (options_.data_alignment < 1 || options_.data_alignment > kMaxAlignment) {
    return InvalidArgument("bundle '", prefix_.string(), "': data_alignment ",
                           options_.data_alignment, " is not in [1, ", kMaxAlignment, "]");
  }
  const uint64_t align = static_cast<uint64_t>(options_.data_alignment);
  const std::string zeros(align, '\0');

  // Written beside the target and renamed over it: a reader that has the old file mapped keeps
  // the old bytes instead of seeing them change (or vanish, past a truncation) under it.
  const std::string temp_path = TempPathFor(data_path);
  auto write_data = [&]() -> Status {
    FileWriter data;
    KILN_RETURN_IF_ERROR(data.Open(temp_path));
    uint64_t offset = 0;
    // share_equal_entries: the numeric entries written so far by (dtype, size), to compare.
    struct Written {
      const Tensor* tensor;
      uint64_t offset;
      uint32_t crc;
    };
    std::multimap<std::pair<int, uint64_t>, Written> written;
    std::string bytes;
    for (const std::string& key : order_) {
      const Tensor& t = tensors_.at(key);
      tensorflow::BundleEntryProto& entry = entries[key];
      entry.set_dtype(static_cast<tensorflow::DataType>(DTypeToProto(t.dtype())));
      ShapeToProto(t.shape(), entry.mutable_shape());
      entry.set_shard_id(0);
      const bool numeric = t.dtype() != DType::kString;
      uint32_t crc;
      uint64_t size;
      const void* data_ptr;
      if (numeric) {
        size = static_cast<uint64_t>(t.NumElements()) * DTypeSize(t.dtype());
        crc = crc32c::Value(t.raw_data(), size);
        data_ptr = t.raw_data();
      } else {
        bytes.clear();
        crc = EncodeStrings(t, &bytes);
        size = bytes.size();
        data_ptr = bytes.data();
      }
      entry.set_size(static_cast<int64_t>(size));
      entry.set_crc32c(crc32c::Mask(crc));
      const auto kind = std::make_pair(static_cast<int>(t.dtype()), size);
      const bool share = numeric && size > 0 && options_.share_equal_entries;
      if (share) {
        const Written* same = nullptr;
        for (auto [it, end] = written.equal_range(kind); it != end && same == nullptr; ++it)
          if (it->second.crc == crc &&
              std::memcmp(it->second.tensor->raw_data(), data_ptr, size) == 0)
            same = &it->second;
        if (same != nullptr) {
          entry.set_offset(static_cast<int64_t>(same->offset));
          continue;
        }
      }
      if (const uint64_t pad = (align - offset % align) % align; pad > 0) {
        KILN_RETURN_IF_ERROR(data.Append(zeros.data(), pad));
        offset += pad;
      }
      entry.set_offset(static_cast<int64_t>(offset));
      KILN_RETURN_IF_ERROR(data.Append(data_ptr, size));
      if (share) written.emplace(kind, Written{&t, offset, crc});
      offset += size;
    }
    KILN_RETURN_IF_ERROR(data.Close());
    if (std::rename(temp_path.c_str(), data_path.c_str()) != 0) {
      return DataLoss("cannot rename '", temp_path, "' to bundle data file '", data_path,
                      "': ", std::strerror(errno));
    }
    return OkStatus();
  };
  if (Status s = write_data(); !s.ok()) {
    std::remove(temp_path.c_str());
    return s;
  }

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

#endif  // KILN_NO_PROTOBUF

}  // namespace kiln::exec
