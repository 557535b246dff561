#!/bin/sh
# SPDX-License-Identifier: MIT
# Stands for a runtime suite whose backend this build lacks: skipped with the reason (exit 77),
# or failed where EDGETENSOR_TEST_REQUIRE_INFER names the backend.
#   not-built.sh BACKEND REASON
backend=$1
reason=$2
case ",${EDGETENSOR_TEST_REQUIRE_INFER:-}," in
*",$backend,"*)
    echo "EDGETENSOR_TEST_REQUIRE_INFER names $backend but $reason"
    exit 1
    ;;
esac
echo "skipped: $reason"
exit 77
