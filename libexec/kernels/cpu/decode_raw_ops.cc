// The CPU kernels of DecodeRaw, DecodePaddedRaw, DecodeWav and EncodeWav
// (kernels/decode_raw_ops.cc): bytes copied, zero-padded and byte-swapped as TensorFlow's
// kernels do; WAV files read and written by TF's wav_io.cc rules (the chunks it accepts and
// refuses, samples / 32768, and back rounded and clamped).
#include "kernels/decode_raw_ops.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using decode_raw::RawState;
using decode_raw::WavState;

// Big-endian elements reversed in place; complex numbers are two reals, each reversed.
void SwapElements(char* data, size_t bytes, size_t elem) {
  const size_t unit = elem == 8 || elem == 16 ? elem / 2 : elem;
  for (size_t i = 0; i + unit <= bytes; i += unit) std::reverse(data + i, data + i + unit);
}

template <bool kPadded>
Status ComputeDecodeRaw(const KernelContext& ctx) {
  const auto& st = ctx.state<RawState>();
  const Tensor& in = ctx.input(0);
  const size_t elem = DTypeSize(st.dtype);
  const int64_t n = in.NumElements();
  const std::string* s = in.data<std::string>();
  int64_t length = 0;  // bytes per string
  if constexpr (kPadded) {
    length = ctx.input(1).data<int32_t>()[0];
    if (length < 0 || length % static_cast<int64_t>(elem) != 0)
      return ctx.Error("fixed_length (", length, ") must be a non-negative multiple of ", elem,
                       ", the size of ", DTypeShortName(st.dtype));
  } else if (n > 0) {
    length = static_cast<int64_t>(s[0].size());
    for (int64_t i = 1; i < n; ++i)
      if (static_cast<int64_t>(s[i].size()) != length)
        return ctx.Error("DecodeRaw requires input strings to all be the same size, but element ",
                         i, " has size ", s[i].size(), " != ", length);
    if (length % static_cast<int64_t>(elem) != 0)
      return ctx.Error("Input to DecodeRaw has length ", length, " that is not a multiple of ",
                       elem, ", the size of ", DTypeShortName(st.dtype));
  }
  Shape shape = in.shape();
  shape.AddDim(length / static_cast<int64_t>(elem));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  char* o = static_cast<char*>(out->raw_data());
  for (int64_t i = 0; i < n; ++i) {
    // A short string is zero-padded (a partial last element keeps its bytes), a long one cut.
    const size_t have = std::min<size_t>(s[i].size(), static_cast<size_t>(length));
    char* dst = o + i * length;
    std::copy_n(s[i].data(), have, dst);
    std::memset(dst + have, 0, static_cast<size_t>(length) - have);
    if (st.swap) SwapElements(dst, static_cast<size_t>(length), elem);
  }
  if (st.dtype == DType::kBool)  // any non-zero byte is true
    for (int64_t i = 0; i < out->NumElements(); ++i) o[i] = o[i] != 0 ? 1 : 0;
  return OkStatus();
}

// ---- DecodeWav, EncodeWav --------------------------------------------------------------------

// Reads little-endian values from a WAV string, failing (as TF) past its end.
class WavReader {
 public:
  explicit WavReader(const std::string& data) : data_(data) {}
  size_t offset() const { return offset_; }
  bool done() const { return offset_ >= data_.size(); }
  Status Skip(uint64_t n) {
    if (n > data_.size() - offset_) {
      return InvalidArgument("Offset too large, overflowed: ", offset_, " + ", n, " > ",
                             data_.size());
    }
    offset_ += n;
    return OkStatus();
  }
  template <typename T>
  Result<T> Read() {
    if (sizeof(T) > data_.size() - offset_) {
      return InvalidArgument("Data too short when trying to read at offset ", offset_);
    }
    T v = 0;
    for (size_t b = 0; b < sizeof(T); ++b)
      v |=
          static_cast<T>(static_cast<T>(static_cast<unsigned char>(data_[offset_ + b])) << (8 * b));
    offset_ += sizeof(T);
    return v;
  }
  Result<std::string> Text(size_t n) {
    if (n > data_.size() - offset_) {
      return InvalidArgument("Data too short when trying to read string at offset ", offset_);
    }
    std::string t = data_.substr(offset_, n);
    offset_ += n;
    return t;
  }
  Status Expect(std::string_view text) {
    KILN_ASSIGN_OR_RETURN(std::string found, Text(text.size()));
    if (found != text)
      return InvalidArgument("Header mismatch: Expected ", text, " but found ", found);
    return OkStatus();
  }

