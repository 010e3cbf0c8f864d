// Op-tester cases of the image gradients: ResizeBilinearGrad, ResizeNearestNeighborGrad and
// ScaleAndTranslateGrad against plain-loop transposes of the forward resize; ResizeBicubicGrad, the
// CropAndResize gradients and DrawBoundingBoxes[V2] against values recorded from TensorFlow.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/cases_grad.h"
#include "ops/filter_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

// ---- image gradients -------------------------------------------------------------------------

// TF's scale and source coordinates, from their definition (float, as TF computes them).
float RefScale(int64_t in, int64_t out, bool align) {
  return align && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                          : static_cast<float>(in) / static_cast<float>(out);
}

// ResizeBilinearGrad: each grads pixel spreads over the four source pixels of the forward
// resize with the bilinear weights; ResizeNearestNeighborGrad: it goes to its one source pixel.
Tensor RefResizeGrad(const Tensor& grads, int64_t h, int64_t w, bool nearest, bool align, bool half,
                     DType out_type) {
  const int64_t n = grads.dim(0), gh = grads.dim(1), gw = grads.dim(2), c = grads.dim(3);
  const float sh = RefScale(h, gh, align), sw = RefScale(w, gw, align);
  const std::vector<double> g = Doubles(grads);
  std::vector<double> out(n * h * w * c, 0.0);
  auto at = [&](int64_t b, int64_t y, int64_t x, int64_t k) -> double& {
    return out[((b * h + y) * w + x) * c + k];
  };
  auto nearest_of = [&](int64_t i, float scale, int64_t limit) {
    const float src = half ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
    int64_t v = static_cast<int64_t>(align ? std::round(src) : std::floor(src));
    v = std::min(v, limit - 1);
    return half ? std::max<int64_t>(v, 0) : v;
  };
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t y = 0; y < gh; ++y) {
      for (int64_t x = 0; x < gw; ++x) {
        for (int64_t k = 0; k < c; ++k) {
          const double v = g[((b * gh + y) * gw + x) * c + k];
          if (nearest) {
            at(b, nearest_of(y, sh, h), nearest_of(x, sw, w), k) += v;
            continue;
          }
          const float fy =
              half ? (static_cast<float>(y) + 0.5f) * sh - 0.5f : static_cast<float>(y) * sh;
          const float fx =
              half ? (static_cast<float>(x) + 0.5f) * sw - 0.5f : static_cast<float>(x) * sw;
          const int64_t y0 = std::max<int64_t>(static_cast<int64_t>(std::floor(fy)), 0);
          const int64_t y1 = std::min<int64_t>(static_cast<int64_t>(std::ceil(fy)), h - 1);
          const int64_t x0 = std::max<int64_t>(static_cast<int64_t>(std::floor(fx)), 0);
          const int64_t x1 = std::min<int64_t>(static_cast<int64_t>(std::ceil(fx)), w - 1);
          const double ly = fy - std::floor(fy), lx = fx - std::floor(fx);
          at(b, y0, x0, k) += v * (1 - ly) * (1 - lx);
          at(b, y0, x1, k) += v * (1 - ly) * lx;
          at(b, y1, x0, k) += v * ly * (1 - lx);
          at(b, y1, x1, k) += v * ly * lx;
        }
      }
    }
  }
  return FromDoubles(out_type, Shape{n, h, w, c}, out);
}

