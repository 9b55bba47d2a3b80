/* TEST ONLY, never shipped: create() never returns. The sandbox must answer tool-timeout. */
#include "common.h"

EXPORT("create") int create(u32 len) {
    volatile u32 spin = 0;
    for (;;) spin++;
    return 0;
}
