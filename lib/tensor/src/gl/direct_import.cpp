// SPDX-License-Identifier: MIT
//
// The direct YUV import of one GL converter (direct_import.hpp); its decisions are in
// direct_check.cpp.

#include "gl/direct_import.hpp"

#include "gl/convert_gl.hpp"
#include "gl/direct_check.hpp"
#include "log.hpp"
#include "tensor_internal.hpp"

#include <algorithm>
#include <cstdlib>

namespace edgetensor::detail::gl
{
namespace
{

constexpr const char* kCat = "gl";

} // namespace

DirectImport::DirectImport(const Worker& worker, const ShaderParams& params)
    : worker_(worker), params_(params)
{
    const DirectPlan plan =
        plan_direct(params_, worker_.info(), std::getenv("EDGETENSOR_GL_DIRECT"),
                    [&](uint32_t fourcc) { return query_dma_buf_format(worker_, fourcc); });
    planned_fourcc_ = drm_fourcc_of(params_.cfg.src_format).value_or(0);
    if (!plan.fourcc) {
        off_ = plan.off;
        if (plan.driver)
            ET_LOG_INFO(kCat,
                        "direct YUV imports off: %s; YUV DMA-BUFs are imported as byte "
                        "grids and converted by the shader",
                        off_.c_str());
        else
            ET_LOG_DEBUG(kCat, "direct YUV imports off: %s", off_.c_str());
        return;
    }
    // Diagnostics and tests: another tolerance for the pixel check (negative: always decline).
    if (const char* e = std::getenv("EDGETENSOR_GL_DIRECT_TOLERANCE"); e && *e)
        tolerance_ = std::strtof(e, nullptr);
    fourcc_ = plan.fourcc;
    ET_LOG_DEBUG(kCat, "direct YUV imports: %s%s", fourcc_string(*fourcc_).c_str(),
                 plan.external_only ? " (external only)" : "");
}

DirectImport::~DirectImport()
{
    const Api& gl = worker_.gl();
    if (probe_prog_)
        gl.glDeleteProgram(probe_prog_);
    if (probe_fbo_)
        gl.glDeleteFramebuffers(1, &probe_fbo_);
    if (probe_tex_)
        gl.glDeleteTextures(1, &probe_tex_);
}

Result<void> DirectImport::set_modifier(uint64_t modifier)
{
    if (modifier != kDrmFormatModLinear && !fourcc_)
        return make_error(ErrorCode::NotSupported,
                          "drm-format " + drm_format_string(planned_fourcc_, modifier) +
                              " can only be read by importing it directly, which is off for "
                              "this conversion: " +
                              off_);
    modifier_ = modifier;
    return {};
}

std::string DirectImport::drm_format() const
{
    return drm_format_string(planned_fourcc_, modifier_);
}

Result<DmaBufImage> DirectImport::image_of(const TensorDyn& src, uint64_t* chroma_fold) const
{
    const auto main = TensorAccess::storage(src);
    const auto chroma = TensorAccess::chroma_storage(src);
    DmaBufImage img;
    img.width = uint32_t(params_.cfg.src_width);
    img.height = uint32_t(params_.cfg.src_height);
    img.fourcc = *fourcc_;
    img.yuv_hints = params_.applied;
    if (tiled())
        img.modifier = modifier_;
    *chroma_fold = 0;
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
            *chroma_fold = *chroma_fold * 0x100000001b3ull ^
                           (uint64_t(pl->offset) << 24 ^ pl->stride ^ (own ? 1ull << 63 : 0));
    }
    return img;
}

