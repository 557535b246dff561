// SPDX-License-Identifier: MIT
//
// The converter's GL path (ConvertCompute::Gl) against the CPU engine and the double-precision
// reference of tests/convert, with the CPU engine's tolerances: u8 max 2 levels / mean 0.5,
// floats 1e-2 after normalisation. Runs on Mesa llvmpipe here (uploads and readbacks: no
// EGL_EXT_image_dma_buf_import); the VM lane runs the DMA-BUF import paths.

#include "../convert/reference.hpp"
#include "gl/convert_gl.hpp"
#include "gl/convert_shader.hpp"
#include "gl_test_util.hpp"

#include <edgetensor/tensor.hpp>

#include <cmath>
#include <cstring>
#include <string>

namespace edgetensor::test
{
namespace
{

constexpr std::array<float, 4> kMean{123.675f, 116.28f, 103.53f, 10.f};
constexpr std::array<float, 4> kStd{58.395f, 57.12f, 57.375f, 64.f};

/// Largest difference between two tight outputs of `cfg`, in output units.
double max_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                const ConvertConfig& cfg, size_t w, size_t h)
{
    const size_t ch = output_format_channels(cfg.dst_format);
    double worst = 0.0;
    for (size_t c = 0; c < ch; ++c)
        for (size_t y = 0; y < h; ++y)
            for (size_t x = 0; x < w; ++x) {
                const double d =
                    std::fabs(read_raw(a, cfg, w, h, c, x, y) - read_raw(b, cfg, w, h, c, x, y));
                worst = std::max(worst, std::isnan(d) ? INFINITY : d);
            }
    return worst;
}

/// GL against the reference and against the CPU engine.
void expect_gl_matches(const Frame& fr, ConvertConfig cfg, const std::string& what)
{
    cfg.compute = ConvertCompute::Cpu;
    std::vector<uint8_t> cpu, gl;
    ASSERT_EQ(run_tight(fr, cfg, cpu), "") << what;
    cfg.compute = ConvertCompute::Gl;
    ASSERT_EQ(run_tight(fr, cfg, gl), "") << what;
    const Expected ref = reference(fr, cfg);
    const Errors e = compare(gl, cfg, ref);
    const bool is_float = cfg.dtype == DType::F32 || cfg.dtype == DType::F16;
    if (is_float) {
        EXPECT_LE(e.max, 1e-2) << what << " GL vs reference: " << e.describe();
    } else {
        EXPECT_LE(e.max, 2.0) << what << " GL vs reference: " << e.describe();
        EXPECT_LE(e.mean, 0.5) << what << " GL vs reference: " << e.describe();
    }
    // The CPU engine computes in 16-bit fixed point, within 0.15 of a level of the exact
    // result (convert.hpp): in float outputs that is 0.15 / std.
    double min_std = 1e30;
    for (size_t c = 0; c < output_format_channels(cfg.dst_format); ++c)
        min_std = std::min(min_std, double(std::fabs(cfg.std[c])));
    const double d = max_diff(gl, cpu, cfg, ref.width, ref.height);
    EXPECT_LE(d, is_float ? std::max(2e-2, 0.2 / min_std) : 2.0) << what << " GL vs CPU";
}

#define ET_GL_OR_SKIP()                                                                            \
    ET_GL_CONTEXT_OR_SKIP(gl_ctx_);                                                                \
    (void)gl_ctx_

TEST(GlConvert, EveryFormatBothMethodsAgainstCpuAndReference)
{
    ET_GL_OR_SKIP();
    for (const ConvertFormat fmt :
         {ConvertFormat::Nv12, ConvertFormat::Nv21, ConvertFormat::Nv16, ConvertFormat::Nv24,
          ConvertFormat::I420, ConvertFormat::Yuy2, ConvertFormat::Uyvy, ConvertFormat::Vyuy,
          ConvertFormat::Rgb, ConvertFormat::Bgr, ConvertFormat::Rgba, ConvertFormat::Bgra,
          ConvertFormat::Rgbx, ConvertFormat::Bgrx, ConvertFormat::Gray8,
          ConvertFormat::PlanarRgb}) {
        const Frame fr = make_frame(fmt, 321, 241, 11, 5);
        for (const ResizeMethod m : {ResizeMethod::Bilinear, ResizeMethod::Nearest})
            for (const auto& [w, h] : {std::pair<size_t, size_t>{160, 97}, {400, 300}, {1, 1}}) {
                ConvertConfig cfg = config_for(fr, ColorEncoding::Bt709, ColorRange::Limited);
                cfg.dst_width = w;
                cfg.dst_height = h;
                cfg.method = m;
                cfg.dst_format = OutputFormat::Rgba;
                expect_gl_matches(fr, cfg,
                                  std::string(convert_format_name(fmt)) + " " +
                                      std::string(resize_method_name(m)) + " " + std::to_string(w) +
                                      "x" + std::to_string(h));
            }
    }
}

TEST(GlConvert, EveryDtypeLayoutAndOutputFormat)
{
    ET_GL_OR_SKIP();
    const Frame fr = make_frame(ConvertFormat::Nv12, 321, 241, 3, 9);
    for (const DType dt : {DType::U8, DType::I8, DType::F16, DType::F32})
        for (const TensorLayout l : {TensorLayout::Hwc, TensorLayout::Chw})
            for (const OutputFormat of : {OutputFormat::Rgb, OutputFormat::Bgr, OutputFormat::Rgba,
                                          OutputFormat::Bgra, OutputFormat::Gray}) {
                ConvertConfig cfg = config_for(fr, ColorEncoding::Bt601, ColorRange::Limited);
                cfg.dst_width = 160;
                cfg.dst_height = 120;
                cfg.dtype = dt;
                cfg.layout = l;
                cfg.dst_format = of;
                if (dt == DType::F32 || dt == DType::F16) {
                    cfg.mean = kMean;
                    cfg.std = kStd;
                }
                expect_gl_matches(fr, cfg,
                                  std::string(dtype_name(dt)) + " " +
                                      std::string(tensor_layout_name(l)) + " " +
                                      std::string(output_format_name(of)));
            }
}

TEST(GlConvert, BothAxesScaled)
{
    ET_GL_OR_SKIP();
    const Frame fr = make_frame(ConvertFormat::Nv12, 320, 240, 0, 40);
    ConvertConfig cfg = config_for(fr);
    cfg.dst_width = 224;
    cfg.dst_height = 160;
    expect_gl_matches(fr, cfg, "320x240 -> 224x160");
}

TEST(GlConvert, LetterboxCropAndFill)
{
    ET_GL_OR_SKIP();
    const Frame fr = make_frame(ConvertFormat::Yuy2, 640, 360, 0, 3);
    for (const ResizeMethod m : {ResizeMethod::Bilinear, ResizeMethod::Nearest})
        for (const DType dt : {DType::U8, DType::F32}) {
            ConvertConfig cfg = config_for(fr, ColorEncoding::Bt709, ColorRange::Full);
            cfg.crop = Region{37, 11, 401, 301};
            cfg.dst_width = 256;
            cfg.dst_height = 160;
            cfg.letterbox = true;
            cfg.fill = {114, 30, 200, 255};
            cfg.method = m;
            cfg.dtype = dt;
            cfg.layout = dt == DType::F32 ? TensorLayout::Chw : TensorLayout::Hwc;
            if (dt == DType::F32)
                cfg.std = {255.f, 255.f, 255.f, 255.f};
            expect_gl_matches(fr, cfg, "letterbox " + std::string(resize_method_name(m)));
        }
}

TEST(GlConvert, EveryMatrixAndRange)
{
    ET_GL_OR_SKIP();
    for (const ConvertFormat fmt : {ConvertFormat::Nv12, ConvertFormat::Uyvy, ConvertFormat::I420})
        for (const ColorEncoding enc :
             {ColorEncoding::Bt601, ColorEncoding::Bt709, ColorEncoding::Bt2020})
            for (const ColorRange r : {ColorRange::Limited, ColorRange::Full}) {
                const Frame fr = make_frame(fmt, 96, 64, 5, 2);
                ConvertConfig cfg = config_for(fr, enc, r);
                expect_gl_matches(fr, cfg,
                                  std::string(convert_format_name(fmt)) + " enc " +
                                      std::to_string(int(enc)) + " range " +
                                      std::to_string(int(r)));
            }
}

TEST(GlConvert, RowsNotAMultipleOfFourBytes)
{
    ET_GL_OR_SKIP();
    const Frame fr = make_frame(ConvertFormat::Nv12, 200, 150, 0, 4);
    for (const OutputFormat of : {OutputFormat::Rgb, OutputFormat::Gray}) {
        ConvertConfig cfg = config_for(fr);
        cfg.dst_width = 97; // 291 and 97 bytes a row
        cfg.dst_height = 61;
        cfg.dst_format = of;
        expect_gl_matches(fr, cfg, "odd rows " + std::string(output_format_name(of)));
    }
    // A destination whose pitch is odd although the row is a multiple of 4 bytes.
    ConvertConfig cfg = config_for(fr);
    cfg.dst_width = 64;
    cfg.dst_height = 32;
    cfg.compute = ConvertCompute::Gl;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    const size_t pitch = 64 * 3 + 5;
    std::vector<uint8_t> out(pitch * 32, 0xcd), tight;
    ASSERT_TRUE(conv->run(fr.source(), DestFrame{out.data(), pitch, 0}));
    cfg.compute = ConvertCompute::Cpu;
    ASSERT_EQ(run_tight(fr, cfg, tight), "");
    for (size_t y = 0; y < 32; ++y) {
        for (size_t b = 0; b < 64 * 3; ++b)
            EXPECT_LE(std::abs(int(out[y * pitch + b]) - int(tight[y * 64 * 3 + b])), 2)
                << y << " " << b;
        for (size_t b = 64 * 3; b < pitch && y + 1 < 32; ++b)
            ASSERT_EQ(out[y * pitch + b], 0xcd) << "row padding must stay untouched";
    }
}

/// A host image tensor holding `fr` (NV12 or RGB).
TensorDyn tensor_of(const Frame& fr, PixelFormat pf, std::optional<TensorMemory> mem = {},
                    const GlContext* pbo_ctx = nullptr)
{
    auto t = pbo_ctx ? pbo_ctx->create_pbo_image(fr.width, fr.height, pf, DType::U8,
                                                 CpuAccess::ReadWrite)
                     : TensorDyn::image(fr.width, fr.height, pf, DType::U8, CpuAccess::ReadWrite,
                                        mem.value_or(TensorMemory::Mem));
    EXPECT_TRUE(t) << t.error().message();
    auto m = t->map();
    EXPECT_TRUE(m);
    for (size_t p = 0; p < t->plane_count(); ++p) {
        const auto pl = m->plane(p);
        const size_t rows = p == 0 ? fr.height : (fr.height + 1) / 2;
        const size_t rb =
            p == 0 ? (pf == PixelFormat::Rgb ? fr.width * 3 : fr.width) : 2 * ((fr.width + 1) / 2);
        for (size_t y = 0; y < rows; ++y)
            std::memcpy(pl.data + y * pl.row_stride, fr.planes[p].data() + y * fr.strides[p], rb);
    }
    return *t;
}

std::vector<uint8_t> bytes_of(const TensorDyn& t)
{
    auto m = t.map_read();
    EXPECT_TRUE(m) << (m ? "" : m.error().message());
    return std::vector<uint8_t>(m->cdata().begin(), m->cdata().end());
}

TEST(GlConvert, TensorsInHostMemoryAreUploadedAndCounted)
{
    ET_GL_OR_SKIP();
    const Frame fr = make_frame(ConvertFormat::Nv12, 320, 240, 0, 6);
    const TensorDyn src = tensor_of(fr, PixelFormat::Nv12);
    ConvertConfig cfg = config_for(fr);
    cfg.dst_width = 224;
    cfg.dst_height = 224;
    cfg.dtype = DType::F32;
    cfg.layout = TensorLayout::Chw;
    cfg.compute = ConvertCompute::Gl;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    EXPECT_EQ(conv->compute(), ConvertCompute::Gl);
    auto dst = conv->allocate_output(TensorMemory::Mem);
    ASSERT_TRUE(dst);
    for (int i = 0; i < 3; ++i)
        ASSERT_TRUE(conv->run(src, *dst));
    const GlImportStats s = conv->gl_stats();
    EXPECT_EQ(s.uploads, 3u * 2) << "two planes per frame";
    EXPECT_EQ(s.readbacks, 3u);
    EXPECT_EQ(s.zero_copy_declines, 0u) << "host memory never was zero-copy";
    EXPECT_EQ(s.misses, 0u);

    cfg.compute = ConvertCompute::Cpu;
    std::vector<uint8_t> cpu;
    ASSERT_EQ(run_tight(fr, cfg, cpu), "");
    // Unnormalised float32 (0..255): the CPU engine's fixed point is within 0.15 of a level.
    EXPECT_LE(max_diff(bytes_of(*dst), cpu, cfg, 224, 224), 0.2);
    EXPECT_LE(compare(bytes_of(*dst), cfg, reference(fr, cfg)).max, 1e-2) << "GL vs reference";
}

TEST(GlConvert, PboDestinationBatchTilesAndPboSource)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    const size_t W = 96, H = 64;
    ConvertConfig cfg;
    cfg.src_format = ConvertFormat::Nv12;
    cfg.src_width = 160;
    cfg.src_height = 120;
    cfg.src_colorimetry = {ColorSpace::Unspecified, ColorTransfer::Unspecified,
                           ColorEncoding::Bt709, ColorRange::Limited};
    cfg.dst_width = W;
    cfg.dst_height = H;
    cfg.dtype = DType::F32;
    cfg.layout = TensorLayout::Chw;
    cfg.mean = kMean;
    cfg.std = kStd;
    cfg.compute = ConvertCompute::Gl;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();

