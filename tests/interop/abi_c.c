/* SPDX-License-Identifier: MIT */
/*
 * Pins the EdgeTensorDesc layout as a C compiler sees it (built as C11 and as C99). The
 * header's static asserts already fail the build on a drift; this program reports every
 * field at run time too, so a failure names what moved.
 */

#include <edgetensor/edgetensor.h>
#include <edgetensor/tensor_desc.h>

#include <stddef.h>
#include <stdio.h>

static int failures = 0;

static void expect_size(const char* what, size_t got, size_t want)
{
    if (got != want) {
        fprintf(stderr, "FAIL: %s is %zu, expected %zu\n", what, got, want);
        ++failures;
    }
}

#define EXPECT_OFFSET(field, want)                                                                 \
    expect_size("offsetof(" #field ")", offsetof(EdgeTensorDesc, field), want)
#define EXPECT_FIELD_SIZE(field, want)                                                             \
    expect_size("sizeof(" #field ")", sizeof(((EdgeTensorDesc*)0)->field), want)

int main(void)
{
    EdgeTensorDesc d = edgetensor_desc_init();

    expect_size("sizeof(EdgeTensorDesc)", sizeof(EdgeTensorDesc), 192);
    expect_size("EDGETENSOR_DESC_SIZE", EDGETENSOR_DESC_SIZE, 192);
#if defined(__GNUC__) || defined(__clang__)
    expect_size("alignof(EdgeTensorDesc)", __alignof__(EdgeTensorDesc), 8);
#endif
    EXPECT_OFFSET(version, 0);
    EXPECT_OFFSET(kind, 4);
    EXPECT_OFFSET(handle, 8);
    EXPECT_OFFSET(ptr, 16);
    EXPECT_OFFSET(ndim, 24);
    EXPECT_OFFSET(dtype, 28);
    EXPECT_OFFSET(shape, 32);
    EXPECT_OFFSET(strides, 96);
    EXPECT_OFFSET(fourcc, 160);
    EXPECT_OFFSET(format, 164);
    EXPECT_OFFSET(colorimetry, 168);
    EXPECT_OFFSET(flags, 172);
    EXPECT_OFFSET(capacity, 176);
    EXPECT_OFFSET(sync, 184);

    EXPECT_FIELD_SIZE(version, 4);
    EXPECT_FIELD_SIZE(kind, 4);
    EXPECT_FIELD_SIZE(handle, 8);
    EXPECT_FIELD_SIZE(ndim, 4);
    EXPECT_FIELD_SIZE(dtype, 4);
    EXPECT_FIELD_SIZE(shape, 64);
    EXPECT_FIELD_SIZE(strides, 64);
    EXPECT_FIELD_SIZE(fourcc, 4);
    EXPECT_FIELD_SIZE(format, 4);
    EXPECT_FIELD_SIZE(colorimetry, 4);
    EXPECT_FIELD_SIZE(flags, 4);
    EXPECT_FIELD_SIZE(capacity, 8);
    EXPECT_FIELD_SIZE(sync, 8);

    /* Signedness is part of the ABI: strides can be negative, handle is -1 when unused. */
    d.strides[0] = -1;
    d.handle = -1;
    if (!(d.strides[0] < 0) || !(d.handle < 0)) {
        fprintf(stderr, "FAIL: strides/handle are not signed\n");
        ++failures;
    }
    d.shape[0] = (uint64_t)-1;
    if (!(d.shape[0] > 0)) {
        fprintf(stderr, "FAIL: shape is not unsigned\n");
        ++failures;
    }

    expect_size("EDGETENSOR_DESC_VERSION", EDGETENSOR_DESC_VERSION, 1);
    expect_size("desc_init().version", edgetensor_desc_init().version, 1);
    expect_size("KIND_HOST", EDGETENSOR_KIND_HOST, 0);
    expect_size("KIND_DMABUF", EDGETENSOR_KIND_DMABUF, 1);
    expect_size("KIND_IOSURFACE", EDGETENSOR_KIND_IOSURFACE, 2);
    expect_size("KIND_PBO", EDGETENSOR_KIND_PBO, 3);
    expect_size("KIND_CUDA_DEVICE", EDGETENSOR_KIND_CUDA_DEVICE, 4);
    expect_size("FLAG_SYNC_PRESENT", EDGETENSOR_FLAG_SYNC_PRESENT, 1);
    expect_size("COLORIMETRY_PACK(1,2,3,4)", EDGETENSOR_COLORIMETRY_PACK(1, 2, 3, 4), 0x04030201u);

    if (failures == 0)
        printf("EdgeTensorDesc layout OK (C, __STDC_VERSION__ %ld)\n", (long)__STDC_VERSION__);
    return failures == 0 ? 0 : 1;
}
