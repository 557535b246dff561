// SPDX-License-Identifier: MIT
//
// Quantized outputs (issue 23 item 5) of tensorconvert and tensorbatch: quant-scale and
// quant-zero-point give exactly the engine's bytes (ConvertConfig::quant, itself checked against
// a double-precision reference in tests/convert), the meta says how the values are quantized,
// nothing changes without them, and bad values are refused naming the property, with no fd
// left behind.

#include "element_harness.hpp"
#include "fd_count.hpp"
#include "tensorbatch_test_util.hpp"

#include <gst/edgetensor/edgetensor.h>

#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

constexpr const char* kNv12 = "video/x-raw,format=NV12,width=64,height=48,framerate=30/1,"
                              "colorimetry=bt709";

struct QuantCase {
    const char* props;
    ConvertConfig cfg; // what the properties mean for the engine (size and format included)
};

ConvertConfig int8_imagenet()
{
    ConvertConfig c;
    c.dst_width = 32;
    c.dst_height = 32;
    c.layout = TensorLayout::Chw;
    c.dtype = DType::I8;
    c.mean = {123.675f, 116.28f, 103.53f, 0.f};
    c.std = {58.395f, 57.12f, 57.375f, 1.f};
    c.quant = Quantization{0.0186584f, -14};
    return c;
}

ConvertConfig uint8_unit()
{
    ConvertConfig c;
    c.dst_width = 40;
    c.dst_height = 24;
    c.dtype = DType::U8;
    c.letterbox = true;
    c.std = {255.f, 255.f, 255.f, 1.f};
    c.quant = Quantization{1.f / 255.f, 0};
    return c;
}

ConvertConfig int8_plain()
{
    ConvertConfig c;
    c.dst_width = 32;
    c.dst_height = 32;
    c.dtype = DType::I8;
    return c;
}

class TensorConvertQuant : public ::testing::TestWithParam<QuantCase>
{
};

TEST_P(TensorConvertQuant, ValuesEqualTheEnginesAndTheMetaSaysHowTheyAreQuantized)
{
    const QuantCase& c = GetParam();
    ElementHarness t(std::string("tensorconvert ") + c.props);
    gst_harness_set_src_caps_str(t.get(), kNv12);
    for (guint seed = 0; seed < 2; ++seed) {
        BufferPtr in = pattern_frame(kNv12, seed);
        ASSERT_EQ(gst_harness_push(t.get(), gst_buffer_ref(in.get())), GST_FLOW_OK)
            << t.messages(GST_MESSAGE_ERROR);
        BufferPtr out(gst_harness_pull(t.get()));
        ASSERT_TRUE(out);
        EXPECT_EQ(buffer_bytes(out.get()), engine_bytes(kNv12, in.get(), c.cfg));
        GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
        ASSERT_TRUE(m);
        gfloat scale = 0;
        gint zp = 0;
        EXPECT_EQ(gst_edge_tensor_meta_get_quantization(m, &scale, &zp), bool(c.cfg.quant));
        if (c.cfg.quant) {
            EXPECT_EQ(scale, c.cfg.quant->scale);
            EXPECT_EQ(zp, c.cfg.quant->zero_point);
        }
    }
    EXPECT_EQ(t.messages(GST_MESSAGE_ERROR), "");
}

INSTANTIATE_TEST_SUITE_P(
    Issue23, TensorConvertQuant,
    ::testing::Values(
        QuantCase{"width=32 height=32 layout=chw dtype=int8 mean=123.675,116.28,103.53 "
                  "std=58.395,57.12,57.375 quant-scale=0.0186584 quant-zero-point=-14",
                  int8_imagenet()},
        QuantCase{"width=40 height=24 letterbox=true dtype=uint8 std=255 "
                  "quant-scale=0.00392156862745098",
                  uint8_unit()},
        // Without quant-scale, int8 stays value - 128.
        QuantCase{"width=32 height=32 dtype=int8", int8_plain()}));

// ---- refused values --------------------------------------------------------------------------

struct BadQuant {
    const char* props;
    std::vector<const char*> named; // what the error names
    bool warned;                    // refused when set (a g_warning), not when caps are set
};

class TensorConvertBadQuant : public ::testing::TestWithParam<BadQuant>
{
protected:
    void SetUp() override { ASSERT_TRUE(load_system_plugin("coreelements")); }
};

