// SPDX-License-Identifier: MIT
//
// NNStreamer neighbours, reproduced (NNStreamer is not packaged in Debian 12). A small test
// element, "etnnsim", behaves like NNStreamer's BaseTransform elements do with the buffer
// BaseTransform hands them:
//  - mode=append: tensor_transform. transform_size() says 0 and transform() appends a new
//    system memory holding the output to whatever buffer it got (a pool's full one too).
//  - mode=empty-only: tensor_filter. Refuses a buffer that "already has a content".
//  - mode=write: an ordinary writer that fills the buffer it is given.
// It typecasts uint8 to float32, as `tensor_transform mode=typecast option=float32` does, so
// the values downstream prove which memory the tensor came from. own-pool=true makes it use a
// buffer pool of its own whatever downstream proposes, as an element does when downstream
// offers a pool.

#include "fd_count.hpp"
#include "gst_test_util.hpp"

#include <gst/allocators/allocators.h>
#include <gst/base/gstbasetransform.h>
#include <gst/check/gstharness.h>
#include <gst/edgetensor/edgetensor.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

// ---- the test element ----------------------------------------------------------------------

namespace
{

enum NnsMode { NNS_APPEND = 0, NNS_EMPTY_ONLY = 1, NNS_WRITE = 2 };

struct EtNnsSim {
    GstBaseTransform parent;
    NnsMode mode;
    gboolean own_pool;
    gboolean append_fd; // append: memfd-backed memories (importable) instead of system memory
    std::vector<int>* memfds;
    guint next_fd;
};
struct EtNnsSimClass {
    GstBaseTransformClass parent_class;
};

GType et_nns_sim_get_type();
#define ET_NNS_SIM(o) (reinterpret_cast<EtNnsSim*>(o))

G_DEFINE_TYPE(EtNnsSim, et_nns_sim, GST_TYPE_BASE_TRANSFORM)

enum { PROP_0, PROP_MODE, PROP_OWN_POOL, PROP_APPEND_FD };

#define NNS_CAPS "other/tensors, num_tensors = (int) 1, format = (string) static"
GstStaticPadTemplate nns_sink =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(NNS_CAPS));
GstStaticPadTemplate nns_src =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(NNS_CAPS));

