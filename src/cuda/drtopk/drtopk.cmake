# drtopk.cmake: bench/drtopk_workload (the Dr. Top-k workload, Rule-4 sweep and delegate
# bandwidth tables; it calls the internal src/cuda/drtopk/drtopk.h), CUDA builds only.
if(TOPK_WITH_CUDA)
  add_executable(drtopk_workload ${CMAKE_CURRENT_SOURCE_DIR}/bench/drtopk_workload.c)
  target_link_libraries(drtopk_workload PRIVATE topk_static topk_tool_common)
  target_include_directories(drtopk_workload PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
endif()
