/* AVX2/FMA blocked depthwise convolution on nChw8c (blkdw.h; the loop: blkdw_impl.h). */
#include "vec_avx2.h"

#define BLKDW_NAME frt_blkdw_avx2
/* 8 outputs per register block (8 accumulators + 9 weights of a 3x3 kernel: the weights are
   partly reloaded): against 4, best of 300 one layer at a time (Zen 3, no activation) 3x3 stride
   1 32 ch at 112x112 106 -> 88 us, 144 at 56x56 127 -> 106, 192 at 28x28 46 -> 41, 576 at 14x14
   40 -> 38.5, 960 at 7x7 25 -> 23; 3x3 stride 2 96 ch 112->56 129 -> 123; 5x5 672 at 14x14
   131 -> 122 */
#define BLKDW_T 8
#include "blkdw_impl.h"
