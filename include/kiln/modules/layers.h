// Every layer of kiln::modules in one include.
#pragma once

#include "kiln/modules/activations.h"
#include "kiln/modules/attention.h"
#include "kiln/modules/conv.h"
#include "kiln/modules/core_layers.h"
#include "kiln/modules/dense.h"
#include "kiln/modules/functional.h"
#include "kiln/modules/initializers.h"
#include "kiln/modules/layer.h"
#include "kiln/modules/merging.h"
#include "kiln/modules/normalization.h"
#include "kiln/modules/padding.h"
#include "kiln/modules/pooling.h"
#include "kiln/modules/recurrent.h"
#include "kiln/modules/sequential.h"
