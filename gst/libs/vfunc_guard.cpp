// SPDX-License-Identifier: MIT
//
// The boundary guard (vfunc_guard.hpp): what a caught exception becomes.

#include "vfunc_guard.hpp"

#include "fault.hpp"

#include <gst/gst.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>

namespace edgetensor::gst
{

const char* report_boundary_exception(gpointer object, const char* where,
                                      std::exception_ptr error) noexcept
{
    // No allocation of ours here: the usual exception is std::bad_alloc.
    static thread_local char what[256];
    bool oom = false;
    try {
        std::rethrow_exception(error);
    } catch (const std::bad_alloc&) {
        oom = true;
        g_strlcpy(what, "out of memory (std::bad_alloc)", sizeof what);
    } catch (const std::exception& e) {
        g_strlcpy(what, e.what(), sizeof what);
    } catch (...) {
        g_strlcpy(what, "an exception that is no std::exception", sizeof what);
    }
    if (!where)
        where = "?";
    if (object && GST_IS_ELEMENT(object)) {
        GstElement* element = GST_ELEMENT(object);
        const char* name = GST_STR_NULL(GST_OBJECT_NAME(element));
        if (oom)
            GST_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT,
                              ("Out of memory in %s of %s.", where, name),
                              ("std::bad_alloc stopped at the GStreamer boundary"));
        else
            GST_ELEMENT_ERROR(element, CORE, FAILED,
                              ("Internal error in %s of %s: %s", where, name, what),
                              ("an exception stopped at the GStreamer boundary: a bug, please "
                               "report it"));
    } else if (object && GST_IS_OBJECT(object)) {
        GST_ERROR_OBJECT(object, "%s failed: %s (an exception stopped at the GStreamer boundary)",
                         where, what);
    } else {
        GST_ERROR("%s failed: %s (an exception stopped at the GStreamer boundary)", where, what);
    }
    return what;
}

void boundary_fault_point(const char* where)
{
    if (detail::fault_spec().empty())
        return;
    // Read once, like EDGETENSOR_FAULT itself.
    static const char* const only = std::getenv("EDGETENSOR_FAULT_THROW_AT");
    if (only && *only && (!where || std::strcmp(only, where) != 0))
        return;
    if (!detail::fault_inject(detail::FaultPoint::Throw))
        return;
    if (errno == ENOMEM)
        throw std::bad_alloc();
    throw std::system_error(errno, std::generic_category(), "injected by EDGETENSOR_FAULT");
}

} // namespace edgetensor::gst
