/* SPDX-License-Identifier: MIT */
/*
 * EdgeTensorDesc: the pinned, versioned C ABI that describes a tensor to a foreign consumer
 * (an NPU runtime, another process, a 3-D camera SDK). Usable from C99 and C++.
 *
 * The layout never changes: 192 bytes, 8-byte aligned, every offset pinned below and by test.
 * A consumer checks `version` before reading anything else. docs/abi.md documents every field,
 * its units, who owns what, and the versioning rule.
 */

#ifndef EDGETENSOR_TENSOR_DESC_H
#define EDGETENSOR_TENSOR_DESC_H

#include <stddef.h>
#include <stdint.h>

/* Bumped only when the meaning or layout of a field changes; importers refuse other values. */
#define EDGETENSOR_DESC_VERSION 1u
#define EDGETENSOR_DESC_MAX_NDIM 8
#define EDGETENSOR_DESC_SIZE 192

/* kind: what `handle` is. */
#define EDGETENSOR_KIND_HOST 0u        /* host memory: a memfd/shm fd, or -1 with `ptr` set */
#define EDGETENSOR_KIND_DMABUF 1u      /* a Linux DMA-BUF fd */
#define EDGETENSOR_KIND_IOSURFACE 2u   /* an IOSurface id (Apple) */
#define EDGETENSOR_KIND_PBO 3u         /* a GL pixel buffer object id */
#define EDGETENSOR_KIND_CUDA_DEVICE 4u /* CUDA device memory */

/* flags */
#define EDGETENSOR_FLAG_SYNC_PRESENT (1u << 0)
#define EDGETENSOR_FLAGS_KNOWN (EDGETENSOR_FLAG_SYNC_PRESENT)

/* dtype: the edgetensor::DType wire codes. */
#define EDGETENSOR_DTYPE_U8 0u
#define EDGETENSOR_DTYPE_I8 1u
#define EDGETENSOR_DTYPE_U16 2u
#define EDGETENSOR_DTYPE_I16 3u
#define EDGETENSOR_DTYPE_U32 4u
#define EDGETENSOR_DTYPE_I32 5u
#define EDGETENSOR_DTYPE_U64 6u
#define EDGETENSOR_DTYPE_I64 7u
#define EDGETENSOR_DTYPE_F16 8u
#define EDGETENSOR_DTYPE_F32 9u
#define EDGETENSOR_DTYPE_F64 10u

/* format: the edgetensor::PixelFormat wire codes; 0 = not an image. */
#define EDGETENSOR_FORMAT_NONE 0u
#define EDGETENSOR_FORMAT_RGB 1u
#define EDGETENSOR_FORMAT_RGBA 2u
#define EDGETENSOR_FORMAT_BGRA 3u
#define EDGETENSOR_FORMAT_GREY 4u
#define EDGETENSOR_FORMAT_YUYV 5u
#define EDGETENSOR_FORMAT_VYUY 6u
#define EDGETENSOR_FORMAT_NV12 7u
#define EDGETENSOR_FORMAT_NV16 8u
#define EDGETENSOR_FORMAT_PLANAR_RGB 9u
#define EDGETENSOR_FORMAT_PLANAR_RGBA 10u
#define EDGETENSOR_FORMAT_NV24 11u

/*
 * colorimetry = primaries | transfer << 8 | matrix << 16 | range << 24, one byte per axis, each
 * 0 = unspecified (never guessed by a producer). The codes are edgetensor::ColorSpace,
 * ColorTransfer, ColorEncoding and ColorRange (colorimetry.hpp); these macros let C consumers
 * decode a descriptor without the C++ headers. A code outside the lists below is unknown: refuse
 * it rather than guess.
 */
#define EDGETENSOR_COLORIMETRY_PACK(space, transfer, encoding, range)                              \
    ((uint32_t)(space) | (uint32_t)(transfer) << 8 | (uint32_t)(encoding) << 16 |                  \
     (uint32_t)(range) << 24)
#define EDGETENSOR_COLORIMETRY_PRIMARIES(c) ((uint32_t)(c)&0xffu)
#define EDGETENSOR_COLORIMETRY_TRANSFER(c) (((uint32_t)(c) >> 8) & 0xffu)
#define EDGETENSOR_COLORIMETRY_MATRIX(c) (((uint32_t)(c) >> 16) & 0xffu)
#define EDGETENSOR_COLORIMETRY_RANGE(c) (((uint32_t)(c) >> 24) & 0xffu)

/* Primaries (edgetensor::ColorSpace): sRGB shares BT.709's primaries; the sRGB transfer tells. */
#define EDGETENSOR_COLOR_PRIMARIES_UNSPECIFIED 0u
#define EDGETENSOR_COLOR_PRIMARIES_BT709 1u
#define EDGETENSOR_COLOR_PRIMARIES_BT2020 2u
#define EDGETENSOR_COLOR_PRIMARIES_SRGB 3u
#define EDGETENSOR_COLOR_PRIMARIES_SMPTE170M 4u
#define EDGETENSOR_COLOR_PRIMARIES_MAX 4u

/* Transfer function (edgetensor::ColorTransfer): BT.601 and BT.2020 use the BT.709 curve. */
#define EDGETENSOR_COLOR_TRANSFER_UNSPECIFIED 0u
#define EDGETENSOR_COLOR_TRANSFER_BT709 1u
#define EDGETENSOR_COLOR_TRANSFER_SRGB 2u
#define EDGETENSOR_COLOR_TRANSFER_PQ 3u
#define EDGETENSOR_COLOR_TRANSFER_HLG 4u
#define EDGETENSOR_COLOR_TRANSFER_LINEAR 5u
#define EDGETENSOR_COLOR_TRANSFER_MAX 5u

