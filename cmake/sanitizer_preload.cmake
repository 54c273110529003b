# FRT_SANITIZER_PRELOAD: the sanitizer runtimes of FRT_SANITIZE as an LD_PRELOAD value ("" when
# none), for running code built with sanitizers inside an uninstrumented /usr/bin/python3.
set(FRT_SANITIZER_PRELOAD "")
if(FRT_SANITIZE)
  set(_frt_preload "")
  foreach(_frt_san address:asan undefined:ubsan thread:tsan)
    string(REPLACE ":" ";" _frt_pair "${_frt_san}")
    list(GET _frt_pair 0 _frt_name)
    list(GET _frt_pair 1 _frt_lib)
    if(FRT_SANITIZE MATCHES "${_frt_name}")
      execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=lib${_frt_lib}.so
                      OUTPUT_VARIABLE _frt_so OUTPUT_STRIP_TRAILING_WHITESPACE)
      list(APPEND _frt_preload "${_frt_so}")
    endif()
  endforeach()
  list(JOIN _frt_preload ":" FRT_SANITIZER_PRELOAD)
endif()
