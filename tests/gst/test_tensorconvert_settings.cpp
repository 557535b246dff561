// SPDX-License-Identifier: MIT
//
// tensorconvert's string properties as gst-launch sets them (before the element has a bus):
// a refused value is a g_warning at once and an element error at start, never a pipeline that
// runs with other settings; std and mean values a float cannot carry are refused with the
// reason (issue 11, defects 1 and 5).

#include "element_harness.hpp"

#include <gst/check/gstharness.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

constexpr const char* kSource =
    "tensortestsrc num-buffers=2 ! video/x-raw,format=NV12,width=64,height=48 ! ";

class TensorConvertSettings : public ::testing::Test
{
protected:
    void SetUp() override
    {
        ASSERT_TRUE(load_system_plugin("coreelements")); // capsfilter, fakesink
    }

    // Runs `kSource ! tensorconvert <props> ! fakesink` as gst-launch would build it.
    PipelineRun run(const std::string& props, std::string* warnings = nullptr)
    {
        WarningCapture capture;
        PipelineRun r = run_launch(std::string(kSource) + "tensorconvert name=tc " + props +
                                   " ! fakesink name=sink");
        if (warnings)
            *warnings = capture.text();
        return r;
    }
};

struct BadLaunch {
    const char* props;
    std::vector<const char*> named; // what the warning and the error must both name
};

class TensorConvertBadLaunch : public TensorConvertSettings,
                               public ::testing::WithParamInterface<BadLaunch>
{
};

