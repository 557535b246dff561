// SPDX-License-Identifier: MIT
//
// The EGLImage import cache of one GL converter. A DMA-BUF plane is imported once (an EGLImage
// bound to a texture, plus a framebuffer when it is rendered into) and found again by
//   (BufferIdentity id, plane offset, width, height, row stride, DRM format)
// where the geometry is that of the imported "grid": the buffer seen as rows of `row stride`
// bytes from `plane offset`, `width` texels of the DRM format wide. Views of one tensor, and the
// planes of a one-buffer NV12 frame, lie in the same grid and share one import; reconfiguring a
// pooled tensor to another geometry re-keys it (a new import, never the old frame's image).
//
// Bounded LRU; an entry is swept once every tensor sharing its identity has died (the identity's
// weak liveness handle), so a freed buffer is not kept imported. An import the driver refuses,
// or one whose pixels do not match the buffer's bytes (system-heap DMA-BUFs on software Mesa
// import "successfully" and read zeros), is remembered as declined so the converter uploads
// that buffer instead, counting it. GL-thread only.
//
// The cache's policy (keys, LRU, sweep, declines, stats) is separate from the EGL calls
// (EglImporter), so its unit tests run on any host with a fake importer.

#pragma once

#include "gl/egl_import.hpp"
#include "gl/gl_api.hpp"

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>

namespace edgetensor::detail::gl
{

class Worker;

/// ImportKey::buffer of a direct YUV import: every plane of the frame in one EGLImage.
inline constexpr uint32_t kDirectBuffer = 2;

struct ImportKey {
    uint64_t identity = 0;
    /// Which buffer of the tensor: 0 for plane 0's, 1 for a two-buffer image's chroma buffer
    /// (from_planes: both planes share the identity but not the buffer), kDirectBuffer for a
    /// direct YUV import of the whole frame (width x height pixels of its DRM format).
    uint32_t buffer = 0;
    uint64_t offset = 0;
    uint32_t width = 0;
    uint32_t height = 0;
    uint32_t stride = 0;
    uint32_t fourcc = 0;
    /// Direct imports: the chroma planes' offsets and pitches folded together (a from_planes
    /// frame's chroma buffer can move while plane 0 stays); 0 for grids.
    uint64_t chroma = 0;

    friend bool operator==(const ImportKey&, const ImportKey&) = default;
};

struct ImportRequest {
    ImportKey key;
    std::weak_ptr<const void> alive; ///< the tensor identity's liveness handle
    DmaBufImage image;               ///< what to import (fds borrowed)
    bool render_target = false;      ///< also needs a complete framebuffer
    /// A direct YUV import: bound as GL_TEXTURE_EXTERNAL_OES (samplerExternalOES), no
    /// framebuffer; verify() samples it.
    bool external = false;
    /// Checks the imported image against the buffer's bytes (a readback or a write probe);
    /// returns an empty string when they agree, else what differed. Run once, at import.
    std::function<std::string(GLuint tex, GLuint fbo)> verify;
};

struct ImportedImage {
    EGLImageKHR image = EGL_NO_IMAGE_KHR;
    GLuint texture = 0;
    GLuint framebuffer = 0; ///< 0 unless the image is a complete framebuffer
};

struct ImportCacheStats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t evictions = 0;
    uint64_t swept = 0;
    uint64_t entries = 0;
};

/// Makes and destroys imports; the cache decides when.
class Importer
{
public:
    virtual ~Importer() = default;
    /// Imports `req` into `out` (and verifies it); NotSupported with the reason when the driver
    /// refuses it or it does not show the buffer's bytes. `out` is destroyed on failure too.
    virtual Result<void> create(const ImportRequest& req, ImportedImage& out) = 0;
    virtual void destroy(ImportedImage& img) noexcept = 0;
};

/// The EGL_EXT_image_dma_buf_import importer of a GL context (GL-thread only).
class EglImporter final : public Importer
{
public:
    explicit EglImporter(const Worker& worker) : worker_(worker) {}
    Result<void> create(const ImportRequest& req, ImportedImage& out) override;
    void destroy(ImportedImage& img) noexcept override;

private:
    const Worker& worker_;
};

class ImportCache
{
public:
    ImportCache(Importer& importer, size_t capacity) : importer_(importer), capacity_(capacity) {}
    ~ImportCache() { clear(); }
    ImportCache(const ImportCache&) = delete;
    ImportCache& operator=(const ImportCache&) = delete;

    /// The import for `req`, from the cache or new. An error (NotSupported) says why the buffer
    /// cannot be imported; the caller then uploads it. Sweeps dead entries first.
    Result<ImportedImage> acquire(const ImportRequest& req);
    /// Drops the entries whose tensors have all died.
    void sweep();
    /// Destroys every entry.
    void clear();
    const ImportCacheStats& stats() const noexcept { return stats_; }

private:
    struct Entry {
        ImportKey key;
        std::weak_ptr<const void> alive;
        ImportedImage img;
        std::string declined; ///< non-empty: the import failed or read wrong, for this reason
    };

    Importer& importer_;
    size_t capacity_;
    std::list<Entry> lru_; // most recently used first
    ImportCacheStats stats_;
};

/// "identity 7 buffer 0 offset 0 1920x1620 stride 1920 R8" for messages.
std::string import_key_string(const ImportKey& k);

} // namespace edgetensor::detail::gl