GstCaps* nns_transform_caps(GstBaseTransform*, GstPadDirection dir, GstCaps* caps, GstCaps* filter)
{
    GstCaps* out = gst_caps_copy(caps);
    for (guint i = 0; i < gst_caps_get_size(out); ++i)
        gst_structure_set(gst_caps_get_structure(out, i), "types", G_TYPE_STRING,
                          dir == GST_PAD_SINK ? "float32" : "uint8", nullptr);
    if (filter) {
        GstCaps* t = gst_caps_intersect_full(filter, out, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(out);
        out = t;
    }
    return out;
}

gboolean nns_transform_size(GstBaseTransform* trans, GstPadDirection, GstCaps*, gsize size,
                            GstCaps*, gsize* othersize)
{
    // NNStreamer's elements report 0 and append their memory in transform().
    *othersize = ET_NNS_SIM(trans)->mode == NNS_WRITE ? size * 4 : 0;
    return TRUE;
}

gboolean nns_decide_allocation(GstBaseTransform* trans, GstQuery* query)
{
    if (ET_NNS_SIM(trans)->own_pool) {
        GstCaps* caps = nullptr;
        gst_query_parse_allocation(query, &caps, nullptr);
        GstBufferPool* pool = gst_edge_tensor_buffer_pool_new();
        GstStructure* config = gst_buffer_pool_get_config(pool);
        gst_buffer_pool_config_set_params(config, caps, 0, 2, 0);
        if (!gst_buffer_pool_set_config(pool, config))
            gst_buffer_pool_set_config(pool, gst_buffer_pool_get_config(pool));
        while (gst_query_get_n_allocation_pools(query) > 0)
            gst_query_remove_nth_allocation_pool(query, 0);
        gst_query_add_allocation_pool(query, pool, 0, 2, 0);
        gst_object_unref(pool);
    }
    return GST_BASE_TRANSFORM_CLASS(et_nns_sim_parent_class)->decide_allocation(trans, query);
}

GstMemory* nns_output_memory(EtNnsSim* self, gsize size)
{
    if (!self->append_fd)
        return gst_allocator_alloc(nullptr, size, nullptr);
    // A few memfds recycled, as a pool of foreign fd memory would be.
    if (self->memfds->empty())
        for (int i = 0; i < 3; ++i) {
            const int fd = memfd_create("etnnsim", MFD_CLOEXEC);
            if (fd < 0 || ftruncate(fd, off_t(size)) != 0)
                return nullptr;
            self->memfds->push_back(fd);
        }
    static GstAllocator* fd_alloc = gst_fd_allocator_new();
    const int fd = (*self->memfds)[self->next_fd++ % self->memfds->size()];
    return gst_fd_allocator_alloc(fd_alloc, fcntl(fd, F_DUPFD_CLOEXEC, 0), size,
                                  GST_FD_MEMORY_FLAG_NONE);
}

GstFlowReturn nns_transform(GstBaseTransform* trans, GstBuffer* inbuf, GstBuffer* outbuf)
{
    EtNnsSim* self = ET_NNS_SIM(trans);
    if (self->mode == NNS_EMPTY_ONLY && gst_buffer_get_size(outbuf) != 0) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, (nullptr),
                          ("The output buffer already has a content (buffer size = %zu).",
                           gst_buffer_get_size(outbuf)));
        return GST_FLOW_ERROR;
    }
    GstMapInfo in;
    if (!gst_buffer_map(inbuf, &in, GST_MAP_READ))
        return GST_FLOW_ERROR;
    GstMemory* mem = self->mode == NNS_WRITE ? nullptr : nns_output_memory(self, in.size * 4);
    GstMapInfo out;
    const bool mapped = mem ? gst_memory_map(mem, &out, GST_MAP_WRITE)
                            : gst_buffer_map(outbuf, &out, GST_MAP_WRITE);
    if (!mapped || out.size < in.size * 4) {
        gst_buffer_unmap(inbuf, &in);
        return GST_FLOW_ERROR;
    }
    auto* f = reinterpret_cast<float*>(out.data);
    for (gsize i = 0; i < in.size; ++i)
        f[i] = float(in.data[i]);
    gst_buffer_unmap(inbuf, &in);
    if (mem) {
        gst_memory_unmap(mem, &out);
        gst_buffer_append_memory(outbuf, mem);
    } else {
        gst_buffer_unmap(outbuf, &out);
    }
    return GST_FLOW_OK;
}

void nns_set_property(GObject* o, guint id, const GValue* v, GParamSpec* pspec)
{
    EtNnsSim* self = ET_NNS_SIM(o);
    if (id == PROP_MODE)
        self->mode = NnsMode(g_value_get_int(v));
    else if (id == PROP_OWN_POOL)
        self->own_pool = g_value_get_boolean(v);
    else if (id == PROP_APPEND_FD)
        self->append_fd = g_value_get_boolean(v);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, pspec);
}

void nns_get_property(GObject* o, guint id, GValue* v, GParamSpec* pspec)
{
    EtNnsSim* self = ET_NNS_SIM(o);
    if (id == PROP_MODE)
        g_value_set_int(v, self->mode);
    else if (id == PROP_OWN_POOL)
        g_value_set_boolean(v, self->own_pool);
    else if (id == PROP_APPEND_FD)
        g_value_set_boolean(v, self->append_fd);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, pspec);
}

void nns_finalize(GObject* o)
{
    EtNnsSim* self = ET_NNS_SIM(o);
    for (int fd : *self->memfds)
        close(fd);
    delete self->memfds;
    G_OBJECT_CLASS(et_nns_sim_parent_class)->finalize(o);
}