// Defect 1: "std=0 crop=a" used to exit 0, running unnormalised and uncropped.
TEST_P(TensorConvertBadLaunch, NegativeRefusedValuesWarnAtOnceAndStopThePipelineAtStart)
{
    const BadLaunch& b = GetParam();
    std::string warnings;
    const PipelineRun r = run(b.props, &warnings);
    EXPECT_FALSE(r.eos) << "the pipeline ran with settings that were refused";
    EXPECT_FALSE(r.timed_out);
    EXPECT_NE(r.errors.find("Invalid property values"), std::string::npos) << r.errors;
    for (const char* what : b.named) {
        EXPECT_NE(r.errors.find(what), std::string::npos) << what << " in: " << r.errors;
        EXPECT_NE(warnings.find(what), std::string::npos) << what << " in: " << warnings;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Issue11, TensorConvertBadLaunch,
    ::testing::Values(BadLaunch{"dtype=float32 std=0 crop=a", {"std \"0\"", "crop \"a\""}},
                      BadLaunch{"dtype=float32 mean=abc", {"mean \"abc\"", "not a finite number"}},
                      BadLaunch{"crop=1,2,3", {"crop \"1,2,3\"", "four integers"}},
                      BadLaunch{"dtype=float32 mean=1,2,3,4,5",
                                {"mean \"1,2,3,4,5\"", "at most 4 values"}}));

TEST_F(TensorConvertSettings, AValidValueSetAfterARefusedOneIsWhatRuns)
{
    const PipelineRun r = run("dtype=float32 std=0 std=2 crop=a crop=0,0,32,32");
    EXPECT_TRUE(r.eos) << r.errors;
    EXPECT_TRUE(r.errors.empty()) << r.errors;
}

// GstBaseTransform is offered the same sticky caps again before the first buffer: caps refused
// once are said once, not once per offer.
TEST_F(TensorConvertSettings, NegativeCapsRefusedAreOneErrorNotOnePerOffer)
{
    const std::vector<std::string> errors = errors_posted_by(
        std::string(kSource) + "tensorconvert name=tc dtype=float32 quant-scale=0.5 ! fakesink",
        "tc");
    ASSERT_EQ(errors.size(), 1u) << (errors.empty() ? "" : errors[0] + " / " + errors.back());
    EXPECT_NE(errors[0].find("quant-scale=\"0.5\" quantizes int8 or uint8 outputs"),
              std::string::npos)
        << errors[0];
}

TEST_F(TensorConvertSettings, NegativeRefusalMadeInNullBlocksTheNextStartOfAHarness)
{
    ElementHarness t("tensorconvert dtype=float32");
    ASSERT_EQ(gst_element_set_state(t.element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    g_object_set(t.element, "crop", "1,2", nullptr);
    EXPECT_EQ(gst_element_set_state(t.element, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
    const std::string err = t.messages(GST_MESSAGE_ERROR);
    EXPECT_NE(err.find("crop \"1,2\""), std::string::npos) << err;
    // Replaced by a valid value, the refusal is gone.
    gst_element_set_state(t.element, GST_STATE_NULL);
    g_object_set(t.element, "crop", "", nullptr);
    EXPECT_NE(gst_element_set_state(t.element, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
    gst_element_set_state(t.element, GST_STATE_NULL);
}

struct BadNumber {
    const char* prop;
    const char* value;
    const char* says;
};

class TensorConvertBadNumber : public TensorConvertSettings,
                               public ::testing::WithParamInterface<BadNumber>
{
};

// Defect 5: std=1e-40 was accepted and every output was inf/NaN; mean=1e39 passed the check.
TEST_P(TensorConvertBadNumber, NegativeIsRefusedAtSetTimeWithTheReasonAndTheOldValueKept)
{
    const BadNumber& b = GetParam();
    ElementHarness t("tensorconvert dtype=float32");
    ASSERT_EQ(gst_element_set_state(t.element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    g_object_set(t.element, b.prop, "2", nullptr);
    {
        WarningCapture capture;
        g_object_set(t.element, b.prop, b.value, nullptr);
        EXPECT_NE(capture.text().find(b.says), std::string::npos) << capture.text();
    }
    gchar* now = nullptr;
    g_object_get(t.element, b.prop, &now, nullptr);
    EXPECT_STREQ(now, "2");
    g_free(now);
    const std::string warn = t.messages(GST_MESSAGE_WARNING);
    EXPECT_NE(warn.find(b.says), std::string::npos) << warn;
    EXPECT_EQ(gst_element_set_state(t.element, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
    EXPECT_NE(t.messages(GST_MESSAGE_ERROR).find(b.value), std::string::npos);
    gst_element_set_state(t.element, GST_STATE_NULL);
}

INSTANTIATE_TEST_SUITE_P(Issue11, TensorConvertBadNumber,
                         ::testing::Values(BadNumber{"std", "1e-40", "denormal"},
                                           BadNumber{"std", "-1e-39", "denormal"},
                                           BadNumber{"std", "0", "must not be zero"},
                                           BadNumber{"std", "1,1e-46,1", "0 as a float"},
                                           BadNumber{"std", "1e39", "outside the float range"},
                                           BadNumber{"std", "inf", "not a finite number"},
                                           BadNumber{"mean", "1e39", "outside the float range"},
                                           BadNumber{"mean", "-3.5e38", "outside the float range"},
                                           BadNumber{"mean", "1e400", "not a finite number"}));

TEST_F(TensorConvertSettings, NegativeMeanAndStdThatOverflowTogetherAreRefusedAtStart)
{
    // Each fits a float; (255 - 3e38) / 0.001 does not.
    const PipelineRun r = run("dtype=float32 mean=3e38 std=0.001");
    EXPECT_FALSE(r.eos);
    EXPECT_NE(r.errors.find("beyond the float range"), std::string::npos) << r.errors;
    EXPECT_NE(r.errors.find("channel 0"), std::string::npos) << r.errors;
}

TEST_F(TensorConvertSettings, ExtremeButRepresentableSettingsGiveFiniteOutput)
{
    ElementHarness t("tensorconvert dtype=float32 width=8 height=8 mean=-1e30 std=1e-7");
    gst_harness_set_sink_caps_str(t.get(), "other/tensors");
    const char* caps = "video/x-raw,format=GRAY8,width=16,height=16,framerate=30/1";
    gst_harness_set_src_caps_str(t.get(), caps);
    BufferPtr in(gst_buffer_new_allocate(nullptr, 16 * 16, nullptr));
    gst_buffer_memset(in.get(), 0, 0x80, 16 * 16);
    ASSERT_EQ(gst_harness_push(t.get(), in.release()), GST_FLOW_OK)
        << t.messages(GST_MESSAGE_ERROR);
    BufferPtr out(gst_harness_try_pull(t.get()));
    ASSERT_TRUE(out);
    GstMapInfo map;
    ASSERT_TRUE(gst_buffer_map(out.get(), &map, GST_MAP_READ));
    const auto* f = reinterpret_cast<const float*>(map.data);
    for (size_t i = 0; i < 8 * 8 * 3; ++i)
        ASSERT_TRUE(std::isfinite(f[i])) << "element " << i << " = " << f[i];
    EXPECT_GT(f[0], 1e36f);
    gst_buffer_unmap(out.get(), &map);
}

} // namespace
} // namespace edgetensor::test
