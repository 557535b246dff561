// SPDX-License-Identifier: MIT
//
// The AHardwareBuffer shell (lib/tensor/src/android/ahb_shell.cpp) compiled against the
// simulated NDK and driven through the public API as the Dma backend: allocation usage and
// geometry as gralloc sees them, the budget-profile retry, lock replay and nesting, import and
// export, getId interning, compression recording, and reference balance (every test ends with
// no live buffer and no contract violation: sim_fixture.hpp).

#include "sim_fixture.hpp"

#include "ahb_layout.hpp"

#include <edgetensor/android.hpp>
#include <edgetensor/tensor.hpp>
#include <edgetensor/tensor_desc.h>

#include <cstring>

using namespace edgetensor;
namespace ahb = edgetensor::detail::ahb;

namespace
{

using AhbShell = SimNdkTest;

constexpr uint64_t kGpu = ahb::kUsageGpuSampledImage | ahb::kUsageGpuFramebuffer;
constexpr uint64_t kCpuRw = ahb::kUsageCpuReadOften | ahb::kUsageCpuWriteOften;

TEST_F(AhbShell, IsTheDmaBackend)
{
    EXPECT_TRUE(is_ahardwarebuffer_available());
    EXPECT_TRUE(is_dma_available());
    auto t = TensorDyn::image(64, 48, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->memory(), TensorMemory::Dma);
    EXPECT_EQ(t->provider(), "ahardwarebuffer");
    EXPECT_EQ(t->fd(), -1);
    AHardwareBuffer* b = hardware_buffer_ptr(*t);
    ASSERT_NE(b, nullptr);
    const auto d = describe(b);
    EXPECT_EQ(d.format, uint32_t(AHARDWAREBUFFER_FORMAT_R8G8B8A8_UNORM));
    EXPECT_EQ(d.width, 64u);
    EXPECT_EQ(d.height, 48u);
    EXPECT_EQ(d.usage, kGpu | kCpuRw);
    EXPECT_EQ(*t->row_stride(), size_t(d.stride) * 4);
    EXPECT_EQ(t->shape(), (Shape{48, 64, 4}));
    EXPECT_EQ(sim_ndk_refcount(b), 1);
    // Heap tensors are not AHardwareBuffers.
    auto heap = TensorDyn::create(DType::U8, {16}, TensorMemory::Mem);
    ASSERT_TRUE(heap);
    EXPECT_EQ(hardware_buffer_ptr(*heap), nullptr);
}

TEST_F(AhbShell, UsageFollowsCpuAccess)
{
    const std::pair<CpuAccess, uint64_t> cases[] = {
        {CpuAccess::None, kGpu},
        {CpuAccess::Read, kGpu | ahb::kUsageCpuReadOften},
        {CpuAccess::Write, kGpu | ahb::kUsageCpuWriteOften},
        {CpuAccess::ReadWrite, kGpu | kCpuRw},
    };
    for (auto [access, usage] : cases) {
        auto t = TensorDyn::image(32, 32, PixelFormat::Bgra, DType::U8, access);
        ASSERT_TRUE(t) << t.error().message();
        EXPECT_EQ(describe(hardware_buffer_ptr(*t)).usage, usage) << access_name(access);
        EXPECT_EQ(t->cpu_access(), access);
    }
}

TEST_F(AhbShell, PackedRgbRidesRgba8888)
{
    auto t = TensorDyn::image(640, 480, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(t) << t.error().message();
    const auto d = describe(hardware_buffer_ptr(*t));
    EXPECT_EQ(d.format, uint32_t(AHARDWAREBUFFER_FORMAT_R8G8B8A8_UNORM));
    EXPECT_EQ(d.width, 480u);
    EXPECT_EQ(d.height, 480u);
    EXPECT_EQ(*t->row_stride(), size_t(d.stride) * 4);
    EXPECT_GE(*t->row_stride(), 640u * 3);
    EXPECT_EQ(t->strides(), (std::vector<ptrdiff_t>{ptrdiff_t(d.stride) * 4, 3, 1}));
    // Pixels written through one map read back through another (unlock, relock).
    {
        auto m = t->map_write();
        ASSERT_TRUE(m) << m.error().message();
        uint8_t* p = m->data().data();
        p[0] = 11;
        p[*t->row_stride() * 479 + 639 * 3 + 2] = 22;
    }
    auto r = t->map_read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->data()[0], 11);
    EXPECT_EQ(r->data()[*t->row_stride() * 479 + 639 * 3 + 2], 22);
}

TEST_F(AhbShell, PlanarF16PacksIntoRgba16f)
{
    auto t = TensorDyn::image(640, 480, PixelFormat::PlanarRgb, DType::F16, CpuAccess::ReadWrite);
    ASSERT_TRUE(t) << t.error().message();
    const auto d = describe(hardware_buffer_ptr(*t));
    EXPECT_EQ(d.format, uint32_t(AHARDWAREBUFFER_FORMAT_R16G16B16A16_FLOAT));
    EXPECT_EQ(d.width, 160u);
    EXPECT_EQ(d.height, 1440u);
    const ptrdiff_t pitch = ptrdiff_t(d.stride) * 8;
    EXPECT_EQ(t->shape(), (Shape{3, 480, 640}));
    EXPECT_EQ(t->strides(), (std::vector<ptrdiff_t>{pitch * 480, pitch, 2}));
    EXPECT_GE(t->capacity_bytes(), size_t(pitch) * 1440);
}

TEST_F(AhbShell, GeometryThatDoesNotDivideIsRefusedNegative)
{
    auto t = TensorDyn::image(321, 10, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                              TensorMemory::Dma);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::InvalidShape);
    EXPECT_NE(t.error().message().find("multiple of 4"), std::string::npos);
    EXPECT_EQ(stats().allocated, 0u);
    // Auto-selection falls through to heap memory instead.
    auto a = TensorDyn::image(321, 10, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(a) << a.error().message();
    EXPECT_EQ(a->memory(), TensorMemory::Mem);
    // So do formats without an AHardwareBuffer format.
    auto grey = TensorDyn::image(64, 64, PixelFormat::Nv12, DType::U8, CpuAccess::Read);
    ASSERT_TRUE(grey);
    EXPECT_EQ(grey->memory(), TensorMemory::Mem);
    EXPECT_EQ(
        TensorDyn::image(64, 64, PixelFormat::Nv12, DType::U8, CpuAccess::Read, TensorMemory::Dma)
            .error()
            .code(),
        ErrorCode::NotSupported);
}

TEST_F(AhbShell, HardwareOnlyBufferRefusesCpuMapsNegative)
{
    auto t = TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None);
    ASSERT_TRUE(t);
    const uint64_t unplanned = unplanned_cpu_access_count();
    auto m = t->map_read();
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code(), ErrorCode::NotSupported);
    EXPECT_NE(m.error().message().find("CpuAccess::None"), std::string::npos);
    EXPECT_EQ(unplanned_cpu_access_count(), unplanned + 1);
    EXPECT_EQ(stats().locks, 0u);
    EXPECT_EQ(stats().lock_refusals, 0u) << "refused before the NDK is called";
}

