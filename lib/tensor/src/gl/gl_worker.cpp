// SPDX-License-Identifier: MIT

#include "gl/gl_worker.hpp"

#include "log.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

namespace edgetensor::detail::gl
{
namespace
{

constexpr const char* kCat = "gl";

std::atomic<uint64_t> g_next_serial{1};

bool has_word(const char* list, std::string_view word)
{
    if (!list)
        return false;
    std::string_view s(list);
    size_t pos = 0;
    while ((pos = s.find(word, pos)) != std::string_view::npos) {
        const bool start = pos == 0 || s[pos - 1] == ' ';
        const size_t end = pos + word.size();
        if (start && (end == s.size() || s[end] == ' '))
            return true;
        pos = end;
    }
    return false;
}

// EGL hands out one EGLDisplay per (platform, native display) and eglTerminate() ends it for
// every user at once (Mesa 22 has no EGL_KHR_display_reference). A display is therefore
// initialised once and kept for the life of the process: terminating it would also unload
// Mesa's driver (tens of ms to load again for the next context, and its allocations would be
// reported as leaks of an unknown module). Contexts come and go on it.
std::mutex g_display_mu;
std::set<EGLDisplay> g_displays; // initialised; guarded by g_display_mu

Result<void> acquire_display(const Api& a, EGLDisplay d)
{
    std::lock_guard lock(g_display_mu);
    if (g_displays.count(d))
        return {};
    EGLint major = 0, minor = 0;
    if (!a.eglInitialize(d, &major, &minor))
        return make_error(ErrorCode::Unavailable,
                          "eglInitialize failed (" + egl_error_name(a.eglGetError()) + ")");
    g_displays.insert(d);
    return {};
}

struct Candidate {
    EGLDisplay display;
    std::string platform;
    std::string device;
};

std::string device_node(const Api& a, EGLDeviceEXT dev)
{
    if (!a.eglQueryDeviceStringEXT)
        return {};
    const char* exts = a.eglQueryDeviceStringEXT(dev, EGL_EXTENSIONS);
    if (has_word(exts, "EGL_EXT_device_drm_render_node"))
        if (const char* rn = a.eglQueryDeviceStringEXT(dev, EGL_DRM_RENDER_NODE_FILE_EXT))
            return rn;
    if (has_word(exts, "EGL_EXT_device_drm"))
        if (const char* f = a.eglQueryDeviceStringEXT(dev, EGL_DRM_DEVICE_FILE_EXT))
            return f;
    return {};
}

/// The displays to try, best first. EDGETENSOR_GL_DEVICE names one EGL device (only it).
/// Otherwise Mesa's surfaceless platform comes first: it opens the render node of a GPU with a
/// hardware driver itself, and falls back to kms_swrast on a primary node (vgem: where dumb
/// buffers can be mapped, so DMA-BUF imports work) and then to llvmpipe. EGL devices with a
/// DRM node follow, for EGL implementations without the surfaceless platform. (Mesa 22's device
/// platform opens vgem's render node, where kms_swrast cannot map imports: they read garbage.)
Result<std::vector<Candidate>> candidates(const Api& a)
{
    const char* client = a.eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    const char* want = std::getenv("EDGETENSOR_GL_DEVICE");
    const bool named = want && *want;
    const bool devices = has_word(client, "EGL_EXT_device_enumeration") &&
                         has_word(client, "EGL_EXT_platform_device") && a.eglQueryDevicesEXT;
    std::vector<Candidate> out;
    if (!named && has_word(client, "EGL_MESA_platform_surfaceless")) {
        EGLDisplay d =
            a.eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
        if (d != EGL_NO_DISPLAY)
            out.push_back({d, "surfaceless", {}});
    }
    std::string seen;
    if (devices) {
        EGLDeviceEXT devs[16];
        EGLint n = 0;
        if (!a.eglQueryDevicesEXT(16, devs, &n))
            n = 0;
        for (EGLint i = 0; i < n; ++i) {
            const std::string node = device_node(a, devs[i]);
            seen += (seen.empty() ? "" : ", ") + (node.empty() ? std::string("(software)") : node);
            if (named ? node != want : node.empty())
                continue;
            EGLDisplay d = a.eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devs[i], nullptr);
            if (d != EGL_NO_DISPLAY)
                out.push_back({d, "device", node});
        }
    }
    if (named && out.empty())
        return make_error(ErrorCode::Unavailable, std::string("EDGETENSOR_GL_DEVICE=") + want +
                                                      " is not an EGL device here (EGL devices: " +
                                                      (seen.empty() ? "none" : seen) + ")");
    if (out.empty())
        return make_error(ErrorCode::Unavailable,
                          std::string("no headless EGL display: libEGL offers neither "
                                      "EGL_MESA_platform_surfaceless nor an EGL device with a "
                                      "DRM node (client extensions: ") +
                              (client ? client : "none") +
                              "); install libegl-mesa0 and libgl1-mesa-dri");
    return out;
}

bool is_software(std::string_view renderer)
{
    for (std::string_view w : {"llvmpipe", "softpipe", "swrast", "SwiftShader", "Software"})
        if (renderer.find(w) != std::string_view::npos)
            return true;
    return false;
}

std::mutex g_shared_mu;
std::weak_ptr<Worker> g_shared; // guarded by g_shared_mu

} // namespace

