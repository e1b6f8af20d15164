/* tensor.h: tensor and filter descriptors, and the tensor view every kernel takes.

   A descriptor keeps what the API was told (dims and strides as ints, strides counted in
   elements, where an element of a vector type INT8x4/UINT8x4/INT8x32 is a whole vector along C).
   A view is the normalized form kernels use: 64-bit dims and strides counted in scalars, with the
   channel dimension split as (c / vect) * strides[1] + c % vect when the type is a vector type.
   Any legal descriptor has a view, so a kernel with a generic strided path handles every layout.
   A stride may be negative (a reversed dim): the data pointer then addresses element (0,...,0)
   and the view reaches below it (ocd_view_bounds); only the calls whose engines walk signed
   strides take such views (ocd_tensor_get_taking). */
#ifndef OCD_CORE_TENSOR_H
#define OCD_CORE_TENSOR_H

#include "core/object.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_MAX_DIMS CUDNN_DIM_MAX

struct cudnnTensorStruct {
    struct ocd_object obj;
    bool set; /* false until a Set call succeeded */
    cudnnDataType_t dtype;
    cudnnTensorFormat_t format; /* the layout it was set with; NCHW for explicit strides */
    int nb_dims;
    int dims[OCD_MAX_DIMS];    /* in scalars */
    int strides[OCD_MAX_DIMS]; /* in elements (vectors for the vector types) */
};

struct cudnnFilterStruct {
    struct ocd_object obj;
    bool set;
    cudnnDataType_t dtype;
    cudnnTensorFormat_t format; /* NCHW: K C spatial...; NHWC: K spatial... C; VECT_C: as NCHW */
    int nb_dims;
    int dims[OCD_MAX_DIMS]; /* K, C, spatial dims, in scalars, whatever the format */
};

struct ocd_tensor_view {
    cudnnDataType_t dtype; /* the descriptor's type (a vector type stays a vector type) */
    int rank;
    int vect;                      /* scalars per vector along dims[1]; 1 for scalar types */
    int64_t dims[OCD_MAX_DIMS];    /* in scalars */
    int64_t strides[OCD_MAX_DIMS]; /* in scalars; for dim 1 of a vector type, per whole vector */
};

/* Fills the strides of a packed layout: NCHW (row-major), NHWC (channels last) or NCHW_VECT_C
   (row-major over C/vect with the vector innermost, in vector units). dims[1] is C. */
void ocd_packed_strides(cudnnTensorFormat_t format, int nb_dims, const int dims[], int vect,
                        int strides[]);

/* Checks a tensor layout's numbers at Set time: dims >= 1, strides nonzero (negative: a reversed
   dim; 0 allowed on a dim of extent 1). Returns BAD_PARAM with a logged reason. Elements may
   share memory: the calls that cannot take that refuse it (ocd_view_check_disjoint). */
cudnnStatus_t ocd_check_layout(int nb_dims, const int dims[], const int strides[], int vect);

/* BAD_PARAM, logged with the descriptor's name, when two elements of the view share memory. */
cudnnStatus_t ocd_view_check_disjoint(const struct ocd_tensor_view *v, const char *name);

/* Sets t to a packed layout of the format (what cudnnSetTensorNdDescriptorEx does, for callers
   inside the library): BAD_PARAM or NOT_SUPPORTED, logged, with t unchanged, when the dims,
   type or format are not a legal tensor. */
cudnnStatus_t ocd_tensor_set_packed(cudnnTensorDescriptor_t t, cudnnTensorFormat_t format,
                                    cudnnDataType_t dtype, int nb_dims, const int dims[]);

/* Sets a filter descriptor (what cudnnSetFilterNdDescriptor does, for callers inside the
   library): BAD_PARAM or NOT_SUPPORTED, logged, with f unchanged, when the filter is not legal. */
cudnnStatus_t ocd_filter_set(cudnnFilterDescriptor_t f, cudnnDataType_t dtype, cudnnTensorFormat_t format,
                             int nb_dims, const int dims[]);

/* The view of a set tensor descriptor (the API has checked it is live and set). */
void ocd_tensor_view_of(const struct cudnnTensorStruct *t, struct ocd_tensor_view *v);
/* The view of a filter in its format, packed. */
void ocd_filter_view_of(const struct cudnnFilterStruct *f, struct ocd_tensor_view *v);

/* Number of scalars the view addresses (product of dims). */
int64_t ocd_view_count(const struct ocd_tensor_view *v);
/* The lowest and the highest scalar offsets, from element (0,...,0), at which an element of
   the view starts: lo <= 0 <= hi, lo < 0 only where a stride is negative. */
void ocd_view_bounds(const struct ocd_tensor_view *v, int64_t *lo, int64_t *hi);
/* Bytes from the lowest to one past the highest byte the view can touch. */
int64_t ocd_view_span_bytes(const struct ocd_tensor_view *v);
/* Bytes of that span below the pointer to element (0,...,0): 0 unless a stride is negative. */
int64_t ocd_view_below_bytes(const struct ocd_tensor_view *v);
/* The first dim the view walks backwards (a negative stride), or -1. */
int ocd_view_reversed_dim(const struct ocd_tensor_view *v);
/* True when the views have the same dims. */
bool ocd_view_same_dims(const struct ocd_tensor_view *a, const struct ocd_tensor_view *b);
/* True when the views place every element of their (equal) dims at the same offset. */
bool ocd_view_same_strides(const struct ocd_tensor_view *a, const struct ocd_tensor_view *b);
/* True when the view's elements are dense in row-major order (dims[rank-1] fastest). */
bool ocd_view_is_packed_rowmajor(const struct ocd_tensor_view *v);
/* True when the view's elements are dense channels-last (NHWC: C fastest, then the spatial dims
   right to left, N outermost). Extent-1 dims may have any stride. */
bool ocd_view_is_packed_nhwc(const struct ocd_tensor_view *v);

/* "float[2,3,4,5]/[60,20,5,1]": the canonical short form used in logs and test names. */
void ocd_view_format(const struct ocd_tensor_view *v, char *buf, size_t size);

/* API checks shared by every op: the descriptor is live and set, and unless `takes` says the
   call takes more, no two of its elements share memory (BAD_PARAM) and no stride is negative
   (NOT_SUPPORTED: the one place that declines reversed views, logged with the descriptor's
   name). OCD_TAKES_SHARED: for a tensor the call only reads through a path that takes any
   strides (NVIDIA's library takes such layouts: cudarc's pooling test and grain's transform
   test read through them) and for queries of the descriptor itself. OCD_TAKES_REVERSED: for
   the calls whose engines on every backend walk signed strides (the elementwise engines of
   problem/ewise.h, the reduction of problem/reduce.h) and for queries. ocd_tensor_get takes neither, ocd_tensor_get_input shared
   elements. */
enum { OCD_TAKES_SHARED = 1u, OCD_TAKES_REVERSED = 2u };
cudnnStatus_t ocd_tensor_get_taking(cudnnTensorDescriptor_t desc, const char *name, unsigned takes,
                                    struct ocd_tensor_view *view);
cudnnStatus_t ocd_tensor_get(cudnnTensorDescriptor_t desc, const char *name,
                             struct ocd_tensor_view *view);
cudnnStatus_t ocd_tensor_get_input(cudnnTensorDescriptor_t desc, const char *name,
                                   struct ocd_tensor_view *view);
cudnnStatus_t ocd_filter_get(cudnnFilterDescriptor_t desc, const char *name,
                             struct ocd_tensor_view *view);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_TENSOR_H */
