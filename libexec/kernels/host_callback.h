// The host-callback registry is declared in the public header (libtrace registers callbacks
// through it); the EagerPyFunc kernel (host_callback_ops.cc) defines it.
#pragma once

#include "kiln/exec/host_callback.h"
