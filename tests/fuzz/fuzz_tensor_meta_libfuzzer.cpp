// SPDX-License-Identifier: MIT
//
// libFuzzer target for GstEdgeTensorMeta's serialization record (built only with clang; the
// codec is compiled into this binary with coverage instrumentation, see meson.build).
//
// Input: byte 0: the version byte GStreamer's framing hands the deserializer (0 keeps the
// valid one); byte 1: the seed the remaining bytes are XORed over (a frame's or a tensor's
// record), bytes past the seed appended.

#include "fuzz_tensor_meta_common.hpp"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace edgetensor;
    if (size < 2)
        return 0;
    std::vector<uint8_t> bytes = fuzz::seed_tensor_meta(data[1]);
    for (size_t i = 2; i < size; ++i) {
        if (i - 2 < bytes.size())
            bytes[i - 2] ^= data[i];
        else
            bytes.push_back(data[i]);
    }
    const uint8_t version = data[0] == 0 ? gst::kTensorMetaCodecVersion : data[0];
    auto f = gst::decode_tensor_meta(bytes, version);
    if (f) {
        const std::string problem = fuzz::check_accepted_tensor_meta(*f, bytes);
        if (!problem.empty()) {
            std::fprintf(stderr, "decode accepted a bad record: %s\n", problem.c_str());
            std::abort();
        }
    }
    return 0;
}
