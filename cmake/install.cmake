# Install rules and the files that let other projects use flatrt (included once from the top
# CMakeLists.txt, after every library target and FRT_LIBS are defined):
#
#   PREFIX/include/flatrt.h
#   PREFIX/LIBDIR/libflatrt.a, libflatrt.so -> libflatrt.so.<major> -> libflatrt.so.<version>
#   PREFIX/bin/flatrt                                        (the CLI, linked statically)
#   PREFIX/LIBDIR/cmake/flatrt/flatrtConfig.cmake, flatrtConfigVersion.cmake
#   PREFIX/LIBDIR/pkgconfig/flatrt.pc
#
# find_package(flatrt) gives the imported targets flatrt::flatrt_shared, flatrt::flatrt_static
# (with the static library's link dependencies) and flatrt::flatrt (the shared one, or the static
# one when the consumer sets flatrt_USE_STATIC_LIBS). A project that adds this source tree with
# add_subdirectory gets the same three names, with include/ as the only include directory.
#
# Link dependencies of libflatrt.a come from FRT_LIBS, so a library appended to FRT_LIBS (a plain
# name such as m or dl, or a library file found with find_library) reaches flatrtConfig.cmake and
# Libs.private of flatrt.pc without any edit here. An imported target in FRT_LIBS needs one line
# below: frt_package_target(<target> <package for find_dependency> <pkg-config flags>).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

function(frt_package_target target package pc_flags)
  set(FRT_PKG_TARGET_${target} "${package};${pc_flags}" PARENT_SCOPE)
endfunction()
frt_package_target(Threads::Threads Threads "-pthread")

# Translate FRT_LIBS into the lines of flatrtConfig.cmake that find each dependency again on the
# consumer's side, the link items of flatrt::flatrt_static, and Libs.private of flatrt.pc.
set(FRT_CONFIG_DEPS "")
set(FRT_CONFIG_LINK "")
set(FRT_PC_LIBS_PRIVATE "")
foreach(item IN LISTS FRT_LIBS)
  if(DEFINED FRT_PKG_TARGET_${item})
    list(GET FRT_PKG_TARGET_${item} 0 pkg)
    list(GET FRT_PKG_TARGET_${item} 1 flags)
    string(APPEND FRT_CONFIG_DEPS "find_dependency(${pkg})\n")
    list(APPEND FRT_CONFIG_LINK "${item}")
    list(APPEND FRT_PC_LIBS_PRIVATE "${flags}")
  elseif(item MATCHES "::")
    message(FATAL_ERROR "cmake/install.cmake: FRT_LIBS has the imported target ${item}; add a line "
                        "frt_package_target(${item} <package> <pkg-config flags>) there")
  elseif(IS_ABSOLUTE "${item}")
    get_filename_component(file "${item}" NAME)
    get_filename_component(dir "${item}" DIRECTORY)
    if(NOT file MATCHES "^lib(.+)\\.(so|a)(\\..*)?$")
      message(FATAL_ERROR "cmake/install.cmake: cannot name the library ${item} for flatrt.pc")
    endif()
    set(name "${CMAKE_MATCH_1}")
    string(MAKE_C_IDENTIFIER "${name}" id)
    string(APPEND FRT_CONFIG_DEPS
      "find_library(flatrt_DEP_${id} NAMES ${name} HINTS \"${dir}\")\n"
      "if(NOT flatrt_DEP_${id})\n"
      "  set(flatrt_FOUND FALSE)\n"
      "  set(flatrt_NOT_FOUND_MESSAGE \"flatrt needs the library ${name} (found at ${item} when it was built)\")\n"
      "  return()\n"
      "endif()\n")
    list(APPEND FRT_CONFIG_LINK "\${flatrt_DEP_${id}}")
    list(FIND CMAKE_C_IMPLICIT_LINK_DIRECTORIES "${dir}" implicit)
    if(implicit EQUAL -1)
      list(APPEND FRT_PC_LIBS_PRIVATE "-L${dir}")
    endif()
    list(APPEND FRT_PC_LIBS_PRIVATE "-l${name}")
  else()
    list(APPEND FRT_CONFIG_LINK "${item}")
    list(APPEND FRT_PC_LIBS_PRIVATE "-l${item}")
  endif()
endforeach()
list(REMOVE_DUPLICATES FRT_PC_LIBS_PRIVATE)
list(JOIN FRT_PC_LIBS_PRIVATE " " FRT_PC_LIBS_PRIVATE)

# ---- add_subdirectory users: the same target names as the installed package -------------------
# flatrt_static itself exposes src/ for tests and tools; flatrt_static_public links its archive
# (LINK_ONLY: with its link dependencies, without its include directories) and adds include/ only.
add_library(flatrt_static_public INTERFACE)
target_include_directories(flatrt_static_public INTERFACE
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>)
target_link_libraries(flatrt_static_public INTERFACE $<LINK_ONLY:flatrt_static>)
add_library(flatrt::flatrt_static ALIAS flatrt_static_public)
add_library(flatrt::flatrt_shared ALIAS flatrt_shared)
if(flatrt_USE_STATIC_LIBS)
  add_library(flatrt::flatrt ALIAS flatrt_static_public)
else()
  add_library(flatrt::flatrt ALIAS flatrt_shared)
endif()

# ---- install -----------------------------------------------------------------------------------
install(FILES include/flatrt.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS flatrt_static flatrt_shared
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Unspecified
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET flatrt)
  install(TARGETS flatrt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# Both files locate the installed tree from their own directory, so an installed prefix can be
# moved (and `cmake --install build --prefix P` works for any P).
set(FRT_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/flatrt")
set(FRT_PC_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
foreach(kind CMAKE PC)
  string(REGEX REPLACE "[^/]+" ".." FRT_${kind}_UP "${FRT_${kind}_DIR}")
endforeach()
get_target_property(FRT_SOVERSION flatrt_shared SOVERSION)
configure_file(${CMAKE_CURRENT_LIST_DIR}/flatrtConfig.cmake.in
               ${CMAKE_CURRENT_BINARY_DIR}/package/flatrtConfig.cmake @ONLY)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/package/flatrtConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
configure_file(${CMAKE_CURRENT_LIST_DIR}/flatrt.pc.in
               ${CMAKE_CURRENT_BINARY_DIR}/package/flatrt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/package/flatrtConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/package/flatrtConfigVersion.cmake
        DESTINATION ${FRT_CMAKE_DIR})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/package/flatrt.pc DESTINATION ${FRT_PC_DIR})
