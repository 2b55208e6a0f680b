/* timer.h: a monotonic wall clock for the tools and tests. */
#ifndef TOPK_TOOL_TIMER_H
#define TOPK_TOOL_TIMER_H
double timer_now_seconds(void);
#endif
