/* SPDX-License-Identifier: MIT */
/*
 * The C API from a C compiler: allocate, fill, describe, re-import through the descriptor,
 * and read back, with every return code checked.
 */

#include <edgetensor/edgetensor.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != 0) {                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #expr, rc_,          \
                    edgetensor_last_error());                                                      \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    const uint64_t shape[2] = {4, 6};
    edgetensor_tensor* t = NULL;
    edgetensor_tensor* back = NULL;
    edgetensor_mapping* m = NULL;
    EdgeTensorDesc desc;
    int fd = -1;
    size_t i;

    CHECK(edgetensor_create(EDGETENSOR_DTYPE_U8, 2, shape, EDGETENSOR_MEMORY_SHM, "c-smoke", &t));
    CHECK(edgetensor_map(t, EDGETENSOR_ACCESS_WRITE, &m));
    for (i = 0; i < edgetensor_map_size(m); ++i)
        ((uint8_t*)edgetensor_map_data(m))[i] = (uint8_t)(i * 3);
    edgetensor_unmap(m);

    CHECK(edgetensor_describe(t, &desc));
    CHECK(edgetensor_clone_fd(t, &fd));
    CHECK(edgetensor_from_desc(&desc, fd, &back));
    CHECK(edgetensor_map(back, EDGETENSOR_ACCESS_READ, &m));
    if (edgetensor_map_size(m) != 24 || ((const uint8_t*)edgetensor_map_data(m))[23] != 69) {
        fprintf(stderr, "FAIL: imported bytes differ\n");
        return 1;
    }
    edgetensor_unmap(m);
    edgetensor_release(back);
    back = NULL;

    /* An error path: a bad dtype is -EINVAL with a message. */
    if (edgetensor_create(77, 2, shape, EDGETENSOR_MEMORY_MEM, NULL, &back) != -EINVAL ||
        strlen(edgetensor_last_error()) == 0) {
        fprintf(stderr, "FAIL: bad dtype was not refused with a message\n");
        return 1;
    }
    edgetensor_release(t);
    printf("C API smoke OK\n");
    return 0;
}
