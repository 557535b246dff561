/* SPDX-License-Identifier: MIT */
/* Simulated bionic: the one system-property call the shell uses (values set by the test). */

#ifndef EDGETENSOR_SIM_SYS_SYSTEM_PROPERTIES_H
#define EDGETENSOR_SIM_SYS_SYSTEM_PROPERTIES_H

#ifdef __cplusplus
extern "C" {
#endif

#define PROP_VALUE_MAX 92

/* Copies the property's value (at most PROP_VALUE_MAX bytes with the NUL) into `value` and
 * returns its length; 0 and an empty string when the property is not set. */
int __system_property_get(const char* name, char* value);

#ifdef __cplusplus
}
#endif

#endif