Unexpected disconnected(std::string_view what)
{
    return make_error(ErrorCode::Disconnected,
                      std::string(what) +
                          ": the GL context that owns it has shut down (its last GlContext "
                          "handle or converter is gone); PBO tensors cannot be used after their "
                          "owner");
}

Worker::Worker() : serial_(g_next_serial.fetch_add(1, std::memory_order_relaxed)) {}

Result<std::shared_ptr<Worker>> Worker::start()
{
    auto a = api();
    if (!a)
        return unexpected(std::move(a).error());
    std::shared_ptr<Worker> w(new (std::nothrow) Worker());
    if (!w)
        return make_error(ErrorCode::AllocationFailed, "out of memory starting the GL thread");
    w->api_ = *a;

    std::mutex m;
    std::condition_variable cv;
    std::optional<Result<void>> result;
    try {
        w->thread_ = std::thread([&, raw = w.get()] {
            raw->loop([&](Result<void> r) {
                std::lock_guard lock(m);
                result.emplace(std::move(r));
                cv.notify_all();
            });
        });
    } catch (const std::system_error& e) {
        return make_error(ErrorCode::AllocationFailed,
                          std::string("cannot start the GL thread: ") + e.what());
    }
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return result.has_value(); });
    if (!*result) {
        lock.unlock();
        w->thread_.join();
        return unexpected(std::move(*result).error());
    }
    ET_LOG_INFO(kCat, "GL context %llu: %s on %s%s%s (%s), EGL DMA-BUF import %s",
                static_cast<unsigned long long>(w->serial_), w->info_.version.c_str(),
                w->info_.renderer.c_str(), w->info_.device.empty() ? "" : " at ",
                w->info_.device.c_str(), w->info_.platform.c_str(),
                w->info_.dma_buf_import
                    ? (w->info_.dma_buf_import_modifiers ? "with modifiers" : "yes")
                    : "no (DMA-BUF sources are uploaded)");
    return w;
}

Worker::~Worker()
{
    if (!thread_.joinable())
        return;
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (on_worker_thread()) {
        // The last owner let go inside a task: the loop sees stop_ and exits on its own.
        thread_.detach();
        return;
    }
    thread_.join();
}

bool Worker::on_worker_thread() const noexcept
{
    return std::this_thread::get_id() == thread_id_;
}

void Worker::post(std::function<void()> fn)
{
    {
        std::lock_guard lock(mu_);
        queue_.push_back(Task{std::move(fn), nullptr});
    }
    cv_.notify_one();
}

void Worker::run_sync(const std::function<void()>& fn)
{
    if (on_worker_thread()) {
        take_gl_error();
        fn();
        return;
    }
    bool done = false;
    {
        std::lock_guard lock(mu_);
        queue_.push_back(Task{[&fn] { fn(); }, &done});
    }
    cv_.notify_one();
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] { return done; });
}

