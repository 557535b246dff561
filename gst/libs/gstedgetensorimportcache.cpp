// SPDX-License-Identifier: MIT
//
// The import cache: upstream DMA-BUFs/memfds imported once, keyed by what the kernel says the
// buffer is (st_dev, st_ino, plane offset) plus the geometry, and kept alive in a bounded LRU.
//
// Why not the fd number or the GstMemory pointer: a camera pool may hand the same buffer out
// under a new fd (dup + close) or a new GstMemory every frame, and the old fd number is then
// reused for a different buffer. The inode is stable for as long as the buffer exists, and a
// cached entry owns a duplicate fd, so the buffer (and its inode) outlives the entry.

#include "errno_name.hpp"
#include "fault.hpp"
#include "glib_raii.hpp"
#include "internal.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/gstedgetensorimportcache.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

GST_DEBUG_CATEGORY_STATIC(gst_edge_tensor_import_debug);
#define GST_CAT_DEFAULT gst_edge_tensor_import_debug

namespace
{

using edgetensor::DType;
using edgetensor::ErrorCode;
using edgetensor::PixelFormat;
using edgetensor::PixelLayout;
using edgetensor::PlaneLayout;
using edgetensor::TensorDyn;
using edgetensor::UniqueFd;
namespace eg = edgetensor::gst;

constexpr guint kMaxPlanes = GST_EDGE_TENSOR_META_MAX_PLANES;

void init_debug()
{
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        gst_edge_tensor_init();
        GST_DEBUG_CATEGORY_INIT(gst_edge_tensor_import_debug, "edgetensorimport", 0,
                                "edgetensor import cache");
        g_once_init_leave(&once, 1);
    }
}

struct PlaneKey {
    guint64 dev = 0;
    guint64 ino = 0;
    guint64 offset = 0; ///< bytes from the start of the fd's buffer
    gint64 stride = 0;
    bool operator==(const PlaneKey&) const = default;
};

struct Key {
    std::array<PlaneKey, kMaxPlanes> planes{};
    guint n_planes = 0;
    guint width = 0;
    guint height = 0;
    gint format = -1; ///< GstVideoFormat, -1 for other/tensors
    guint dtype = 0;
    edgetensor::Shape shape; ///< other/tensors only
    bool operator==(const Key&) const = default;
};

struct KeyHash {
    size_t operator()(const Key& k) const noexcept
    {
        size_t h = 0xcbf29ce484222325ull;
        auto mix = [&h](guint64 v) { h = (h ^ v) * 0x100000001b3ull; };
        for (guint i = 0; i < k.n_planes; ++i) {
            mix(k.planes[i].dev);
            mix(k.planes[i].ino);
            mix(k.planes[i].offset);
            mix(guint64(k.planes[i].stride));
        }
        mix(k.width);
        mix(k.height);
        mix(guint64(k.format));
        mix(k.dtype);
        for (size_t d : k.shape)
            mix(d);
        return h;
    }
};

// Where one plane of a buffer lives: which memory, its fd, and the byte offset in that fd.
struct PlanePlace {
    GstMemory* mem = nullptr; // borrowed from the buffer
    int fd = -1;              // borrowed from the memory
    guint64 fd_offset = 0;
    gint stride = 0;
};

// What a buffer is, worked out without side effects.
struct Plan {
    Key key;
    std::array<PlanePlace, kMaxPlanes> places{};
    bool video = false;
    GstVideoInfo vinfo{}; // video: the buffer's real layout (GstVideoMeta, else the caps)
    bool single_fd = true;
    bool edgetensor_memory = false; // every plane in one edgetensor memory: reuse its tensor
};

enum class Verdict { Ok, NotImportable, Failed };

struct Classified {
    Verdict verdict = Verdict::Ok;
    std::string why;
    ErrorCode code = ErrorCode::InvalidArgument;
};

struct Entry {
    Key key;
    TensorDyn tensor;
};

const char* memory_type_of(GstMemory* mem)
{
    return mem && mem->allocator && mem->allocator->mem_type ? mem->allocator->mem_type
                                                             : "(no allocator)";
}

} // namespace

struct _GstEdgeTensorImportCache {
    std::mutex mu;
    guint max_entries = GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE;

    // Caps
    bool have_caps = false;
    eg::MiniObjectPtr<GstCaps> caps;
    bool video = false;
    GstVideoInfo vinfo{};
    bool colorimetry_from_caps = false;
    eg::TensorCaps tensor;

