// SPDX-License-Identifier: MIT
//
// GstEdgeTensorAllocator (DMA-BUF memories) and its sibling GstEdgeTensorShmAllocator
// (shared-memory memories). Both hand out GstFdMemory that borrows the tensor's own fd
// (GST_FD_MEMORY_FLAG_DONT_CLOSE): the tensor rides along as qdata on the memory, owns the fd
// and dies with the memory, so a pooled buffer costs one fd, not two. Their memories map
// through the tensor (memory_map.cpp).

#include "glib_raii.hpp"
#include "internal.hpp"
#include "memory_tensor.hpp"
#include "vfunc_guard.hpp"

#include <gst/allocators/allocators.h>

#include <edgetensor/android.hpp>

#include <algorithm>
#include <new>
#include <string>
#include <utility>

#define GST_CAT_DEFAULT gst_edge_tensor_allocator_debug

namespace
{

using edgetensor::CpuAccess;
using edgetensor::ErrorCode;
using edgetensor::make_error;
using edgetensor::Result;
using edgetensor::TensorDyn;
using edgetensor::TensorMemory;

struct AllocatorPrivate {
    GstEdgeTensorMemoryKind kind = GST_EDGE_TENSOR_MEMORY_AUTO;
    GstAllocator* shm = nullptr; // owned
    GstAllocator* ahb = nullptr; // owned: memories of AHardwareBuffer tensors
    gboolean warned_not_dma = FALSE;
};

using edgetensor::gst::memory_tensor_free;
using edgetensor::gst::memory_tensor_quark;
using edgetensor::gst::MemoryTensor;
using edgetensor::gst::peek_memory_tensor;

GstAllocator* new_ahb_allocator();

AllocatorPrivate* priv_of(GstAllocator* a)
{
    return static_cast<AllocatorPrivate*>(GST_EDGE_TENSOR_ALLOCATOR(a)->priv);
}

GstMemory* alloc_for_kind(GstAllocator* log_obj, GstAllocator* wrap_with,
                          GstEdgeTensorMemoryKind kind, gsize size, GstAllocationParams* params)
{
    return edgetensor::gst::guarded(log_obj, "alloc", nullptr, [&]() -> GstMemory* {
        const gsize prefix = params ? params->prefix : 0;
        const gsize padding = params ? params->padding : 0;
        // Tensors start on a page boundary; anything stricter cannot be promised.
        if (params && params->align > 4095) {
            GST_ERROR_OBJECT(log_obj,
                             "alignment mask %zu exceeds the page alignment (4095) "
                             "edgetensor memories have",
                             params->align);
            return nullptr;
        }
        const gsize total = std::max<gsize>(size + prefix + padding, 1);
        auto t = edgetensor::gst::allocate_bytes(kind, total, "gst-alloc", GST_OBJECT(log_obj));
        if (!t) {
            GST_ERROR_OBJECT(log_obj, "allocating %zu bytes failed: %s", total,
                             t.error().message().c_str());
            return nullptr;
        }
        auto mem = edgetensor::gst::wrap_tensor(wrap_with, *t, total);
        if (!mem) {
            GST_ERROR_OBJECT(log_obj, "wrapping a tensor failed: %s",
                             mem.error().message().c_str());
            return nullptr;
        }
        const bool ahb = edgetensor::hardware_buffer_ptr(*t) != nullptr;
        if ((t->memory() != TensorMemory::Dma || ahb) && GST_IS_EDGE_TENSOR_ALLOCATOR(log_obj)) {
            AllocatorPrivate* p = priv_of(log_obj);
            if (!g_atomic_int_exchange(&p->warned_not_dma, TRUE))
                GST_INFO_OBJECT(log_obj,
                                "no DMA-BUF here: handing out %s memory (memory type \"%s\"); "
                                "gst_is_dmabuf_memory() is FALSE for it",
                                ahb ? "AHardwareBuffer"
                                    : edgetensor::gst::memory_kind_name(
                                          edgetensor::gst::memory_kind(t->memory())),
                                (*mem)->allocator->mem_type);
        }
        if (prefix || padding)
            gst_memory_resize(*mem, gssize(prefix), size);
        GST_LOG_OBJECT(log_obj, "allocated %zu bytes of %s memory, identity %" G_GUINT64_FORMAT,
                       size, std::string(edgetensor::memory_name(t->memory())).c_str(),
                       t->buffer_identity().id());
        return *mem;
    });
}

} // namespace

