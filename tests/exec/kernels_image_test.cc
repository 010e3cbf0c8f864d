// Error paths of the image, detection, codec, sequence and FFT ops (image_resize_ops,
// image_color_ops, nms_ops, image_codec_ops, ctc_ops, fft_ops), and the EncodePng round trip.
// Values are checked by the op tester (tests/ops/cases_image.cc) and against TensorFlow
// (tests/tf/test_nn_image_ops.py).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckClose;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_CASE("Resize ops: attrs and sizes are checked") {
  {
    OpRunner r("ResizeBilinear", "rs");
    r.T(DType::kFloat).Bool("align_corners", true).Bool("half_pixel_centers", true);
    r.InputSpec({DType::kFloat, Shape{1, 4, 4, 3}}).ConstantInput(Make<int32_t>({8, 8}, {2}));
    CheckError(r.Prepare(), {"node 'rs'", "half_pixel_centers", "align_corners"});
  }
  {
    OpRunner r("ResizeNearestNeighbor", "rs");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{1, 4, 4, 3}})
        .ConstantInput(Make<int32_t>({8, 0}, {2}));
    CheckError(r.Prepare(), {"input 'size'", "two positive values", "[8, 0]"});
  }
  {
    OpRunner r("ResizeBicubic", "rs");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{1, 4, 4, 3}})
        .InputSpec({DType::kInt32, Shape{3}});
    CheckError(r.Prepare(), {"input 'size'", "2 elements"});
  }
  {
    OpRunner r("ResizeArea", "rs");
    r.T(DType::kBool)
        .InputSpec({DType::kBool, Shape{1, 4, 4, 3}})
        .ConstantInput(Make<int32_t>({2, 2}, {2}));
    CheckError(r.Prepare(), {"attr 'T'", "bool"});
  }
  {
    OpRunner r("ResizeBilinear", "rs");
    r.T(DType::kFloat)
        .Input(Random<float>(Shape{1, 4, 4, 3}, 1))
        .Input(Make<int32_t>({-2, 2}, {2}));
    CheckError(r.Run().status(), {"node 'rs'", "two positive values", "[-2, 2]"});
  }
  {
    OpRunner r("ResizeBilinear", "rs");
    r.T(DType::kFloat).Input(Random<float>(Shape{1, 0, 4, 3}, 1)).Input(Make<int32_t>({2, 2}, {2}));
    CheckError(r.Run().status(), {"non-zero height and width"});
  }
}

TEST_CASE("CropAndResize: boxes, box indices and crop size are checked") {
  auto runner = [](const Tensor& boxes, const Tensor& ind, const Tensor& crop) {
    OpRunner r("CropAndResize", "crop");
    r.T(DType::kFloat)
        .Input(Random<float>(Shape{2, 5, 5, 1}, 1))
        .Input(boxes)
        .Input(ind)
        .Input(crop);
    return r;
  };
  const Tensor box = Make<float>({0, 0, 1, 1}, {1, 4});
  CheckError(runner(box, Make<int32_t>({2}, {1}), Make<int32_t>({3, 3}, {2})).Run().status(),
             {"node 'crop'", "box_ind", "outside [0, batch_size)", "= 2"});
  CheckError(runner(box, Make<int32_t>({0}, {1}), Make<int32_t>({3, 0}, {2})).Run().status(),
             {"crop dimensions must be positive"});
  CheckError(
      runner(Make<float>({0, 0, 1}, {1, 3}), Make<int32_t>({0}, {1}), Make<int32_t>({3, 3}, {2}))
          .Prepare(),
      {"input 'boxes'", "(num_boxes, 4)"});
  {
    // NaN coordinates sample nothing: every crop pixel is the extrapolation value.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    OpRunner r = runner(Make<float>({nan, 0, 1, 1, 0, nan, 1, 1}, {2, 4}),
                        Make<int32_t>({0, 1}, {2}), Make<int32_t>({2, 3}, {2}));
    r.Float("extrapolation_value", 9.5f);
    auto out = r.Run1();
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    for (float v : out->flat<float>()) CHECK(v == 9.5f);
  }
  OpRunner m = runner(box, Make<int32_t>({0}, {1}), Make<int32_t>({3, 3}, {2}));
  m.String("method", "bicubic");
  CheckError(m.Prepare(), {"attr 'method'", "\"bicubic\""});
}