void et_nns_sim_class_init(EtNnsSimClass* klass)
{
    GObjectClass* oc = G_OBJECT_CLASS(klass);
    oc->set_property = nns_set_property;
    oc->get_property = nns_get_property;
    oc->finalize = nns_finalize;
    g_object_class_install_property(
        oc, PROP_MODE,
        g_param_spec_int("mode", "Mode", "0 append, 1 empty-only, 2 write", 0, 2, 0,
                         GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)));
    g_object_class_install_property(
        oc, PROP_OWN_POOL,
        g_param_spec_boolean("own-pool", "Own pool", "Use a pool whatever is proposed", FALSE,
                             GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)));
    g_object_class_install_property(
        oc, PROP_APPEND_FD,
        g_param_spec_boolean("append-fd", "Append fd", "Append memfd-backed memories", FALSE,
                             GParamFlags(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)));
    GstElementClass* ec = GST_ELEMENT_CLASS(klass);
    gst_element_class_add_static_pad_template(ec, &nns_sink);
    gst_element_class_add_static_pad_template(ec, &nns_src);
    gst_element_class_set_static_metadata(ec, "NNStreamer-like test element", "Filter/Tensor",
                                          "Behaves like tensor_transform / tensor_filter", "tests");
    GstBaseTransformClass* bt = GST_BASE_TRANSFORM_CLASS(klass);
    bt->transform_caps = nns_transform_caps;
    bt->transform_size = nns_transform_size;
    bt->decide_allocation = nns_decide_allocation;
    bt->transform = nns_transform;
    bt->passthrough_on_same_caps = FALSE;
}

void et_nns_sim_init(EtNnsSim* self)
{
    self->mode = NNS_APPEND;
    self->own_pool = FALSE;
    self->append_fd = FALSE;
    self->memfds = new std::vector<int>();
    self->next_fd = 0;
}

} // namespace

namespace edgetensor::test
{
namespace
{

constexpr const char* kInCaps = "other/tensors,num_tensors=1,format=static,types=uint8,"
                                "dimensions=3:224:224:1,framerate=30/1";
constexpr size_t kElements = 224 * 224 * 3;
constexpr size_t kFloatBytes = kElements * 4; // 602112: the two memories of 602112

void register_sim()
{
    static bool done =
        gst_element_register(nullptr, "etnnsim", GST_RANK_NONE, et_nns_sim_get_type());
    ASSERT_TRUE(done);
}

// `etnnsim <sim props> ! tensorimport <import props>` in a harness, the bus watched.
struct Chain {
    GstHarness* h = nullptr;
    GstBus* bus = gst_bus_new();
    explicit Chain(const std::string& sim, const std::string& import = "")
    {
        register_sim();
        h = gst_harness_new_parse(
            ("etnnsim " + sim + " ! tensorimport name=imp " + import).c_str());
        gst_element_set_bus(h->element, bus);
        gst_harness_set_src_caps_str(h, kInCaps);
    }
    ~Chain()
    {
        gst_harness_teardown(h);
        gst_bus_set_flushing(bus, TRUE);
        gst_object_unref(bus);
    }
    Chain(const Chain&) = delete;
    Chain& operator=(const Chain&) = delete;

    GstElement* import() const { return gst_bin_get_by_name(GST_BIN(h->element), "imp"); }
    guint64 copies() const
    {
        GstElement* e = import();
        guint64 v = 0;
        g_object_get(e, "copies", &v, nullptr);
        gst_object_unref(e);
        return v;
    }
    /// Every message of `type` so far: "text | debug" lines.
    std::vector<std::string> messages(GstMessageType type) { return bus_messages(bus, type); }
};

// Frame n of the upstream tensor: every byte n (the converter's uint8 output, say).
BufferPtr input_frame(int n)
{
    GstBuffer* b = gst_buffer_new_allocate(nullptr, kElements, nullptr);
    gst_buffer_memset(b, 0, guint8(n), kElements);
    return BufferPtr(b);
}

// The output is one tensor in one memory, float32 [1, 224, 224, 3], every value n.
void expect_frame(GstBuffer* out, int n)
{
    ASSERT_TRUE(out);
    EXPECT_EQ(gst_buffer_n_memory(out), 1u) << "NNStreamer downstream wants one memory per tensor";
    EXPECT_EQ(gst_buffer_get_size(out), kFloatBytes);
    GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->desc.dtype, guint32(DType::F32));
    ASSERT_EQ(m->desc.ndim, 4u);
    EXPECT_EQ(m->desc.shape[1], 224u);
    EXPECT_EQ(m->desc.shape[3], 3u);
    GstMapInfo map;
    ASSERT_TRUE(gst_buffer_map(out, &map, GST_MAP_READ));
    const auto* f = reinterpret_cast<const float*>(map.data);
    size_t wrong = 0;
    for (size_t i = 0; i < kElements; ++i)
        wrong += f[i] != float(n);
    gst_buffer_unmap(out, &map);
    EXPECT_EQ(wrong, 0u) << "frame " << n << ": values not from the tensor's memory";
}

// The pipeline: tensor_transform typecast upstream of tensorimport. Its appended
// system memory cannot be imported: copied, counted, and the warning names the memory type.
TEST(NnStreamer, TensorTransformAppendingItsMemoryIsCopiedNotRefused)
{
    Chain c("mode=0");
    for (int n = 0; n < 4; ++n) {
        ASSERT_EQ(gst_harness_push(c.h, input_frame(n).release()), GST_FLOW_OK)
            << testing::PrintToString(c.messages(GST_MESSAGE_ERROR));
        BufferPtr out(gst_harness_pull(c.h));
        expect_frame(out.get(), n);
    }
    EXPECT_EQ(c.copies(), 4u);
    const auto warnings = c.messages(GST_MESSAGE_WARNING);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("memory of type \"SystemMemory\""), std::string::npos)
        << warnings[0];
}