// ---- GstEdgeTensorShmAllocator -------------------------------------------------------------

G_DEFINE_TYPE(GstEdgeTensorShmAllocator, gst_edge_tensor_shm_allocator, GST_TYPE_FD_ALLOCATOR)

static GstMemory* gst_edge_tensor_shm_allocator_alloc(GstAllocator* allocator, gsize size,
                                                      GstAllocationParams* params)
{
    return alloc_for_kind(allocator, allocator, GST_EDGE_TENSOR_MEMORY_SHM, size, params);
}

static void gst_edge_tensor_shm_allocator_class_init(GstEdgeTensorShmAllocatorClass* klass)
{
    gst_edge_tensor_init();
    GST_ALLOCATOR_CLASS(klass)->alloc = gst_edge_tensor_shm_allocator_alloc;
}

static void gst_edge_tensor_shm_allocator_init(GstEdgeTensorShmAllocator* self)
{
    GstAllocator* alloc = GST_ALLOCATOR_CAST(self);
    alloc->mem_type = GST_EDGE_TENSOR_MEMORY_TYPE_SHM;
    GST_OBJECT_FLAG_UNSET(self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
    edgetensor::gst::use_tensor_mapping(alloc, edgetensor::gst::MapParent::Fd);
}

// ---- GstEdgeTensorAhbAllocator -------------------------------------------------------------
// The owner of AHardwareBuffer-backed memories (memory type "ahardwarebuffer"): no fd to hand
// out, so neither a dmabuf nor an fd allocator; every map locks the buffer through its tensor
// (AHardwareBuffer_lock replaying the allocation's usage) and every unmap unlocks it.

struct GstEdgeTensorAhbAllocator {
    GstAllocator parent;
};
struct GstEdgeTensorAhbAllocatorClass {
    GstAllocatorClass parent_class;
};

G_DEFINE_TYPE(GstEdgeTensorAhbAllocator, gst_edge_tensor_ahb_allocator, GST_TYPE_ALLOCATOR)

static GstMemory* gst_edge_tensor_ahb_allocator_alloc(GstAllocator* allocator, gsize size,
                                                      GstAllocationParams* params)
{
    return alloc_for_kind(allocator, allocator, GST_EDGE_TENSOR_MEMORY_DMA, size, params);
}

static void gst_edge_tensor_ahb_allocator_free(GstAllocator*, GstMemory* mem)
{
    g_free(mem);
}

static gpointer ahb_mem_map(GstMemory*, gsize, GstMapFlags)
{
    return nullptr; // only reached for a memory without a tensor (tensor_mem_map_full)
}

static void ahb_mem_unmap(GstMemory*) {}

static GstMemory* ahb_mem_share(GstMemory* mem, gssize offset, gssize size)
{
    GstMemory* parent = mem->parent ? mem->parent : mem;
    if (size == -1)
        size = gssize(mem->size) - offset;
    GstMemory* sub = g_new0(GstMemory, 1);
    // The share keeps its parent (and so the tensor and the buffer reference) alive.
    gst_memory_init(
        sub, GstMemoryFlags(GST_MINI_OBJECT_FLAGS(parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY),
        mem->allocator, parent, mem->maxsize, mem->align, mem->offset + offset, gsize(size));
    return sub;
}

static void gst_edge_tensor_ahb_allocator_class_init(GstEdgeTensorAhbAllocatorClass* klass)
{
    gst_edge_tensor_init();
    GST_ALLOCATOR_CLASS(klass)->alloc = gst_edge_tensor_ahb_allocator_alloc;
    GST_ALLOCATOR_CLASS(klass)->free = gst_edge_tensor_ahb_allocator_free;
}

static void gst_edge_tensor_ahb_allocator_init(GstEdgeTensorAhbAllocator* self)
{
    GstAllocator* alloc = GST_ALLOCATOR_CAST(self);
    alloc->mem_type = GST_EDGE_TENSOR_MEMORY_TYPE_AHB;
    alloc->mem_map = ahb_mem_map;
    alloc->mem_unmap = ahb_mem_unmap;
    alloc->mem_share = ahb_mem_share;
    edgetensor::gst::use_tensor_mapping(alloc, edgetensor::gst::MapParent::None);
    GST_OBJECT_FLAG_UNSET(self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

namespace
{
GstAllocator* new_ahb_allocator()
{
    auto* a = GST_ALLOCATOR_CAST(g_object_new(gst_edge_tensor_ahb_allocator_get_type(), nullptr));
    gst_object_ref_sink(a);
    return a;
}
} // namespace

namespace edgetensor::gst
{

bool is_ahb_allocator(GstAllocator* a)
{
    return a && G_TYPE_CHECK_INSTANCE_TYPE(a, gst_edge_tensor_ahb_allocator_get_type());
}

GQuark memory_tensor_quark()
{
    static GQuark q = g_quark_from_static_string("GstEdgeTensorMemory.tensor");
    return q;
}

void memory_tensor_free(gpointer data)
{
    auto* mt = static_cast<MemoryTensor*>(data);
    mt->map.reset();
    // A GDestroyNotify of the memory's qdata: a release handler that throws drops the tensor.
    if (mt->on_release)
        guarded(nullptr, "the tensor release handler",
                [mt] { mt->on_release(std::move(mt->tensor)); });
    delete mt;
}

// Borrowed view of the holder, no copy: for the C accessors on hot paths.
const MemoryTensor* peek_memory_tensor(GstMemory* mem)
{
    for (GstMemory* m = mem; m; m = m->parent) {
        auto* mt = static_cast<const MemoryTensor*>(
            gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(m), memory_tensor_quark()));
        if (mt)
            return mt;
    }
    return nullptr;
}

} // namespace edgetensor::gst

// ---- GstEdgeTensorAllocator ----------------------------------------------------------------

G_DEFINE_TYPE(GstEdgeTensorAllocator, gst_edge_tensor_allocator, GST_TYPE_DMABUF_ALLOCATOR)

static GstMemory* gst_edge_tensor_allocator_alloc(GstAllocator* allocator, gsize size,
                                                  GstAllocationParams* params)
{
    return alloc_for_kind(allocator, allocator, priv_of(allocator)->kind, size, params);
}

static void gst_edge_tensor_allocator_finalize(GObject* object)
{
    auto* self = GST_EDGE_TENSOR_ALLOCATOR(object);
    auto* p = static_cast<AllocatorPrivate*>(self->priv);
    self->priv = nullptr;
    if (p) {
        GstAllocator* shm = std::exchange(p->shm, nullptr);
        GstAllocator* ahb = std::exchange(p->ahb, nullptr);
        delete p;
        if (shm)
            gst_object_unref(shm);
        if (ahb)
            gst_object_unref(ahb);
    }
    G_OBJECT_CLASS(gst_edge_tensor_allocator_parent_class)->finalize(object);
}

static void gst_edge_tensor_allocator_class_init(GstEdgeTensorAllocatorClass* klass)
{
    gst_edge_tensor_init();
    G_OBJECT_CLASS(klass)->finalize = gst_edge_tensor_allocator_finalize;
    GST_ALLOCATOR_CLASS(klass)->alloc = gst_edge_tensor_allocator_alloc;
}

static void gst_edge_tensor_allocator_init(GstEdgeTensorAllocator* self)
{
    auto* p = new (std::nothrow) AllocatorPrivate();
    if (p) {
        p->shm = GST_ALLOCATOR_CAST(g_object_new(GST_TYPE_EDGE_TENSOR_SHM_ALLOCATOR, nullptr));
        gst_object_ref_sink(p->shm);
        p->ahb = new_ahb_allocator();
    }
    self->priv = p;
    edgetensor::gst::use_tensor_mapping(GST_ALLOCATOR_CAST(self),
                                        edgetensor::gst::MapParent::DmaBuf);
    // Unlike the stock dmabuf allocator, gst_allocator_alloc() works on this one, so generic
    // elements given it in an ALLOCATION query may use it.
    GST_OBJECT_FLAG_UNSET(self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

extern "C" GstAllocator* gst_edge_tensor_allocator_new(GstEdgeTensorMemoryKind kind)
{
    gst_edge_tensor_init();
    auto* a = GST_ALLOCATOR_CAST(g_object_new(GST_TYPE_EDGE_TENSOR_ALLOCATOR, nullptr));
    gst_object_ref_sink(a);
    if (!GST_EDGE_TENSOR_ALLOCATOR(a)->priv) {
        gst_object_unref(a);
        return nullptr;
    }
    priv_of(a)->kind = kind;
    return a;
}

extern "C" GstAllocator* gst_edge_tensor_allocator_get(void)
{
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        // The registry keeps the shared instance; gst_deinit() releases it.
        GstAllocator* a = gst_edge_tensor_allocator_new(GST_EDGE_TENSOR_MEMORY_AUTO);
        if (a)
            gst_allocator_register(GST_EDGE_TENSOR_ALLOCATOR_NAME, a);
        g_once_init_leave(&once, 1);
    }
    GstAllocator* found = gst_allocator_find(GST_EDGE_TENSOR_ALLOCATOR_NAME);
    if (found && !GST_IS_EDGE_TENSOR_ALLOCATOR(found)) {
        GST_ERROR("the allocator registered as \"" GST_EDGE_TENSOR_ALLOCATOR_NAME
                  "\" is a %s, not a GstEdgeTensorAllocator",
                  G_OBJECT_TYPE_NAME(found));
        gst_object_unref(found);
        return nullptr;
    }
    return found;
}

extern "C" GstAllocator* gst_edge_tensor_allocator_get_shm_allocator(GstAllocator* allocator)
{
    g_return_val_if_fail(GST_IS_EDGE_TENSOR_ALLOCATOR(allocator), nullptr);
    return GST_ALLOCATOR_CAST(gst_object_ref(priv_of(allocator)->shm));
}

// ---- memories ------------------------------------------------------------------------------

namespace edgetensor::gst
{

Result<GstMemory*> wrap_tensor(GstAllocator* allocator, const TensorDyn& tensor, size_t size,
                               TensorReleaseFunc on_release)
{
    if (!tensor.is_valid())
        return make_error(ErrorCode::InvalidArgument, "cannot wrap an empty tensor in a GstMemory");
    if (tensor.offset() != 0)
        return make_error(ErrorCode::NotSupported,
                          "the tensor's window starts " + std::to_string(tensor.offset()) +
                              " bytes into its buffer; wrap the whole allocation");
    if (size == 0 || size > tensor.capacity_bytes())
        return make_error(ErrorCode::InsufficientCapacity,
                          "a GstMemory of " + std::to_string(size) + " bytes does not fit a " +
                              std::to_string(tensor.capacity_bytes()) + "-byte tensor");

    GstObjectPtr<GstAllocator> owner;
    if (!allocator) {
        owner.reset(gst_edge_tensor_allocator_get());
    } else if (GST_IS_EDGE_TENSOR_ALLOCATOR(allocator)) {
        owner.reset(GST_ALLOCATOR_CAST(gst_object_ref(allocator)));
    } else if (GST_IS_EDGE_TENSOR_SHM_ALLOCATOR(allocator) &&
               tensor.memory() != TensorMemory::Dma) {
        owner.reset(GST_ALLOCATOR_CAST(gst_object_ref(allocator)));
    } else if (GST_IS_EDGE_TENSOR_SHM_ALLOCATOR(allocator) || is_ahb_allocator(allocator)) {
        owner.reset(gst_edge_tensor_allocator_get());
    } else {
        return make_error(ErrorCode::InvalidArgument, std::string("cannot wrap a tensor with a ") +
                                                          G_OBJECT_TYPE_NAME(allocator) +
                                                          "; use a GstEdgeTensorAllocator");
    }
    if (!owner)
        return make_error(ErrorCode::Unavailable, "the shared edgetensor allocator is missing");

    auto holder = std::make_unique<MemoryTensor>();
    holder->tensor = tensor;
    holder->on_release = std::move(on_release);

    GstMemory* mem = nullptr;
    if (AHardwareBuffer* hb = hardware_buffer_ptr(tensor)) {
        (void)hb;
        // No fd: the memory is the tensor's window, mapped by locking the buffer.
        GstAllocator* ahb = priv_of(owner.get())->ahb;
        if (!ahb)
            return make_error(ErrorCode::AllocationFailed, "the AHardwareBuffer allocator is "
                                                           "missing");
        mem = g_new0(GstMemory, 1);
        gst_memory_init(mem, GstMemoryFlags(0), ahb, nullptr, tensor.capacity_bytes(), 0, 0, size);
        gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), memory_tensor_quark(),
                                  holder.release(), memory_tensor_free);
        return mem;
    }
    switch (tensor.memory()) {
    case TensorMemory::Dma:
    case TensorMemory::Shm: {
        // Borrowed: the qdata set below keeps the tensor, and so its fd, alive until the memory
        // is freed (qdata is released before the memory's free function runs).
        const int fd = tensor.fd();
        if (fd < 0)
            return make_error(ErrorCode::InvalidArgument, "the tensor has no fd to wrap");
        GstAllocator* fd_alloc = owner.get();
        GstObjectPtr<GstAllocator> shm;
        if (tensor.memory() == TensorMemory::Shm && GST_IS_EDGE_TENSOR_ALLOCATOR(fd_alloc)) {
            shm.reset(gst_edge_tensor_allocator_get_shm_allocator(fd_alloc));
            fd_alloc = shm.get();
        }
        mem = gst_fd_allocator_alloc(fd_alloc, fd, size, GST_FD_MEMORY_FLAG_DONT_CLOSE);
        if (!mem)
            return make_error(ErrorCode::AllocationFailed, "gst_fd_allocator_alloc failed");
        break;
    }
    case TensorMemory::Mem: {
        auto map = tensor.map_raw(CpuAccess::ReadWrite);
        if (!map)
            return unexpected(std::move(map).error());
        uint8_t* data = map->bytes();
        const size_t maxsize = tensor.capacity_bytes();
        holder->map = std::move(*map);
        // The wrapped memory's notify owns the holder; qdata below only borrows the tensor.
        auto* raw = holder.release();
        mem = gst_memory_new_wrapped(GstMemoryFlags(0), data, maxsize, 0, size, raw,
                                     memory_tensor_free);
        if (!mem) {
            memory_tensor_free(raw);
            return make_error(ErrorCode::AllocationFailed, "gst_memory_new_wrapped failed");
        }
        gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), memory_tensor_quark(), raw, nullptr);
        return mem;
    }
    case TensorMemory::Pbo:
        return make_error(ErrorCode::NotSupported, "PBO tensors cannot be wrapped in a GstMemory");
    }
    gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(mem), memory_tensor_quark(), holder.release(),
                              memory_tensor_free);
    return mem;
}

