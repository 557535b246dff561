// SPDX-License-Identifier: MIT
//
// CUDA test helpers. The cuda suite runs against the simulated runtime (tests/cuda/simcudart,
// loaded by the library's own dlopen through EDGETENSOR_CUDART); meson sets
// EDGETENSOR_TEST_SIMCUDA=1 there, so a missing simulator fails instead of skipping. Against a
// real libcudart (tools/cuda-device-check.sh) the tests that need the simulator's control
// symbols skip, the rest run unchanged; EDGETENSOR_TEST_REQUIRE_CUDA=1 makes a missing runtime
// or device a failure.

#pragma once

#include "cuda/cuda_api.hpp"

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace edgetensor::test
{

inline bool env_flag(const char* name)
{
    const char* v = std::getenv(name);
    return v && std::strcmp(v, "1") == 0;
}

inline long this_tid()
{
    return long(::syscall(SYS_gettid));
}

/// The simulated runtime's control symbols, when the loaded runtime is the simulator.
struct Sim {
    void (*fail)(const char* fn, int error, int count) = nullptr;
    int (*calls)(const char* fn) = nullptr;
    long (*thread)(const char* fn) = nullptr;
    int (*violations)() = nullptr;
    void (*last_violation)(char* buf, size_t n) = nullptr;
    int (*live)(const char* what) = nullptr;
    int (*last_import_fd)() = nullptr;
    unsigned (*last_register_flags)() = nullptr;
    void (*reset)() = nullptr;

    std::string violation_text() const
    {
        char buf[512] = {};
        last_violation(buf, sizeof buf);
        return buf;
    }

    /// Null when the runtime edgetensor loaded is not the simulator (or none is loaded).
    static const Sim* get()
    {
        static const Sim* sim = []() -> const Sim* {
            (void)cuda_available(); // the library loads the runtime first, by its own path
            const char* path = std::getenv("EDGETENSOR_CUDART");
            if (!path || !*path)
                return nullptr;
            void* h = ::dlopen(path, RTLD_NOW | RTLD_NOLOAD);
            if (!h || !::dlsym(h, "simcuda_is_simulated"))
                return nullptr;
            static Sim s;
            s.fail = reinterpret_cast<decltype(s.fail)>(::dlsym(h, "simcuda_fail"));
            s.calls = reinterpret_cast<decltype(s.calls)>(::dlsym(h, "simcuda_calls"));
            s.thread = reinterpret_cast<decltype(s.thread)>(::dlsym(h, "simcuda_thread"));
            s.violations =
                reinterpret_cast<decltype(s.violations)>(::dlsym(h, "simcuda_violations"));
            s.last_violation =
                reinterpret_cast<decltype(s.last_violation)>(::dlsym(h, "simcuda_last_violation"));
            s.live = reinterpret_cast<decltype(s.live)>(::dlsym(h, "simcuda_live"));
            s.last_import_fd =
                reinterpret_cast<decltype(s.last_import_fd)>(::dlsym(h, "simcuda_last_import_fd"));
            s.last_register_flags = reinterpret_cast<decltype(s.last_register_flags)>(
                ::dlsym(h, "simcuda_last_register_flags"));
            s.reset = reinterpret_cast<decltype(s.reset)>(::dlsym(h, "simcuda_reset"));
            return &s;
        }();
        return sim;
    }
};

/// The library's CUDA table (cudaMemcpy for reading device memory back).
inline const detail::cuda::Api& cuda_api()
{
    return **detail::cuda::api();
}

/// Copies `bytes` from device memory into a host vector (cudaMemcpy DeviceToHost).
inline std::vector<uint8_t> copy_to_host(const CudaMap& m, size_t bytes)
{
    std::vector<uint8_t> out(bytes);
    const auto e = cuda_api().cudaMemcpy(out.data(), m.device_ptr(), bytes,
                                         detail::cuda::cudaMemcpyDeviceToHost);
    EXPECT_EQ(e, detail::cuda::cudaSuccess) << detail::cuda::error_text(cuda_api(), e);
    return out;
}

/// Fixture: needs a CUDA runtime with a device; against the simulator it starts every test
/// with clean counters and fails a test that broke the runtime's contract.
class CudaTest : public testing::Test
{
protected:
    void SetUp() override
    {
        auto info = cuda_info();
        if (!info) {
            if (env_flag("EDGETENSOR_TEST_REQUIRE_CUDA") || env_flag("EDGETENSOR_TEST_SIMCUDA"))
                FAIL() << "a CUDA runtime is required here: " << info.error().message();
            GTEST_SKIP() << "no CUDA: " << info.error().message();
        }
        sim_ = Sim::get();
        if (!sim_ && env_flag("EDGETENSOR_TEST_SIMCUDA"))
            FAIL() << "EDGETENSOR_TEST_SIMCUDA=1 but the runtime loaded (" << info->library
                   << ") is not the simulator";
        if (sim_)
            sim_->reset();
    }
    void TearDown() override
    {
        if (sim_) {
            EXPECT_EQ(sim_->violations(), 0) << sim_->violation_text();
        }
    }
    const Sim* sim_ = nullptr;
};

} // namespace edgetensor::test

/// Inside a CudaTest: skips (with the reason) unless the runtime is the simulator.
#define ET_SIM_OR_SKIP()                                                                           \
    do {                                                                                           \
        if (!sim_)                                                                                 \
            GTEST_SKIP() << "needs the simulated runtime's control symbols (tests/cuda/"           \
                            "simcudart); the loaded runtime is a real one";                        \
    } while (0)
