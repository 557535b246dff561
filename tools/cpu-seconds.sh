# SPDX-License-Identifier: MIT
#
# Sourced by tools/dev.sh, .ci/run and .ci/prebuild: one definition of how they count CPU time.
#
# cpu_seconds: CPU seconds (user + system) of the sourcing shell's finished children so far
# (fields 16 and 17 of /proc/PID/stat, counted from after the command name). Beside a phase's
# wall time it says how much of it was computing rather than waiting (network, disk, other
# load), and what it would cost on a machine of its own (2 cores: about half of it).
cpu_seconds() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%d", ($14 + $15) / hz }' /proc/$$/stat
}