    // LRU: front is the most recently used.
    std::list<Entry> lru;
    std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index;

    // Stats
    guint64 hits = 0;
    guint64 misses = 0;
    guint64 evictions = 0;
    guint64 invalidations = 0;
    guint64 failed = 0;
    guint peak = 0;
    std::string last_failure;
    std::map<std::string, guint64> failures;

    // Entries leave the cache under the lock but die after it is released: dropping a tensor
    // closes an fd and may unmap, and callers may hold other locks.
    void evict_to(guint bound, std::vector<TensorDyn>& graveyard)
    {
        while (lru.size() > bound) {
            Entry& e = lru.back();
            GST_DEBUG("evicting tensor %" G_GUINT64_FORMAT " (ino %" G_GUINT64_FORMAT ")",
                      e.tensor.buffer_identity().id(), e.key.planes[0].ino);
            index.erase(e.key);
            graveyard.push_back(std::move(e.tensor));
            lru.pop_back();
            ++evictions;
        }
    }

    void clear_locked(const char* reason, std::vector<TensorDyn>& graveyard)
    {
        if (lru.empty())
            return;
        GST_DEBUG("dropping %zu entries: %s", lru.size(), reason ? reason : "cleared");
        for (Entry& e : lru)
            graveyard.push_back(std::move(e.tensor));
        lru.clear();
        index.clear();
        ++invalidations;
    }

    void record_failure(ErrorCode code, const std::string& why)
    {
        ++failed;
        ++failures[std::string(edgetensor::error_code_name(code))];
        last_failure = why;
    }
};

namespace
{

// (st_dev, st_ino) of a memory's fd. A GstFdMemory keeps one fd for its whole life, so the
// answer is remembered on the memory (qdata, dying with it): a camera pool that hands the same
// memories out again costs no fstat() per frame, and a new memory (even under a recycled fd
// number) is asked afresh.
struct MemoryInode {
    int fd = -1;
    guint64 dev = 0;
    guint64 ino = 0;
};

bool memory_inode(GstMemory* mem, int fd, MemoryInode* out)
{
    static const GQuark quark = g_quark_from_static_string("GstEdgeTensorImportCache.inode");
    auto* known = static_cast<const MemoryInode*>(
        gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(mem), quark));
    if (known && known->fd == fd) {
        *out = *known;
        return true;
    }
    struct stat st {
    };
    if (edgetensor::detail::fault_inject(edgetensor::detail::FaultPoint::Fstat) ||
        fstat(fd, &st) != 0)
        return false;
    *out = {fd, guint64(st.st_dev), guint64(st.st_ino)};
    gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), quark, g_memdup2(out, sizeof(*out)),
                              g_free);
    return true;
}

