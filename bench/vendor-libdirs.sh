#!/usr/bin/env bash
# vendor-libdirs.sh VENDOR_DIR: prints the directories (colon-separated) a program built against
# the vendor's cuDNN at VENDOR_DIR needs on LD_LIBRARY_PATH: the library loads its sub-libraries,
# and in the Python packages (VENDOR_DIR under .../nvidia/) cuBLAS and NVRTC from sibling
# packages, through the loader's path. bench/run.sh and tools/gpu-check.sh's parity step use it.
set -euo pipefail
vendor=$1
libdirs=$vendor/lib:$vendor/lib64
parent=$(dirname "$vendor")
if [ "$(basename "$parent")" = nvidia ]; then
    libdirs=$libdirs:$(find "$parent" -maxdepth 3 -name 'lib*.so*' -printf '%h\n' | sort -u | paste -sd: -)
fi
echo "$libdirs"