    auto batch = ctx.create_pbo(DType::F32, {4, 3, H, W}, "batch");
    ASSERT_TRUE(batch);
    {
        auto m = batch->map_as<float>(CpuAccess::Write);
        ASSERT_TRUE(m);
        for (auto& v : m->data())
            v = -999.f;
    }
    std::vector<std::vector<uint8_t>> cpu(4);
    for (size_t k : {size_t(1), size_t(3)}) {
        const Frame fr = make_frame(ConvertFormat::Nv12, 160, 120, 0, uint32_t(20 + k));
        // Tile 3's source is itself a PBO: uploaded GPU-side, never mapped.
        const TensorDyn src =
            k == 3 ? tensor_of(fr, PixelFormat::Nv12, {}, &ctx) : tensor_of(fr, PixelFormat::Nv12);
        auto tile = batch->batch(k);
        ASSERT_TRUE(tile);
        auto r = conv->run(src, *tile);
        ASSERT_TRUE(r) << r.error().message();
        ConvertConfig c = cfg;
        c.compute = ConvertCompute::Cpu;
        ASSERT_EQ(run_tight(fr, c, cpu[k]), "");
    }
    const GlImportStats s = conv->gl_stats();
    EXPECT_EQ(s.readbacks, 2u) << "rendered and read back into the PBO, on the GL side";
    EXPECT_EQ(s.uploads, 4u);
    auto m = batch->map_as<const float>(CpuAccess::Read);
    ASSERT_TRUE(m);
    const size_t tile = 3 * H * W;
    for (size_t k = 0; k < 4; ++k) {
        const float* t = m->cdata().data() + k * tile;
        if (k == 1 || k == 3) {
            double worst = 0.0;
            for (size_t i = 0; i < tile; ++i) {
                float want;
                std::memcpy(&want, cpu[k].data() + i * 4, 4);
                worst = std::max(worst, double(std::fabs(t[i] - want)));
            }
            EXPECT_LE(worst, 2e-2) << "tile " << k;
        } else {
            for (size_t i = 0; i < tile; ++i)
                ASSERT_EQ(t[i], -999.f) << "tile " << k << " must stay untouched";
        }
    }
}

