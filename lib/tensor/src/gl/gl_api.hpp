// SPDX-License-Identifier: MIT
//
// EGL and OpenGL ES 3 entry points, resolved at run time: libEGL.so.1 is dlopen()ed (never
// linked, so the library loads on hosts without it) and every GL function comes from
// eglGetProcAddress (or libGLESv2.so.2). Only the GL worker thread calls the GL functions.

#pragma once

#include "edgetensor/error.hpp"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
// After gl3.h: GL_OES_EGL_image's glEGLImageTargetTexture2DOES.
#include <GLES2/gl2ext.h>

#include <functional>
#include <string>

namespace edgetensor::detail::gl
{

// clang-format off
#define ET_EGL_CORE_FUNCS(X)                                                                       \
    X(EGLBoolean, eglInitialize, (EGLDisplay, EGLint*, EGLint*))                                   \
    X(const char*, eglQueryString, (EGLDisplay, EGLint))                                           \
    X(EGLBoolean, eglBindAPI, (EGLenum))                                                           \
    X(EGLContext, eglCreateContext, (EGLDisplay, EGLConfig, EGLContext, const EGLint*))            \
    X(EGLBoolean, eglDestroyContext, (EGLDisplay, EGLContext))                                     \
    X(EGLBoolean, eglMakeCurrent, (EGLDisplay, EGLSurface, EGLSurface, EGLContext))                \
    X(EGLint, eglGetError, (void))                                                                 \
    X(EGLBoolean, eglChooseConfig, (EGLDisplay, const EGLint*, EGLConfig*, EGLint, EGLint*))       \
    X(EGLBoolean, eglReleaseThread, (void))

#define ET_EGL_EXT_FUNCS(X)                                                                        \
    X(EGLDisplay, eglGetPlatformDisplayEXT, (EGLenum, void*, const EGLint*))                       \
    X(EGLImageKHR, eglCreateImageKHR, (EGLDisplay, EGLContext, EGLenum, EGLClientBuffer,           \
                                       const EGLint*))                                             \
    X(EGLBoolean, eglDestroyImageKHR, (EGLDisplay, EGLImageKHR))                                   \
    X(EGLBoolean, eglQueryDevicesEXT, (EGLint, EGLDeviceEXT*, EGLint*))                            \
    X(const char*, eglQueryDeviceStringEXT, (EGLDeviceEXT, EGLint))                                \
    X(EGLBoolean, eglQueryDisplayAttribEXT, (EGLDisplay, EGLint, EGLAttrib*))                      \
    X(EGLBoolean, eglQueryDmaBufModifiersEXT, (EGLDisplay, EGLint, EGLint, EGLuint64KHR*,          \
                                               EGLBoolean*, EGLint*))                              \
    X(EGLBoolean, eglQueryDmaBufFormatsEXT, (EGLDisplay, EGLint, EGLint*, EGLint*))

#define ET_GL_FUNCS(X)                                                                             \
    X(const GLubyte*, glGetString, (GLenum))                                                       \
    X(void, glGetIntegerv, (GLenum, GLint*))                                                       \
    X(GLenum, glGetError, (void))                                                                  \
    X(void, glGenTextures, (GLsizei, GLuint*))                                                     \
    X(void, glDeleteTextures, (GLsizei, const GLuint*))                                            \
    X(void, glBindTexture, (GLenum, GLuint))                                                       \
    X(void, glActiveTexture, (GLenum))                                                             \
    X(void, glTexStorage2D, (GLenum, GLsizei, GLenum, GLsizei, GLsizei))                           \
    X(void, glTexSubImage2D, (GLenum, GLint, GLint, GLint, GLsizei, GLsizei, GLenum, GLenum,       \
                              const void*))                                                        \
    X(void, glTexParameteri, (GLenum, GLenum, GLint))                                              \
    X(void, glPixelStorei, (GLenum, GLint))                                                        \
    X(void, glGenFramebuffers, (GLsizei, GLuint*))                                                 \
    X(void, glDeleteFramebuffers, (GLsizei, const GLuint*))                                        \
    X(void, glBindFramebuffer, (GLenum, GLuint))                                                   \
    X(void, glFramebufferTexture2D, (GLenum, GLenum, GLenum, GLuint, GLint))                       \
    X(GLenum, glCheckFramebufferStatus, (GLenum))                                                  \
    X(void, glViewport, (GLint, GLint, GLsizei, GLsizei))                                          \
    X(void, glScissor, (GLint, GLint, GLsizei, GLsizei))                                           \
    X(void, glEnable, (GLenum))                                                                    \
    X(void, glDisable, (GLenum))                                                                   \
    X(void, glReadPixels, (GLint, GLint, GLsizei, GLsizei, GLenum, GLenum, void*))                 \
    X(void, glGenBuffers, (GLsizei, GLuint*))                                                      \
    X(void, glDeleteBuffers, (GLsizei, const GLuint*))                                             \
    X(void, glBindBuffer, (GLenum, GLuint))                                                        \
    X(void, glBufferData, (GLenum, GLsizeiptr, const void*, GLenum))                               \
    X(void*, glMapBufferRange, (GLenum, GLintptr, GLsizeiptr, GLbitfield))                         \
    X(GLboolean, glUnmapBuffer, (GLenum))                                                          \
    X(GLuint, glCreateShader, (GLenum))                                                            \
    X(void, glShaderSource, (GLuint, GLsizei, const GLchar* const*, const GLint*))                 \
    X(void, glCompileShader, (GLuint))                                                             \
    X(void, glGetShaderiv, (GLuint, GLenum, GLint*))                                               \
    X(void, glGetShaderInfoLog, (GLuint, GLsizei, GLsizei*, GLchar*))                              \
    X(void, glDeleteShader, (GLuint))                                                              \
    X(GLuint, glCreateProgram, (void))                                                             \
    X(void, glAttachShader, (GLuint, GLuint))                                                      \
    X(void, glLinkProgram, (GLuint))                                                               \
    X(void, glGetProgramiv, (GLuint, GLenum, GLint*))                                              \
    X(void, glGetProgramInfoLog, (GLuint, GLsizei, GLsizei*, GLchar*))                             \
    X(void, glDeleteProgram, (GLuint))                                                             \
    X(void, glUseProgram, (GLuint))                                                                \
    X(GLint, glGetUniformLocation, (GLuint, const GLchar*))                                        \
    X(void, glUniform1i, (GLint, GLint))                                                           \
    X(void, glUniform2i, (GLint, GLint, GLint))                                                    \
    X(void, glUniform1iv, (GLint, GLsizei, const GLint*))                                          \
    X(void, glUniform2iv, (GLint, GLsizei, const GLint*))                                          \
    X(void, glGenVertexArrays, (GLsizei, GLuint*))                                                 \
    X(void, glDeleteVertexArrays, (GLsizei, const GLuint*))                                        \
    X(void, glBindVertexArray, (GLuint))                                                           \
    X(void, glDrawArrays, (GLenum, GLint, GLsizei))                                                \
    X(void, glClearColor, (GLfloat, GLfloat, GLfloat, GLfloat))                                    \
    X(void, glClear, (GLbitfield))                                                                 \
    X(void, glFinish, (void))                                                                      \
    X(void, glFlush, (void))
// clang-format on

struct Api {
#define ET_GL_DECLARE(ret, name, args) ret(*name) args = nullptr;
    ET_EGL_CORE_FUNCS(ET_GL_DECLARE)
    ET_EGL_EXT_FUNCS(ET_GL_DECLARE)
    ET_GL_FUNCS(ET_GL_DECLARE)
#undef ET_GL_DECLARE
    PFNGLEGLIMAGETARGETTEXTURE2DOESPROC glEGLImageTargetTexture2DOES = nullptr;
    void* (*eglGetProcAddress)(const char*) = nullptr;
};

/// The entry points, loaded once per process: Unavailable (naming the library or the function)
/// when libEGL or libGLESv2 cannot be loaded or lacks what the backend needs. EGL extension
/// functions and glEGLImageTargetTexture2DOES may be null (the display's and the context's
/// extension strings say whether they may be used). EDGETENSOR_EGL_LIBRARY names another
/// libEGL (tests use it to stand for a host without one).
Result<const Api*> api();

/// Runs `fn` on a thread of its own and waits for it (inline if no thread can be started).
/// For EGL calls made off the GL thread: each leaves per-thread state in libglvnd whose
/// destructor runs when the calling thread exits, which for a pooled GStreamer streaming
/// thread can be during exit(), after libEGL's destructors, and crash there.
void run_on_own_thread(const std::function<void()>& fn);

/// "GL_INVALID_OPERATION", "EGL_BAD_MATCH", ... for messages.
std::string gl_error_name(GLenum e);
std::string egl_error_name(EGLint e);

} // namespace edgetensor::detail::gl
