// Sequential: layers applied in order (Keras's Sequential). Layers are named by type, made
// unique within the model ("dense", "dense_1", ...), which is also their name in the module
// tree ("dense_1/kernel"). Once the first layer knows its input size, each added layer is
// built at once.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/modules/layer.h"

namespace kiln::modules {

class Sequential : public Layer {
 public:
  explicit Sequential(std::string name = "sequential");

  std::string type_name() const override { return "Sequential"; }

  template <typename L, typename... Args>
  L& Add(Args&&... args) {
    return Add(std::make_unique<L>(std::forward<Args>(args)...));
  }
  template <typename L>
  L& Add(std::unique_ptr<L> layer) {
    L& ref = *layer;
    AddLayer(std::move(layer));
    return ref;
  }
  // A layer shared with others, such as a functional Model from MakeModel(...).get().
  template <typename L>
  L& Add(std::shared_ptr<L> layer) {
    L& ref = *layer;
    AddLayer(std::move(layer));
    return ref;
  }

  const std::vector<Layer*>& layers() const { return layers_; }

  bool built() const override;
  Status Build(const PartialShape& input) override;
  PartialShape built_input_shape() const override;
  Result<PartialShape> OutputShape(const PartialShape& input) const override;

  // Keras 3's model.summary() text: a box-drawn table of each layer's name (type), output
  // shape and parameter count, then the totals with their sizes in bytes. `line_length` <= 0
  // is Keras's default, 88 (Keras also narrows it to a terminal's width). A layer that cannot
  // be built yet shows "?" and "0 (unbuilt)", as in Keras. Never an error (a Result for
  // callers written when it could fail).
  Result<std::string> Summary(int line_length = 0) const;

 protected:
  // Passes `training` on to every layer, and each layer's mask (ComputeMask) to the next.
  trace::Value Call(const trace::Value& input, bool training) override;
  trace::Value CallWithMask(const trace::Value& input, const trace::Value& mask,
                            bool training) override;

 private:
  void AddLayer(std::shared_ptr<Layer> layer);

  std::vector<Layer*> layers_;
  PartialShape build_input_ = PartialShape::UnknownRank();  // the last Build's input
};

}  // namespace kiln::modules
