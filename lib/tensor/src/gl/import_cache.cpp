// SPDX-License-Identifier: MIT

#include "gl/import_cache.hpp"

#include "gl/gl_worker.hpp"
#include "log.hpp"

#include <vector>

namespace edgetensor::detail::gl
{
namespace
{
constexpr const char* kCat = "gl";
constexpr uint64_t kDrmFormatModLinear = 0;

} // namespace

std::string import_key_string(const ImportKey& k)
{
    char b[160];
    std::snprintf(b, sizeof b, "identity %llu buffer %u offset %llu %ux%u stride %u %c%c%c%c",
                  static_cast<unsigned long long>(k.identity), k.buffer,
                  static_cast<unsigned long long>(k.offset), k.width, k.height, k.stride,
                  char(k.fourcc & 0xff), char((k.fourcc >> 8) & 0xff),
                  char((k.fourcc >> 16) & 0xff), char((k.fourcc >> 24) & 0xff));
    return b;
}

namespace
{

/// True when the display lists `modifier` for `fourcc` (or lists none, as drivers that only
/// do linear may).
bool modifier_offered(const Worker& w, uint32_t fourcc, uint64_t modifier)
{
    const Api& a = w.gl();
    EGLint n = 0;
    if (!a.eglQueryDmaBufModifiersEXT(w.display(), EGLint(fourcc), 0, nullptr, nullptr, &n))
        return false;
    if (n == 0)
        return true;
    std::vector<EGLuint64KHR> mods(static_cast<size_t>(n));
    std::vector<EGLBoolean> external(static_cast<size_t>(n));
    if (!a.eglQueryDmaBufModifiersEXT(w.display(), EGLint(fourcc), n, mods.data(), external.data(),
                                      &n))
        return false;
    for (EGLint i = 0; i < n; ++i)
        if (mods[size_t(i)] == modifier && !external[size_t(i)])
            return true;
    return false;
}

} // namespace

void EglImporter::destroy(ImportedImage& img) noexcept
{
    const Api& a = worker_.gl();
    if (img.framebuffer)
        a.glDeleteFramebuffers(1, &img.framebuffer);
    if (img.texture)
        a.glDeleteTextures(1, &img.texture);
    if (img.image != EGL_NO_IMAGE_KHR)
        a.eglDestroyImageKHR(worker_.display(), img.image);
    img = {};
}

void ImportCache::sweep()
{
    for (auto it = lru_.begin(); it != lru_.end();) {
        if (it->alive.expired()) {
            ET_LOG_TRACE(kCat, "import cache: sweeping %s (its tensors are gone)",
                         import_key_string(it->key).c_str());
            importer_.destroy(it->img);
            it = lru_.erase(it);
            ++stats_.swept;
        } else {
            ++it;
        }
    }
    stats_.entries = lru_.size();
}

void ImportCache::clear()
{
    for (auto& e : lru_)
        importer_.destroy(e.img);
    lru_.clear();
    stats_.entries = 0;
}

Result<void> EglImporter::create(const ImportRequest& req, ImportedImage& e)
{
    const Api& a = worker_.gl();
    const GlInfo& info = worker_.info();
    const ImportKey& k = req.key;
    std::vector<EGLint> attrs = {EGL_WIDTH,
                                 EGLint(k.width),
                                 EGL_HEIGHT,
                                 EGLint(k.height),
                                 EGL_LINUX_DRM_FOURCC_EXT,
                                 EGLint(k.fourcc),
                                 EGL_DMA_BUF_PLANE0_FD_EXT,
                                 req.fd,
                                 EGL_DMA_BUF_PLANE0_OFFSET_EXT,
                                 EGLint(k.offset),
                                 EGL_DMA_BUF_PLANE0_PITCH_EXT,
                                 EGLint(k.stride)};
    // Our buffers are linear; say so where the display takes modifiers, so a driver that would
    // otherwise assume its own tiling does not.
    if (info.dma_buf_import_modifiers && modifier_offered(worker_, k.fourcc, kDrmFormatModLinear)) {
        attrs.insert(attrs.end(),
                     {EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT, EGLint(kDrmFormatModLinear & 0xffffffffu),
                      EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT, EGLint(kDrmFormatModLinear >> 32)});
    }
    attrs.push_back(EGL_NONE);
    e = {};
    e.image = a.eglCreateImageKHR(worker_.display(), EGL_NO_CONTEXT, EGL_LINUX_DMA_BUF_EXT, nullptr,
                                  attrs.data());
    if (e.image == EGL_NO_IMAGE_KHR)
        return make_error(ErrorCode::NotSupported,
                          "eglCreateImage(EGL_LINUX_DMA_BUF_EXT) refused " + import_key_string(k) +
                              " (" + egl_error_name(a.eglGetError()) + ")");
    a.glGenTextures(1, &e.texture);
    a.glBindTexture(GL_TEXTURE_2D, e.texture);
    a.glEGLImageTargetTexture2DOES(GL_TEXTURE_2D, e.image);
    a.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    a.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    GLenum err = worker_.take_gl_error();
    if (err != GL_NO_ERROR)
        return make_error(ErrorCode::NotSupported,
                          "binding the EGLImage of " + import_key_string(k) +
                              " to a texture failed (" + gl_error_name(err) + ")");
    // A framebuffer over the image: render targets draw into it, and the verification reads
    // source imports back through it.
    a.glGenFramebuffers(1, &e.framebuffer);
    a.glBindFramebuffer(GL_FRAMEBUFFER, e.framebuffer);
    a.glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, e.texture, 0);
    const GLenum status = a.glCheckFramebufferStatus(GL_FRAMEBUFFER);
    a.glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE) {
        if (req.render_target || req.verify)
            return make_error(ErrorCode::NotSupported,
                              "the EGLImage of " + import_key_string(k) +
                                  " is not a complete framebuffer (status 0x" +
                                  std::to_string(status) + ")");
        a.glDeleteFramebuffers(1, &e.framebuffer);
        e.framebuffer = 0;
    }
    if (req.verify) {
        const std::string why = req.verify(e.texture, e.framebuffer);
        err = worker_.take_gl_error();
        if (!why.empty() || err != GL_NO_ERROR)
            return make_error(ErrorCode::NotSupported,
                              "the import of " + import_key_string(k) +
                                  " does not show the buffer's " + "bytes (" +
                                  (why.empty() ? gl_error_name(err) : why) +
                                  "): this exporter's DMA-BUFs cannot be sampled zero-copy here");
    }
    return {};
}