// Works out where every plane of `buffer` lives. Only reads: fstat() of the memories' fds
// (remembered on each memory).
Classified classify(const GstEdgeTensorImportCache& c, GstBuffer* buffer, Plan& plan)
{
    Classified r;
    auto refuse = [&r](Verdict v, std::string why, ErrorCode code = ErrorCode::InvalidArgument) {
        r.verdict = v;
        r.why = std::move(why);
        r.code = code;
        return r;
    };
    if (!c.have_caps)
        return refuse(Verdict::NotImportable, "no caps were set on the import cache");
    if (gst_buffer_n_memory(buffer) == 0)
        return refuse(Verdict::NotImportable, "the buffer holds no memory");

    std::array<gsize, kMaxPlanes> offsets{};
    guint n = 1;
    plan.video = c.video;
    if (c.video) {
        plan.vinfo = c.vinfo;
        if (GstVideoMeta* vm = gst_buffer_get_video_meta(buffer)) {
            if (vm->n_planes > kMaxPlanes)
                return refuse(Verdict::NotImportable, "more than 4 planes");
            if (vm->format != GST_VIDEO_INFO_FORMAT(&c.vinfo) ||
                vm->width != guint(GST_VIDEO_INFO_WIDTH(&c.vinfo)) ||
                vm->height != guint(GST_VIDEO_INFO_HEIGHT(&c.vinfo)))
                return refuse(Verdict::NotImportable,
                              "the buffer's GstVideoMeta does not match the caps");
            for (guint i = 0; i < vm->n_planes; ++i) {
                plan.vinfo.offset[i] = vm->offset[i];
                plan.vinfo.stride[i] = vm->stride[i];
            }
        }
        n = GST_VIDEO_INFO_N_PLANES(&plan.vinfo);
        if (n > kMaxPlanes)
            return refuse(Verdict::NotImportable, "more than 4 planes");
        for (guint i = 0; i < n; ++i)
            if (GST_VIDEO_INFO_PLANE_STRIDE(&plan.vinfo, i) < 0)
                return refuse(Verdict::NotImportable,
                              "plane " + std::to_string(i) +
                                  " has a negative stride (a bottom-up frame), which a tensor's "
                                  "plane layout cannot describe");
        for (guint i = 0; i < n; ++i)
            offsets[i] = GST_VIDEO_INFO_PLANE_OFFSET(&plan.vinfo, i);
        plan.key.width = GST_VIDEO_INFO_WIDTH(&plan.vinfo);
        plan.key.height = GST_VIDEO_INFO_HEIGHT(&plan.vinfo);
        plan.key.format = gint(GST_VIDEO_INFO_FORMAT(&plan.vinfo));
    } else {
        if (gst_buffer_n_memory(buffer) != 1)
            return refuse(Verdict::NotImportable, "an other/tensors buffer in " +
                                                      std::to_string(gst_buffer_n_memory(buffer)) +
                                                      " memories cannot be one tensor");
        plan.key.dtype = guint(c.tensor.dtype);
        plan.key.shape = c.tensor.shape;
    }
    plan.key.n_planes = n;

    for (guint i = 0; i < n; ++i) {
        guint idx = 0, len = 0;
        gsize skip = 0;
        if (!gst_buffer_find_memory(buffer, offsets[i], 1, &idx, &len, &skip))
            return refuse(Verdict::NotImportable, "plane " + std::to_string(i) + " at offset " +
                                                      std::to_string(offsets[i]) +
                                                      " lies beyond the buffer");
        GstMemory* mem = gst_buffer_peek_memory(buffer, idx);
        if (!gst_is_fd_memory(mem))
            return refuse(Verdict::NotImportable,
                          std::string("plane ") + std::to_string(i) + " is in memory of type \"" +
                              memory_type_of(mem) + "\", which has no fd to import");
        PlanePlace& p = plan.places[i];
        p.mem = mem;
        p.fd = gst_fd_memory_get_fd(mem);
        p.fd_offset = guint64(mem->offset) + skip;
        p.stride = c.video ? GST_VIDEO_INFO_PLANE_STRIDE(&plan.vinfo, i) : 0;
        if (p.fd < 0)
            return refuse(Verdict::NotImportable,
                          "plane " + std::to_string(i) + "'s memory has no fd");
    }

    for (guint i = 0; i < n; ++i) {
        MemoryInode inode;
        if (i > 0 && plan.places[i].mem == plan.places[i - 1].mem) {
            inode = {plan.places[i].fd, plan.key.planes[i - 1].dev, plan.key.planes[i - 1].ino};
        } else if (!memory_inode(plan.places[i].mem, plan.places[i].fd, &inode)) {
            return refuse(Verdict::Failed,
                          "fstat of plane " + std::to_string(i) + "'s fd " +
                              std::to_string(plan.places[i].fd) +
                              " failed: " + edgetensor::detail::errno_text(errno),
                          ErrorCode::Io);
        }
        plan.key.planes[i] = {inode.dev, inode.ino, plan.places[i].fd_offset,
                              plan.places[i].stride};
        if (i > 0 && (plan.key.planes[i].dev != plan.key.planes[0].dev ||
                      plan.key.planes[i].ino != plan.key.planes[0].ino))
            plan.single_fd = false;
    }

    if (!plan.single_fd) {
        const PixelFormat pf = eg::pixel_format_from_gst(GST_VIDEO_INFO_FORMAT(&plan.vinfo));
        const auto info = edgetensor::pixel_format_info(pf);
        if (!info || info->layout != PixelLayout::SemiPlanar || n != 2)
            return refuse(
                Verdict::NotImportable,
                std::string(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&plan.vinfo))) +
                    " with planes in separate buffers cannot be described by one tensor "
                    "(only semi-planar NV12/NV16/NV24 can)");
    }
    plan.edgetensor_memory = gst_is_edge_tensor_memory(plan.places[0].mem);
    for (guint i = 1; i < n; ++i)
        plan.edgetensor_memory = plan.edgetensor_memory && plan.places[i].mem == plan.places[0].mem;
    if (plan.edgetensor_memory && !c.video) {
        // The allocator's memory (a writer that allocated its output from it) holds flat bytes;
        // the caps' dtype and shape come from importing its fd like any other.
        const auto t = eg::tensor_from_memory(plan.places[0].mem);
        plan.edgetensor_memory = t && t->dtype() == c.tensor.dtype &&
                                 eg::shapes_equal_padded(t->shape(), c.tensor.shape);
    }
    return r;
}