/* YUV <-> RGB matrix (edgetensor::ColorEncoding); unspecified for RGB data. */
#define EDGETENSOR_COLOR_MATRIX_UNSPECIFIED 0u
#define EDGETENSOR_COLOR_MATRIX_BT601 1u
#define EDGETENSOR_COLOR_MATRIX_BT709 2u
#define EDGETENSOR_COLOR_MATRIX_BT2020 3u
#define EDGETENSOR_COLOR_MATRIX_MAX 3u

/* Quantisation range (edgetensor::ColorRange): full 0..255, limited 16..235 (chroma 16..240). */
#define EDGETENSOR_COLOR_RANGE_UNSPECIFIED 0u
#define EDGETENSOR_COLOR_RANGE_FULL 1u
#define EDGETENSOR_COLOR_RANGE_LIMITED 2u
#define EDGETENSOR_COLOR_RANGE_MAX 2u

#if defined(__GNUC__) || defined(__clang__)
#define EDGETENSOR_DESC_ALIGNED __attribute__((aligned(8)))
#else
#define EDGETENSOR_DESC_ALIGNED
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct EDGETENSOR_DESC_ALIGNED EdgeTensorDesc {
    uint32_t version; /*   0: EDGETENSOR_DESC_VERSION; checked, never assumed */
    uint32_t kind;    /*   4: EDGETENSOR_KIND_* */
    int64_t handle;   /*   8: fd (DMABUF, HOST), IOSurface id or GL buffer id; -1 when unused */
    void* ptr;        /*  16: host address of the first element when addressable, else NULL */
#if UINTPTR_MAX == 0xffffffffu
    uint32_t ptr_pad_; /*  20: keeps the 64-bit layout on 32-bit targets; always 0 */
#endif
    uint32_t ndim;                             /*  24: significant entries of shape/strides, 1..8 */
    uint32_t dtype;                            /*  28: EDGETENSOR_DTYPE_* */
    uint64_t shape[EDGETENSOR_DESC_MAX_NDIM];  /*  32: elements, outermost first */
    int64_t strides[EDGETENSOR_DESC_MAX_NDIM]; /*  96: BYTES between neighbours of each dim */
    uint32_t fourcc;      /* 160: DRM FourCC of the pixel format, 0 for non-images */
    uint32_t format;      /* 164: EDGETENSOR_FORMAT_*, 0 for non-images */
    uint32_t colorimetry; /* 168: EDGETENSOR_COLORIMETRY_PACK(...), 0 = unspecified */
    uint32_t flags;       /* 172: EDGETENSOR_FLAG_* */
    uint64_t capacity;    /* 176: bytes available from the window start (>= what shape implies) */
    uint64_t sync;        /* 184: fence, 0 unless EDGETENSOR_FLAG_SYNC_PRESENT */
} EdgeTensorDesc;

#ifdef __cplusplus
} /* extern "C" */
#define EDGETENSOR_DESC_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define EDGETENSOR_DESC_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
/* C99: a negative array size fails the build. */
#define EDGETENSOR_DESC_STATIC_ASSERT_CAT2(a, b) a##b
#define EDGETENSOR_DESC_STATIC_ASSERT_CAT(a, b) EDGETENSOR_DESC_STATIC_ASSERT_CAT2(a, b)
#define EDGETENSOR_DESC_STATIC_ASSERT(cond, msg)                                                   \
    typedef char EDGETENSOR_DESC_STATIC_ASSERT_CAT(edgetensor_desc_assert_,                        \
                                                   __LINE__)[(cond) ? 1 : -1]
#endif

/* (The GObject introspection scanner's C parser knows no _Static_assert.) */
#ifndef __GI_SCANNER__
EDGETENSOR_DESC_STATIC_ASSERT(sizeof(EdgeTensorDesc) == EDGETENSOR_DESC_SIZE,
                              "EdgeTensorDesc must be 192 bytes");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, version) == 0, "version at 0");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, kind) == 4, "kind at 4");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, handle) == 8, "handle at 8");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, ptr) == 16, "ptr at 16");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, ndim) == 24, "ndim at 24");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, dtype) == 28, "dtype at 28");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, shape) == 32, "shape at 32");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, strides) == 96, "strides at 96");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, fourcc) == 160, "fourcc at 160");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, format) == 164, "format at 164");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, colorimetry) == 168, "colorimetry at 168");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, flags) == 172, "flags at 172");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, capacity) == 176, "capacity at 176");
EDGETENSOR_DESC_STATIC_ASSERT(offsetof(EdgeTensorDesc, sync) == 184, "sync at 184");
#if defined(__GNUC__) || defined(__clang__)
EDGETENSOR_DESC_STATIC_ASSERT(__alignof__(EdgeTensorDesc) == 8, "EdgeTensorDesc is 8-aligned");
#endif
#endif /* __GI_SCANNER__ */

/* A descriptor with the current version, no handle, and every other field zero. */
static inline EdgeTensorDesc edgetensor_desc_init(void)
{
    EdgeTensorDesc d;
    unsigned char* p = (unsigned char*)&d;
    size_t i;
    for (i = 0; i < sizeof(d); ++i)
        p[i] = 0;
    d.version = EDGETENSOR_DESC_VERSION;
    d.handle = -1;
    return d;
}

#endif /* EDGETENSOR_TENSOR_DESC_H */
