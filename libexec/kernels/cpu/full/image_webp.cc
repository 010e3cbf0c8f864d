#include "kernels/cpu/full/image_webp.h"

#include <webp/decode.h>
#include <webp/demux.h>

#include <cstring>
#include <limits>
#include <memory>

namespace kiln::exec {
namespace {

// Decoded pixels beyond this are refused before they are allocated (an animation's canvas may
// claim 2^24 x 2^24): what a served image plausibly decodes to.
constexpr size_t kMaxDecodedBytes = size_t{1} << 31;

Status TooLarge(size_t frames, size_t bytes_per_frame) {
  return ResourceExhausted("WebP image of ", frames, " frame(s) of ", bytes_per_frame,
                           " bytes decoded is over the limit of ", kMaxDecodedBytes, " bytes");
}

Result<WebPBitstreamFeatures> Features(std::string_view data) {
  WebPBitstreamFeatures f;
  if (WebPGetFeatures(reinterpret_cast<const uint8_t*>(data.data()), data.size(), &f) !=
          VP8_STATUS_OK ||
      f.width <= 0 || f.height <= 0)
    return InvalidArgument("Failed to decode WebP header.");
  return f;
}

Status DecodeStill(std::string_view data, WebpFrames* out) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const size_t stride = static_cast<size_t>(out->width) * static_cast<size_t>(out->channels);
  const size_t size = stride * static_cast<size_t>(out->height);
  if (size > kMaxDecodedBytes) return TooLarge(1, size);
  out->pixels.resize(size);
  const uint8_t* ok = out->channels == 4
                          ? WebPDecodeRGBAInto(bytes, data.size(), out->pixels.data(), size,
                                               static_cast<int>(stride))
                          : WebPDecodeRGBInto(bytes, data.size(), out->pixels.data(), size,
                                              static_cast<int>(stride));
  if (ok == nullptr) return InvalidArgument("Failed to decode WebP image.");
  out->frames = 1;
  return OkStatus();
}

Status DecodeAnimation(std::string_view data, bool all_frames, WebpFrames* out) {
  WebPData webp{reinterpret_cast<const uint8_t*>(data.data()), data.size()};
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) return Internal("libwebp: options version mismatch");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  std::unique_ptr<WebPAnimDecoder, decltype(&WebPAnimDecoderDelete)> dec(
      WebPAnimDecoderNew(&webp, &options), &WebPAnimDecoderDelete);
  WebPAnimInfo info;
  if (dec == nullptr || !WebPAnimDecoderGetInfo(dec.get(), &info))
    return InvalidArgument("Failed to decode WebP image.");
  const size_t canvas = size_t{info.canvas_width} * info.canvas_height * 4;
  out->width = info.canvas_width;
  out->height = info.canvas_height;
  const size_t frames = all_frames ? info.frame_count : 1;
  if (frames == 0 || canvas == 0) return InvalidArgument("Failed to decode WebP image.");
  if (frames > kMaxDecodedBytes / canvas) return TooLarge(frames, canvas);
  out->pixels.resize(frames * canvas);
  for (size_t f = 0; f < frames; ++f) {
    uint8_t* rgba = nullptr;
    int timestamp = 0;
    if (!WebPAnimDecoderHasMoreFrames(dec.get()) ||
        !WebPAnimDecoderGetNext(dec.get(), &rgba, &timestamp))
      return InvalidArgument("Failed to decode WebP image.");
    std::memcpy(out->pixels.data() + f * canvas, rgba, canvas);
  }
  out->frames = static_cast<int64_t>(frames);
  return OkStatus();
}

}  // namespace

Result<int> WebpChannels(std::string_view data) {
  KILN_ASSIGN_OR_RETURN(WebPBitstreamFeatures f, Features(data));
  return f.has_alpha || f.has_animation ? 4 : 3;
}

Result<WebpFrames> DecodeWebp(std::string_view data, bool all_frames) {
  KILN_ASSIGN_OR_RETURN(WebPBitstreamFeatures f, Features(data));
  WebpFrames out;
  out.channels = f.has_alpha || f.has_animation ? 4 : 3;
  if (f.has_animation) {
    KILN_RETURN_IF_ERROR(DecodeAnimation(data, all_frames, &out));
  } else {
    out.width = f.width;
    out.height = f.height;
    KILN_RETURN_IF_ERROR(DecodeStill(data, &out));
  }
  return out;
}

}  // namespace kiln::exec
