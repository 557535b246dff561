// SPDX-License-Identifier: MIT
//
// What the GStreamer 1.26 and 1.28 lanes have and Debian 12's 1.22 has not: unixfdsink and
// unixfdsrc (gstreamer1.0-plugins-bad 1.24+), GDP with metas (1.24+), GStreamer's analytics
// library with GstTensorMeta (1.26+). A test that needs them skips with the reason where they
// are missing, and fails instead where EDGETENSOR_TEST_REQUIRE_GST126=1 (the lanes set it), so
// a lane that lost them cannot pass by skipping.

#pragma once

#include <gst/gst.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace edgetensor::test
{

/// True when EDGETENSOR_TEST_REQUIRE_GST126=1.
inline bool gst126_required()
{
    const char* v = std::getenv("EDGETENSOR_TEST_REQUIRE_GST126");
    return v && std::strcmp(v, "1") == 0;
}

/// Loads a system plugin by file (the tests' registry sees only the build's plugins); false
/// when it is not there or does not load.
inline bool load_system_plugin(const char* file, std::string* why)
{
    const std::string path = std::string(ET_GST_PLUGINS_DIR) + "/" + file;
    if (::access(path.c_str(), R_OK) != 0) {
        *why = path + " is not installed";
        return false;
    }
    GError* err = nullptr;
    GstPlugin* p = gst_plugin_load_file(path.c_str(), &err);
    if (!p) {
        *why = "cannot load " + path + ": " + (err ? err->message : "");
        g_clear_error(&err);
        return false;
    }
    gst_object_unref(p);
    return true;
}

} // namespace edgetensor::test

/// Skips (or, with EDGETENSOR_TEST_REQUIRE_GST126=1, fails) unless `have` holds.
#define ET_REQUIRE_GST126_OR_SKIP(have, why)                                                       \
    do {                                                                                           \
        if (!(have)) {                                                                             \
            if (::edgetensor::test::gst126_required())                                             \
                FAIL() << "EDGETENSOR_TEST_REQUIRE_GST126=1 but " << (why);                        \
            GTEST_SKIP() << (why);                                                                 \
        }                                                                                          \
    } while (0)
