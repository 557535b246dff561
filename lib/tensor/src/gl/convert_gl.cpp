// SPDX-License-Identifier: MIT
//
// The GL converter: sources reach the shader as byte textures (an imported DMA-BUF grid, or an
// upload), the destination is rendered either straight into an imported DMA-BUF (views select
// their rectangle of the one import with glViewport/glScissor) or into a scratch target read
// back with glReadPixels into a PBO or host memory. Every copy is counted.

#include "gl/convert_gl.hpp"

#include "gl/convert_hook.hpp"
#include "gl/pbo_storage.hpp"
#include "log.hpp"
#include "tensor_internal.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace edgetensor::detail::gl
{
namespace
{

constexpr const char* kCat = "gl";

int program_index(int unit, bool direct) noexcept
{
    return (direct ? 2 : 0) + (unit == 4 ? 1 : 0);
}

int scratch_index(int unit) noexcept
{
    return unit == 4 ? 1 : 0;
}

Result<GLuint> compile(const Worker& w, GLenum type, const std::string& src)
{
    const Api& gl = w.gl();
    const GLuint sh = gl.glCreateShader(type);
    const char* p = src.c_str();
    gl.glShaderSource(sh, 1, &p, nullptr);
    gl.glCompileShader(sh);
    GLint ok = 0;
    gl.glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048] = {};
        gl.glGetShaderInfoLog(sh, sizeof log - 1, nullptr, log);
        gl.glDeleteShader(sh);
        ET_LOG_DEBUG(kCat, "shader source:\n%s", src.c_str());
        return make_error(ErrorCode::NotSupported,
                          std::string("the GL driver rejected the converter's shader: ") + log);
    }
    return sh;
}

} // namespace

Result<GLuint> build_program(const Worker& w, const std::string& fragment_source)
{
    const Api& gl = w.gl();
    auto vs = compile(w, GL_VERTEX_SHADER, vertex_shader_source());
    if (!vs)
        return unexpected(std::move(vs).error());
    auto fs = compile(w, GL_FRAGMENT_SHADER, fragment_source);
    if (!fs) {
        gl.glDeleteShader(*vs);
        return unexpected(std::move(fs).error());
    }
    const GLuint id = gl.glCreateProgram();
    gl.glAttachShader(id, *vs);
    gl.glAttachShader(id, *fs);
    gl.glLinkProgram(id);
    gl.glDeleteShader(*vs);
    gl.glDeleteShader(*fs);
    GLint ok = 0;
    gl.glGetProgramiv(id, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048] = {};
        gl.glGetProgramInfoLog(id, sizeof log - 1, nullptr, log);
        gl.glDeleteProgram(id);
        return make_error(ErrorCode::NotSupported,
                          std::string("the GL driver cannot link the converter's program: ") + log);
    }
    return id;
}

ConvertBackend::ConvertBackend(std::shared_ptr<Worker> worker, const Converter& conv)
    : worker_(std::move(worker))
{
    const ConvertConfig& c = conv.config();
    params_.src = convert::spec_of(c.src_format);
    params_.cfg = c;
    params_.geo = conv.geometry();
    params_.applied = conv.applied_colorimetry();
    params_.dst_width = conv.dst_width();
    params_.dst_height = conv.dst_height();
    params_.channels = output_format_channels(c.dst_format);
    const size_t elem = dtype_size(c.dtype);
    const bool hwc = c.layout == TensorLayout::Hwc;
    row_bytes_ = hwc ? params_.dst_width * params_.channels * elem : params_.dst_width * elem;
    out_planes_ = hwc ? 1 : params_.channels;
    params_.unit = row_bytes_ % 4 == 0 ? 4 : 1;
    for (size_t p = 0; p < params_.src->planes; ++p) {
        src_rows_[p] = convert::plane_rows(*params_.src, p, c.src_height);
        src_row_bytes_[p] = convert::plane_row_bytes(*params_.src, p, c.src_width);
    }
}