std::optional<TensorDyn> tensor_from_memory(GstMemory* mem) noexcept
{
    // The copy shares the storage but copies the shape and strides.
    return guarded(nullptr, __func__, std::nullopt, [mem]() -> std::optional<TensorDyn> {
        if (const MemoryTensor* mt = peek_memory_tensor(mem))
            return mt->tensor;
        return std::nullopt;
    });
}

std::optional<TensorDyn> tensor_from_buffer(GstBuffer* buffer) noexcept
{
    if (!buffer || gst_buffer_n_memory(buffer) == 0)
        return std::nullopt;
    return tensor_from_memory(gst_buffer_peek_memory(buffer, 0));
}

} // namespace edgetensor::gst

extern "C" gboolean gst_is_edge_tensor_memory(GstMemory* mem)
{
    g_return_val_if_fail(mem != nullptr, FALSE);
    return peek_memory_tensor(mem) != nullptr;
}

extern "C" GstEdgeTensorMemoryKind gst_edge_tensor_memory_get_kind(GstMemory* mem)
{
    g_return_val_if_fail(mem != nullptr, GST_EDGE_TENSOR_MEMORY_AUTO);
    const MemoryTensor* mt = peek_memory_tensor(mem);
    return mt ? edgetensor::gst::memory_kind(mt->tensor.memory()) : GST_EDGE_TENSOR_MEMORY_AUTO;
}

