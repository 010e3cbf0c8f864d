# One pkg-config file per public library (kiln-exec, kiln-trace, kiln-modules, kiln-serve,
# kiln-runtime), for projects that do not use CMake:
#   c++ -std=c++20 app.cc $(pkg-config --cflags --libs kiln-exec)
# The prefix is found from the file's own place (${pcfiledir}), so an install can be moved.
# The libraries are static by default: then what they link is in Requires/Libs, so plain
# `pkg-config --libs` links (no --static needed); with KILN_SHARED_LIBS it is in *.private.

# Path from <prefix>/<libdir>/pkgconfig back to <prefix>.
file(RELATIVE_PATH KILN_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" KILN_PC_TO_PREFIX "${KILN_PC_TO_PREFIX}")

# kiln_pkg_config(<name> <description> LIBS <-l...> REQUIRES <pc modules>
#                 DEPS_REQUIRES <pc modules> DEPS_LIBS <-l...>)
# LIBS/REQUIRES: kiln's own libraries and the packages its public headers include;
# DEPS_*: what the library links privately (needed by a static link).
function(kiln_pkg_config name description)
  cmake_parse_arguments(PC "" "" "LIBS;REQUIRES;DEPS_REQUIRES;DEPS_LIBS" ${ARGN})
  set(KILN_PC_NAME ${name})
  set(KILN_PC_DESCRIPTION ${description})
  set(requires ${PC_REQUIRES})
  set(requires_private)
  set(libs ${PC_LIBS})
  set(libs_private)
  if(KILN_LIBRARY_TYPE STREQUAL "STATIC")
    list(APPEND requires ${PC_DEPS_REQUIRES})
    list(APPEND libs ${PC_DEPS_LIBS})
  else()
    set(requires_private ${PC_DEPS_REQUIRES})
    set(libs_private ${PC_DEPS_LIBS})
  endif()
  list(JOIN requires ", " KILN_PC_REQUIRES)
  list(JOIN requires_private ", " KILN_PC_REQUIRES_PRIVATE)
  list(JOIN libs " " KILN_PC_LIBS)
  list(JOIN libs_private " " KILN_PC_LIBS_PRIVATE)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/pkg-config.pc.in
                 ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${name}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${name}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

# What kiln::exec links (libexec/CMakeLists.txt): oneDNN and libgomp have no .pc file in Debian.
set(KILN_PC_EXEC_DEPS_REQUIRES zlib libjpeg libpng libwebp libwebpdemux re2 icu-uc)
set(KILN_PC_EXEC_DEPS_LIBS -ldnnl -lgomp -lpthread)
set(KILN_PC_RUNTIME_DEPS_LIBS -ldnnl -lgomp -lpthread)
if(KILN_HAVE_CUDA)  # the static CUDA runtime and what it needs
  list(APPEND KILN_PC_EXEC_DEPS_LIBS -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt)
  list(APPEND KILN_PC_RUNTIME_DEPS_LIBS -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt)
endif()
kiln_pkg_config(kiln-exec "kiln's runtime: loads TensorFlow SavedModels and runs them"
  LIBS -lkiln_exec -lkiln_schema REQUIRES protobuf
  DEPS_REQUIRES ${KILN_PC_EXEC_DEPS_REQUIRES} DEPS_LIBS ${KILN_PC_EXEC_DEPS_LIBS})
if(TARGET kiln_trace)
  kiln_pkg_config(kiln-trace "kiln's authoring library: traced functions, modules, export"
    LIBS -lkiln_trace REQUIRES kiln-exec)
endif()
if(TARGET kiln_modules)
  kiln_pkg_config(kiln-modules "kiln's Keras-like layers, losses and optimizers"
    LIBS -lkiln_modules REQUIRES kiln-trace)
endif()
if(TARGET kiln_serve)
  kiln_pkg_config(kiln-serve "kiln's model-server core: repository, batching, REST/V2 codecs"
    LIBS -lkiln_serve -lkiln_serving_schema REQUIRES kiln-exec DEPS_REQUIRES nlohmann_json)
endif()
if(TARGET kiln_runtime)
  kiln_pkg_config(kiln-runtime "kiln's protobuf-free runtime: runs compiled serving plans"
    LIBS -lkiln_runtime DEPS_LIBS ${KILN_PC_RUNTIME_DEPS_LIBS})
endif()
