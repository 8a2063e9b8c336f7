/* The fake CUDA driver's entry points (fake_cuda.c): two of the real driver API's names, and two for the fixture. */
#pragma once

#include <sys/types.h>

#define FAKE_CUDA_API __attribute__((visibility("default")))

FAKE_CUDA_API int cuInit(unsigned flags);
FAKE_CUDA_API int cuCtxSynchronize(void);
/* the fd of the handle cuda-EvtHandlr opened, and that thread's tid */
FAKE_CUDA_API int fakeCudaHandle(void);
FAKE_CUDA_API pid_t fakeCudaEventThread(void);