// The tensor for `plan`: ours from the memory's fd (a dup: the memory keeps its own).
edgetensor::Result<TensorDyn> import_plan(const GstEdgeTensorImportCache& c, const Plan& plan)
{
    if (plan.edgetensor_memory) {
        if (auto t = eg::tensor_from_memory(plan.places[0].mem))
            return *t;
    }
    const std::string name = "import-" + std::to_string(plan.key.planes[0].ino);
    auto dup = [](int fd) -> edgetensor::Result<UniqueFd> {
        UniqueFd d = UniqueFd::dup(fd);
        if (!d)
            return edgetensor::make_error(ErrorCode::Io,
                                          std::string("dup of the memory's fd failed: ") +
                                              edgetensor::detail::errno_text(errno));
        return d;
    };

    if (!plan.video) {
        if (plan.places[0].fd_offset != 0)
            return edgetensor::make_error(
                ErrorCode::NotSupported,
                "the tensor starts " + std::to_string(plan.places[0].fd_offset) +
                    " bytes into its fd; other/tensors are imported from byte 0 only");
        auto fd = dup(plan.places[0].fd);
        if (!fd)
            return edgetensor::unexpected(std::move(fd).error());
        return TensorDyn::from_fd(std::move(*fd), c.tensor.dtype, c.tensor.shape, name);
    }

    const GstVideoInfo& vi = plan.vinfo;
    const guint w = GST_VIDEO_INFO_WIDTH(&vi), h = GST_VIDEO_INFO_HEIGHT(&vi);
    const PixelFormat pf = eg::pixel_format_from_gst(GST_VIDEO_INFO_FORMAT(&vi));
    const auto info = edgetensor::pixel_format_info(pf);
    auto layout = [&plan](guint i) {
        return PlaneLayout{size_t(plan.places[i].fd_offset), size_t(plan.places[i].stride)};
    };

    if (!plan.single_fd) {
        // Semi-planar in two buffers: one single-plane tensor per buffer, composed. The chroma
        // plane is imported as 2-byte pixels (the YUYV geometry) because from_planes wants its
        // rows as [rows, W/2, 2] pairs.
        auto fd0 = dup(plan.places[0].fd);
        if (!fd0)
            return edgetensor::unexpected(std::move(fd0).error());
        const std::array<PlaneLayout, 1> l0{layout(0)};
        auto luma =
            TensorDyn::from_fd_image(std::move(*fd0), w, h, PixelFormat::Grey, l0, DType::U8,
                                     edgetensor::CpuAccess::ReadWrite, name + "-luma");
        if (!luma)
            return luma;
        auto fd1 = dup(plan.places[1].fd);
        if (!fd1)
            return edgetensor::unexpected(std::move(fd1).error());
        const guint crow = guint(GST_VIDEO_INFO_COMP_WIDTH(&vi, 1)) * 2;
        const guint crows = guint(GST_VIDEO_INFO_COMP_HEIGHT(&vi, 1));
        const std::array<PlaneLayout, 1> l1{layout(1)};
        auto chroma =
            TensorDyn::from_fd_image(std::move(*fd1), crow / 2, crows, PixelFormat::Yuyv, l1,
                                     DType::U8, edgetensor::CpuAccess::ReadWrite, name + "-chroma");
        if (!chroma)
            return chroma;
        return TensorDyn::from_planes(*luma, *chroma, pf);
    }

    std::vector<PlaneLayout> planes;
    bool image = info.has_value();
    if (info) {
        planes.push_back(layout(0));
        if (info->layout == PixelLayout::SemiPlanar)
            planes.push_back(layout(1));
        if (info->layout == PixelLayout::Planar) {
            // The core's planar images stack the channels at one pitch, back to back.
            const guint64 plane_bytes = guint64(plan.places[0].stride) * h;
            for (guint i = 1; i < GST_VIDEO_INFO_N_PLANES(&vi); ++i)
                image = image && plan.places[i].stride == plan.places[0].stride &&
                        plan.places[i].fd_offset == plan.places[0].fd_offset + i * plane_bytes;
        }
    }
    auto fd = dup(plan.places[0].fd);
    if (!fd)
        return edgetensor::unexpected(std::move(fd).error());
    if (image)
        return TensorDyn::from_fd_image(std::move(*fd), w, h, pf, planes, DType::U8,
                                        edgetensor::CpuAccess::ReadWrite, name);
    // A format the core has no image for: the bytes up to the end of the memory, flat; the
    // meta describes the planes.
    const guint64 bytes = guint64(plan.places[0].mem->offset) + plan.places[0].mem->size;
    return TensorDyn::from_fd(std::move(*fd), DType::U8, {size_t(bytes)}, name);
}