void AddImageGrads(std::vector<OpCase>* c) {
  uint32_t seed = 500;
  struct Mode {
    bool align, half;
    const char* name;
  };
  const Mode modes[] = {
      {false, false, ""}, {true, false, " align_corners"}, {false, true, " half_pixel"}};
  // (grads h, w) -> (original h, w): up- and down-sampling, one row / column, equal sizes.
  const std::vector<std::pair<Shape, Shape>> sizes = {{Shape{2, 3, 4, 3}, Shape{2, 5, 7, 3}},
                                                      {Shape{1, 6, 5, 2}, Shape{1, 4, 2, 2}},
                                                      {Shape{1, 1, 4, 1}, Shape{1, 3, 4, 1}},
                                                      {Shape{3, 4, 4, 5}, Shape{3, 4, 4, 5}}};
  for (const Mode& m : modes) {
    for (const auto& [gs, os] : sizes) {
      const std::string geom = " " + gs.ToString() + " -> " + os.ToString() + m.name;
      const int64_t h = os.dim(1), w = os.dim(2);
      const bool align = m.align, half = m.half;
      for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16}) {
        const double tol = t == DType::kHalf ? 4e-3 : t == DType::kBFloat16 ? 3e-2 : 1e-5;
        c->push_back(
            OpCaseBuilder("ResizeBilinearGrad", "ResizeBilinearGrad " + DTypeShortName(t) + geom)
                .T(t)
                .Bool("align_corners", align)
                .Bool("half_pixel_centers", half)
                .Input(RandomOf(DType::kFloat, gs, NextSeed(seed)))
                .Input(RandomOf(t, os, NextSeed(seed)))
                .Reference1([h, w, align, half, t](const std::vector<Tensor>& in) {
                  return RefResizeGrad(in[0], h, w, false, align, half, t);
                })
                .Tolerance(tol)
                .Build());
      }
      for (DType t : {DType::kFloat, DType::kInt32, DType::kUInt8, DType::kHalf, DType::kDouble}) {
        const bool small = t == DType::kUInt8;
        c->push_back(
            OpCaseBuilder("ResizeNearestNeighborGrad",
                          "ResizeNearestNeighborGrad " + DTypeShortName(t) + geom)
                .T(t)
                .Bool("align_corners", align)
                .Bool("half_pixel_centers", half)
                .Input(RandomOf(t, gs, NextSeed(seed), small ? 0 : -3, small ? 9 : 3))
                .ConstInput(Make<int32_t>({static_cast<int32_t>(h), static_cast<int32_t>(w)}, {2}))
                .Reference1([h, w, align, half, t](const std::vector<Tensor>& in) {
                  return RefResizeGrad(in[0], h, w, true, align, half, t);
                })
                .Tolerance(t == DType::kHalf    ? 4e-3
                           : t == DType::kFloat ? 1e-5
                                                : 0)
                .Build());
      }
    }
  }
  // ResizeBicubicGrad: grads (1, 3, 4, 2) into a (1, 5, 3, 2) image; values recorded from
  // TensorFlow 2.21 (tf.raw_ops.ResizeBicubicGrad on the CPU).
  const std::vector<float> grads = {
      0.8485217094421387f,   0.9974529147148132f,  0.7645915746688843f,   0.23906929790973663f,
      -0.37796077132225037f, -0.8503199219703674f, -0.997204065322876f,   -0.7623907923698425f,
      -0.23575925827026367f, 0.3811131715774536f,  0.8521081209182739f,   0.9969435930252075f,
      0.7601814270019531f,   0.23244674503803253f, -0.3842617869377136f,  -0.853886604309082f,
      -0.9966716170310974f,  -0.757963240146637f,  -0.22913141548633575f, 0.38740527629852295f,
      0.8556550145149231f,   0.9963880777359009f,  0.7557359337806702f,   0.22581294178962708f};
  const std::vector<float> tf_default = {
      1.06350565f,    1.09887159f,   0.483931214f,  -0.275609344f, -1.3645339f,    -1.24142349f,
      -0.0421618447f, 0.216483533f,  0.459020197f,  0.408518374f,  -0.0497821346f, -0.345101804f,
      0.0346278511f,  0.551036656f,  0.963271618f,  0.778814018f,  -0.250252932f,  -0.821719766f,
      -0.886595309f,  -0.673344731f, 0.0429348052f, 0.600882709f,  1.04058659f,    0.666854024f,
      -0.354965478f,  -0.2401243f,   0.0713683218f, 0.285620391f,  0.404850006f,   0.222313464f};
  const std::vector<float> tf_align = {1.13095248f,
                                       1.16711116f,
                                       0.308008999f,
                                       -0.486952066f,
                                       -1.20101297f,
                                       -1.05634749f,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       -0.0522680208f,
                                       0.668786883f,
                                       1.2844286f,
                                       0.979392409f,
                                       -0.239892066f,
                                       -0.891562343f,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       -1.1637975f,
                                       -0.746848643f,
                                       0.499119312f,
                                       1.10239744f,
                                       1.05026615f,
                                       0.496094346f};
  const std::vector<float> tf_half = {
      0.872827947f,  0.868265271f,  0.200839877f,  -0.317521363f, -0.901276231f, -0.823289394f,
      0.373399824f,  0.371447921f,  0.0859202445f, -0.135837078f, -0.385570139f, -0.352206975f,
      0.0162773747f, 0.740443707f,  1.13100207f,   0.862402737f,  -0.176480606f, -0.862600505f,
      -0.370159447f, -0.224045798f, 0.13923116f,   0.307517797f,  0.350437701f,  0.180486888f,
      -0.865253568f, -0.523710608f, 0.32545507f,   0.718827724f,  0.819153607f,  0.421890974f};
  const std::pair<Mode, std::vector<float>> bicubic[] = {
      {modes[0], tf_default}, {modes[1], tf_align}, {modes[2], tf_half}};
  for (const auto& [m, want] : bicubic) {
    for (DType t : {DType::kFloat, DType::kDouble}) {
      const std::vector<double> wd(want.begin(), want.end());
      const Tensor expected = FromDoubles(t, Shape{1, 5, 3, 2}, wd);
      c->push_back(OpCaseBuilder("ResizeBicubicGrad",
                                 std::string("ResizeBicubicGrad ") + DTypeShortName(t) + m.name)
                       .T(t)
                       .Bool("align_corners", m.align)
                       .Bool("half_pixel_centers", m.half)
                       .Input(Make<float>(grads, {1, 3, 4, 2}))
                       .Input(RandomOf(t, Shape{1, 5, 3, 2}, 7))
                       .Reference1([expected](const auto&) { return expected; })
                       .Tolerance(1e-5)
                       .Build());
    }
  }
}

