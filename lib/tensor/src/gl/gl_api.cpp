// SPDX-License-Identifier: MIT

#include "gl/gl_api.hpp"

#include "log.hpp"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <system_error>
#include <thread>

namespace edgetensor::detail::gl
{
namespace
{

Api g_api;
std::once_flag g_once;
std::string g_error; // empty on success; written once under g_once

template <typename F> void resolve(F*& slot, void* lib, const char* name, Api& a)
{
    void* p = lib ? ::dlsym(lib, name) : nullptr;
    if (!p && a.eglGetProcAddress)
        p = a.eglGetProcAddress(name);
    slot = reinterpret_cast<F*>(p);
}

std::string load()
{
    const char* egl_name = std::getenv("EDGETENSOR_EGL_LIBRARY");
    if (!egl_name || !*egl_name)
        egl_name = "libEGL.so.1";
    // Never dlclose()d: the driver's threads and atexit handlers outlive any user of ours.
    void* egl = ::dlopen(egl_name, RTLD_NOW | RTLD_LOCAL);
    if (!egl) {
        const char* why = ::dlerror();
        return std::string("cannot load ") + egl_name + " (" + (why ? why : "unknown error") +
               "); install libegl1 and a driver (libegl-mesa0) for the GL backend";
    }
    g_api.eglGetProcAddress =
        reinterpret_cast<void* (*)(const char*)>(::dlsym(egl, "eglGetProcAddress"));
    if (!g_api.eglGetProcAddress)
        return std::string(egl_name) + " has no eglGetProcAddress";
#define ET_GL_LOAD_CORE(ret, name, args)                                                           \
    resolve(g_api.name, egl, #name, g_api);                                                        \
    if (!g_api.name)                                                                               \
        return std::string(egl_name) + " lacks " #name;
    ET_EGL_CORE_FUNCS(ET_GL_LOAD_CORE)
#undef ET_GL_LOAD_CORE
#define ET_GL_LOAD_EXT(ret, name, args) resolve(g_api.name, nullptr, #name, g_api);
    ET_EGL_EXT_FUNCS(ET_GL_LOAD_EXT)
#undef ET_GL_LOAD_EXT
    if (!g_api.eglGetPlatformDisplayEXT)
        return std::string(egl_name) + " lacks EGL_EXT_platform_base (eglGetPlatformDisplayEXT)";

    void* gles = ::dlopen("libGLESv2.so.2", RTLD_NOW | RTLD_LOCAL);
#define ET_GL_LOAD_GL(ret, name, args)                                                             \
    resolve(g_api.name, gles, #name, g_api);                                                       \
    if (!g_api.name)                                                                               \
        return "no OpenGL ES 3 entry point " #name " (libGLESv2.so.2 missing? install libgles2)";
    ET_GL_FUNCS(ET_GL_LOAD_GL)
#undef ET_GL_LOAD_GL
    g_api.glEGLImageTargetTexture2DOES = reinterpret_cast<PFNGLEGLIMAGETARGETTEXTURE2DOESPROC>(
        g_api.eglGetProcAddress("glEGLImageTargetTexture2DOES"));
    return {};
}

} // namespace

void run_on_own_thread(const std::function<void()>& fn)
{
    try {
        std::thread t(fn);
        t.join();
        return;
    } catch (const std::system_error&) {
        // No thread to be had (a thread limit): here, then, with the exit-time risk.
    }
    fn();
}

Result<const Api*> api()
{
    std::call_once(g_once, [] {
        // eglGetProcAddress leaves per-thread state in libglvnd: see run_on_own_thread().
        run_on_own_thread([] { g_error = load(); });
        if (!g_error.empty())
            ET_LOG_INFO("gl", "GL backend unavailable: %s", g_error.c_str());
    });
    if (!g_error.empty())
        return make_error(ErrorCode::Unavailable, g_error);
    return &g_api;
}

std::string gl_error_name(GLenum e)
{
    switch (e) {
    case GL_NO_ERROR:
        return "GL_NO_ERROR";
    case GL_INVALID_ENUM:
        return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE:
        return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION:
        return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION:
        return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY:
        return "GL_OUT_OF_MEMORY";
    default:
        return "GL error 0x" + [e] {
            char b[16];
            std::snprintf(b, sizeof b, "%x", unsigned(e));
            return std::string(b);
        }();
    }
}

std::string egl_error_name(EGLint e)
{
    switch (e) {
    case EGL_SUCCESS:
        return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED:
        return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS:
        return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC:
        return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE:
        return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONTEXT:
        return "EGL_BAD_CONTEXT";
    case EGL_BAD_CONFIG:
        return "EGL_BAD_CONFIG";
    case EGL_BAD_DISPLAY:
        return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH:
        return "EGL_BAD_MATCH";
    case EGL_BAD_PARAMETER:
        return "EGL_BAD_PARAMETER";
    default: {
        char b[32];
        std::snprintf(b, sizeof b, "EGL error 0x%x", unsigned(e));
        return b;
    }
    }
}

} // namespace edgetensor::detail::gl
