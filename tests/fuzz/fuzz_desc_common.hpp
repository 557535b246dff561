// SPDX-License-Identifier: MIT
//
// Shared by the gtest fuzz driver and the libFuzzer target: what must hold after from_desc()
// accepts a descriptor. Accepting garbage quietly is as much a bug as crashing on it.

#pragma once

#include <edgetensor/tensor.hpp>
#include <edgetensor/tensor_desc.h>

#include <cstdint>
#include <string>

namespace edgetensor::fuzz
{

/// Checks an accepted import against its descriptor and touches the first and the last
/// byte it addresses through a CPU map (a wrong bound faults here, or trips ASan).
/// Returns an empty string when everything holds, else what did not.
inline std::string check_accepted(const EdgeTensorDesc& d, const TensorDyn& t)
{
    if (!t.is_valid())
        return "accepted descriptor produced an empty tensor";
    if (t.ndim() != d.ndim)
        return "rank differs from the descriptor";
    size_t last = 0;
    for (size_t i = 0; i < t.ndim(); ++i) {
        if (t.shape()[i] != d.shape[i])
            return "shape differs from the descriptor";
        if (t.strides()[i] < 0)
            return "accepted a negative stride";
        last += (t.shape()[i] - 1) * size_t(t.strides()[i]);
    }
    const size_t elem = dtype_size(t.dtype());
    if (last + elem > t.capacity_bytes())
        return "the import addresses more bytes than its capacity";
    if (d.capacity != 0 && t.capacity_bytes() > d.capacity && t.format() == PixelFormat::None)
        return "the import holds more bytes than the producer lent";
    auto m = t.map_read();
    if (!m)
        return "an accepted import cannot be mapped: " + m.error().message();
    // A map spans at least what the strides address, images included: a semi-planar byte
    // view's rows are one pitch wide and hold the wider of the luma and chroma rows.
    if (m->len() < last + elem) {
        std::string shape, strides;
        for (size_t i = 0; i < t.ndim(); ++i) {
            shape += std::to_string(t.shape()[i]) + " ";
            strides += std::to_string(t.strides()[i]) + " ";
        }
        return "the map (" + std::to_string(m->len()) +
               " bytes) is shorter than the addressed "
               "range (" +
               std::to_string(last + elem) + " bytes) of shape [" + shape + "] strides [" +
               strides + "]";
    }
    // Describing the import again gives back what was imported (unit dimensions may carry
    // any stride on the way in; the core normalises them).
    auto again = t.describe();
    if (!again)
        return "an accepted import cannot be described again: " + again.error().message();
    if (again->ndim != d.ndim || again->dtype != d.dtype || again->colorimetry != d.colorimetry ||
        again->kind != d.kind)
        return "describe() of the import disagrees with the descriptor";
    if (d.format != 0 && again->format != d.format)
        return "describe() of the import lost the pixel format";
    for (size_t i = 0; i < d.ndim; ++i)
        if (again->shape[i] != d.shape[i] || (d.shape[i] > 1 && again->strides[i] != d.strides[i]))
            return "describe() of the import changed shape or strides";
    if (!t.is_image() && d.capacity != 0 && again->capacity != d.capacity)
        return "describe() of the import changed the capacity the producer lent";

    const volatile uint8_t* base = m->cdata().data();
    uint8_t sink = base[0];
    sink = uint8_t(sink + base[last + elem - 1]);
    (void)sink;
    return {};
}

} // namespace edgetensor::fuzz
