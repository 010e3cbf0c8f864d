// The CLI's progress helper (tools/savedmodel_cli/progress.h): its line, a terminal's redraw
// and clearing, and silence off a terminal for short work (what keeps tests' streams clean).
#include "savedmodel_cli/progress.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

namespace kiln::cli {
namespace {

TEST_CASE("Progress lines: count, bar, seconds and the current item") {
  CHECK(Progress::Line("bench: timed runs", 5, 20, 3.7, "") ==
        "bench: timed runs 5/20 [=====>..............] 3s");
  CHECK(Progress::Line("compile: planned", 2, 2, 0, "serving_default") ==
        "compile: planned 2/2 [====================] 0s serving_default");
  CHECK(Progress::Line("compile: planned", 0, 0, 12, "(loading)") ==
        "compile: planned 0 12s (loading)");
}

TEST_CASE("Progress on a terminal redraws one line and clears it when done") {
  std::ostringstream err;
  {
    Progress p(err, "bench: warmup", 2, /*terminal=*/true);
    p.Update(1);
    p.Update(2);  // the last step draws even within the redraw interval
  }
  const std::string first = "bench: warmup 1/2 [==========>.........] 0s";
  const std::string last = "bench: warmup 2/2 [====================] 0s";
  CHECK(err.str() == "\r" + first + "\r" + last + "\r" + std::string(last.size(), ' ') + "\r");
}

TEST_CASE("Progress off a terminal says nothing about short work") {
  std::ostringstream err;
  Progress p(err, "bench: timed runs", 100);  // not std::cerr: never a terminal
  for (int i = 1; i <= 100; ++i) p.Update(i);
  p.Done();
  CHECK(err.str().empty());
}

}  // namespace
}  // namespace kiln::cli
