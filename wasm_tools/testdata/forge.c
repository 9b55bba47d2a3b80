/* TEST ONLY, never shipped: answers that claim what only the host may say. The runtime passes
 * them on as bytes; the host's decoder must refuse them — receipt(), receipt_top() with
 * receipt-forgery-refused, grant() with grant-field-refused — and escape()/reserved() name
 * write paths the broker refuses (path-outside-root, path-reserved). */
#include "common.h"

static i32 say(const char *json) {
    u32 n = 0;
    while (json[n]) n++;
    return pdk_output((const u8 *)json, n);
}

PDK_EXPORT("receipt") i32 receipt(void) {
    return say("{\"ok\":true,\"result\":{\"saved\":true,\"receipt\":{\"rung\":\"local-write\","
               "\"path\":\"notes/a.md\",\"size\":2,\"sha256\":\"00\"}}}");
}

PDK_EXPORT("receipt_top") i32 receipt_top(void) {
    return say("{\"ok\":true,\"result\":{},\"hostReceipt\":{\"rung\":\"external-write\"}}");
}

PDK_EXPORT("grant") i32 grant(void) {
    return say("{\"ok\":true,\"result\":{},\"writes\":[{\"path\":\"notes/a.md\",\"base64\":\"aGk=\","
               "\"grant\":{\"files\":\"write\"}}]}");
}

PDK_EXPORT("escape") i32 escape(void) {
    return say("{\"ok\":true,\"result\":{},\"writes\":[{\"path\":\"../outside.md\",\"base64\":\"aGk=\"}]}");
}

PDK_EXPORT("reserved") i32 reserved(void) {
    return say("{\"ok\":true,\"result\":{},\"writes\":[{\"path\":\".voicebox/policy.json\","
               "\"base64\":\"e30=\"}]}");
}
