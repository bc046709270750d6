#ifndef XTRACE_BENCH_RATIO_REPORTER_HPP
#define XTRACE_BENCH_RATIO_REPORTER_HPP

// Google Benchmark's console output, then one table of ratios: every benchmark named
// "<variant>/<size>" against the anchor variant of the same size, measured in the same run.

#include <benchmark/benchmark.h>

#include <algorithm>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace xtrace::bench {

class ratio_reporter : public benchmark::ConsoleReporter {
public:
    explicit ratio_reporter(std::string anchor) : anchor_(std::move(anchor)) {}

    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const auto& r : runs) {
            std::string name = r.benchmark_name();
            if (const auto suffix = name.rfind("/real_time"); suffix != std::string::npos)
                name.erase(suffix); // UseRealTime's suffix is not part of the size
            const auto slash = name.find('/');
            if (slash == std::string::npos || r.run_type != Run::RT_Iteration)
                continue;
            const std::string variant = name.substr(0, slash), size = name.substr(slash + 1);
            if (times_.find(size) == times_.end())
                sizes_.push_back(size);
            times_[size][variant] = r.GetAdjustedRealTime();
            if (std::find(order_.begin(), order_.end(), variant) == order_.end())
                order_.push_back(variant);
        }
    }

    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf("\nratio to %s (lower is faster), same run:\n", anchor_.c_str());
        for (const auto& size : sizes_) { // in the order they ran
            const auto& by_variant = times_[size];
            const auto anchor = by_variant.find(anchor_);
            if (anchor == by_variant.end())
                continue;
            std::printf("  n = %-10s", size.c_str());
            for (const auto& v : order_) {
                const auto it = by_variant.find(v);
                if (it != by_variant.end())
                    std::printf("  %s %.2fx (%.0f ns)", v.c_str(), it->second / anchor->second,
                                it->second);
            }
            std::printf("\n");
        }
    }

private:
    std::string anchor_;
    std::vector<std::string> order_, sizes_;
    std::map<std::string, std::map<std::string, double>> times_;
};

} // namespace xtrace::bench

#endif
