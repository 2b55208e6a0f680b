# RTop-K's extra targets, CUDA builds only (included from the top CMakeLists.txt):
#   rtopk_accuracy  bench/rtopk_accuracy.c: the paper's Tables 1 and 2 from our kernel
#   example_maxk    examples/maxk.cu: the MaxK-GNN nonlinearity (top-k + scatter), self-checking
if(TOPK_WITH_CUDA)
  add_executable(rtopk_accuracy ${PROJECT_SOURCE_DIR}/bench/rtopk_accuracy.c)
  target_link_libraries(rtopk_accuracy PRIVATE topk_static topk_tool_common m)
  target_include_directories(rtopk_accuracy PRIVATE ${PROJECT_SOURCE_DIR}/src)

  if(BUILD_TESTING)
    add_executable(example_maxk ${PROJECT_SOURCE_DIR}/examples/maxk.cu)
    target_link_libraries(example_maxk PRIVATE topk_static)
    add_test(NAME example_maxk COMMAND example_maxk)
    set_tests_properties(example_maxk PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endif()
endif()