// ---- DrawBoundingBoxes -------------------------------------------------------------------------

void AddDrawBoxes(std::vector<OpCase>* c) {
  // Boxes inside, partly outside (lines outside not drawn), inverted (skipped), and beyond the
  // right edge; outputs recorded from TensorFlow 2.21 (tf.raw_ops.DrawBoundingBoxes[V2]).
  const Tensor boxes =
      Make<float>({0.1f, 0.2f, 0.9f, 0.8f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.2f, 0.9f,
                   0.0f, 0.0f, 1.0f, 1.0f, 0.3f,  1.5f,  0.6f, 2.0f, 0.2f, 0.1f, 1.7f, 0.6f},
                  {2, 3, 4});
  const std::vector<double> rgb_default = {
      1,    1,    0,    1,    1,    0,    0,    0,    1,    1,    1,    0,    0.25, 0.25, 0.25,
      0,    0,    1,    0,    0,    1,    0,    0,    1,    1,    1,    0,    0.25, 0.25, 0.25,
      1,    1,    0,    1,    1,    0,    1,    1,    0,    1,    1,    0,    0.25, 0.25, 0.25,
      0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
      1,    0,    0,    1,    0,    0,    1,    0,    0,    1,    1,    0,    1,    1,    0,
      1,    0,    0,    0.25, 0.25, 0.25, 1,    0,    0,    0.25, 0.25, 0.25, 1,    1,    0,
      1,    0,    0,    0.25, 0.25, 0.25, 1,    0,    0,    0.25, 0.25, 0.25, 1,    1,    0,
      1,    0,    0,    1,    1,    0,    1,    0,    0,    1,    1,    0,    1,    1,    0};
  const std::vector<double> gray = {1, 1,    1, 1,    0.25, 1,    1,    1,    1,    0.25,
                                    1, 1,    1, 1,    0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
                                    1, 1,    1, 1,    1,    1,    0.25, 1,    0.25, 1,
                                    1, 0.25, 1, 0.25, 1,    1,    1,    1,    1,    1};
  const std::vector<double> rgb_colors = {
      0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.7,  0.8,  0.9,  0.1,  0.2,  0.3,  0.25, 0.25, 0.25,
      0.7,  0.8,  0.9,  0.7,  0.8,  0.9,  0.7,  0.8,  0.9,  0.1,  0.2,  0.3,  0.25, 0.25, 0.25,
      0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.25, 0.25, 0.25,
      0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
      0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.1,  0.2,  0.3,
      0.1,  0.2,  0.3,  0.25, 0.25, 0.25, 0.1,  0.2,  0.3,  0.25, 0.25, 0.25, 0.1,  0.2,  0.3,
      0.1,  0.2,  0.3,  0.25, 0.25, 0.25, 0.1,  0.2,  0.3,  0.25, 0.25, 0.25, 0.1,  0.2,  0.3,
      0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.1,  0.2,  0.3,  0.1,  0.2,  0.3};
  const std::vector<double> rgba_default = {
      1,    1,    0,    1,    1,    1,    0,    1,    0,    0,    1,    1,    1,    1,    0,
      1,    0.25, 0.25, 0.25, 0.25, 0,    0,    1,    1,    0,    0,    1,    1,    0,    0,
      1,    1,    1,    1,    0,    1,    0.25, 0.25, 0.25, 0.25, 1,    1,    0,    1,    1,
      1,    0,    1,    1,    1,    0,    1,    1,    1,    0,    1,    0.25, 0.25, 0.25, 0.25,
      0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
      0.25, 0.25, 0.25, 0.25, 0.25, 1,    0,    0,    1,    1,    0,    0,    1,    1,    0,
      0,    1,    1,    1,    0,    1,    1,    1,    0,    1,    1,    0,    0,    1,    0.25,
      0.25, 0.25, 0.25, 1,    0,    0,    1,    0.25, 0.25, 0.25, 0.25, 1,    1,    0,    1,
      1,    0,    0,    1,    0.25, 0.25, 0.25, 0.25, 1,    0,    0,    1,    0.25, 0.25, 0.25,
      0.25, 1,    1,    0,    1,    1,    0,    0,    1,    1,    1,    0,    1,    1,    0,
      0,    1,    1,    1,    0,    1,    1,    1,    0,    1};
  struct DrawCase {
    std::string op;
    int64_t depth;
    std::vector<double> want;
    bool colors;
  };
  const DrawCase cases[] = {{"DrawBoundingBoxes", 3, rgb_default, false},
                            {"DrawBoundingBoxes", 1, gray, false},
                            {"DrawBoundingBoxesV2", 3, rgb_colors, true},
                            {"DrawBoundingBoxesV2", 4, rgba_default, false}};
  for (const DrawCase& d : cases) {
    for (DType t : {DType::kFloat, DType::kHalf}) {
      const Shape shape{2, 4, 5, d.depth};
      const Tensor want = FromDoubles(t, shape, d.want);
      OpCaseBuilder b(d.op, d.op + " " + DTypeShortName(t) + " depth " + std::to_string(d.depth) +
                                (d.colors ? " colors" : ""));
      b.T(t)
          .Input(FromDoubles(t, shape, std::vector<double>(shape.num_elements(), 0.25)))
          .Input(boxes);
      if (d.op == "DrawBoundingBoxesV2") {
        b.Input(d.colors ? Make<float>({0.1f, 0.2f, 0.3f, 0.4f, 0.7f, 0.8f, 0.9f, 1.0f}, {2, 4})
                         : Tensor(DType::kFloat, Shape{0, 4}));
      }
      c->push_back(b.Reference1([want](const auto&) { return want; }).Tolerance(1e-3).Build());
    }
  }
}

