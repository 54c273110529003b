/* AVX-512 blocked depthwise convolution on nChw16c (blkdw.h; the loop: blkdw_impl.h). */
#include "vec_avx512.h"

#define BLKDW_NAME frt_blkdw_avx512
#define BLKDW_T 8
#include "blkdw_impl.h"
