// SPDX-License-Identifier: MIT
//
// The GL backend: a GL context owner (EGL, OpenGL ES 3) on a thread of its own, tensors backed
// by GL pixel buffer objects (TensorMemory::Pbo), and the statistics of its EGLImage import
// cache. The converter's GL path (ConvertCompute::Gl in convert.hpp) runs on it.
//
// Threading: every GL call runs on the context's worker thread; the calls here post to it and
// wait. Handles are cheap to copy and may be used from any thread.
//
// Lifetime (the weak-sender rule): GlContext handles and the converters that use a context own
// its thread; PBO tensors do not. Once the last owner is gone the thread exits (after any CPU map
// of a PBO in progress ends) and the GL objects go with it; every later operation on a PBO
// tensor of that context fails with ErrorCode::Disconnected instead of hanging or crashing.
//
// Availability: libEGL is loaded at run time (never linked), so a host without EGL, without a
// GPU driver or without a display still runs everything else; create() then fails with
// ErrorCode::Unavailable and a message saying what is missing. Builds configured with -Dgl=disabled
// return NotSupported.

#pragma once

#include "edgetensor/error.hpp"
#include "edgetensor/pixel_format.hpp"
#include "edgetensor/tensor_dyn.hpp"
#include "edgetensor/types.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace edgetensor
{

namespace detail::gl
{
class Worker;
}

class Converter;

/// What a GL context runs on.
struct GlInfo {
    /// "surfaceless" (EGL_PLATFORM_SURFACELESS_MESA) or "device" (EGL_EXT_platform_device).
    std::string platform;
    /// The DRM node behind the display ("/dev/dri/renderD128"), empty when EGL names none.
    std::string device;
    std::string vendor;   ///< GL_VENDOR
    std::string renderer; ///< GL_RENDERER, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
    std::string version;  ///< GL_VERSION, e.g. "OpenGL ES 3.2 Mesa 22.3.6"
    /// A CPU rasteriser (llvmpipe, softpipe, swrast, SwiftShader): compute=auto keeps the CPU.
    bool software = false;
    /// EGL_EXT_image_dma_buf_import: DMA-BUF tensors are imported as EGLImages, not uploaded.
    bool dma_buf_import = false;
    /// EGL_EXT_image_dma_buf_import_modifiers: imports name the (linear) format modifier.
    bool dma_buf_import_modifiers = false;
    /// GL_OES_EGL_image_external_essl3: a YUV DMA-BUF can be imported as one EGLImage of its
    /// own DRM format and sampled as samplerExternalOES (the driver converts it to RGB).
    bool yuv_external = false;
    int max_texture_size = 0;
};

/// Counters of one converter's EGLImage import cache and of the copies it could not avoid.
struct GlImportStats {
    uint64_t hits = 0;      ///< imports found in the cache
    uint64_t misses = 0;    ///< EGLImages created
    uint64_t evictions = 0; ///< entries dropped to stay within the bound (least recently used)
    uint64_t swept = 0;     ///< entries dropped because every tensor sharing their identity died
    uint64_t entries = 0;   ///< entries held now
    /// Source planes copied into a texture (host memory, PBOs, and DMA-BUFs that could not be
    /// imported). Every upload is counted, none is silent.
    uint64_t uploads = 0;
    /// DMA-BUF planes (source or destination) that could have been zero-copy but were not: the
    /// display lacks EGL_EXT_image_dma_buf_import, or the driver refused the import.
    uint64_t zero_copy_declines = 0;
    /// Destinations written by reading the rendered pixels back (glReadPixels) into host memory
    /// or into a PBO rather than rendering into an imported DMA-BUF.
    uint64_t readbacks = 0;
    /// YUV sources imported directly: ONE EGLImage of the frame's DRM format with all its
    /// planes and the colour-space/range hints, converted to RGB by the driver, that passed
    /// the pixel check against the CPU engine's conversion.
    uint64_t direct_imports = 0;
    /// Direct YUV imports the driver refused or whose pixels disagreed with the CPU engine's
    /// beyond its tolerances; the converter then imports (or uploads) the planes as byte grids
    /// and converts them itself, for the rest of its life. Each is logged as a warning.
    uint64_t direct_declines = 0;
};

/// One DRM format whose DMA-BUFs the GL converter imports directly (ONE EGLImage of all its
/// planes, sampled as samplerExternalOES), with the format modifiers it imports them with.
struct GlDmaBufFormat {
    uint32_t fourcc = 0; ///< DRM FourCC: 'NV12', 'YU12' (I420), 'YUYV' (YUY2), ...
    /// DRM_FORMAT_MOD_LINEAR (0) first when the driver offers it (or lists no modifier at
    /// all), then the tiled or compressed ones in the driver's order.
    std::vector<uint64_t> modifiers;
};

/// What the GL converter can import directly on one EGL display: the YUV formats the driver
/// lists (eglQueryDmaBufFormatsEXT) with every modifier eglQueryDmaBufModifiersEXT lists for
/// them, external-only ones included (the direct import samples GL_TEXTURE_EXTERNAL_OES).
/// Tiled modifiers are left out where direct imports are off whatever the frame
/// (EDGETENSOR_GL_DIRECT=0, a software renderer, no GL_OES_EGL_image_external_essl3): a tiled
/// frame cannot be read any other way. Linear frames are read everywhere (imported as byte
/// grids or uploaded), listed or not.
struct GlDmaBufFormats {
    /// The display answered the queries (EGL_EXT_image_dma_buf_import_modifiers), or
    /// EDGETENSOR_GL_DMABUF_MODIFIERS replaced its answer. False: `formats` is empty.
    bool queried = false;
    /// Why nothing (or nothing tiled) is listed; empty when every listed modifier is.
    std::string note;
    std::vector<GlDmaBufFormat> formats;

    /// Whether `modifier` of DRM format `fourcc` is listed.
    bool lists(uint32_t fourcc, uint64_t modifier) const noexcept;
};

/// "NV12" (linear), "NV12:0x0100000000000001": a DRM format as GStreamer's drm-format spells it.
std::string drm_format_string(uint32_t fourcc, uint64_t modifier);

/// A handle on a GL context owner. Copies share the context.
class GlContext
{
public:
    /// An empty handle; is_valid() is false.
    GlContext() = default;

    /// Starts a context of its own (its own worker thread and EGL context). Display choice:
    /// EDGETENSOR_GL_DEVICE=/dev/dri/renderD* names a DRM render node (EGL device platform);
    /// otherwise an EGL device with a render node is preferred when one initialises, then
    /// EGL_PLATFORM_SURFACELESS_MESA. Errors: Unavailable (no libEGL, no display, no OpenGL ES
    /// 3.0 context: the message says which), NotSupported (built without GL).
    static Result<GlContext> create();
    /// The process's shared context, started on first use and kept while any handle, converter
    /// or PBO map uses it. Converters with ConvertCompute::Gl run on it, so PBO destinations
    /// for them come from here.
    static Result<GlContext> shared();
    /// Whether a context can be created on this host. Probed once per process (starting and
    /// stopping a context); the error is what create() would say.
    static Result<GlInfo> probe();
    /// dma_buf_formats() of the shared context's display, for callers that ask often (a caps
    /// query each) and hold no context: the first call per process starts the shared context
    /// to ask, later ones answer without one. EDGETENSOR_GL_DMABUF_MODIFIERS replaces the answer
    /// as for dma_buf_formats(). Where no context can be made (probe()): nothing listed, the
    /// note says why.
    static GlDmaBufFormats shared_dma_buf_formats();

    bool is_valid() const noexcept { return worker_ != nullptr; }
    /// Requires is_valid().
    const GlInfo& info() const noexcept;

    /// A tensor in a new pixel buffer object of this context (zero-filled). Maps run
    /// glMapBufferRange on the context's thread; views and batches share the PBO and the
    /// BufferIdentity. Errors: InvalidShape, AllocationFailed (GL_OUT_OF_MEMORY), Disconnected.
    Result<TensorDyn> create_pbo(DType dtype, const Shape& shape, std::string_view name = {}) const;
    /// An image in a new PBO, with the tight (host) row pitch of its layout (semi-planar:
    /// 64-byte aligned, as on every backend).
    Result<TensorDyn> create_pbo_image(size_t width, size_t height, PixelFormat format, DType dtype,
                                       CpuAccess access, std::string_view name = {}) const;

    /// True when `tensor` lives in a PBO of this context.
    bool owns(const TensorDyn& tensor) const noexcept;

    /// The DMA-BUF formats and modifiers the GL converter imports directly on this context's
    /// display (GlDmaBufFormats), queried on its thread once per display and process.
    /// EDGETENSOR_GL_DMABUF_MODIFIERS="NV12:0x0,0x0100000000000001;YUYV:0x0" replaces the
    /// driver's answer (tests, diagnostics). Requires is_valid().
    GlDmaBufFormats dma_buf_formats() const;

private:
    friend struct GlContextAccess;
    explicit GlContext(std::shared_ptr<detail::gl::Worker> worker) noexcept
        : worker_(std::move(worker))
    {
    }
    std::shared_ptr<detail::gl::Worker> worker_;
};

/// True when this build has the GL backend (meson option gl).
bool gl_built() noexcept;

/// Says that the DMA-BUF sources `conv` will run on are laid out by DRM format modifier
/// `modifier` (a stream's negotiated drm-format). Linear (0) is the default and changes nothing.
/// Any other: every frame is imported directly, one EGLImage with the modifier named on every
/// plane, and never read as byte grids or through the CPU (which would read tiles as rows); its
/// pixels are not checked against the CPU engine (the CPU cannot read them). Errors, naming the
/// drm-format: InvalidArgument (`conv` runs on the CPU), NotSupported (an RGB source, a modifier
/// GlContext::dma_buf_formats() does not list for the source's format, or direct imports off for
/// this conversion: the reason). A frame that then is no DMA-BUF, or that the driver refuses,
/// fails its run() naming the drm-format.
Result<void> gl_set_source_modifier(Converter& conv, uint64_t modifier);

} // namespace edgetensor
