#include "topk.h"
int main(void) { return 0; }