TEST_CASE("Colour ops: three channels and scalar factors") {
  {
    OpRunner r("RGBToHSV", "hsv");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 4}});
    CheckError(r.Prepare(), {"node 'hsv'", "3 channels", "(2, 4)"});
  }
  {
    OpRunner r("AdjustHue", "hue");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 3}}).InputSpec({DType::kFloat, Shape{}});
    CheckError(r.Prepare(), {"at least 3-D"});
  }
  {
    OpRunner r("AdjustSaturation", "sat");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{2, 2, 3}})
        .InputSpec({DType::kFloat, Shape{2}});
    CheckError(r.Prepare(), {"input 'scale'", "expected rank 0"});
  }
  {
    OpRunner r("AdjustContrastv2", "con");
    r.T(DType::kDouble)
        .InputSpec({DType::kDouble, Shape{2, 2, 3}})
        .InputSpec({DType::kFloat, Shape{}});
    CheckError(r.Prepare(), {"attr 'T'", "float64"});
  }
}

TEST_CASE("NonMaxSuppression: thresholds and shapes are checked") {
  auto nms = [](int version, float iou, int32_t max_out) {
    OpRunner r("NonMaxSuppressionV" + std::to_string(version), "nms");
    r.T(DType::kFloat)
        .Input(Make<float>({0, 0, 1, 1, 0, 0.1f, 1, 1.1f}, {2, 4}))
        .Input(Make<float>({0.9f, 0.8f}, {2}))
        .Input(Tensor::Scalar<int32_t>(max_out))
        .Input(Tensor::Scalar<float>(iou));
    if (version >= 3) r.Input(Tensor::Scalar<float>(0.0f));
    if (version == 5) r.Input(Tensor::Scalar<float>(-1.0f));
    return r;
  };
  CheckError(nms(3, 1.5f, 2).Run().status(), {"node 'nms'", "iou_threshold must be in [0, 1]"});
  CheckError(nms(2, 0.5f, -1).Run().status(), {"max_output_size must be non-negative"});
  CheckError(nms(5, 0.5f, 2).Run().status(), {"soft_nms_sigma must be >= 0"});
  {
    OpRunner r("NonMaxSuppressionV3", "nms");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{3, 4}})
        .InputSpec({DType::kFloat, Shape{2}})
        .InputSpec({DType::kInt32, Shape{}})
        .InputSpec({DType::kFloat, Shape{}})
        .InputSpec({DType::kFloat, Shape{}});
    CheckError(r.Prepare(), {"'boxes' (3, 4)", "'scores' (2,)", "number of boxes"});
  }
  {
    OpRunner r("CombinedNonMaxSuppression", "cnms");
    r.Input(Random<float>(Shape{1, 3, 2, 4}, 1))
        .Input(Random<float>(Shape{1, 3, 3}, 2))
        .Input(Tensor::Scalar<int32_t>(2))
        .Input(Tensor::Scalar<int32_t>(4))
        .Input(Tensor::Scalar<float>(0.5f))
        .Input(Tensor::Scalar<float>(0.0f));
    CheckError(r.Run().status(),
               {"node 'cnms'", "third dimension of boxes must be 1 or num_classes (3)"});
  }
  {
    OpRunner r("CombinedNonMaxSuppression", "cnms");
    r.Input(Random<float>(Shape{1, 3, 1, 4}, 1))
        .Input(Random<float>(Shape{1, 3, 3}, 2))
        .Input(Tensor::Scalar<int32_t>(2))
        .Input(Tensor::Scalar<int32_t>(0))
        .Input(Tensor::Scalar<float>(0.5f))
        .Input(Tensor::Scalar<float>(0.0f));
    CheckError(r.Run().status(), {"max_total_size must be > 0"});
  }
}

