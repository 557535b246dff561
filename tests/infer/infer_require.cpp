// SPDX-License-Identifier: MIT
#include "infer_require.hpp"

#include <cstdlib>
#include <string_view>

namespace edgetensor::test
{

bool infer_required(InferBackend backend)
{
    const char* v = std::getenv("EDGETENSOR_TEST_REQUIRE_INFER");
    if (!v)
        return false;
    std::string_view rest(v);
    const std::string_view want = infer_backend_name(backend);
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        if (rest.substr(0, comma) == want)
            return true;
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return false;
}

std::string infer_unavailable_reason(InferBackend backend)
{
    auto info = infer_runtime_info(backend);
    return info ? std::string() : info.error().message();
}

} // namespace edgetensor::test
