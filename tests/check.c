/* PLACEHOLDER: being written. */
#include "check.h"
#include <string.h>
int check_topk(const topk_problem* p, const void* in, const int64_t* o, const void* v, const void* i) { (void)p; (void)in; (void)o; (void)v; (void)i; return -1; }
void check_poison(void* b, size_t n) { memset(b, 0xA5, n); }
int check_is_poisoned(const void* b, size_t n) { (void)b; (void)n; return 0; }
