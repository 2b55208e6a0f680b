# queue_select.cmake: WarpSelect, BlockSelect, GridSelect sources, included from the
# top-level CMakeLists.txt inside if(TOPK_WITH_CUDA). The kernels are instantiated
# per (algorithm, bucket) in generated files (three key widths each), so the compile
# splits into small units that build in parallel: queue_select_inst.cu.in is
# expanded into ${CMAKE_BINARY_DIR}/queue_select/<algo>_k<CAP>.cu.
set(QS_SRC_DIR ${CMAKE_CURRENT_LIST_DIR})
set(QS_CAPS 32 64 128 256 512 1024 2048) # must match QS_TABLE in queue_select.h
list(APPEND TOPK_SOURCES
  ${QS_SRC_DIR}/warp_select.cu
  ${QS_SRC_DIR}/block_select.cu
  ${QS_SRC_DIR}/grid_select.cu)
foreach(QS_ALGO warp block grid)
  set(QS_FN qs_launch_${QS_ALGO})
  foreach(QS_CAP IN LISTS QS_CAPS)
    set(qs_out ${CMAKE_BINARY_DIR}/queue_select/${QS_ALGO}_select_k${QS_CAP}.cu)
    configure_file(${QS_SRC_DIR}/queue_select_inst.cu.in ${qs_out} @ONLY)
    list(APPEND TOPK_SOURCES ${qs_out})
  endforeach()
endforeach()
