#include "show.h"

#include "commands.h"
#include "graph_draw.h"
#include "kiln/exec/saved_model.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::cli {

Status Show(const ShowOptions& options, std::ostream& out) {
  if (options.signature_def && !options.tag_set)
    return InvalidArgument("--signature_def needs --tag_set (the tag-set of its MetaGraphDef)");
  KILN_ASSIGN_OR_RETURN(auto model, exec::ReadSavedModelProto(options.dir));
  return options.json ? ShowJson(*model, options, out) : ShowText(*model, options, out);
}

namespace {

struct ShowArgs : CommandArgs {
  ShowOptions show;
  GraphDrawOptions draw;
  std::string dir, tag_set, signature_def, draw_output, devices;
  bool placement = false;
  CLI::Option* tag_opt = nullptr;
  CLI::Option* sig_opt = nullptr;
  CLI::Option* graph_opt = nullptr;
  CLI::Option* draw_output_opt = nullptr;
};

}  // namespace

std::unique_ptr<CommandArgs> SetupShowCommand(CLI::App& cmd) {
  auto a = std::make_unique<ShowArgs>();
  cmd.add_option("--dir", a->dir, "SavedModel directory")->required();
  cmd.add_flag("--all", a->show.all, "Show everything");
  a->tag_opt = cmd.add_option("--tag_set", a->tag_set, "Comma-separated tags of a MetaGraphDef");
  a->sig_opt = cmd.add_option("--signature_def", a->signature_def, "A SignatureDef key");
  cmd.add_flag("--list_ops", a->show.list_ops, "With --tag_set: list the ops it uses");
  cmd.add_flag("--json", a->show.json, "Print JSON instead of TensorFlow's text");
  cmd.add_flag("--placement", a->placement,
               "Load the bundle and show where each step of each signature runs, and the "
               "copies between devices");
  cmd.add_option("--device", a->devices,
                 "With --placement: devices in priority order, comma-separated (cpu)");
  a->graph_opt = cmd.add_option("--graph", a->draw.format, "Draw a signature: dot or svg");
  a->draw_output_opt =
      cmd.add_option("--output", a->draw_output, "With --graph: write the drawing to a file");
  return a;
}

Status RunShowCommand(const CommandArgs& args, std::ostream& out, std::ostream& /*err*/) {
  const auto& a = static_cast<const ShowArgs&>(args);
  if (a.placement) {
    PlacementOptions p;
    p.dir = a.dir;
    if (*a.tag_opt) p.tag_set = a.tag_set;
    p.devices = a.devices;
    if (*a.sig_opt) p.signature_def = a.signature_def;
    return ShowPlacement(p, out);
  }
  if (*a.graph_opt) {
    GraphDrawOptions draw = a.draw;
    draw.dir = a.dir;
    if (*a.tag_opt) draw.tag_set = a.tag_set;
    draw.signature_def = a.signature_def;
    if (*a.draw_output_opt) draw.output = a.draw_output;
    return DrawGraph(draw, out);
  }
  ShowOptions show = a.show;
  show.dir = a.dir;
  if (*a.tag_opt) show.tag_set = a.tag_set;
  if (*a.sig_opt) show.signature_def = a.signature_def;
  return Show(show, out);
}

}  // namespace kiln::cli
