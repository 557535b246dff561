// SPDX-License-Identifier: MIT
//
// A host without GL, for real: meson runs this binary once with libEGL made unloadable
// (EDGETENSOR_EGL_LIBRARY names a file that does not exist) and once with libEGL present but no
// EGL vendor (__EGL_VENDOR_LIBRARY_FILENAMES=/dev/null), so no display can be had. Everything
// must say so clearly: compute=auto runs on the CPU, compute=gl and the GL API fail with a
// message naming what is missing, PBO tensors cannot be made, nothing hangs or crashes.

#include "../convert/reference.hpp"

#include <edgetensor/gl.hpp>
#include <gtest/gtest.h>

#include <string>

namespace edgetensor::test
{
namespace
{

bool unavailable(const Error& e)
{
    return e.code() == ErrorCode::Unavailable || e.code() == ErrorCode::NotSupported;
}

TEST(GlNoDisplay, ContextsCannotBeCreated_Negative)
{
    for (auto r : {GlContext::create(), GlContext::shared()}) {
        ASSERT_FALSE(r) << "a GL context started although there is no display";
        EXPECT_TRUE(unavailable(r.error())) << r.error().message();
        EXPECT_FALSE(r.error().message().empty());
        std::printf("create: %s: %s\n", std::string(error_code_name(r.error().code())).c_str(),
                    r.error().message().c_str());
    }
    auto p = GlContext::probe();
    ASSERT_FALSE(p);
    EXPECT_TRUE(unavailable(p.error()));
    GlContext empty;
    EXPECT_FALSE(empty.is_valid());
    EXPECT_FALSE(empty.create_pbo(DType::U8, {4}));
}

TEST(GlNoDisplay, AutoRunsOnTheCpuAndSaysWhy)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 64, 48, 0, 1);
    ConvertConfig cfg = config_for(fr);
    cfg.compute = ConvertCompute::Auto;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    EXPECT_EQ(conv->compute(), ConvertCompute::Cpu);
    EXPECT_FALSE(conv->compute_reason().empty());
    std::printf("auto: %s\n", conv->compute_reason().c_str());
    std::vector<uint8_t> out;
    EXPECT_EQ(run_tight(fr, cfg, out), "");
    EXPECT_LE(compare(out, cfg, reference(fr, cfg)).max, 2.0);
}

TEST(GlNoDisplay, ComputeGlFailsClearly_Negative)
{
    const Frame fr = make_frame(ConvertFormat::Nv12, 64, 48, 0, 1);
    ConvertConfig cfg = config_for(fr);
    cfg.compute = ConvertCompute::Gl;
    auto conv = Converter::create(cfg);
    ASSERT_FALSE(conv);
    EXPECT_TRUE(unavailable(conv.error())) << conv.error().message();
    EXPECT_NE(conv.error().message().find("compute=gl"), std::string::npos)
        << conv.error().message();
}

} // namespace
} // namespace edgetensor::test
