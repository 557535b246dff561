// SPDX-License-Identifier: MIT
//
// The AHardwareBuffer layout module (lib/tensor/src/android/ahb_layout.hpp): every decision the
// NDK shell must not drift on, tested without any Android code.

#include "ahb_layout.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace edgetensor;
using namespace edgetensor::detail::ahb;

namespace
{

// The values of the NDK's <android/hardware_buffer.h>, written out: a change of the module's
// constants must fail here, not on a device.
TEST(AhbLayout, ConstantsAreTheNdkValues)
{
    EXPECT_EQ(kFormatR8G8B8A8Unorm, 1u);
    EXPECT_EQ(kFormatR16G16B16A16Float, 0x16u);
    EXPECT_EQ(kFormatBlob, 0x21u);
    EXPECT_EQ(kUsageCpuReadRarely, 2u);
    EXPECT_EQ(kUsageCpuReadOften, 3u);
    EXPECT_EQ(kUsageCpuReadMask, 0xFu);
    EXPECT_EQ(kUsageCpuWriteRarely, 0x20u);
    EXPECT_EQ(kUsageCpuWriteOften, 0x30u);
    EXPECT_EQ(kUsageCpuWriteMask, 0xF0u);
    EXPECT_EQ(kUsageGpuSampledImage, 0x100u);
    EXPECT_EQ(kUsageGpuFramebuffer, 0x200u);
    EXPECT_EQ(kUsageGpuDataBuffer, 0x1000000u);
}

TEST(AhbLayout, ImageUsageAlwaysCarriesGpuSampledAndFramebuffer)
{
    const uint64_t gpu = kUsageGpuSampledImage | kUsageGpuFramebuffer;
    EXPECT_EQ(image_usage(CpuAccess::None), gpu);
    EXPECT_EQ(image_usage(CpuAccess::Read), gpu | kUsageCpuReadOften);
    EXPECT_EQ(image_usage(CpuAccess::Write), gpu | kUsageCpuWriteOften);
    EXPECT_EQ(image_usage(CpuAccess::ReadWrite), gpu | kUsageCpuReadOften | kUsageCpuWriteOften);
    EXPECT_TRUE(is_hardware_only(image_usage(CpuAccess::None)));
    EXPECT_FALSE(is_hardware_only(image_usage(CpuAccess::Read)));
}

TEST(AhbLayout, BlobUsageIsDataBufferPlusCpu)
{
    EXPECT_EQ(blob_usage(CpuAccess::ReadWrite),
              kUsageGpuDataBuffer | kUsageCpuReadOften | kUsageCpuWriteOften);
    EXPECT_EQ(blob_usage(CpuAccess::None), kUsageGpuDataBuffer);
    EXPECT_EQ(blob_usage(CpuAccess::Read) & kUsageGpuSampledImage, 0u);
}

TEST(AhbLayout, RetryAddsCpuBitsOnceAndOnlyForHardwareOnly)
{
    const uint64_t hw = image_usage(CpuAccess::None);
    ASSERT_TRUE(retry_usage(hw).has_value());
    EXPECT_EQ(*retry_usage(hw), hw | kUsageCpuReadOften | kUsageCpuWriteOften);
    // The retried usage is not hardware-only, so there is never a second retry.
    EXPECT_FALSE(retry_usage(*retry_usage(hw)).has_value());
    EXPECT_FALSE(retry_usage(image_usage(CpuAccess::Read)).has_value());
}

TEST(AhbLayout, AccessFromUsageReadsTheMasks)
{
    EXPECT_EQ(access_from_usage(kUsageGpuSampledImage), CpuAccess::None);
    EXPECT_EQ(access_from_usage(kUsageCpuReadRarely), CpuAccess::Read);
    EXPECT_EQ(access_from_usage(kUsageCpuWriteRarely), CpuAccess::Write);
    EXPECT_EQ(access_from_usage(kUsageCpuReadOften | kUsageCpuWriteRarely), CpuAccess::ReadWrite);
}

struct GeoCase {
    PixelFormat format;
    DType dtype;
    size_t w, h;
    uint32_t ahb_format, ahb_w, ahb_h, bpp;
};

TEST(AhbLayout, GeometryTable)
{
    const GeoCase cases[] = {
        // Packed formats at (W, H).
        {PixelFormat::Rgba, DType::U8, 640, 480, kFormatR8G8B8A8Unorm, 640, 480, 4},
        {PixelFormat::Rgba, DType::I8, 641, 3, kFormatR8G8B8A8Unorm, 641, 3, 4},
        {PixelFormat::Bgra, DType::U8, 321, 2, kFormatR8G8B8A8Unorm, 321, 2, 4},
        {PixelFormat::Rgba, DType::F16, 640, 480, kFormatR16G16B16A16Float, 640, 480, 8},
        // Packed RGB u8 on RGBA8888 at (W*3/4, H).
        {PixelFormat::Rgb, DType::U8, 640, 480, kFormatR8G8B8A8Unorm, 480, 480, 4},
        {PixelFormat::Rgb, DType::I8, 4, 1, kFormatR8G8B8A8Unorm, 3, 1, 4},
        // Planar F16 into RGBA16F at (W/4, C*H); planar u8 into RGBA8888 the same way.
        {PixelFormat::PlanarRgb, DType::F16, 640, 480, kFormatR16G16B16A16Float, 160, 1440, 8},
        {PixelFormat::PlanarRgba, DType::F16, 64, 10, kFormatR16G16B16A16Float, 16, 40, 8},
        {PixelFormat::PlanarRgb, DType::U8, 640, 480, kFormatR8G8B8A8Unorm, 160, 1440, 4},
    };
    for (const GeoCase& c : cases) {
        SCOPED_TRACE(std::string(pixel_format_name(c.format)) + " " +
                     std::string(dtype_name(c.dtype)) + " " + std::to_string(c.w));
        auto g = image_geometry(c.format, c.dtype, c.w, c.h);
        ASSERT_TRUE(g) << g.error().message();
        EXPECT_EQ(g->ahb_format, c.ahb_format);
        EXPECT_EQ(g->width, c.ahb_w);
        EXPECT_EQ(g->height, c.ahb_h);
        EXPECT_EQ(g->bytes_per_pixel, c.bpp);
        // One AHB row holds exactly one tensor row: the natural row bytes of the image.
        EXPECT_EQ(g->row_bytes, natural_row_bytes(c.format, c.w, dtype_size(c.dtype)));
    }
}

TEST(AhbLayout, GeometryRefusesWidthsThatDoNotDivideNegative)
{
    auto rgb = image_geometry(PixelFormat::Rgb, DType::U8, 321, 10);
    ASSERT_FALSE(rgb);
    EXPECT_EQ(rgb.error().code(), ErrorCode::InvalidShape);
    EXPECT_NE(rgb.error().message().find("multiple of 4"), std::string::npos)
        << rgb.error().message();
    EXPECT_NE(rgb.error().message().find("963"), std::string::npos) << rgb.error().message();
    for (size_t w : {1, 2, 3, 5, 6, 7, 322}) {
        auto p = image_geometry(PixelFormat::PlanarRgb, DType::F16, w, 8);
        ASSERT_FALSE(p) << w;
        EXPECT_EQ(p.error().code(), ErrorCode::InvalidShape);
        EXPECT_NE(p.error().message().find("(W/4, C*H)"), std::string::npos);
    }
}

TEST(AhbLayout, GeometryRefusesFormatsWithoutAnAhbFormatNegative)
{
    const std::pair<PixelFormat, DType> refused[] = {
        {PixelFormat::Grey, DType::U8},       {PixelFormat::Nv12, DType::U8},
        {PixelFormat::Nv16, DType::U8},       {PixelFormat::Nv24, DType::U8},
        {PixelFormat::Yuyv, DType::U8},       {PixelFormat::Vyuy, DType::U8},
        {PixelFormat::Rgba, DType::F32},      {PixelFormat::Rgb, DType::F16},
        {PixelFormat::PlanarRgb, DType::F32}, {PixelFormat::Rgba, DType::U16},
    };
    for (auto [f, d] : refused) {
        auto g = image_geometry(f, d, 64, 64);
        ASSERT_FALSE(g) << pixel_format_name(f) << " " << dtype_name(d);
        EXPECT_EQ(g.error().code(), ErrorCode::NotSupported);
        EXPECT_NE(g.error().message().find(std::string(pixel_format_name(f))), std::string::npos);
    }
    EXPECT_EQ(image_geometry(PixelFormat::None, DType::U8, 4, 4).error().code(),
              ErrorCode::InvalidArgument);
    EXPECT_EQ(image_geometry(PixelFormat::Rgba, DType::U8, 0, 4).error().code(),
              ErrorCode::InvalidShape);
}

TEST(AhbLayout, BlobGeometry)
{
    auto g = blob_geometry(1000);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->ahb_format, kFormatBlob);
    EXPECT_EQ(g->width, 1000u);
    EXPECT_EQ(g->height, 1u);
    EXPECT_EQ(*locked_bytes(*g, 0), 1000u);
    EXPECT_EQ(blob_geometry(0).error().code(), ErrorCode::InvalidShape);
    EXPECT_EQ(blob_geometry(size_t(1) << 33).error().code(), ErrorCode::InvalidArgument);
}

