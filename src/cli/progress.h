// Progress of folder mode on stderr: on a terminal, one line redrawn in place (done/total,
// images/s, time left); otherwise a plain line every few seconds and one at the end, so
// logs stay readable. Messages printed through it do not garble the bar.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace toroid::cli {

class Progress {
public:
    // `interval_s`: seconds between plain lines when `out` is not a terminal.
    Progress(std::FILE* out, std::int64_t total, double interval_s = 2.0);
    // Records the counts; redraws (terminal: at most ~10 times a second) or prints a line
    // when the interval has passed.
    void update(std::int64_t done, std::int64_t failed);
    // Prints a message on its own line (clearing the bar first on a terminal).
    void message(const std::string& line);
    // Final state: the bar's last drawing is kept (terminal) or a last line is printed.
    void finish();

private:
    std::string status_line() const;
    void draw();
    double elapsed() const;

    std::FILE* out_;
    bool tty_;
    std::int64_t total_, done_ = 0, failed_ = 0;
    double interval_s_;
    double last_draw_ = -1e9;
    bool bar_shown_ = false;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace toroid::cli
