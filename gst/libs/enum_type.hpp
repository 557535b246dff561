// SPDX-License-Identifier: MIT
//
// The GType of a static GEnum, registered once: what every enum property's *_get_type()
// function does, written once. Not installed.

#pragma once

#include <glib-object.h>

namespace edgetensor::gst
{

/// Registers `values` (terminated by {0, nullptr, nullptr}, static) as the enum `name` at the
/// first call, thread-safe; `once` is the caller's static, 0 before. Returns the type.
inline GType enum_type(gsize* once, const char* name, const GEnumValue* values)
{
    if (g_once_init_enter(once)) {
        const GType t = g_enum_register_static(name, values);
        g_once_init_leave(once, t);
    }
    return GType(*once);
}

} // namespace edgetensor::gst
