// SPDX-License-Identifier: MIT
//
// run_skipped() against both shapes of Google Benchmark's Run (1.7's `error_occurred`, 1.8's
// and later `skipped` enum) and against the installed library's own Run, so the reporters of
// bench_convert and bench_overhead keep their meaning on either version.

#include "run_skipped.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>

namespace
{

struct RunWithErrorOccurred {
    bool error_occurred = false;
};

// Benchmark 1.8's internal::Skipped: unscoped, zero is NotSkipped.
enum SkippedLike : unsigned { NotSkipped = 0, SkippedWithMessage, SkippedWithError };

struct RunWithSkipped {
    SkippedLike skipped = NotSkipped;
};

int failures = 0;

void expect(bool got, bool want, const char* what)
{
    if (got == want)
        return;
    std::fprintf(stderr, "FAIL: %s: run_skipped() is %s, expected %s\n", what,
                 got ? "true" : "false", want ? "true" : "false");
    ++failures;
}

} // namespace

int main()
{
    using edgetensor::bench::run_skipped;

    RunWithErrorOccurred old_run;
    expect(run_skipped(old_run), false, "a 1.7 run without error");
    old_run.error_occurred = true;
    expect(run_skipped(old_run), true, "a 1.7 run with an error");

    RunWithSkipped new_run;
    expect(run_skipped(new_run), false, "a 1.8+ run not skipped");
    new_run.skipped = SkippedWithMessage;
    expect(run_skipped(new_run), true, "a 1.8+ run skipped with a message");
    new_run.skipped = SkippedWithError;
    expect(run_skipped(new_run), true, "a 1.8+ run skipped with an error");

    // Whichever member the installed version has, a fresh run has no error.
    const benchmark::BenchmarkReporter::Run installed;
    expect(run_skipped(installed), false, "a fresh Run of the installed Google Benchmark");

    if (failures == 0)
        std::printf("run_skipped: 6 checks passed\n");
    return failures == 0 ? 0 : 1;
}