TEST(GlConvert, HwcViewDestinationWritesOnlyItsRectangle)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    const Frame fr = make_frame(ConvertFormat::Rgb, 120, 80, 0, 8);
    ConvertConfig cfg = config_for(fr);
    cfg.dst_width = 60;
    cfg.dst_height = 40;
    cfg.compute = ConvertCompute::Gl;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv);
    for (const bool pbo : {true, false}) {
        auto canvas =
            pbo ? ctx.create_pbo_image(130, 50, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite)
                : TensorDyn::image(130, 50, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                   TensorMemory::Mem);
        ASSERT_TRUE(canvas);
        auto view = canvas->view(Region{66, 7, 60, 40});
        ASSERT_TRUE(view);
        auto r = conv->run(tensor_of(fr, PixelFormat::Rgb), *view);
        ASSERT_TRUE(r) << r.error().message();
        ConvertConfig c = cfg;
        c.compute = ConvertCompute::Cpu;
        std::vector<uint8_t> cpu;
        ASSERT_EQ(run_tight(fr, c, cpu), "");
        const auto all = bytes_of(*canvas);
        const size_t rs = *canvas->row_stride();
        for (size_t y = 0; y < 50; ++y)
            for (size_t x = 0; x < 130; ++x)
                for (size_t k = 0; k < 3; ++k) {
                    const uint8_t v = all[y * rs + x * 3 + k];
                    const bool inside = x >= 66 && x < 126 && y >= 7 && y < 47;
                    if (inside)
                        ASSERT_LE(std::abs(int(v) - int(cpu[(y - 7) * 180 + (x - 66) * 3 + k])), 2)
                            << x << "," << y;
                    else
                        ASSERT_EQ(v, 0) << "outside the view at " << x << "," << y;
                }
    }
}