TEST_F(AhbShell, BudgetProfileRetriesOnceWithCpuBits)
{
    sim_ndk_set_profile(SIM_NDK_PROFILE_BUDGET);
    auto t = TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None);
    ASSERT_TRUE(t) << t.error().message();
    const auto s = stats();
    EXPECT_EQ(s.refused, 1u);
    EXPECT_EQ(s.allocated, 1u);
    EXPECT_EQ(describe(hardware_buffer_ptr(*t)).usage, kGpu | kCpuRw);
    EXPECT_EQ(t->memory(), TensorMemory::Dma);
    // Still declared hardware-only: the map is refused the same on every device.
    EXPECT_FALSE(t->map_read());
    // A request with CPU bits is granted first time.
    auto rw = TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::Read);
    ASSERT_TRUE(rw);
    EXPECT_EQ(stats().refused, 1u);
}

TEST_F(AhbShell, GrallocFailureIsAnErrorOrAFallThroughNegative)
{
    sim_ndk_fail_next_allocations(2); // the request and its retry
    auto t =
        TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None, TensorMemory::Dma);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::AllocationFailed);
    EXPECT_NE(t.error().message().find("AHardwareBuffer_allocate"), std::string::npos)
        << t.error().message();
    EXPECT_NE(t.error().message().find("ENOMEM"), std::string::npos) << t.error().message();
    sim_ndk_fail_next_allocations(1);
    auto g = TensorDyn::create(DType::U8, {4096});
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_NE(g->memory(), TensorMemory::Dma); // fell through to Shm / Mem
}

