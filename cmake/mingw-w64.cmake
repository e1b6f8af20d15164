# mingw-w64.cmake: cross-compiles opencudnn for 64-bit Windows with Debian's mingw-w64 (package
# gcc-mingw-w64-x86-64) into cuDNN 8's DLL set (bin/cudnn64_8.dll and the six cudnn_*64_8.dll,
# import libraries in lib/x64). Tests run under Wine when it is installed (wine64):
#
#   cmake -S . -B build-win -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake -DOPENCUDNN_CUDA=OFF
#
# The win32 thread model of the compiler is used, so the DLLs need no winpthread DLL; libgcc is
# linked statically, so they need nothing but the system's DLLs and the C runtime (msvcrt.dll).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(ocd_mingw x86_64-w64-mingw32)
find_program(CMAKE_C_COMPILER NAMES ${ocd_mingw}-gcc-win32 ${ocd_mingw}-gcc REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${ocd_mingw}-windres)
find_program(CMAKE_NM NAMES ${ocd_mingw}-nm)
set(CMAKE_FIND_ROOT_PATH /usr/${ocd_mingw})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# BOTH: a program cross-compiled with this file finds a CMake package given by <Package>_ROOT or
# CMAKE_PREFIX_PATH, such as the release zip's lib/cmake/CUDNN (find_package(CUDNN)).
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# mingw's own C99 printf family: msvcrt.dll's lacks %zu and %lld. GCC checks format(printf)
# against msvcrt's printf on this target whatever the family, so format checking is left to the
# Linux builds of the same sources (-Wno-format). GCC for this target also inlines the
# descriptor getters differently and then warns that their out-parameters may be unset after a
# status check that returns early: false positives, silenced here only.
set(CMAKE_C_FLAGS_INIT "-D__USE_MINGW_ANSI_STDIO=1 -Wno-format -Wno-maybe-uninitialized")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc")
# Test programs run under Wine (ctest prefixes them with the emulator); without it they are built only.
find_program(OCD_WINE NAMES wine wine64)
if(OCD_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${OCD_WINE})
endif()