Result<GLuint> DirectImport::acquire(ImportCache& cache, const TensorDyn& src,
                                     std::optional<RawMap>& map, GlImportStats& counters,
                                     GLuint vao)
{
    uint64_t fold = 0;
    auto img = image_of(src, &fold);
    if (!img)
        return unexpected(std::move(img).error());
    ImportRequest req;
    req.key = {src.buffer_identity().id(),
               kDirectBuffer,
               img->planes[0].offset,
               img->width,
               img->height,
               img->planes[0].pitch,
               img->fourcc,
               fold};
    req.alive = src.buffer_identity().weak();
    req.image = std::move(*img);
    req.external = true;
    if (tiled()) {
        // The CPU's map of a tiled frame is tiles, not rows: nothing to check the driver
        // against, and no other way to read the frame, so a refusal does not end the path.
        req.key.chroma ^= modifier_;
        const uint64_t before = cache.stats().misses;
        auto r = cache.acquire(req);
        if (!r) {
            ++counters.direct_declines;
            return make_error(r.error().code(),
                              "drm-format " + drm_format() + ": " + r.error().message());
        }
        if (cache.stats().misses != before)
            ++counters.direct_imports;
        return r->texture;
    }
    req.verify = [&](GLuint tex, GLuint) -> std::string {
        if (!map) {
            auto m = src.map_raw(CpuAccess::Read);
            if (!m)
                return m.error().message();
            map.emplace(std::move(*m));
        }
        return check(tex, *map, vao);
    };
    const uint64_t misses = cache.stats().misses;
    auto r = cache.acquire(req);
    if (!r) {
        // The driver's conversion is the same for every frame of this configuration: one
        // decline ends the direct path for the converter (the cache logged it as a warning).
        ++counters.direct_declines;
        off_ = r.error().message();
        fourcc_.reset();
        return unexpected(std::move(r).error());
    }
    if (cache.stats().misses != misses)
        ++counters.direct_imports;
    return r->texture;
}

std::string DirectImport::check(GLuint tex, const RawMap& map, GLuint vao)
{
    auto bits = read_probe(tex, vao);
    if (!bits)
        return bits.error().message();
    const ConvertConfig& c = params_.cfg;
    const ProbeGrid g = probe_grid(*params_.src, {map.plane(0), map.plane(1), map.plane(2)},
                                   c.src_width, c.src_height, probe_px_, probe_py_, *bits);
    const ProbeJudgement j = judge_probe(g, params_.applied, output_blends(c, params_.geo),
                                         probe_tolerance(c, params_.channels, tolerance_));
    if (!j.pass)
        return j.text;
    ET_LOG_DEBUG(kCat, "direct import checked: %s", j.text.c_str());
    return {};
}

Result<void> DirectImport::make_probe()
{
    if (probe_prog_)
        return {};
    const Api& gl = worker_.gl();
    const size_t W = params_.cfg.src_width, H = params_.cfg.src_height;
    probe_px_ = std::min(W, kProbeGrid);
    probe_py_ = std::min(H, kProbeGrid);
    auto pr = build_program(worker_, probe_shader_source(W, H, probe_px_, probe_py_));
    if (!pr)
        return unexpected(std::move(pr).error());
    probe_prog_ = *pr;
    gl.glGenTextures(1, &probe_tex_);
    gl.glBindTexture(GL_TEXTURE_2D, probe_tex_);
    gl.glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA32UI, GLsizei(probe_px_), GLsizei(probe_py_));
    gl.glBindTexture(GL_TEXTURE_2D, 0);
    gl.glGenFramebuffers(1, &probe_fbo_);
    gl.glBindFramebuffer(GL_FRAMEBUFFER, probe_fbo_);
    gl.glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, probe_tex_, 0);
    const GLenum status = gl.glCheckFramebufferStatus(GL_FRAMEBUFFER);
    gl.glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE)
        return make_error(ErrorCode::NotSupported, "the probe target (RGBA32UI) is incomplete");
    return {};
}

Result<std::vector<uint32_t>> DirectImport::read_probe(GLuint tex, GLuint vao)
{
    EDGETENSOR_TRY(make_probe());
    const Api& gl = worker_.gl();
    // The driver's unclamped RGB at a grid of source pixels, as float bits.
    gl.glUseProgram(probe_prog_);
    gl.glUniform1i(gl.glGetUniformLocation(probe_prog_, "u_ext"), 0);
    gl.glBindVertexArray(vao);
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
    if (const GLenum e = worker_.take_gl_error(); e != GL_NO_ERROR)
        return make_error(ErrorCode::NotSupported, "sampling it fails with " + gl_error_name(e));
    return bits;
}

} // namespace edgetensor::detail::gl
