# The installed package (docs/library.md): `cmake --install build --prefix P` gives
#   P/include/liegrad/<folder>/*.hpp      public headers (+ core/version.hpp)
#   P/lib/libliegrad_<folder>.so*         the libraries (RPATH $ORIGIN)
#   P/bin/liegrad                         the tool (RPATH $ORIGIN/../lib)
#   P/lib/cmake/liegrad/                  liegradConfig.cmake, version file, exported targets
#   P/lib/pkgconfig/liegrad.pc            for non-CMake builds
#   P/share/doc/liegrad/                  README, docs/, examples/external
# and, without installing, BUILD/build-tree/ is a package of the build tree itself.
# Every library folder registered itself through liegrad_library (LIEGRAD_LIBRARIES,
# in layer order), so this file lists none of them.
include(CMakePackageConfigHelpers)

get_property(liegrad_libs GLOBAL PROPERTY LIEGRAD_LIBRARIES)

# liegrad::liegrad, the umbrella: every library.
set(liegrad_lib_targets ${liegrad_libs})
list(TRANSFORM liegrad_lib_targets PREPEND liegrad_)
add_library(liegrad_all INTERFACE)
target_link_libraries(liegrad_all INTERFACE ${liegrad_lib_targets})
set_target_properties(liegrad_all PROPERTIES EXPORT_NAME liegrad)
add_library(liegrad::liegrad ALIAS liegrad_all)
install(TARGETS liegrad_all EXPORT liegradTargets)

set(LIEGRAD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/liegrad)
install(EXPORT liegradTargets NAMESPACE liegrad:: DESTINATION ${LIEGRAD_CMAKE_DIR})
string(REPLACE ";" " " LIEGRAD_COMPONENTS "${liegrad_libs}")
configure_package_config_file(cmake/liegradConfig.cmake.in ${PROJECT_BINARY_DIR}/liegradConfig.cmake
                              INSTALL_DESTINATION ${LIEGRAD_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/liegradConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/liegradConfig.cmake ${PROJECT_BINARY_DIR}/liegradConfigVersion.cmake
        DESTINATION ${LIEGRAD_CMAKE_DIR})

# The build tree as a package too: `find_package(liegrad)` with -Dliegrad_DIR=BUILD/build-tree
# (or CMAKE_PREFIX_PATH=BUILD/build-tree) uses the libraries, headers and tool of the build
# itself, so a program can be built against liegrad without installing it.
set(LIEGRAD_BUILD_TREE_DIR ${PROJECT_BINARY_DIR}/build-tree)
export(EXPORT liegradTargets NAMESPACE liegrad:: FILE ${LIEGRAD_BUILD_TREE_DIR}/liegradTargets.cmake)
configure_file(cmake/liegradBuildTreeConfig.cmake.in ${LIEGRAD_BUILD_TREE_DIR}/liegradConfig.cmake @ONLY)
configure_file(${PROJECT_BINARY_DIR}/liegradConfigVersion.cmake ${LIEGRAD_BUILD_TREE_DIR}/liegradConfigVersion.cmake
               COPYONLY)

# pkg-config: libraries from the top layer down; OpenMP because headers hold
# `#pragma omp` templates; nlohmann_json ships its own .pc.
set(LIEGRAD_PC_LIBS "")
foreach(lib ${liegrad_libs})
  get_target_property(type liegrad_${lib} TYPE)
  if(type STREQUAL "SHARED_LIBRARY")
    set(LIEGRAD_PC_LIBS "-lliegrad_${lib} ${LIEGRAD_PC_LIBS}")
  endif()
endforeach()
set(LIEGRAD_PC_OPENMP "${OpenMP_CXX_FLAGS}")
# The prefix relative to the .pc file, so a moved prefix still works.
file(RELATIVE_PATH LIEGRAD_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(cmake/liegrad.pc.in ${PROJECT_BINARY_DIR}/liegrad.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/liegrad.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")
install(DIRECTORY examples/external DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
