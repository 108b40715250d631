#include "tessera/topologies/metrics.hpp"