TEST_CASE("Image codecs: bad data, attrs and the EncodePng round trip") {
  auto decode = [](const std::string& op, const std::string& data) {
    OpRunner r(op, "dec");
    r.Input(Tensor::StringScalar(data));
    return r;
  };
  CheckError(decode("DecodeJpeg", "hello").Run().status(),
             {"node 'dec'", "unknown image file format"});
  CheckError(decode("DecodePng", "").Run().status(), {"input is empty"});
  CheckError(decode("DecodeJpeg", std::string("\xff\xd8\xff\xe0", 4) + "garbage").Run().status(),
             {"invalid JPEG data"});
  CheckError(decode("DecodePng", std::string("\x89PNG\r\n\x1a\n", 8) + "garbage").Run().status(),
             {"invalid PNG"});
  // WebP: to DecodePng (TF returns a 4-D image against its 3-D shape), a broken header, a
  // truncated image, what DecodeWebP refuses.
  CheckError(decode("DecodePng", "RIFF\x10\x01\x01\x01WEBPVP8 ....").Run().status(),
             {"WebP contents", "tf.io.decode_webp"});
  CheckError(decode("DecodeWebP", "RIFF\x10\x01\x01\x01WEBPVP8 ....").Run().status(),
             {"Failed to decode WebP header."});
  CheckError(decode("DecodeWebP", std::string("\x89PNG\r\n\x1a\n", 8) + "garbage").Run().status(),
             {"DecodeWebP got PNG contents"});
  {
    const std::string webp = ReadFile(std::string(KILN_TESTDATA_DIR) + "/images/alpha.webp");
    CheckError(decode("DecodeWebP", webp.substr(0, webp.size() / 2)).Run().status(),
               {"Failed to decode WebP image."});
    OpRunner rgb("DecodeWebP", "dec");
    rgb.Input(Tensor::StringScalar(webp)).Int("channels", 3);
    CheckError(rgb.Run().status(), {"Number of channels requested does not match input"});
    OpRunner f32("DecodeImage", "dec");
    f32.Input(Tensor::StringScalar(webp)).Type("dtype", DType::kFloat);
    CheckError(f32.Run().status(), {"WebP only supports uint8 for dtype"});
  }
  // GIF: what TF says of broken files, and the ops that take only some GIFs.
  CheckError(decode("DecodeGif", "GIF89a....").Run().status(),
             {"Invalid GIF data (size 10)", "failed to open gif file"});
  // A screen descriptor and the trailer, no image.
  CheckError(decode("DecodeGif", std::string("GIF89a\x01\0\x01\0\0\0\0;", 14)).Run().status(),
             {"failed to slurp gif file", "No Image Descriptor"});
  {
    const std::string anim = ReadFile(std::string(KILN_TESTDATA_DIR) + "/images/anim.gif");
    CheckError(decode("DecodeJpeg", anim).Run().status(),
               {"Got 3 frames", "tf.io.decode_gif or tf.io.decode_image"});
    CheckError(decode("DecodeBmp", anim).Run().status(), {"non-BMP image"});
    OpRunner gray = decode("DecodeImage", anim);
    gray.Int("channels", 1);
    CheckError(gray.Run().status(), {"channels must be 0 or 3 for GIF, got 1"});
    // As TF 2.21 (checked): cut inside the screen's colour table, inside the first frame's
    // pixels, inside the third frame's (two frames), before the trailer (all three).
    CheckError(decode("DecodeGif", anim.substr(0, 100)).Run().status(),
               {"Invalid GIF data (size 100)", "No screen descriptor detected"});
    CheckError(decode("DecodeGif", anim.substr(0, 150)).Run().status(),
               {"Invalid GIF data (size 150)", "failed to slurp gif file",
                "Failed to read from given file"});
    for (const auto& [cut, frames] : {std::pair<size_t, int64_t>{10, 2}, {1, 3}}) {
      auto partial = decode("DecodeGif", anim.substr(0, anim.size() - cut)).Run1();
      REQUIRE_MESSAGE(partial.ok(), partial.status().ToString());
      CHECK(partial->shape() == Shape{frames, 10, 12, 3});
    }
  }
  // BMP only through DecodeBmp or DecodeImage (TF's rule); a BMP cut short names the sizes.
  CheckError(decode("DecodePng", "BM" + std::string(40, '\0')).Run().status(),
             {"decode BMP format using a wrong op"});
  CheckError(decode("DecodeBmp", "BM" + std::string(20, '\0')).Run().status(),
             {"incomplete BMP content", "32 bytes"});
  {
    OpRunner r = decode("DecodeJpeg", "x");
    r.Int("channels", 2);
    CheckError(r.Prepare(), {"attr 'channels'", "0, 1, 3 or 4", "2"});
  }
  {
    OpRunner r = decode("DecodeJpeg", "x");
    r.Int("ratio", 3);
    CheckError(r.Prepare(), {"attr 'ratio'", "1, 2, 4, or 8"});
  }
  {
    OpRunner r = decode("DecodeJpeg", "x");
    r.String("dct_method", "FLOAT");
    CheckError(r.Prepare(), {"attr 'dct_method'", "FLOAT"});
  }
  {
    OpRunner r = decode("DecodePng", "x");
    r.Type("dtype", DType::kFloat);
    CheckError(r.Prepare(), {"attr 'dtype'", "uint8, uint16"});
  }
  {
    OpRunner r("EncodePng", "enc");
    r.T(DType::kUInt8).InputSpec({DType::kUInt8, Shape{2, 2, 5}});
    CheckError(r.Prepare(), {"node 'enc'", "1, 2, 3, or 4 channels"});
  }
  {
    OpRunner r("EncodePng", "enc");
    r.T(DType::kUInt8).Int("compression", 10).InputSpec({DType::kUInt8, Shape{2, 2, 3}});
    CheckError(r.Prepare(), {"attr 'compression'", "[-1, 9]"});
  }
  {
    OpRunner r("EncodePng", "enc");
    r.T(DType::kUInt8).Input(Tensor(DType::kUInt8, Shape{0, 3, 3}));
    CheckError(r.Run().status(), {"PNG encoding failed", "empty"});
  }
  // Round trip: every channel count, 8 and 16 bits, decodes to the pixels encoded.
  for (int64_t ch : {1, 2, 3, 4}) {
    for (DType t : {DType::kUInt8, DType::kUInt16}) {
      CAPTURE(ch);
      Tensor img = t == DType::kUInt8 ? Random<uint8_t>(Shape{9, 11, ch}, 5, 0, 255)
                                      : Random<uint16_t>(Shape{9, 11, ch}, 6, 0, 65535);
      OpRunner enc("EncodePng", "enc");
      enc.T(t).Input(img);
      auto bytes = enc.Run1();
      REQUIRE_MESSAGE(bytes.ok(), bytes.status().ToString());
      OpRunner dec("DecodePng", "dec");
      dec.Type("dtype", t).Input(*bytes);
      auto back = dec.Run1();
      REQUIRE_MESSAGE(back.ok(), back.status().ToString());
      CHECK(TensorsEqual(*back, img));
      // A truncated stream is an error, never a partial image.
      const std::string& full = bytes->data<std::string>()[0];
      OpRunner cut("DecodePng", "dec");
      cut.Type("dtype", t).Input(Tensor::StringScalar(full.substr(0, full.size() / 2)));
      CheckError(cut.Run().status(), {"invalid PNG"});
    }
  }
}