// ---- CropAndResize gradients -----------------------------------------------------------------

// Inputs and outputs recorded from TensorFlow 2.21 (tf.raw_ops.CropAndResizeGradImage /
// CropAndResizeGradBoxes on the CPU): grads (3, 2, 4, 2) of boxes inside, partly outside and
// inverted, on a (2, 5, 6, 2) image; and 1x1 crops (the box centres).
const std::vector<float> kCropGrads = {
    0.0f,          0.64421767f,   0.985449731f,  0.863209426f,  0.334988207f,  -0.350783229f,
    -0.871575654f, -0.982452571f, -0.631266713f, 0.0168136153f, 0.656986594f,  0.98816818f,
    0.854599059f,  0.31909889f,   -0.366479307f, -0.879695773f, -0.979177773f, -0.618137419f,
    0.0336224772f, 0.66956991f,   0.990607381f,  0.845746934f,  0.303118706f,  -0.382071793f,
    -0.887566686f, -0.975625992f, -0.604833722f, 0.0504223071f, 0.681963921f,  0.992766321f,
    0.836655617f,  0.287053734f,  -0.397555351f, -0.895187557f, -0.971798599f, -0.591357529f,
    0.0672069341f, 0.694164395f,  0.994644821f,  0.827328324f,  0.270905793f,  -0.412926495f,
    -0.902554452f, -0.967696011f, -0.577715635f, 0.0839744508f, 0.706170022f,  0.996241748f};
