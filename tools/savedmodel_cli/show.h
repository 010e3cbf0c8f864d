// `savedmodel-cli show`: what TensorFlow 2.21's `saved_model_cli show` prints, byte for byte,
// or the same facts as JSON (schema in docs/cli.md).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "kiln/core/status.h"

namespace tensorflow {
class SavedModel;
}

namespace kiln::cli {

struct ShowOptions {
  std::filesystem::path dir;
  bool all = false;
  std::optional<std::string> tag_set;        // comma-separated
  std::optional<std::string> signature_def;  // needs tag_set
  bool list_ops = false;                     // with tag_set: the ops line
  bool json = false;
};

// Reads dir (validating it like the loader does) and prints to `out`. Nothing is written to
// `out` when reading fails.
Status Show(const ShowOptions& options, std::ostream& out);

// `show --placement`: loads the bundle on `devices` and prints each signature's schedule with
// the device of every step and the copies between devices.
struct PlacementOptions {
  std::filesystem::path dir;
  std::string tag_set = "serve";
  std::string devices;                       // comma-separated priority list; "" = the host
  std::optional<std::string> signature_def;  // only this one
};
Status ShowPlacement(const PlacementOptions& options, std::ostream& out);

// The printers, on an already-read proto (for tests and for callers that hold one).
Status ShowText(const tensorflow::SavedModel& model, const ShowOptions& options, std::ostream& out);
Status ShowJson(const tensorflow::SavedModel& model, const ShowOptions& options, std::ostream& out);

}  // namespace kiln::cli
