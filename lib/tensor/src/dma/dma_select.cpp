// SPDX-License-Identifier: MIT
//
// Which DMA-BUF providers the allocation chain may use, and in what order: the part of the DMA
// API that is the same on every platform (the providers themselves live in dma_providers.cpp).

#include "dma_internal.hpp"
#include "log.hpp"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <unistd.h>

namespace edgetensor
{
namespace
{

constexpr std::string_view kEnvVar = "EDGETENSOR_DMA_PROVIDERS";

std::mutex g_mutex;
std::optional<std::vector<DmaProvider>> g_override; // guarded by g_mutex

bool is_known(DmaProvider p) noexcept
{
    return static_cast<uint32_t>(p) < kDmaProviderCount;
}

std::string known_names()
{
    std::string s;
    for (DmaProvider p : kDefaultDmaProviders) {
        if (!s.empty())
            s += ", ";
        s += dma_provider_name(p);
    }
    return s;
}

} // namespace

std::string_view dma_provider_name(DmaProvider provider) noexcept
{
    switch (provider) {
    case DmaProvider::DmaHeap:
        return "dma-heap";
    case DmaProvider::Udmabuf:
        return "udmabuf";
    case DmaProvider::DrmPrime:
        return "drm-prime";
    }
    return "unknown";
}

Result<DmaProvider> parse_dma_provider(std::string_view name)
{
    for (DmaProvider p : kDefaultDmaProviders)
        if (name == dma_provider_name(p))
            return p;
    return make_error(ErrorCode::InvalidArgument, "unknown DMA-BUF provider '" + std::string(name) +
                                                      "'; known providers: " + known_names());
}

Result<std::vector<DmaProvider>> parse_dma_provider_list(std::string_view list)
{
    std::vector<DmaProvider> out;
    bool any_word = false;
    size_t pos = 0;
    while (pos < list.size()) {
        const size_t start = list.find_first_not_of(", \t", pos);
        if (start == std::string_view::npos)
            break;
        size_t end = list.find_first_of(", \t", start);
        if (end == std::string_view::npos)
            end = list.size();
        const std::string_view word = list.substr(start, end - start);
        pos = end;
        any_word = true;
        if (word == "none") {
            if (list.find_first_not_of(", \t", end) != std::string_view::npos || !out.empty())
                return make_error(ErrorCode::InvalidArgument,
                                  "DMA-BUF provider list '" + std::string(list) +
                                      "' mixes 'none' with provider names");
            return out;
        }
        auto p = parse_dma_provider(word);
        if (!p)
            return unexpected(std::move(p).error());
        for (DmaProvider seen : out)
            if (seen == *p)
                return make_error(ErrorCode::InvalidArgument,
                                  "DMA-BUF provider '" + std::string(word) +
                                      "' is listed twice in '" + std::string(list) + "'");
        out.push_back(*p);
    }
    if (!any_word)
        return make_error(ErrorCode::InvalidArgument,
                          "empty DMA-BUF provider list; name providers (" + known_names() +
                              ") or 'none'");
    return out;
}

Result<std::vector<DmaProvider>> active_dma_providers()
{
    {
        std::lock_guard lock(g_mutex);
        if (g_override)
            return *g_override;
    }
    // Read on every call (not cached) so a test or a launcher can change it at run time.
    const char* env = std::getenv(std::string(kEnvVar).c_str());
    if (!env || !*env)
        return std::vector<DmaProvider>(kDefaultDmaProviders.begin(), kDefaultDmaProviders.end());
    auto parsed = parse_dma_provider_list(env);
    if (!parsed) {
        static std::once_flag warned;
        const std::string msg = parsed.error().message();
        std::call_once(warned, [&] {
            ET_LOG_WARNING("dma",
                           "%s=\"%s\" is invalid (%s); DMA-BUF allocation is refused "
                           "until it is fixed",
                           kEnvVar.data(), env, msg.c_str());
        });
        return make_error(ErrorCode::InvalidArgument,
                          std::string(kEnvVar) + "=\"" + env + "\" is invalid: " + msg);
    }
    return parsed;
}

Result<void> set_dma_providers(std::span<const DmaProvider> providers)
{
    std::vector<DmaProvider> list;
    for (DmaProvider p : providers) {
        if (!is_known(p))
            return make_error(ErrorCode::InvalidArgument,
                              "set_dma_providers: value " +
                                  std::to_string(static_cast<uint32_t>(p)) +
                                  " is not a DmaProvider; known providers: " + known_names());
        for (DmaProvider seen : list)
            if (seen == p)
                return make_error(ErrorCode::InvalidArgument,
                                  "set_dma_providers: provider '" +
                                      std::string(dma_provider_name(p)) + "' is listed twice");
        list.push_back(p);
    }
    std::lock_guard lock(g_mutex);
    g_override = std::move(list);
    return {};
}

void reset_dma_providers() noexcept
{
    std::lock_guard lock(g_mutex);
    g_override.reset();
}

} // namespace edgetensor

namespace edgetensor::detail
{

size_t dma_page_size() noexcept
{
    static const size_t page = [] {
        const long v = ::sysconf(_SC_PAGESIZE);
        return v > 0 ? size_t(v) : size_t(4096);
    }();
    return page;
}

size_t dma_round_to_pages(size_t bytes) noexcept
{
    const size_t page = dma_page_size();
    if (bytes > SIZE_MAX - (page - 1))
        return 0;
    return (bytes + page - 1) / page * page;
}

Result<std::vector<DmaProvider>> dma_request_order(const AllocRequest& req)
{
    if (req.bytes == 0)
        return make_error(ErrorCode::InvalidShape, "cannot allocate a zero-byte DMA-BUF");
    if (dma_round_to_pages(req.bytes) == 0)
        return make_error(ErrorCode::InvalidArgument,
                          "DMA-BUF size " + std::to_string(req.bytes) +
                              " bytes overflows when rounded up to whole pages");
    auto order = active_dma_providers();
    if (!order)
        return unexpected(std::move(order).error());
    if (order->empty())
        return make_error(ErrorCode::Unavailable,
                          "DMA-BUF allocation is disabled (the provider list is empty)");
    return order;
}

} // namespace edgetensor::detail
