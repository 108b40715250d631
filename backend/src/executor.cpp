#include "tessera/backend/executor.hpp"

#include "tessera/core/error.hpp"

namespace tessera::backend {

Transport parse_transport(const std::string& text) {
  if (text == "local") return Transport::local;
  if (text == "nccl") return Transport::nccl;
  if (text == "mpi") return Transport::mpi;
  throw UserError("'" + text + "' is not a transport (expected local, nccl or mpi)");
}

std::string to_string(Transport transport) {
  switch (transport) {
    case Transport::local: return "local";
    case Transport::nccl: return "nccl";
    case Transport::mpi: return "mpi";
  }
  return "?";
}

}  // namespace tessera::backend
