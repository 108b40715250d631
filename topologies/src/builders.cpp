#include "tessera/topologies/builders.hpp"