Result<ImportedImage> ImportCache::acquire(const ImportRequest& req)
{
    sweep();
    for (auto it = lru_.begin(); it != lru_.end(); ++it) {
        if (!(it->key == req.key))
            continue;
        if (it != lru_.begin())
            lru_.splice(lru_.begin(), lru_, it);
        Entry& e = lru_.front();
        if (!e.declined.empty())
            return make_error(ErrorCode::NotSupported, e.declined);
        if (req.render_target && !e.img.framebuffer)
            return make_error(ErrorCode::NotSupported, "the import of " + import_key_string(e.key) +
                                                           " cannot be rendered into");
        ++stats_.hits;
        return e.img;
    }

    ++stats_.misses;
    // A buffer re-keyed to a new geometry (a pooled tensor reconfigured) drops its old import
    // first: it is stale. (Mesa 22's kms_swrast still hands back the old pitch for a buffer it
    // has imported before; the importer's pixel check catches that and the buffer is uploaded.)
    for (auto it = lru_.begin(); it != lru_.end();) {
        if (it->key.identity == req.key.identity && it->key.buffer == req.key.buffer) {
            ET_LOG_TRACE(kCat, "import cache: %s replaced by a new geometry",
                         import_key_string(it->key).c_str());
            importer_.destroy(it->img);
            it = lru_.erase(it);
            ++stats_.evictions;
        } else {
            ++it;
        }
    }
    while (lru_.size() >= capacity_ && !lru_.empty()) {
        ET_LOG_TRACE(kCat, "import cache: evicting %s", import_key_string(lru_.back().key).c_str());
        importer_.destroy(lru_.back().img);
        lru_.pop_back();
        ++stats_.evictions;
    }
    lru_.push_front(Entry{req.key, req.alive, {}, {}});
    Entry& e = lru_.front();
    stats_.entries = lru_.size();
    auto r = importer_.create(req, e.img);
    if (!r) {
        importer_.destroy(e.img);
        // Remembered, so the buffer goes straight to the upload path on its next frames.
        e.declined = r.error().message();
        ET_LOG_WARNING(kCat, "%s; uploading it instead (counted as a zero-copy decline)",
                       e.declined.c_str());
        return unexpected(std::move(r).error());
    }
    ET_LOG_DEBUG(kCat, "import cache: imported %s", import_key_string(req.key).c_str());
    return e.img;
}

} // namespace edgetensor::detail::gl
