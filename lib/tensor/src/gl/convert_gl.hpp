// SPDX-License-Identifier: MIT
//
// The GL backend of one Converter: its program, its upload textures and render target, and its
// EGLImage import cache, all living on the shared GL context's thread.

#pragma once

#include "edgetensor/convert.hpp"
#include "gl/convert_shader.hpp"
#include "gl/gl_worker.hpp"
#include "gl/import_cache.hpp"

#include <array>
#include <memory>
#include <mutex>
#include <optional>

namespace edgetensor::detail::gl
{

/// Compiles and links the converter's vertex shader with `fragment_source`; NotSupported with
/// the driver's log when it rejects them.
Result<GLuint> build_program(const Worker& w, const std::string& fragment_source);

class ConvertBackend
{
public:
    /// Prepares the program and textures for `conv`'s configuration on `worker`. NotSupported
    /// when the configuration exceeds what the context can do (texture size limits, byte-wide
    /// readback), with the reason.
    static Result<std::unique_ptr<ConvertBackend>> create(std::shared_ptr<Worker> worker,
                                                          const Converter& conv);
    ~ConvertBackend();
    ConvertBackend(const ConvertBackend&) = delete;
    ConvertBackend& operator=(const ConvertBackend&) = delete;

    /// Arguments already checked by Converter::run(); rs/ps are the destination's row and plane
    /// strides in bytes.
    Result<void> run(const SourceFrame& src, const DestFrame& dst);
    Result<void> run(const TensorDyn& src, const TensorDyn& dst, size_t rs, size_t ps);
    GlImportStats stats() const;
    const Worker& worker() const noexcept { return *worker_; }

    /// Import cache bound: distinct buffers (pool size) of a stream, with room for re-keys.
    static constexpr size_t kCacheEntries = 32;

    // The GL-thread side of one run, shared by both entry points.
    struct SourcePlane {
        GLuint texture = 0;
        int ox = 0, oy = 0;
        bool external = false; ///< a direct YUV import (samplerExternalOES)
    };
    struct Target {
        int unit = 4;
        bool direct = false;
        GLuint framebuffer = 0; // direct: the imported destination's
        int x0 = 0;
        int y0[4] = {0, 0, 0, 0}; // direct: per output plane, in grid rows
        // Readback: host memory, or a pixel pack buffer at `base`.
        uint8_t* host = nullptr;
        GLuint pack_pbo = 0;
        size_t base = 0;
        size_t rs = 0;
        size_t ps = 0;
    };

    /// The direct YUV import's pixel check: the driver's RGB at the probe pixels may differ
    /// from the CPU engine's (0..255, unclamped; both clamped where the output does not blend
    /// source pixels) by at most this much, and on average (over
    /// probes and channels) by kDirectMeanTolerance. With the final rounding that keeps u8
    /// output within the engine's tolerances (max 2 levels, mean 0.5); float outputs scale
    /// both by min(std) / 100 (their tolerance is 1e-2 after normalisation).
    static constexpr float kDirectMaxTolerance = 1.5f;
    static constexpr float kDirectMeanTolerance = 0.5f;
    static constexpr size_t kProbeGrid = 32; ///< probe pixels per axis

private:
    ConvertBackend(std::shared_ptr<Worker> worker, const Converter& conv);
    Result<void> init();
    void release() noexcept;

    struct Program {
        GLuint id = 0;
        GLint tex[3] = {-1, -1, -1};
        GLint org[3] = {-1, -1, -1};
        GLint target = -1;
        GLint chan = -1;
    };
    struct Scratch {
        GLuint texture = 0;
        GLuint framebuffer = 0;
    };
    Result<const Program*> program(int unit, bool direct = false);
    Result<const Scratch*> scratch(int unit);
    Result<void> upload(size_t plane, const uint8_t* data, size_t stride, GLuint unpack_pbo,
                        size_t pbo_offset);
    Result<void> draw(const std::array<SourcePlane, 3>& planes, const Target& t);
    Result<std::array<SourcePlane, 3>> sources_from_tensor(const TensorDyn& src,
                                                           std::optional<RawMap>& map);
    // The direct YUV import (convert_gl_import.cpp).
    void init_direct();
    Result<SourcePlane> direct_source(const TensorDyn& src, std::optional<RawMap>& map);
    std::string check_direct(GLuint tex, const RawMap& map);
    Result<Target> target_from_tensor(const TensorDyn& dst, size_t base, size_t rs, size_t ps,
                                      std::optional<RawMap>& map);
    void publish_stats();
    int unit_for(size_t base, size_t rs, size_t ps) const noexcept;

    std::shared_ptr<Worker> worker_;
    ShaderParams params_;
    size_t row_bytes_ = 0;    // bytes of one output row (HWC) or one channel row (CHW)
    size_t out_planes_ = 1;   // CHW: channels
    size_t src_rows_[3] = {}; // rows and bytes per row of each source plane
    size_t src_row_bytes_[3] = {};

    // GL-thread state.
    Program programs_[4]; // [direct * 2 + (unit 4)]
    Scratch scratch_[2];
    GLuint vao_ = 0;
    GLuint upload_tex_[3] = {0, 0, 0};
    std::optional<EglImporter> importer_; // outlives cache_
    std::optional<ImportCache> cache_;
    GlImportStats counters_;
    // Direct YUV imports: the source's DRM format when they may be tried; else why not.
    std::optional<uint32_t> direct_fourcc_;
    std::string direct_off_;
    std::optional<float> direct_tolerance_; // EDGETENSOR_GL_DIRECT_TOLERANCE
    GLuint probe_prog_ = 0, probe_tex_ = 0, probe_fbo_ = 0;
    size_t probe_px_ = 0, probe_py_ = 0;

    mutable std::mutex stats_mu_;
    GlImportStats published_; // guarded by stats_mu_
};

} // namespace edgetensor::detail::gl