TEST_F(AhbShell, LockReplaysAllocationUsage)
{
    auto r = TensorDyn::image(64, 8, PixelFormat::Rgba, DType::U8, CpuAccess::Read);
    ASSERT_TRUE(r);
    {
        auto m = r->map_read();
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(sim_ndk_locked(hardware_buffer_ptr(*r)), 1);
        EXPECT_EQ(sim_ndk_last_lock_usage(hardware_buffer_ptr(*r)), ahb::kUsageCpuReadOften);
    }
    EXPECT_EQ(sim_ndk_locked(hardware_buffer_ptr(*r)), 0);
    auto w = TensorDyn::image(64, 8, PixelFormat::Rgba, DType::U8, CpuAccess::Write);
    ASSERT_TRUE(w);
    {
        auto m = w->map_write();
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(sim_ndk_last_lock_usage(hardware_buffer_ptr(*w)), ahb::kUsageCpuWriteOften);
    }
    // Writing a read-declared buffer: counted as unplanned, then refused before the NDK.
    const uint64_t unplanned = unplanned_cpu_access_count();
    auto bad = r->map_write();
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("without CPU write usage"), std::string::npos)
        << bad.error().message();
    EXPECT_EQ(unplanned_cpu_access_count(), unplanned + 1);
    EXPECT_EQ(stats().lock_refusals, 0u);
}

TEST_F(AhbShell, NestedMapsShareACoveringLock)
{
    auto t = TensorDyn::image(64, 8, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    AHardwareBuffer* b = hardware_buffer_ptr(*t);
    {
        auto outer = t->map();
        ASSERT_TRUE(outer);
        auto inner = t->map_read();
        ASSERT_TRUE(inner) << inner.error().message();
        EXPECT_EQ(inner->data().data(), outer->data().data());
        EXPECT_EQ(stats().locks, 1u) << "the nested map reused the lock";
        EXPECT_EQ(sim_ndk_last_lock_usage(b), kCpuRw);
    }
    EXPECT_EQ(sim_ndk_locked(b), 0);
    {
        auto reader = t->map_read();
        ASSERT_TRUE(reader);
        EXPECT_EQ(sim_ndk_last_lock_usage(b), ahb::kUsageCpuReadOften);
        auto writer = t->map_write();
        ASSERT_FALSE(writer) << "a read lock does not cover a write";
        EXPECT_NE(writer.error().message().find("already locked"), std::string::npos);
    }
    auto writer = t->map_write();
    ASSERT_TRUE(writer) << writer.error().message();
    EXPECT_EQ(stats().locks, 3u);
}

TEST_F(AhbShell, GenericTensorsAreBlobs)
{
    auto t = TensorDyn::create(DType::F32, {16, 16});
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->memory(), TensorMemory::Dma);
    const auto d = describe(hardware_buffer_ptr(*t));
    EXPECT_EQ(d.format, uint32_t(AHARDWAREBUFFER_FORMAT_BLOB));
    EXPECT_EQ(d.width, 16u * 16 * 4);
    EXPECT_EQ(d.height, 1u);
    EXPECT_EQ(d.usage, ahb::kUsageGpuDataBuffer | kCpuRw);
    {
        auto m = t->map_write();
        ASSERT_TRUE(m);
        std::memset(m->data().data(), 0x5a, t->size());
    }
    auto m = t->map_read();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->data()[t->size() - 1], 0x5a);
}

TEST_F(AhbShell, ExportReimportInternsOneIdentity)
{
    auto t = TensorDyn::image(64, 32, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    AHardwareBuffer* b = hardware_buffer_ptr(*t);
    auto again = from_hardware_buffer(b, 64, 32, PixelFormat::Rgba);
    ASSERT_TRUE(again) << again.error().message();
    auto third = from_hardware_buffer(b, 64, 32, PixelFormat::Rgba);
    ASSERT_TRUE(third);
    EXPECT_EQ(again->buffer_identity(), t->buffer_identity());
    EXPECT_EQ(third->buffer_identity(), t->buffer_identity());
    EXPECT_EQ(hardware_buffer_ptr(*again), b);
    EXPECT_EQ(sim_ndk_refcount(b), 3) << "each wrap holds its own reference";
    EXPECT_EQ(again->cpu_access(), CpuAccess::ReadWrite) << "derived from the usage bits";
    // Bytes written through one wrap are seen through the other.
    {
        auto m = t->map_write();
        ASSERT_TRUE(m);
        m->data()[5] = 77;
    }
    auto m = again->map_read();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->data()[5], 77);
}

