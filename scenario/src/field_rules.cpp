#include "tessera/scenario/field_rules.hpp"

#include <initializer_list>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/scenario/scenario.hpp"

namespace tessera::scenario {

namespace {

// The flags of the analytical model's GPU (the simulator takes its GPU from --gpu or a
// calibration file) and of the uniform network's link (a topology has its own links).
constexpr std::initializer_list<const char*> kGpuModelFlags = {"--peak-tflops", "--efficiency", "--hbm-bandwidth",
                                                                "--hbm-gbps"};
constexpr std::initializer_list<const char*> kUniformLinkFlags = {"--bandwidth", "--bandwidth-gbps", "--latency-us"};
constexpr std::initializer_list<const char*> kMessageFlags = {"--launch-us", "--overhead-us", "--nvlink-message-us",
                                                              "--network-message-us"};
// Problem flags a standalone collective or a calibration has no use for (--gpus excepted).
constexpr std::initializer_list<const char*> kShapeFlags = {"--seq", "--batch", "--heads", "--kv-heads", "--head-dim",
                                                            "--head-dim-v", "--dtype", "--mask", "--window",
                                                            "--documents", "--layout", "--pass", "--buffers"};

class Rules {
 public:
  explicit Rules(const FieldRequest& request) : request_(request) {}

  bool given(const char* flag) const { return request_.given(flag); }
  // Refuses the first of `flags` that was given: "FLAG: REASON".
  void refuse_any(std::initializer_list<const char*> flags, const std::string& reason) const {
    for (const char* flag : flags)
      if (given(flag)) throw UserError(std::string(flag) + ": " + reason);
  }
  void refuse(const char* flag, const std::string& reason) const { refuse_any({flag}, reason); }

 private:
  const FieldRequest& request_;
};

void problem_rules(const Rules& rules, const std::string& mask) {
  const bool sliding = mask == "sliding-window" || mask == "sliding_window" || mask == "window";
  if (!sliding) rules.refuse("--window", "only with --mask sliding-window (the mask is " + tessera::quoted(mask) + ")");
}

void simulate_rules(const Rules& rules) {
  if (rules.given("--collective")) {
    const std::string reason = "a standalone --collective has no schedule (drop it, or drop --collective)";
    rules.refuse_any({"--algo", "--tile", "--variant", "--input", "--trace", "--ops-csv", "--links-csv", "--chunk",
                      "--channels", "--per-gpu", "--calibration", "--gpu"},
                     reason);
    rules.refuse_any(kShapeFlags, "a standalone --collective moves --size bytes; it has no attention problem");
    rules.refuse_any(kGpuModelFlags, "a standalone --collective computes nothing");
    rules.refuse_any(kMessageFlags, "the collective simulator prices links only (bandwidth and latency)");
  } else {
    rules.refuse_any({"--size", "--algorithm"}, "only with --collective (a standalone collective)");
    rules.refuse_any(kGpuModelFlags, "simulate takes the GPU's speed from --gpu or --calibration");
  }
  if (rules.given("--calibration")) rules.refuse("--gpu", "--calibration gives the GPU (drop one of them)");
}

}  // namespace

void refuse_meaningless_fields(const FieldRequest& request) {
  const Rules rules(request);
  const std::string& name = request.command;
  if (!request.json) rules.refuse("--per-gpu", "only with --json");
  if (rules.given("--topology"))
    rules.refuse_any(kUniformLinkFlags, "--topology has its own links (this sets the uniform network's; drop one)");
  else
    rules.refuse("--placement", "needs a --topology (on the uniform network every GPU is alike)");
  if (name != "simulate" || !rules.given("--collective")) {
    // An untyped --mask is the default, causal.
    problem_rules(rules, rules.given("--mask") ? request.value("--mask") : ProblemText{}.mask);
  }
  // A schedule file carries its problem, GPU count, layout and passes: the flags would be ignored.
  if (rules.given("--algo") && request.value("--algo") == "file") {
    rules.refuse("--gpus", "--algo file takes the GPU count from the schedule file");
    rules.refuse_any(kShapeFlags, "--algo file takes the problem from the schedule file");
    rules.refuse_any({"--tile", "--variant"}, "--algo file takes the schedule as the file gives it");
  }

  if (name == "simulate") simulate_rules(rules);
  if (name == "plan") {
    if (request.model != "flow") rules.refuse("--gpu", "only with --model flow (the GPU profile it simulates)");
  }
  if (name == "check" && !request.json) {
    rules.refuse_any(kGpuModelFlags, "check prices a valid schedule only with --json");
    rules.refuse_any(kUniformLinkFlags, "check prices a valid schedule only with --json");
    rules.refuse_any(kMessageFlags, "check prices a valid schedule only with --json");
  }
  if (name == "validate") {
    rules.refuse_any(kGpuModelFlags, "validate predicts with the GPU of --gpu or --calibration");
    if (rules.given("--calibration")) rules.refuse("--gpu", "--calibration gives the GPU (drop one of them)");
  }
  if (name == "run" || name == "validate" || name == "calibrate") {
    // The CPU executor runs ranks as threads of this process: no transport, no watchdog.
    const bool cpu = !rules.given("--backend") || request.value("--backend") == "cpu";
    if (cpu) rules.refuse_any({"--transport", "--watchdog-s"}, "only with --backend cuda");
    // The CPU executor's devices are cores, which only it takes.
    if (!cpu) rules.refuse_any({"--devices"}, "only with --backend cpu (CUDA ranks sit on GPUs as --transport says)");
  }
  if (name == "calibrate" && rules.given("--from-nccl-tests")) {
    rules.refuse_any({"--backend", "--transport", "--watchdog-s", "--seed", "--sides", "--repeats", "--concurrency", "--batch", "--heads",
                      "--kv-heads", "--head-dim", "--head-dim-v", "--dtype"},
                     "--from-nccl-tests fits links to the tables; it times no blocks (drop one of them)");
  } else if (name == "calibrate") {
    rules.refuse_any({"--topology", "--level"}, "only with --from-nccl-tests");
  }
  if (name == "calibrate") {
    // The calibration times full blocks of --sides tokens, forward and backward, on one shape.
    rules.refuse_any({"--gpus", "--seq", "--mask", "--window", "--documents", "--layout", "--pass", "--buffers"},
                     "calibrate times full blocks of --sides tokens in both passes; only the head shape, "
                     "--batch and --dtype apply");
  }
}

}  // namespace tessera::scenario
