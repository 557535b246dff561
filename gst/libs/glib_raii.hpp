// SPDX-License-Identifier: MIT
//
// GLib/GStreamer RAII for C++ members and locals: unique_ptrs with unref deleters and an
// object-lock guard. (g_autoptr works too for locals; these also fit class members.)

#pragma once

#include <gst/gst.h>

#include <memory>

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

} // namespace edgetensor::gst
