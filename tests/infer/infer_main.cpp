// SPDX-License-Identifier: MIT
//
// gtest main of the runtime suites: when every test that ran skipped (no runtime here, the
// reasons in the log), the binary exits 77 so meson shows the suite as skipped, not passed.

#include <gtest/gtest.h>

int main(int argc, char** argv)
{
    testing::InitGoogleTest(&argc, argv);
    const int rc = RUN_ALL_TESTS();
    const testing::UnitTest& u = *testing::UnitTest::GetInstance();
    if (rc == 0 && u.test_to_run_count() > 0 && u.skipped_test_count() == u.test_to_run_count())
        return 77;
    return rc;
}