Result<std::unique_ptr<ConvertBackend>> ConvertBackend::create(std::shared_ptr<Worker> worker,
                                                               const Converter& conv)
{
    if (!convert::spec_of(conv.config().src_format))
        return make_error(ErrorCode::InvalidArgument, "unknown source format");
    std::unique_ptr<ConvertBackend> b(new (std::nothrow) ConvertBackend(std::move(worker), conv));
    if (!b)
        return make_error(ErrorCode::AllocationFailed, "out of memory creating the GL converter");
    auto r = b->worker_->call<void>([&]() -> Result<void> {
        auto i = b->init();
        if (!i)
            b->release();
        return i;
    });
    if (!r)
        return unexpected(std::move(r).error());
    return b;
}

ConvertBackend::~ConvertBackend()
{
    (void)worker_->call<void>([&]() -> Result<void> {
        release();
        return {};
    });
}

void ConvertBackend::release() noexcept
{
    const Api& gl = worker_->gl();
    direct_.reset();
    cache_.reset();
    importer_.reset();
    for (auto& p : programs_)
        if (p.id)
            gl.glDeleteProgram(p.id);
    for (auto& s : scratch_) {
        if (s.framebuffer)
            gl.glDeleteFramebuffers(1, &s.framebuffer);
        if (s.texture)
            gl.glDeleteTextures(1, &s.texture);
    }
    for (GLuint& t : upload_tex_)
        if (t)
            gl.glDeleteTextures(1, &t);
    if (vao_)
        gl.glDeleteVertexArrays(1, &vao_);
    std::fill(std::begin(programs_), std::end(programs_), Program{});
    std::fill(std::begin(scratch_), std::end(scratch_), Scratch{});
    std::fill(std::begin(upload_tex_), std::end(upload_tex_), 0u);
    vao_ = 0;
}

Result<void> ConvertBackend::init()
{
    const Api& gl = worker_->gl();
    const int max = worker_->info().max_texture_size;
    const size_t w_units = row_bytes_ / size_t(params_.unit);
    if (w_units > size_t(max) || params_.dst_height > size_t(max))
        return make_error(ErrorCode::NotSupported,
                          "the output (" + std::to_string(row_bytes_) + "-byte rows, " +
                              std::to_string(params_.dst_height) +
                              " rows) exceeds this GL's texture size limit of " +
                              std::to_string(max));
    for (size_t p = 0; p < params_.src->planes; ++p) {
        if (src_row_bytes_[p] > size_t(max) || src_rows_[p] > size_t(max))
            return make_error(
                ErrorCode::NotSupported,
                "source plane " + std::to_string(p) + " (" + std::to_string(src_row_bytes_[p]) +
                    " bytes x " + std::to_string(src_rows_[p]) +
                    " rows) exceeds this GL's texture size limit of " + std::to_string(max));
        gl.glGenTextures(1, &upload_tex_[p]);
        gl.glBindTexture(GL_TEXTURE_2D, upload_tex_[p]);
        gl.glTexStorage2D(GL_TEXTURE_2D, 1, GL_R8, GLsizei(src_row_bytes_[p]),
                          GLsizei(src_rows_[p]));
        gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        gl.glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    }
    gl.glBindTexture(GL_TEXTURE_2D, 0);
    gl.glGenVertexArrays(1, &vao_);
    if (const GLenum e = worker_->take_gl_error(); e != GL_NO_ERROR)
        return make_error(ErrorCode::AllocationFailed,
                          "allocating the GL converter's textures failed (" + gl_error_name(e) +
                              ")");
    auto prog = program(params_.unit);
    if (!prog)
        return unexpected(std::move(prog).error());
    auto s = scratch(params_.unit);
    if (!s)
        return unexpected(std::move(s).error());
    importer_.emplace(*worker_);
    cache_.emplace(*importer_, kCacheEntries);
    direct_.emplace(*worker_, params_);
    return {};
}

