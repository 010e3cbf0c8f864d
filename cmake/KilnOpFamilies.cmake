# A build with only some op families (KILN_OP_FAMILIES), as ONNX Runtime's reduced operator
# build and TensorFlow Lite's selective build: the other families' kernel files are not compiled
# and the op table lists the families kept. A bundle that uses a left-out op is refused at
# prepare, naming the op and this build's families. The main command (scripts/demo.sh) builds
# the demo this way; every other build has every family.
#
# Family F is defined by the one file kernels/*_ops.cc (kernels/full/*_ops.cc) that defines
# F##OpDefs() (kernels/op_families.h), and its CPU kernels are the file of the same name under
# kernels/cpu/; that is how the files are found here, with no second list to keep.
# A helper file that defines no family but serves only some says so in a line of its own,
# `// Op families: Linalg` (kernels/linalg_decomposition_ops.cc), and is left out with them.

# The engine makes Const, Identity and Cast nodes itself (fusion, half precision), runs function
# calls and control flow, its fused recurrent loops read tensor lists, and libtrace's
# HostCallback registers its host functions with the HostCallback family: these families are
# always kept.
set(KILN_CORE_OP_FAMILIES Basic Math ControlFlow TensorList HostCallback)

# kiln_select_op_families(<common srcs var> <dual srcs var> <full srcs var> <minimal table var>)
# Removes the left-out families' files from the source lists (libexec/CMakeLists.txt says what
# each holds), replaces the full table (kernels/full/op_families_full.cc) with a generated one, and
# sets <minimal table var> to a generated table for the protobuf-free runtime (the kept families
# that need no protobuf).
function(kiln_select_op_families common_var dual_var full_var minimal_var)
  string(REPLACE "," ";" wanted "${KILN_OP_FAMILIES}")
  list(TRANSFORM wanted STRIP)
  list(APPEND wanted ${KILN_CORE_OP_FAMILIES})
  list(REMOVE_DUPLICATES wanted)
  set(all_families)
  set(kept_common)
  set(kept_dual)
  set(kept_full)
  set(helpers)
  set(cpu_files)
  set(dropped_cpu)
  foreach(kind common dual full)
    set(srcs ${${${kind}_var}})
    foreach(src IN LISTS srcs)
      # Definitions are kernels/X.cc (kernels/full/X.cc); X's CPU kernels, kernels/cpu/X.cc
      # (kernels/cpu/full/X.cc), go with them.
      if(NOT src MATCHES "/kernels/(full/)?[a-z0-9_]+\\.cc$")
        if(src MATCHES "/kernels/cpu/")
          list(APPEND cpu_files ${src})
        endif()
        continue()
      endif()
      file(STRINGS ${src} def LIMIT_COUNT 1
           REGEX "^std::span<const OpDefinition> [A-Za-z0-9]+OpDefs\\(\\)")
      if(NOT def)
        list(APPEND helpers ${src})
        continue()
      endif()
      string(REGEX REPLACE "^std::span<const OpDefinition> ([A-Za-z0-9]+)OpDefs.*" "\\1" family
                           "${def}")
      list(APPEND all_families ${family})
      if(family IN_LIST wanted)
        list(APPEND kept_${kind} ${family})
      else()
        list(REMOVE_ITEM srcs ${src})
        string(REPLACE "/kernels/" "/kernels/cpu/" cpu_src ${src})
        list(APPEND dropped_cpu ${cpu_src})
      endif()
    endforeach()
    set(${kind}_srcs ${srcs})
  endforeach()
  # The left-out families' CPU kernels; CPU helpers go by their tags, as below.
  foreach(src IN LISTS cpu_files)
    if(src IN_LIST dropped_cpu)
      list(REMOVE_ITEM common_srcs ${src})
      list(REMOVE_ITEM dual_srcs ${src})
      list(REMOVE_ITEM full_srcs ${src})
    else()
      list(APPEND helpers ${src})
    endif()
  endforeach()
  # Helpers whose families are all left out.
  foreach(src IN LISTS helpers)
    file(STRINGS ${src} tag LIMIT_COUNT 1 REGEX "^// Op families: [A-Za-z0-9 ]+$")
    if(NOT tag)
      continue()
    endif()
    string(REGEX REPLACE "^// Op families: " "" owners "${tag}")
    string(REPLACE " " ";" owners "${owners}")
    set(used OFF)
    foreach(owner IN LISTS owners)
      if(owner IN_LIST wanted)
        set(used ON)
      endif()
    endforeach()
    if(NOT used)
      list(REMOVE_ITEM common_srcs ${src})
      list(REMOVE_ITEM dual_srcs ${src})
      list(REMOVE_ITEM full_srcs ${src})
    endif()
  endforeach()
  foreach(family IN LISTS wanted)
    if(NOT family IN_LIST all_families)
      list(SORT all_families)
      list(JOIN all_families " " names)
      message(FATAL_ERROR "KILN_OP_FAMILIES names '${family}', which is not an op family. "
                          "The families are: ${names}")
    endif()
  endforeach()
  list(FILTER full_srcs EXCLUDE REGEX "/op_families_full\\.cc$")

  set(kept ${kept_common} ${kept_dual} ${kept_full})
  list(SORT kept)
  list(JOIN kept ", " kept_text)
  message(STATUS "kiln: op families of this build (KILN_OP_FAMILIES): ${kept_text}")
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/op_families)
  set(full_table ${dir}/op_families_selected.cc)
  set(minimal_table ${dir}/op_families_selected_minimal.cc)
  _kiln_write_op_table(${full_table} "${kept}" "${kept_text}")
  _kiln_write_op_table(${minimal_table} "${kept_common};${kept_dual}" "${kept_text}")
  set(${common_var} ${common_srcs} PARENT_SCOPE)
  set(${dual_var} ${dual_srcs} PARENT_SCOPE)
  set(${full_var} ${full_srcs} ${full_table} PARENT_SCOPE)
  set(${minimal_var} ${minimal_table} PARENT_SCOPE)
endfunction()

function(_kiln_write_op_table path families kept_text)
  set(adds "")
  foreach(family IN LISTS families)
    string(APPEND adds "  b.Add(\"${family}\", ${family}OpDefs(), ${family}CpuKernels());\n")
  endforeach()
  # file(CONFIGURE) rewrites the file only when its text changes, so a reconfigure with the
  # same families recompiles nothing.
  file(CONFIGURE OUTPUT ${path} @ONLY CONTENT
"// Generated by cmake/KilnOpFamilies.cmake: the op table of a build with KILN_OP_FAMILIES.
#include \"kernels/op_families.h\"
#include \"kernels/op_table_builder.h\"

namespace kiln::exec {

void ListOpFamilies(OpTableBuilder& b) {
${adds}}

std::string_view OpTableNote() {
  return \" (this build has only the op families ${kept_text}: KILN_OP_FAMILIES)\";
}

}  // namespace kiln::exec
")
endfunction()