// tensor_transform on a pool buffer (the pool's own memory first, its output appended): the
// tensor is the appended memory, the stale pool memory is dropped, and the warning says so.
TEST(NnStreamer, AppendedToAPoolBufferTheAppendedMemoryIsTheTensor)
{
    Chain c("mode=0 own-pool=true");
    for (int n = 1; n < 5; ++n) {
        ASSERT_EQ(gst_harness_push(c.h, input_frame(n).release()), GST_FLOW_OK)
            << testing::PrintToString(c.messages(GST_MESSAGE_ERROR));
        BufferPtr out(gst_harness_pull(c.h));
        expect_frame(out.get(), n);
    }
    EXPECT_EQ(c.copies(), 4u) << "the appended memory is system memory";
    const auto warnings = c.messages(GST_MESSAGE_WARNING);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("2 memories (602112 + 602112 bytes)"), std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[0].find("appended after the pool's own memory"), std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[0].find("SystemMemory"), std::string::npos) << warnings[0];
}

// ... and when what it appends is fd memory, the tensor is imported: no copy, and the
// recycled memfds come back as the same tensors.
TEST(NnStreamer, AppendedFdMemoryIsImportedWithoutACopy)
{
    Chain c("mode=0 own-pool=true append-fd=true");
    std::set<guint64> ids;
    for (int n = 0; n < 9; ++n) {
        ASSERT_EQ(gst_harness_push(c.h, input_frame(n).release()), GST_FLOW_OK)
            << testing::PrintToString(c.messages(GST_MESSAGE_ERROR));
        BufferPtr out(gst_harness_pull(c.h));
        expect_frame(out.get(), n);
        EXPECT_TRUE(gst_is_fd_memory(gst_buffer_peek_memory(out.get(), 0)));
        ids.insert(gst_buffer_get_edge_tensor_meta(out.get())->identity);
    }
    EXPECT_EQ(c.copies(), 0u);
    EXPECT_EQ(ids.size(), 3u) << "three memfds, three imported tensors";
    EXPECT_TRUE(c.messages(GST_MESSAGE_WARNING).empty());
}

// tensor_filter insists on an empty output buffer: tensorimport proposes no pool for tensors,
// so it gets one and the pipeline runs.
TEST(NnStreamer, TensorFilterInsistingOnAnEmptyBufferRuns)
{
    Chain c("mode=1");
    for (int n = 0; n < 3; ++n) {
        ASSERT_EQ(gst_harness_push(c.h, input_frame(n).release()), GST_FLOW_OK)
            << testing::PrintToString(c.messages(GST_MESSAGE_ERROR));
        BufferPtr out(gst_harness_pull(c.h));
        expect_frame(out.get(), n);
    }
    EXPECT_TRUE(c.messages(GST_MESSAGE_ERROR).empty());
}

