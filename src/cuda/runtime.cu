/* PLACEHOLDER: being written. */
#include "../cuda_stub.c"
