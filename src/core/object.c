/* object.c: the registry of live handles and descriptors (see object.h).

   An open-addressing hash set of pointers, guarded by one mutex. Lookups are a few tens of
   nanoseconds uncontended, well inside the per-call budget; the set grows by doubling and keeps
   deleted slots as tombstones until the next growth. */
#include "core/object.h"

#include "core/platform.h"

#include <stdlib.h>

#define TOMBSTONE ((const void *)1)

static ocd_mutex_t lock = OCD_MUTEX_INIT;
static const void **slots;
static size_t capacity; /* a power of two, or 0 before the first object */
static size_t used;     /* live entries plus tombstones */

static size_t slot_of(const void *p, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & (cap - 1);
}

/* Index of p's slot, or of the first free one where it would go; caller holds the lock. */
static size_t find(const void *p)
{
    size_t i = slot_of(p, capacity), tomb = (size_t)-1;
    while (slots[i] != NULL) {
        if (slots[i] == p) return i;
        if (slots[i] == TOMBSTONE && tomb == (size_t)-1) tomb = i;
        i = (i + 1) & (capacity - 1);
    }
    return tomb != (size_t)-1 ? tomb : i;
}

static bool grow(void)
{
    size_t old_cap = capacity, new_cap = capacity ? capacity * 2 : 256;
    const void **old = slots, **fresh = ocd_calloc(new_cap, sizeof *fresh);
    if (fresh == NULL) return false;
    slots = fresh;
    capacity = new_cap;
    used = 0;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i] != NULL && old[i] != TOMBSTONE) {
            slots[find(old[i])] = old[i];
            used++;
        }
    }
    free(old);
    return true;
}

cudnnStatus_t ocd_object_create(enum ocd_object_kind kind, size_t size, void **out)
{
    if (out == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the output pointer is NULL");
    struct ocd_object *obj = ocd_calloc(1, size);
    if (obj == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %zu bytes", size);
    obj->kind = kind;
    ocd_mutex_lock(&lock);
    bool ok = (used + 1) * 2 <= capacity || grow();
    if (ok) {
        size_t i = find(obj);
        if (slots[i] == NULL) used++;
        slots[i] = obj;
    }
    ocd_mutex_unlock(&lock);
    if (!ok) {
        free(obj);
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot grow the object registry");
    }
    *out = obj;
    return CUDNN_STATUS_SUCCESS;
}

bool ocd_object_alive(enum ocd_object_kind kind, const void *obj)
{
    if (obj == NULL) return false;
    ocd_mutex_lock(&lock);
    bool alive = capacity != 0 && slots[find(obj)] == obj &&
                 ((const struct ocd_object *)obj)->kind == kind;
    ocd_mutex_unlock(&lock);
    return alive;
}

cudnnStatus_t ocd_object_destroy(enum ocd_object_kind kind, void *obj)
{
    if (obj == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the descriptor is NULL");
    ocd_mutex_lock(&lock);
    bool alive = capacity != 0 && slots[find(obj)] == obj &&
                 ((const struct ocd_object *)obj)->kind == kind;
    if (alive) slots[find(obj)] = TOMBSTONE;
    ocd_mutex_unlock(&lock);
    if (!alive) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "not a live descriptor of its type");
    free(obj);
    return CUDNN_STATUS_SUCCESS;
}
