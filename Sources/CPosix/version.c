#include "cposix.h"

// debian/changelog's first bytes, embedded at compile time: the version has one place, and
// an edit of the changelog rebuilds this file (clang lists embedded files as dependencies).
#pragma clang diagnostic ignored "-Wc23-extensions"
static const char changelog_head[] = {
#embed "../../debian/changelog" limit(120)
    , 0
};

const char *announce_changelog_head(void) {
    return changelog_head;
}
