// SPDX-License-Identifier: MIT
//
// The GL backend of one Converter: its program, its upload textures and render target, and its
// EGLImage import cache, all living on the shared GL context's thread.

#pragma once

#include "edgetensor/convert.hpp"
#include "gl/convert_shader.hpp"
#include "gl/direct_import.hpp"
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
    const std::shared_ptr<Worker>& worker_ptr() const noexcept { return worker_; }
    /// The DMA-BUF sources' DRM format modifier (gl_set_source_modifier): NotSupported with the
    /// reason when a tiled one cannot be imported directly in this conversion.
    Result<void> set_source_modifier(uint64_t modifier);

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
    // Where a tensor run's sources and destination come from (convert_gl_import.cpp).
    /// One source plane: its storage, where its rows start and how far apart, its fd.
    struct PlaneWindow {
        std::shared_ptr<Storage> storage;
        size_t offset = 0;
        size_t stride = 0;
        int fd = -1;
        bool own_buffer = false; ///< a from_planes chroma buffer (not plane 0's)
    };
    Result<std::array<SourcePlane, 3>> sources_from_tensor(const TensorDyn& src,
                                                           std::optional<RawMap>& map);
    Result<PlaneWindow> source_window(const TensorDyn& src, size_t p) const;
    /// Plane `p` of `src` in its imported grid (shared with an earlier plane of `out` in the
    /// same grid, per `keys`); NotSupported with the reason when it cannot be imported.
    Result<SourcePlane> grid_source(const TensorDyn& src, size_t p, const PlaneWindow& w,
                                    std::array<std::optional<ImportKey>, 3>& keys,
                                    const std::array<SourcePlane, 3>& out,
                                    std::optional<RawMap>& map);
    std::string verify_grid_source(const TensorDyn& src, size_t p, size_t x, size_t y,
                                   size_t stride, GLuint fbo, std::optional<RawMap>& map);
    Result<void> upload_source(const TensorDyn& src, size_t p, const PlaneWindow& w,
                               std::optional<RawMap>& map);
    Result<Target> target_from_tensor(const TensorDyn& dst, size_t base, size_t rs, size_t ps,
                                      std::optional<RawMap>& map);
    /// Makes `t` render straight into `dst`'s imported grid; NotSupported with the reason when
    /// it cannot.
    Result<void> grid_target(const TensorDyn& dst, size_t base, Target& t);
    std::string verify_grid_target(const TensorDyn& dst, size_t base, size_t rs, size_t x,
                                   size_t y0, size_t u, GLuint fbo);
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
    std::optional<DirectImport> direct_; // YUV DMA-BUF sources as one external image

    mutable std::mutex stats_mu_;
    GlImportStats published_; // guarded by stats_mu_
};

} // namespace edgetensor::detail::gl
