/* PLACEHOLDER: being written. */
#include "commands.h"
int main(int argc, char** argv) { (void)argc; (void)argv; return 1; }