uint64_t Worker::add_shutdown_hook(std::function<void()> fn)
{
    std::lock_guard lock(mu_);
    const uint64_t id = next_hook_++;
    shutdown_hooks_.emplace(id, std::move(fn));
    return id;
}

void Worker::remove_shutdown_hook(uint64_t id)
{
    std::lock_guard lock(mu_);
    shutdown_hooks_.erase(id);
}

GLenum Worker::take_gl_error() const noexcept
{
    GLenum first = GL_NO_ERROR;
    // Bounded: a lost context can report errors forever.
    for (int i = 0; i < 16; ++i) {
        const GLenum e = api_->glGetError();
        if (e == GL_NO_ERROR)
            break;
        if (first == GL_NO_ERROR)
            first = e;
    }
    return first;
}

void Worker::loop(std::function<void(Result<void>)> ready)
{
    thread_id_ = std::this_thread::get_id();
    auto init = init_context();
    const bool ok = bool(init);
    ready(std::move(init));
    if (!ok)
        return;
    for (;;) {
        Task t;
        {
            std::unique_lock lock(mu_);
            cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
            if (queue_.empty() && shutdown_hooks_.empty())
                break; // stop_ and nothing left: every queued release has run
            if (queue_.empty()) {
                // Hooks last, after every queued release, with the context still current.
                auto hooks = std::move(shutdown_hooks_);
                shutdown_hooks_.clear();
                lock.unlock();
                for (auto& h : hooks)
                    h.second();
                continue;
            }
            t = std::move(queue_.front());
            queue_.pop_front();
        }
        take_gl_error();
        t.fn();
        if (t.done) {
            {
                std::lock_guard lock(mu_);
                *t.done = true;
            }
            done_cv_.notify_all();
        }
    }
    destroy_context();
}

Result<void> Worker::init_context()
{
    const Api& a = *api_;
    auto cands = candidates(a);
    if (!cands)
        return unexpected(std::move(cands).error());
    std::string tried;
    for (const Candidate& c : *cands) {
        const std::string label = c.platform + (c.device.empty() ? "" : " " + c.device);
        if (auto r = acquire_display(a, c.display); !r) {
            tried += "; " + label + ": " + r.error().message();
            continue;
        }
        display_ = c.display;
        const char* dexts = a.eglQueryString(display_, EGL_EXTENSIONS);
        EGLConfig config = EGL_NO_CONFIG_KHR;
        if (!has_word(dexts, "EGL_KHR_no_config_context") &&
            !has_word(dexts, "EGL_MESA_configless_context")) {
            const EGLint want[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, 0,
                                   EGL_NONE};
            EGLint n = 0;
            if (!a.eglChooseConfig(display_, want, &config, 1, &n) || n < 1)
                config = nullptr;
        }
        EGLContext ctx = EGL_NO_CONTEXT;
        if (a.eglBindAPI(EGL_OPENGL_ES_API)) {
            const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0,
                                    EGL_NONE};
            ctx = a.eglCreateContext(display_, config, EGL_NO_CONTEXT, attrs);
        }
        if (ctx == EGL_NO_CONTEXT) {
            tried += "; " + label + ": no OpenGL ES 3.0 context (" +
                     egl_error_name(a.eglGetError()) + ")";
            display_ = EGL_NO_DISPLAY;
            continue;
        }
        if (!a.eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
            tried += "; " + label + ": eglMakeCurrent without a surface failed (" +
                     egl_error_name(a.eglGetError()) + ")";
            a.eglDestroyContext(display_, ctx);
            display_ = EGL_NO_DISPLAY;
            continue;
        }
        context_ = ctx;
        auto str = [&](GLenum e) {
            const GLubyte* s = a.glGetString(e);
            return s ? std::string(reinterpret_cast<const char*>(s)) : std::string();
        };
        info_.platform = c.platform;
        info_.device = c.device;
        if (info_.device.empty() && a.eglQueryDisplayAttribEXT && a.eglQueryDeviceStringEXT) {
            EGLAttrib dev = 0;
            if (a.eglQueryDisplayAttribEXT(display_, EGL_DEVICE_EXT, &dev) && dev)
                info_.device = device_node(a, reinterpret_cast<EGLDeviceEXT>(dev));
        }
        info_.vendor = str(GL_VENDOR);
        info_.renderer = str(GL_RENDERER);
        info_.version = str(GL_VERSION);
        info_.software = is_software(info_.renderer);
        const std::string gl_exts = str(GL_EXTENSIONS);
        const bool oes_image = has_word(gl_exts.c_str(), "GL_OES_EGL_image") &&
                               a.glEGLImageTargetTexture2DOES != nullptr;
        info_.dma_buf_import = has_word(dexts, "EGL_EXT_image_dma_buf_import") &&
                               has_word(dexts, "EGL_KHR_image_base") && oes_image &&
                               a.eglCreateImageKHR && a.eglDestroyImageKHR;
        info_.dma_buf_import_modifiers =
            info_.dma_buf_import && has_word(dexts, "EGL_EXT_image_dma_buf_import_modifiers") &&
            a.eglQueryDmaBufModifiersEXT;
        info_.yuv_external =
            info_.dma_buf_import && has_word(gl_exts.c_str(), "GL_OES_EGL_image_external_essl3");
        GLint mts = 0;
        a.glGetIntegerv(GL_MAX_TEXTURE_SIZE, &mts);
        info_.max_texture_size = mts;
        take_gl_error();
        return {};
    }
    return make_error(ErrorCode::Unavailable,
                      "no EGL display gave an OpenGL ES 3 context" + tried +
                          " (headless hosts need Mesa: libegl-mesa0 and libgl1-mesa-dri)");
}

