// SPDX-License-Identifier: MIT
//
// GL test helpers. A test that needs a GL context skips with the reason on a host without one,
// and fails instead when EDGETENSOR_TEST_REQUIRE_GL=1 (meson sets it: CI installs Mesa, whose
// llvmpipe gives a headless OpenGL ES 3.2 context everywhere).

#pragma once

#include <edgetensor/convert.hpp>
#include <edgetensor/gl.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace edgetensor::test
{

inline bool env_is(const char* name, const char* value)
{
    const char* v = std::getenv(name);
    return v && std::strcmp(v, value) == 0;
}

inline bool gl_required()
{
    return env_is("EDGETENSOR_TEST_REQUIRE_GL", "1");
}

/// What a hardware GPU that can do everything reports: the GL facts fed to the pure planning
/// functions (direct import, importable drm-formats) in their unit tests.
inline GlInfo capable_gl()
{
    GlInfo info;
    info.renderer = "Some GPU";
    info.dma_buf_import = true;
    info.dma_buf_import_modifiers = true;
    info.yuv_external = true;
    info.max_texture_size = 16384;
    return info;
}

/// Sets an environment variable for one scope.
class ScopedEnv
{
public:
    ScopedEnv(const char* name, const char* value) : name_(name)
    {
        if (const char* old = std::getenv(name))
            old_ = old;
        had_ = std::getenv(name) != nullptr;
        if (value)
            setenv(name, value, 1);
        else
            unsetenv(name);
    }
    ~ScopedEnv()
    {
        if (had_)
            setenv(name_.c_str(), old_.c_str(), 1);
        else
            unsetenv(name_.c_str());
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    std::string name_;
    std::string old_;
    bool had_ = false;
};

} // namespace edgetensor::test

/// Declares `GlContext var` (the shared context) or skips/fails the test.
#define ET_GL_CONTEXT_OR_SKIP(var)                                                                 \
    auto var##_result = ::edgetensor::GlContext::shared();                                         \
    if (!var##_result) {                                                                           \
        if (::edgetensor::test::gl_required())                                                     \
            FAIL() << "EDGETENSOR_TEST_REQUIRE_GL=1 but no GL context: "                           \
                   << var##_result.error().message();                                              \
        GTEST_SKIP() << "no GL context on this host: " << var##_result.error().message();          \
    }                                                                                              \
    ::edgetensor::GlContext var = *var##_result
