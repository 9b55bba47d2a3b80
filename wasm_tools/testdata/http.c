/* TEST ONLY, never shipped: asks the host for an HTTP GET of the URL given as input (Extism's
 * http_request). This host gives no network: the call fails (network-egress-refused). */
#include "common.h"

PDK_EXPORT("get") i32 get(void) {
    static u8 req[1024];
    static const char head[] = "{\"url\":\"", tail[] = "\",\"method\":\"GET\",\"headers\":{}}";
    u32 k = 0;
    for (const char *p = head; *p; p++) req[k++] = (u8)*p;
    u64 n = pdk_input_length();
    if (n > 900) return pdk_fail(1, "url too long");
    for (u64 i = 0; i < n; i++) req[k++] = pdk_input_load_u8(i);
    for (const char *p = tail; *p; p++) req[k++] = (u8)*p;
    u64 response = pdk_http_request(pdk_store(req, k), 0);
    i32 status = pdk_http_status_code();
    return output_decimal((u64)status * 10 + (response != 0));
}