Result<const ConvertBackend::Program*> ConvertBackend::program(int unit, bool direct)
{
    Program& p = programs_[program_index(unit, direct)];
    if (p.id)
        return &p;
    ShaderParams sp = params_;
    sp.unit = unit;
    sp.direct = direct;
    const Api& gl = worker_->gl();
    auto built = build_program(*worker_, fragment_shader_source(sp));
    if (!built)
        return unexpected(std::move(built).error());
    const GLuint id = *built;
    p.id = id;
    for (int k = 0; k < 3; ++k) {
        p.tex[k] = gl.glGetUniformLocation(id, ("u_tex" + std::to_string(k)).c_str());
        p.org[k] = gl.glGetUniformLocation(id, ("u_org" + std::to_string(k)).c_str());
    }
    p.target = gl.glGetUniformLocation(id, "u_target");
    p.chan = gl.glGetUniformLocation(id, "u_chan");
    return &p;
}

Result<const ConvertBackend::Scratch*> ConvertBackend::scratch(int unit)
{
    Scratch& s = scratch_[scratch_index(unit)];
    if (s.framebuffer)
        return &s;
    const Api& gl = worker_->gl();
    gl.glGenTextures(1, &s.texture);
    gl.glBindTexture(GL_TEXTURE_2D, s.texture);
    gl.glTexStorage2D(GL_TEXTURE_2D, 1, unit == 4 ? GL_RGBA8 : GL_R8,
                      GLsizei(row_bytes_ / size_t(unit)), GLsizei(params_.dst_height));
    gl.glBindTexture(GL_TEXTURE_2D, 0);
    gl.glGenFramebuffers(1, &s.framebuffer);
    gl.glBindFramebuffer(GL_FRAMEBUFFER, s.framebuffer);
    gl.glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, s.texture, 0);
    const GLenum status = gl.glCheckFramebufferStatus(GL_FRAMEBUFFER);
    GLint fmt = 0, type = 0;
    if (status == GL_FRAMEBUFFER_COMPLETE && unit == 1) {
        gl.glGetIntegerv(GL_IMPLEMENTATION_COLOR_READ_FORMAT, &fmt);
        gl.glGetIntegerv(GL_IMPLEMENTATION_COLOR_READ_TYPE, &type);
    }
    gl.glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE)
        return make_error(ErrorCode::NotSupported,
                          "the GL converter's render target is incomplete (status 0x" +
                              std::to_string(status) + ")");
    // Single bytes (rows whose length is not a multiple of 4) read back as GL_RED, which ES
    // only guarantees where the implementation says so.
    if (unit == 1 && (fmt != GL_RED || type != GL_UNSIGNED_BYTE))
        return make_error(ErrorCode::NotSupported,
                          "this GL cannot read back single bytes (GL_RED/GL_UNSIGNED_BYTE), which "
                          "an output row of " +
                              std::to_string(row_bytes_) +
                              " bytes (not a multiple of 4) or an unaligned destination needs");
    if (const GLenum e = worker_->take_gl_error(); e != GL_NO_ERROR)
        return make_error(ErrorCode::AllocationFailed,
                          "allocating the GL converter's render target failed (" +
                              gl_error_name(e) + ")");
    return &s;
}

int ConvertBackend::unit_for(size_t base, size_t rs, size_t ps) const noexcept
{
    return row_bytes_ % 4 == 0 && base % 4 == 0 && rs % 4 == 0 && ps % 4 == 0 ? 4 : 1;
}

Result<void> ConvertBackend::upload(size_t plane, const uint8_t* data, size_t stride,
                                    GLuint unpack_pbo, size_t pbo_offset)
{
    const Api& gl = worker_->gl();
    gl.glBindTexture(GL_TEXTURE_2D, upload_tex_[plane]);
    gl.glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    gl.glPixelStorei(GL_UNPACK_ROW_LENGTH, GLint(stride));
    const void* ptr = data;
    if (unpack_pbo) {
        gl.glBindBuffer(GL_PIXEL_UNPACK_BUFFER, unpack_pbo);
        ptr = reinterpret_cast<const void*>(pbo_offset);
    }
    gl.glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, GLsizei(src_row_bytes_[plane]),
                       GLsizei(src_rows_[plane]), GL_RED, GL_UNSIGNED_BYTE, ptr);
    if (unpack_pbo)
        gl.glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    gl.glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    gl.glBindTexture(GL_TEXTURE_2D, 0);
    ++counters_.uploads;
    if (const GLenum e = worker_->take_gl_error(); e != GL_NO_ERROR)
        return make_error(ErrorCode::Device, "uploading source plane " + std::to_string(plane) +
                                                 " failed (" + gl_error_name(e) + ")");
    return {};
}

