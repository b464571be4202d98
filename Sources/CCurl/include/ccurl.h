#ifndef ANNOUNCE_CCURL_H
#define ANNOUNCE_CCURL_H
#include <curl/curl.h>

// libcurl, loaded on first use (dlopen) rather than linked: linked, it and the libraries it
// needs (TLS, HTTP/2, LDAP, SSH, ...) cost every `announce` start ~7 ms of dynamic linking,
// twice what the rest of a client's start costs. Only `play URL` pays it now.
//
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument type. Each returns libcurl's CURLcode.

/// Loads libcurl and runs curl_global_init once; NULL when that worked, else why not.
const char *announce_curl_load(void);

CURL *announce_curl_easy_init(void);
void announce_curl_easy_cleanup(CURL *curl);
CURLcode announce_curl_easy_perform(CURL *curl);
const char *announce_curl_easy_strerror(CURLcode code);

CURLcode announce_curl_set_long(CURL *curl, CURLoption option, long value);
CURLcode announce_curl_set_offset(CURL *curl, CURLoption option, curl_off_t value);
CURLcode announce_curl_set_pointer(CURL *curl, CURLoption option, void *value);
CURLcode announce_curl_set_string(CURL *curl, CURLoption option, const char *value);
/// The body's bytes, and the headers' lines (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
typedef size_t (*announce_curl_data_callback)(char *bytes, size_t size, size_t count, void *context);
CURLcode announce_curl_set_callback(CURL *curl, CURLoption option, announce_curl_data_callback callback);
/// Called about once a second and as data moves (CURLOPT_XFERINFOFUNCTION); non-zero aborts.
typedef int (*announce_curl_progress_callback)(void *context, curl_off_t download_total, curl_off_t downloaded,
                                               curl_off_t upload_total, curl_off_t uploaded);
CURLcode announce_curl_set_progress(CURL *curl, announce_curl_progress_callback callback);
/// Request headers (CURLOPT_HTTPHEADER): a list that must outlive the transfer.
struct curl_slist *announce_curl_slist_append(struct curl_slist *list, const char *line);
void announce_curl_slist_free_all(struct curl_slist *list);
CURLcode announce_curl_info_long(CURL *curl, CURLINFO info, long *value);
CURLcode announce_curl_info_string(CURL *curl, CURLINFO info, char **value);
CURLcode announce_curl_info_double(CURL *curl, CURLINFO info, double *value);

// Live streams: one transfer at a time in a multi handle, so that the wait for data can also
// wait for a stop (an eventfd among curl_multi_poll's extra descriptors).
CURLM *announce_curl_multi_init(void);
void announce_curl_multi_cleanup(CURLM *multi);
CURLMcode announce_curl_multi_add_handle(CURLM *multi, CURL *curl);
CURLMcode announce_curl_multi_remove_handle(CURLM *multi, CURL *curl);
CURLMcode announce_curl_multi_perform(CURLM *multi, int *running);
CURLMcode announce_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned count, int timeout_ms);
/// 1 when the multi handle's transfer is done, with its result in `result`; else 0.
int announce_curl_multi_done(CURLM *multi, CURLcode *result);
#endif
