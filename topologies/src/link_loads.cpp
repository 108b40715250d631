#include "tessera/topologies/link_loads.hpp"
