// SPDX-License-Identifier: MIT
//
// libgstedgetensor-1.0 is built with hidden symbols: it exports its public C API
// (GST_EDGE_TENSOR_API), its public C++ API, and, marked with this, the internal functions the
// plugin and the tests link against. Those are no API: not installed, no ABI promise, free to
// change with the plugin they ship with. Not installed.

#pragma once

#define EDGETENSOR_GST_INTERNAL __attribute__((visibility("default")))
