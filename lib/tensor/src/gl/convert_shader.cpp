// SPDX-License-Identifier: MIT

#include "gl/convert_shader.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

namespace edgetensor::detail::gl
{
namespace
{

std::string f(double v)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", v);
    std::string s(b);
    if (s.find_first_of(".eEn") == std::string::npos)
        s += ".0";
    return s;
}

std::string i(size_t v)
{
    return std::to_string(v);
}

} // namespace

std::string probe_shader_source(size_t width, size_t height, size_t px, size_t py)
{
    return "#version 300 es\n"
           "#extension GL_OES_EGL_image_external_essl3 : require\n"
           "precision highp float;\n"
           "precision highp int;\n"
           "uniform highp samplerExternalOES u_ext;\n"
           "out uvec4 o_bits;\n"
           "const int W = " +
           i(width) + ", H = " + i(height) + ", PX = " + i(px) + ", PY = " + i(py) +
           ";\n"
           "int coord(int k, int n, int len) { return n > 1 ? k * (len - 1) / (n - 1) : 0; }\n"
           "void main() {\n"
           "    ivec2 t = ivec2(gl_FragCoord.xy);\n"
           "    vec2 at = vec2(float(coord(t.x, PX, W)), float(coord(t.y, PY, H))) + 0.5;\n"
           "    vec3 rgb = texture(u_ext, at / vec2(float(W), float(H))).rgb;\n"
           "    o_bits = uvec4(floatBitsToUint(rgb), 0u);\n"
           "}\n";
}

std::string vertex_shader_source()
{
    // One triangle covering the viewport; no attributes.
    return "#version 300 es\n"
           "void main() {\n"
           "    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));\n"
           "    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);\n"
           "}\n";
}

