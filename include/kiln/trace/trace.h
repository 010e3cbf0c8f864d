// The whole authoring API in one include: values and every op wrapper, variables, traced
// functions, control flow, tensor arrays, random ops, host callbacks, modules and export. Every
// public header under kiln/trace/ is listed here.
#pragma once

#include "kiln/trace/array_ops.h"
#include "kiln/trace/compare_ops.h"
#include "kiln/trace/concrete_function.h"
#include "kiln/trace/control_flow.h"
#include "kiln/trace/export.h"
#include "kiln/trace/function.h"
#include "kiln/trace/function_cache.h"
#include "kiln/trace/function_key.h"
#include "kiln/trace/gradient_tape.h"
#include "kiln/trace/host_callback.h"
#include "kiln/trace/math_ops.h"
#include "kiln/trace/module.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "kiln/trace/random.h"
#include "kiln/trace/string_ops.h"
#include "kiln/trace/tensor_array.h"
#include "kiln/trace/value.h"
#include "kiln/trace/variable.h"
