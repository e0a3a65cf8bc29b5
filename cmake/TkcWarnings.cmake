#===- TkcWarnings.cmake - warning flags for tkc's own targets -------------===#
#
# tkc_set_warnings(target) turns on the warnings every C++ target of ours builds
# with. Third-party headers (LLVM, yaml-cpp) come in as SYSTEM includes.
#
#===----------------------------------------------------------------------===#
option(TKC_WERROR "Treat warnings as errors" OFF)

function(tkc_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
                         -Wnon-virtual-dtor -Wimplicit-fallthrough)
  # Constructor parameters named like the members they set are fine (LLVM
  # style); shadowing between locals is not.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wshadow=compatible-local)
    # GCC 12 at -O2 and above warns about std::string's own memcpy when a short
    # literal is concatenated (-Wrestrict in char_traits.h; GCC bug 105329): a
    # false positive in the standard library, not in our code.
    if(CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
      target_compile_options(${target} PRIVATE -Wno-restrict)
    endif()
  else()
    target_compile_options(${target} PRIVATE -Wshadow)
  endif()
  if(TKC_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
