// The authoring library in one include: values and ops, variables, traced functions,
// modules and export.
#pragma once

#include "kiln/trace/control_flow.h"
#include "kiln/trace/export.h"
#include "kiln/trace/function.h"
#include "kiln/trace/math_ops.h"
#include "kiln/trace/module.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "kiln/trace/tensor_array.h"
#include "kiln/trace/value.h"
#include "kiln/trace/variable.h"
