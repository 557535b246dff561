// SPDX-License-Identifier: MIT
//
// The EGLImage import cache's policy with a fake importer, so it runs on any host: one import
// per key, hits after it, views (same key) sharing it, geometry re-keying, the LRU bound,
// sweeping once every tensor of an identity is gone, and remembered declines. The real EGL
// imports run in the VM lane (test_gl_dmabuf.cpp).

#include "gl/import_cache.hpp"

#include <edgetensor/tensor.hpp>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

namespace edgetensor::detail::gl
{
namespace
{

class FakeImporter final : public Importer
{
public:
    Result<void> create(const ImportRequest& req, ImportedImage& out) override
    {
        ++created;
        if (refuse.count(req.key.identity))
            return make_error(ErrorCode::NotSupported, "fake: reads zeros");
        out.texture = next++;
        out.framebuffer = req.render_target ? out.texture + 1000 : 0;
        live.insert(out.texture);
        return {};
    }
    void destroy(ImportedImage& img) noexcept override
    {
        if (img.texture)
            live.erase(img.texture);
        img = {};
    }
    int created = 0;
    GLuint next = 1;
    std::set<GLuint> live;
    std::set<uint64_t> refuse;
};

ImportRequest request(const TensorDyn& t, uint32_t height = 1620, uint32_t stride = 1920,
                      uint64_t offset = 0)
{
    ImportRequest r;
    r.key = {t.buffer_identity().id(), 0, offset, stride, height, stride, kFourccR8, 0};
    r.alive = t.buffer_identity().weak();
    r.image = {stride, height, kFourccR8, {{3, offset, stride}}, {}, {}};
    return r;
}

TensorDyn tensor()
{
    auto t = TensorDyn::create(DType::U8, {2, 32}, TensorMemory::Mem);
    EXPECT_TRUE(t);
    return *t;
}

TEST(GlImportCache, OneImportPerKeyThenHits)
{
    FakeImporter imp;
    ImportCache cache(imp, 8);
    const TensorDyn a = tensor();
    auto first = cache.acquire(request(a));
    ASSERT_TRUE(first);
    for (int i = 0; i < 5; ++i) {
        auto again = cache.acquire(request(a));
        ASSERT_TRUE(again);
        EXPECT_EQ(again->texture, first->texture);
    }
    EXPECT_EQ(imp.created, 1);
    EXPECT_EQ(cache.stats().misses, 1u);
    EXPECT_EQ(cache.stats().hits, 5u);
    EXPECT_EQ(cache.stats().entries, 1u);
}

TEST(GlImportCache, ViewsShareTheirParentsImport)
{
    FakeImporter imp;
    ImportCache cache(imp, 8);
    auto img = TensorDyn::image(64, 32, PixelFormat::Rgb, DType::U8, CpuAccess::ReadWrite,
                                TensorMemory::Mem);
    ASSERT_TRUE(img);
    auto v = img->view(Region{8, 4, 16, 8});
    ASSERT_TRUE(v);
    // The converter keys the buffer's grid, which a view shares (same identity, stride, rows).
    ASSERT_TRUE(cache.acquire(request(*img, 32, 192)));
    ASSERT_TRUE(cache.acquire(request(*v, 32, 192)));
    EXPECT_EQ(imp.created, 1);
    EXPECT_EQ(cache.stats().hits, 1u);
}

TEST(GlImportCache, NewGeometryReKeysAndDropsTheStaleImport)
{
    FakeImporter imp;
    ImportCache cache(imp, 8);
    const TensorDyn a = tensor();
    auto base = cache.acquire(request(a, 1620, 1920));
    ASSERT_TRUE(base);
    for (const auto& req :
         {request(a, 2160, 1920), request(a, 1620, 2560), request(a, 1620, 1920, 4096)}) {
        auto r = cache.acquire(req);
        ASSERT_TRUE(r);
        EXPECT_NE(r->texture, base->texture) << "a reconfigured buffer never gets the old image";
        EXPECT_EQ(imp.live.size(), 1u) << "the buffer's previous geometry was dropped";
    }
    EXPECT_EQ(cache.stats().misses, 4u);
    EXPECT_EQ(cache.stats().evictions, 3u);
    EXPECT_EQ(cache.stats().entries, 1u);
    // The second buffer of a two-buffer image is another buffer: both stay.
    ImportRequest chroma_buffer = request(a);
    chroma_buffer.key.buffer = 1;
    ASSERT_TRUE(cache.acquire(chroma_buffer));
    EXPECT_EQ(cache.stats().entries, 2u);
    // Other identities are untouched by a re-key.
    const TensorDyn b = tensor();
    ASSERT_TRUE(cache.acquire(request(b)));
    ASSERT_TRUE(cache.acquire(request(a, 100, 1920)));
    EXPECT_EQ(cache.stats().entries, 3u);
    ASSERT_TRUE(cache.acquire(request(b)));
    EXPECT_EQ(cache.stats().hits, 1u);
}

TEST(GlImportCache, SweptWhenTheTensorsLivenessEnds)
{
    FakeImporter imp;
    ImportCache cache(imp, 8);
    std::optional<TensorDyn> a = tensor();
    std::optional<TensorDyn> view = a->batch(0).value_or(TensorDyn());
    const TensorDyn b = tensor();
    ASSERT_TRUE(cache.acquire(request(*a)));
    ASSERT_TRUE(cache.acquire(request(b)));
    EXPECT_EQ(imp.live.size(), 2u);
    a.reset();
    cache.sweep();
    EXPECT_EQ(cache.stats().swept, 0u) << "a batch of it still lives";
    view.reset();
    cache.sweep();
    EXPECT_EQ(cache.stats().swept, 1u);
    EXPECT_EQ(cache.stats().entries, 1u);
    EXPECT_EQ(imp.live.size(), 1u) << "the dead buffer's image was destroyed";
    // acquire() sweeps too.
    {
        const TensorDyn c = tensor();
        ASSERT_TRUE(cache.acquire(request(c)));
    }
    ASSERT_TRUE(cache.acquire(request(b)));
    EXPECT_EQ(cache.stats().swept, 2u);
}

TEST(GlImportCache, BoundedLeastRecentlyUsedFirst)
{
    FakeImporter imp;
    ImportCache cache(imp, 3);
    std::vector<TensorDyn> t;
    for (int i = 0; i < 4; ++i)
        t.push_back(tensor());
    ASSERT_TRUE(cache.acquire(request(t[0])));
    ASSERT_TRUE(cache.acquire(request(t[1])));
    ASSERT_TRUE(cache.acquire(request(t[2])));
    ASSERT_TRUE(cache.acquire(request(t[0]))); // t[1] is now the least recently used
    ASSERT_TRUE(cache.acquire(request(t[3])));
    EXPECT_EQ(cache.stats().evictions, 1u);
    EXPECT_EQ(cache.stats().entries, 3u);
    EXPECT_EQ(imp.live.size(), 3u);
    const int before = imp.created;
    ASSERT_TRUE(cache.acquire(request(t[0])));
    EXPECT_EQ(imp.created, before) << "t[0] survived";
    ASSERT_TRUE(cache.acquire(request(t[1])));
    EXPECT_EQ(imp.created, before + 1) << "t[1] was evicted";
}

TEST(GlImportCache, DeclinedImportsAreRememberedAndNamed_Negative)
{
    FakeImporter imp;
    ImportCache cache(imp, 8);
    const TensorDyn a = tensor();
    imp.refuse.insert(a.buffer_identity().id());
    for (int i = 0; i < 3; ++i) {
        auto r = cache.acquire(request(a));
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::NotSupported);
        EXPECT_NE(r.error().message().find("reads zeros"), std::string::npos);
    }
    EXPECT_EQ(imp.created, 1) << "the driver is asked once per buffer";
    EXPECT_EQ(cache.stats().misses, 1u);
    EXPECT_EQ(cache.stats().hits, 0u);
    EXPECT_TRUE(imp.live.empty());
}

TEST(GlImportCache, RenderTargetsNeedAFramebuffer)
{
    FakeImporter imp;
    ImportCache cache(imp, 8);
    const TensorDyn a = tensor();
    ASSERT_TRUE(cache.acquire(request(a)));
    ImportRequest rt = request(a);
    rt.render_target = true;
    auto r = cache.acquire(rt);
    ASSERT_FALSE(r) << "the same key imported as a texture only";
    const TensorDyn b = tensor();
    ImportRequest rt_b = request(b);
    rt_b.render_target = true;
    auto ok = cache.acquire(rt_b);
    ASSERT_TRUE(ok);
    EXPECT_NE(ok->framebuffer, 0u);
}

TEST(GlImportCache, ClearDestroysEverything)
{
    FakeImporter imp;
    {
        ImportCache cache(imp, 8);
        const TensorDyn a = tensor(), b = tensor();
        ASSERT_TRUE(cache.acquire(request(a)));
        ASSERT_TRUE(cache.acquire(request(b)));
        cache.clear();
        EXPECT_TRUE(imp.live.empty());
        EXPECT_EQ(cache.stats().entries, 0u);
        ASSERT_TRUE(cache.acquire(request(a)));
    }
    EXPECT_TRUE(imp.live.empty()) << "the destructor clears too";
}

/// A direct YUV import of the whole frame (every plane, the NV12 FourCC).
ImportRequest direct_request(const TensorDyn& t, uint64_t chroma = 0)
{
    const uint32_t nv12 = *drm_fourcc_of(ConvertFormat::Nv12);
    ImportRequest r;
    r.key = {t.buffer_identity().id(), kDirectBuffer, 0, 1920, 1080, 1920, nv12, chroma};
    r.alive = t.buffer_identity().weak();
    r.image = {1920, 1080, nv12, {{3, 0, 1920}, {3, 1920 * 1080, 1920}}, {}, {}};
    r.external = true;
    return r;
}

TEST(GlImportCache, DirectAndGridImportsOfOneBufferAreDistinctEntries)
{
    FakeImporter imp;
    ImportCache cache(imp, 8);
    const TensorDyn a = tensor();
    auto d = cache.acquire(direct_request(a));
    ASSERT_TRUE(d);
    auto g = cache.acquire(request(a));
    ASSERT_TRUE(g);
    EXPECT_NE(d->texture, g->texture) << "a grid is not the direct image";
    EXPECT_EQ(cache.stats().misses, 2u);
    EXPECT_EQ(cache.stats().entries, 2u) << "neither re-keys the other";
    ASSERT_TRUE(cache.acquire(direct_request(a)));
    ASSERT_TRUE(cache.acquire(request(a)));
    EXPECT_EQ(cache.stats().hits, 2u);
    // Another chroma layout (a from_planes frame whose chroma buffer moved) re-keys the direct
    // entry only.
    ASSERT_TRUE(cache.acquire(direct_request(a, 99)));
    EXPECT_EQ(cache.stats().misses, 3u);
    EXPECT_EQ(cache.stats().evictions, 1u);
    EXPECT_EQ(cache.stats().entries, 2u);
    EXPECT_EQ(imp.live.size(), 2u);
}

TEST(GlImportCache, DeclinedDirectImportIsRememberedBesideTheGrid_Negative)
{
    FakeImporter imp;
    ImportCache cache(imp, 8);
    const TensorDyn a = tensor();
    imp.refuse.insert(a.buffer_identity().id());
    auto d = cache.acquire(direct_request(a));
    ASSERT_FALSE(d);
    EXPECT_NE(d.error().message().find("fake"), std::string::npos);
    imp.refuse.clear();
    ASSERT_TRUE(cache.acquire(request(a))) << "the grid of the same buffer still imports";
    EXPECT_FALSE(cache.acquire(direct_request(a))) << "the decline is remembered, not retried";
    EXPECT_EQ(imp.created, 2);
    EXPECT_EQ(cache.stats().entries, 2u);
}

TEST(GlImportCache, KeysDescribeThemselves)
{
    ImportKey k{42, 1, 4096, 1920, 1620, 1920, kFourccR8, 0};
    EXPECT_EQ(import_key_string(k), "identity 42 buffer 1 offset 4096 1920x1620 stride 1920 R8");
    ImportKey d{42, kDirectBuffer, 0, 1920, 1080, 1920, *drm_fourcc_of(ConvertFormat::Nv12), 7};
    EXPECT_EQ(import_key_string(d), "identity 42 direct offset 0 1920x1080 stride 1920 NV12");
}

} // namespace
} // namespace edgetensor::detail::gl
