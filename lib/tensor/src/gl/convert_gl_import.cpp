// SPDX-License-Identifier: MIT
//
// Where the GL converter's sources and destination come from: imported DMA-BUFs (a direct YUV
// EGLImage the driver converts, direct_import.hpp, or byte grids the shader converts), uploads
// and readbacks. Every import is checked by its pixels before it is used (Mesa imports some
// buffers "successfully" and reads zeros or the wrong pitch), and every copy is counted.

#include "gl/convert_gl.hpp"

#include "gl/egl_import.hpp"
#include "gl/pbo_storage.hpp"
#include "log.hpp"
#include "tensor_internal.hpp"

#include <algorithm>
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

/// Writes the byte `v` into texel (x, y) of `fbo` (every channel) and waits for the GPU.
void write_probe_byte(const Api& gl, GLuint fbo, size_t x, size_t y, uint8_t v)
{
    gl.glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    gl.glEnable(GL_SCISSOR_TEST);
    gl.glScissor(GLint(x), GLint(y), 1, 1);
    const float f = (float(v) + 0.25f) / 255.f;
    gl.glClearColor(f, f, f, f);
    gl.glClear(GL_COLOR_BUFFER_BIT);
    gl.glDisable(GL_SCISSOR_TEST);
    gl.glBindFramebuffer(GL_FRAMEBUFFER, 0);
    gl.glFinish();
}

/// The request for a grid of `t`'s buffer: rows of `stride` bytes from `offset`, `width`
/// texels of `fourcc` wide, `height` rows.
ImportRequest grid_request(const TensorDyn& t, int fd, uint32_t buffer, size_t offset,
                           uint32_t width, uint32_t height, uint32_t stride, uint32_t fourcc)
{
    ImportRequest req;
    req.key = {t.buffer_identity().id(), buffer, offset, width, height, stride, fourcc, 0};
    req.alive = t.buffer_identity().weak();
    req.image.width = width;
    req.image.height = height;
    req.image.fourcc = fourcc;
    req.image.planes = {{fd, offset, stride}};
    return req;
}

/// A PBO the converter may use (`role` "source" or "destination", `use` "converting it" or
/// "converting into it"): one of its own context, not mapped by the CPU.
Result<void> check_pbo(const PboStorage& pbo, uint64_t serial, const char* role, const char* use)
{
    if (pbo.owner_serial() != serial)
        return make_error(ErrorCode::InvalidArgument,
                          std::string(role) + " PBO '" + pbo.name() +
                              "' belongs to another GL context than the converter's "
                              "(allocate it from GlContext::shared())");
    if (pbo.is_mapped())
        return make_error(ErrorCode::InvalidArgument, std::string(role) + " PBO '" + pbo.name() +
                                                          "' is mapped for " + pbo.mapped_by() +
                                                          "; release its maps before " + use);
    return {};
}

Result<void> ensure_map(const TensorDyn& src, std::optional<RawMap>& map)
{
    if (map)
        return {};
    auto m = src.map_raw(CpuAccess::Read);
    if (!m)
        return unexpected(std::move(m).error());
    map.emplace(std::move(*m));
    return {};
}

/// The CPU's first byte of source plane `p` (planar RGB: one buffer, planes strides[0] apart).
const uint8_t* plane_bytes(const TensorDyn& src, const RawMap& map, size_t p, bool planar_rgb)
{
    return planar_rgb ? map.bytes() + p * size_t(src.strides()[0]) : map.plane(p).data;
}

} // namespace

// ---- sources ----------------------------------------------------------------------------------

