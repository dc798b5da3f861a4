/*
 * redis_server.h - a private redis-server for a test or a benchmark.
 *
 * bc_redis_server_start() runs redis-server (found on the PATH) in a new
 * temporary directory, listening on the unix socket DIR/redis.sock and,
 * when tcp_port is non-zero, on 127.0.0.1:tcp_port (never another
 * address); with tcp_port 0 it gets --port 0 (no TCP at all). No
 * persistence, unless started by bc_redis_server_start_persistent():
 * then --appendonly yes --appendfsync always, so that _kill() (SIGTERM:
 * a clean shutdown) and _restart() on the same socket and directory keep
 * the data. It returns when the socket answers PING. _stop() kills it
 * (SIGTERM, then waits) and removes the directory.
 */
#ifndef BC_TESTS_REDIS_SERVER_H
#define BC_TESTS_REDIS_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct bc_redis_server {
    pid_t pid;
    char dir[64];
    char sock[96];   /* DIR/redis.sock */
    char where[112]; /* "unix:DIR/redis.sock" */
    int tcp_port;
    bool appendonly;
};

/* True when redis-server is on the PATH. */
static inline bool bc_redis_server_available(void)
{
    return system("command -v redis-server >/dev/null 2>&1") == 0;
}

static inline bool bc_redis_sock_answers(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    bool ok = false;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        write(fd, "PING\r\n", 6) == 6) {
        char buf[16];
        ok = read(fd, buf, sizeof buf) > 0 && buf[0] == '+';
    }
    close(fd);
    return ok;
}

/* Run redis-server in s->dir; false (with a message on stderr) when it
 * did not answer within 20 s. */
static inline bool bc_redis_server_launch(struct bc_redis_server *s)
{
    char port[16];
    snprintf(port, sizeof port, "%d", s->tcp_port);
    s->pid = fork();
    if (s->pid < 0)
        return false;
    if (s->pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        const char *aof = s->appendonly ? "yes" : "no";
        execlp("redis-server", "redis-server", "--port", port, "--bind",
               "127.0.0.1", "--unixsocket", s->sock, "--unixsocketperm", "700",
               "--dir", s->dir, "--save", "", "--appendonly", aof,
               "--appendfsync", "always", "--daemonize", "no", "--logfile", "",
               (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 2000; i++) {
        if (bc_redis_sock_answers(s->sock))
            return true;
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            fprintf(stderr, "redis-server exited (status %d)\n", status);
            s->pid = 0;
            return false;
        }
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
    }
    fprintf(stderr, "redis-server did not answer on %s\n", s->sock);
    return false;
}

static inline bool bc_redis_server_begin(struct bc_redis_server *s,
                                         int tcp_port, bool appendonly)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/bc_redis.XXXXXX");
    if (!mkdtemp(s->dir))
        return false;
    snprintf(s->sock, sizeof s->sock, "%s/redis.sock", s->dir);
    snprintf(s->where, sizeof s->where, "unix:%s", s->sock);
    s->tcp_port = tcp_port;
    s->appendonly = appendonly;
    return bc_redis_server_launch(s);
}

/* Start the server (no persistence). */
static inline bool bc_redis_server_start(struct bc_redis_server *s,
                                         int tcp_port)
{
    return bc_redis_server_begin(s, tcp_port, false);
}

/* Start the server with an append-only file (no TCP). */
static inline bool bc_redis_server_start_persistent(struct bc_redis_server *s)
{
    return bc_redis_server_begin(s, 0, true);
}

/* Start it again after bc_redis_server_kill(), on the same socket and
 * directory (with its data when persistent). */
static inline bool bc_redis_server_restart(struct bc_redis_server *s)
{
    return bc_redis_server_launch(s);
}

/* Kill the server with sig and reap it (the directory stays). */
static inline void bc_redis_server_kill(struct bc_redis_server *s, int sig)
{
    if (s->pid > 0) {
        kill(s->pid, sig);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
}

static inline void bc_redis_server_stop(struct bc_redis_server *s)
{
    bc_redis_server_kill(s, SIGTERM);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    if (s->dir[0] && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", s->dir);
    s->dir[0] = '\0';
}

#endif /* BC_TESTS_REDIS_SERVER_H */
