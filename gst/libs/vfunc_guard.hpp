// SPDX-License-Identifier: MIT
//
// The one place an exception stops at the GStreamer boundary. Every vfunc, pad function,
// property accessor, GStreamer callback and extern "C" entry of gst/ that runs C++ which can
// throw (allocation: strings, vectors, shared state) runs it through guarded(): a GObject
// signal, a streaming thread or a C caller never sees an exception. (Locking a std::mutex
// throws only on misuse, a bug terminate() reports honestly: code that only locks is not
// wrapped.) What was caught becomes, on an element, an element error naming the
// element and the vfunc (and the vfunc returns its flow error, FALSE or default); on any other
// object (a pool, an allocator) or none (the import cache's C API), an ERROR log naming the
// object and the entry, with the same fallback. Not installed.
//
// Tests make a guarded call throw through the core's fault hook: EDGETENSOR_FAULT=throw=ENOMEM
// throws std::bad_alloc at guarded calls (any other errno: std::system_error), counted and
// skipped like every fault point; EDGETENSOR_FAULT_THROW_AT=<where> ("transform") limits the
// point, and its counting, to the guards of that name (docs/testing.md).

#pragma once

#include "internal_api.hpp"

#include <glib.h>

#include <exception>
#include <type_traits>
#include <utility>

namespace edgetensor::gst
{

/// Says what `error` (a caught exception) did at `where` ("transform", "get_property",
/// "gst_edge_tensor_import_cache_get_stats"): a GstElement `object` gets an element error
/// naming it and `where` (std::bad_alloc: RESOURCE/NO_SPACE_LEFT "Out of memory in ...";
/// anything else: CORE/FAILED "Internal error in ...: <what>"); another GstObject, or none,
/// an ERROR log. Returns the exception's what() (for entries that report it in a `why`), valid
/// until the next call on this thread. Never throws.
EDGETENSOR_GST_INTERNAL const char* report_boundary_exception(gpointer object, const char* where,
                                                              std::exception_ptr error) noexcept;

/// Throws when the fault hook's "throw" point fires at `where` (tests only; unarmed, it costs a
/// static's guard and a string's size).
EDGETENSOR_GST_INTERNAL void boundary_fault_point(const char* where);

namespace guard_detail
{

template <typename R, typename Fallback> R fall_back(Fallback& fallback, const char* what)
{
    if constexpr (std::is_invocable_v<Fallback&, const char*>)
        return fallback(what);
    else if constexpr (std::is_invocable_v<Fallback&>)
        return fallback();
    else
        return static_cast<R>(fallback);
}

} // namespace guard_detail

/// Runs `body` for `object`'s `where`; when it throws, reports it (report_boundary_exception())
/// and returns `fallback`: a value (GST_FLOW_ERROR, FALSE), or a callable taking nothing or the
/// exception's message, for a fallback that must build its result (an empty caps) or release
/// what the vfunc owns. The fallback itself must not throw.
template <typename Fallback, typename Body>
auto guarded(gpointer object, const char* where, Fallback&& fallback, Body&& body) noexcept
    -> std::invoke_result_t<Body&>
{
    using R = std::invoke_result_t<Body&>;
    const char* what = nullptr;
    try {
        boundary_fault_point(where);
        return body();
    } catch (...) {
        what = report_boundary_exception(object, where, std::current_exception());
    }
    return guard_detail::fall_back<R>(fallback, what);
}

/// guarded() for a body that returns nothing (set_property, a void C entry).
template <typename Body> void guarded(gpointer object, const char* where, Body&& body) noexcept
{
    static_assert(std::is_void_v<std::invoke_result_t<Body&>>,
                  "a guarded body with a result needs a fallback");
    try {
        boundary_fault_point(where);
        body();
    } catch (...) {
        report_boundary_exception(object, where, std::current_exception());
    }
}

} // namespace edgetensor::gst
