/* resnet50_shapes.h: ResNet-50 v1.5's convolution shapes as one X-macro, shared by bench.c and
   onednn_conv.c so that both run the same layers. */
#ifndef BENCH_RESNET50_SHAPES_H
#define BENCH_RESNET50_SHAPES_H

/* ResNet-50 v1.5 (torchvision's: the stride of a downsampling bottleneck on its 3x3 conv), its
   convolutions, each shape once: X(name, c, k, h, r, pad, stride) with input c x h x h, k filters
   of r x r. The stem at 224; layer1 at 56; layers 2 to 4 start at 56, 28, 14 and run at 28, 14, 7.
   Each bottleneck is 1x1 reduce, 3x3, 1x1 expand; the first of a layer also has the 1x1
   downsample of the shortcut (ds, stride 2 in layers 2 to 4). Same shapes are listed once: layer1's
   downsample 1x1 64->256 at 56 is l1_1x1_64_256, and the first block's 1x1 expand of layers 2 to 4
   is the same shape as the other blocks'. Layers use per block (first/rest): l1 3 blocks, l2 4, l3
   6, l4 3. */
#define RN50_SHAPES(X, N, OP, DIR, DT, LAYOUT, SUFFIX)                                              \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, stem_7x7s2_3_64, 3, 64, 224, 7, 3, 2)                        \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l1_1x1_64_64, 64, 64, 56, 1, 0, 1)                           \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l1_3x3_64_64, 64, 64, 56, 3, 1, 1)                           \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l1_1x1_64_256, 64, 256, 56, 1, 0, 1)                         \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l1_1x1_256_64, 256, 64, 56, 1, 0, 1)                         \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l2_1x1_256_128, 256, 128, 56, 1, 0, 1)                       \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l2_3x3s2_128_128, 128, 128, 56, 3, 1, 2)                     \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l2_ds_256_512, 256, 512, 56, 1, 0, 2)                        \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l2_1x1_128_512, 128, 512, 28, 1, 0, 1)                       \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l2_1x1_512_128, 512, 128, 28, 1, 0, 1)                       \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l2_3x3_128_128, 128, 128, 28, 3, 1, 1)                       \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l3_1x1_512_256, 512, 256, 28, 1, 0, 1)                       \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l3_3x3s2_256_256, 256, 256, 28, 3, 1, 2)                     \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l3_ds_512_1024, 512, 1024, 28, 1, 0, 2)                      \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l3_1x1_256_1024, 256, 1024, 14, 1, 0, 1)                     \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l3_1x1_1024_256, 1024, 256, 14, 1, 0, 1)                     \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l3_3x3_256_256, 256, 256, 14, 3, 1, 1)                       \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l4_1x1_1024_512, 1024, 512, 14, 1, 0, 1)                     \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l4_3x3s2_512_512, 512, 512, 14, 3, 1, 2)                     \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l4_ds_1024_2048, 1024, 2048, 14, 1, 0, 2)                    \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l4_1x1_512_2048, 512, 2048, 7, 1, 0, 1)                      \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l4_1x1_2048_512, 2048, 512, 7, 1, 0, 1)                      \
    X(N, OP, DIR, DT, LAYOUT, SUFFIX, l4_3x3_512_512, 512, 512, 7, 3, 1, 1)

/* RN50_ONLY_<r>(row...) keeps a row for r = 3 and drops it for the other filter sizes: a row
   macro that wraps itself in it selects the 3x3 layers. */
#define RN50_ONLY_1(...)
#define RN50_ONLY_3(...) __VA_ARGS__
#define RN50_ONLY_7(...)

#endif /* BENCH_RESNET50_SHAPES_H */