Result<void> ConvertBackend::draw(const std::array<SourcePlane, 3>& planes, const Target& t)
{
    const Api& gl = worker_->gl();
    const bool external = planes[0].external;
    auto prog = program(t.unit, external);
    if (!prog)
        return unexpected(std::move(prog).error());
    const Program& p = **prog;
    const Scratch* s = nullptr;
    if (!t.direct) {
        auto sr = scratch(t.unit);
        if (!sr)
            return unexpected(std::move(sr).error());
        s = *sr;
    }
    gl.glUseProgram(p.id);
    gl.glBindVertexArray(vao_);
    // Planes in one texture (a one-buffer NV12 import) sample it through one texture unit:
    // binding an imported image to two units at once reads garbage on Mesa's kms_swrast.
    int units = 0;
    int unit_of[3] = {0, 0, 0};
    if (external) {
        // A direct YUV import: every plane in one external image.
        gl.glActiveTexture(GL_TEXTURE0);
        gl.glBindTexture(GL_TEXTURE_EXTERNAL_OES, planes[0].texture);
        gl.glUniform1i(p.tex[0], 0);
    }
    for (int k = 0; k < params_.src->planes && !external; ++k) {
        int u = units;
        for (int j = 0; j < k; ++j)
            if (planes[size_t(j)].texture == planes[size_t(k)].texture)
                u = unit_of[j];
        unit_of[k] = u;
        if (u == units) {
            gl.glActiveTexture(GLenum(GL_TEXTURE0 + u));
            gl.glBindTexture(GL_TEXTURE_2D, planes[size_t(k)].texture);
            ++units;
        }
        gl.glUniform1i(p.tex[k], u);
        gl.glUniform2i(p.org[k], planes[size_t(k)].ox, planes[size_t(k)].oy);
    }
    const GLsizei w = GLsizei(row_bytes_ / size_t(t.unit));
    const GLsizei h = GLsizei(params_.dst_height);
    for (size_t k = 0; k < out_planes_; ++k) {
        gl.glUniform1i(p.chan, GLint(k));
        if (t.direct) {
            // A view of the destination is a rectangle of its one import.
            gl.glBindFramebuffer(GL_FRAMEBUFFER, t.framebuffer);
            gl.glViewport(t.x0, t.y0[k], w, h);
            gl.glEnable(GL_SCISSOR_TEST);
            gl.glScissor(t.x0, t.y0[k], w, h);
            gl.glUniform2i(p.target, t.x0, t.y0[k]);
            gl.glDrawArrays(GL_TRIANGLES, 0, 3);
            gl.glDisable(GL_SCISSOR_TEST);
            continue;
        }
        gl.glBindFramebuffer(GL_FRAMEBUFFER, s->framebuffer);
        gl.glViewport(0, 0, w, h);
        gl.glUniform2i(p.target, 0, 0);
        gl.glDrawArrays(GL_TRIANGLES, 0, 3);
        gl.glPixelStorei(GL_PACK_ALIGNMENT, t.unit == 4 ? 4 : 1);
        gl.glPixelStorei(GL_PACK_ROW_LENGTH, GLint(t.rs / size_t(t.unit)));
        const GLenum fmt = t.unit == 4 ? GL_RGBA : GL_RED;
        if (t.pack_pbo) {
            gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, t.pack_pbo);
            gl.glReadPixels(0, 0, w, h, fmt, GL_UNSIGNED_BYTE,
                            reinterpret_cast<void*>(t.base + k * t.ps));
            gl.glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        } else {
            gl.glReadPixels(0, 0, w, h, fmt, GL_UNSIGNED_BYTE, t.host + k * t.ps);
        }
        gl.glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    }
    gl.glBindFramebuffer(GL_FRAMEBUFFER, 0);
    gl.glBindVertexArray(0);
    gl.glUseProgram(0);
    for (int k = 0; k < units; ++k) {
        gl.glActiveTexture(GLenum(GL_TEXTURE0 + k));
        gl.glBindTexture(GL_TEXTURE_2D, 0);
    }
    if (external)
        gl.glBindTexture(GL_TEXTURE_EXTERNAL_OES, 0);
    gl.glActiveTexture(GL_TEXTURE0);
    if (t.direct)
        gl.glFinish(); // CPU consumers of the DMA-BUF read it next
    if (const GLenum e = worker_->take_gl_error(); e != GL_NO_ERROR)
        return make_error(ErrorCode::Device, "the GL conversion failed (" + gl_error_name(e) + ")");
    return {};
}