TEST_P(TensorConvertBadQuant, NegativeIsAnErrorNamingThePropertyAndLeavesNoFd)
{
    const BadQuant& b = GetParam();
    const auto before = open_fds();
    std::string warnings;
    PipelineRun r;
    {
        WarningCapture capture;
        const std::string launch =
            std::string("tensortestsrc num-buffers=2 ! video/x-raw,format=NV12,width=64,"
                        "height=48 ! tensorconvert ") +
            b.props + " ! fakesink";
        r = run_launch(launch);
        warnings = capture.text();
    }
    EXPECT_FALSE(r.eos) << "the pipeline ran with values that cannot apply";
    EXPECT_FALSE(r.timed_out);
    for (const char* what : b.named) {
        EXPECT_NE(r.errors.find(what), std::string::npos) << what << " in: " << r.errors;
        if (b.warned) {
            EXPECT_NE(warnings.find(what), std::string::npos) << what << " in: " << warnings;
        }
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

INSTANTIATE_TEST_SUITE_P(
    Issue23, TensorConvertBadQuant,
    ::testing::Values(
        BadQuant{"dtype=int8 quant-scale=0", {"quant-scale \"0\"", "greater than 0"}, true},
        BadQuant{
            "dtype=int8 quant-scale=nan", {"quant-scale \"nan\"", "not a finite number"}, true},
        BadQuant{
            "dtype=uint8 quant-scale=-inf", {"quant-scale \"-inf\"", "not a finite number"}, true},
        BadQuant{"dtype=int8 quant-scale=0.5 quant-zero-point=200",
                 {"quant-zero-point=200 is outside dtype=int8 (-128..127)"},
                 false},
        BadQuant{"dtype=uint8 quant-scale=0.5 quant-zero-point=-3",
                 {"quant-zero-point=-3 is outside dtype=uint8 (0..255)"},
                 false},
        BadQuant{"dtype=float32 quant-scale=0.5", {"quantizes int8 or uint8 outputs"}, false},
        BadQuant{
            "dtype=int8 quant-zero-point=5", {"quant-zero-point=5 needs quant-scale"}, false}));

// ---- tensorbatch ------------------------------------------------------------------------------

// The same properties on tensorbatch: every slot is the engine's quantized bytes, and the
// batch's meta says how they are quantized.
TEST(TensorBatchQuant, EverySlotEqualsTheEnginesQuantizedBytes)
{
    constexpr const char* kYuy2 = "video/x-raw,format=YUY2,width=48,height=40,colorimetry=bt601";
    BatchHarness b("batch-size=2 width=32 height=32 layout=chw dtype=int8 "
                   "mean=123.675,116.28,103.53 std=58.395,57.12,57.375 quant-scale=0.0186584 "
                   "quant-zero-point=-14",
                   2);
    gst_harness_set_src_caps_str(b.pads[0], kNv12);
    gst_harness_set_src_caps_str(b.pads[1], kYuy2);
    BufferPtr f0 = pattern_frame(kNv12, 3);
    BufferPtr f1 = pattern_frame(kYuy2, 4);
    ASSERT_EQ(b.push(0, f0.get(), 0), GST_FLOW_OK);
    ASSERT_EQ(b.push(1, f1.get(), 0), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(b.out()));
    ASSERT_TRUE(out) << b.messages(GST_MESSAGE_ERROR);
    const size_t slot = 3 * 32 * 32;
    EXPECT_EQ(slot_bytes(out.get(), 0, slot), engine_bytes(kNv12, f0.get(), int8_imagenet()));
    EXPECT_EQ(slot_bytes(out.get(), 1, slot), engine_bytes(kYuy2, f1.get(), int8_imagenet()));
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
    ASSERT_TRUE(m);
    gfloat scale = 0;
    gint zp = 0;
    EXPECT_TRUE(gst_edge_tensor_meta_get_quantization(m, &scale, &zp));
    EXPECT_EQ(scale, 0.0186584f);
    EXPECT_EQ(zp, -14);
    EXPECT_EQ(std::string(gst_edge_tensor_meta_get_dtype_name(m)), "int8");
}

class TensorBatchBadQuant : public ::testing::TestWithParam<BadQuant>
{
protected:
    void SetUp() override { ASSERT_TRUE(load_system_plugin("coreelements")); }
};

TEST_P(TensorBatchBadQuant, NegativeIsAnErrorNamingThePropertyAndLeavesNoFd)
{
    const BadQuant& q = GetParam();
    const auto before = open_fds();
    std::string warnings;
    PipelineRun r;
    {
        WarningCapture capture;
        const std::string launch = tensorbatch_element() +
                                   "name=b batch-size=1 width=16 height=16 " + q.props +
                                   " ! fakesink tensortestsrc num-buffers=2 ! "
                                   "video/x-raw,format=NV12,width=64,height=48 ! b.sink_0";
        r = run_launch(launch);
        warnings = capture.text();
    }
    EXPECT_FALSE(r.eos) << "the pipeline ran with values that cannot apply";
    EXPECT_FALSE(r.timed_out);
    for (const char* what : q.named) {
        EXPECT_NE(r.errors.find(what), std::string::npos) << what << " in: " << r.errors;
        if (q.warned) {
            EXPECT_NE(warnings.find(what), std::string::npos) << what << " in: " << warnings;
        }
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

INSTANTIATE_TEST_SUITE_P(
    Issue23, TensorBatchBadQuant,
    ::testing::Values(
        BadQuant{"dtype=int8 quant-scale=0", {"quant-scale \"0\"", "greater than 0"}, true},
        BadQuant{
            "dtype=int8 quant-scale=inf", {"quant-scale \"inf\"", "not a finite number"}, true},
        BadQuant{"dtype=int8 quant-scale=0.5 quant-zero-point=128",
                 {"quant-zero-point=128 is outside dtype=int8 (-128..127)"},
                 false},
        BadQuant{"dtype=float16 quant-scale=0.5", {"quantizes int8 or uint8 outputs"}, false}));

} // namespace
} // namespace edgetensor::test