Result<std::array<ConvertBackend::SourcePlane, 3>>
ConvertBackend::sources_from_tensor(const TensorDyn& src, std::optional<RawMap>& map)
{
    std::array<SourcePlane, 3> out{};
    std::array<std::optional<ImportKey>, 3> keys{};
    if (direct_ && direct_->tiled()) {
        // A tiled frame has one reader: the direct import with its modifier. Byte grids or an
        // upload would read its tiles as rows.
        if (TensorAccess::storage(src)->memory() != TensorMemory::Dma || src.plane_fd(0) < 0)
            return make_error(ErrorCode::NotSupported,
                              "'" + src.name() + "' is no DMA-BUF, but the stream's drm-format " +
                                  direct_->drm_format() +
                                  " is tiled: only importing its planes with that modifier "
                                  "reads it");
        auto d = direct_->acquire(*cache_, src, map, counters_, vao_);
        if (!d)
            return unexpected(std::move(d).error());
        out[0] = {*d, 0, 0, true};
        return out;
    }
    // A YUV frame in DMA-BUFs: one direct import of all its planes first, where the driver
    // can take it and its pixels pass; else the planes as byte grids below.
    if (direct_ && direct_->active() && TensorAccess::storage(src)->memory() == TensorMemory::Dma &&
        src.plane_fd(0) >= 0) {
        auto d = direct_->acquire(*cache_, src, map, counters_, vao_);
        if (d) {
            out[0] = {*d, 0, 0, true};
            return out;
        }
        ET_LOG_DEBUG(kCat, "'%s' not imported directly: %s", src.name().c_str(),
                     d.error().message().c_str());
    }
    for (size_t p = 0; p < params_.src->planes; ++p) {
        auto w = source_window(src, p);
        if (!w)
            return unexpected(std::move(w).error());
        std::string declined;
        if (w->storage->memory() == TensorMemory::Dma && w->fd >= 0) {
            auto g = grid_source(src, p, *w, keys, out, map);
            if (g) {
                out[p] = *g;
                continue;
            }
            ++counters_.zero_copy_declines;
            declined = g.error().message();
            ET_LOG_DEBUG(kCat, "source plane %zu of '%s' uploaded, not imported: %s", p,
                         src.name().c_str(), declined.c_str());
        }
        if (auto u = upload_source(src, p, *w, map); !u) {
            // A DMA-BUF that can be neither imported nor mapped (device memory of another
            // driver): both reasons, or the user sees only the mmap's.
            if (declined.empty())
                return unexpected(std::move(u).error());
            return unexpected(u.error().with_context("source plane " + std::to_string(p) + " of '" +
                                                     src.name() + "' can be neither imported (" +
                                                     declined + ") nor uploaded"));
        }
        out[p] = {upload_tex_[p], 0, 0};
    }
    return out;
}

Result<ConvertBackend::PlaneWindow> ConvertBackend::source_window(const TensorDyn& src,
                                                                  size_t p) const
{
    const bool planar_rgb = params_.src->format == ConvertFormat::PlanarRgb;
    const bool chroma = !planar_rgb && p == 1;
    PlaneWindow w;
    w.storage = chroma ? TensorAccess::chroma_storage(src) : TensorAccess::storage(src);
    // A one-buffer frame's planes share its grid; a from_planes chroma buffer has its own.
    w.own_buffer = chroma && w.storage != TensorAccess::storage(src);
    w.fd = src.plane_fd(chroma ? 1 : 0);
    if (planar_rgb) {
        w.offset = src.offset() + p * size_t(src.strides()[0]);
        w.stride = size_t(src.strides()[1]);
        return w;
    }
    auto pl = src.plane_layout(p);
    if (!pl)
        return unexpected(std::move(pl).error());
    w.offset = pl->offset;
    w.stride = pl->stride;
    return w;
}

