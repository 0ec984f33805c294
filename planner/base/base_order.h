/* planner/base/base_order.h — the base room's order of numbers: the one three-way comparison that
 * qsort's comparators are made of, and the one binary search over a sorted range, for the
 * planner, the shim and the tools.
 *
 * Who may include it: every folder of the project, as base_array.h. It includes nothing of the
 * project's and only libc; it is macros only, so that no binary links anything more for it and
 * every type of number is served by the same text. It holds no state. */
#ifndef BASE_ORDER_H
#define BASE_ORDER_H

#include <stddef.h>

/* -1, 0 or 1 as a is below, equal to or above b: numbers of one type, each evaluated twice (pass
   no expression with a side effect). A NaN compares equal to everything, so comparators that may
   see one keep their own rule. */
#define BASE_CMP(a, b) (((a) > (b)) - ((a) < (b)))

/* A comparator's step: when a and b differ, -1 if a is below b and 1 otherwise (so a NaN sorts
   as above); when they are equal, then. Chained, it orders by several keys, the first first;
   swapping a and b makes a key descending. a and b are evaluated up to three times. */
#define BASE_CMP_THEN(a, b, then) ((a) != (b) ? ((a) < (b) ? -1 : 1) : (then))

/* The binary search: lo (a size_t lvalue) is the start of a range [lo, hi) that is sorted so that
   the elements for which below holds come first; below is an expression of the size_t index named
   i. Sets lo to the first index of the range for which below does not hold (hi when it holds for
   all) in O(log(hi - lo)) evaluations of below; hi is read once. */
#define BASE_BSEARCH(lo, hi, i, below)                                                             \
    do {                                                                                           \
        size_t base_bsearch_hi_ = (hi);                                                            \
        while ((lo) < base_bsearch_hi_) {                                                          \
            size_t i = (lo) + (base_bsearch_hi_ - (lo)) / 2;                                       \
            if (below)                                                                             \
                (lo) = i + 1;                                                                      \
            else                                                                                   \
                base_bsearch_hi_ = i;                                                              \
        }                                                                                          \
    } while (0)

#endif
