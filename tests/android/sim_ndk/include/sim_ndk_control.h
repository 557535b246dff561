/* SPDX-License-Identifier: MIT */
/*
 * Test controls of the simulated NDK (not part of the NDK). The simulation enforces the
 * contract a real gralloc leaves undefined, and counts what it saw so tests can prove balance:
 *  - lock usage must be CPU values only, each direction EXACTLY the value the buffer was
 *    allocated with (a direction it was not allocated with is refused: -EINVAL);
 *  - a buffer is never locked twice at once (-EBUSY): the shell must share one lock;
 *  - unlock of an unlocked buffer, release of an unknown or dead buffer, and release of the
 *    last reference while locked are violations;
 *  - the "budget" profile refuses hardware-only allocations (no CPU usage) with -ENOMEM;
 *  - BLOB takes height 1, one layer and no image GPU usage; GPU_DATA_BUFFER needs BLOB;
 *  - every allocation gets a new, stable, system-wide id (getId), never reused.
 */

#ifndef EDGETENSOR_SIM_NDK_CONTROL_H
#define EDGETENSOR_SIM_NDK_CONTROL_H

#include <android/hardware_buffer.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SIM_NDK_PROFILE_FLAGSHIP = 0, /* every valid request is granted; stride: 64-pixel multiples */
    SIM_NDK_PROFILE_BUDGET = 1,   /* hardware-only usage refused; stride: 16-pixel multiples */
} SimNdkProfile;

typedef struct {
    uint64_t allocated;     /* successful AHardwareBuffer_allocate calls */
    uint64_t refused;       /* allocations refused by the profile or a scheduled failure */
    uint64_t invalid;       /* allocations refused as invalid (-EINVAL) */
    uint64_t live;          /* buffers with a reference left */
    uint64_t acquired;      /* AHardwareBuffer_acquire calls */
    uint64_t released;      /* AHardwareBuffer_release calls */
    uint64_t locks;         /* successful locks */
    uint64_t unlocks;       /* successful unlocks */
    uint64_t lock_refusals; /* locks refused (undeclared usage, nested, bad arguments) */
    uint64_t violations;    /* contract violations (see above); must stay 0 */
} SimNdkStats;

/* Back to the flagship profile, getId supported, no properties, no scheduled failures, counters
 * zeroed (live buffers stay live and counted). */
void sim_ndk_reset(void);
void sim_ndk_set_profile(SimNdkProfile profile);
/* 0: AHardwareBuffer_getId fails (-ENOSYS), as on a device where it cannot be resolved. */
void sim_ndk_set_get_id_supported(int supported);
/* NULL value clears it. */
void sim_ndk_set_property(const char* name, const char* value);
/* The next `n` allocations fail with -ENOMEM whatever their usage. */
void sim_ndk_fail_next_allocations(int n);
void sim_ndk_get_stats(SimNdkStats* out);
/* References held on `buffer`; -1 when it is not a live buffer. */
int sim_ndk_refcount(const AHardwareBuffer* buffer);
/* 1 while locked, 0 when not, -1 when not a live buffer. */
int sim_ndk_locked(const AHardwareBuffer* buffer);
/* The usage of the last successful lock of `buffer` (0 when never locked). */
uint64_t sim_ndk_last_lock_usage(const AHardwareBuffer* buffer);
/* The usage of the last AHardwareBuffer_allocate call, granted or not. */
uint64_t sim_ndk_last_requested_usage(void);
/* Allocates a buffer the way another process or API (CameraX, ImageReader) would hand one
 * over: exactly this descriptor, one reference owned by the caller. */
AHardwareBuffer* sim_ndk_foreign_buffer(uint32_t width, uint32_t height, uint32_t format,
                                        uint64_t usage);

#ifdef __cplusplus
}
#endif

#endif
