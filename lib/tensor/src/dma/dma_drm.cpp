// SPDX-License-Identifier: MIT
//
// DRM PRIME provider: a dumb buffer on the first /dev/dri node that can make one, exported
// as a DMA-BUF with PRIME. vgem is the driver this exists for (a kernel with no display and no
// dma-heap still has it), but any driver with dumb buffers and PRIME export works.

#include "dma_internal.hpp"
#include "log.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>
#include <xf86drm.h>

namespace edgetensor::detail
{
namespace
{

constexpr const char* kDriDir = "/dev/dri";

// Primary nodes first: dumb buffers are a modesetting interface, and most kernels refuse
// DRM_IOCTL_MODE_CREATE_DUMB on render nodes; render nodes are still tried for drivers that
// allow it. Numeric order inside each kind, so card10 comes after card2.
std::vector<std::string> list_nodes(std::string& why)
{
    struct Node {
        int kind;
        long index;
        std::string name;
    };
    std::vector<Node> nodes;
    DIR* dir = ::opendir(kDriDir);
    if (!dir) {
        why = std::string(kDriDir) + ": " + std::strerror(errno);
        return {};
    }
    while (const dirent* e = ::readdir(dir)) {
        const std::string_view n = e->d_name;
        int kind;
        std::string_view digits;
        if (n.starts_with("card")) {
            kind = 0;
            digits = n.substr(4);
        } else if (n.starts_with("renderD")) {
            kind = 1;
            digits = n.substr(7);
        } else {
            continue;
        }
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
            continue;
        long index = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
        if (ec != std::errc() || end != digits.data() + digits.size())
            continue;
        nodes.push_back({kind, index, std::string(n)});
    }
    ::closedir(dir);
    std::sort(nodes.begin(), nodes.end(), [](const Node& a, const Node& b) {
        return a.kind != b.kind ? a.kind < b.kind : a.index < b.index;
    });
    std::vector<std::string> paths;
    for (const Node& node : nodes)
        paths.push_back(std::string(kDriDir) + "/" + node.name);
    return paths;
}

std::string driver_name(int fd)
{
    drmVersionPtr v = drmGetVersion(fd);
    std::string name = v && v->name ? std::string(v->name, size_t(v->name_len)) : "unknown";
    drmFreeVersion(v);
    return name;
}

StorageResult allocate_on(const std::string& path, const AllocRequest& req, size_t bytes)
{
    UniqueFd dev(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!dev)
        return make_error(ErrorCode::Unavailable, path + ": " + std::strerror(errno));
    const std::string driver = driver_name(dev.get());

    // One byte per pixel, one page per row: the buffer is exactly `bytes` (whole pages) long
    // whatever pitch alignment the driver applies.
    const size_t page = dma_page_size();
    if (bytes / page > UINT32_MAX)
        return make_error(ErrorCode::AllocationFailed,
                          path + " (" + driver + "): " + std::to_string(bytes) +
                              " bytes is more than a dumb buffer can describe");
    drm_mode_create_dumb create{};
    create.width = static_cast<uint32_t>(page);
    create.height = static_cast<uint32_t>(bytes / page);
    create.bpp = 8;
    if (drmIoctl(dev.get(), DRM_IOCTL_MODE_CREATE_DUMB, &create) != 0)
        return make_error(ErrorCode::Unavailable,
                          path + " (" + driver +
                              "): DRM_IOCTL_MODE_CREATE_DUMB failed: " + std::strerror(errno));

    int prime = -1;
    int r = drmPrimeHandleToFD(dev.get(), create.handle, DRM_CLOEXEC | DRM_RDWR, &prime);
    if (r != 0 && errno == EINVAL) // kernels before 4.6 accept only DRM_CLOEXEC
        r = drmPrimeHandleToFD(dev.get(), create.handle, DRM_CLOEXEC, &prime);
    const int export_errno = errno;
    // The DMA-BUF holds its own reference to the GEM object; the handle (and the device fd)
    // are not needed once it exists, or at all if the export failed.
    drm_mode_destroy_dumb destroy{};
    destroy.handle = create.handle;
    if (drmIoctl(dev.get(), DRM_IOCTL_MODE_DESTROY_DUMB, &destroy) != 0)
        ET_LOG_WARNING("dma", "%s: DRM_IOCTL_MODE_DESTROY_DUMB failed: %s", path.c_str(),
                       std::strerror(errno));
    if (r != 0 || prime < 0)
        return make_error(ErrorCode::Unavailable, path + " (" + driver +
                                                      "): PRIME export of a dumb buffer failed: " +
                                                      std::strerror(export_errno));
    UniqueFd buf(prime);
    if (create.size < bytes)
        return make_error(ErrorCode::AllocationFailed, path + " (" + driver + "): dumb buffer is " +
                                                           std::to_string(create.size) +
                                                           " bytes, asked for " +
                                                           std::to_string(bytes));
    dma_set_name(buf.get(), dma_buffer_label(req.name));
    return make_dma_storage(std::move(buf), size_t(create.size), req.access, "drm-prime:" + driver);
}

std::mutex g_node_mutex;
std::string g_good_node; // the node that last delivered; tried first (guarded by g_node_mutex)

} // namespace

StorageResult drm_prime_allocate(const AllocRequest& req)
{
    const size_t bytes = dma_round_to_pages(req.bytes);
    std::string first;
    {
        std::lock_guard lock(g_node_mutex);
        first = g_good_node;
    }
    std::string why;
    if (!first.empty()) {
        auto r = allocate_on(first, req, bytes);
        if (r)
            return r;
        why = r.error().message();
        ET_LOG_DEBUG("dma", "%s no longer allocates (%s); rescanning %s", first.c_str(),
                     why.c_str(), kDriDir);
    }
    std::string scan_error;
    const std::vector<std::string> nodes = list_nodes(scan_error);
    for (const std::string& path : nodes) {
        if (path == first)
            continue;
        auto r = allocate_on(path, req, bytes);
        if (r) {
            std::lock_guard lock(g_node_mutex);
            g_good_node = path;
            return r;
        }
        if (!why.empty())
            why += "; ";
        why += r.error().message();
    }
    if (!scan_error.empty())
        why += (why.empty() ? "" : "; ") + scan_error;
    else if (nodes.empty())
        why += (why.empty() ? "" : "; ") + std::string(kDriDir) +
               " has no DRM node (card* or renderD*)";
    return make_error(ErrorCode::Unavailable, why);
}

} // namespace edgetensor::detail
