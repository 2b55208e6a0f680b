/*
 * workspace.h: carving one caller-provided workspace into aligned parts, the same way
 * in every algorithm. A layout is a running total of parts, each rounded up to
 * TOPK_WS_ALIGN bytes; the total asked for adds TOPK_WS_ALIGN - 1 bytes of slack so that
 * any caller pointer can be aligned up (topk_ws_base) before the offsets apply.
 */
#ifndef TOPK_CUDA_COMMON_WORKSPACE_H
#define TOPK_CUDA_COMMON_WORKSPACE_H

#include <stddef.h>
#include <stdint.h>

enum { TOPK_WS_ALIGN = 256 };

static inline size_t topk_ws_align_up(size_t x) { return (x + (TOPK_WS_ALIGN - 1)) & ~(size_t)(TOPK_WS_ALIGN - 1); }

/* Appends count * size bytes at *offset, rounded up to TOPK_WS_ALIGN. @return 0 on size_t overflow. */
static inline int topk_ws_add_part(size_t* total, size_t* offset, uint64_t count, size_t size) {
  if (size == 0 || count > (SIZE_MAX - TOPK_WS_ALIGN) / size) return 0;
  const size_t bytes = topk_ws_align_up((size_t)count * size);
  if (bytes > SIZE_MAX - TOPK_WS_ALIGN - *total) return 0;
  *offset = *total;
  *total += bytes;
  return 1;
}

/* The aligned start of a workspace: the offsets of a layout count from here. */
static inline char* topk_ws_base(void* workspace) {
  return (char*)(((uintptr_t)workspace + (TOPK_WS_ALIGN - 1)) & ~(uintptr_t)(TOPK_WS_ALIGN - 1));
}

#endif /* TOPK_CUDA_COMMON_WORKSPACE_H */