TEST_CASE("DecodeGif: damaged files give an image or an error, never a crash") {
  // Every prefix of a small file and single-byte changes of each file (ASan and UBSan builds
  // read past nothing): the result is a status, an image of 3 channels when OK.
  for (const char* name : {"anim.gif", "sprite.gif", "interlace.gif"}) {
    const std::string gif = ReadFile(std::string(KILN_TESTDATA_DIR) + "/images/" + name);
    CAPTURE(name);
    std::vector<std::string> variants;
    for (size_t n = 0; n < gif.size(); n += name == std::string("sprite.gif") ? 1 : 17)
      variants.push_back(gif.substr(0, n));
    uint32_t seed = 12345;
    for (int i = 0; i < 150; ++i) {
      seed = seed * 1664525u + 1013904223u;
      std::string v = gif;
      v[(seed >> 8) % v.size()] = static_cast<char>(seed >> 24);
      variants.push_back(std::move(v));
    }
    for (const std::string& v : variants) {
      OpRunner r("DecodeGif", "dec");
      r.Input(Tensor::StringScalar(v));
      auto out = r.Run1();
      if (out.ok()) {
        CHECK(out->rank() == 4);
        CHECK(out->dim(3) == 3);
      } else {
        CHECK(!out.status().message().empty());
      }
    }
  }
}