 private:
  const std::string& data_;
  size_t offset_ = 0;
};

struct Wav {
  std::vector<float> samples;  // interleaved
  int64_t frames = 0;
  int64_t channels = 0;
  uint32_t sample_rate = 0;
};

Result<Wav> ParseWav(const std::string& data) {
  WavReader r(data);
  KILN_RETURN_IF_ERROR(r.Expect("RIFF"));
  KILN_RETURN_IF_ERROR(r.Read<uint32_t>().status());
  KILN_RETURN_IF_ERROR(r.Expect("WAVE"));
  KILN_ASSIGN_OR_RETURN(std::string id, r.Text(4));
  // Padding chunks TF skips before "fmt ".
  static constexpr std::string_view kSkippable[] = {"JUNK", "bext", "iXML", "qlty",
                                                    "mext", "levl", "link", "axml"};
  while (id != "fmt ") {
    if (std::find(std::begin(kSkippable), std::end(kSkippable), id) == std::end(kSkippable)) {
      return InvalidArgument("Unexpected field ", id);
    }
    KILN_ASSIGN_OR_RETURN(uint32_t size, r.Read<uint32_t>());
    KILN_RETURN_IF_ERROR(r.Skip(size));
    KILN_ASSIGN_OR_RETURN(id, r.Text(4));
  }
  KILN_ASSIGN_OR_RETURN(uint32_t fmt_size, r.Read<uint32_t>());
  if (fmt_size != 16 && fmt_size != 18) {
    return InvalidArgument("Bad format chunk size for WAV: Expected 16 or 18, but got", fmt_size);
  }
  KILN_ASSIGN_OR_RETURN(uint16_t format, r.Read<uint16_t>());
  if (format != 1) {
    return InvalidArgument("Bad audio format for WAV: Expected 1 (PCM), but got", format);
  }
  KILN_ASSIGN_OR_RETURN(uint16_t channels, r.Read<uint16_t>());
  if (channels < 1) {
    return InvalidArgument("Bad number of channels for WAV: Expected at least 1, but got ",
                           channels);
  }
  Wav w;
  w.channels = channels;
  KILN_ASSIGN_OR_RETURN(w.sample_rate, r.Read<uint32_t>());
  KILN_ASSIGN_OR_RETURN(uint32_t bytes_per_second, r.Read<uint32_t>());
  KILN_ASSIGN_OR_RETURN(uint16_t bytes_per_frame, r.Read<uint16_t>());
  KILN_ASSIGN_OR_RETURN(uint16_t bits, r.Read<uint16_t>());
  if (bits != 16) return InvalidArgument("Can only read 16-bit WAV files, but received ", bits);
  const uint32_t want_frame = (bits * uint32_t{channels} + 7) / 8;
  if (bytes_per_frame != want_frame) {
    return InvalidArgument("Bad bytes per sample in WAV header: Expected ", want_frame, " but got ",
                           bytes_per_frame);
  }
  if (bytes_per_second != uint64_t{bytes_per_frame} * w.sample_rate) {
    return InvalidArgument("Bad bytes per second in WAV header: Expected ",
                           uint64_t{bytes_per_frame} * w.sample_rate, " but got ",
                           bytes_per_second);
  }
  if (fmt_size == 18) KILN_RETURN_IF_ERROR(r.Skip(2));
  bool found_data = false;
  while (!r.done()) {
    KILN_ASSIGN_OR_RETURN(std::string chunk, r.Text(4));
    KILN_ASSIGN_OR_RETURN(uint32_t size, r.Read<uint32_t>());
    if (size > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
      return InvalidArgument("Chunk size ", size, " in WAV is too large");
    }
    if (chunk != "data") {
      KILN_RETURN_IF_ERROR(r.Skip(size));
      continue;
    }
    if (found_data) return InvalidArgument("More than one data chunk found in WAV");
    found_data = true;
    w.frames = size / bytes_per_frame;
    const int64_t count = w.frames * w.channels;
    if (static_cast<uint64_t>(count) * 2 > data.size() - r.offset()) {
      return InvalidArgument("Offset too large, overflowed: data chunk of ", count * 2,
                             " bytes at offset ", r.offset(), " in ", data.size());
    }
    w.samples.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      KILN_ASSIGN_OR_RETURN(uint16_t raw, r.Read<uint16_t>());
      w.samples[i] = static_cast<float>(static_cast<int16_t>(raw)) * (1.0f / 32768.0f);
    }
  }
  if (!found_data) return InvalidArgument("No data chunk found in WAV");
  return w;
}

