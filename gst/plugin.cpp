// SPDX-License-Identifier: MIT
//
// The "edgetensor" plugin: registers every element. Shared initialisation (debug categories,
// the core-log bridge, the allocator) lives in libgstedgetensor-1.0 and runs once.

#include "elements/gsttensorbatch.h"
#include "elements/gsttensorconvert.h"
#include "elements/gsttensorimport.h"
#include "elements/gsttensorinfer.h"
#include "elements/gsttensoripcsink.h"
#include "elements/gsttensoripcsrc.h"
#include "elements/gsttensortestsrc.h"

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

static gboolean plugin_init(GstPlugin* plugin)
{
    gst_edge_tensor_init();
    gboolean ok = FALSE;
    ok |= GST_ELEMENT_REGISTER(tensortestsrc, plugin);
    ok |= GST_ELEMENT_REGISTER(tensorconvert, plugin);
    ok |= GST_ELEMENT_REGISTER(tensorimport, plugin);
    ok |= GST_ELEMENT_REGISTER(tensoripcsink, plugin);
    ok |= GST_ELEMENT_REGISTER(tensoripcsrc, plugin);
    ok |= GST_ELEMENT_REGISTER(tensorbatch, plugin);
    ok |= GST_ELEMENT_REGISTER(tensorinfer, plugin);
    return ok;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, edgetensor,
                  "Zero-copy tensors over DMA-BUF for edge vision pipelines", plugin_init,
                  PACKAGE_VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
