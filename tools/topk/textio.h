/*
 * textio.h: the text formats of the `topk` tool.
 *
 * Reading: numbers separated by whitespace or commas (one per line, or many per
 * line); '#' starts a comment that runs to the end of the line. Floats accept what
 * strtod accepts, including nan, inf, -inf. Integer types take decimal integers
 * only, checked against the type's range.
 *
 * Writing: each value as the shortest decimal that reads back to the same bits
 * (at most %.9g digits for f32, %.17g for f64, 5 for f16, 4 for bf16), integers
 * exactly, NaN as "nan" (any sign or payload), infinities as "inf" and "-inf",
 * negative zero as "-0".
 */
#ifndef TOPK_TOOL_TEXTIO_H
#define TOPK_TOOL_TEXTIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "topk.h"

/* Room for any value text_format_value writes. */
#define TEXT_VALUE_MAX 48

/* Writes element i of base (of dtype dt) into buf. @return the length written. */
int text_format_value(char* buf, size_t len, const void* base, int64_t i, topk_dtype dt);

/*
 * Parses text[0 .. len) into a malloc'ed array of dtype dt (*data, *count
 * elements; *data is NULL when there are none). name is used in messages.
 * @return 0, -1 for malformed text (err says which line and token), -2 when out of memory.
 */
int text_parse_values(const char* text, size_t len, const char* name, topk_dtype dt, void** data, int64_t* count,
                      char* err, size_t err_len);

/*
 * Reads a whole file ("-": standard input) into a malloc'ed buffer (NUL-terminated,
 * *len excludes the NUL). @return 0, -1 if it cannot be opened or read (err has
 * strerror), -2 when out of memory.
 */
int text_read_file(const char* path, char** buf, size_t* len, char* err, size_t err_len);

#endif
