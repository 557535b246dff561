// SPDX-License-Identifier: MIT
//
// Library initialisation, debug categories, the core-log bridge, enum types and the mappings
// between GStreamer and edgetensor vocabularies (memory kinds, pixel formats, colorimetry).

#include "enum_type.hpp"
#include "internal.hpp"

#include <edgetensor/log.hpp>

#include <cstdlib>
#include <cstring>

GST_DEBUG_CATEGORY(gst_edge_tensor_allocator_debug);
EDGETENSOR_GST_INTERNAL GST_DEBUG_CATEGORY(gst_edge_tensor_pool_debug);
GST_DEBUG_CATEGORY(gst_edge_tensor_meta_debug);
GST_DEBUG_CATEGORY(gst_edge_tensor_core_debug);

namespace
{

edgetensor::LogLevel core_level(GstDebugLevel level) noexcept
{
    if (level <= GST_LEVEL_NONE)
        return edgetensor::LogLevel::None;
    if (level == GST_LEVEL_ERROR)
        return edgetensor::LogLevel::Error;
    if (level == GST_LEVEL_WARNING)
        return edgetensor::LogLevel::Warning;
    if (level <= GST_LEVEL_INFO)
        return edgetensor::LogLevel::Info;
    if (level == GST_LEVEL_DEBUG)
        return edgetensor::LogLevel::Debug;
    return edgetensor::LogLevel::Trace;
}

void forward_core_log(edgetensor::LogLevel level, const char* category, const char* message, void*)
{
#ifndef GST_DISABLE_GST_DEBUG
    GST_CAT_LEVEL_LOG(gst_edge_tensor_core_debug, edgetensor::gst::gst_debug_level(level), nullptr,
                      "[%s] %s", category ? category : "?", message ? message : "");
#else
    (void)level;
    (void)category;
    (void)message;
#endif
}

} // namespace

extern "C" void gst_edge_tensor_init(void)
{
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        GST_DEBUG_CATEGORY_INIT(gst_edge_tensor_allocator_debug, "edgetensorallocator", 0,
                                "edgetensor GstMemory allocator");
        GST_DEBUG_CATEGORY_INIT(gst_edge_tensor_pool_debug, "edgetensorpool", 0,
                                "edgetensor buffer pool");
        GST_DEBUG_CATEGORY_INIT(gst_edge_tensor_meta_debug, "edgetensormeta", 0,
                                "edgetensor tensor meta");
        GST_DEBUG_CATEGORY_INIT(gst_edge_tensor_core_debug, "edgetensorcore", 0,
                                "messages of the edgetensor core library");
        // The core's own filter runs before any formatting. EDGETENSOR_DEBUG, when set, keeps
        // control of it; otherwise GST_DEBUG's threshold for "edgetensorcore" decides.
        if (!std::getenv("EDGETENSOR_DEBUG"))
            edgetensor::set_log_level(
                core_level(gst_debug_category_get_threshold(gst_edge_tensor_core_debug)));
        edgetensor::set_log_handler(forward_core_log, nullptr);
        g_once_init_leave(&once, 1);
        // Registered now, not at their first use: GStreamer 1.24+ rebuilds a serialized meta
        // (unixfdsrc) only when this process has registered it, and a receiving process may
        // never have made one itself.
        gst_edge_tensor_meta_get_info();
        gst_edge_tensor_batch_meta_get_info();
    }
}

extern "C" GType gst_edge_tensor_memory_kind_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_EDGE_TENSOR_MEMORY_AUTO, "DMA-BUF when available, else shared memory, else heap",
         "auto"},
        {GST_EDGE_TENSOR_MEMORY_DMA, "Linux DMA-BUF", "dma"},
        {GST_EDGE_TENSOR_MEMORY_SHM, "Shared memory (memfd), fd-backed, not a DMA-BUF", "shm"},
        {GST_EDGE_TENSOR_MEMORY_SYSTEM, "Process heap (no fd)", "system"},
        {0, nullptr, nullptr},
    };
    return edgetensor::gst::enum_type(&type, "GstEdgeTensorMemoryKind", values);
}

