/*
 * check.h: verifies a top-k result against the CPU reference (DESIGN.md "Testing").
 *
 * A result is right when, for every row:
 *   - every index is in range and distinct, and in[row][idx] equals the returned value
 *     bit for bit (NaNs compared as "is NaN");
 *   - the multiset of returned keys equals the reference's;
 *   - deterministic mode (no TOPK_NONDETERMINISTIC flag): the index set equals the reference's
 *     (lowest indices among ties at the k-th value);
 *   - TOPK_SORTED: values are best first, and with deterministic ties equal values by index;
 *   - rows shorter than k (row_offsets): the padded slots hold index -1 and the worst value.
 * Every input is a host copy. Prints the first difference (row, slot, both values) to stderr.
 */
#ifndef TOPK_TEST_CHECK_H
#define TOPK_TEST_CHECK_H

#include <stdint.h>
#include "topk.h"

/* @return 0 if the result is right, -1 otherwise (after printing why). p->row_offsets is ignored;
 * offsets (host) gives variable-length rows. values: batch x k; indices: batch x k of p->index_type,
 * or NULL for TOPK_INDEX_NONE (then only the value multiset and order are checked). */
int check_topk(const topk_problem* p, const void* in, const int64_t* offsets, const void* values,
               const void* indices);

/* Fills n bytes with a poison pattern (0xA5), so an unwritten slot is caught. */
void check_poison(void* host_buffer, size_t bytes);
/* @return 1 if every byte of the buffer still holds the poison pattern. */
int check_is_poisoned(const void* host_buffer, size_t bytes);

#endif