void Worker::destroy_context() noexcept
{
    const Api& a = *api_;
    if (context_ != EGL_NO_CONTEXT) {
        a.glFinish();
        a.eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        a.eglDestroyContext(display_, context_);
        context_ = EGL_NO_CONTEXT;
    }
    display_ = EGL_NO_DISPLAY;
    a.eglReleaseThread();
    ET_LOG_DEBUG(kCat, "GL context %llu shut down", static_cast<unsigned long long>(serial_));
}

namespace
{

// EGL lists its devices; nullopt when one has a DRM node or when EGL cannot tell.
std::optional<std::string> egl_software_only(const Api& api_)
{
    const char* client = api_.eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!has_word(client, "EGL_EXT_device_enumeration") || !api_.eglQueryDevicesEXT)
        return std::nullopt; // cannot tell without a display
    EGLDeviceEXT devs[16];
    EGLint n = 0;
    if (!api_.eglQueryDevicesEXT(16, devs, &n))
        return std::nullopt;
    for (EGLint i = 0; i < n; ++i)
        if (!device_node(api_, devs[i]).empty())
            return std::nullopt;
    return std::string("EGL lists no device with a DRM render node, only software rendering");
}

} // namespace

std::optional<std::string> software_only_reason()
{
    auto a = api();
    if (!a)
        return a.error().message();
    const char* dev = std::getenv("EDGETENSOR_GL_DEVICE");
    const char* allow = std::getenv("EDGETENSOR_GL_ALLOW_SOFTWARE");
    if ((dev && *dev) || (allow && std::strcmp(allow, "1") == 0))
        return std::nullopt;
    // Asked once per process, off the caller's thread (a streaming thread): see
    // run_on_own_thread() for why no EGL call runs there.
    static std::once_flag once;
    static std::optional<std::string> reason;
    std::call_once(once, [&] { run_on_own_thread([&] { reason = egl_software_only(**a); }); });
    return reason;
}

Result<std::shared_ptr<Worker>> shared_worker()
{
    std::lock_guard lock(g_shared_mu);
    if (auto w = g_shared.lock())
        return w;
    auto w = Worker::start();
    if (!w)
        return unexpected(std::move(w).error());
    g_shared = *w;
    return std::move(*w);
}

} // namespace edgetensor::detail::gl
