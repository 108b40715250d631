#include "tessera/topologies/placement.hpp"
