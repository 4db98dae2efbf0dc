#!/bin/sh
# Stands in for nvidia-smi: prints the CSV named by FAKE_SMI_CSV after
# checking it was asked the query the parser expects.
case "$1" in
--query-gpu=index,name,memory.used,memory.free,memory.total,utilization.gpu,power.draw,temperature.gpu) ;;
*) echo "unexpected query: $*" >&2; exit 2 ;;
esac
[ "$2" = "--format=csv,noheader,nounits" ] || { echo "unexpected format: $2" >&2; exit 2; }
if [ -n "$FAKE_SMI_FAIL" ]; then
  echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."
  exit 9
fi
cat "$FAKE_SMI_CSV"
