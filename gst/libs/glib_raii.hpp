// SPDX-License-Identifier: MIT
//
// GLib/GStreamer RAII for C++ members and locals: unique_ptrs with unref deleters and an
// object-lock guard. (g_autoptr works too for locals; these also fit class members.)

#pragma once

#include <gst/gst.h>

#include <memory>
#include <string>

namespace edgetensor::gst
{

struct GstObjectUnref {
    void operator()(gpointer obj) const noexcept
    {
        if (obj)
            gst_object_unref(obj);
    }
};
struct MiniObjectUnref {
    void operator()(gpointer obj) const noexcept
    {
        if (obj)
            gst_mini_object_unref(GST_MINI_OBJECT_CAST(obj));
    }
};
struct GFree {
    void operator()(gpointer p) const noexcept { g_free(p); }
};
struct StructureFree {
    void operator()(GstStructure* s) const noexcept
    {
        if (s)
            gst_structure_free(s);
    }
};

template <typename T> using GstObjectPtr = std::unique_ptr<T, GstObjectUnref>;
template <typename T> using MiniObjectPtr = std::unique_ptr<T, MiniObjectUnref>;
using GCharPtr = std::unique_ptr<gchar, GFree>;
using StructurePtr = std::unique_ptr<GstStructure, StructureFree>;

/// The running GStreamer's version as text ("GStreamer 1.26.2"), for messages:
/// gst_version_string() hands out a string to free, which a message built in place leaks.
inline std::string running_gst_version()
{
    GCharPtr v(gst_version_string());
    return v ? std::string(v.get()) : std::string("GStreamer ?");
}

/// Holds GST_OBJECT_LOCK for its scope.
class ObjectLockGuard
{
public:
    explicit ObjectLockGuard(gpointer obj) noexcept : obj_(GST_OBJECT_CAST(obj))
    {
        GST_OBJECT_LOCK(obj_);
    }
    ~ObjectLockGuard() { GST_OBJECT_UNLOCK(obj_); }
    ObjectLockGuard(const ObjectLockGuard&) = delete;
    ObjectLockGuard& operator=(const ObjectLockGuard&) = delete;

private:
    GstObject* obj_;
};

/// DESIGN.md §4: a GST_PARAM_MUTABLE_READY property set past READY is refused with an element
/// warning and ignored. Returns true when the caller must not apply the value. The state is
/// read under the object lock; the warning is posted outside it.
inline bool refuse_unless_ready(GstElement* element, const GParamSpec* pspec)
{
    if (!(pspec->flags & GST_PARAM_MUTABLE_READY))
        return false;
    GstState cur;
    {
        ObjectLockGuard lock(element);
        cur = GST_STATE(element);
    }
    if (cur <= GST_STATE_READY)
        return false;
    GST_ELEMENT_WARNING(element, LIBRARY, SETTINGS,
                        ("Property \"%s\" can only change in the NULL or READY state; "
                         "the new value is ignored.",
                         pspec->name),
                        (nullptr));
    return true;
}

} // namespace edgetensor::gst