TEST_F(AhbShell, ForeignBufferImportAndDeadIdentity)
{
    AHardwareBuffer* foreign = sim_ndk_foreign_buffer(
        128, 16, AHARDWAREBUFFER_FORMAT_R8G8B8A8_UNORM, kGpu | ahb::kUsageCpuReadRarely);
    ASSERT_NE(foreign, nullptr);
    uint64_t first_id = 0;
    std::weak_ptr<const void> first_guard;
    {
        auto a = from_hardware_buffer(foreign, 128, 16, PixelFormat::Rgba);
        ASSERT_TRUE(a) << a.error().message();
        EXPECT_EQ(a->cpu_access(), CpuAccess::Read);
        EXPECT_EQ(sim_ndk_refcount(foreign), 2);
        first_id = a->buffer_identity().id();
        first_guard = a->buffer_identity().weak();
        auto m = a->map_read();
        ASSERT_TRUE(m) << m.error().message();
        EXPECT_EQ(sim_ndk_last_lock_usage(foreign), ahb::kUsageCpuReadRarely)
            << "the lock replays the foreign allocation's value, not ours";
    }
    EXPECT_TRUE(first_guard.expired());
    EXPECT_EQ(sim_ndk_refcount(foreign), 1) << "the caller's reference is untouched";
    // The first wrap died: a new wrap is a new identity (never a dead one resurrected).
    auto b = from_hardware_buffer(foreign, 128, 16, PixelFormat::Rgba);
    ASSERT_TRUE(b);
    EXPECT_NE(b->buffer_identity().id(), first_id);
    b = TensorDyn();
    AHardwareBuffer_release(foreign);
}

TEST_F(AhbShell, WithoutGetIdEveryWrapIsFresh)
{
    sim_ndk_set_get_id_supported(0);
    auto t = TensorDyn::image(64, 4, PixelFormat::Rgba, DType::U8, CpuAccess::Read);
    ASSERT_TRUE(t);
    auto again = from_hardware_buffer(hardware_buffer_ptr(*t), 64, 4, PixelFormat::Rgba);
    ASSERT_TRUE(again);
    EXPECT_NE(again->buffer_identity(), t->buffer_identity());
}

TEST_F(AhbShell, ImportValidatesTheDescriptorNegative)
{
    auto t = TensorDyn::image(64, 32, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    AHardwareBuffer* b = hardware_buffer_ptr(*t);
    auto wrong_size = from_hardware_buffer(b, 64, 33, PixelFormat::Rgba);
    ASSERT_FALSE(wrong_size);
    EXPECT_EQ(wrong_size.error().code(), ErrorCode::InvalidDescriptor);
    EXPECT_NE(wrong_size.error().message().find("64x32"), std::string::npos);
    auto wrong_format = from_hardware_buffer(b, 64, 32, PixelFormat::Rgba, DType::F16);
    ASSERT_FALSE(wrong_format);
    EXPECT_EQ(wrong_format.error().code(), ErrorCode::InvalidDescriptor);
    auto unsupported = from_hardware_buffer(b, 64, 32, PixelFormat::Nv12);
    ASSERT_FALSE(unsupported);
    EXPECT_EQ(unsupported.error().code(), ErrorCode::NotSupported);
    auto null = from_hardware_buffer(nullptr, 64, 32, PixelFormat::Rgba);
    ASSERT_FALSE(null);
    EXPECT_EQ(null.error().code(), ErrorCode::InvalidArgument);
    auto too_big = from_hardware_buffer(b, DType::U8, Shape{1 << 24});
    ASSERT_FALSE(too_big);
    EXPECT_EQ(too_big.error().code(), ErrorCode::InsufficientCapacity);
    EXPECT_EQ(sim_ndk_refcount(b), 1) << "failed imports keep no reference";
    // As bytes: the whole locked span.
    auto bytes = from_hardware_buffer(b, DType::U8, Shape{64 * 32 * 4});
    ASSERT_TRUE(bytes) << bytes.error().message();
    EXPECT_EQ(bytes->buffer_identity(), t->buffer_identity());
}

TEST_F(AhbShell, NoFdNoDescriptorNegative)
{
    auto t = TensorDyn::image(64, 8, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    auto fd = t->clone_fd();
    ASSERT_FALSE(fd);
    EXPECT_EQ(fd.error().code(), ErrorCode::NotSupported);
    auto desc = t->describe();
    ASSERT_FALSE(desc);
    EXPECT_EQ(desc.error().code(), ErrorCode::NotSupported);
    EXPECT_NE(desc.error().message().find("hardware_buffer_ptr"), std::string::npos);
}

TEST_F(AhbShell, ViewsShareTheBufferAndIdentity)
{
    auto t = TensorDyn::image(64, 32, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite);
    ASSERT_TRUE(t);
    auto v = t->view({8, 4, 16, 8});
    ASSERT_TRUE(v);
    EXPECT_EQ(hardware_buffer_ptr(*v), hardware_buffer_ptr(*t));
    EXPECT_EQ(v->buffer_identity(), t->buffer_identity());
    {
        auto m = v->map_write();
        ASSERT_TRUE(m);
        m->data()[0] = 9;
    }
    auto m = t->map_read();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->data()[4 * *t->row_stride() + 8 * 4], 9);
}

TEST_F(AhbShell, CompressionAnyRecordsTheVendorScheme)
{
    const std::pair<const char*, std::optional<CompressionScheme>> vendors[] = {
        {"adreno", CompressionScheme::Ubwc},   {"mali", CompressionScheme::Afbc},
        {"powervr", CompressionScheme::Pvric}, {"Samsung Xclipse 940", CompressionScheme::Dcc},
        {"emulation", std::nullopt},
    };
    for (auto [vendor, scheme] : vendors) {
        sim_ndk_set_property("ro.hardware.egl", vendor);
        const uint64_t fallbacks = compression_fallback_count();
        auto t = TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None,
                                  Compression::any());
        ASSERT_TRUE(t) << vendor << ": " << t.error().message();
        EXPECT_EQ(t->compression(), scheme) << vendor;
        EXPECT_EQ(compression_fallback_count(), fallbacks + (scheme ? 0 : 1)) << vendor;
        EXPECT_TRUE(ahb::is_hardware_only(describe(hardware_buffer_ptr(*t)).usage));
        // Views and re-wraps of the storage report it too (physical layout).
        auto v = t->view({0, 0, 8, 8});
        ASSERT_TRUE(v);
        EXPECT_EQ(v->compression(), scheme);
    }
    // No request: linear even on a compressing vendor.
    sim_ndk_set_property("ro.hardware.egl", "adreno");
    auto plain = TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None);
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->compression(), std::nullopt);
    // Ineligible class: Any falls back, counted.
    const uint64_t fallbacks = compression_fallback_count();
    auto f16 = TensorDyn::image(64, 64, PixelFormat::Rgba, DType::F16, CpuAccess::None,
                                Compression::any());
    ASSERT_TRUE(f16);
    EXPECT_EQ(f16->compression(), std::nullopt);
    EXPECT_EQ(compression_fallback_count(), fallbacks + 1);
}

