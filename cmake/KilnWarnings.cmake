# One warning policy for every target of ours: -Wall -Wextra everywhere, and -Werror when
# KILN_WERROR is on (the test command turns it on; GCC 12 and Clang 14 build warning-free).
#
# Turned off, each for a reason:
# - missing-field-initializers: C++20 designated initializers that name only some fields
#   ({.arg_names = ...}) are the intended way to fill option structs.
# - GCC's restrict and maybe-uninitialized: GCC 12 reports std::string internals at -O2
#   ("literal" + std::string&&, GCC bug 105651; strings inside std::variant), not our code.
function(kiln_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-restrict -Wno-maybe-uninitialized)
  endif()
  if(KILN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
