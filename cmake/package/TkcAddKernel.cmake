#===- TkcAddKernel.cmake - tkc_add_kernel() for users' builds --------------===#
#
# tkc_add_kernel(<target> SPEC <file.yaml>
#                [PARAMS NAME=VALUE ...] [ARCH <sm_90a>] [OUTPUT_NAME <name>])
#
# Generates <name>.cu and <name>.h from SPEC with tkc at build time (again
# whenever the spec or the tkc executable changes), adds the .cu to <target>,
# puts the header's folder on <target>'s include path, links tkc::kittens and
# tkc::runtime, and compiles <target>'s CUDA for ARCH with C++20 and
# --expt-relaxed-constexpr. PARAMS become `--param NAME=VALUE` (only the
# instantiations with those values). <target> must exist and the project must
# have enabled CUDA. See docs/Integration.md.
#
#===----------------------------------------------------------------------===#
function(tkc_add_kernel target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SPEC;ARCH;OUTPUT_NAME" "PARAMS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tkc_add_kernel: unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "tkc_add_kernel: '${target}' is not a target; create it first "
                        "(add_executable or add_library)")
  endif()
  if(NOT arg_SPEC)
    message(FATAL_ERROR "tkc_add_kernel(${target}): SPEC <file.yaml> is required")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    message(FATAL_ERROR "tkc_add_kernel(${target}): generated kernels are CUDA; call "
                        "enable_language(CUDA) or list CUDA in project(... LANGUAGES ...)")
  endif()
  if(NOT arg_ARCH)
    set(arg_ARCH sm_90a)
  endif()
  if(NOT arg_ARCH MATCHES "^sm_([0-9]+a?)$")
    message(FATAL_ERROR "tkc_add_kernel(${target}): ARCH must look like sm_90a, found '${arg_ARCH}'")
  endif()
  set(cuda_arch "${CMAKE_MATCH_1}")

  get_filename_component(spec "${arg_SPEC}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${spec}")
    message(FATAL_ERROR "tkc_add_kernel(${target}): the spec '${spec}' does not exist")
  endif()
  set(name "${arg_OUTPUT_NAME}")
  if(NOT name)
    get_filename_component(name "${spec}" NAME_WE)
  endif()
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/tkc_generated/${target}")
  set(source "${out_dir}/${name}.cu")
  set(header "${out_dir}/${name}.h")

  set(param_args)
  foreach(param IN LISTS arg_PARAMS)
    list(APPEND param_args --param "${param}")
  endforeach()

  file(MAKE_DIRECTORY "${out_dir}")
  add_custom_command(
    OUTPUT "${source}" "${header}"
    COMMAND "${TKC_EXECUTABLE}" "${spec}" --arch=${arg_ARCH} ${param_args}
            -o "${source}" --header "${header}"
    DEPENDS "${spec}" "${TKC_EXECUTABLE}"
    COMMENT "tkc: generating ${name}.cu and ${name}.h from ${arg_SPEC}"
    VERBATIM)

  target_sources(${target} PRIVATE "${source}" "${header}")
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_link_libraries(${target} PUBLIC tkc::kittens tkc::runtime)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${cuda_arch}")
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>")
  # C++20 for CUDA: the standard property where this CMake knows nvcc's flag
  # for it, else the flag itself (CMake 3.25 does not know nvcc 13's dialects).
  if(CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set_target_properties(${target} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON)
  else()
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>")
  endif()
endfunction()
