// SPDX-License-Identifier: MIT
//
// What the GL converter imports directly (dma_buf_formats.hpp), and the public functions that
// use it: GlContext::dma_buf_formats(), GlContext::shared_dma_buf_formats() and
// gl_set_source_modifier().

#include "gl/dma_buf_formats.hpp"

#include "gl/convert_gl.hpp"
#include "gl/convert_hook.hpp"
#include "gl/gl_worker.hpp"
#include "log.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

namespace edgetensor::detail::gl
{
namespace
{

constexpr const char* kCat = "gl";
// DRM_FORMAT_MOD_INVALID: "no explicit modifier", never a layout to import with.
constexpr uint64_t kDrmFormatModInvalid = 0x00ffffffffffffffull;

// The YUV formats of the direct import, each FourCC once.
std::vector<uint32_t> direct_fourccs()
{
    std::vector<uint32_t> out;
    for (ConvertFormat f :
         {ConvertFormat::Nv12, ConvertFormat::Nv21, ConvertFormat::Nv16, ConvertFormat::Nv24,
          ConvertFormat::I420, ConvertFormat::Yuy2, ConvertFormat::Uyvy, ConvertFormat::Vyuy})
        if (auto fc = drm_fourcc_of(f); fc && std::find(out.begin(), out.end(), *fc) == out.end())
            out.push_back(*fc);
    return out;
}

// Why no frame at all may be imported directly here (empty: some may).
std::string direct_off_everywhere(const GlInfo& info, const char* env_direct)
{
    if (env_direct && std::strcmp(env_direct, "0") == 0)
        return "EDGETENSOR_GL_DIRECT=0";
    if (info.software && !(env_direct && std::strcmp(env_direct, "1") == 0))
        return "a software renderer (" + info.renderer + "); EDGETENSOR_GL_DIRECT=1 tries it there";
    if (!info.yuv_external)
        return "the GL lacks GL_OES_EGL_image_external_essl3";
    return {};
}

// What each display imports, asked once per display and process (dma_buf_formats_of()).
std::mutex g_formats_mu;
std::map<std::string, GlDmaBufFormats>& formats_by_display()
{
    static std::map<std::string, GlDmaBufFormats> by_display;
    return by_display;
}

std::string display_key(const GlInfo& info)
{
    return info.platform + "|" + info.device + "|" + info.renderer;
}

std::optional<GlDmaBufFormats> cached_formats(const GlInfo& info)
{
    std::lock_guard lock(g_formats_mu);
    const auto& by_display = formats_by_display();
    if (auto it = by_display.find(display_key(info)); it != by_display.end())
        return it->second;
    return std::nullopt;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && s.front() == ' ')
        s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ')
        s.remove_suffix(1);
    return s;
}

} // namespace

GlDmaBufFormats importable_dma_buf_formats(const GlInfo& info, const char* env_direct,
                                           const FormatQuery& query)
{
    GlDmaBufFormats out;
    if (!info.dma_buf_import) {
        out.note = "the EGL display lacks EGL_EXT_image_dma_buf_import";
        return out;
    }
    const std::string no_tiled = direct_off_everywhere(info, env_direct);
    for (uint32_t fc : direct_fourccs()) {
        const DmaBufFormatSupport fs = query(fc);
        if (!fs.queried) {
            out = {};
            out.note = "the display does not list its DMA-BUF formats "
                       "(EGL_EXT_image_dma_buf_import_modifiers)";
            return out;
        }
        out.queried = true;
        if (!fs.listed)
            continue;
        GlDmaBufFormat f{fc, {}};
        if (fs.linear)
            f.modifiers.push_back(kDrmFormatModLinear);
        // External-only modifiers too: the direct import samples GL_TEXTURE_EXTERNAL_OES.
        if (no_tiled.empty())
            for (const DmaBufModifier& m : fs.modifiers)
                if (m.modifier != kDrmFormatModLinear && m.modifier != kDrmFormatModInvalid &&
                    std::find(f.modifiers.begin(), f.modifiers.end(), m.modifier) ==
                        f.modifiers.end())
                    f.modifiers.push_back(m.modifier);
        if (!f.modifiers.empty())
            out.formats.push_back(std::move(f));
    }
    if (!no_tiled.empty())
        out.note = "tiled modifiers are not listed: direct imports are off (" + no_tiled + ")";
    return out;
}

Result<GlDmaBufFormats> parse_dma_buf_formats(std::string_view text)
{
    GlDmaBufFormats out;
    out.queried = true;
    out.note = "EDGETENSOR_GL_DMABUF_MODIFIERS";
    auto bad = [](std::string_view entry, const char* why) {
        return make_error(ErrorCode::InvalidArgument, "EDGETENSOR_GL_DMABUF_MODIFIERS entry \"" +
                                                          std::string(entry) + "\": " + why +
                                                          " (want FOURCC:0xMOD[,0xMOD...][;...])");
    };
    while (!text.empty()) {
        const size_t semi = text.find(';');
        const std::string_view entry = trim(text.substr(0, semi));
        text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
        if (entry.empty())
            continue;
        const size_t colon = entry.find(':');
        if (colon == std::string_view::npos || colon == 0 || colon > 4)
            return bad(entry, "no FourCC of 1 to 4 characters before ':'");
        GlDmaBufFormat f;
        for (size_t k = 0; k < 4; ++k)
            f.fourcc |= uint32_t(uint8_t(k < colon ? entry[k] : ' ')) << (8 * k);
        std::string_view mods = entry.substr(colon + 1);
        while (!mods.empty()) {
            const size_t comma = mods.find(',');
            const std::string m(trim(mods.substr(0, comma)));
            mods = comma == std::string_view::npos ? std::string_view() : mods.substr(comma + 1);
            char* end = nullptr;
            errno = 0;
            const unsigned long long v = std::strtoull(m.c_str(), &end, 16);
            if (m.empty() || !end || *end || errno)
                return bad(entry, "a modifier is not a hex number");
            f.modifiers.push_back(uint64_t(v));
        }
        if (f.modifiers.empty())
            return bad(entry, "no modifier");
        out.formats.push_back(std::move(f));
    }
    return out;
}

