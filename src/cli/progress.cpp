// Folder-mode progress: a redrawn bar on terminals, periodic plain lines elsewhere.
#include "cli/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include <unistd.h>

namespace toroid::cli {
namespace {

std::string format_duration(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    auto t = static_cast<std::int64_t>(std::llround(s));
    if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t / 60 % 60);
    if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
    return fmt::format("{}s", t);
}

}  // namespace

Progress::Progress(std::FILE* out, std::int64_t total, double interval_s)
    : out_(out), tty_(::isatty(::fileno(out)) != 0), total_(total), interval_s_(interval_s),
      start_(std::chrono::steady_clock::now()) {}

double Progress::elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::status_line() const {
    const double t = elapsed();
    const double rate = t > 0 ? static_cast<double>(done_) / t : 0;
    const double left = rate > 0 ? static_cast<double>(total_ - done_) / rate : NAN;
    std::string failed = failed_ > 0 ? fmt::format(", {} failed", failed_) : "";
    if (done_ >= total_)
        return fmt::format("{}/{} images{}, {:.1f} images/s, done in {}", done_, total_, failed, rate,
                           format_duration(t));
    return fmt::format("{}/{} images{}, {:.1f} images/s, {} left", done_, total_, failed, rate,
                       format_duration(left));
}

void Progress::draw() {
    if (tty_) {
        constexpr int kWidth = 24;
        const int filled = total_ > 0 ? static_cast<int>(kWidth * done_ / total_) : kWidth;
        std::string bar(static_cast<std::size_t>(filled), '#');
        bar.resize(kWidth, '.');
        std::fprintf(out_, "\r\033[K[%s] %s", bar.c_str(), status_line().c_str());
        bar_shown_ = true;
    } else {
        std::fprintf(out_, "toroid: %s\n", status_line().c_str());
    }
    std::fflush(out_);
    last_draw_ = elapsed();
}

void Progress::update(std::int64_t done, std::int64_t failed) {
    done_ = done;
    failed_ = failed;
    if (elapsed() - last_draw_ >= (tty_ ? 0.1 : interval_s_)) draw();
}

void Progress::message(const std::string& line) {
    if (tty_ && bar_shown_) std::fprintf(out_, "\r\033[K");
    std::fprintf(out_, "%s\n", line.c_str());
    if (tty_ && bar_shown_) draw();
    std::fflush(out_);
}

void Progress::finish() {
    draw();
    if (tty_) std::fprintf(out_, "\n");
    std::fflush(out_);
}

}  // namespace toroid::cli