extern "C" GType gst_edge_tensor_cpu_access_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_EDGE_TENSOR_CPU_ACCESS_NONE, "The CPU never touches the bytes", "none"},
        {GST_EDGE_TENSOR_CPU_ACCESS_READ, "The CPU reads", "read"},
        {GST_EDGE_TENSOR_CPU_ACCESS_WRITE, "The CPU writes", "write"},
        {GST_EDGE_TENSOR_CPU_ACCESS_READ_WRITE, "The CPU reads and writes", "read-write"},
        {0, nullptr, nullptr},
    };
    return edgetensor::gst::enum_type(&type, "GstEdgeTensorCpuAccess", values);
}

namespace edgetensor::gst
{

GstDebugLevel gst_debug_level(LogLevel level) noexcept
{
    switch (level) {
    case LogLevel::Error:
        return GST_LEVEL_ERROR;
    case LogLevel::Warning:
        return GST_LEVEL_WARNING;
    case LogLevel::Info:
        return GST_LEVEL_INFO;
    case LogLevel::Debug:
        return GST_LEVEL_DEBUG;
    case LogLevel::Trace:
        return GST_LEVEL_LOG;
    case LogLevel::None:
        break;
    }
    return GST_LEVEL_NONE;
}

GstEdgeTensorMemoryKind memory_kind(TensorMemory m) noexcept
{
    switch (m) {
    case TensorMemory::Dma:
        return GST_EDGE_TENSOR_MEMORY_DMA;
    case TensorMemory::Shm:
        return GST_EDGE_TENSOR_MEMORY_SHM;
    case TensorMemory::Mem:
    case TensorMemory::Pbo:
        break;
    }
    return GST_EDGE_TENSOR_MEMORY_SYSTEM;
}

std::optional<TensorMemory> core_memory(GstEdgeTensorMemoryKind kind) noexcept
{
    switch (kind) {
    case GST_EDGE_TENSOR_MEMORY_DMA:
        return TensorMemory::Dma;
    case GST_EDGE_TENSOR_MEMORY_SHM:
        return TensorMemory::Shm;
    case GST_EDGE_TENSOR_MEMORY_SYSTEM:
        return TensorMemory::Mem;
    case GST_EDGE_TENSOR_MEMORY_AUTO:
        break;
    }
    return std::nullopt;
}

const char* memory_kind_name(GstEdgeTensorMemoryKind kind) noexcept
{
    switch (kind) {
    case GST_EDGE_TENSOR_MEMORY_AUTO:
        return "auto";
    case GST_EDGE_TENSOR_MEMORY_DMA:
        return "dma";
    case GST_EDGE_TENSOR_MEMORY_SHM:
        return "shm";
    case GST_EDGE_TENSOR_MEMORY_SYSTEM:
        return "system";
    }
    return "invalid";
}

namespace
{
bool force_mem() noexcept
{
    const char* v = std::getenv("EDGETENSOR_FORCE_MEM");
    return v && std::strcmp(v, "1") == 0;
}
} // namespace

GstEdgeTensorMemoryKind resolve_memory_kind(GstEdgeTensorMemoryKind kind) noexcept
{
    if (kind != GST_EDGE_TENSOR_MEMORY_AUTO)
        return kind;
    if (force_mem())
        return GST_EDGE_TENSOR_MEMORY_SYSTEM;
    if (is_dma_available())
        return GST_EDGE_TENSOR_MEMORY_DMA;
    if (is_shm_available())
        return GST_EDGE_TENSOR_MEMORY_SHM;
    return GST_EDGE_TENSOR_MEMORY_SYSTEM;
}

Result<TensorDyn> allocate_bytes(GstEdgeTensorMemoryKind kind, size_t bytes, const char* name,
                                 GstObject* log_object)
{
    if (bytes == 0)
        return make_error(ErrorCode::InvalidShape, "cannot allocate a tensor of 0 bytes");
    const Shape shape{bytes};
    if (kind != GST_EDGE_TENSOR_MEMORY_AUTO)
        return TensorDyn::create(DType::U8, shape, core_memory(kind), name ? name : "");

    const GstEdgeTensorMemoryKind first = resolve_memory_kind(kind);
    std::string why;
    for (GstEdgeTensorMemoryKind k :
         {GST_EDGE_TENSOR_MEMORY_DMA, GST_EDGE_TENSOR_MEMORY_SHM, GST_EDGE_TENSOR_MEMORY_SYSTEM}) {
        if (k < first)
            continue;
        auto t = TensorDyn::create(DType::U8, shape, core_memory(k), name ? name : "");
        if (t) {
            if (k != GST_EDGE_TENSOR_MEMORY_DMA)
                GST_CAT_DEBUG_OBJECT(gst_edge_tensor_allocator_debug, log_object,
                                     "%zu bytes in %s memory, not DMA-BUF%s%s", bytes,
                                     memory_kind_name(k), why.empty() ? "" : ": ", why.c_str());
            return t;
        }
        why += std::string(memory_kind_name(k)) + " failed (" + t.error().message() + ") ";
    }
    return make_error(ErrorCode::AllocationFailed,
                      "no memory kind could hold " + std::to_string(bytes) + " bytes: " + why);
}

PixelFormat pixel_format_from_gst(GstVideoFormat format) noexcept
{
    switch (format) {
    case GST_VIDEO_FORMAT_RGB:
        return PixelFormat::Rgb;
    case GST_VIDEO_FORMAT_RGBA:
        return PixelFormat::Rgba;
    case GST_VIDEO_FORMAT_BGRA:
        return PixelFormat::Bgra;
    case GST_VIDEO_FORMAT_GRAY8:
        return PixelFormat::Grey;
    case GST_VIDEO_FORMAT_YUY2:
        return PixelFormat::Yuyv;
    case GST_VIDEO_FORMAT_VYUY:
        return PixelFormat::Vyuy;
    case GST_VIDEO_FORMAT_NV12:
        return PixelFormat::Nv12;
    case GST_VIDEO_FORMAT_NV16:
        return PixelFormat::Nv16;
    case GST_VIDEO_FORMAT_RGBP:
        return PixelFormat::PlanarRgb;
    case GST_VIDEO_FORMAT_NV24:
        return PixelFormat::Nv24;
    default:
        break;
    }
    return PixelFormat::None;
}

namespace
{
constexpr uint32_t fourcc(char a, char b, char c, char d)
{
    return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 |
           uint32_t(uint8_t(d)) << 24;
}
} // namespace

uint32_t drm_fourcc_from_gst(GstVideoFormat format) noexcept
{
    // DRM names packed formats by a little-endian word: GStreamer's byte order reversed.
    switch (format) {
    case GST_VIDEO_FORMAT_RGB:
        return fourcc('B', 'G', '2', '4'); // DRM_FORMAT_BGR888
    case GST_VIDEO_FORMAT_BGR:
        return fourcc('R', 'G', '2', '4'); // DRM_FORMAT_RGB888
    case GST_VIDEO_FORMAT_RGBA:
        return fourcc('A', 'B', '2', '4'); // DRM_FORMAT_ABGR8888
    case GST_VIDEO_FORMAT_BGRA:
        return fourcc('A', 'R', '2', '4'); // DRM_FORMAT_ARGB8888
    case GST_VIDEO_FORMAT_RGBx:
        return fourcc('X', 'B', '2', '4'); // DRM_FORMAT_XBGR8888
    case GST_VIDEO_FORMAT_BGRx:
        return fourcc('X', 'R', '2', '4'); // DRM_FORMAT_XRGB8888
    case GST_VIDEO_FORMAT_GRAY8:
        return fourcc('R', '8', ' ', ' ');
    case GST_VIDEO_FORMAT_YUY2:
        return fourcc('Y', 'U', 'Y', 'V');
    case GST_VIDEO_FORMAT_UYVY:
        return fourcc('U', 'Y', 'V', 'Y');
    case GST_VIDEO_FORMAT_VYUY:
        return fourcc('V', 'Y', 'U', 'Y');
    case GST_VIDEO_FORMAT_NV12:
        return fourcc('N', 'V', '1', '2');
    case GST_VIDEO_FORMAT_NV21:
        return fourcc('N', 'V', '2', '1');
    case GST_VIDEO_FORMAT_NV16:
        return fourcc('N', 'V', '1', '6');
    case GST_VIDEO_FORMAT_NV24:
        return fourcc('N', 'V', '2', '4');
    case GST_VIDEO_FORMAT_I420:
        return fourcc('Y', 'U', '1', '2');
    case GST_VIDEO_FORMAT_YV12:
        return fourcc('Y', 'V', '1', '2');
    default:
        break;
    }
    return 0;
}

Colorimetry colorimetry_from_gst(const GstVideoColorimetry& c) noexcept
{
    Colorimetry out;
    switch (c.range) {
    case GST_VIDEO_COLOR_RANGE_0_255:
        out.range = ColorRange::Full;
        break;
    case GST_VIDEO_COLOR_RANGE_16_235:
        out.range = ColorRange::Limited;
        break;
    default:
        break;
    }
    switch (c.matrix) {
    case GST_VIDEO_COLOR_MATRIX_BT601:
        out.encoding = ColorEncoding::Bt601;
        break;
    case GST_VIDEO_COLOR_MATRIX_BT709:
        out.encoding = ColorEncoding::Bt709;
        break;
    case GST_VIDEO_COLOR_MATRIX_BT2020:
        out.encoding = ColorEncoding::Bt2020;
        break;
    default: // RGB (no YUV matrix), FCC, SMPTE 240M, unknown
        break;
    }
    switch (c.transfer) {
    // BT.601 and the BT.2020 10/12-bit transfers are the BT.709 curve (GStreamer itself treats
    // them as equivalent); colorimetry_to_gst() picks the GStreamer name back from the space.
    case GST_VIDEO_TRANSFER_BT709:
    case GST_VIDEO_TRANSFER_BT601:
    case GST_VIDEO_TRANSFER_BT2020_10:
    case GST_VIDEO_TRANSFER_BT2020_12:
        out.transfer = ColorTransfer::Bt709;
        break;
    case GST_VIDEO_TRANSFER_SRGB:
        out.transfer = ColorTransfer::Srgb;
        break;
    case GST_VIDEO_TRANSFER_SMPTE2084:
        out.transfer = ColorTransfer::Pq;
        break;
    case GST_VIDEO_TRANSFER_ARIB_STD_B67:
        out.transfer = ColorTransfer::Hlg;
        break;
    case GST_VIDEO_TRANSFER_GAMMA10:
        out.transfer = ColorTransfer::Linear;
        break;
    default:
        break;
    }
    switch (c.primaries) {
    case GST_VIDEO_COLOR_PRIMARIES_BT709:
        // sRGB shares BT.709's primaries; the sRGB curve tells the two spaces apart.
        out.space = c.transfer == GST_VIDEO_TRANSFER_SRGB ? ColorSpace::Srgb : ColorSpace::Bt709;
        break;
    case GST_VIDEO_COLOR_PRIMARIES_BT2020:
        out.space = ColorSpace::Bt2020;
        break;
    case GST_VIDEO_COLOR_PRIMARIES_SMPTE170M:
        out.space = ColorSpace::Smpte170m;
        break;
    default:
        break;
    }
    return out;
}

GstVideoColorimetry colorimetry_to_gst(const Colorimetry& c, GstVideoFormat format) noexcept
{
    const GstVideoFormatInfo* finfo =
        format != GST_VIDEO_FORMAT_UNKNOWN ? gst_video_format_get_info(format) : nullptr;
    GstVideoColorimetry out{};
    out.range = c.range == ColorRange::Full      ? GST_VIDEO_COLOR_RANGE_0_255
                : c.range == ColorRange::Limited ? GST_VIDEO_COLOR_RANGE_16_235
                                                 : GST_VIDEO_COLOR_RANGE_UNKNOWN;
    switch (c.encoding) {
    case ColorEncoding::Bt601:
        out.matrix = GST_VIDEO_COLOR_MATRIX_BT601;
        break;
    case ColorEncoding::Bt709:
        out.matrix = GST_VIDEO_COLOR_MATRIX_BT709;
        break;
    case ColorEncoding::Bt2020:
        out.matrix = GST_VIDEO_COLOR_MATRIX_BT2020;
        break;
    case ColorEncoding::Unspecified:
        // RGB formats carry no YUV matrix; GStreamer spells that "rgb".
        out.matrix = finfo && GST_VIDEO_FORMAT_INFO_IS_RGB(finfo) ? GST_VIDEO_COLOR_MATRIX_RGB
                                                                  : GST_VIDEO_COLOR_MATRIX_UNKNOWN;
        break;
    }
    switch (c.space) {
    case ColorSpace::Bt709:
    case ColorSpace::Srgb:
        out.primaries = GST_VIDEO_COLOR_PRIMARIES_BT709;
        break;
    case ColorSpace::Bt2020:
        out.primaries = GST_VIDEO_COLOR_PRIMARIES_BT2020;
        break;
    case ColorSpace::Smpte170m:
        out.primaries = GST_VIDEO_COLOR_PRIMARIES_SMPTE170M;
        break;
    case ColorSpace::Unspecified:
        out.primaries = GST_VIDEO_COLOR_PRIMARIES_UNKNOWN;
        break;
    }
    switch (c.transfer) {
    case ColorTransfer::Bt709:
        if (c.space == ColorSpace::Smpte170m)
            out.transfer = GST_VIDEO_TRANSFER_BT601;
        else if (c.space == ColorSpace::Bt2020)
            out.transfer = finfo && GST_VIDEO_FORMAT_INFO_DEPTH(finfo, 0) == 10
                               ? GST_VIDEO_TRANSFER_BT2020_10
                               : GST_VIDEO_TRANSFER_BT2020_12;
        else
            out.transfer = GST_VIDEO_TRANSFER_BT709;
        break;
    case ColorTransfer::Srgb:
        out.transfer = GST_VIDEO_TRANSFER_SRGB;
        break;
    case ColorTransfer::Pq:
        out.transfer = GST_VIDEO_TRANSFER_SMPTE2084;
        break;
    case ColorTransfer::Hlg:
        out.transfer = GST_VIDEO_TRANSFER_ARIB_STD_B67;
        break;
    case ColorTransfer::Linear:
        out.transfer = GST_VIDEO_TRANSFER_GAMMA10;
        break;
    case ColorTransfer::Unspecified:
        out.transfer = GST_VIDEO_TRANSFER_UNKNOWN;
        break;
    }
    return out;
}

} // namespace edgetensor::gst

extern "C" guint32 gst_edge_tensor_colorimetry_from_gst(const GstVideoColorimetry* cinfo)
{
    g_return_val_if_fail(cinfo != nullptr, 0);
    return edgetensor::gst::colorimetry_from_gst(*cinfo).pack();
}

extern "C" gboolean gst_edge_tensor_colorimetry_to_gst(guint32 packed, GstVideoFormat format,
                                                       GstVideoColorimetry* cinfo)
{
    g_return_val_if_fail(cinfo != nullptr, FALSE);
    edgetensor::Colorimetry c;
    if (!edgetensor::Colorimetry::unpack(packed, &c))
        return FALSE;
    *cinfo = edgetensor::gst::colorimetry_to_gst(c, format);
    return TRUE;
}