TEST(AhbLayout, RowPitchComesFromTheStrideGrallocChose)
{
    auto g = image_geometry(PixelFormat::Rgb, DType::U8, 640, 480);
    ASSERT_TRUE(g);
    EXPECT_EQ(*row_pitch(*g, 512), 2048u);
    EXPECT_EQ(*locked_bytes(*g, 512), 2048u * 480);
    auto narrow = row_pitch(*g, 479);
    ASSERT_FALSE(narrow);
    EXPECT_EQ(narrow.error().code(), ErrorCode::InvalidDescriptor);
}

TEST(AhbLayout, ImportMustMatchTheGeometryNegative)
{
    auto g = image_geometry(PixelFormat::Rgba, DType::U8, 64, 32);
    ASSERT_TRUE(g);
    EXPECT_TRUE(check_import(*g, kFormatR8G8B8A8Unorm, 64, 32, 1));
    EXPECT_EQ(check_import(*g, kFormatR16G16B16A16Float, 64, 32, 1).error().code(),
              ErrorCode::InvalidDescriptor);
    EXPECT_EQ(check_import(*g, kFormatR8G8B8A8Unorm, 63, 32, 1).error().code(),
              ErrorCode::InvalidDescriptor);
    EXPECT_EQ(check_import(*g, kFormatR8G8B8A8Unorm, 64, 32, 2).error().code(),
              ErrorCode::InvalidDescriptor);
}

