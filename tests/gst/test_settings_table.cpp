// SPDX-License-Identifier: MIT
//
// The elements' settings table (gst/libs/settings_table.hpp): property id -> Settings member,
// each GValue type to its member and back (a gboolean and a gint are both int in C++), an empty
// string read back as NULL, unknown ids refused.

#include "gst_test_util.hpp"
#include "settings_table.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <string>

namespace edgetensor::test
{
namespace
{

using gst::SettingField;

struct Settings {
    std::string path;
    guint count = 0;
    gint uid = -1;
    gboolean flag = FALSE;
    GstEdgeTensorMemoryKind kind = GST_EDGE_TENSOR_MEMORY_AUTO;
    guint64 timeout = 0;
};

enum : guint {
    PROP_PATH = 1,
    PROP_COUNT,
    PROP_UID,
    PROP_FLAG,
    PROP_KIND,
    PROP_TIMEOUT,
    PROP_COUNTER
};

std::span<const SettingField<Settings>> fields()
{
    static constexpr SettingField<Settings> kFields[] = {
        gst::setting_field<&Settings::path>(PROP_PATH),
        gst::setting_field<&Settings::count>(PROP_COUNT),
        gst::setting_field<&Settings::uid>(PROP_UID),
        gst::setting_field<&Settings::flag>(PROP_FLAG),
        gst::setting_field<&Settings::kind>(PROP_KIND),
        gst::setting_field<&Settings::timeout>(PROP_TIMEOUT),
    };
    return kFields;
}

struct Value {
    GValue v = G_VALUE_INIT;
    explicit Value(GType t) { g_value_init(&v, t); }
    ~Value() { g_value_unset(&v); }
};

TEST(SettingsTable, EveryKindOfValueReachesItsMemberAndComesBack)
{
    Settings s;
    Value path(G_TYPE_STRING), count(G_TYPE_UINT), uid(G_TYPE_INT), flag(G_TYPE_BOOLEAN),
        kind(GST_TYPE_EDGE_TENSOR_MEMORY_KIND);
    g_value_set_string(&path.v, "/tmp/x.sock");
    g_value_set_uint(&count.v, 7);
    g_value_set_int(&uid.v, 1000);
    g_value_set_boolean(&flag.v, TRUE);
    g_value_set_enum(&kind.v, GST_EDGE_TENSOR_MEMORY_SHM);
    EXPECT_TRUE(gst::set_setting(fields(), s, PROP_PATH, &path.v));
    EXPECT_TRUE(gst::set_setting(fields(), s, PROP_COUNT, &count.v));
    EXPECT_TRUE(gst::set_setting(fields(), s, PROP_UID, &uid.v));
    EXPECT_TRUE(gst::set_setting(fields(), s, PROP_FLAG, &flag.v));
    EXPECT_TRUE(gst::set_setting(fields(), s, PROP_KIND, &kind.v));
    EXPECT_EQ(s.path, "/tmp/x.sock");
    EXPECT_EQ(s.count, 7u);
    EXPECT_EQ(s.uid, 1000);
    EXPECT_EQ(s.flag, TRUE);
    EXPECT_EQ(s.kind, GST_EDGE_TENSOR_MEMORY_SHM);

    Value out_flag(G_TYPE_BOOLEAN), out_uid(G_TYPE_INT), out_kind(GST_TYPE_EDGE_TENSOR_MEMORY_KIND);
    EXPECT_TRUE(gst::get_setting(fields(), s, PROP_FLAG, &out_flag.v));
    EXPECT_TRUE(gst::get_setting(fields(), s, PROP_UID, &out_uid.v));
    EXPECT_TRUE(gst::get_setting(fields(), s, PROP_KIND, &out_kind.v));
    EXPECT_TRUE(g_value_get_boolean(&out_flag.v));
    EXPECT_EQ(g_value_get_int(&out_uid.v), 1000);
    EXPECT_EQ(g_value_get_enum(&out_kind.v), GST_EDGE_TENSOR_MEMORY_SHM);
}

TEST(SettingsTable, AGuint64KeepsAllItsBits)
{
    Settings s;
    Value in(G_TYPE_UINT64), out(G_TYPE_UINT64);
    g_value_set_uint64(&in.v, G_MAXUINT64 - 1);
    ASSERT_TRUE(gst::set_setting(fields(), s, PROP_TIMEOUT, &in.v));
    EXPECT_EQ(s.timeout, G_MAXUINT64 - 1);
    ASSERT_TRUE(gst::get_setting(fields(), s, PROP_TIMEOUT, &out.v));
    EXPECT_EQ(g_value_get_uint64(&out.v), G_MAXUINT64 - 1);
}

TEST(SettingsTable, AnEmptyStringReadsAsNullAndNullStoresEmpty)
{
    Settings s;
    Value in(G_TYPE_STRING), out(G_TYPE_STRING);
    g_value_set_string(&in.v, nullptr);
    ASSERT_TRUE(gst::set_setting(fields(), s, PROP_PATH, &in.v));
    EXPECT_EQ(s.path, "");
    g_value_set_string(&out.v, "stale");
    ASSERT_TRUE(gst::get_setting(fields(), s, PROP_PATH, &out.v));
    EXPECT_EQ(g_value_get_string(&out.v), nullptr);
}

TEST(SettingsTable, ACounterOrAnUnknownIdIsNoSetting_Negative)
{
    Settings s;
    Value v(G_TYPE_UINT);
    g_value_set_uint(&v.v, 3);
    EXPECT_FALSE(gst::set_setting(fields(), s, PROP_COUNTER, &v.v));
    EXPECT_FALSE(gst::get_setting(fields(), s, 99, &v.v));
    EXPECT_EQ(s.count, 0u) << "nothing stored";
}

} // namespace
} // namespace edgetensor::test
