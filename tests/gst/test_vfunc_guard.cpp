// SPDX-License-Identifier: MIT
//
// The boundary guard (gst/libs/vfunc_guard.hpp): what an exception inside a vfunc becomes. On
// an element, an element error naming the element and the vfunc (out of memory, or an internal
// error with the exception's message) and the vfunc's fallback; on another object, or none, an
// ERROR log and the fallback; nothing escapes. The elements' own guards are exercised through
// the fault hook (tests/fault: fault-gst-throw-*).

#include "gst_test_util.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

using gst::guarded;

struct ErrorMessage {
    bool posted = false;
    GQuark domain = 0;
    gint code = 0;
    std::string text;
    std::string debug;
    std::string source;
};

// A pipeline is an element with a bus of its own: what the guard posts lands there.
class Guard : public ::testing::Test
{
protected:
    void SetUp() override { element_ = gst_pipeline_new("guarded-element"); }
    void TearDown() override { gst_object_unref(element_); }

    ErrorMessage error()
    {
        ErrorMessage out;
        GstObjectPtr<GstBus> bus(gst_element_get_bus(element_));
        while (GstMessage* m = gst_bus_pop(bus.get())) {
            if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
                GError* e = nullptr;
                gchar* dbg = nullptr;
                gst_message_parse_error(m, &e, &dbg);
                out = {true,       e->domain,      e->code,
                       e->message, dbg ? dbg : "", GST_OBJECT_NAME(GST_MESSAGE_SRC(m))};
                g_error_free(e);
                g_free(dbg);
            }
            gst_message_unref(m);
        }
        return out;
    }

    GstElement* element_ = nullptr;
};

TEST_F(Guard, TheBodysResultWhenNothingThrowsAndNoMessage)
{
    bool fell_back = false;
    const GstFlowReturn r = guarded(
        element_, "transform",
        [&] {
            fell_back = true;
            return GST_FLOW_ERROR;
        },
        [] { return GST_FLOW_EOS; });
    EXPECT_EQ(r, GST_FLOW_EOS);
    EXPECT_FALSE(fell_back);
    EXPECT_FALSE(error().posted);
}

TEST_F(Guard, NegativeBadAllocIsAnOutOfMemoryElementErrorNamingElementAndVfunc)
{
    const GstFlowReturn r = guarded(element_, "transform", GST_FLOW_ERROR,
                                    []() -> GstFlowReturn { throw std::bad_alloc(); });
    EXPECT_EQ(r, GST_FLOW_ERROR);
    const ErrorMessage e = error();
    ASSERT_TRUE(e.posted);
    EXPECT_EQ(e.domain, GST_RESOURCE_ERROR);
    EXPECT_EQ(e.code, GST_RESOURCE_ERROR_NO_SPACE_LEFT);
    EXPECT_EQ(e.text, "Out of memory in transform of guarded-element.");
    EXPECT_EQ(e.source, "guarded-element");
}

TEST_F(Guard, NegativeAnyOtherExceptionIsAnInternalErrorCarryingItsMessage)
{
    const gboolean r = guarded(element_, "set_caps", FALSE,
                               []() -> gboolean { throw std::runtime_error("the caps exploded"); });
    EXPECT_EQ(r, FALSE);
    const ErrorMessage e = error();
    ASSERT_TRUE(e.posted);
    EXPECT_EQ(e.domain, GST_CORE_ERROR);
    EXPECT_EQ(e.code, GST_CORE_ERROR_FAILED);
    EXPECT_EQ(e.text, "Internal error in set_caps of guarded-element: the caps exploded");
    EXPECT_NE(e.debug.find("GStreamer boundary"), std::string::npos) << e.debug;
}

TEST_F(Guard, NegativeAThrownNonExceptionIsCaughtToo)
{
    guarded(element_, "get_property", [] { throw 42; });
    const ErrorMessage e = error();
    ASSERT_TRUE(e.posted);
    EXPECT_NE(e.text.find("get_property of guarded-element"), std::string::npos) << e.text;
    EXPECT_NE(e.text.find("no std::exception"), std::string::npos) << e.text;
}

TEST_F(Guard, ACallableFallbackRunsOnlyOnAThrowAndMayTakeTheMessage)
{
    std::string seen;
    GstCaps* caps = guarded(
        element_, "transform_caps",
        [&](const char* what) {
            seen = what;
            return gst_caps_new_empty();
        },
        []() -> GstCaps* { throw std::length_error("too long"); });
    ASSERT_TRUE(caps);
    EXPECT_TRUE(gst_caps_is_empty(caps));
    gst_caps_unref(caps);
    EXPECT_EQ(seen, "too long");
    EXPECT_TRUE(error().posted);

    // A nullary fallback (gst_caps_new_empty itself), and one that is never called.
    caps = guarded(element_, "transform_caps", gst_caps_new_empty,
                   []() -> GstCaps* { throw std::bad_alloc(); });
    ASSERT_TRUE(caps);
    gst_caps_unref(caps);
    caps =
        guarded(element_, "transform_caps", gst_caps_new_empty, [] { return gst_caps_new_any(); });
    EXPECT_TRUE(gst_caps_is_any(caps));
    gst_caps_unref(caps);
}

// ERROR logs of the default category, captured while a test runs.
struct LogCapture {
    std::mutex mu;
    std::vector<std::string> lines;

    static void log(GstDebugCategory*, GstDebugLevel level, const gchar*, const gchar*, gint,
                    GObject*, GstDebugMessage* message, gpointer data)
    {
        if (level != GST_LEVEL_ERROR)
            return;
        auto* self = static_cast<LogCapture*>(data);
        std::lock_guard<std::mutex> lock(self->mu);
        self->lines.emplace_back(gst_debug_message_get(message));
    }
    LogCapture() { gst_debug_add_log_function(&LogCapture::log, this, nullptr); }
    ~LogCapture() { gst_debug_remove_log_function_by_data(this); }
    bool saw(const std::string& what)
    {
        std::lock_guard<std::mutex> lock(mu);
        for (const std::string& l : lines)
            if (l.find(what) != std::string::npos)
                return true;
        return false;
    }
};

TEST_F(Guard, NegativeOnAnotherObjectOrNoneItIsLoggedNotPosted)
{
    const GstDebugLevel threshold = gst_debug_get_default_threshold();
    if (threshold < GST_LEVEL_ERROR)
        gst_debug_set_default_threshold(GST_LEVEL_ERROR);
    LogCapture logs;
    GstBufferPool* pool = gst_edge_tensor_buffer_pool_new();
    EXPECT_EQ(guarded(pool, "alloc_buffer", GST_FLOW_ERROR,
                      []() -> GstFlowReturn { throw std::bad_alloc(); }),
              GST_FLOW_ERROR);
    gst_object_unref(pool);
    EXPECT_TRUE(logs.saw("alloc_buffer failed: out of memory"));

    std::string why;
    EXPECT_EQ(guarded(
                  nullptr, "gst_edge_tensor_import_cache_get_stats",
                  [&](const char* what) {
                      why = what;
                      return static_cast<GstStructure*>(nullptr);
                  },
                  []() -> GstStructure* { throw std::runtime_error("no room"); }),
              nullptr);
    EXPECT_EQ(why, "no room");
    EXPECT_TRUE(logs.saw("gst_edge_tensor_import_cache_get_stats failed: no room"));
    EXPECT_FALSE(error().posted) << "nothing reaches an element's bus";
    gst_debug_set_default_threshold(threshold);
}

} // namespace
} // namespace edgetensor::test
