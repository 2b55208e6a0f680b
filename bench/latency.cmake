# latency.cmake: bench/latency (per-call latency of topk_select for LLM-sampling shapes:
# CUDA events, host enqueue time and CUDA-graph replay) and bench/host_time (the host time
# of one call), CUDA builds only. Included from the top-level CMakeLists.txt.
if(TOPK_WITH_CUDA)
  add_executable(latency ${CMAKE_CURRENT_SOURCE_DIR}/bench/latency.cu)
  target_link_libraries(latency PRIVATE topk_static topk_tool_common)
  # The project's -Wall -Wextra are set for C only; the host side of this .cu gets them too.
  target_compile_options(latency PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  # bench/host_time: the host time of one topk_select / topk_plan_run call (the enqueue alone)
  add_executable(host_time ${CMAKE_CURRENT_SOURCE_DIR}/bench/host_time.c)
  target_link_libraries(host_time PRIVATE topk_static)
endif()