TEST(GlConvert, PbosOfAnotherContextOrStillMappedAreRefused_Negative)
{
    ET_GL_OR_SKIP();
    const Frame fr = make_frame(ConvertFormat::Nv12, 64, 48, 0, 1);
    ConvertConfig cfg = config_for(fr);
    cfg.compute = ConvertCompute::Gl;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv);
    const TensorDyn src = tensor_of(fr, PixelFormat::Nv12);

    auto other = GlContext::create();
    ASSERT_TRUE(other);
    auto foreign = other->create_pbo(DType::U8, conv->output_shape());
    ASSERT_TRUE(foreign);
    auto r = conv->run(src, *foreign);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(r.error().message().find("another GL context"), std::string::npos)
        << r.error().message();

    auto own = gl_ctx_.create_pbo(DType::U8, conv->output_shape());
    ASSERT_TRUE(own);
    auto held = own->map();
    ASSERT_TRUE(held);
    r = conv->run(src, *own);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("mapped"), std::string::npos) << r.error().message();

    auto wrong = TensorDyn::create(DType::U8, {48, 64, 4}, TensorMemory::Mem);
    ASSERT_TRUE(wrong);
    r = conv->run(src, *wrong);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::InvalidShape);
    auto f32 = TensorDyn::create(DType::F32, conv->output_shape(), TensorMemory::Mem);
    ASSERT_TRUE(f32);
    EXPECT_EQ(conv->run(src, *f32).error().code(), ErrorCode::DTypeMismatch);
}

