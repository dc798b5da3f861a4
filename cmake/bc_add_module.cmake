# bc_add_module(NAME
#     SOURCES file.c...
#     [DEPENDS module...]     bloomcrawl modules whose headers ours include
#                             (linked PUBLIC: bloomcrawl::NAME)
#     [PKG pkg-config-name...]  outside libraries found with pkg-config,
#                             linked PRIVATE (the module's one list of them:
#                             the build, bloomcrawl.pc and the installed
#                             CMake package all read it)
#     [LIBS lib...]           other libraries linked PRIVATE (m, targets)
#     [PC_LIBS -lx...]        what LIBS are on a pkg-config link line
#     [PRIVATE_INCLUDES dir...])
#
# Adds the library target NAME (file libbloomcrawl-NAME.a, or .so with
# -DBUILD_SHARED_LIBS=ON, with a versioned SONAME) and its alias
# bloomcrawl::NAME; its public headers are NAME/include/bloomcrawl/*.h
# (and any generated ones under the build tree's NAME/include). Installs
# the library and the headers, exports the target, and records its
# libraries for bloomcrawl.pc and bloomcrawlConfig.cmake.
function(bc_add_module name)
    cmake_parse_arguments(M "" ""
        "SOURCES;DEPENDS;PKG;LIBS;PC_LIBS;PRIVATE_INCLUDES" ${ARGN})
    add_library(${name} ${M_SOURCES})
    add_library(bloomcrawl::${name} ALIAS ${name})
    set_target_properties(${name} PROPERTIES
        OUTPUT_NAME bloomcrawl-${name}
        VERSION ${PROJECT_VERSION}
        SOVERSION ${PROJECT_VERSION_MAJOR})
    target_include_directories(${name}
        PUBLIC
            $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
            $<BUILD_INTERFACE:${CMAKE_CURRENT_BINARY_DIR}/include>
            $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
        PRIVATE
            ${CMAKE_CURRENT_SOURCE_DIR}
            ${M_PRIVATE_INCLUDES})
    foreach(dep IN LISTS M_DEPENDS)
        target_link_libraries(${name} PUBLIC bloomcrawl::${dep})
    endforeach()
    foreach(pkg IN LISTS M_PKG)
        bc_pkg_target(${pkg} target)
        target_link_libraries(${name} PRIVATE ${target})
    endforeach()
    target_link_libraries(${name} PRIVATE ${M_LIBS})
    bc_target_setup(${name})

    install(TARGETS ${name} EXPORT bloomcrawlTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    install(DIRECTORY include/bloomcrawl
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
    if(EXISTS ${CMAKE_CURRENT_BINARY_DIR}/include/bloomcrawl)
        install(DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/include/bloomcrawl
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
            FILES_MATCHING PATTERN "*.h")
    endif()
    set_property(GLOBAL APPEND PROPERTY BC_PC_LIBS -lbloomcrawl-${name})
    set_property(GLOBAL APPEND PROPERTY BC_PC_REQUIRES ${M_PKG})
    set_property(GLOBAL APPEND PROPERTY BC_PC_SYSLIBS ${M_PC_LIBS})
endfunction()

# bc_pkg_target(PKG OUT): find the pkg-config module PKG (once) and set OUT
# to its imported target, PkgConfig::BC_PKG_<PKG as a C identifier>, e.g.
# PkgConfig::BC_PKG_LIBXML_2_0. bloomcrawlConfig.cmake makes the same
# names, so an installed static library finds its dependencies.
function(bc_pkg_target pkg out)
    string(MAKE_C_IDENTIFIER "BC_PKG_${pkg}" prefix)
    string(TOUPPER "${prefix}" prefix)
    if(NOT TARGET PkgConfig::${prefix})
        pkg_check_modules(${prefix} REQUIRED IMPORTED_TARGET GLOBAL ${pkg})
    endif()
    set(${out} PkgConfig::${prefix} PARENT_SCOPE)
endfunction()