TEST_CASE("EncodeJpeg: the decoded pixels are the image's within JPEG's loss, errors named") {
  // A smooth image: JPEG at quality 100 without chroma subsampling comes back within a few
  // levels; at quality 10 visibly worse (the quality input is honoured).
  Tensor img(DType::kUInt8, Shape{16, 24, 3});
  for (int64_t i = 0; i < img.NumElements(); ++i) {
    const int64_t y = i / 72, x = (i / 3) % 24, c = i % 3;
    img.data<uint8_t>()[i] = static_cast<uint8_t>(20 + 3 * y + 2 * x + 30 * c);  // <= 171
  }
  auto max_error = [&](int quality) {
    OpRunner enc("EncodeJpegVariableQuality", "enc");
    enc.Input(img).Input(Tensor::Scalar<int32_t>(quality));
    auto bytes = enc.Run1();
    REQUIRE_MESSAGE(bytes.ok(), bytes.status().ToString());
    OpRunner dec("DecodeJpeg", "dec");
    dec.Input(*bytes);
    auto back = dec.Run1();
    REQUIRE_MESSAGE(back.ok(), back.status().ToString());
    REQUIRE(back->shape() == img.shape());
    int worst = 0;
    for (int64_t i = 0; i < img.NumElements(); ++i)
      worst = std::max(worst, std::abs(int{back->data<uint8_t>()[i]} - img.data<uint8_t>()[i]));
    return worst;
  };
  const int fine = max_error(100), coarse = max_error(10);
  CHECK(fine <= 4);
  CHECK(coarse > fine);
  {
    OpRunner r("EncodeJpeg", "enc");
    r.String("format", "grayscale").Input(img);
    CheckError(r.Run().status(), {"node 'enc'", "format grayscale expects 1 channels"});
  }
  {
    OpRunner r("EncodeJpeg", "enc");
    r.Int("quality", 101).InputSpec({DType::kUInt8, Shape{2, 2, 3}});
    CheckError(r.Prepare(), {"quality must be in [0,100]"});
  }
  {
    OpRunner r("EncodeJpeg", "enc");
    r.Input(Tensor(DType::kUInt8, Shape{0, 3, 3}));
    CheckError(r.Run().status(), {"both sides must be in [1, 65535]"});
  }
  // The shape from the header; a window outside the image is refused.
  OpRunner enc("EncodeJpeg", "enc");
  enc.Input(img);
  auto bytes = enc.Run1();
  REQUIRE(bytes.ok());
  OpRunner shape("ExtractJpegShape", "shape");
  shape.Type("output_type", DType::kInt64).Input(*bytes);
  auto dims = shape.Run1();
  REQUIRE(dims.ok());
  CHECK(TensorsEqual(*dims, Make<int64_t>({16, 24, 3}, {3})));
  OpRunner crop("DecodeAndCropJpeg", "crop");
  crop.Input(*bytes).Input(Make<int32_t>({10, 0, 7, 4}, {4}));
  CheckError(crop.Run().status(), {"crop window"});
  OpRunner not_jpeg("ExtractJpegShape", "shape");
  not_jpeg.Input(Tensor::StringScalar("not a jpeg"));
  CheckError(not_jpeg.Run().status(), {"Invalid JPEG data"});
}

TEST_CASE("CTCGreedyDecoder and the FFTs: errors") {
  {
    OpRunner r("CTCGreedyDecoder", "ctc");
    r.T(DType::kFloat).Int("blank_index", 4);
    r.InputSpec({DType::kFloat, Shape{5, 2, 4}}).InputSpec({DType::kInt32, Shape{2}});
    CheckError(r.Prepare(), {"node 'ctc'", "attr 'blank_index'", "between -4 and 3", "4"});
  }
  {
    OpRunner r("CTCGreedyDecoder", "ctc");
    r.T(DType::kFloat).Input(Random<float>(Shape{5, 2, 4}, 1)).Input(Make<int32_t>({3, 6}, {2}));
    CheckError(r.Run().status(), {"sequence_length(1) = 6", "max_time 5"});
  }
  {
    OpRunner r("CTCGreedyDecoder", "ctc");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{5, 2, 4}})
        .InputSpec({DType::kInt32, Shape{3}});
    CheckError(r.Prepare(), {"input 'sequence_length'", "one entry per batch element"});
  }
  {
    OpRunner r("RFFT", "fft");
    r.Input(Random<float>(Shape{2, 5}, 1)).ConstantInput(Make<int32_t>({8}, {1}));
    CheckError(r.Prepare(), {"node 'fft'", "must have length of at least 8", "got 5"});
  }
  {
    OpRunner r("RFFT2D", "fft");
    r.Input(Random<float>(Shape{2, 5}, 1)).ConstantInput(Make<int32_t>({2, -1}, {2}));
    CheckError(r.Prepare(), {"fft_length[1] must be >= 0"});
  }
  {
    OpRunner r("RFFT", "fft");
    r.Type("Treal", DType::kDouble).Type("Tcomplex", DType::kComplex64);
    r.InputSpec({DType::kDouble, Shape{8}}).InputSpec({DType::kInt32, Shape{1}});
    CheckError(r.Prepare(), {"'Treal' float64", "'Tcomplex' complex64", "do not match"});
  }
  {
    OpRunner r("RFFT", "fft");
    r.Input(Random<float>(Shape{2, 5}, 1)).Input(Make<int32_t>({6}, {1}));
    CheckError(r.Run().status(), {"must have length of at least 6", "got 5"});
  }
  {
    OpRunner r("FFT", "fft");
    r.InputSpec({DType::kComplex64, Shape{}});
    CheckError(r.Prepare(), {"rank of at least 1"});
  }
}

}  // namespace
}  // namespace kiln::exec
