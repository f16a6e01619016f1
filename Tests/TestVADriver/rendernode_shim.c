/*
 * rendernode_shim.so: makes libva accept the test driver's fake device.
 *
 * libva's vaGetDisplayDRM() only accepts DRM nodes: it asks libdrm's
 * drmGetNodeTypeFromFd(), which fails for anything that is not a DRM
 * character device. Preloaded (LD_PRELOAD), this shim answers DRM_NODE_RENDER
 * (2) for a fake device file and passes every other descriptor to libdrm.
 *
 * A fake device is a regular file whose first line is
 *     codecs-test-vaapi-device
 * optionally followed by a line "fail=STAGE[,STAGE...]" that the test driver
 * (codecs_test_drv_video.c) reads to fail on demand. Real render nodes are
 * character devices and never match.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEVICE_MAGIC "codecs-test-vaapi-device"
#define DRM_NODE_RENDER 2

int drmGetNodeTypeFromFd(int fd);

static int is_fake_device(int fd)
{
    struct stat st;
    char head[sizeof DEVICE_MAGIC - 1];
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    return pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head && memcmp(head, DEVICE_MAGIC, sizeof head) == 0;
}

__attribute__((visibility("default"))) int drmGetNodeTypeFromFd(int fd)
{
    if (is_fake_device(fd))
        return DRM_NODE_RENDER;
    int (*next)(int) = (int (*)(int))dlsym(RTLD_NEXT, "drmGetNodeTypeFromFd");
    return next ? next(fd) : -1;
}