const std::vector<float> kCropImage = {
    1.0f,          0.955336511f,  0.825335622f,   0.621609926f,  0.362357736f,  0.070737198f,
    -0.227202162f, -0.504846215f, -0.737393796f,  -0.904072165f, -0.989992499f, -0.987479746f,
    -0.896758378f, -0.7259323f,   -0.490260571f,  -0.21079579f,  0.0874991789f, 0.377978086f,
    0.634692967f,  0.834712923f,  0.960170269f,   0.999858618f,  0.950232446f,  0.815725029f,
    0.608351052f,  0.346634895f,  0.0539552271f,  -0.243544534f, -0.519289136f, -0.748647153f,
    -0.91113025f,  -0.992225349f, -0.984687805f,  -0.889190912f, -0.714265168f, -0.475536942f,
    -0.194329709f, 0.104236409f,  0.393491387f,   0.647596896f,  0.843853951f,  0.964732647f,
    0.99943459f,   0.944859862f,  0.805883527f,   0.59491986f,   0.330814689f,  0.0371580012f,
    -0.259817898f, -0.533585072f, -0.759688497f,  -0.917930841f, -0.994177639f, -0.981617451f,
    -0.881372154f, -0.702397048f, -0.460677564f,  -0.177808702f, 0.120945118f,  0.408893436f,
    0.660316706f,  0.852757156f,  0.969022274f,   0.998727918f,  0.939220071f,  0.795814931f,
    0.581320882f,  0.314900547f,  0.0203493182f,  -0.276017845f, -0.547729254f, -0.770515144f,
    -0.924471915f, -0.995848954f, -0.978269517f,  -0.873304665f, -0.690329075f, -0.445689648f,
    -0.161236465f, 0.137617737f,  0.424179018f,   0.672851264f,  0.861418247f,  0.973038137f,
    0.997738957f,  0.933314443f,  0.785520256f,   0.567558289f,  0.298896462f,  0.00353678502f,
    -0.292140633f, -0.561720192f, -0.781123281f,  -0.930751979f, -0.997238576f, -0.97464484f,
    -0.86498934f,  -0.678067267f, -0.43057403f,   -0.144620508f, 0.154253334f,  0.439346373f,
    0.685194135f,  0.869836748f,  0.976778448f,   0.996467769f,  0.9271456f,    0.775003433f,
    0.55363369f,   0.282809675f,  -0.0132767474f, -0.308180839f, -0.575552344f, -0.791511774f,
    -0.936768115f, -0.99834621f,  -0.97074455f,   -0.856429398f, -0.66561228f,  -0.415338367f};