// [samples, channels] floats in [-1, 1); desired sizes cut, zero-pad (samples) or repeat the
// last channel (channels), as TF does.
Status ComputeDecodeWav(const KernelContext& ctx) {
  const auto& st = ctx.state<WavState>();
  auto wav = ParseWav(ctx.input(0).scalar<std::string>());
  if (!wav.ok()) return Wrap(ctx, wav.status());
  if (wav->sample_rate > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
    return ctx.Error("sample rate ", wav->sample_rate, " does not fit an int32");
  }
  const int64_t frames = st.samples == -1 ? wav->frames : st.samples;
  const int64_t channels = st.channels == -1 ? wav->channels : st.channels;
  KILN_ASSIGN_OR_RETURN(Tensor * audio, ctx.AllocateOutput(0, Shape{frames, channels}));
  float* o = audio->data<float>();
  for (int64_t f = 0; f < frames; ++f) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t src = std::min(c, wav->channels - 1);
      o[f * channels + c] = f < wav->frames ? wav->samples[f * wav->channels + src] : 0.0f;
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * rate, ctx.AllocateOutput(1, Shape{}));
  rate->scalar<int32_t>() = static_cast<int32_t>(wav->sample_rate);
  return OkStatus();
}

// A 16-bit PCM WAV: samples times 32768, rounded, clamped to int16.
Status ComputeEncodeWav(const KernelContext& ctx) {
  const Tensor& audio = ctx.input(0);
  const int32_t rate = ctx.input(1).scalar<int32_t>();
  if (audio.rank() != 2) {
    return ctx.Error("audio must be 2-dimensional, got shape ", audio.shape().ToString());
  }
  const int64_t frames = audio.dim(0), channels = audio.dim(1);
  if (channels < 1 || channels > std::numeric_limits<uint16_t>::max()) {
    return ctx.Error("audio must have between 1 and 65535 channels, got ", channels);
  }
  if (rate <= 0) return ctx.Error("sample_rate must be positive, got ", rate);
  const uint64_t data_bytes = static_cast<uint64_t>(frames * channels) * 2;
  if (data_bytes + 36 > std::numeric_limits<uint32_t>::max()) {
    return ctx.Error("audio of shape ", audio.shape().ToString(), " is too long for a WAV file");
  }
  std::string out;
  out.reserve(44 + data_bytes);
  auto put = [&out](uint64_t v, int bytes) {
    for (int b = 0; b < bytes; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
  };
  out += "RIFF";
  put(36 + data_bytes, 4);
  out += "WAVEfmt ";
  put(16, 4);
  put(1, 2);  // PCM
  put(static_cast<uint64_t>(channels), 2);
  put(static_cast<uint64_t>(rate), 4);
  put(static_cast<uint64_t>(rate) * static_cast<uint64_t>(channels) * 2, 4);
  put(static_cast<uint64_t>(channels) * 2, 2);
  put(16, 2);
  out += "data";
  put(data_bytes, 4);
  const float* a = audio.data<float>();
  for (int64_t i = 0; i < frames * channels; ++i) {
    const float v = std::min(std::max(std::round(a[i] * 32768.0f), -32768.0f), 32767.0f);
    put(static_cast<uint16_t>(static_cast<int16_t>(v)), 2);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * t, ctx.AllocateOutput(0, Shape{}));
  t->scalar<std::string>() = std::move(out);
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"DecodeRaw", ComputeDecodeRaw<false>},
    {"DecodePaddedRaw", ComputeDecodeRaw<true>},
    {"DecodeWav", ComputeDecodeWav},
    {"EncodeWav", ComputeEncodeWav},
};

}  // namespace

std::span<const KernelEntry> DecodeRawCpuKernels() { return kCpu; }

}  // namespace kiln::exec
