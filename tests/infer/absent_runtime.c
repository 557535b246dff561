/* SPDX-License-Identifier: MIT */
/* Stands for a runtime library (libonnxruntime) that a module needs and that is absent at run
 * time: it is linked under a soname no file has (tests/infer/meson.build). */
int et_infer_absent_runtime_version(void);
int et_infer_absent_runtime_version(void)
{
    return 1;
}
