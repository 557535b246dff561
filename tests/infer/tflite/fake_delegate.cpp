// SPDX-License-Identifier: MIT
//
// A TensorFlow Lite external delegate for the tests: it takes every f32 ADD node, computes it
// itself, and (unless built with FAKE_NO_DMABUF) takes DMA-BUF inputs through the convention of
// edgetensor/infer_delegate.h, reading them by mmap() of the fd it was lent. It links no
// TensorFlow Lite (external delegates need only the C structures of common.h).
//
// Options: fail=create (creation fails, reported), fail=prepare (it refuses the graph),
// dmabuf=decline (it declines every buffer), claim=none (it takes no node).

#include "fake_delegate.hpp"

#include <edgetensor/infer_delegate.h>

#include <tensorflow/lite/builtin_ops.h>
#include <tensorflow/lite/core/c/common.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace
{

FakeDelegateStats g_stats;

struct Import {
    int dup_fd;
    int borrowed_fd;
    uint64_t offset;
    uint64_t size;
    uint64_t dev;
    uint64_t ino;
};

struct FakeDelegate {
    TfLiteDelegate base{};
    std::map<std::string, std::string> options;
    std::map<int, Import> imports;
    int next_handle = 1;
};

FakeDelegate* fake_of(TfLiteDelegate* d)
{
    return static_cast<FakeDelegate*>(d->data_);
}

struct AddOp {
    int a, b, out;
};
struct KernelState {
    FakeDelegate* owner;
    std::vector<AddOp> ops;
};

void* kernel_init(TfLiteContext* context, const char* buffer, size_t)
{
    const auto* params = reinterpret_cast<const TfLiteDelegateParams*>(buffer);
    auto* state = new KernelState{fake_of(params->delegate), {}};
    for (int i = 0; i < params->nodes_to_replace->size; ++i) {
        TfLiteNode* node = nullptr;
        TfLiteRegistration* reg = nullptr;
        context->GetNodeAndRegistration(context, params->nodes_to_replace->data[i], &node, &reg);
        state->ops.push_back(
            {node->inputs->data[0], node->inputs->data[1], node->outputs->data[0]});
    }
    return state;
}

void kernel_free(TfLiteContext*, void* buffer)
{
    delete static_cast<KernelState*>(buffer);
}

TfLiteStatus kernel_prepare(TfLiteContext*, TfLiteNode*)
{
    return kTfLiteOk;
}

TfLiteStatus kernel_invoke(TfLiteContext* context, TfLiteNode* node)
{
    auto* state = static_cast<KernelState*>(node->user_data);
    g_stats.invokes++;
    for (const AddOp& op : state->ops) {
        const TfLiteTensor& a = context->tensors[op.a];
        const TfLiteTensor& b = context->tensors[op.b];
        TfLiteTensor& out = context->tensors[op.out];
        const float* av = a.data.f;
        void* mapped = nullptr;
        size_t map_len = 0;
        if (a.buffer_handle != kTfLiteNullBufferHandle) {
            auto it = state->owner->imports.find(a.buffer_handle);
            if (it == state->owner->imports.end())
                return kTfLiteError;
            const Import& im = it->second;
            struct stat st {
            };
            if (::fcntl(im.borrowed_fd, F_GETFD) >= 0 && ::fstat(im.borrowed_fd, &st) == 0 &&
                uint64_t(st.st_ino) == im.ino && uint64_t(st.st_dev) == im.dev)
                g_stats.borrowed_fd_valid_at_invoke++;
            const long page = ::sysconf(_SC_PAGESIZE);
            const uint64_t base = im.offset / uint64_t(page) * uint64_t(page);
            map_len = size_t(im.offset - base + im.size);
            mapped = ::mmap(nullptr, map_len, PROT_READ, MAP_SHARED, im.dup_fd, off_t(base));
            if (mapped == MAP_FAILED)
                return kTfLiteError;
            av = reinterpret_cast<const float*>(static_cast<uint8_t*>(mapped) + (im.offset - base));
            g_stats.invokes_through_fd++;
        }
        const size_t n = out.bytes / sizeof(float);
        const size_t nb = b.bytes / sizeof(float);
        for (size_t i = 0; i < n; ++i)
            out.data.f[i] = av[i] + b.data.f[i % nb];
        if (mapped)
            ::munmap(mapped, map_len);
    }
    return kTfLiteOk;
}

TfLiteStatus prepare(TfLiteContext* context, TfLiteDelegate* delegate)
{
    FakeDelegate* d = fake_of(delegate);
    if (d->options["fail"] == "prepare") {
        context->ReportError(context, "fake delegate: asked to refuse the graph");
        return kTfLiteError;
    }
    if (d->options["claim"] == "none")
        return kTfLiteOk;
    TfLiteIntArray* plan = nullptr;
    if (context->GetExecutionPlan(context, &plan) != kTfLiteOk)
        return kTfLiteError;
    std::vector<int> nodes;
    for (int i = 0; i < plan->size; ++i) {
        TfLiteNode* node = nullptr;
        TfLiteRegistration* reg = nullptr;
        context->GetNodeAndRegistration(context, plan->data[i], &node, &reg);
        if (reg->builtin_code == kTfLiteBuiltinAdd && node->inputs->size == 2 &&
            context->tensors[node->inputs->data[0]].type == kTfLiteFloat32)
            nodes.push_back(plan->data[i]);
    }
    if (nodes.empty())
        return kTfLiteOk;
    g_stats.claimed_nodes += int(nodes.size());
    auto* list = static_cast<TfLiteIntArray*>(std::malloc(sizeof(int) * (nodes.size() + 1)));
    list->size = int(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i)
        list->data[i] = nodes[i];
    TfLiteRegistration kernel{};
    kernel.init = kernel_init;
    kernel.free = kernel_free;
    kernel.prepare = kernel_prepare;
    kernel.invoke = kernel_invoke;
    kernel.builtin_code = kTfLiteBuiltinDelegate;
    kernel.custom_name = "EdgetensorFakeDelegate";
    kernel.version = 1;
    const TfLiteStatus s =
        context->ReplaceNodeSubsetsWithDelegateKernels(context, kernel, list, delegate);
    std::free(list);
    return s;
}

void free_buffer_handle(TfLiteContext*, TfLiteDelegate* delegate, TfLiteBufferHandle* handle)
{
    FakeDelegate* d = fake_of(delegate);
    auto it = d->imports.find(*handle);
    if (it != d->imports.end()) {
        ::close(it->second.dup_fd);
        d->imports.erase(it);
        g_stats.frees++;
    }
    *handle = kTfLiteNullBufferHandle;
}

} // namespace