TEST(AhbLayout, LockReplaysAllocationValuesMaskedToTheDirection)
{
    // A foreign buffer allocated READ_RARELY | WRITE_OFTEN: the lock replays those values.
    const uint64_t alloc = kUsageGpuSampledImage | kUsageCpuReadRarely | kUsageCpuWriteOften;
    auto r = lock_usage_for(CpuAccess::ReadWrite, alloc, CpuAccess::Read, {});
    EXPECT_EQ(r.action, LockAction::Lock);
    EXPECT_EQ(r.usage, kUsageCpuReadRarely);
    auto w = lock_usage_for(CpuAccess::ReadWrite, alloc, CpuAccess::Write, {});
    EXPECT_EQ(w.action, LockAction::Lock);
    EXPECT_EQ(w.usage, kUsageCpuWriteOften);
    auto rw = lock_usage_for(CpuAccess::ReadWrite, alloc, CpuAccess::ReadWrite, {});
    EXPECT_EQ(rw.usage, kUsageCpuReadRarely | kUsageCpuWriteOften);
    // Never a GPU bit in a lock.
    EXPECT_EQ(rw.usage & ~kUsageCpuMask, 0u);
}

TEST(AhbLayout, LockRefusesNoneAndUndeclaredDirectionsNegative)
{
    const uint64_t hw_retried = *retry_usage(image_usage(CpuAccess::None));
    // Declared None refuses even when a budget retry gave the buffer CPU bits.
    auto none = lock_usage_for(CpuAccess::None, hw_retried, CpuAccess::Read, {});
    EXPECT_EQ(none.action, LockAction::Refuse);
    EXPECT_NE(none.reason.find("CpuAccess::None"), std::string::npos);
    auto map_none = lock_usage_for(CpuAccess::ReadWrite, hw_retried, CpuAccess::None, {});
    EXPECT_EQ(map_none.action, LockAction::Refuse);
    // Read-only allocation mapped for writing: the write direction was never declared.
    auto w = lock_usage_for(CpuAccess::Read, image_usage(CpuAccess::Read), CpuAccess::Write, {});
    EXPECT_EQ(w.action, LockAction::Refuse);
    EXPECT_NE(w.reason.find("without CPU write usage"), std::string::npos) << w.reason;
    auto rw =
        lock_usage_for(CpuAccess::Read, image_usage(CpuAccess::Read), CpuAccess::ReadWrite, {});
    EXPECT_EQ(rw.action, LockAction::Refuse);
}

