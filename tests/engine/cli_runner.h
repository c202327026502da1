// Runs the built `tally` CLI as a child process with an exact argv (no shell, so any bytes pass
// through unquoted) and captures its exit status, stdout and stderr. A child that outlives the
// timeout is killed and reported, so a CLI that blocks (e.g. on a FIFO) fails the test instead of
// hanging it.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_paths.h"

namespace tally::test {

struct CliRun {
    int exit_code = -1;   // valid when !signaled
    bool signaled = false;
    int signal = 0;
    bool timed_out = false;
    std::string out, err;
};

inline CliRun run_cli_argv(const std::vector<std::string>& arguments, double timeout_s = 30) {
    // TALLY_CLI overrides the binary, e.g. to run the table against an older build.
    const char* override_path = std::getenv("TALLY_CLI");
    std::vector<std::string> argv_strings = {override_path != nullptr ? override_path : ::tally_test::cli_path()};
    argv_strings.insert(argv_strings.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out_pipe[2], err_pipe[2];
    CliRun run;
    if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return run;
    const pid_t child = fork();
    if (child == 0) {
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
        close(out_pipe[0]);
        close(err_pipe[0]);
        close(out_pipe[1]);
        close(err_pipe[1]);
        execv(argv[0], argv.data());
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            kill(child, SIGKILL);
            run.timed_out = true;
            break;
        }
        if (poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buffer[4096];
            const ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
            if (got > 0) {
                (i == 0 ? run.out : run.err).append(buffer, static_cast<std::size_t>(got));
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    for (auto& fd : fds)
        if (fd.fd >= 0) close(fd.fd);
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status)) {
        run.signaled = true;
        run.signal = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
        run.exit_code = WEXITSTATUS(status);
    }
    return run;
}

}  // namespace tally::test
