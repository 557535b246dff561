// SPDX-License-Identifier: MIT
//
// Runtime requirements of the inference tests. A test that needs a backend skips with the
// reason (not built, runtime absent, python3-onnx missing) where there is none, and fails
// instead where the lane says the backend must be there:
// EDGETENSOR_TEST_REQUIRE_INFER=onnxruntime,tflite (comma-separated; the 1.26 lane sets
// onnxruntime, the 1.28 lane both).

#pragma once

#include <edgetensor/infer.hpp>
#include <gtest/gtest.h>

#include <string>

namespace edgetensor::test
{

/// True when EDGETENSOR_TEST_REQUIRE_INFER names `backend`.
bool infer_required(InferBackend backend);
/// Empty when the backend is built and its runtime loads; else why not.
std::string infer_unavailable_reason(InferBackend backend);

} // namespace edgetensor::test

#define ET_REQUIRE_INFER_OR_SKIP(backend)                                                          \
    do {                                                                                           \
        const std::string et_why_ = ::edgetensor::test::infer_unavailable_reason(backend);         \
        if (!et_why_.empty()) {                                                                    \
            if (::edgetensor::test::infer_required(backend))                                       \
                FAIL() << "EDGETENSOR_TEST_REQUIRE_INFER names "                                   \
                       << ::edgetensor::infer_backend_name(backend) << " but " << et_why_;         \
            GTEST_SKIP() << et_why_;                                                               \
        }                                                                                          \
    } while (0)
