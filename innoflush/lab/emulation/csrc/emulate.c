/*
 * libinnoflush_emulate: make this host's storage behave, for sync calls, like a device
 * from a profile. Preloaded into a database server (LD_PRELOAD), it wraps fsync(),
 * fdatasync() and writes to files opened O_DSYNC/O_SYNC: the real call runs first (so
 * durability is never weakened), then the thread sleeps until the call has taken as long
 * as a latency drawn from the profile's distribution. A device faster than the host
 * cannot be emulated; a slower one (consumer SSD, HDD) can.
 *
 * Configuration, read once from the environment:
 *   INNOFLUSH_EMULATE_FSYNC      knots "p:us,p:us,..." of the inverse CDF (p in [0,1])
 *   INNOFLUSH_EMULATE_FDATASYNC  same, for fdatasync (falls back to FSYNC)
 *   INNOFLUSH_EMULATE_DSYNC      same, for an O_DSYNC write (falls back to FDATASYNC)
 *   INNOFLUSH_EMULATE_SEED       seed of the per-thread generators (default 1)
 *   INNOFLUSH_EMULATE_LOG        a file to append one line of counters to at exit:
 *                                "pid=P fsync=N fdatasync=N dsync=N slept_us=N
 *                                overshoot_us=N host_slower=N channels=C" (delayed calls
 *                                per kind, time slept, time woken past the deadline,
 *                                calls whose real call alone outlasted the drawn
 *                                latency: the host was slower than the profile)
 *   INNOFLUSH_EMULATE_CHANNELS   1: one cache-flush channel, as the simulator's device
 *                                (a flush empties the whole cache, so concurrent syncs
 *                                queue behind each other: each holds the channel for
 *                                its real call and its delay); 0 or unset: syncs of
 *                                different threads are delayed independently
 * A variable that is unset or empty leaves that call alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_KNOTS 32

struct dist {
    int n;
    double p[MAX_KNOTS];
    double us[MAX_KNOTS];
};

static struct dist d_fsync, d_fdatasync, d_dsync;
static uint64_t seed_base = 1;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static __thread uint64_t rng_state;
static volatile uint64_t n_fsync, n_fdatasync, n_dsync; /* approximate: racy by design */
static volatile uint64_t slept_us, overshoot_us;         /* likewise */
static __thread int slack_set;
static volatile uint64_t n_host_slower; /* calls whose real call outlasted the draw */
static int one_channel;
static pthread_mutex_t channel = PTHREAD_MUTEX_INITIALIZER;

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);

static void parse(struct dist *d, const char *name) {
    const char *s = getenv(name);
    d->n = 0;
    if (!s || !*s) return;
    while (*s && d->n < MAX_KNOTS) {
        char *end;
        double p = strtod(s, &end);
        if (end == s || *end != ':') break;
        s = end + 1;
        double us = strtod(s, &end);
        if (end == s) break;
        d->p[d->n] = p;
        d->us[d->n] = us;
        d->n++;
        s = end;
        if (*s == ',') s++;
    }
    if (d->n < 2) d->n = 0; /* need at least two knots for a curve */
}

static void write_log(void) {
    const char *path = getenv("INNOFLUSH_EMULATE_LOG");
    if (!path || !*path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "pid=%d fsync=%llu fdatasync=%llu dsync=%llu slept_us=%llu overshoot_us=%llu "
            "host_slower=%llu channels=%d\n", (int)getpid(), (unsigned long long)n_fsync,
            (unsigned long long)n_fdatasync, (unsigned long long)n_dsync,
            (unsigned long long)slept_us, (unsigned long long)overshoot_us,
            (unsigned long long)n_host_slower, one_channel);
    fclose(f);
}