// The control: the same element handed a pool's full buffer fails, as tensor_filter does (so
// the test above would catch a proposed pool).
TEST(NnStreamer, TensorFilterRefusesAPoolBuffer_Negative)
{
    Chain c("mode=1 own-pool=true");
    EXPECT_EQ(gst_harness_push(c.h, input_frame(0).release()), GST_FLOW_ERROR);
    const auto errors = c.messages(GST_MESSAGE_ERROR);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find("already has a content"), std::string::npos) << errors[0];
}

// An ordinary writer allocates its output from the allocator tensorimport proposes: edgetensor
// memory, imported as the caps' float32 tensor without a copy.
TEST(NnStreamer, WritersAllocateFromTheProposedAllocatorAndStayZeroCopy)
{
    Chain c("mode=2");
    for (int n = 0; n < 3; ++n) {
        ASSERT_EQ(gst_harness_push(c.h, input_frame(n).release()), GST_FLOW_OK)
            << testing::PrintToString(c.messages(GST_MESSAGE_ERROR));
        BufferPtr out(gst_harness_pull(c.h));
        expect_frame(out.get(), n);
        EXPECT_TRUE(gst_is_edge_tensor_memory(gst_buffer_peek_memory(out.get(), 0)))
            << "the writer used the proposed allocator";
    }
    // Heap memory (EDGETENSOR_FORCE_MEM=1) has no fd to import; every other kind has.
    if (!std::getenv("EDGETENSOR_FORCE_MEM")) {
        EXPECT_EQ(c.copies(), 0u);
    }
}

TEST(NnStreamer, ProposesTheAllocatorButNoPoolForTensors)
{
    GstHarness* h = gst_harness_new("tensorimport");
    gst_harness_set_src_caps_str(h, kInCaps);
    CapsPtr caps = caps_from(kInCaps);
    MiniObjectPtr<GstQuery> q(gst_query_new_allocation(caps.get(), TRUE));
    ASSERT_TRUE(gst_pad_peer_query(h->srcpad, q.get()));
    EXPECT_EQ(gst_query_get_n_allocation_pools(q.get()), 0u);
    ASSERT_GE(gst_query_get_n_allocation_params(q.get()), 1u);
    GstAllocator* alloc = nullptr;
    gst_query_parse_nth_allocation_param(q.get(), 0, &alloc, nullptr);
    EXPECT_TRUE(alloc && GST_IS_EDGE_TENSOR_ALLOCATOR(alloc));
    if (alloc)
        gst_object_unref(alloc);
    gst_harness_teardown(h);
}

// ---- buffers built by hand: one tensor split across memories ------------------------------

struct RawImport {
    GstHarness* h = gst_harness_new("tensorimport");
    GstBus* bus = gst_bus_new();
    AllocatorPtr fd_alloc{gst_fd_allocator_new()};
    RawImport()
    {
        gst_element_set_bus(h->element, bus);
        gst_harness_set_src_caps_str(h, "other/tensors,num_tensors=1,format=static,"
                                        "types=uint8,dimensions=4:64:2:1,framerate=30/1");
    }
    ~RawImport()
    {
        gst_harness_teardown(h);
        gst_bus_set_flushing(bus, TRUE);
        gst_object_unref(bus);
    }
    RawImport(const RawImport&) = delete;
    RawImport& operator=(const RawImport&) = delete;
    static constexpr size_t kBytes = 4 * 64 * 2;
    UniqueFd memfd(guint8 fill)
    {
        UniqueFd fd(memfd_create("split", MFD_CLOEXEC));
        EXPECT_EQ(ftruncate(fd.get(), off_t(kBytes)), 0);
        void* p = mmap(nullptr, kBytes, PROT_WRITE, MAP_SHARED, fd.get(), 0);
        std::memset(p, fill, kBytes);
        munmap(p, kBytes);
        return fd;
    }
    /// An fd memory over [offset, offset + size) of `fd` (its own duplicate).
    GstMemory* part(int fd, gsize offset, gsize size)
    {
        GstMemory* m = gst_fd_allocator_alloc(fd_alloc.get(), fcntl(fd, F_DUPFD_CLOEXEC, 0),
                                              offset + size, GST_FD_MEMORY_FLAG_NONE);
        gst_memory_resize(m, gssize(offset), size);
        return m;
    }
    guint64 u64(const char* prop)
    {
        guint64 v = 0;
        g_object_get(h->element, prop, &v, nullptr);
        return v;
    }
    std::string warning()
    {
        GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
        if (!m)
            return "";
        GError* e = nullptr;
        gst_message_parse_warning(m, &e, nullptr);
        std::string s = e ? e->message : "";
        g_clear_error(&e);
        gst_message_unref(m);
        return s;
    }
};