const std::vector<float> kTfGradImageBilinear = {
    0.0f,          0.0f,           0.0f,           0.0f,           0.0f,           0.0f,
    0.0f,          0.0f,           0.0f,           0.0f,           0.0f,           0.0f,
    0.0f,          0.0f,           0.0f,           0.0f,           0.0f,           0.0f,
    0.0f,          0.0f,           0.0f,           0.0f,           0.0f,           0.0f,
    -0.266269952f, -0.292687744f,  -0.266269952f,  -0.292687744f,  -0.181450084f,  0.0151266893f,
    -0.181450084f, 0.0151266893f,  0.204589143f,   0.297829837f,   0.204589143f,   0.297829837f,
    -0.177513376f, -0.195125252f,  -0.177513376f,  -0.195125252f,  -0.12096677f,   0.0100844642f,
    -0.12096677f,  0.0100844642f,  0.136392817f,   0.198553309f,   0.136392817f,   0.198553309f,
    0.0f,          0.0f,           0.0f,           0.0f,           0.0f,           0.0f,
    0.0f,          0.0f,           0.0f,           0.0f,           0.0f,           0.0f,
    0.0706170201f, 0.0996242017f,  -0.0557541251f, 0.467894018f,   0.350132614f,   0.2318286f,
    0.259630769f,  -0.0952851102f, -0.194475085f,  -0.364892423f,  -0.261472702f,  -0.294735789f,
    0.282467991f,  0.398496687f,   -0.223016411f,  0.583140492f,   -0.24188596f,   -0.511368036f,
    0.263389111f,  -0.201165557f,  -0.129650056f,  -0.243261606f,  -0.17431514f,   -0.196490511f,
    0.49732241f,   0.413664162f,   0.391361654f,   0.893574893f,   -0.997408628f,  -0.824697614f,
    -0.198777676f, -0.447593778f,  0.0f,           0.0f,           0.0f,           0.0f,
    0.0f,          0.0f,           -0.505013347f,  0.0134508917f,  0.437991112f,   0.658778846f,
    0.543384314f,  0.301941693f,   0.0813013166f,  -0.266785264f,  -0.146591708f,  -0.351878285f,
    0.0f,          0.0f,           -0.126253366f,  0.00336272386f, 0.109497815f,   0.164694771f,
    0.135846123f,  0.075485453f,   0.0203253329f,  -0.0666963384f, -0.0366479382f, -0.0879696012f};
const std::vector<float> kTfGradImageNearest = {
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          -0.887566686f, -0.975625992f, 0.0f,          0.0f,
    -0.604833722f, 0.0504223071f, 0.0f,          0.0f,          0.681963921f,  0.992766321f,
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          0.0f,          0.64421767f,   0.985449731f,  0.863209426f,
    0.334988207f,  -0.350783229f, 0.0f,          0.0f,          -0.871575654f, -0.982452571f,
    0.0f,          0.0f,          0.128454387f,  1.08021617f,   -0.902554452f, -0.967696011f,
    0.270905793f,  -0.412926495f, 0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          1.06185174f,   1.52149272f,   -0.971798599f, -0.591357529f,
    -0.397555351f, -0.895187557f, 0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          -0.631266713f, 0.0168136153f, 0.656986594f,  0.98816818f,
    0.854599059f,  0.31909889f,   0.0f,          0.0f,          -0.366479307f, -0.879695773f,
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f,
    0.0f,          0.0f,          0.0f,          0.0f,          0.0f,          0.0f};
const std::vector<float> kTfGradBoxes = {-23.5504684f, 2.01749802f, -9.00276852f, 3.5764792f,
                                         0.0f,         1.43245041f, 3.79666114f,  0.181199253f,
                                         0.0f,         3.57598686f, 2.55528402f,  -3.1101923f};
const std::vector<float> kTfGradImage1x1 = {
    0.0f,          0.0f,          0.0f, 0.0f, 0.0f,         0.0f,
    0.0f,          0.0f,          0.0f, 0.0f, 0.0f,         0.0f,
    0.0f,          0.0f,          0.0f, 0.0f, 0.025000006f, -0.0750000179f,
    0.0750000179f, -0.225000054f, 0.0f, 0.0f, 0.0f,         0.0f,
    0.0f,          0.0f,          0.0f, 0.0f, 1.10000002f,  -0.174999982f,
    1.29999995f,   -0.774999976f, 0.0f, 0.0f, 0.0f,         0.0f,
    0.0f,          0.0f,          0.0f, 0.0f, 0.0f,         0.0f,
    0.0f,          0.0f,          0.0f, 0.0f, 0.0f,         0.0f,
    0.0f,          0.0f,          0.0f, 0.0f, 0.0f,         0.0f,
    0.0f,          0.0f,          0.0f, 0.0f, 0.0f,         0.0f};
const std::vector<float> kTfGradBoxes1x1 = {3.64451528f, 0.133140713f, 3.64451528f, 0.133140713f,
                                            0.0f,        -2.11144209f, 0.0f,        -2.11144209f};