TEST(AhbLayout, NestedMapsReuseOnlyACoveringLock)
{
    const uint64_t alloc = image_usage(CpuAccess::ReadWrite);
    const LockState rw_held{kUsageCpuReadOften | kUsageCpuWriteOften, 1};
    const LockState r_held{kUsageCpuReadOften, 2};
    auto a = lock_usage_for(CpuAccess::ReadWrite, alloc, CpuAccess::Read, rw_held);
    EXPECT_EQ(a.action, LockAction::Reuse);
    EXPECT_EQ(a.usage, rw_held.usage);
    EXPECT_EQ(lock_usage_for(CpuAccess::ReadWrite, alloc, CpuAccess::Write, rw_held).action,
              LockAction::Reuse);
    EXPECT_EQ(lock_usage_for(CpuAccess::ReadWrite, alloc, CpuAccess::Read, r_held).action,
              LockAction::Reuse);
    auto up = lock_usage_for(CpuAccess::ReadWrite, alloc, CpuAccess::Write, r_held);
    EXPECT_EQ(up.action, LockAction::Refuse);
    EXPECT_NE(up.reason.find("already locked for read"), std::string::npos) << up.reason;
    EXPECT_EQ(lock_usage_for(CpuAccess::ReadWrite, alloc, CpuAccess::ReadWrite, r_held).action,
              LockAction::Refuse);
}

TEST(AhbLayout, VendorClassifierIsCaseInsensitiveSubstring)
{
    using S = CompressionScheme;
    const std::pair<const char*, std::optional<S>> cases[] = {
        {"adreno", S::Ubwc},
        {"Adreno (TM) 740", S::Ubwc},
        {"ADRENO", S::Ubwc},
        {"mali", S::Afbc},
        {"Mali-G715", S::Afbc},
        {"Immortalis-G720", S::Afbc},
        {"immortalis", S::Afbc},
        {"PowerVR Rogue GE8320", S::Pvric},
        {"powervr", S::Pvric},
        {"Samsung Xclipse 920", S::Dcc},
        {"xclipse", S::Dcc},
        {"emulation", std::nullopt},
        {"angle", std::nullopt},
        {"ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device))", std::nullopt},
        {"swiftshader", std::nullopt},
        {"Mesa Intel(R) UHD Graphics", std::nullopt},
        {"", std::nullopt},
        {"mal", std::nullopt},
    };
    for (auto [vendor, want] : cases)
        EXPECT_EQ(scheme_for_egl_vendor(vendor), want) << vendor;
}

TEST(AhbLayout, CompressionRequestNeedsCpuAccessNoneNegative)
{
    EXPECT_TRUE(check_compression_request(Compression::none(), CpuAccess::ReadWrite));
    EXPECT_TRUE(check_compression_request(Compression::any(), CpuAccess::None));
    for (CpuAccess a : {CpuAccess::Read, CpuAccess::Write, CpuAccess::ReadWrite}) {
        auto r = check_compression_request(Compression::any(), a);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::InvalidArgument);
        EXPECT_EQ(check_compression_request(Compression::exactly(CompressionScheme::Afbc), a)
                      .error()
                      .code(),
                  ErrorCode::InvalidArgument);
    }
    Compression bogus{Compression::Kind::Scheme, static_cast<CompressionScheme>(99)};
    EXPECT_EQ(check_compression_request(bogus, CpuAccess::None).error().code(),
              ErrorCode::InvalidArgument);
}

