/*
 * fixture_server.h - the test HTTP server for the cmocka tests that fetch.
 *
 * tests/http_fixture_server.py listens on a free port of 127.0.0.1 and
 * prints the port on its first line; fixture_server_start() runs it with
 * BC_PYTHON3 (from tests/CMakeLists.txt), reads the port into server_port
 * and returns 0, or -1 when it did not start. fixture_server_stop() ends
 * it. url_of() writes the server's URL of a path. Include it in one file
 * of a test executable.
 */
#ifndef BC_TESTS_FIXTURE_SERVER_H
#define BC_TESTS_FIXTURE_SERVER_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define SERVER_SCRIPT BC_SOURCE_DIR "/tests/http_fixture_server.py"

static pid_t server_pid = -1;
static int server_port;

static int fixture_server_start(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    server_pid = fork();
    if (server_pid < 0)
        return -1;
    if (server_pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl(BC_PYTHON3, BC_PYTHON3, SERVER_SCRIPT, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char line[32] = {0};
    size_t n = 0;
    while (n < sizeof(line) - 1) {
        ssize_t r = read(fds[0], line + n, 1);
        if (r <= 0 || line[n] == '\n')
            break;
        n++;
    }
    close(fds[0]);
    server_port = atoi(line);
    if (server_port <= 0 || server_port > 65535) {
        fprintf(stderr, "fixture server did not start\n");
        kill(server_pid, SIGKILL);
        waitpid(server_pid, NULL, 0);
        server_pid = -1;
        return -1;
    }
    return 0;
}

static void fixture_server_stop(void)
{
    if (server_pid > 0) {
        kill(server_pid, SIGTERM);
        waitpid(server_pid, NULL, 0);
        server_pid = -1;
    }
}

static void url_of(char *buf, size_t cap, const char *path)
{
    snprintf(buf, cap, "http://127.0.0.1:%d%s", server_port, path);
}

#endif /* BC_TESTS_FIXTURE_SERVER_H */
