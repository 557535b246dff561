// SPDX-License-Identifier: MIT

#include "gl/egl_import.hpp"

#include "gl/gl_worker.hpp"
#include "gl/import_cache.hpp"

#include <limits>

namespace edgetensor::detail::gl
{
namespace
{

constexpr uint32_t fourcc(char a, char b, char c, char d) noexcept
{
    return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 |
           uint32_t(uint8_t(d)) << 24;
}

struct FourccInfo {
    ConvertFormat format;
    uint32_t fourcc;
    uint8_t planes;
};

// The engine's YUV layouts and their DRM names (drm_fourcc.h): the byte orders agree
// (YUY2 = YUYV: Y0 U Y1 V; VYUY: V Y0 U Y1; I420 = YUV420 'YU12': Y, U, V planes).
constexpr FourccInfo kYuvFourccs[] = {
    {ConvertFormat::Nv12, fourcc('N', 'V', '1', '2'), 2},
    {ConvertFormat::Nv21, fourcc('N', 'V', '2', '1'), 2},
    {ConvertFormat::Nv16, fourcc('N', 'V', '1', '6'), 2},
    {ConvertFormat::Nv24, fourcc('N', 'V', '2', '4'), 2},
    {ConvertFormat::I420, fourcc('Y', 'U', '1', '2'), 3},
    {ConvertFormat::Yuy2, fourcc('Y', 'U', 'Y', 'V'), 1},
    {ConvertFormat::Uyvy, fourcc('U', 'Y', 'V', 'Y'), 1},
    {ConvertFormat::Vyuy, fourcc('V', 'Y', 'U', 'Y'), 1},
};

constexpr EGLint kPlaneFd[3] = {EGL_DMA_BUF_PLANE0_FD_EXT, EGL_DMA_BUF_PLANE1_FD_EXT,
                                EGL_DMA_BUF_PLANE2_FD_EXT};
constexpr EGLint kPlaneOffset[3] = {EGL_DMA_BUF_PLANE0_OFFSET_EXT, EGL_DMA_BUF_PLANE1_OFFSET_EXT,
                                    EGL_DMA_BUF_PLANE2_OFFSET_EXT};
constexpr EGLint kPlanePitch[3] = {EGL_DMA_BUF_PLANE0_PITCH_EXT, EGL_DMA_BUF_PLANE1_PITCH_EXT,
                                   EGL_DMA_BUF_PLANE2_PITCH_EXT};
constexpr EGLint kPlaneModLo[3] = {EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT,
                                   EGL_DMA_BUF_PLANE1_MODIFIER_LO_EXT,
                                   EGL_DMA_BUF_PLANE2_MODIFIER_LO_EXT};
constexpr EGLint kPlaneModHi[3] = {EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT,
                                   EGL_DMA_BUF_PLANE1_MODIFIER_HI_EXT,
                                   EGL_DMA_BUF_PLANE2_MODIFIER_HI_EXT};

constexpr uint64_t kEglIntMax = uint64_t(std::numeric_limits<EGLint>::max());

} // namespace

std::optional<uint32_t> drm_fourcc_of(ConvertFormat f) noexcept
{
    for (const auto& e : kYuvFourccs)
        if (e.format == f)
            return e.fourcc;
    return std::nullopt;
}

size_t drm_fourcc_planes(uint32_t fc) noexcept
{
    if (fc == kFourccR8 || fc == kFourccAbgr8888)
        return 1;
    for (const auto& e : kYuvFourccs)
        if (e.fourcc == fc)
            return e.planes;
    return 0;
}

std::string fourcc_string(uint32_t fc)
{
    std::string s;
    for (int k = 0; k < 4; ++k) {
        const char c = char((fc >> (8 * k)) & 0xff);
        s += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    while (!s.empty() && s.back() == ' ')
        s.pop_back();
    return s;
}

Result<std::vector<EGLint>> build_dma_buf_attribs(const DmaBufImage& img)
{
    const std::string what = "a " + std::to_string(img.width) + "x" + std::to_string(img.height) +
                             " " + fourcc_string(img.fourcc) + " DMA-BUF import";
    auto bad = [&](const std::string& why) {
        return make_error(ErrorCode::InvalidArgument, what + ": " + why);
    };
    if (img.width == 0 || img.height == 0)
        return bad("the image is empty");
    if (img.width > kEglIntMax || img.height > kEglIntMax)
        return bad("the size does not fit an EGLint");
    const size_t want = drm_fourcc_planes(img.fourcc);
    if (want == 0)
        return bad("the DRM format is not one the converter imports");
    if (img.planes.size() != want)
        return bad("the format has " + std::to_string(want) + " plane(s) but " +
                   std::to_string(img.planes.size()) + " were given");
    std::vector<EGLint> a = {EGL_WIDTH,          EGLint(img.width),        EGL_HEIGHT,
                             EGLint(img.height), EGL_LINUX_DRM_FOURCC_EXT, EGLint(img.fourcc)};
    for (size_t p = 0; p < img.planes.size(); ++p) {
        const DmaBufPlane& pl = img.planes[p];
        const std::string n = "plane " + std::to_string(p);
        if (pl.fd < 0)
            return bad(n + " has no fd");
        if (pl.pitch == 0)
            return bad(n + " has a zero pitch");
        if (pl.offset > kEglIntMax || pl.pitch > kEglIntMax)
            return bad(n + "'s offset " + std::to_string(pl.offset) + " or pitch " +
                       std::to_string(pl.pitch) + " does not fit an EGLint");
        a.insert(a.end(), {kPlaneFd[p], pl.fd, kPlaneOffset[p], EGLint(pl.offset), kPlanePitch[p],
                           EGLint(pl.pitch)});
        if (img.modifier)
            // Two's complement halves, as the extension defines them.
            a.insert(a.end(),
                     {kPlaneModLo[p], EGLint(int32_t(uint32_t(*img.modifier & 0xffffffffu))),
                      kPlaneModHi[p], EGLint(int32_t(uint32_t(*img.modifier >> 32)))});
    }
    if (img.yuv_hints) {
        if (want == 1 && (img.fourcc == kFourccR8 || img.fourcc == kFourccAbgr8888))
            return bad("colour-space hints name a YUV image, not a byte grid");
        EGLint space = 0, range = 0;
        switch (img.yuv_hints->encoding) {
        case ColorEncoding::Bt601:
            space = EGL_ITU_REC601_EXT;
            break;
        case ColorEncoding::Bt709:
            space = EGL_ITU_REC709_EXT;
            break;
        case ColorEncoding::Bt2020:
            space = EGL_ITU_REC2020_EXT;
            break;
        default:
            return bad("the colour matrix is unspecified (resolve the colorimetry first)");
        }
        switch (img.yuv_hints->range) {
        case ColorRange::Full:
            range = EGL_YUV_FULL_RANGE_EXT;
            break;
        case ColorRange::Limited:
            range = EGL_YUV_NARROW_RANGE_EXT;
            break;
        default:
            return bad("the range is unspecified (resolve the colorimetry first)");
        }
        a.insert(a.end(), {EGL_YUV_COLOR_SPACE_HINT_EXT, space, EGL_SAMPLE_RANGE_HINT_EXT, range,
                           EGL_YUV_CHROMA_HORIZONTAL_SITING_HINT_EXT, EGL_YUV_CHROMA_SITING_0_EXT,
                           EGL_YUV_CHROMA_VERTICAL_SITING_HINT_EXT, EGL_YUV_CHROMA_SITING_0_EXT});
    }
    a.push_back(EGL_NONE);
    return a;
}

DmaBufFormatSupport query_dma_buf_format(const Worker& w, uint32_t fc)
{
    DmaBufFormatSupport s;
    const Api& a = w.gl();
    if (!w.info().dma_buf_import_modifiers || !a.eglQueryDmaBufModifiersEXT)
        return s;
    EGLint n = 0;
    if (a.eglQueryDmaBufFormatsEXT && a.eglQueryDmaBufFormatsEXT(w.display(), 0, nullptr, &n) &&
        n >= 0) {
        std::vector<EGLint> formats(static_cast<size_t>(n));
        if (!n || a.eglQueryDmaBufFormatsEXT(w.display(), n, formats.data(), &n)) {
            s.queried = true;
            for (EGLint i = 0; i < n; ++i)
                s.listed = s.listed || uint32_t(formats[size_t(i)]) == fc;
        }
    }
    EGLint m = 0;
    if (!a.eglQueryDmaBufModifiersEXT(w.display(), EGLint(fc), 0, nullptr, nullptr, &m) || m < 0)
        return s;
    if (m == 0) {
        // Drivers that only do linear may list no modifier at all.
        s.linear = true;
        return s;
    }
    std::vector<EGLuint64KHR> mods(static_cast<size_t>(m));
    std::vector<EGLBoolean> external(static_cast<size_t>(m));
    if (!a.eglQueryDmaBufModifiersEXT(w.display(), EGLint(fc), m, mods.data(), external.data(), &m))
        return s;
    s.modifiers_listed = true;
    for (EGLint i = 0; i < m; ++i) {
        s.modifiers.push_back({uint64_t(mods[size_t(i)]), external[size_t(i)] != EGL_FALSE});
        if (mods[size_t(i)] == kDrmFormatModLinear) {
            s.linear = true;
            s.external_only = external[size_t(i)] != EGL_FALSE;
        }
    }
    return s;
}

// ---- the importer --------------------------------------------------------------------------

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

Result<void> EglImporter::create(const ImportRequest& req, ImportedImage& e)
{
    const Api& a = worker_.gl();
    const ImportKey& k = req.key;
    DmaBufImage desc = req.image;
    // Our buffers are linear; say so where the display takes modifiers, so a driver that would
    // otherwise assume its own tiling does not.
    if (!desc.modifier && worker_.info().dma_buf_import_modifiers) {
        const DmaBufFormatSupport fs = query_dma_buf_format(worker_, desc.fourcc);
        // A grid is a GL_TEXTURE_2D: only where linear is not external-only.
        if (fs.linear && (req.external || !fs.external_only))
            desc.modifier = kDrmFormatModLinear;
    }
    auto attrs = build_dma_buf_attribs(desc);
    if (!attrs)
        return unexpected(std::move(attrs).error());
    e = {};
    e.image = a.eglCreateImageKHR(worker_.display(), EGL_NO_CONTEXT, EGL_LINUX_DMA_BUF_EXT, nullptr,
                                  attrs->data());
    if (e.image == EGL_NO_IMAGE_KHR)
        return make_error(ErrorCode::NotSupported,
                          "eglCreateImage(EGL_LINUX_DMA_BUF_EXT) refused " + import_key_string(k) +
                              " (" + egl_error_name(a.eglGetError()) + ")");
    const GLenum target = req.external ? GL_TEXTURE_EXTERNAL_OES : GL_TEXTURE_2D;
    a.glGenTextures(1, &e.texture);
    a.glBindTexture(target, e.texture);
    a.glEGLImageTargetTexture2DOES(target, e.image);
    // Nearest at texel centres: the engine's chroma is its block's sample, never a blend.
    a.glTexParameteri(target, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    a.glTexParameteri(target, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    a.glTexParameteri(target, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    a.glTexParameteri(target, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    a.glBindTexture(target, 0);
    GLenum err = worker_.take_gl_error();
    if (err != GL_NO_ERROR)
        return make_error(ErrorCode::NotSupported,
                          "binding the EGLImage of " + import_key_string(k) +
                              " to a texture failed (" + gl_error_name(err) + ")");
    // Grids get a framebuffer over the image: render targets draw into it, and the
    // verification reads source imports back through it. (External images are not
    // colour-renderable; their check samples them.)
    if (!req.external) {
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
    }
    if (req.verify) {
        const std::string why = req.verify(e.texture, e.framebuffer);
        err = worker_.take_gl_error();
        if (!why.empty() || err != GL_NO_ERROR)
            return make_error(ErrorCode::NotSupported,
                              "the import of " + import_key_string(k) +
                                  (req.external ? " does not give the CPU engine's pixels ("
                                                : " does not show the buffer's bytes (") +
                                  (why.empty() ? gl_error_name(err) : why) +
                                  (req.external ? ")"
                                                : "): this exporter's DMA-BUFs cannot be sampled "
                                                  "zero-copy here"));
    }
    return {};
}

} // namespace edgetensor::detail::gl