Result<ConvertBackend::SourcePlane>
ConvertBackend::grid_source(const TensorDyn& src, size_t p, const PlaneWindow& w,
                            std::array<std::optional<ImportKey>, 3>& keys,
                            const std::array<SourcePlane, 3>& out, std::optional<RawMap>& map)
{
    const GlInfo& info = worker_->info();
    if (!info.dma_buf_import)
        return make_error(ErrorCode::NotSupported,
                          "the EGL display lacks EGL_EXT_image_dma_buf_import");
    const size_t stride = w.stride, rb = src_row_bytes_[p], rows = src_rows_[p];
    const size_t max = size_t(info.max_texture_size);
    // The plane's origin in the grid of the whole buffer; a plane that would wrap a row is a
    // grid of its own from its offset.
    size_t goff = 0, x = stride ? w.offset % stride : 0, y = stride ? w.offset / stride : 0;
    if (stride && x + rb > stride) {
        goff = w.offset;
        x = y = 0;
    }
    const size_t grid_rows = stride ? std::min((w.storage->capacity() - goff) / stride, max) : 0;
    if (!stride || stride > max || y + rows > grid_rows)
        return make_error(ErrorCode::NotSupported,
                          "its " + std::to_string(stride) + "-byte rows exceed the texture limit");
    ImportRequest req = grid_request(src, w.fd, w.own_buffer ? 1u : 0u, goff, uint32_t(stride),
                                     uint32_t(grid_rows), uint32_t(stride), kFourccR8);
    // Pixels, not return codes: read rows of the import back and compare them with the
    // buffer's bytes.
    req.verify = [&, p, x, y, stride](GLuint, GLuint fbo) {
        return verify_grid_source(src, p, x, y, stride, fbo, map);
    };
    // Planes of one buffer share its import: one lookup per buffer and frame.
    for (size_t q = 0; q < p; ++q)
        if (keys[q] && *keys[q] == req.key)
            return SourcePlane{out[q].texture, int(x), int(y)};
    auto img = cache_->acquire(req);
    if (!img)
        return unexpected(std::move(img).error());
    keys[p] = req.key;
    return SourcePlane{img->texture, int(x), int(y)};
}

std::string ConvertBackend::verify_grid_source(const TensorDyn& src, size_t p, size_t x, size_t y,
                                               size_t stride, GLuint fbo,
                                               std::optional<RawMap>& map)
{
    if (!fbo)
        return "no framebuffer to read the import back through";
    if (auto m = ensure_map(src, map); !m)
        return m.error().message();
    const uint8_t* cpu = plane_bytes(src, *map, p, params_.src->format == ConvertFormat::PlanarRgb);
    const size_t rb = src_row_bytes_[p], rows = src_rows_[p];
    const size_t n = std::min<size_t>(rb, 256);
    std::string bad =
        compare_readback(*worker_, fbo, 1, x, y, n, {0, rows / 2, rows - 1}, cpu, stride);
    if (bad.empty() && rb > n)
        bad = compare_readback(*worker_, fbo, 1, x + rb - n, y, n, {0, rows - 1}, cpu + rb - n,
                               stride);
    return bad;
}

Result<void> ConvertBackend::upload_source(const TensorDyn& src, size_t p, const PlaneWindow& w,
                                           std::optional<RawMap>& map)
{
    if (w.storage->memory() == TensorMemory::Pbo) {
        const auto* pbo = static_cast<const PboStorage*>(w.storage.get());
        EDGETENSOR_TRY(check_pbo(*pbo, worker_->serial(), "source", "converting it"));
        return upload(p, nullptr, w.stride, pbo->buffer(), w.offset);
    }
    EDGETENSOR_TRY(ensure_map(src, map));
    const bool planar_rgb = params_.src->format == ConvertFormat::PlanarRgb;
    return upload(p, plane_bytes(src, *map, p, planar_rgb), w.stride, 0, 0);
}

// ---- the destination ----------------------------------------------------------------------------

