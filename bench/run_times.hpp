// SPDX-License-Identifier: MIT
//
// The times a benchmark's summary is built from, one per run name: the run's time without
// repetitions, the fastest repetition with them (the "min" aggregate when the user asks for
// aggregates only), in ms. CPU time, or wall time for runs registered with UseRealTime(). Shared
// by the summary reporters of bench_convert and bench_batch (SummaryReporter below) so both read
// Google Benchmark's runs the same way.
#pragma once

#include "run_skipped.hpp"

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace edgetensor::bench
{

class RunTimes
{
public:
    void add(const std::vector<benchmark::BenchmarkReporter::Run>& runs)
    {
        using Run = benchmark::BenchmarkReporter::Run;
        for (const auto& r : runs) {
            if (run_skipped(r) || r.iterations <= 0)
                continue;
            const std::string name = r.run_name.str();
            const bool wall = r.run_name.time_type.find("real_time") != std::string::npos;
            const double t = wall ? r.GetAdjustedRealTime() : r.GetAdjustedCPUTime();
            if (r.run_type == Run::RT_Iteration && !min_seen_.count(name)) {
                // Without repetitions, the one run; with them, the fastest until "min" comes.
                auto& slot = ms_[name];
                slot = slot > 0 ? std::min(slot, t) : t;
            } else if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "min") {
                ms_[name] = t;
                min_seen_[name] = true;
            }
        }
    }

    /// The time of `name` or of its first run whose name extends it by "/..." (registered
    /// names carry the argument names, run names add the time mode); 0 when it did not run.
    double get(const std::string& name) const
    {
        for (const auto& [n, t] : ms_)
            if (n == name || n.rfind(name + "/", 0) == 0)
                return t;
        return 0.0;
    }

    /// "%.3f", or "-" for a time that is not there.
    static std::string ms(double v)
    {
        char b[32];
        std::snprintf(b, sizeof b, "%.3f", v);
        return v > 0 ? b : "-";
    }

    /// "a / b" as "%.2fx", or "-" when either is missing.
    static std::string ratio(double a, double b)
    {
        char s[32];
        std::snprintf(s, sizeof s, "%.2fx", a / b);
        return a > 0 && b > 0 ? s : "-";
    }

private:
    std::map<std::string, double> ms_;
    std::map<std::string, bool> min_seen_;
};

/// Google Benchmark's console output (a table when stdout is not a terminal), keeping every
/// run's time in `times_`; summary() prints after the runs' table.
class SummaryReporter : public benchmark::ConsoleReporter
{
public:
    SummaryReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}

    void ReportRuns(const std::vector<Run>& runs) override
    {
        times_.add(runs);
        ConsoleReporter::ReportRuns(runs);
    }

    void Finalize() override
    {
        ConsoleReporter::Finalize();
        summary();
    }

protected:
    virtual void summary() = 0;
    RunTimes times_;
};

} // namespace edgetensor::bench
