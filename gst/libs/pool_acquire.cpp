// SPDX-License-Identifier: MIT
//
// Element-side pool failures (pool_acquire.hpp).

#include "pool_acquire.hpp"

#include <gst/edgetensor/gstedgetensorbufferpool.h>

#include <sys/resource.h>

#include <cerrno>

namespace edgetensor::gst
{

std::string take_pool_error(GstBufferPool* pool, int* err)
{
    if (err)
        *err = 0;
    if (!pool || !GST_IS_EDGE_TENSOR_BUFFER_POOL(pool))
        return {};
    StructurePtr failure(static_cast<GstStructure*>(
        g_object_steal_qdata(G_OBJECT(pool), g_quark_from_static_string(kPoolFailureQuark))));
    if (!failure)
        return {};
    gint e = 0;
    if (err && gst_structure_get_int(failure.get(), "errno", &e))
        *err = e;
    const gchar* message = gst_structure_get_string(failure.get(), "message");
    return message ? message : "";
}

void post_acquire_error(GstElement* element, GstBufferPool* pool, GstFlowReturn ret,
                        const char* what)
{
    int err = 0;
    const std::string why = take_pool_error(pool, &err);
    if (why.empty()) {
        GST_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT, ("Cannot allocate %s.", what),
                          ("the buffer pool %s returned %s",
                           pool ? GST_OBJECT_NAME(pool) : "(none)", gst_flow_get_name(ret)));
        return;
    }
    // The library names errnos in its messages ("... (EMFILE)"), also where several providers
    // failed and no single errno could be kept.
    if (err == EMFILE || err == ENFILE || why.find("(EMFILE)") != std::string::npos ||
        why.find("(ENFILE)") != std::string::npos) {
        struct rlimit rl {
        };
        getrlimit(RLIMIT_NOFILE, &rl);
        GST_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT,
                          ("Cannot allocate %s: too many open files (EMFILE). Every pooled "
                           "buffer holds a file descriptor and this process reached its limit "
                           "of %llu (ulimit -n): raise it, or let fewer buffers wait downstream "
                           "(a smaller queue, a bounded pool).",
                           what, (unsigned long long)rl.rlim_cur),
                          ("%s", why.c_str()));
        return;
    }
    GST_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT,
                      ("Cannot allocate %s: %s", what, why.c_str()),
                      ("buffer pool %s", pool ? GST_OBJECT_NAME(pool) : "(none)"));
}

bool activate_pool(GstElement* element, GstBufferPool* pool, const char* what)
{
    if (gst_buffer_pool_is_active(pool) || gst_buffer_pool_set_active(pool, TRUE))
        return true;
    post_acquire_error(element, pool, GST_FLOW_ERROR, what);
    return false;
}

GstFlowReturn prepare_output_from_pool(GstBaseTransform* trans, GstBaseTransformClass* parent,
                                       GstBuffer* inbuf, GstBuffer** outbuf)
{
    GstObjectPtr<GstBufferPool> pool(gst_base_transform_get_buffer_pool(trans));
    if (pool && !activate_pool(GST_ELEMENT(trans), pool.get(), "the output buffers"))
        return GST_FLOW_ERROR;
    const GstFlowReturn ret = parent->prepare_output_buffer(trans, inbuf, outbuf);
    if (ret == GST_FLOW_ERROR)
        post_acquire_error(GST_ELEMENT(trans), pool.get(), ret, "an output buffer");
    return ret;
}

} // namespace edgetensor::gst