struct Outcome {
    GstEdgeTensorImportResult result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    std::optional<TensorDyn> tensor;
    Plan plan;
    std::string why;
};

Outcome lookup_or_import(GstEdgeTensorImportCache* c, GstBuffer* buffer)
{
    Outcome out;
    std::vector<TensorDyn> graveyard;
    std::lock_guard<std::mutex> lock(c->mu);
    const Classified cl = classify(*c, buffer, out.plan);
    if (cl.verdict == Verdict::NotImportable) {
        out.why = cl.why;
        return out;
    }
    if (cl.verdict == Verdict::Failed) {
        c->record_failure(cl.code, cl.why);
        out.result = GST_EDGE_TENSOR_IMPORT_FAILED;
        out.why = cl.why;
        GST_WARNING("import failed: %s", cl.why.c_str());
        return out;
    }
    auto it = c->index.find(out.plan.key);
    if (it != c->index.end()) {
        c->lru.splice(c->lru.begin(), c->lru, it->second);
        ++c->hits;
        out.result = GST_EDGE_TENSOR_IMPORT_HIT;
        out.tensor = it->second->tensor;
        return out;
    }
    auto t = import_plan(*c, out.plan);
    if (!t) {
        out.why = "importing fd " + std::to_string(out.plan.places[0].fd) + " (ino " +
                  std::to_string(out.plan.key.planes[0].ino) + ") failed: " + t.error().message();
        c->record_failure(t.error().code(), out.why);
        out.result = GST_EDGE_TENSOR_IMPORT_FAILED;
        GST_WARNING("%s", out.why.c_str());
        return out;
    }
    if (out.plan.video && c->colorimetry_from_caps && !out.plan.edgetensor_memory)
        t->set_colorimetry(eg::colorimetry_from_gst(c->vinfo.colorimetry));
    ++c->misses;
    GST_DEBUG("imported ino %" G_GUINT64_FORMAT " offset %" G_GUINT64_FORMAT
              " as tensor %" G_GUINT64_FORMAT " (%s%s)",
              out.plan.key.planes[0].ino, out.plan.key.planes[0].offset, t->buffer_identity().id(),
              std::string(edgetensor::memory_name(t->memory())).c_str(),
              out.plan.edgetensor_memory ? ", the memory's own tensor" : "");
    c->lru.push_front(Entry{out.plan.key, *t});
    c->index.emplace(out.plan.key, c->lru.begin());
    c->evict_to(c->max_entries, graveyard);
    c->peak = std::max<guint>(c->peak, guint(c->lru.size()));
    out.result = GST_EDGE_TENSOR_IMPORT_MISS;
    out.tensor = std::move(*t);
    return out;
}

void set_why(gchar** why, const std::string& s)
{
    if (why)
        *why = g_strdup(s.c_str());
}

