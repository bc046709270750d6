# Overlay port for the xtrace in this source tree: vcpkg install xtrace --overlay-ports=ports
set(VCPKG_BUILD_TYPE release) # headers and the optional xtrace::runtime: one configuration
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        -DXTRACE_BUILD_TESTS=OFF
        -DXTRACE_BUILD_EXAMPLES=OFF
        -DXTRACE_BUILD_BENCH=OFF
        -DXTRACE_USE_TBB=OFF # the port does not depend on onetbb: calls run serially
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(CONFIG_PATH share/cmake/xtrace)
vcpkg_fixup_pkgconfig()

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug") # lib/ keeps xtrace::runtime
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
