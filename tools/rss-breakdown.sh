#!/usr/bin/env bash
# Where a process's resident memory is, from /proc/PID/smaps: anonymous and
# file-backed totals, then the resident KiB of each mapped file (the binary
# by segment, each plugin cache entry summed) and of the heap and the other
# anonymous mappings.
#   tools/rss-breakdown.sh PID
set -euo pipefail
pid=$1
grep -E '^(VmRSS|RssAnon|RssFile)' "/proc/$pid/status" | tr -s ' \t' ' ' | paste -sd' '
awk '
  /^[0-9a-f]+-[0-9a-f]+ / {
    name = ($6 == "") ? "[anonymous]" : $6
    if (name ~ /\.cwasm$/) name = "plugin cache entries"
    else if (name !~ /^\[/) name = name " " $2
  }
  /^Rss:/ { kib[name] += $2 }
  END { for (n in kib) if (kib[n] >= 256) printf "%8d KiB  %s\n", kib[n], n }
' "/proc/$pid/smaps" | sort -rn