// The meta for a tensor this cache imported (the memory is foreign, so the library's
// gst_buffer_add_edge_tensor_meta(), which reads the tensor off the memory, cannot be used).
GstEdgeTensorMeta* add_import_meta(GstBuffer* buffer, const TensorDyn& tensor, const Plan& plan,
                                   bool colorimetry_from_caps)
{
    eg::MetaPlanes planes;
    planes.n_planes = plan.video ? plan.key.n_planes : 1;
    for (guint i = 0; i < std::min<guint>(planes.n_planes, GST_EDGE_TENSOR_META_MAX_PLANES); ++i) {
        planes.offsets[i] = gsize(plan.places[i].fd_offset);
        planes.strides[i] = plan.places[i].stride;
    }
    if (!plan.video)
        planes.strides[0] = tensor.strides().empty() ? 0 : gint(tensor.strides().front());
    // The handle is borrowed from the buffer's memory, like the pool's: valid while the buffer
    // lives, even if the cache entry is evicted meanwhile. The cache's mapping is no address
    // the buffer's holder may use, so no host pointer.
    return eg::add_tensor_meta(buffer, tensor, plan.places[0].fd, false,
                               plan.video ? &plan.vinfo : nullptr, planes, colorimetry_from_caps);
}

} // namespace

extern "C" GstEdgeTensorImportCache* gst_edge_tensor_import_cache_new(guint max_entries)
{
    g_return_val_if_fail(max_entries >= 1 && max_entries <= GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE,
                         nullptr);
    init_debug();
    try {
        auto* c = new GstEdgeTensorImportCache();
        c->max_entries = max_entries;
        return c;
    } catch (...) {
        return nullptr;
    }
}

extern "C" void gst_edge_tensor_import_cache_free(GstEdgeTensorImportCache* cache)
{
    delete cache;
}

extern "C" gboolean gst_edge_tensor_import_cache_set_caps(GstEdgeTensorImportCache* cache,
                                                          GstCaps* caps)
{
    g_return_val_if_fail(cache != nullptr, FALSE);
    g_return_val_if_fail(GST_IS_CAPS(caps), FALSE);
    std::vector<TensorDyn> graveyard;
    try {
        std::lock_guard<std::mutex> lock(cache->mu);
        if (cache->have_caps && cache->caps && gst_caps_is_equal(cache->caps.get(), caps))
            return TRUE;
        cache->clear_locked("caps changed", graveyard);
        cache->have_caps = false;
        cache->caps.reset(gst_caps_ref(caps));
        if (gst_caps_get_size(caps) != 1 || !gst_caps_is_fixed(caps)) {
            GST_WARNING("import cache: caps %" GST_PTR_FORMAT " are not fixed", caps);
            return FALSE;
        }
        const GstStructure* s = gst_caps_get_structure(caps, 0);
        if (gst_structure_has_name(s, "video/x-raw")) {
            if (!gst_video_info_from_caps(&cache->vinfo, caps)) {
                GST_WARNING("import cache: cannot parse %" GST_PTR_FORMAT, caps);
                return FALSE;
            }
            cache->video = true;
            cache->colorimetry_from_caps = gst_structure_has_field(s, "colorimetry");
        } else if (gst_structure_has_name(s, eg::kTensorsMediaType)) {
            auto t = eg::parse_tensor_caps(s);
            if (!t) {
                GST_WARNING("import cache: %s", t.error().message().c_str());
                return FALSE;
            }
            cache->video = false;
            cache->tensor = *t;
        } else {
            GST_WARNING("import cache: %" GST_PTR_FORMAT " is neither video/x-raw nor "
                        "other/tensors",
                        caps);
            return FALSE;
        }
        cache->have_caps = true;
        return TRUE;
    } catch (const std::exception& e) {
        GST_ERROR("import cache: set_caps failed: %s", e.what());
    }
    return FALSE;
}

extern "C" void gst_edge_tensor_import_cache_clear(GstEdgeTensorImportCache* cache,
                                                   const gchar* reason)
{
    g_return_if_fail(cache != nullptr);
    std::vector<TensorDyn> graveyard;
    std::lock_guard<std::mutex> lock(cache->mu);
    try {
        graveyard.reserve(cache->lru.size());
    } catch (...) {
    }
    cache->clear_locked(reason, graveyard);
}

extern "C" void gst_edge_tensor_import_cache_set_max_entries(GstEdgeTensorImportCache* cache,
                                                             guint max_entries)
{
    g_return_if_fail(cache != nullptr);
    g_return_if_fail(max_entries >= 1 && max_entries <= GST_EDGE_TENSOR_IMPORT_CACHE_MAX_SIZE);
    std::vector<TensorDyn> graveyard;
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->max_entries = max_entries;
    try {
        cache->evict_to(max_entries, graveyard);
    } catch (...) {
        GST_ERROR("import cache: eviction failed");
    }
}