Result<ConvertBackend::Target> ConvertBackend::target_from_tensor(const TensorDyn& dst, size_t base,
                                                                  size_t rs, size_t ps,
                                                                  std::optional<RawMap>& map)
{
    Target t;
    t.unit = unit_for(base, rs, ps);
    t.rs = rs;
    t.ps = ps;
    const auto& storage = TensorAccess::storage(dst);
    if (storage->memory() == TensorMemory::Pbo) {
        const auto* pbo = static_cast<const PboStorage*>(storage.get());
        EDGETENSOR_TRY(check_pbo(*pbo, worker_->serial(), "destination", "converting into it"));
        t.pack_pbo = pbo->buffer();
        t.base = base;
        ++counters_.readbacks;
        return t;
    }
    if (storage->memory() == TensorMemory::Dma && dst.fd() >= 0) {
        auto g = grid_target(dst, base, t);
        if (g)
            return t;
        ++counters_.zero_copy_declines;
        ET_LOG_DEBUG(kCat, "destination '%s' written by readback, not rendered into: %s",
                     dst.name().c_str(), g.error().message().c_str());
    }
    auto m = dst.map_raw(CpuAccess::Write);
    if (!m)
        return unexpected(std::move(m).error());
    map.emplace(std::move(*m));
    t.host = map->bytes();
    ++counters_.readbacks;
    return t;
}

Result<void> ConvertBackend::grid_target(const TensorDyn& dst, size_t base, Target& t)
{
    const GlInfo& info = worker_->info();
    const size_t u = size_t(t.unit), rs = t.rs, ps = t.ps;
    const size_t max = size_t(info.max_texture_size);
    const size_t x = base % rs, y0 = base / rs;
    const size_t grid_rows = std::min(TensorAccess::storage(dst)->capacity() / rs, max);
    const size_t last = y0 + (out_planes_ - 1) * (ps / rs);
    if (!info.dma_buf_import)
        return make_error(ErrorCode::NotSupported,
                          "the EGL display lacks EGL_EXT_image_dma_buf_import");
    if (rs / u > max || x % u || x + row_bytes_ > rs || (out_planes_ > 1 && ps % rs) ||
        last + params_.dst_height > grid_rows)
        return make_error(ErrorCode::NotSupported, "its layout is not a rectangle of " +
                                                       std::to_string(u) +
                                                       "-byte texels within the texture limit");
    ImportRequest req = grid_request(dst, dst.fd(), 0, 0, uint32_t(rs / u), uint32_t(grid_rows),
                                     uint32_t(rs), u == 4 ? kFourccAbgr8888 : kFourccR8);
    req.render_target = true;
    req.verify = [&, rs, x, y0, u](GLuint, GLuint fbo) {
        return verify_grid_target(dst, base, rs, x, y0, u, fbo);
    };
    auto img = cache_->acquire(req);
    if (!img)
        return unexpected(std::move(img).error());
    t.direct = true;
    t.framebuffer = img->framebuffer;
    t.x0 = int(x / u);
    for (size_t k = 0; k < out_planes_; ++k)
        t.y0[k] = int(y0 + k * (out_planes_ > 1 ? ps / rs : 0));
    return {};
}

// Read the import back against the buffer first (an import the driver cannot reach reads
// garbage, and rendering into one may fault), then write a probe through it and look for it in
// the buffer.
std::string ConvertBackend::verify_grid_target(const TensorDyn& dst, size_t base, size_t rs,
                                               size_t x, size_t y0, size_t u, GLuint fbo)
{
    {
        auto m = dst.map_allocation(CpuAccess::Write);
        if (!m)
            return m.error().message();
        const size_t n = std::min<size_t>(row_bytes_, 256) / u * u;
        std::string bad = compare_readback(*worker_, fbo, u, x / u, y0, n,
                                           {0, params_.dst_height - 1}, m->bytes() + base, rs);
        if (!bad.empty())
            return bad;
    }
    for (const uint8_t v : {uint8_t(0xa5), uint8_t(0x5a)}) {
        write_probe_byte(worker_->gl(), fbo, x / u, y0, v);
        // Mapped after the GPU wrote, so the sync bracket sees its writes.
        auto m = dst.map_allocation(CpuAccess::Write);
        if (!m)
            return m.error().message();
        const uint8_t got = m->bytes()[base];
        if (got != v)
            return "a probe byte " + std::to_string(v) + " written through the import reads " +
                   std::to_string(got) + " in the buffer";
    }
    return {};
}

} // namespace edgetensor::detail::gl
