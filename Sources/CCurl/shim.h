#ifndef ANNOUNCE_CCURL_SHIM_H
#define ANNOUNCE_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument type. Each returns libcurl's CURLcode.

static inline CURLcode announce_curl_set_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode announce_curl_set_offset(CURL *curl, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode announce_curl_set_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode announce_curl_set_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
/// The body's bytes, and the headers' lines (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
typedef size_t (*announce_curl_data_callback)(char *bytes, size_t size, size_t count, void *context);
static inline CURLcode announce_curl_set_callback(CURL *curl, CURLoption option, announce_curl_data_callback callback) {
    return curl_easy_setopt(curl, option, callback);
}
static inline CURLcode announce_curl_info_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}
static inline CURLcode announce_curl_info_string(CURL *curl, CURLINFO info, char **value) {
    return curl_easy_getinfo(curl, info, value);
}
static inline CURLcode announce_curl_info_double(CURL *curl, CURLINFO info, double *value) {
    return curl_easy_getinfo(curl, info, value);
}
#endif
