// Progbar: the exact text Keras's Progbar arithmetic gives for a fake clock, redrawn in place
// for a terminal and as bounded whole lines otherwise.
#include "kiln/modules/progress.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln::modules {
namespace {

// Captures what a Progbar writes (open_memstream updates the buffer on every fflush).
class Capture {
 public:
  Capture() : stream_(open_memstream(&buf_, &size_)) {}
  ~Capture() {
    std::fclose(stream_);
    std::free(buf_);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  FILE* stream() const { return stream_; }
  std::string text() {
    std::fflush(stream_);
    return std::string(buf_, size_);
  }

 private:
  char* buf_ = nullptr;
  size_t size_ = 0;
  FILE* stream_;
};

ProgbarOptions Fake(FILE* stream, ProgbarOptions::Display display, const double* now) {
  ProgbarOptions o;
  o.stream = stream;
  o.display = display;
  o.clock = [now] { return *now; };
  return o;
}

TEST_CASE("Progbar on a terminal redraws one line with averages, the rate and the ETA") {
  Capture out;
  double now = 0;
  ProgbarOptions options = Fake(out.stream(), ProgbarOptions::Display::kTerminal, &now);
  options.stateful_metrics = {"lr"};
  Progbar bar(100, options);
  CHECK(bar.terminal());

  now = 0.4;
  bar.Update(1, {{"loss", 2.0}, {"lr", 1e-4}});
  const std::string line1 =
      "  1/100 [..............................] - 0s 400ms/step - loss: 2.0000 - lr: 1.0000e-04 "
      "- ETA: 39s";
  CHECK(out.text() == "\r" + line1);

  now = 0.42;  // within the 0.05 s redraw interval: counted, not drawn
  bar.Update(2, {{"loss", 1.0}, {"lr", 1e-4}});
  CHECK(out.text() == "\r" + line1);
  CHECK(bar.Value("loss") == doctest::Approx(1.5));

  // Steps 3..37 in one update: loss 0.5 weighs 35 steps; the rate leaves the first step out.
  now = 1.4;
  bar.Update(37, {{"loss", 0.5}, {"lr", 1e-4}});
  const std::string line2 =
      " 37/100 [==========>...................] - 1s 28ms/step - loss: 0.5541 - lr: 1.0000e-04 "
      "- ETA: 1s";
  CHECK(out.text() == "\r" + line1 + "\r" + line2 + "  ");  // blanks what line 1 had more

  now = 3.4;
  bar.Update(100, {{"loss", 0.1}, {"lr", 1e-4}});
  const std::string line3 =
      "100/100 [==============================] - 3s 30ms/step - loss: 0.2680 - lr: 1.0000e-04";
  CHECK(out.text() ==
        "\r" + line1 + "\r" + line2 + "  " + "\r" + line3 + std::string(10, ' ') + "\n");
  CHECK(bar.Value("loss") == doctest::Approx(0.268));
}

TEST_CASE("Progbar off a terminal prints whole lines at most every plain_interval, and the last") {
  Capture out;
  double now = 0;
  Progbar bar(5, Fake(out.stream(), ProgbarOptions::Display::kPlain, &now));
  CHECK_FALSE(bar.terminal());
  const double times[] = {0.4, 0.9, 1.6, 2.0, 2.2};
  for (int step = 1; step <= 5; ++step) {
    now = times[step - 1];
    bar.Update(step, {{"loss", 1.0}});
  }
  CHECK(out.text() ==
        "1/5 [=====>........................] - 0s 400ms/step - loss: 1.0000 - ETA: 1s\n"
        "3/5 [=================>............] - 2s 600ms/step - loss: 1.0000 - ETA: 1s\n"
        "5/5 [==============================] - 2s 450ms/step - loss: 1.0000\n");
  CHECK(out.text().find('\r') == std::string::npos);
}

TEST_CASE("Progbar without a target counts steps, and Finish ends an early stop") {
  Capture out;
  double now = 0;
  Progbar bar(0, Fake(out.stream(), ProgbarOptions::Display::kPlain, &now));
  now = 2;
  bar.Add(4, {{"acc", 0.75}});
  CHECK(out.text() == "      4/Unknown - 2s 500ms/step - acc: 0.7500\n");
  now = 2.4;  // within plain_interval: Finish still draws the final state
  bar.Add(1, {{"acc", 0.5}});
  bar.Finish();
  CHECK(out.text() ==
        "      4/Unknown - 2s 500ms/step - acc: 0.7500\n"
        "      5/Unknown - 2s 480ms/step - acc: 0.7000\n");
}

}  // namespace
}  // namespace kiln::modules
