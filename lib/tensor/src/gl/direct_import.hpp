// SPDX-License-Identifier: MIT
//
// The direct YUV import of one GL converter: ONE EGLImage of a YUV DMA-BUF frame's native DRM
// format with all its planes, sampled as samplerExternalOES so the driver converts it to RGB.
// Tried only where plan_direct() allows it, and checked by pixels when first imported: a probe
// shader reads the driver's RGB at a grid of source pixels back (the GL readback here), and
// judge_probe() holds it to the engine's function (direct_check.hpp). One decline ends the
// direct path for the converter: the driver's conversion is the same for every frame of one
// configuration. GL-thread only; made and destroyed on it.

#pragma once

#include "edgetensor/gl.hpp"
#include "edgetensor/tensor_dyn.hpp"
#include "edgetensor/tensor_map.hpp"
#include "gl/convert_shader.hpp"
#include "gl/gl_worker.hpp"
#include "gl/import_cache.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace edgetensor::detail::gl
{

class DirectImport
{
public:
    /// Decides whether `params`' source may be imported directly on `worker`'s display (the
    /// reason logged when not). Both outlive this object.
    DirectImport(const Worker& worker, const ShaderParams& params);
    /// Deletes the probe's GL objects: destroy on the GL thread.
    ~DirectImport();
    DirectImport(const DirectImport&) = delete;
    DirectImport& operator=(const DirectImport&) = delete;

    /// Direct imports may (still) be tried.
    bool active() const noexcept { return fourcc_.has_value(); }
    /// Why not, when not active().
    const std::string& off() const noexcept { return off_; }

    /// The frames' DRM format modifier (gl_set_source_modifier). A tiled one makes every
    /// acquire() import with it and skip the pixel check (the CPU cannot read tiles), and a
    /// refusal no longer ends the direct path (there is no other). NotSupported with off()
    /// when direct imports are off.
    Result<void> set_modifier(uint64_t modifier);
    /// A tiled (non-linear) modifier was set.
    bool tiled() const noexcept { return modifier_ != 0; }
    /// "NV12:0x0100000000000001" for messages.
    std::string drm_format() const;

    /// The texture (GL_TEXTURE_EXTERNAL_OES) of `src`'s planes in one EGLImage from `cache`,
    /// its pixels checked when it is new (mapping `src` into `map` for the CPU's view).
    /// NotSupported when a plane is no DMA-BUF, or the driver refuses the import or fails the
    /// check: counted in `counters.direct_declines` and the direct path ends. `vao` is the
    /// converter's (empty) vertex array, for the probe's draw.
    Result<GLuint> acquire(ImportCache& cache, const TensorDyn& src, std::optional<RawMap>& map,
                           GlImportStats& counters, GLuint vao);

private:
    /// The frame's planes as one image and the chroma planes' layout folded for the key.
    Result<DmaBufImage> image_of(const TensorDyn& src, uint64_t* chroma_fold) const;
    /// The pixel check of a new import `tex`: empty when it passes, else why not.
    std::string check(GLuint tex, const RawMap& map, GLuint vao);
    /// The probe shader's RGBA32UI target, made on first use.
    Result<void> make_probe();
    /// Draws the probe over the external image `tex` and reads its float bits back.
    Result<std::vector<uint32_t>> read_probe(GLuint tex, GLuint vao);

    const Worker& worker_;
    const ShaderParams& params_;
    // The source's DRM format while direct imports may be tried; else why not.
    std::optional<uint32_t> fourcc_;
    std::string off_;
    uint64_t modifier_ = 0; // DRM_FORMAT_MOD_LINEAR unless set_modifier() says otherwise
    uint32_t planned_fourcc_ = 0;
    std::optional<float> tolerance_; // EDGETENSOR_GL_DIRECT_TOLERANCE
    GLuint probe_prog_ = 0, probe_tex_ = 0, probe_fbo_ = 0;
    size_t probe_px_ = 0, probe_py_ = 0;
};

} // namespace edgetensor::detail::gl
