# queue_select.cmake: WarpSelect, BlockSelect, GridSelect sources, included from the
# top-level CMakeLists.txt inside if(TOPK_WITH_CUDA). The kernels are instantiated
# per (algorithm, bucket) in generated files (three key widths each), so the compile
# splits into small units that build in parallel: queue_select_inst.cu.in is
# expanded into ${CMAKE_BINARY_DIR}/queue_select/<algo>_k<CAP>.cu.
set(QS_SRC_DIR ${CMAKE_CURRENT_LIST_DIR})
set(QS_CAPS 32 64 96 128 192 256 384 512 768 1024 1536 2048) # must match QS_CAPS in queue_select.h
list(APPEND TOPK_SOURCES
  ${QS_SRC_DIR}/warp_select.cu
  ${QS_SRC_DIR}/block_select.cu
  ${QS_SRC_DIR}/grid_select.cu)
# Measurement builds only: another thread-queue length for CAP 64..128 (QS_TQ_MID in
# queue_select.h), written into just those generated files so only they rebuild.
set(TOPK_QS_TQ_MID "" CACHE STRING "thread-queue length T for CAP 64..128 (empty: queue_select.h's)")
foreach(QS_ALGO warp block grid)
  set(QS_FN qs_launch_${QS_ALGO})
  foreach(QS_CAP IN LISTS QS_CAPS)
    set(QS_DEFINES "")
    if(TOPK_QS_TQ_MID AND QS_CAP GREATER 32 AND QS_CAP LESS_EQUAL 128)
      set(QS_DEFINES "#define QS_TQ_MID ${TOPK_QS_TQ_MID}")
    endif()
    set(qs_out ${CMAKE_BINARY_DIR}/queue_select/${QS_ALGO}_select_k${QS_CAP}.cu)
    configure_file(${QS_SRC_DIR}/queue_select_inst.cu.in ${qs_out} @ONLY)
    list(APPEND TOPK_SOURCES ${qs_out})
  endforeach()
endforeach()
# BlockSelect's shared-memory queue for k = 2049..8192 (QS_SMEM_CAPS in queue_select.h).
set(QS_DEFINES "#include \"${QS_SRC_DIR}/smem_queue_kernels.cuh\"")
set(QS_FN qs_launch_block_smem)
foreach(QS_CAP 4096 8192)
  set(qs_out ${CMAKE_BINARY_DIR}/queue_select/block_smem_k${QS_CAP}.cu)
  configure_file(${QS_SRC_DIR}/queue_select_inst.cu.in ${qs_out} @ONLY)
  list(APPEND TOPK_SOURCES ${qs_out})
endforeach()
