// SPDX-License-Identifier: MIT
//
// Where the GL converter's sources and destination come from: imported DMA-BUFs (a direct YUV
// EGLImage the driver converts, or byte grids the shader converts), uploads and readbacks.
// Every import is checked by its pixels before it is used (Mesa imports some buffers
// "successfully" and reads zeros or the wrong pitch), and every copy is counted.

#include "gl/convert_gl.hpp"

#include "gl/egl_import.hpp"
#include "gl/pbo_storage.hpp"
#include "log.hpp"
#include "tensor_internal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace edgetensor::detail::gl
{
namespace
{

constexpr const char* kCat = "gl";

/// Reads `n` bytes of each of `rows` back through `fbo`, from texel (x, y) of an image of
/// `unit`-byte texels (1: R8, 4: RGBA8), and compares them with the CPU's view of the same
/// bytes (`cpu`, rows `stride` apart, row 0 at y). Empty when they agree, else the first
/// difference. Imports of buffers the driver cannot reach read zeros or garbage here.
std::string compare_readback(const Worker& w, GLuint fbo, size_t unit, size_t x, size_t y, size_t n,
                             std::initializer_list<size_t> rows, const uint8_t* cpu, size_t stride)
{
    const Api& gl = w.gl();
    const size_t texels = n / unit;
    std::vector<uint8_t> px(texels * 4);
    gl.glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    gl.glPixelStorei(GL_PACK_ALIGNMENT, 1);
    std::string bad;
    for (size_t r : rows) {
        gl.glReadPixels(GLint(x), GLint(y + r), GLsizei(texels), 1, GL_RGBA, GL_UNSIGNED_BYTE,
                        px.data());
        if (const GLenum e = w.take_gl_error(); e != GL_NO_ERROR) {
            bad = "reading it back fails with " + gl_error_name(e);
            break;
        }
        for (size_t b = 0; b < texels * unit && bad.empty(); ++b) {
            const uint8_t got = unit == 4 ? px[b] : px[4 * b];
            const uint8_t want = cpu[r * stride + b];
            if (got != want)
                bad = "byte " + std::to_string(b) + " of row " + std::to_string(r) + " reads " +
                      std::to_string(got) + " where the buffer holds " + std::to_string(want);
        }
        if (!bad.empty())
            break;
    }
    gl.glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return bad;
}

} // namespace

Result<std::array<ConvertBackend::SourcePlane, 3>>
ConvertBackend::sources_from_tensor(const TensorDyn& src, std::optional<RawMap>& map)
{
    const SourceLayout& sl = *params_.src;
    const GlInfo& info = worker_->info();
    const bool planar_rgb = sl.format == ConvertFormat::PlanarRgb;
    std::array<SourcePlane, 3> out{};
    std::array<std::optional<ImportKey>, 3> keys{};
    // A YUV frame in DMA-BUFs: one direct import of all its planes first, where the driver
    // can take it and its pixels pass; else the planes as byte grids below.
    if (direct_fourcc_ && TensorAccess::storage(src)->memory() == TensorMemory::Dma &&
        src.plane_fd(0) >= 0) {
        auto d = direct_source(src, map);
        if (d) {
            out[0] = *d;
            return out;
        }
        ET_LOG_DEBUG(kCat, "'%s' not imported directly: %s", src.name().c_str(),
                     d.error().message().c_str());
    }
    auto ensure_map = [&]() -> Result<void> {
        if (map)
            return {};
        auto m = src.map_raw(CpuAccess::Read);
        if (!m)
            return unexpected(std::move(m).error());
        map.emplace(std::move(*m));
        return {};
    };
    for (size_t p = 0; p < sl.planes; ++p) {
        const bool chroma = !planar_rgb && p == 1;
        const std::shared_ptr<Storage> storage =
            chroma ? TensorAccess::chroma_storage(src) : TensorAccess::storage(src);
        size_t off = 0, stride = 0;
        if (planar_rgb) {
            off = src.offset() + p * size_t(src.strides()[0]);
            stride = size_t(src.strides()[1]);
        } else {
            auto pl = src.plane_layout(p);
            if (!pl)
                return unexpected(std::move(pl).error());
            off = pl->offset;
            stride = pl->stride;
        }
        const int fd = src.plane_fd(chroma ? 1 : 0);
        const size_t rb = src_row_bytes_[p];
        const size_t rows = src_rows_[p];

        if (storage->memory() == TensorMemory::Dma && fd >= 0) {
            std::string why;
            if (!info.dma_buf_import) {
                why = "the EGL display lacks EGL_EXT_image_dma_buf_import";
            } else {
                const size_t max = size_t(info.max_texture_size);
                size_t goff = 0, x = stride ? off % stride : 0, y = stride ? off / stride : 0;
                if (stride && x + rb > stride) {
                    goff = off;
                    x = y = 0;
                }
                const size_t grid_rows =
                    stride ? std::min((storage->capacity() - goff) / stride, max) : 0;
                if (!stride || stride > max || y + rows > grid_rows) {
                    why = "its " + std::to_string(stride) + "-byte rows exceed the texture limit";
                } else {
                    ImportRequest req;
                    // A one-buffer frame's planes share its grid; a from_planes chroma
                    // buffer has its own.
                    const bool own_buffer = chroma && storage != TensorAccess::storage(src);
                    req.key = {src.buffer_identity().id(),
                               own_buffer ? 1u : 0u,
                               goff,
                               uint32_t(stride),
                               uint32_t(grid_rows),
                               uint32_t(stride),
                               kFourccR8,
                               0};
                    req.alive = src.buffer_identity().weak();
                    req.image.width = req.key.width;
                    req.image.height = req.key.height;
                    req.image.fourcc = kFourccR8;
                    req.image.planes = {{fd, goff, uint32_t(stride)}};
                    // Pixels, not return codes: read rows of the import back and compare them
                    // with the buffer's bytes.
                    req.verify = [&, x, y, p, stride, rb, rows](GLuint, GLuint fbo) -> std::string {
                        if (!fbo)
                            return "no framebuffer to read the import back through";
                        if (auto m = ensure_map(); !m)
                            return m.error().message();
                        const uint8_t* cpu = planar_rgb
                                                 ? map->bytes() + p * size_t(src.strides()[0])
                                                 : map->plane(p).data;
                        const size_t n = std::min<size_t>(rb, 256);
                        std::string bad = compare_readback(*worker_, fbo, 1, x, y, n,
                                                           {0, rows / 2, rows - 1}, cpu, stride);
                        if (bad.empty() && rb > n)
                            bad = compare_readback(*worker_, fbo, 1, x + rb - n, y, n,
                                                   {0, rows - 1}, cpu + rb - n, stride);
                        return bad;
                    };
                    // Planes of one buffer share its import: one lookup per buffer and frame.
                    bool shared = false;
                    for (size_t q = 0; q < p && !shared; ++q)
                        if (keys[q] && *keys[q] == req.key) {
                            out[p] = {out[q].texture, int(x), int(y)};
                            shared = true;
                        }
                    if (shared)
                        continue;
                    auto img = cache_->acquire(req);
                    if (img) {
                        out[p] = {img->texture, int(x), int(y)};
                        keys[p] = req.key;
                        continue;
                    }
                    why = img.error().message();
                }
            }
            ++counters_.zero_copy_declines;
            ET_LOG_DEBUG(kCat, "source plane %zu of '%s' uploaded, not imported: %s", p,
                         src.name().c_str(), why.c_str());
        }

        if (storage->memory() == TensorMemory::Pbo) {
            const auto* pbo = static_cast<const PboStorage*>(storage.get());
            if (pbo->owner_serial() != worker_->serial())
                return make_error(ErrorCode::InvalidArgument,
                                  "source PBO '" + pbo->name() +
                                      "' belongs to another GL context than the converter's "
                                      "(allocate it from GlContext::shared())");
            if (pbo->is_mapped())
                return make_error(ErrorCode::InvalidArgument,
                                  "source PBO '" + pbo->name() + "' is mapped for " +
                                      pbo->mapped_by() + "; release its maps before converting it");
            EDGETENSOR_TRY(upload(p, nullptr, stride, pbo->buffer(), off));
        } else {
            EDGETENSOR_TRY(ensure_map());
            const uint8_t* data =
                planar_rgb ? map->bytes() + p * size_t(src.strides()[0]) : map->plane(p).data;
            EDGETENSOR_TRY(upload(p, data, stride, 0, 0));
        }
        out[p] = {upload_tex_[p], 0, 0};
    }
    return out;
}

Result<ConvertBackend::Target> ConvertBackend::target_from_tensor(const TensorDyn& dst, size_t base,
                                                                  size_t rs, size_t ps,
                                                                  std::optional<RawMap>& map)
{
    Target t;
    t.unit = unit_for(base, rs, ps);
    t.rs = rs;
    t.ps = ps;
    const auto& storage = TensorAccess::storage(dst);
    const GlInfo& info = worker_->info();
    if (storage->memory() == TensorMemory::Pbo) {
        const auto* pbo = static_cast<const PboStorage*>(storage.get());
        if (pbo->owner_serial() != worker_->serial())
            return make_error(ErrorCode::InvalidArgument,
                              "destination PBO '" + pbo->name() +
                                  "' belongs to another GL context than the converter's "
                                  "(allocate it from GlContext::shared())");
        if (pbo->is_mapped())
            return make_error(ErrorCode::InvalidArgument,
                              "destination PBO '" + pbo->name() + "' is mapped for " +
                                  pbo->mapped_by() +
                                  "; release its maps before converting into it");
        t.pack_pbo = pbo->buffer();
        t.base = base;
        ++counters_.readbacks;
        return t;
    }
    const int fd = dst.fd();
    if (storage->memory() == TensorMemory::Dma && fd >= 0) {
        std::string why;
        const size_t u = size_t(t.unit);
        const size_t max = size_t(info.max_texture_size);
        const size_t x = base % rs, y0 = base / rs;
        const size_t grid_rows = std::min(storage->capacity() / rs, max);
        const size_t last = y0 + (out_planes_ - 1) * (ps / rs);
        if (!info.dma_buf_import)
            why = "the EGL display lacks EGL_EXT_image_dma_buf_import";
        else if (rs / u > max || x % u || x + row_bytes_ > rs || (out_planes_ > 1 && ps % rs) ||
                 last + params_.dst_height > grid_rows)
            why = "its layout is not a rectangle of " + std::to_string(u) +
                  "-byte texels within the texture limit";
        if (why.empty()) {
            ImportRequest req;
            req.key = {dst.buffer_identity().id(),
                       0,
                       0,
                       uint32_t(rs / u),
                       uint32_t(grid_rows),
                       uint32_t(rs),
                       u == 4 ? kFourccAbgr8888 : kFourccR8,
                       0};
            req.alive = dst.buffer_identity().weak();
            req.image.width = req.key.width;
            req.image.height = req.key.height;
            req.image.fourcc = req.key.fourcc;
            req.image.planes = {{fd, 0, uint32_t(rs)}};
            req.render_target = true;
            // Read the import back against the buffer first (an import the driver cannot
            // reach reads garbage, and rendering into one may fault), then write a probe through
            // it and look for it in the buffer.
            req.verify = [&, x, y0, u](GLuint, GLuint fbo) -> std::string {
                const Api& gl = worker_->gl();
                {
                    auto m = dst.map_allocation(CpuAccess::Write);
                    if (!m)
                        return m.error().message();
                    const size_t n = std::min<size_t>(row_bytes_, 256) / u * u;
                    std::string bad =
                        compare_readback(*worker_, fbo, u, x / u, y0, n,
                                         {0, params_.dst_height - 1}, m->bytes() + base, rs);
                    if (!bad.empty())
                        return bad;
                }
                for (const uint8_t v : {uint8_t(0xa5), uint8_t(0x5a)}) {
                    gl.glBindFramebuffer(GL_FRAMEBUFFER, fbo);
                    gl.glEnable(GL_SCISSOR_TEST);
                    gl.glScissor(GLint(x / u), GLint(y0), 1, 1);
                    const float f = (float(v) + 0.25f) / 255.f;
                    gl.glClearColor(f, f, f, f);
                    gl.glClear(GL_COLOR_BUFFER_BIT);
                    gl.glDisable(GL_SCISSOR_TEST);
                    gl.glBindFramebuffer(GL_FRAMEBUFFER, 0);
                    gl.glFinish();
                    // Mapped after the GPU wrote, so the sync bracket sees its writes.
                    auto m = dst.map_allocation(CpuAccess::Write);
                    if (!m)
                        return m.error().message();
                    const uint8_t got = m->bytes()[base];
                    if (got != v)
                        return "a probe byte " + std::to_string(v) +
                               " written through the import reads " + std::to_string(got) +
                               " in the buffer";
                }
                return {};
            };
            auto img = cache_->acquire(req);
            if (img) {
                t.direct = true;
                t.framebuffer = img->framebuffer;
                t.x0 = int(x / u);
                for (size_t k = 0; k < out_planes_; ++k)
                    t.y0[k] = int(y0 + k * (out_planes_ > 1 ? ps / rs : 0));
                return t;
            }
            why = img.error().message();
        }
        ++counters_.zero_copy_declines;
        ET_LOG_DEBUG(kCat, "destination '%s' written by readback, not rendered into: %s",
                     dst.name().c_str(), why.c_str());
    }
    auto m = dst.map_raw(CpuAccess::Write);
    if (!m)
        return unexpected(std::move(m).error());
    map.emplace(std::move(*m));
    t.host = map->bytes();
    ++counters_.readbacks;
    return t;
}

// ---- direct YUV imports ----------------------------------------------------------------------

void ConvertBackend::init_direct()
{
    const GlInfo& info = worker_->info();
    const SourceLayout& sl = *params_.src;
    const ConvertConfig& c = params_.cfg;
    const auto fc = drm_fourcc_of(c.src_format);
    // Not applicable (an RGB source, a GRAY output) stays quiet; a driver that cannot is said.
    auto off = [&](std::string why, bool driver) {
        direct_off_ = std::move(why);
        if (driver)
            ET_LOG_INFO(kCat,
                        "direct YUV imports off: %s; YUV DMA-BUFs are imported as byte "
                        "grids and converted by the shader",
                        direct_off_.c_str());
        else
            ET_LOG_DEBUG(kCat, "direct YUV imports off: %s", direct_off_.c_str());
    };
    if (!fc)
        return off("the source is not YUV", false);
    const char* want = std::getenv("EDGETENSOR_GL_DIRECT");
    if (want && std::strcmp(want, "0") == 0)
        return off("EDGETENSOR_GL_DIRECT=0", true);
    // A software renderer gains nothing from it (it reads the buffer through the CPU either
    // way) and Mesa 22.3's llvmpipe crashes inside its shader sampling a YUYV external image of
    // a vivid camera buffer; a fault in the driver cannot be declined after the fact.
    if (info.software && !(want && std::strcmp(want, "1") == 0))
        return off("a software renderer (" + info.renderer +
                       "); EDGETENSOR_GL_DIRECT=1 tries it there",
                   true);
    // Diagnostics and tests: another tolerance for the pixel check (negative: always decline).
    if (const char* e = std::getenv("EDGETENSOR_GL_DIRECT_TOLERANCE"); e && *e)
        direct_tolerance_ = std::strtof(e, nullptr);
    if (c.dst_format == OutputFormat::Gray)
        return off("a GRAY output reads the luma plane only", false);
    if (!info.dma_buf_import)
        return off("the EGL display lacks EGL_EXT_image_dma_buf_import", false);
    if ((c.dtype == DType::F16 || c.dtype == DType::F32) &&
        *std::min_element(c.std.begin(), c.std.begin() + params_.channels) * 1e-2f < 0.25f)
        return off("float output normalised by std < 25 is held to 1e-2, tighter than a "
                   "driver's colour conversion can be checked to",
                   false);
    if (!info.yuv_external)
        return off("the GL lacks GL_OES_EGL_image_external_essl3", true);
    bool hsub = false, vsub = false;
    for (size_t k = 0; k < sl.ncomp; ++k) {
        hsub = hsub || sl.comp[k].hshift > 0;
        vsub = vsub || sl.vshift[sl.comp[k].plane] > 0;
    }
    // The driver's chroma plane is width / 2 (height / 2) texels: with an odd size its nearest
    // sample is not the engine's block.
    if ((hsub && c.src_width % 2) || (vsub && c.src_height % 2))
        return off("an odd size with subsampled chroma", false);
    const size_t max = size_t(info.max_texture_size);
    if (c.src_width > max || c.src_height > max)
        return off("the frame exceeds the texture size limit", true);
    if (params_.applied.encoding == ColorEncoding::Unspecified ||
        params_.applied.range == ColorRange::Unspecified)
        return off("the colorimetry is unresolved", false);
    const DmaBufFormatSupport fs = query_dma_buf_format(*worker_, *fc);
    if (!fs.queried)
        return off("the display does not list its DMA-BUF formats "
                   "(EGL_EXT_image_dma_buf_import_modifiers)",
                   true);
    if (!fs.listed)
        return off("the driver does not list " + fourcc_string(*fc) +
                       " among its DMA-BUF import formats",
                   true);
    if (fs.modifiers_listed && !fs.linear)
        return off("the driver offers no linear " + fourcc_string(*fc) + " modifier", true);
    direct_fourcc_ = *fc;
    ET_LOG_DEBUG(kCat, "direct YUV imports: %s%s", fourcc_string(*fc).c_str(),
                 fs.external_only ? " (external only)" : "");
}

Result<ConvertBackend::SourcePlane> ConvertBackend::direct_source(const TensorDyn& src,
                                                                  std::optional<RawMap>& map)
{
    const ConvertConfig& c = params_.cfg;
    const auto main = TensorAccess::storage(src);
    const auto chroma = TensorAccess::chroma_storage(src);
    DmaBufImage img;
    img.width = uint32_t(c.src_width);
    img.height = uint32_t(c.src_height);
    img.fourcc = *direct_fourcc_;
    img.yuv_hints = params_.applied;
    uint64_t fold = 0;
    for (size_t p = 0; p < params_.src->planes; ++p) {
        auto pl = src.plane_layout(p);
        if (!pl)
            return unexpected(std::move(pl).error());
        // A from_planes frame's chroma is a buffer of its own (the same identity).
        const bool own = p == 1 && chroma && chroma != main;
        if (own && chroma->memory() != TensorMemory::Dma)
            return make_error(ErrorCode::NotSupported, "its chroma plane is not a DMA-BUF");
        const int fd = src.plane_fd(own ? 1 : 0);
        if (fd < 0)
            return make_error(ErrorCode::NotSupported,
                              "plane " + std::to_string(p) + " has no DMA-BUF fd");
        img.planes.push_back({fd, pl->offset, uint32_t(pl->stride)});
        if (p > 0)
            fold = fold * 0x100000001b3ull ^
                   (uint64_t(pl->offset) << 24 ^ pl->stride ^ (own ? 1ull << 63 : 0));
    }
    ImportRequest req;
    req.key = {src.buffer_identity().id(),
               kDirectBuffer,
               img.planes[0].offset,
               img.width,
               img.height,
               img.planes[0].pitch,
               img.fourcc,
               fold};
    req.alive = src.buffer_identity().weak();
    req.image = std::move(img);
    req.external = true;
    req.verify = [&](GLuint tex, GLuint) -> std::string {
        if (!map) {
            auto m = src.map_raw(CpuAccess::Read);
            if (!m)
                return m.error().message();
            map.emplace(std::move(*m));
        }
        return check_direct(tex, *map);
    };
    const uint64_t misses = cache_->stats().misses;
    auto r = cache_->acquire(req);
    if (!r) {
        // The driver's conversion is the same for every frame of this configuration: one
        // decline ends the direct path for the converter (the cache logged it as a warning).
        ++counters_.direct_declines;
        direct_off_ = r.error().message();
        direct_fourcc_.reset();
        return unexpected(std::move(r).error());
    }
    if (cache_->stats().misses != misses)
        ++counters_.direct_imports;
    return SourcePlane{r->texture, 0, 0, true};
}

std::string ConvertBackend::check_direct(GLuint tex, const RawMap& map)
{
    const Api& gl = worker_->gl();
    const ConvertConfig& c = params_.cfg;
    const size_t W = c.src_width, H = c.src_height;
    if (!probe_prog_) {
        probe_px_ = std::min(W, kProbeGrid);
        probe_py_ = std::min(H, kProbeGrid);
        auto pr = build_program(*worker_, probe_shader_source(W, H, probe_px_, probe_py_));
        if (!pr)
            return pr.error().message();
        probe_prog_ = *pr;
        gl.glGenTextures(1, &probe_tex_);
        gl.glBindTexture(GL_TEXTURE_2D, probe_tex_);
        gl.glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA32UI, GLsizei(probe_px_), GLsizei(probe_py_));
        gl.glBindTexture(GL_TEXTURE_2D, 0);
        gl.glGenFramebuffers(1, &probe_fbo_);
        gl.glBindFramebuffer(GL_FRAMEBUFFER, probe_fbo_);
        gl.glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, probe_tex_,
                                  0);
        const GLenum status = gl.glCheckFramebufferStatus(GL_FRAMEBUFFER);
        gl.glBindFramebuffer(GL_FRAMEBUFFER, 0);
        if (status != GL_FRAMEBUFFER_COMPLETE)
            return "the probe target (RGBA32UI) is incomplete";
    }
    // The driver's unclamped RGB at a grid of source pixels, as float bits.
    gl.glUseProgram(probe_prog_);
    gl.glUniform1i(gl.glGetUniformLocation(probe_prog_, "u_ext"), 0);
    gl.glBindVertexArray(vao_);
    gl.glActiveTexture(GL_TEXTURE0);
    gl.glBindTexture(GL_TEXTURE_EXTERNAL_OES, tex);
    gl.glBindFramebuffer(GL_FRAMEBUFFER, probe_fbo_);
    gl.glViewport(0, 0, GLsizei(probe_px_), GLsizei(probe_py_));
    gl.glDrawArrays(GL_TRIANGLES, 0, 3);
    std::vector<uint32_t> bits(probe_px_ * probe_py_ * 4);
    gl.glPixelStorei(GL_PACK_ALIGNMENT, 4);
    gl.glReadPixels(0, 0, GLsizei(probe_px_), GLsizei(probe_py_), GL_RGBA_INTEGER, GL_UNSIGNED_INT,
                    bits.data());
    gl.glBindFramebuffer(GL_FRAMEBUFFER, 0);
    gl.glBindTexture(GL_TEXTURE_EXTERNAL_OES, 0);
    gl.glBindVertexArray(0);
    gl.glUseProgram(0);
    if (const GLenum e = worker_->take_gl_error(); e != GL_NO_ERROR)
        return "sampling it fails with " + gl_error_name(e);

    // The engine's function at the same pixels, from the bytes the CPU sees.
    const SourceLayout& sl = *params_.src;
    const YuvCoefficients k = yuv_coefficients(params_.applied);
    float scale = 1.f;
    if ((c.dtype == DType::F16 || c.dtype == DType::F32))
        scale = std::min(1.f, *std::min_element(c.std.begin(), c.std.begin() + params_.channels) /
                                  100.f);
    double max_tol = kDirectMaxTolerance * scale, mean_tol = kDirectMeanTolerance * scale;
    if (direct_tolerance_) {
        max_tol = *direct_tolerance_;
        mean_tol = std::min(mean_tol, max_tol);
    }
    // Where the output blends source pixels (bilinear, not 1:1) the driver must not clamp:
    // blending clamped RGB is not the engine's clamp of blended YUV. Without blending (nearest,
    // or 1:1) each output pixel is one source pixel, clamped by the shader anyway, so a driver
    // that clamps is compared clamped.
    const ConvertGeometry& g = params_.geo;
    const bool blends = c.method != ResizeMethod::Nearest &&
                        !(g.content.width == g.source.width && g.content.height == g.source.height);
    double worst = 0, sum = 0;
    std::string where, samples;
    // When the check fails, which simple model of the driver fits best says why (a driver that
    // clamps, ignores the hints, swaps chroma, or reads nothing).
    const YuvCoefficients k601 =
        yuv_coefficients(Colorimetry{ColorSpace::Unspecified, ColorTransfer::Unspecified,
                                     ColorEncoding::Bt601, ColorRange::Limited});
    struct Model {
        const char* name;
        const YuvCoefficients* k;
        bool clamp, swap, zero, no_chroma;
        double sum;
    };
    Model models[] = {
        {"the engine's function clamped to 0..255", &k, true, false, false, false, 0},
        {"BT.601 limited clamped (the hints ignored)", &k601, true, false, false, false, 0},
        {"BT.601 limited unclamped (the hints ignored)", &k601, false, false, false, false, 0},
        {"the engine's function with U and V swapped, clamped", &k, true, true, false, false, 0},
        {"BT.601 limited clamped with the chroma read as zeros", &k601, true, false, false, true,
         0},
        {"zeros", &k, false, false, true, false, 0}};
    auto rgb = [](const YuvCoefficients& q, const float* v, bool swap, bool clamp, float* out) {
        const float yy = (v[0] - q.y_off) * q.y_scale;
        const float uu = (swap ? v[2] : v[1]) - 128.f, vv = (swap ? v[1] : v[2]) - 128.f;
        out[0] = yy + q.v_to_r * vv;
        out[1] = yy + q.u_to_g * uu + q.v_to_g * vv;
        out[2] = yy + q.u_to_b * uu;
        if (clamp)
            for (int n = 0; n < 3; ++n)
                out[n] = std::clamp(out[n], 0.f, 255.f);
    };
    for (size_t j = 0; j < probe_py_; ++j)
        for (size_t i = 0; i < probe_px_; ++i) {
            const size_t x = probe_coord(i, probe_px_, W), y = probe_coord(j, probe_py_, H);
            float v[3];
            for (size_t q = 0; q < 3; ++q) {
                const CompSpec& cs = sl.comp[q];
                const MappedPlane pl = map.plane(cs.plane);
                const size_t row = y >> sl.vshift[cs.plane];
                v[q] = pl.data[row * pl.row_stride + cs.mul * (x >> cs.hshift) + cs.add];
            }
            float want[3], alt[3];
            rgb(k, v, false, !blends, want);
            float got[3];
            for (size_t q = 0; q < 3; ++q) {
                std::memcpy(&got[q], &bits[(j * probe_px_ + i) * 4 + q], sizeof got[q]);
                got[q] *= 255.f;
                if (!blends && std::isfinite(got[q]))
                    got[q] = std::clamp(got[q], 0.f, 255.f);
            }
            for (Model& m : models) {
                const float nc[3] = {v[0], 0.f, 0.f};
                if (m.zero)
                    alt[0] = alt[1] = alt[2] = 0.f;
                else
                    rgb(*m.k, m.no_chroma ? nc : v, m.swap, m.clamp, alt);
                for (size_t q = 0; q < 3; ++q)
                    m.sum += std::fabs(double(got[q]) - double(alt[q]));
            }
            if (j == probe_py_ / 2 && i < 2) {
                char b[160];
                std::snprintf(b, sizeof b, "; pixel (%zu, %zu) Y %d U %d V %d reads %.1f %.1f %.1f",
                              x, y, int(v[0]), int(v[1]), int(v[2]), double(got[0]), double(got[1]),
                              double(got[2]));
                samples += b;
            }
            for (size_t q = 0; q < 3; ++q) {
                double d = std::fabs(double(got[q]) - double(want[q]));
                if (!std::isfinite(d))
                    d = 1e9;
                sum += d;
                if (d > worst) {
                    worst = d;
                    char b[200];
                    std::snprintf(b, sizeof b,
                                  "pixel (%zu, %zu) channel %zu reads %.2f where the CPU engine "
                                  "computes %.2f from Y %d U %d V %d",
                                  x, y, q, double(got[q]), double(want[q]), int(v[0]), int(v[1]),
                                  int(v[2]));
                    where = b;
                }
            }
        }
    const Model* best = &models[0];
    for (const Model& m : models)
        if (m.sum < best->sum)
            best = &m;
    const double n_probe = double(probe_px_ * probe_py_ * 3);
    char fit[200];
    std::snprintf(fit, sizeof fit, "; closest model of the driver: %s (mean %.3f levels)",
                  best->name, best->sum / n_probe);
    where += fit + samples;
    const double mean = sum / double(probe_px_ * probe_py_ * 3);
    char b[160];
    std::snprintf(b, sizeof b,
                  "driver RGB vs the CPU engine over %zu probe pixels: max %.3f, "
                  "mean %.3f levels (tolerance %.3f, mean %.3f)",
                  probe_px_ * probe_py_, worst, mean, max_tol, mean_tol);
    if (worst > max_tol || mean > mean_tol)
        return std::string(b) + "; worst: " + where;
    ET_LOG_DEBUG(kCat, "direct import checked: %s", b);
    return {};
}
} // namespace edgetensor::detail::gl