void ConvertBackend::publish_stats()
{
    GlImportStats s = counters_;
    if (cache_) {
        const auto& c = cache_->stats();
        s.hits = c.hits;
        s.misses = c.misses;
        s.evictions = c.evictions;
        s.swept = c.swept;
        s.entries = c.entries;
    }
    std::lock_guard lock(stats_mu_);
    published_ = s;
}

GlImportStats ConvertBackend::stats() const
{
    std::lock_guard lock(stats_mu_);
    return published_;
}

Result<void> ConvertBackend::run(const SourceFrame& src, const DestFrame& dst)
{
    // Converter::run() has checked the planes, the pointer and the pitches.
    const SourceLayout& sl = *params_.src;
    // A one-row output may come with a row stride of 0.
    const size_t rs =
        params_.dst_height > 1 ? dst.row_stride : std::max(dst.row_stride, row_bytes_);
    Target t;
    t.unit = unit_for(reinterpret_cast<uintptr_t>(dst.data), rs, dst.plane_stride);
    t.host = dst.data;
    t.rs = rs;
    t.ps = dst.plane_stride;
    return worker_->call<void>([&]() -> Result<void> {
        if (direct_ && direct_->tiled())
            return make_error(ErrorCode::NotSupported,
                              "the stream's drm-format " + direct_->drm_format() +
                                  " is tiled: a mapped frame is tiles, not rows; run the "
                                  "converter on the DMA-BUF tensor");
        std::array<SourcePlane, 3> planes{};
        for (size_t p = 0; p < sl.planes; ++p) {
            EDGETENSOR_TRY(upload(p, src.planes[p].data,
                                  std::max(src.planes[p].stride, src_row_bytes_[p]), 0, 0));
            planes[p] = {upload_tex_[p], 0, 0};
        }
        ++counters_.readbacks;
        auto r = draw(planes, t);
        publish_stats();
        return r;
    });
}

Result<void> ConvertBackend::run(const TensorDyn& src, const TensorDyn& dst, size_t rs, size_t ps)
{
    // Converter::run() has checked both tensors and worked out the destination's strides.
    if (params_.dst_height == 1)
        rs = std::max(rs, row_bytes_);
    if (out_planes_ == 1)
        ps = 0;
    return worker_->call<void>([&]() -> Result<void> {
        std::optional<RawMap> smap, dmap;
        auto planes = sources_from_tensor(src, smap);
        if (!planes) {
            publish_stats();
            return unexpected(std::move(planes).error());
        }
        auto target = target_from_tensor(dst, dst.offset(), rs, ps, dmap);
        if (!target) {
            publish_stats();
            return unexpected(std::move(target).error());
        }
        auto r = draw(*planes, *target);
        publish_stats();
        return r;
    });
}

