// SPDX-License-Identifier: MIT
//
// The DRM PRIME provider when edgetensor is built without libdrm: it reports itself as not
// built, and the chain moves on to the next provider.

#include "dma_internal.hpp"

namespace edgetensor::detail
{

StorageResult drm_prime_allocate(const AllocRequest&)
{
    return make_error(ErrorCode::Unavailable,
                      "the DRM PRIME provider is not built into this edgetensor (libdrm was not "
                      "found at build time)");
}

} // namespace edgetensor::detail