FAKE_EXPORT TfLiteDelegate* tflite_plugin_create_delegate(char** keys, char** values, size_t n,
                                                          void (*report_error)(const char*))
{
    auto* d = new FakeDelegate();
    std::string all;
    for (size_t i = 0; i < n; ++i) {
        d->options[keys[i]] = values[i];
        all += std::string(keys[i]) + "=" + values[i] + ";";
    }
    std::snprintf(g_stats.options, sizeof(g_stats.options), "%s", all.c_str());
    if (d->options["fail"] == "create") {
        if (report_error)
            report_error("fake delegate: asked to fail (fail=create)");
        delete d;
        return nullptr;
    }
    d->base.data_ = d;
    d->base.Prepare = prepare;
    d->base.FreeBufferHandle = free_buffer_handle;
    d->base.flags = kTfLiteDelegateFlagsNone;
    g_stats.creates++;
    return &d->base;
}

FAKE_EXPORT void tflite_plugin_destroy_delegate(TfLiteDelegate* delegate)
{
    FakeDelegate* d = fake_of(delegate);
    for (auto& kv : d->imports)
        ::close(kv.second.dup_fd);
    g_stats.destroys++;
    delete d;
}

#ifndef FAKE_NO_DMABUF
FAKE_EXPORT int edgetensor_delegate_import_dmabuf_v1(void* delegate, int,
                                                     const EdgeTensorDelegateBuffer* buffer,
                                                     char* why, size_t why_size)
{
    // The declared type of the symbol, checked here where both are visible.
    static_assert(std::is_same_v<decltype(&edgetensor_delegate_import_dmabuf_v1),
                                 EdgeTensorDelegateImportDmabuf>);
    FakeDelegate* d = fake_of(static_cast<TfLiteDelegate*>(delegate));
    auto decline = [&](const char* reason) {
        if (why)
            std::snprintf(why, why_size, "%s", reason);
        g_stats.declines++;
        return -1;
    };
    if (buffer->version != EDGETENSOR_DELEGATE_BUFFER_VERSION ||
        buffer->desc.version != EDGETENSOR_DESC_VERSION ||
        buffer->desc.kind != EDGETENSOR_KIND_DMABUF)
        return decline("not a version-1 DMA-BUF description");
    if (d->options["dmabuf"] == "decline")
        return decline("fake delegate: declined by its options (dmabuf=decline)");
    const int borrowed = int(buffer->desc.handle);
    struct stat st {
    };
    if (::fstat(borrowed, &st) != 0)
        return decline("the fd cannot be fstat()ed");
    const int fd = ::fcntl(borrowed, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return decline("dup failed");
    const int handle = d->next_handle++;
    d->imports[handle] = Import{
        fd, borrowed, buffer->offset, buffer->size, uint64_t(st.st_dev), uint64_t(st.st_ino)};
    g_stats.imports++;
    g_stats.last_dev = uint64_t(st.st_dev);
    g_stats.last_ino = uint64_t(st.st_ino);
    g_stats.last_offset = buffer->offset;
    g_stats.last_size = buffer->size;
    g_stats.last_ndim = buffer->desc.ndim;
    g_stats.last_dtype = buffer->desc.dtype;
    for (uint32_t i = 0; i < 8; ++i)
        g_stats.last_shape[i] = i < buffer->desc.ndim ? buffer->desc.shape[i] : 0;
    return handle;
}
#endif

FAKE_EXPORT const FakeDelegateStats* fake_delegate_stats()
{
    return &g_stats;
}

FAKE_EXPORT void fake_delegate_reset()
{
    g_stats = FakeDelegateStats{};
}
