// The ipc child in a build without CUDA: it says hello (so that the parent's protocol is the same)
// and answers every command but exit with an error. Never started by a measuring run there: the
// family's cases skip first.
#include <cstdlib>

#include <nlohmann/json.hpp>
#include <string_view>

#include "bench/ipc.hpp"
#include "core/ipc_channel.hpp"

namespace pathbench {

int run_ipc_child(int argc, char** argv) {
  int fd = -1;
  for (int i = 0; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--fd") fd = std::atoi(argv[i + 1]);
  }
  if (fd < 0) return 3;
  IpcChannel channel{UniqueFd(fd)};
  try {
    channel.send(IpcMessageType::kHello, R"({"protocol":1})");
    for (;;) {
      IpcMessage m = channel.receive(std::chrono::minutes(10));
      if (m.type != IpcMessageType::kCommand) continue;
      const auto j = nlohmann::json::parse(m.payload, nullptr, false);
      if (j.is_object() && j.value("op", "") == "exit") return 0;
      { channel.send(IpcMessageType::kError, "pathbench was built without CUDA"); }
    }
  } catch (const IpcError&) {
    return 2;
  }
}

}  // namespace pathbench