void AddCropGrads(std::vector<OpCase>* c) {
  const Tensor boxes = Make<float>(
      {0.1f, 0.2f, 0.8f, 0.9f, -0.2f, 0.1f, 0.6f, 1.3f, 0.5f, 0.5f, 0.2f, 0.1f}, {3, 4});
  const Tensor ind = Make<int32_t>({1, 0, 1}, {3});
  const Tensor boxes1 = Make<float>({0.2f, 0.3f, 0.7f, 0.8f, 0, 0, 1, 1}, {2, 4});
  const Tensor grads1 = Make<float>({0.5f, -1.5f, 2.0f, 0.25f}, {2, 1, 1, 2});
  const Tensor image = Make<float>(kCropImage, {2, 5, 6, 2});
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf}) {
    const double tol = t == DType::kHalf ? 5e-3 : 1e-5;
    for (const char* method : {"bilinear", "nearest"}) {
      const std::vector<float>& want =
          std::string(method) == "bilinear" ? kTfGradImageBilinear : kTfGradImageNearest;
      const Tensor expected =
          FromDoubles(t, Shape{2, 5, 6, 2}, std::vector<double>(want.begin(), want.end()));
      c->push_back(OpCaseBuilder("CropAndResizeGradImage",
                                 "CropAndResizeGradImage " + DTypeShortName(t) + " " + method)
                       .T(t)
                       .String("method", method)
                       .Input(Make<float>(kCropGrads, {3, 2, 4, 2}))
                       .Input(boxes)
                       .Input(ind)
                       .ConstInput(Make<int32_t>({2, 5, 6, 2}, {4}))
                       .Reference1([expected](const auto&) { return expected; })
                       .Tolerance(tol)
                       .Build());
    }
    const Tensor expected1 = FromDoubles(
        t, Shape{1, 5, 6, 2}, std::vector<double>(kTfGradImage1x1.begin(), kTfGradImage1x1.end()));
    c->push_back(OpCaseBuilder("CropAndResizeGradImage",
                               "CropAndResizeGradImage " + DTypeShortName(t) + " 1x1 crops")
                     .T(t)
                     .Input(grads1)
                     .Input(boxes1)
                     .Input(Make<int32_t>({0, 0}, {2}))
                     .Input(Make<int32_t>({1, 5, 6, 2}, {4}))
                     .Reference1([expected1](const auto&) { return expected1; })
                     .Tolerance(tol)
                     .Build());
  }
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kInt32}) {
    // The image in T (int32: rounded, so its case only runs the paths, against itself).
    const Tensor img = FromDoubles(t, Shape{2, 5, 6, 2},
                                   std::vector<double>(kCropImage.begin(), kCropImage.end()));
    OpCaseBuilder b("CropAndResizeGradBoxes", "CropAndResizeGradBoxes " + DTypeShortName(t));
    b.T(t).Input(Make<float>(kCropGrads, {3, 2, 4, 2})).Input(img).Input(boxes).Input(ind);
    if (t != DType::kInt32) {
      b.Reference1([](const auto&) {
         return Make<float>(kTfGradBoxes, {3, 4});
       }).Tolerance(t == DType::kHalf ? 5e-3 : 1e-5);
    }
    c->push_back(b.Build());
  }
  c->push_back(
      OpCaseBuilder("CropAndResizeGradBoxes", "CropAndResizeGradBoxes 1x1 crops")
          .T(DType::kFloat)
          .Input(grads1)
          .Input(Make<float>(std::vector<float>(kCropImage.begin(), kCropImage.begin() + 60),
                             {1, 5, 6, 2}))
          .Input(boxes1)
          .Input(Make<int32_t>({0, 0}, {2}))
          .Reference1([](const auto&) {
            return Make<float>(kTfGradBoxes1x1, {2, 4});
          })
          .Tolerance(1e-5)
          .Build());
}

