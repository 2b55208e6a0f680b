/*
 * textio.c: reading numbers from text and printing values exactly (see textio.h).
 *
 * Values are printed as the shortest decimal that parses back to the same bits,
 * so text output is exact without the noise of a fixed %.9g (0.1f prints as 0.1,
 * not 0.100000001).
 */
#include "textio.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* ------------------------------------------------------------------ writing */

static int special(char* buf, size_t len, double v) {
  if (isnan(v)) return snprintf(buf, len, "nan");
  if (isinf(v)) return snprintf(buf, len, v < 0 ? "-inf" : "inf");
  return -1;
}

static int same_f32(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }
static int same_f64(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

int text_format_value(char* buf, size_t len, const void* base, int64_t i, topk_dtype dt) {
  int w;
  switch (dt) {
    case TOPK_F32: {
      float f = ((const float*)base)[i];
      if ((w = special(buf, len, f)) >= 0) return w;
      for (int p = 1; p <= 9; ++p) {
        w = snprintf(buf, len, "%.*g", p, (double)f);
        if (same_f32(strtof(buf, NULL), f)) break;
      }
      return w;
    }
    case TOPK_F64: {
      double d = ((const double*)base)[i];
      if ((w = special(buf, len, d)) >= 0) return w;
      for (int p = 1; p <= 17; ++p) {
        w = snprintf(buf, len, "%.*g", p, d);
        if (same_f64(strtod(buf, NULL), d)) break;
      }
      return w;
    }
    case TOPK_F16:
    case TOPK_BF16: {
      uint16_t h = ((const uint16_t*)base)[i];
      float f = dt == TOPK_F16 ? gen_f16_to_f32(h) : gen_bf16_to_f32(h);
      if ((w = special(buf, len, f)) >= 0) return w;
      /* Every f16/bf16 is exact in f32, so %.9g always reads back: the loop ends. */
      for (int p = 1; p <= 9; ++p) {
        w = snprintf(buf, len, "%.*g", p, (double)f);
        float back = strtof(buf, NULL);
        if ((dt == TOPK_F16 ? gen_f32_to_f16(back) : gen_f32_to_bf16(back)) == h) break;
      }
      return w;
    }
    case TOPK_I32: return snprintf(buf, len, "%" PRId32, ((const int32_t*)base)[i]);
    case TOPK_U32: return snprintf(buf, len, "%" PRIu32, ((const uint32_t*)base)[i]);
    case TOPK_I64: return snprintf(buf, len, "%" PRId64, ((const int64_t*)base)[i]);
    case TOPK_U64: return snprintf(buf, len, "%" PRIu64, ((const uint64_t*)base)[i]);
  }
  return snprintf(buf, len, "?");
}

/* ------------------------------------------------------------------ reading */

/* Parses one token as dt into element i of out. @return 0, or -1 with a reason in why. */
static int parse_token(const char* tok, topk_dtype dt, void* out, int64_t i, const char** why) {
  char* end = NULL;
  errno = 0;
  switch (dt) {
    case TOPK_F32: case TOPK_F16: case TOPK_BF16: {
      float f = strtof(tok, &end); /* ERANGE just means it rounded to inf or 0, as IEEE says */
      if (*end || end == tok) { *why = "is not a number"; return -1; }
      if (dt == TOPK_F32) ((float*)out)[i] = f;
      else ((uint16_t*)out)[i] = dt == TOPK_F16 ? gen_f32_to_f16(f) : gen_f32_to_bf16(f);
      return 0;
    }
    case TOPK_F64: {
      double d = strtod(tok, &end);
      if (*end || end == tok) { *why = "is not a number"; return -1; }
      ((double*)out)[i] = d;
      return 0;
    }
    case TOPK_I32: case TOPK_I64: {
      long long x = strtoll(tok, &end, 10);
      if (*end || end == tok) { *why = "is not an integer"; return -1; }
      if (errno == ERANGE || (dt == TOPK_I32 && (x < INT32_MIN || x > INT32_MAX))) {
        *why = "is out of the type's range";
        return -1;
      }
      if (dt == TOPK_I32) ((int32_t*)out)[i] = (int32_t)x;
      else ((int64_t*)out)[i] = (int64_t)x;
      return 0;
    }
    case TOPK_U32: case TOPK_U64: {
      if (strchr(tok, '-')) { *why = "is out of the type's range"; return -1; } /* strtoull wraps negatives */
      unsigned long long x = strtoull(tok, &end, 10);
      if (*end || end == tok) { *why = "is not an integer"; return -1; }
      if (errno == ERANGE || (dt == TOPK_U32 && x > UINT32_MAX)) { *why = "is out of the type's range"; return -1; }
      if (dt == TOPK_U32) ((uint32_t*)out)[i] = (uint32_t)x;
      else ((uint64_t*)out)[i] = (uint64_t)x;
      return 0;
    }
  }
  *why = "has an unknown type";
  return -1;
}

int text_parse_values(const char* text, size_t len, const char* name, topk_dtype dt, void** data, int64_t* count,
                      char* err, size_t err_len) {
  *data = NULL;
  *count = 0;
  size_t es = topk_dtype_size(dt);
  if (es == 0) { snprintf(err, err_len, "unknown dtype %d", (int)dt); return -1; }
  unsigned char* out = NULL;
  int64_t n = 0, cap = 0, line = 1;
  size_t i = 0;
  while (i < len) {
    char c = text[i];
    if (c == '\n') { ++line; ++i; continue; }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == ',') { ++i; continue; }
    if (c == '#') { while (i < len && text[i] != '\n') ++i; continue; }
    size_t start = i;
    while (i < len && !strchr(" \t\r\n\f\v,#", text[i]) && text[i] != '\0') ++i;
    if (i == start) { /* a NUL byte: binary data, not text */
      snprintf(err, err_len, "'%s' line %lld: a NUL byte; is it a binary file (use --raw, or .npy)?", name,
               (long long)line);
      free(out);
      return -1;
    }
    char tok[128];
    size_t tl = i - start;
    if (tl >= sizeof tok) {
      snprintf(err, err_len, "'%s' line %lld: a token of %zu characters is too long for a number", name,
               (long long)line, tl);
      free(out);
      return -1;
    }
    memcpy(tok, text + start, tl);
    tok[tl] = '\0';
    if (n == cap) {
      int64_t ncap = cap ? cap * 2 : 1024;
      unsigned char* grown = (unsigned char*)realloc(out, (size_t)ncap * es);
      if (!grown) { free(out); snprintf(err, err_len, "'%s': out of memory", name); return -2; }
      out = grown;
      cap = ncap;
    }
    const char* why = "";
    if (parse_token(tok, dt, out, n, &why) != 0) {
      snprintf(err, err_len, "'%s' line %lld: '%s' %s (%s)", name, (long long)line, tok, why, topk_dtype_name(dt));
      free(out);
      return -1;
    }
    ++n;
  }
  *data = out;
  *count = n;
  return 0;
}

int text_read_file(const char* path, char** buf, size_t* len, char* err, size_t err_len) {
  *buf = NULL;
  *len = 0;
  int is_stdin = strcmp(path, "-") == 0;
  FILE* f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) { snprintf(err, err_len, "cannot open '%s': %s", path, strerror(errno)); return -1; }
  size_t cap = 1 << 16, n = 0;
  char* b = (char*)malloc(cap + 1);
  int rc = b ? 0 : -2;
  while (rc == 0) {
    if (n == cap) {
      char* grown = cap > SIZE_MAX / 2 - 1 ? NULL : (char*)realloc(b, cap * 2 + 1);
      if (!grown) { rc = -2; break; }
      b = grown;
      cap *= 2;
    }
    size_t got = fread(b + n, 1, cap - n, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) {
        snprintf(err, err_len, "cannot read '%s': %s", is_stdin ? "standard input" : path, strerror(errno));
        rc = -1;
      }
      break;
    }
  }
  if (rc == -2) snprintf(err, err_len, "'%s': out of memory", path);
  if (!is_stdin) fclose(f);
  if (rc != 0) { free(b); return rc; }
  b[n] = '\0';
  *buf = b;
  *len = n;
  return 0;
}