extern "C" guint gst_edge_tensor_import_cache_get_max_entries(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    std::lock_guard<std::mutex> lock(cache->mu);
    return cache->max_entries;
}

extern "C" void gst_edge_tensor_import_cache_reset_stats(GstEdgeTensorImportCache* cache)
{
    g_return_if_fail(cache != nullptr);
    std::lock_guard<std::mutex> lock(cache->mu);
    cache->hits = cache->misses = cache->evictions = cache->invalidations = cache->failed = 0;
    cache->peak = guint(cache->lru.size());
    cache->last_failure.clear();
    cache->failures.clear();
}

extern "C" gboolean gst_edge_tensor_import_cache_can_import(GstEdgeTensorImportCache* cache,
                                                            GstBuffer* buffer, gchar** why)
{
    g_return_val_if_fail(cache != nullptr, FALSE);
    g_return_val_if_fail(GST_IS_BUFFER(buffer), FALSE);
    try {
        Plan plan;
        std::lock_guard<std::mutex> lock(cache->mu);
        const Classified cl = classify(*cache, buffer, plan);
        if (cl.verdict != Verdict::Ok)
            set_why(why, cl.why);
        return cl.verdict == Verdict::Ok;
    } catch (const std::exception& e) {
        set_why(why, e.what());
    }
    return FALSE;
}

extern "C" GstEdgeTensorImportResult
gst_edge_tensor_import_cache_import(GstEdgeTensorImportCache* cache, GstBuffer* buffer,
                                    guint64* identity, gchar** why)
{
    g_return_val_if_fail(cache != nullptr, GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE);
    g_return_val_if_fail(GST_IS_BUFFER(buffer), GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE);
    try {
        Outcome o = lookup_or_import(cache, buffer);
        if (identity)
            *identity = o.tensor ? o.tensor->buffer_identity().id() : 0;
        if (!o.tensor)
            set_why(why, o.why);
        return o.result;
    } catch (const std::exception& e) {
        set_why(why, std::string("import failed: ") + e.what());
    }
    return GST_EDGE_TENSOR_IMPORT_FAILED;
}

extern "C" GstEdgeTensorMeta*
gst_edge_tensor_import_cache_attach_meta(GstEdgeTensorImportCache* cache, GstBuffer* buffer,
                                         GstEdgeTensorImportResult* result, gchar** why)
{
    if (result)
        *result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    g_return_val_if_fail(cache != nullptr, nullptr);
    g_return_val_if_fail(GST_IS_BUFFER(buffer), nullptr);
    g_return_val_if_fail(gst_buffer_is_writable(buffer), nullptr);
    try {
        Outcome o = lookup_or_import(cache, buffer);
        if (result)
            *result = o.result;
        if (!o.tensor) {
            set_why(why, o.why);
            return nullptr;
        }
        const guint64 id = o.tensor->buffer_identity().id();
        GstEdgeTensorMeta* old = gst_buffer_get_edge_tensor_meta(buffer);
        if (old && old->identity == id)
            return old; // the producing pool's own meta for this very tensor
        // A pool's metas are locked to their buffer: one whose memory was replaced (an element
        // appended its own, tensorimport dropped the pool's) keeps the meta, which must then
        // describe the new memory. (The pool discards such a buffer when it comes back.)
        const bool locked = old && GST_META_FLAG_IS_SET(&old->meta, GST_META_FLAG_LOCKED);
        if (old && !locked)
            gst_buffer_remove_meta(buffer, &old->meta);
        bool colorimetry_from_caps;
        {
            std::lock_guard<std::mutex> lock(cache->mu);
            colorimetry_from_caps = cache->colorimetry_from_caps;
        }
        GstEdgeTensorMeta* m = nullptr;
        if (o.plan.edgetensor_memory)
            m = gst_buffer_add_edge_tensor_meta(buffer, o.plan.video ? &o.plan.vinfo : nullptr,
                                                colorimetry_from_caps);
        else
            m = add_import_meta(buffer, *o.tensor, o.plan, colorimetry_from_caps);
        if (!m) {
            set_why(why, "cannot attach GstEdgeTensorMeta");
        } else if (locked) {
            eg::copy_tensor_meta_fields(old, m);
            gst_buffer_remove_meta(buffer, &m->meta);
            m = old;
        }
        return m;
    } catch (const std::exception& e) {
        set_why(why, std::string("import failed: ") + e.what());
    }
    return nullptr;
}

