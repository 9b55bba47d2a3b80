/* TEST ONLY, never shipped: create() never returns. The sandbox must stop it (tool-timeout). */
#include "common.h"

PDK_EXPORT("create") i32 create(void) {
    volatile u32 spin = 0;
    for (;;) spin++;
    return 0;
}