TEST(NnStreamer, TensorSplitAcrossOneFdIsImportedAsOneMemory)
{
    RawImport r;
    UniqueFd fd = r.memfd(7);
    const auto before = open_fds();
    guint64 first_id = 0;
    for (int n = 0; n < 3; ++n) {
        GstBuffer* b = gst_buffer_new();
        gst_buffer_append_memory(b, r.part(fd.get(), 0, 200));
        gst_buffer_append_memory(b, r.part(fd.get(), 200, RawImport::kBytes - 200));
        ASSERT_EQ(gst_harness_push(r.h, b), GST_FLOW_OK);
        BufferPtr out(gst_harness_pull(r.h));
        ASSERT_TRUE(out);
        ASSERT_EQ(gst_buffer_n_memory(out.get()), 1u);
        EXPECT_EQ(gst_buffer_get_size(out.get()), RawImport::kBytes);
        EXPECT_EQ(inode_of(gst_fd_memory_get_fd(gst_buffer_peek_memory(out.get(), 0))),
                  inode_of(fd.get()))
            << "the joined memory is the same kernel object, not a copy";
        GstEdgeTensorMeta* m = gst_buffer_get_edge_tensor_meta(out.get());
        ASSERT_TRUE(m);
        if (n == 0)
            first_id = m->identity;
        EXPECT_EQ(m->identity, first_id) << "imported once, recognised after";
        GstMapInfo map;
        ASSERT_TRUE(gst_buffer_map(out.get(), &map, GST_MAP_READ));
        EXPECT_EQ(map.data[0], 7);
        EXPECT_EQ(map.data[RawImport::kBytes - 1], 7);
        gst_buffer_unmap(out.get(), &map);
    }
    EXPECT_EQ(r.u64("copies"), 0u);
    EXPECT_EQ(r.u64("cache-misses"), 1u);
    EXPECT_EQ(r.warning(), "");
    gst_element_set_state(r.h->element, GST_STATE_NULL);
    EXPECT_EQ(open_fds(), before) << "the joined memories' fds are all closed";
}

TEST(NnStreamer, TensorSplitAcrossTwoBuffersIsCopiedAndTheWarningSaysWhy)
{
    RawImport r;
    UniqueFd a = r.memfd(1), b = r.memfd(2);
    GstBuffer* buf = gst_buffer_new();
    gst_buffer_append_memory(buf, r.part(a.get(), 0, 256));
    gst_buffer_append_memory(buf, r.part(b.get(), 256, RawImport::kBytes - 256));
    ASSERT_EQ(gst_harness_push(r.h, buf), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(r.h));
    ASSERT_TRUE(out);
    ASSERT_EQ(gst_buffer_n_memory(out.get()), 1u);
    GstMapInfo map;
    ASSERT_TRUE(gst_buffer_map(out.get(), &map, GST_MAP_READ));
    EXPECT_EQ(map.data[0], 1);
    EXPECT_EQ(map.data[255], 1);
    EXPECT_EQ(map.data[256], 2) << "each part copied from where it lies";
    EXPECT_EQ(map.data[RawImport::kBytes - 1], 2);
    gst_buffer_unmap(out.get(), &map);
    EXPECT_EQ(r.u64("copies"), 1u);
    const std::string w = r.warning();
    EXPECT_NE(w.find("2 memories (256 + 256 bytes)"), std::string::npos) << w;
    EXPECT_NE(w.find("split across them"), std::string::npos) << w;
}

