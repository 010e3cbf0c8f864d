#include "commands.h"

namespace kiln::cli {
namespace {

constexpr char kShowHelp[] =
    "Shows what a SavedModel holds, as TensorFlow's saved_model_cli show prints it.\n"
    "  show --dir D                      the tag-sets\n"
    "  show --dir D --tag_set serve      the SignatureDef keys of that MetaGraphDef\n"
    "  show --dir D --tag_set serve --signature_def serving_default\n"
    "                                    the inputs and outputs of one signature\n"
    "  show --dir D --all                everything, with the ops and restored functions\n"
    "Add --json for the same facts as JSON (docs/cli.md).\n"
    "  show --dir D --signature_def K --graph dot|svg [--output F]\n"
    "                                    draw the function graph signature K runs\n"
    "  show --dir D --placement [--device gpu,cpu] [--signature_def K]\n"
    "                                    where each step runs and what crosses devices";

constexpr char kRunHelp[] =
    "Runs a signature of a SavedModel and prints each output as numpy prints it.\n"
    "  run --dir D --tag_set serve --signature_def serving_default \\\n"
    "      --inputs 'x=in.npy;y=in.npz[name]' --input_exprs 'a=5.0;b=[[1,2],[3,4]]' \\\n"
    "      [--outdir OUT [--overwrite]] [--device gpu,cpu]\n"
    "      [--precision fp32|tf32|fp16|bf16]";

constexpr char kBenchHelp[] =
    "Times a signature: bundle size, load time, first call, per-call p50/p90/p99/mean/min over\n"
    "timed runs after warm-up runs, throughput and resident memory (docs/cli.md).\n"
    "  bench --dir D [--tag_set serve] [--signature_def serving_default]\n"
    "        [--inputs 'x=in.npy'] [--input_exprs 'a=5.0'] [--threads N] [--runs R]\n"
    "        [--warmup W] [--min_seconds S] [--batch B] [--json] [--device gpu,cpu]\n"
    "        [--precision fp32|tf32|fp16|bf16] [--cuda_graphs] [--device_io]\n"
    "Inputs not given are generated (unknown dims: --batch for the first, 1 for others).";

constexpr char kScanHelp[] =
    "Lists the ops that touch files or the host (ReadFile, WriteFile, PrintV2 to a file, host\n"
    "callbacks...), as TensorFlow's saved_model_cli scan does.\n"
    "  scan --dir D [--tag_set serve]";

constexpr char kCompileHelp[] =
    "Writes a serving plan of a SavedModel into D/assets.extra/kiln.plan (which TensorFlow\n"
    "ignores): each function imported, inlined, pruned and fused once, so loads skip that work\n"
    "(docs/serving-plan.md). Loads use a plan only while the bundle's files are unchanged.\n"
    "  compile --dir D [--tag_set serve] [--signature_def K ...] [--device cpu|gpu,cpu]\n"
    "        [--tune_batch B,...] [--precision fp32|tf32|fp16|bf16] [--no_freeze]";

constexpr char kQuantizeHelp[] =
    "Writes a copy of a SavedModel with its weights stored as int8 (one scale per output\n"
    "channel) or half precision; TensorFlow, TF Serving and kiln run the copy. Prints each\n"
    "variable's scale and error and each output's error against the float model, measured on\n"
    "calibration data or generated inputs (docs/quantize.md). --mode int8 also quantizes the\n"
    "activations of products and convolutions, with ranges measured on calibration data.\n"
    "  quantize --dir IN --output_dir OUT --mode int8|weights_int8|float16|bfloat16\n"
    "           [--calibration 'x=calib.npy' | --calibration_dir D] [--per_tensor]\n"
    "           [--calibration_method minmax|percentile] [--percentile P]\n"
    "           [--exclude NAME ...] [--min_elements N] [--report report.json] [--overwrite]";

constexpr Subcommand kSubcommands[] = {
    {"show", kShowHelp, &SetupShowCommand, &RunShowCommand},
    {"run", kRunHelp, &SetupRunCommand, &RunRunCommand},
    {"scan", kScanHelp, &SetupScanCommand, &RunScanCommand},
    {"bench", kBenchHelp, &SetupBenchCommand, &RunBenchCommand},
    {"compile", kCompileHelp, &SetupCompileCommand, &RunCompileCommand},
    {"quantize", kQuantizeHelp, &SetupQuantizeCommand, &RunQuantizeCommand},
};

}  // namespace

std::span<const Subcommand> Subcommands() { return kSubcommands; }

}  // namespace kiln::cli
