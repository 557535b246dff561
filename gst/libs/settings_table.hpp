// SPDX-License-Identifier: MIT
//
// An element's writable properties as a table, property id -> member of its Settings struct,
// read and written by one generic pair instead of a switch per element. The GParamSpec gives
// the GValue its type (a gboolean and a gint are the same C++ type). Not installed.

#pragma once

#include "glib_raii.hpp"

#include <gst/gst.h>

#include <span>
#include <string>
#include <type_traits>

namespace edgetensor::gst
{

/// One writable property: its id, and how a GValue reaches its Settings member and back.
template <typename Settings> struct SettingField {
    guint id;
    void (*set)(Settings&, const GValue*);
    void (*get)(const Settings&, GValue*);
};

namespace settings_detail
{

template <typename T> void from_value(const GValue* v, T& out)
{
    if constexpr (std::is_same_v<T, std::string>) {
        const gchar* s = g_value_get_string(v);
        out = s ? s : "";
    } else if constexpr (std::is_enum_v<T>) {
        out = T(g_value_get_enum(v));
    } else if constexpr (std::is_same_v<T, guint>) {
        out = g_value_get_uint(v);
    } else if constexpr (std::is_same_v<T, guint64>) {
        out = g_value_get_uint64(v);
    } else {
        static_assert(std::is_same_v<T, gint>,
                      "a setting is a string, enum, guint, guint64, gint or gboolean");
        out = G_VALUE_HOLDS_BOOLEAN(v) ? g_value_get_boolean(v) : g_value_get_int(v);
    }
}

template <typename T> void to_value(GValue* v, const T& in)
{
    if constexpr (std::is_same_v<T, std::string>) {
        g_value_set_string(v, in.empty() ? nullptr : in.c_str()); // "" reads as NULL
    } else if constexpr (std::is_enum_v<T>) {
        g_value_set_enum(v, gint(in));
    } else if constexpr (std::is_same_v<T, guint>) {
        g_value_set_uint(v, in);
    } else if constexpr (std::is_same_v<T, guint64>) {
        g_value_set_uint64(v, in);
    } else if (G_VALUE_HOLDS_BOOLEAN(v)) {
        g_value_set_boolean(v, in);
    } else {
        g_value_set_int(v, in);
    }
}

template <typename M> struct member;
template <typename S, typename T> struct member<T S::*> {
    using settings = S;
};

} // namespace settings_detail

/// The table row of property `id`, kept in `Member` (&Settings::field).
template <auto Member>
constexpr SettingField<typename settings_detail::member<decltype(Member)>::settings>
setting_field(guint id)
{
    using S = typename settings_detail::member<decltype(Member)>::settings;
    return {id, [](S& s, const GValue* v) { settings_detail::from_value(v, s.*Member); },
            [](const S& s, GValue* v) { settings_detail::to_value(v, s.*Member); }};
}

/// The row of property `id`; null for a read-only counter or an unknown id.
template <typename S>
const SettingField<S>* find_setting(std::span<const SettingField<S>> table, guint id)
{
    for (const SettingField<S>& f : table)
        if (f.id == id)
            return &f;
    return nullptr;
}

/// Stores property `id` from `value` into `s` (with the object lock held); false when the
/// table has no such property.
template <typename S>
bool set_setting(std::span<const SettingField<S>> table, S& s, guint id, const GValue* value)
{
    const SettingField<S>* f = find_setting(table, id);
    return f && (f->set(s, value), true);
}

/// Reads property `id` of `s` into `value` (with the object lock held); false as above.
template <typename S>
bool get_setting(std::span<const SettingField<S>> table, const S& s, guint id, GValue* value)
{
    const SettingField<S>* f = find_setting(table, id);
    return f && (f->get(s, value), true);
}

/// An element's set_property for its settings: a READY-only property past READY is refused
/// (refuse_unless_ready()), an unknown id warned about; otherwise the value is stored under
/// the object lock. True when it was stored (the caller may act on it, outside the lock).
template <typename S>
bool store_setting(GObject* object, std::span<const SettingField<S>> table, S& s, guint prop_id,
                   const GValue* value, GParamSpec* pspec)
{
    if (refuse_unless_ready(GST_ELEMENT(object), pspec))
        return false;
    bool stored;
    {
        ObjectLockGuard lock(object);
        stored = set_setting(table, s, prop_id, value);
    }
    if (!stored)
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    return stored;
}

/// An element's get_property for its settings, under the object lock; false when `prop_id` is
/// none of them (a counter, for the caller to read).
template <typename S>
bool load_setting(GObject* object, std::span<const SettingField<S>> table, const S& s,
                  guint prop_id, GValue* value)
{
    ObjectLockGuard lock(object);
    return get_setting(table, s, prop_id, value);
}

} // namespace edgetensor::gst