TEST(NnStreamer, MemoriesThatAreNoTensorAreRefusedNamingThem_Negative)
{
    RawImport r;
    // Two full tensors' worth in a buffer from no pool: which one is it?
    GstBuffer* buf = gst_buffer_new();
    gst_buffer_append_memory(buf, gst_allocator_alloc(nullptr, RawImport::kBytes, nullptr));
    gst_buffer_append_memory(buf, gst_allocator_alloc(nullptr, RawImport::kBytes, nullptr));
    EXPECT_EQ(gst_harness_push(r.h, buf), GST_FLOW_ERROR);
    GstMessage* m = gst_bus_pop_filtered(r.bus, GST_MESSAGE_ERROR);
    ASSERT_TRUE(m);
    GError* e = nullptr;
    gchar* dbg = nullptr;
    gst_message_parse_error(m, &e, &dbg);
    const std::string text = std::string(e->message) + " | " + dbg;
    EXPECT_NE(text.find("2 memories (512 + 512 bytes)"), std::string::npos) << text;
    EXPECT_NE(text.find("no buffer pool"), std::string::npos) << text;
    g_clear_error(&e);
    g_free(dbg);
    gst_message_unref(m);
}

// ---- rank padding --------------------------------------------------------------------------

// NNStreamer writes `3:224:224` and `3:224:224:1` for the same tensor; so do we.
TEST(NnStreamer, DimensionsEqualModuloTrailingOnesThroughTensorimport)
{
    GstHarness* h = gst_harness_new("tensorimport");
    gst_harness_set_caps_str(h, kInCaps,
                             "other/tensors,num_tensors=1,format=static,types=uint8,"
                             "dimensions=3:224:224,framerate=30/1");
    ASSERT_EQ(gst_harness_push(h, input_frame(3).release()), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(h));
    ASSERT_TRUE(out);
    CapsPtr caps(gst_pad_get_current_caps(h->sinkpad));
    ASSERT_TRUE(caps);
    EXPECT_STREQ(gst_structure_get_string(gst_caps_get_structure(caps.get(), 0), "dimensions"),
                 "3:224:224");
    gst_harness_teardown(h);
}

TEST(NnStreamer, DimensionsEqualModuloTrailingOnesThroughTensorconvert)
{
    GstHarness* h = gst_harness_new_parse("tensorconvert width=224 height=224");
    gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=320,height=240,framerate=30/1");
    gst_harness_set_sink_caps_str(h, "other/tensors,num_tensors=1,format=static,types=uint8,"
                                     "dimensions=3:224:224");
    GstBuffer* in = gst_buffer_new_allocate(nullptr, 320 * 240 * 3, nullptr);
    gst_buffer_memset(in, 0, 9, 320 * 240 * 3);
    ASSERT_EQ(gst_harness_push(h, in), GST_FLOW_OK);
    BufferPtr out(gst_harness_pull(h));
    ASSERT_TRUE(out);
    EXPECT_EQ(gst_buffer_get_size(out.get()), 224u * 224u * 3u);
    CapsPtr caps(gst_pad_get_current_caps(h->sinkpad));
    EXPECT_STREQ(gst_structure_get_string(gst_caps_get_structure(caps.get(), 0), "dimensions"),
                 "3:224:224");
    gst_harness_teardown(h);
}

TEST(NnStreamer, PaddedDimensionsListsEverySpelling)
{
    GValue list = G_VALUE_INIT;
    gst::padded_dimensions_list({1, 224, 224, 3}, &list);
    std::vector<std::string> got;
    for (guint i = 0; i < gst_value_list_get_size(&list); ++i)
        got.emplace_back(g_value_get_string(gst_value_list_get_value(&list, i)));
    g_value_unset(&list);
    ASSERT_GE(got.size(), 2u);
    EXPECT_EQ(got[0], "3:224:224:1") << "the canonical spelling first";
    EXPECT_EQ(got[1], "3:224:224");
    EXPECT_EQ(got.back(), "3:224:224:1:1:1:1:1");
    EXPECT_TRUE(gst::shapes_equal_padded({1, 224, 224, 3}, {224, 224, 3}));
    EXPECT_TRUE(gst::shapes_equal_padded({1, 1, 5}, {5}));
    EXPECT_FALSE(gst::shapes_equal_padded({1, 224, 224, 3}, {224, 3, 224}));
    EXPECT_FALSE(gst::shapes_equal_padded({2, 224, 224, 3}, {224, 224, 3}));
}

} // namespace
} // namespace edgetensor::test
