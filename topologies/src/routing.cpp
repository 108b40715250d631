#include "tessera/topologies/routing.hpp"