TEST(GlConvert, AutoKeepsTheCpuOnASoftwareRenderer)
{
    ET_GL_OR_SKIP();
    const Frame fr = make_frame(ConvertFormat::Nv12, 64, 48, 0, 1);
    ConvertConfig cfg = config_for(fr);
    cfg.compute = ConvertCompute::Auto;
    auto conv = Converter::create(cfg);
    ASSERT_TRUE(conv) << conv.error().message();
    if (gl_ctx_.info().software) {
        EXPECT_EQ(conv->compute(), ConvertCompute::Cpu);
        EXPECT_FALSE(conv->compute_reason().empty());
        std::printf("auto: %s\n", conv->compute_reason().c_str());
        ScopedEnv allow("EDGETENSOR_GL_ALLOW_SOFTWARE", "1");
        auto forced = Converter::create(cfg);
        ASSERT_TRUE(forced);
        EXPECT_EQ(forced->compute(), ConvertCompute::Gl) << forced->compute_reason();
    } else {
        EXPECT_EQ(conv->compute(), ConvertCompute::Gl) << conv->compute_reason();
    }
    cfg.compute = ConvertCompute::Cpu;
    auto cpu = Converter::create(cfg);
    ASSERT_TRUE(cpu);
    EXPECT_EQ(cpu->compute(), ConvertCompute::Cpu);
    EXPECT_EQ(cpu->compute_reason(), "requested");
    EXPECT_EQ(cpu->gl_stats().uploads, 0u);
}

