// SPDX-License-Identifier: MIT
//
// Shared gtest main for the library suites (the gst suites have their own, which also
// initialises GStreamer).

#include <gtest/gtest.h>

int main(int argc, char** argv)
{
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