std::optional<GlDmaBufFormats> replacement_dma_buf_formats()
{
    const char* e = std::getenv("EDGETENSOR_GL_DMABUF_MODIFIERS");
    if (!e || !*e)
        return std::nullopt;
    auto parsed = parse_dma_buf_formats(e);
    if (parsed)
        return std::move(*parsed);
    // Once per value: tensorconvert asks at every caps query, and the driver's answer it falls
    // back to may come from the cache without a word otherwise.
    static std::mutex mu;
    static std::string warned;
    std::lock_guard<std::mutex> lock(mu);
    if (warned != e) {
        warned = e;
        ET_LOG_WARNING(kCat, "%s; asking the driver instead", parsed.error().message().c_str());
    }
    return std::nullopt;
}

GlDmaBufFormats dma_buf_formats_of(Worker& w)
{
    if (auto replaced = replacement_dma_buf_formats())
        return std::move(*replaced);
    const GlInfo& info = w.info();
    if (auto known = cached_formats(info))
        return std::move(*known);
    auto r = w.call<GlDmaBufFormats>([&]() -> Result<GlDmaBufFormats> {
        return importable_dma_buf_formats(info, std::getenv("EDGETENSOR_GL_DIRECT"),
                                          [&](uint32_t fc) { return query_dma_buf_format(w, fc); });
    });
    GlDmaBufFormats f = r ? std::move(*r) : GlDmaBufFormats{};
    std::string list;
    // Appended piecewise: `"" + std::string` makes GCC 12 at -O3 report a -Wrestrict overlap
    // that cannot happen (GCC bug 105329), as in fault.cpp.
    for (const GlDmaBufFormat& d : f.formats)
        for (uint64_t m : d.modifiers) {
            if (!list.empty())
                list += ' ';
            list += drm_format_string(d.fourcc, m);
        }
    ET_LOG_INFO(kCat, "DMA-BUF formats imported directly on %s: %s%s%s", info.renderer.c_str(),
                list.empty() ? "none" : list.c_str(), f.note.empty() ? "" : "; ", f.note.c_str());
    std::lock_guard lock(g_formats_mu);
    return formats_by_display().emplace(display_key(info), std::move(f)).first->second;
}

Result<void> ConverterHook::set_source_modifier(Converter& conv, uint64_t modifier)
{
    const auto fc = drm_fourcc_of(conv.config().src_format);
    const std::string name = drm_format_string(fc.value_or(0), modifier);
    if (!conv.gl_) {
        if (modifier == kDrmFormatModLinear)
            return {};
        return make_error(ErrorCode::InvalidArgument,
                          "drm-format " + name +
                              " is tiled or compressed: the CPU engine reads linear rows only "
                              "(compute=gl imports such frames where the driver lists it)");
    }
    if (modifier != kDrmFormatModLinear) {
        if (!fc) {
            char hex[24];
            std::snprintf(hex, sizeof hex, "0x%016" PRIx64, modifier);
            return make_error(ErrorCode::NotSupported,
                              std::string("modifier ") + hex +
                                  ": an RGB-family source is imported as byte grids, linear only");
        }
        const GlDmaBufFormats formats = dma_buf_formats_of(*conv.gl_->worker_ptr());
        if (!formats.lists(*fc, modifier)) {
            std::string list;
            for (const GlDmaBufFormat& d : formats.formats)
                if (d.fourcc == *fc)
                    for (uint64_t m : d.modifiers)
                        list += (list.empty() ? "" : ", ") + drm_format_string(d.fourcc, m);
            return make_error(
                ErrorCode::NotSupported,
                "drm-format " + name + " is not one this GL display imports (" +
                    (list.empty() ? std::string("none of ") + name.substr(0, 4) : list) +
                    (formats.note.empty() ? "" : "; " + formats.note) + ")");
        }
    }
    return conv.gl_->set_source_modifier(modifier);
}

} // namespace edgetensor::detail::gl

namespace edgetensor
{

GlDmaBufFormats GlContext::dma_buf_formats() const
{
    return detail::gl::dma_buf_formats_of(*worker_);
}

GlDmaBufFormats GlContext::shared_dma_buf_formats()
{
    // Probed once per process: a host without GL answers every later call without an EGL
    // initialisation.
    auto probed = probe();
    if (!probed) {
        GlDmaBufFormats none;
        none.note = probed.error().message();
        return none;
    }
    if (auto replaced = detail::gl::replacement_dma_buf_formats())
        return std::move(*replaced);
    // The shared worker stops with its last handle, but probe() names its display, whose answer
    // dma_buf_formats_of() keeps once asked: a caller asking per caps query starts a GL thread
    // only the first time.
    if (auto known = detail::gl::cached_formats(*probed))
        return std::move(*known);
    auto w = detail::gl::shared_worker();
    if (!w) {
        GlDmaBufFormats none;
        none.note = w.error().message();
        return none;
    }
    return detail::gl::dma_buf_formats_of(**w);
}

Result<void> gl_set_source_modifier(Converter& conv, uint64_t modifier)
{
    return detail::gl::ConverterHook::set_source_modifier(conv, modifier);
}

} // namespace edgetensor