TEST(AhbLayout, PlanCompression)
{
    const auto rgba = *image_geometry(PixelFormat::Rgba, DType::U8, 64, 64);
    const auto f16 = *image_geometry(PixelFormat::Rgba, DType::F16, 64, 64);
    const auto ubwc = std::optional(CompressionScheme::Ubwc);
    // Any: the device scheme when eligible, else linear (no error).
    EXPECT_EQ(*plan_compression(Compression::any(), ubwc, rgba, DType::U8, "adreno"), ubwc);
    EXPECT_EQ(*plan_compression(Compression::any(), std::nullopt, rgba, DType::U8, "emulation"),
              std::nullopt);
    EXPECT_EQ(*plan_compression(Compression::any(), ubwc, f16, DType::F16, "adreno"), std::nullopt);
    EXPECT_EQ(*plan_compression(Compression::none(), ubwc, rgba, DType::U8, "adreno"),
              std::nullopt);
    // Scheme: exactly that one or InvalidArgument.
    EXPECT_EQ(*plan_compression(Compression::exactly(CompressionScheme::Ubwc), ubwc, rgba,
                                DType::U8, "adreno"),
              ubwc);
    auto other = plan_compression(Compression::exactly(CompressionScheme::Afbc), ubwc, rgba,
                                  DType::U8, "Adreno (TM) 740");
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(other.error().message().find("compresses with ubwc"), std::string::npos);
    EXPECT_EQ(plan_compression(Compression::exactly(CompressionScheme::Ubwc), std::nullopt, rgba,
                               DType::U8, "emulation")
                  .error()
                  .code(),
              ErrorCode::InvalidArgument);
    EXPECT_EQ(plan_compression(Compression::exactly(CompressionScheme::Ubwc), ubwc, f16, DType::F16,
                               "adreno")
                  .error()
                  .code(),
              ErrorCode::InvalidArgument);
}

TEST(AhbLayout, SettleCompressionAfterARetry)
{
    const auto ubwc = std::optional(CompressionScheme::Ubwc);
    const uint64_t hw = image_usage(CpuAccess::None);
    const uint64_t retried = *retry_usage(hw);
    EXPECT_EQ(*settle_compression(Compression::any(), ubwc, hw), ubwc);
    EXPECT_EQ(*settle_compression(Compression::any(), ubwc, retried), std::nullopt);
    auto s = settle_compression(Compression::exactly(CompressionScheme::Ubwc), ubwc, retried);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), ErrorCode::AllocationFailed);
    EXPECT_EQ(*settle_compression(Compression::none(), std::nullopt, retried), std::nullopt);
}

TEST(AhbLayout, InternTableReusesOnlyLiveGuards)
{
    IdentityInternTable table;
    auto a = std::make_shared<int>(1);
    table.insert(7, a);
    EXPECT_EQ(table.find(7), a);
    EXPECT_EQ(table.find(8), nullptr);
    // find_or_insert returns the live guard and does not call make.
    bool made = false;
    auto got = table.find_or_insert(7, [&] {
        made = true;
        return std::shared_ptr<const void>(std::make_shared<int>(2));
    });
    EXPECT_FALSE(made);
    EXPECT_EQ(got, a);
    // The guard dies with the last tensor: the key no longer resolves (the ABA case: a recycled
    // key can only meet a dead entry, never a live identity).
    std::weak_ptr<int> wa = a;
    a.reset();
    got.reset();
    EXPECT_TRUE(wa.expired());
    EXPECT_EQ(table.find(7), nullptr);
    auto b = std::make_shared<int>(3);
    auto got_b = table.find_or_insert(7, [&] { return std::shared_ptr<const void>(b); });
    EXPECT_EQ(got_b, b);
}

TEST(AhbLayout, InternTablePrunesDeadEntriesOnInsert)
{
    IdentityInternTable table;
    {
        std::vector<std::shared_ptr<int>> guards;
        for (uint64_t k = 0; k < 100; ++k) {
            guards.push_back(std::make_shared<int>(int(k)));
            table.insert(k, guards.back());
        }
        EXPECT_EQ(table.size(), 100u);
    }
    EXPECT_EQ(table.size(), 100u); // dead, not yet pruned
    auto live = std::make_shared<int>(0);
    table.insert(1000, live);
    EXPECT_EQ(table.size(), 1u);
}

TEST(AhbLayout, InternTableRacingImportsShareOneGuard)
{
    IdentityInternTable table;
    std::atomic<int> made{0};
    std::vector<std::shared_ptr<const void>> got(8);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < got.size(); ++i)
        threads.emplace_back([&, i] {
            got[i] = table.find_or_insert(42, [&] {
                made.fetch_add(1);
                return std::shared_ptr<const void>(std::make_shared<int>(0));
            });
        });
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(made.load(), 1);
    for (auto& g : got)
        EXPECT_EQ(g, got[0]);
}

} // namespace
