// SPDX-License-Identifier: MIT
//
// gtest main for the GStreamer suites: initialises GStreamer (with the plugin path and
// registry the test environment points at) before any test runs.

#include <gst/gst.h>
#include <gtest/gtest.h>

int main(int argc, char** argv)
{
    gst_init(&argc, &argv);
    testing::InitGoogleTest(&argc, argv);
    const int rc = RUN_ALL_TESTS();
    gst_deinit();
    return rc;
}