extern "C" gint gst_edge_tensor_memory_get_fd(GstMemory* mem)
{
    g_return_val_if_fail(mem != nullptr, -1);
    return gst_is_fd_memory(mem) ? gst_fd_memory_get_fd(mem) : -1;
}

extern "C" gboolean gst_edge_tensor_memory_get_inode(GstMemory* mem, guint64* dev, guint64* ino)
{
    g_return_val_if_fail(mem != nullptr, FALSE);
    if (gst_edge_tensor_memory_get_fd(mem) < 0)
        return FALSE;
    const auto id = edgetensor::gst::memory_identity(mem);
    if (!id) {
        GST_WARNING("%s", id.error().message().c_str());
        return FALSE;
    }
    if (dev)
        *dev = id->dev;
    if (ino)
        *ino = id->ino;
    return TRUE;
}

extern "C" guint64 gst_edge_tensor_memory_get_identity(GstMemory* mem)
{
    g_return_val_if_fail(mem != nullptr, 0);
    const MemoryTensor* mt = peek_memory_tensor(mem);
    return mt ? mt->tensor.buffer_identity().id() : 0;
}

extern "C" gboolean gst_edge_tensor_memory_get_plane_layout(GstMemory* mem, guint plane,
                                                            gsize* offset, gint* stride)
{
    g_return_val_if_fail(mem != nullptr, FALSE);
    const MemoryTensor* mt = peek_memory_tensor(mem);
    if (!mt)
        return FALSE;
    const TensorDyn& t = mt->tensor;
    if (t.is_image()) {
        auto pl = t.plane_layout(plane);
        if (!pl)
            return FALSE;
        if (offset)
            *offset = pl->offset;
        if (stride)
            *stride = gint(pl->stride);
        return TRUE;
    }
    if (plane != 0 || t.strides().empty())
        return FALSE;
    if (offset)
        *offset = t.offset();
    if (stride)
        *stride = gint(t.strides().front());
    return TRUE;
}

