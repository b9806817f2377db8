#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""measure.py LOG CMD [ARG...]: runs CMD with stderr to LOG and prints
"STATUS CPU_SECONDS PEAK_RSS_MIB WALL_SECONDS" (getrusage of the child)."""
import resource
import subprocess
import sys
import time


def main():
    t0 = time.monotonic()
    with open(sys.argv[1], "w") as log:
        r = subprocess.run(sys.argv[2:], stderr=log, check=False)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(r.returncode, "%.3f" % (ru.ru_utime + ru.ru_stime),
          "%.1f" % (ru.ru_maxrss / 1024), "%.2f" % (time.monotonic() - t0))


if __name__ == "__main__":
    main()