Result<void> ConvertBackend::set_source_modifier(uint64_t modifier)
{
    return worker_->call<void>([&]() -> Result<void> {
        if (!direct_)
            return make_error(ErrorCode::NotSupported, "the GL converter is not initialised");
        return direct_->set_modifier(modifier);
    });
}

// ---- the Converter's seam --------------------------------------------------------------------

namespace
{

/// Auto keeps the CPU unless the GL context runs on real hardware; the reason says which.
std::optional<std::string> auto_cpu_reason(const GlInfo& info)
{
    const char* allow = std::getenv("EDGETENSOR_GL_ALLOW_SOFTWARE");
    if (info.software && !(allow && std::strcmp(allow, "1") == 0))
        return "the GL renderer is a CPU rasteriser (" + info.renderer +
               "): the CPU engine is faster (EDGETENSOR_GL_ALLOW_SOFTWARE=1 or compute=gl uses "
               "it anyway)";
    return std::nullopt;
}

} // namespace

Result<void> ConverterHook::attach(Converter& conv)
{
    const ConvertCompute want = conv.config().compute;
    if (want == ConvertCompute::Cpu) {
        conv.compute_ = ConvertCompute::Cpu;
        conv.compute_reason_ = "requested";
        return {};
    }
    if (want != ConvertCompute::Auto && want != ConvertCompute::Gl)
        return make_error(ErrorCode::InvalidArgument,
                          "unknown compute backend code " + std::to_string(uint32_t(want)));
    const bool required = want == ConvertCompute::Gl;
    auto keep_cpu = [&](const std::string& why) -> Result<void> {
        conv.compute_ = ConvertCompute::Cpu;
        conv.compute_reason_ = why;
        ET_LOG_INFO(kCat, "compute=auto: using the CPU: %s", why.c_str());
        return {};
    };
    // The shaders write u8 as v and i8 as v - 128; quantized outputs are the CPU engine's.
    if (conv.config().quant) {
        const std::string why = "quantized outputs (ConvertConfig::quant) run on the CPU only";
        if (required)
            return make_error(ErrorCode::NotSupported, "compute=gl: " + why);
        return keep_cpu(why);
    }
    if (!required) {
        // Auto does not start a GL context just to find it is software: no DRM render node
        // (or EDGETENSOR_GL_DEVICE) means the only EGL display is a CPU rasteriser.
        if (auto why = software_only_reason())
            return keep_cpu(*why);
    }
    auto w = shared_worker();
    if (!w) {
        if (required)
            return make_error(w.error().code(),
                              "compute=gl: no GL context can be had here: " + w.error().message());
        return keep_cpu("no GL context: " + w.error().message());
    }
    if (!required)
        if (auto why = auto_cpu_reason((*w)->info()))
            return keep_cpu(*why);
    auto b = ConvertBackend::create(*w, conv);
    if (!b) {
        if (required)
            return make_error(b.error().code(),
                              "compute=gl cannot run this conversion: " + b.error().message());
        return keep_cpu("the GL backend cannot run this conversion: " + b.error().message());
    }
    conv.gl_.reset(b->release());
    conv.compute_ = ConvertCompute::Gl;
    conv.compute_reason_ = std::string(required ? "requested" : "auto") + ": " +
                           (*w)->info().renderer + " (" + (*w)->info().version + ")";
    return {};
}

Result<void> ConverterHook::run(Converter& conv, const SourceFrame& src, const DestFrame& dst)
{
    return conv.gl_->run(src, dst);
}

Result<void> ConverterHook::run(Converter& conv, const TensorDyn& src, const TensorDyn& dst,
                                const DestFrame& layout)
{
    return conv.gl_->run(src, dst, layout.row_stride, layout.plane_stride);
}

} // namespace edgetensor::detail::gl

namespace edgetensor
{

void Converter::GlDeleter::operator()(detail::gl::ConvertBackend* b) const noexcept
{
    delete b;
}

GlImportStats Converter::gl_stats() const noexcept
{
    return gl_ ? gl_->stats() : GlImportStats{};
}

} // namespace edgetensor
