/*
 * npy.h: NumPy .npy files (read and write) and raw binary files (read), for the
 * `topk` tool and the tests.
 *
 * Supported: format versions 1.0, 2.0 and 3.0; little-endian, C order; shapes
 * (n,) and (rows, n); the dtypes of topk.h:
 *
 *   descr  '<f4' '<f2' '<f8' '<i4' '<u4' '<i8' '<u8'   f32 f16 f64 i32 u32 i64 u64
 *   descr  '<V2' (also 'bfloat16', '<bf16')              bf16
 *
 * bfloat16: NumPy has no bf16 of its own. np.save() of an ml_dtypes.bfloat16
 * array (what JAX and PyTorch-to-NumPy give) writes descr '<V2', so that is
 * what we read as bf16 and what we write for bf16; read it back in Python with
 * np.load(f).view(ml_dtypes.bfloat16). A '<u2' file (bf16 bits stored as
 * uint16) is read as bf16 only when the caller asks (u2_as_bf16), because topk
 * has no uint16 type to read it as otherwise.
 *
 * Every function returns an npy_status and, on error, writes a one-line message
 * naming the file and the problem into err (if err_len > 0). Malformed input
 * never crashes: each way a file can be wrong has its own status. Sizes are
 * 64-bit throughout, so files larger than 2 GiB work.
 */
#ifndef TOPK_TOOL_NPY_H
#define TOPK_TOOL_NPY_H

#include <stddef.h>
#include <stdint.h>
#include "topk.h"

typedef enum npy_status {
  NPY_OK = 0,
  NPY_ERR_OPEN,             /* the file cannot be opened (message has strerror) */
  NPY_ERR_READ,             /* a read failed (I/O error, not a short file) */
  NPY_ERR_WRITE,            /* a write failed (disk full, permissions) */
  NPY_ERR_BAD_MAGIC,        /* does not start with "\x93NUMPY" */
  NPY_ERR_VERSION,          /* a format version other than 1.0, 2.0, 3.0 */
  NPY_ERR_TRUNCATED_HEADER, /* the file ends inside the preamble or the header */
  NPY_ERR_BAD_HEADER,       /* the header is not a dict with exactly descr, fortran_order, shape */
  NPY_ERR_FORTRAN_ORDER,    /* fortran_order: True */
  NPY_ERR_DTYPE,            /* a descr topk has no type for (big-endian, '<i2', '|b1', ...) */
  NPY_ERR_SHAPE,            /* not 1-D or 2-D, or a size that overflows 64 bits */
  NPY_ERR_SIZE_MISMATCH,    /* data shorter or longer than the shape says */
  NPY_ERR_NO_MEMORY,        /* the data does not fit in memory */
  NPY_ERR_ARGUMENT          /* a bad argument from the caller (NULL, unknown dtype, rows <= 0) */
} npy_status;

/* An array in host memory: rows x n elements of dtype, row-major. */
typedef struct npy_array {
  topk_dtype dtype;
  int        ndim;  /* 1: shape (n,), rows == 1; 2: shape (rows, n) */
  int64_t    rows;
  int64_t    n;
  void*      data;  /* malloc'ed by the readers; NULL when the array is empty */
} npy_array;

/* A parsed header, for callers that only want to look (and for the tests). */
typedef struct npy_header {
  int        major, minor;  /* format version */
  topk_dtype dtype;
  int        ndim;
  int64_t    rows, n;
  int64_t    data_offset;   /* bytes before the data */
} npy_header;

/* "NPY_ERR_BAD_MAGIC" etc. */
const char* npy_status_name(npy_status s);

/* 1 if the first bytes of buf are the .npy magic string ("\x93NUMPY"). */
int npy_has_magic(const void* buf, size_t len);

/*
 * Parses the preamble and header in buf[0 .. len), where len may be more than
 * the header (the start of a file). Checks everything but the data length.
 * name is used in messages only.
 */
npy_status npy_parse_header(const void* buf, size_t len, int u2_as_bf16, npy_header* h, const char* name,
                            char* err, size_t err_len);

/* Reads a whole .npy file into *a (free it with npy_free). The data length must match the shape exactly. */
npy_status npy_read(const char* path, int u2_as_bf16, npy_array* a, char* err, size_t err_len);

/* Same, from a buffer that holds a whole .npy file (for standard input). */
npy_status npy_read_buffer(const void* buf, size_t len, const char* name, int u2_as_bf16, npy_array* a,
                           char* err, size_t err_len);

/*
 * Reads a raw binary file of little-endian dtype elements as `rows` rows: the
 * file length must be a multiple of rows x element size. ndim is 2 if rows > 1.
 */
npy_status npy_read_raw(const char* path, topk_dtype dtype, int64_t rows, npy_array* a, char* err,
                        size_t err_len);

/* Same, from a buffer (copied). */
npy_status npy_read_raw_buffer(const void* buf, size_t len, const char* name, topk_dtype dtype, int64_t rows,
                               npy_array* a, char* err, size_t err_len);

/*
 * Writes a as a .npy file with shape (n,) for ndim 1, else (rows, n). version:
 * 1, 2 or 3 for that format version, 0 for the oldest that can hold the header
 * (always 1.0 for shapes topk writes). The header is padded so the data starts
 * on a 64-byte boundary, as NumPy does.
 */
npy_status npy_write(const char* path, const npy_array* a, int version, char* err, size_t err_len);

/* Frees a->data and zeroes *a. Accepts NULL and empty arrays. */
void npy_free(npy_array* a);

#endif