// ScaleAndTranslateGrad: grads pixel (y, x) goes back to every input pixel the forward read for
// it, with the forward's weights (filter_ref.h's taps, in double).
void AddScaleAndTranslateGrad(std::vector<OpCase>* c) {
  struct Geometry {
    Shape grads;
    int64_t in_h, in_w;
    float sy, sx, ty, tx;
  };
  const std::vector<Geometry> geos = {
      {Shape{2, 4, 5, 2}, 6, 8, 4.0f / 6, 5.0f / 8, 0, 0},        // the forward downsampled
      {Shape{1, 9, 7, 3}, 4, 5, 9.0f / 4, 7.0f / 5, 0, 0},        // upsampled
      {Shape{1, 7, 6, 1}, 7, 6, 0.8f, 1.3f, 1.25f, -0.75f},       // translated
      {Shape{1, 6, 6, 2}, 5, 5, 1.0f, 0.5f, 3.0f, -2.0f},         // some samples fell outside
      {Shape{1, 9, 11, 2}, 40, 30, 9.0f / 40, 11.0f / 30, 0, 0},  // a wide antialias filter
      {Shape{2, 0, 3, 2}, 4, 4, 0.75f, 0.75f, 0, 0},              // no grads rows: zeros
      {Shape{0, 3, 3, 2}, 4, 4, 0.75f, 0.75f, 0, 0},              // empty batch
  };
  uint32_t seed = 9700;
  for (const std::string k : {"lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle",
                              "keyscubic", "mitchellcubic"}) {
    for (bool antialias : {true, false}) {
      int g = 0;
      for (const Geometry& geo : geos) {
        ++g;
        if (g > 2 && k != "lanczos3" && k != "box") continue;  // every filter on the first two
        OpCaseBuilder b("ScaleAndTranslateGrad",
                        "ScaleAndTranslateGrad " + k + (antialias ? " antialias " : " ") +
                            geo.grads.ToString() + " -> " + std::to_string(geo.in_h) + "x" +
                            std::to_string(geo.in_w) + " #" + std::to_string(g));
        b.T(DType::kFloat).String("kernel_type", k).Bool("antialias", antialias);
        b.Input(RandomOf(DType::kFloat, geo.grads, NextSeed(seed)))
            .Input(RandomOf(DType::kFloat, Shape{1, geo.in_h, geo.in_w, 1}, NextSeed(seed)));
        const Tensor scale = Make<float>({geo.sy, geo.sx}, {2});
        const Tensor tr = Make<float>({geo.ty, geo.tx}, {2});
        if (g % 2) {
          b.ConstInput(scale).Input(tr);
        } else {
          b.Input(scale).ConstInput(tr);
        }
        c->push_back(b.Reference1([k, antialias, geo](const std::vector<Tensor>& inputs) {
                        const Tensor& gr = inputs[0];
                        const int64_t n = gr.dim(0), oh = gr.dim(1), ow = gr.dim(2), ch = gr.dim(3);
                        const int64_t h = geo.in_h, w = geo.in_w;
                        const Taps ty = FilterTaps(k, antialias, h, oh, geo.sy, geo.ty);
                        const Taps tx = FilterTaps(k, antialias, w, ow, geo.sx, geo.tx);
                        const std::vector<double> v = Doubles(gr);
                        std::vector<double> o(n * h * w * ch, 0.0);
                        for (int64_t b2 = 0; b2 < n; ++b2)
                          for (int64_t y = 0; y < oh; ++y)
                            for (int64_t x = 0; x < ow; ++x)
                              for (const auto& [iy, wy] : ty[y])
                                for (const auto& [ix, wx] : tx[x])
                                  for (int64_t k2 = 0; k2 < ch; ++k2)
                                    o[((b2 * h + iy) * w + ix) * ch + k2] +=
                                        wy * wx * v[((b2 * oh + y) * ow + x) * ch + k2];
                        return FromDoubles(DType::kFloat, Shape{n, h, w, ch}, o);
                      })
                         .Tolerance(1e-4)
                         .Build());
      }
    }
  }
}

}  // namespace

void AddImageGradCases(std::vector<OpCase>* c) {
  AddImageGrads(c);
  AddDrawBoxes(c);
  AddCropGrads(c);
  AddScaleAndTranslateGrad(c);
}

}  // namespace kiln::testing