static void init(void) {
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    real_write = dlsym(RTLD_NEXT, "write");
    real_pwrite = dlsym(RTLD_NEXT, "pwrite");
    real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    real_pwritev = dlsym(RTLD_NEXT, "pwritev");
    parse(&d_fsync, "INNOFLUSH_EMULATE_FSYNC");
    parse(&d_fdatasync, "INNOFLUSH_EMULATE_FDATASYNC");
    if (d_fdatasync.n == 0) d_fdatasync = d_fsync;
    parse(&d_dsync, "INNOFLUSH_EMULATE_DSYNC");
    if (d_dsync.n == 0) d_dsync = d_fdatasync;
    const char *seed = getenv("INNOFLUSH_EMULATE_SEED");
    if (seed && *seed) seed_base = strtoull(seed, NULL, 10);
    const char *ch = getenv("INNOFLUSH_EMULATE_CHANNELS");
    one_channel = ch && atoi(ch) == 1;
    atexit(write_log);
}

static inline void ensure_init(void) { pthread_once(&once, init); }

static double uniform(void) {
    if (rng_state == 0) /* per thread: mix the seed with the thread's address */
        rng_state = (seed_base * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)(uintptr_t)&rng_state;
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static double draw_us(const struct dist *d) {
    double u = uniform();
    for (int i = 1; i < d->n; i++) {
        if (u <= d->p[i]) {
            double span = d->p[i] - d->p[i - 1];
            double t = span > 0 ? (u - d->p[i - 1]) / span : 1.0;
            return d->us[i - 1] + t * (d->us[i] - d->us[i - 1]);
        }
    }
    return d->us[d->n - 1];
}

static inline double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* sleep until the call started at `start` has lasted a latency drawn from d */
static void stretch(const struct dist *d, double start) {
    double target = draw_us(d);
    double left = target - (now_us() - start);
    if (left <= 0) { n_host_slower++; return; }
    if (!slack_set) {
        /* the default 50 us timer slack would lengthen every emulated sync by up to
           50 us, which is no part of the profile's device */
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
        slack_set = 1;
    }
    slept_us += (uint64_t)left;
    double deadline = start + target;
    struct timespec ts = {(time_t)(deadline / 1e6),
                          (long)((deadline - (double)(time_t)(deadline / 1e6) * 1e6) * 1e3)};
    if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
    double late = now_us() - deadline;
    if (late > 0) overshoot_us += (uint64_t)late;
}

static int is_dsync_fd(int fd) {
    int fl = fcntl(fd, F_GETFL);
    return fl != -1 && (fl & (O_DSYNC | O_SYNC));
}

static inline void channel_enter(int on) { if (on) pthread_mutex_lock(&channel); }
static inline void channel_leave(int on) { if (on) pthread_mutex_unlock(&channel); }

/* fsync and fdatasync: the real call first, then the rest of the drawn latency */
#define SYNC_WRAP(name, delays, count)                                 \
    int name(int fd) {                                                 \
        ensure_init();                                                 \
        int on = delays.n && one_channel;                              \
        channel_enter(on);                                             \
        double start = now_us();                                       \
        int saved, r = real_##name(fd);                                \
        saved = errno;                                                 \
        if (delays.n) { count++; stretch(&delays, start); }            \
        channel_leave(on);                                             \
        errno = saved;                                                 \
        return r;                                                      \
    }

SYNC_WRAP(fsync, d_fsync, n_fsync)
SYNC_WRAP(fdatasync, d_fdatasync, n_fdatasync)

#define DSYNC_WRAP(call)                                   \
    ensure_init();                                         \
    if (!d_dsync.n || !is_dsync_fd(fd)) return call;       \
    channel_enter(one_channel);                            \
    double start = now_us();                               \
    ssize_t r = call;                                      \
    int saved = errno;                                     \
    n_dsync++;                                             \
    stretch(&d_dsync, start);                              \
    channel_leave(one_channel);                            \
    errno = saved;                                         \
    return r;

ssize_t write(int fd, const void *buf, size_t n) { DSYNC_WRAP(real_write(fd, buf, n)) }
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    DSYNC_WRAP(real_pwrite(fd, buf, n, off))
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
    DSYNC_WRAP(real_pwrite64(fd, buf, n, off))
}
ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
    DSYNC_WRAP(real_pwritev(fd, iov, cnt, off))
}
