#include "ccurl.h"

#include "cloader.h"

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned, int, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;

#define SYMBOL(field, name) {name, (void **)&curl.field}
static const announce_symbol symbols[] = {
    SYMBOL(global_init, "curl_global_init"), SYMBOL(easy_init, "curl_easy_init"), SYMBOL(easy_cleanup, "curl_easy_cleanup"),
    SYMBOL(easy_perform, "curl_easy_perform"), SYMBOL(easy_strerror, "curl_easy_strerror"),
    SYMBOL(easy_setopt, "curl_easy_setopt"), SYMBOL(easy_getinfo, "curl_easy_getinfo"), SYMBOL(multi_init, "curl_multi_init"),
    SYMBOL(multi_cleanup, "curl_multi_cleanup"), SYMBOL(multi_add_handle, "curl_multi_add_handle"),
    SYMBOL(multi_remove_handle, "curl_multi_remove_handle"), SYMBOL(multi_perform, "curl_multi_perform"),
    SYMBOL(multi_poll, "curl_multi_poll"),  // libcurl 7.66 and later
    SYMBOL(multi_info_read, "curl_multi_info_read"), SYMBOL(slist_append, "curl_slist_append"),
    SYMBOL(slist_free_all, "curl_slist_free_all"),
};

static const char *start(void) {
    return curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ? "libcurl cannot start (curl_global_init failed)" : NULL;
}

// The soname of libcurl 7.16 and later (Debian's libcurl4, whichever TLS flavour).
static announce_library library = ANNOUNCE_LIBRARY("libcurl.so.4", "libcurl4", symbols, start);

const char *announce_curl_load(void) { return announce_library_load(&library); }

CURL *announce_curl_easy_init(void) { return curl.easy_init(); }
void announce_curl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
CURLcode announce_curl_easy_perform(CURL *handle) { return curl.easy_perform(handle); }
const char *announce_curl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }

CURLcode announce_curl_set_long(CURL *handle, CURLoption option, long value) { return curl.easy_setopt(handle, option, value); }
CURLcode announce_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) { return curl.easy_setopt(handle, option, value); }
CURLcode announce_curl_set_pointer(CURL *handle, CURLoption option, void *value) { return curl.easy_setopt(handle, option, value); }
CURLcode announce_curl_set_string(CURL *handle, CURLoption option, const char *value) { return curl.easy_setopt(handle, option, value); }
CURLcode announce_curl_set_callback(CURL *handle, CURLoption option, announce_curl_data_callback callback) {
    return curl.easy_setopt(handle, option, callback);
}
CURLcode announce_curl_set_progress(CURL *handle, announce_curl_progress_callback callback) {
    CURLcode code = curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
    return code == CURLE_OK ? curl.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L) : code;
}
struct curl_slist *announce_curl_slist_append(struct curl_slist *list, const char *line) { return curl.slist_append(list, line); }
void announce_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }
CURLcode announce_curl_info_long(CURL *handle, CURLINFO info, long *value) { return curl.easy_getinfo(handle, info, value); }
CURLcode announce_curl_info_string(CURL *handle, CURLINFO info, char **value) { return curl.easy_getinfo(handle, info, value); }
CURLcode announce_curl_info_double(CURL *handle, CURLINFO info, double *value) { return curl.easy_getinfo(handle, info, value); }

CURLM *announce_curl_multi_init(void) { return curl.multi_init(); }
void announce_curl_multi_cleanup(CURLM *multi) { curl.multi_cleanup(multi); }
CURLMcode announce_curl_multi_add_handle(CURLM *multi, CURL *handle) { return curl.multi_add_handle(multi, handle); }
CURLMcode announce_curl_multi_remove_handle(CURLM *multi, CURL *handle) { return curl.multi_remove_handle(multi, handle); }
CURLMcode announce_curl_multi_perform(CURLM *multi, int *running) { return curl.multi_perform(multi, running); }
CURLMcode announce_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned count, int timeout_ms) {
    return curl.multi_poll(multi, extra, count, timeout_ms, NULL);
}
int announce_curl_multi_done(CURLM *multi, CURLcode *result) {
    int left;
    CURLMsg *message;
    while ((message = curl.multi_info_read(multi, &left))) {
        if (message->msg == CURLMSG_DONE) {
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}