std::string fragment_shader_source(const ShaderParams& p)
{
    const ConvertConfig& c = p.cfg;
    const SourceLayout& s = *p.src;
    const ConvertGeometry& g = p.geo;
    const bool gray_out = c.dst_format == OutputFormat::Gray;
    const bool bgr = c.dst_format == OutputFormat::Bgr || c.dst_format == OutputFormat::Bgra;
    const bool hwc = c.layout == TensorLayout::Hwc;
    const size_t elem = dtype_size(c.dtype);

    const bool direct = p.direct && s.family == Family::Yuv && !gray_out;
    std::string src = "#version 300 es\n";
    if (direct)
        src += "#extension GL_OES_EGL_image_external_essl3 : require\n";
    src += "precision highp float;\n"
           "precision highp int;\n"
           "precision highp sampler2D;\n";
    if (direct)
        src += "uniform highp samplerExternalOES u_tex0;\n"
               "const vec2 SRC_SIZE = vec2(" +
               f(double(c.src_width)) + ", " + f(double(c.src_height)) + ");\n";
    else
        for (int k = 0; k < s.planes; ++k)
            src += "uniform sampler2D u_tex" + std::to_string(k) + ";\nuniform ivec2 u_org" +
                   std::to_string(k) + ";\n";
    src += "uniform ivec2 u_target;\n"
           "uniform int u_chan;\n"
           "out vec4 o_color;\n";
    src += "const int CROP_X = " + i(g.source.x) + ", CROP_Y = " + i(g.source.y) +
           ", CROP_W = " + i(g.source.width) + ", CROP_H = " + i(g.source.height) + ";\n";
    src += "const int CONT_X = " + i(g.content.x) + ", CONT_Y = " + i(g.content.y) +
           ", CONT_W = " + i(g.content.width) + ", CONT_H = " + i(g.content.height) + ";\n";
    src +=
        "const int CH = " + i(p.channels) + ", ELEM = " + i(elem) + ", UNIT = " + i(p.unit) + ";\n";

    // Normalisation per output channel and the padding colour in output order (0..255).
    std::array<double, 4> fill{};
    if (gray_out) {
        // In float, as the engine computes it.
        const float luma = 0.299f * c.fill[0] + 0.587f * c.fill[1] + 0.114f * c.fill[2];
        fill[0] = std::round(std::clamp(luma, 0.f, 255.f));
    } else {
        for (size_t k = 0; k < p.channels; ++k) {
            size_t from = k;
            if (bgr && k < 3)
                from = 2 - k;
            fill[k] = c.fill[from];
        }
    }
    src += "const vec4 FILL = vec4(" + f(fill[0]) + ", " + f(fill[1]) + ", " + f(fill[2]) + ", " +
           f(fill[3]) + ");\n";
    std::string mean = "const vec4 MEAN = vec4(", inv = "const vec4 INV_STD = vec4(";
    for (size_t k = 0; k < 4; ++k) {
        mean += f(k < p.channels ? c.mean[k] : 0.0) + (k < 3 ? ", " : ");\n");
        // The engine multiplies by a float reciprocal: the same float here.
        const float r = k < p.channels ? 1.f / c.std[k] : 1.f;
        inv += f(double(r)) + (k < 3 ? ", " : ");\n");
    }
    src += mean + inv;

    // Byte fetch per plane (R8 texels: byte / 255).
    for (int k = 0; k < s.planes && !direct; ++k) {
        const std::string n = std::to_string(k);
        src += "float fetch" + n + "(int bx, int row) {\n    return floor(texelFetch(u_tex" + n +
               ", u_org" + n + " + ivec2(bx, row), 0).r * 255.0 + 0.5);\n}\n";
    }

    // One axis of the resampling map in exact integer arithmetic: source index
    // (x + 0.5) * src / dst - 0.5 = ((2x + 1) * src - dst) / (2 dst).
    const bool nearest = c.method == ResizeMethod::Nearest;
    src += "void axis(int x, int len, int dlen, int origin, out int i0, out int i1, out float w) "
           "{\n";
    if (nearest) {
        src += "    uint n = uint(2 * x + 1) * uint(len) / uint(2 * dlen);\n"
               "    i0 = origin + min(int(n), len - 1);\n"
               "    i1 = i0;\n"
               "    w = 0.0;\n";
    } else {
        src += "    uint num = uint(2 * x + 1) * uint(len);\n"
               "    uint den = uint(2 * dlen);\n"
               "    int j0 = 0;\n"
               "    float fr = 0.0;\n"
               "    if (num > uint(dlen)) {\n"
               "        uint m = num - uint(dlen);\n"
               "        j0 = int(m / den);\n"
               "        fr = float(m % den) / float(den);\n"
               "    }\n"
               "    if (j0 >= len - 1) { j0 = len - 1; fr = 0.0; }\n"
               "    i0 = origin + j0;\n"
               "    i1 = fr > 0.0 ? origin + min(j0 + 1, len - 1) : i0;\n"
               "    w = i1 == i0 ? 0.0 : fr;\n";
    }
    src += "}\n";

    // Direct: the driver's RGB at a source pixel, sampled at its centre (nearest: chroma is
    // its block's sample, as the engine replicates it). The matrix is linear, so blending RGB
    // (rows first, then columns) equals the engine's blend of Y, U, V followed by the matrix,
    // as long as the driver does not clamp: the import's pixel check makes sure it does not.
    if (direct)
        src += "vec3 rgb_at(int a, int r) {\n"
               "    return texture(u_tex0, (vec2(float(a), float(r)) + 0.5) / SRC_SIZE).rgb * "
               "255.0;\n}\n";
    // Component k: rows blended first, then columns (the engine's order).
    for (int k = 0; k < s.ncomp && !direct; ++k) {
        const CompSpec& cs = s.comp[k];
        const std::string fetch = "fetch" + std::to_string(cs.plane);
        src += "float comp" + std::to_string(k) +
               "(int a0, int a1, float wx, int r0, int r1, float wy) {\n";
        src +=
            "    int c0 = " + i(cs.mul) + " * (a0 >> " + i(cs.hshift) + ") + " + i(cs.add) + ";\n";
        src +=
            "    int c1 = " + i(cs.mul) + " * (a1 >> " + i(cs.hshift) + ") + " + i(cs.add) + ";\n";
        src += "    int y0 = r0 >> " + i(s.vshift[cs.plane]) + ", y1 = r1 >> " +
               i(s.vshift[cs.plane]) + ";\n";
        src += "    float v0 = " + fetch + "(c0, y0);\n";
        src += "    float v1 = c1 == c0 ? v0 : " + fetch + "(c1, y0);\n";
        src += "    if (y1 != y0) {\n"
               "        v0 += (" +
               fetch + "(c0, y1) - v0) * wy;\n        v1 = c1 == c0 ? v0 : v1 + (" + fetch +
               "(c1, y1) - v1) * wy;\n    }\n";
        src += "    return v0 + (v1 - v0) * wx;\n}\n";
    }

    // The output pixel, channels in output order, 0..255, unrounded.
    src += "vec4 pixel(int x, int y) {\n"
           "    if (x < CONT_X || x >= CONT_X + CONT_W || y < CONT_Y || y >= CONT_Y + CONT_H)\n"
           "        return FILL;\n"
           "    int a0, a1, r0, r1;\n"
           "    float wx, wy;\n"
           "    axis(x - CONT_X, CROP_W, CONT_W, CROP_X, a0, a1, wx);\n"
           "    axis(y - CONT_Y, CROP_H, CONT_H, CROP_Y, r0, r1, wy);\n";
    const std::string args = "(a0, a1, wx, r0, r1, wy)";
    switch (s.family) {
    case Family::Yuv: {
        if (direct) {
            src += "    vec3 c00 = rgb_at(a0, r0), c10 = rgb_at(a1, r0);\n"
                   "    vec3 c01 = rgb_at(a0, r1), c11 = rgb_at(a1, r1);\n"
                   "    vec3 v0 = r1 != r0 ? c00 + (c01 - c00) * wy : c00;\n"
                   "    vec3 v1 = r1 != r0 ? c10 + (c11 - c10) * wy : c10;\n"
                   "    vec3 rgb = clamp(v0 + (v1 - v0) * wx, vec3(0.0), vec3(255.0));\n";
            src +=
                bgr ? "    return vec4(rgb.bgr, 255.0);\n}\n" : "    return vec4(rgb, 255.0);\n}\n";
            break;
        }
        // convert::yuv_to_rgb() in GLSL: the engine's gains, rounded to float as it rounds them.
        const auto k = convert::yuv_gains(p.applied);
        const float y_scale = float(k.ys), y_off = float(k.y_off), v_to_r = float(k.vr),
                    u_to_b = float(k.ub), u_to_g = float(k.ug), v_to_g = float(k.vg);
        src += "    float yy = (comp0" + args + " - " + f(y_off) + ") * " + f(y_scale) + ";\n";
        if (gray_out) {
            src += "    return vec4(clamp(yy, 0.0, 255.0));\n}\n";
            break;
        }
        src += "    float uu = comp1" + args + " - 128.0;\n";
        src += "    float vv = comp2" + args + " - 128.0;\n";
        src += "    vec3 rgb = clamp(vec3(yy + " + f(v_to_r) + " * vv, yy + " + f(u_to_g) +
               " * uu + " + f(v_to_g) + " * vv, yy + " + f(u_to_b) +
               " * uu), vec3(0.0), vec3(255.0));\n";
        src += bgr ? "    return vec4(rgb.bgr, 255.0);\n}\n" : "    return vec4(rgb, 255.0);\n}\n";
        break;
    }
    case Family::Rgb: {
        src += "    vec3 rgb = vec3(comp0" + args + ", comp1" + args + ", comp2" + args + ");\n";
        if (gray_out) {
            src += "    return vec4(clamp(0.299 * rgb.r + 0.587 * rgb.g + 0.114 * rgb.b, 0.0, "
                   "255.0));\n}\n";
            break;
        }
        const std::string alpha =
            s.has_alpha && p.channels == 4 ? "comp3" + args : std::string("255.0");
        src += bgr ? "    return vec4(rgb.bgr, " + alpha + ");\n}\n"
                   : "    return vec4(rgb, " + alpha + ");\n}\n";
        break;
    }
    case Family::Gray:
        src += "    float v = comp0" + args +
               ";\n"
               "    return vec4(v, v, v, 255.0);\n}\n";
        break;
    }

    // Element encodings (little-endian element bits).
    src += "uint f16_bits(float value) {\n"
           "    uint x = floatBitsToUint(value);\n"
           "    uint sign = x & 0x80000000u;\n"
           "    x ^= sign;\n"
           "    uint o;\n"
           "    if (x >= 0x47800000u) {\n"
           "        o = x > 0x7f800000u ? 0x7e00u : 0x7c00u;\n"
           "    } else if (x < 0x38800000u) {\n"
           "        o = floatBitsToUint(uintBitsToFloat(x) + 0.5) - 0x3f000000u;\n"
           "    } else {\n"
           "        uint odd = (x >> 13) & 1u;\n"
           "        o = (x + 0xc8000fffu + odd) >> 13;\n"
           "    }\n"
           "    return o | (sign >> 16);\n"
           "}\n";
    src += "uint encode(float v, int c) {\n";
    switch (c.dtype) {
    case DType::U8:
        src += "    return uint(floor(v + 0.5));\n";
        break;
    case DType::I8:
        src += "    return uint(floor(v + 0.5)) ^ 0x80u;\n";
        break;
    case DType::F16:
        src += "    return f16_bits((v - MEAN[c]) * INV_STD[c]);\n";
        break;
    default:
        src += "    return floatBitsToUint((v - MEAN[c]) * INV_STD[c]);\n";
        break;
    }
    src += "}\n";

    // main: the bytes of this texel, each from its output element.
    src += "void main() {\n"
           "    ivec2 t = ivec2(gl_FragCoord.xy) - u_target;\n"
           "    int row = t.y;\n"
           "    vec4 px = vec4(0.0);\n"
           "    int last = -1;\n"
           "    vec4 bytes = vec4(0.0);\n"
           "    for (int i = 0; i < UNIT; ++i) {\n"
           "        int b = t.x * UNIT + i;\n"
           "        int e = b / ELEM;\n";
    if (hwc)
        src += "        int x = e / CH;\n"
               "        int ch = e - x * CH;\n";
    else
        src += "        int x = e;\n"
               "        int ch = u_chan;\n";
    src += "        if (x != last) { px = pixel(x, row); last = x; }\n"
           "        uint bits = encode(px[ch], ch);\n"
           "        float byte = float((bits >> uint(8 * (b - e * ELEM))) & 0xffu);\n"
           // +0.25: unorm8 stores round(v * 255) or floor(v * 255 + 0.5); both give the byte.
           "        bytes[i] = (byte + 0.25) / 255.0;\n"
           "    }\n"
           "    o_color = bytes;\n"
           "}\n";
    return src;
}

} // namespace edgetensor::detail::gl