TEST_F(AhbShell, CompressionSchemeMustMatchTheDeviceNegative)
{
    sim_ndk_set_property("ro.hardware.egl", "Adreno (TM) 740");
    auto ok = TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None,
                               Compression::exactly(CompressionScheme::Ubwc));
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(ok->compression(), CompressionScheme::Ubwc);
    auto other = TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None,
                                  Compression::exactly(CompressionScheme::Afbc));
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().code(), ErrorCode::InvalidArgument);
    EXPECT_NE(other.error().message().find("compresses with ubwc"), std::string::npos);
    auto cpu =
        TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::Read, Compression::any());
    ASSERT_FALSE(cpu);
    EXPECT_EQ(cpu.error().code(), ErrorCode::InvalidArgument);
    // Budget: gralloc refuses the hardware-only buffer, the retry is linear: Scheme fails (and
    // releases the retried buffer), Any records nothing.
    sim_ndk_set_profile(SIM_NDK_PROFILE_BUDGET);
    auto budget = TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None,
                                   Compression::exactly(CompressionScheme::Ubwc));
    ASSERT_FALSE(budget);
    EXPECT_EQ(budget.error().code(), ErrorCode::AllocationFailed);
    const uint64_t fallbacks = compression_fallback_count();
    auto any =
        TensorDyn::image(64, 64, PixelFormat::Rgba, DType::U8, CpuAccess::None, Compression::any());
    ASSERT_TRUE(any);
    EXPECT_EQ(any->compression(), std::nullopt);
    EXPECT_EQ(compression_fallback_count(), fallbacks + 1);
}

TEST_F(AhbShell, TensorOutlivesNothingItNeeds)
{
    // Releasing the tensor while a map is open would unlock a released buffer: the map holds
    // the storage, so the buffer lives until the map goes.
    std::optional<TensorMap<uint8_t>> m;
    AHardwareBuffer* b = nullptr;
    {
        auto t = TensorDyn::image(64, 8, PixelFormat::Rgba, DType::U8, CpuAccess::ReadWrite);
        ASSERT_TRUE(t);
        b = hardware_buffer_ptr(*t);
        auto mm = t->map();
        ASSERT_TRUE(mm);
        m.emplace(std::move(*mm));
    }
    EXPECT_EQ(sim_ndk_refcount(b), 1);
    EXPECT_EQ(sim_ndk_locked(b), 1);
    m.reset();
    EXPECT_EQ(sim_ndk_refcount(b), -1) << "released after the last map";
}

} // namespace
