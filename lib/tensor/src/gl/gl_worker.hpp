// SPDX-License-Identifier: MIT
//
// The GL context owner: one thread that creates an EGL display and an OpenGL ES 3 context,
// makes it current and then runs the tasks other threads post to its queue, one at a time.
// GL is only ever called from that thread.
//
// Ownership: a Worker lives in a shared_ptr held by its owners (GlContext handles, GL converter
// backends, and a PBO while a CPU map of it is open). Everything else (PBO storage) holds a
// weak_ptr, the "weak sender": once the owners are gone the thread drains its queue, destroys
// the context and exits, and a weak holder's lock() fails, which it reports as Disconnected.

#pragma once

#include "edgetensor/gl.hpp"
#include "gl/gl_api.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace edgetensor::detail::gl
{

/// The error every operation on a PBO of a context that has shut down returns.
Unexpected disconnected(std::string_view what);

class Worker
{
public:
    /// Starts the thread and waits until it has a current context (or has failed).
    static Result<std::shared_ptr<Worker>> start();
    /// Asks the thread to finish the queued tasks, destroy the context and exit; joins it.
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    const GlInfo& info() const noexcept { return info_; }
    /// Process-unique, for telling contexts apart in messages and ownership checks.
    uint64_t serial() const noexcept { return serial_; }
    /// The GL entry points. Call the GL functions only inside tasks.
    const Api& gl() const noexcept { return *api_; }
    EGLDisplay display() const noexcept { return display_; }
    bool on_worker_thread() const noexcept;

    /// Runs `fn` on the GL thread and returns what it returns. Called on the GL thread itself
    /// (a task calling another), it runs inline. The GL error state is cleared before `fn`.
    template <typename R> Result<R> call(const std::function<Result<R>()>& fn)
    {
        std::optional<Result<R>> out;
        run_sync([&] { out.emplace(fn()); });
        return std::move(*out);
    }
    /// Queues `fn` without waiting (releasing GL objects of something that is going away).
    void post(std::function<void()> fn);

    /// Registers `fn` to run on the GL thread once the queue has drained at shutdown, with the
    /// context still current, before it is destroyed: for state that must be released while
    /// the GL objects it refers to exist (a PBO's CUDA registration). Returns an id for
    /// remove_shutdown_hook(). Any thread.
    uint64_t add_shutdown_hook(std::function<void()> fn);
    /// Drops a hook that has not run yet (its owner released the state itself). Any thread.
    void remove_shutdown_hook(uint64_t id);

    /// Clears pending GL errors; returns the first one (GL_NO_ERROR when none).
    GLenum take_gl_error() const noexcept;

private:
    Worker();
    void run_sync(const std::function<void()>& fn);
    void loop(std::function<void(Result<void>)> ready);
    Result<void> init_context();
    void destroy_context() noexcept;

    struct Task {
        std::function<void()> fn;
        // Set by the GL thread when fn has run (sync calls only).
        bool* done = nullptr;
    };

    const Api* api_ = nullptr;
    GlInfo info_;
    uint64_t serial_ = 0;
    EGLDisplay display_ = EGL_NO_DISPLAY;
    EGLContext context_ = EGL_NO_CONTEXT;
    std::thread::id thread_id_;

    std::mutex mu_;
    std::condition_variable cv_;      // the queue has work, or stop
    std::condition_variable done_cv_; // a sync task finished
    std::deque<Task> queue_;
    std::map<uint64_t, std::function<void()>> shutdown_hooks_; // guarded by mu_
    uint64_t next_hook_ = 1;                                   // guarded by mu_
    bool stop_ = false;
    std::thread thread_;
};

/// The process's shared worker (GlContext::shared()); starts one when none is alive.
Result<std::shared_ptr<Worker>> shared_worker();

/// Why compute=auto need not start a context at all: libEGL is missing, or EGL lists no device
/// with a DRM node (only a CPU rasteriser could answer). nullopt when a GPU may be there, when
/// EDGETENSOR_GL_DEVICE names one, or with EDGETENSOR_GL_ALLOW_SOFTWARE=1.
std::optional<std::string> software_only_reason();

} // namespace edgetensor::detail::gl