extern "C" gpointer gst_edge_tensor_memory_get_hardware_buffer(GstMemory* mem)
{
    g_return_val_if_fail(mem != nullptr, nullptr);
    const MemoryTensor* mt = peek_memory_tensor(mem);
    return mt ? static_cast<gpointer>(edgetensor::hardware_buffer_ptr(mt->tensor)) : nullptr;
}

extern "C" const gchar* gst_edge_tensor_memory_get_compression(GstMemory* mem)
{
    g_return_val_if_fail(mem != nullptr, nullptr);
    const MemoryTensor* mt = peek_memory_tensor(mem);
    if (!mt)
        return nullptr;
    const auto scheme = mt->tensor.compression();
    // compression_scheme_name() views static strings: NUL-terminated.
    return scheme ? edgetensor::compression_scheme_name(*scheme).data() : nullptr;
}

extern "C" GstMemory* gst_edge_tensor_memory_import_hardware_buffer(GstAllocator* allocator,
                                                                    gpointer buffer)
{
    g_return_val_if_fail(allocator == nullptr || GST_IS_EDGE_TENSOR_ALLOCATOR(allocator), nullptr);
    g_return_val_if_fail(buffer != nullptr, nullptr);
    return edgetensor::gst::guarded(allocator, __func__, nullptr, [&]() -> GstMemory* {
        auto t = edgetensor::from_hardware_buffer(static_cast<AHardwareBuffer*>(buffer),
                                                  edgetensor::DType::U8, {1});
        if (t) {
            // The whole locked span, not the one byte the probe shape asked for.
            auto whole = t->set_logical_shape({t->capacity_bytes()});
            if (!whole)
                t = unexpected(std::move(whole).error());
        }
        if (!t) {
            GST_ERROR_OBJECT(allocator, "cannot import the AHardwareBuffer: %s",
                             t.error().message().c_str());
            return nullptr;
        }
        auto mem = edgetensor::gst::wrap_tensor(allocator, *t, t->capacity_bytes());
        if (!mem) {
            GST_ERROR_OBJECT(allocator, "cannot wrap the AHardwareBuffer: %s",
                             mem.error().message().c_str());
            return nullptr;
        }
        return *mem;
    });
}