extern "C" GstStructure* gst_edge_tensor_import_cache_get_stats(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, nullptr);
    std::vector<TensorDyn> tensors;
    GstStructure* s = gst_structure_new_empty(GST_EDGE_TENSOR_IMPORT_STATS_NAME);
    GstStructure* failures = gst_structure_new_empty(GST_EDGE_TENSOR_STATS_FAILURES);
    {
        std::lock_guard<std::mutex> lock(cache->mu);
        gst_structure_set(s, GST_EDGE_TENSOR_STATS_HITS, G_TYPE_UINT64, cache->hits,
                          GST_EDGE_TENSOR_STATS_MISSES, G_TYPE_UINT64, cache->misses,
                          GST_EDGE_TENSOR_STATS_EVICTIONS, G_TYPE_UINT64, cache->evictions,
                          GST_EDGE_TENSOR_STATS_INVALIDATIONS, G_TYPE_UINT64, cache->invalidations,
                          GST_EDGE_TENSOR_STATS_ENTRIES, G_TYPE_UINT, guint(cache->lru.size()),
                          GST_EDGE_TENSOR_STATS_PEAK_ENTRIES, G_TYPE_UINT, cache->peak,
                          GST_EDGE_TENSOR_STATS_MAX_ENTRIES, G_TYPE_UINT, cache->max_entries,
                          GST_EDGE_TENSOR_STATS_FAILED_IMPORTS, G_TYPE_UINT64, cache->failed,
                          GST_EDGE_TENSOR_STATS_LAST_FAILURE, G_TYPE_STRING,
                          cache->last_failure.c_str(), nullptr);
        for (const auto& [code, count] : cache->failures)
            gst_structure_set(failures, code.c_str(), G_TYPE_UINT64, count, nullptr);
        for (const Entry& e : cache->lru)
            tensors.push_back(e.tensor);
    }
    {
        GValue v = G_VALUE_INIT;
        g_value_init(&v, GST_TYPE_STRUCTURE);
        g_value_take_boxed(&v, failures);
        gst_structure_take_value(s, GST_EDGE_TENSOR_STATS_FAILURES, &v);
    }
    // From the tensors' own fds (not the buffers'): what was really imported.
    GValue inodes = G_VALUE_INIT;
    gst_value_array_init(&inodes, guint(tensors.size()));
    for (const TensorDyn& t : tensors) {
        auto id = t.stat_identity(0);
        if (!id)
            continue;
        GValue v = G_VALUE_INIT;
        g_value_init(&v, G_TYPE_UINT64);
        g_value_set_uint64(&v, id->second);
        gst_value_array_append_and_take_value(&inodes, &v);
    }
    gst_structure_take_value(s, GST_EDGE_TENSOR_STATS_INODES, &inodes);
    return s;
}

extern "C" guint64 gst_edge_tensor_import_cache_get_hits(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    std::lock_guard<std::mutex> lock(cache->mu);
    return cache->hits;
}

extern "C" guint64 gst_edge_tensor_import_cache_get_misses(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    std::lock_guard<std::mutex> lock(cache->mu);
    return cache->misses;
}

extern "C" guint64 gst_edge_tensor_import_cache_get_evictions(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    std::lock_guard<std::mutex> lock(cache->mu);
    return cache->evictions;
}

extern "C" guint gst_edge_tensor_import_cache_get_n_entries(GstEdgeTensorImportCache* cache)
{
    g_return_val_if_fail(cache != nullptr, 0);
    std::lock_guard<std::mutex> lock(cache->mu);
    return guint(cache->lru.size());
}

namespace edgetensor::gst
{
std::optional<TensorDyn> import_tensor(GstEdgeTensorImportCache* cache, GstBuffer* buffer,
                                       GstEdgeTensorImportResult* result) noexcept
{
    if (result)
        *result = GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE;
    if (!cache || !GST_IS_BUFFER(buffer))
        return std::nullopt;
    try {
        Outcome o = lookup_or_import(cache, buffer);
        if (result)
            *result = o.result;
        return std::move(o.tensor);
    } catch (...) {
        if (result)
            *result = GST_EDGE_TENSOR_IMPORT_FAILED;
    }
    return std::nullopt;
}
} // namespace edgetensor::gst