TEST(GlConvert, ComputeNamesRoundTrip)
{
    for (const ConvertCompute c : {ConvertCompute::Auto, ConvertCompute::Cpu, ConvertCompute::Gl})
        EXPECT_EQ(convert_compute_from_name(convert_compute_name(c)), c);
    EXPECT_EQ(convert_compute_name(ConvertCompute::Gl), "gl");
    EXPECT_FALSE(convert_compute_from_name("vulkan"));
}

TEST(GlConvert, MovedConverterKeepsItsGlBackend)
{
    ET_GL_OR_SKIP();
    const Frame fr = make_frame(ConvertFormat::Rgba, 64, 48, 0, 1);
    ConvertConfig cfg = config_for(fr);
    cfg.compute = ConvertCompute::Gl;
    auto a = Converter::create(cfg);
    ASSERT_TRUE(a);
    Converter b = std::move(*a);
    EXPECT_EQ(b.compute(), ConvertCompute::Gl);
    std::vector<uint8_t> out(b.min_row_stride() * 48);
    ASSERT_TRUE(b.run(fr.source(), DestFrame{out.data(), b.min_row_stride(), 0}));
    EXPECT_FALSE(a->run(fr.source(), DestFrame{out.data(), b.min_row_stride(), 0}));
}

TEST(GlConvert, DirectYuvShadersCompileWhereExternalImagesAreOffered)
{
    ET_GL_CONTEXT_OR_SKIP(ctx);
    // The direct YUV import's shaders (samplerExternalOES) are only run in the VM lane; here
    // the driver compiles and links them wherever it offers the extension, so a GLSL mistake
    // shows on every host.
    auto w = detail::gl::shared_worker();
    ASSERT_TRUE(w) << w.error().message();
    const std::string exts = (*w)->call<std::string>([&]() -> Result<std::string> {
                                     const GLubyte* s = (*w)->gl().glGetString(GL_EXTENSIONS);
                                     return std::string(s ? reinterpret_cast<const char*>(s) : "");
                                 })
                                 .value_or("");
    if (exts.find("GL_OES_EGL_image_external_essl3") == std::string::npos)
        GTEST_SKIP() << ctx.info().renderer << " lacks GL_OES_EGL_image_external_essl3";
    for (const OutputFormat out : {OutputFormat::Rgb, OutputFormat::Bgra})
        for (const DType dt : {DType::U8, DType::F32}) {
            const Frame fr = make_frame(ConvertFormat::Nv12, 64, 48, 0, 1);
            ConvertConfig cfg = config_for(fr, ColorEncoding::Bt601, ColorRange::Limited);
            cfg.dst_format = out;
            cfg.dtype = dt;
            if (dt == DType::F32)
                cfg.std = {255.f, 255.f, 255.f, 255.f};
            auto conv = Converter::create(cfg);
            ASSERT_TRUE(conv) << conv.error().message();
            detail::gl::ShaderParams p;
            p.src = detail::convert::spec_of(ConvertFormat::Nv12);
            p.cfg = cfg;
            p.geo = conv->geometry();
            p.applied = conv->applied_colorimetry();
            p.dst_width = conv->dst_width();
            p.dst_height = conv->dst_height();
            p.channels = out == OutputFormat::Rgb ? 3 : 4;
            p.direct = true;
            const std::string fs = detail::gl::fragment_shader_source(p);
            EXPECT_NE(fs.find("samplerExternalOES"), std::string::npos);
            for (const std::string& src : {fs, detail::gl::probe_shader_source(64, 48, 32, 32)}) {
                auto r = (*w)->call<void>([&]() -> Result<void> {
                    auto id = detail::gl::build_program(**w, src);
                    if (!id)
                        return unexpected(std::move(id).error());
                    (*w)->gl().glDeleteProgram(*id);
                    return {};
                });
                EXPECT_TRUE(r) << r.error().message();
            }
        }
}

} // namespace
} // namespace edgetensor::test
